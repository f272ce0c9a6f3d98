/* The nonblocking-collective engine: a collective's GET plan (nbc.h), its
 * completion through the master (WAIT/TEST, then GET and END), the
 * reductions a rank folds itself, and the request kind of nonblocking
 * collectives.  Collectives start an instance with bdl_xfer_begin, PUT
 * their inputs, fill in their plan and launch it (bdl_nbc_launch). */
#include <stdlib.h>
#include <string.h>

#include "bd_dtype.h"
#include "core.h"
#include "dt.h"
#include "nbc.h"
#include "request.h"
#include "xfer.h"

void bdl_nbc_init(bdl_nbc_t *nb, const bdl_comm_t *c, const char *call)
{
    memset(nb, 0, sizeof *nb);
    nb->comm = (MPI_Comm)(c - bdl_g.comms);
    nb->call = call;
    nb->xf.ctx = c->ctx;
    nb->xf.rank = c->rank;
    nb->size = c->size;
    nb->gkind = BDL_GET_NONE;
    nb->nblk = c->size;
    nb->skip = c->rank;
}

/* Fold the pieces of peers first..last in rank order, the accumulator on
 * the left (correct for non-commutative ops), into buf.  User ops see
 * buffers laid out as the type; predefined ones fold the packed basic
 * elements, as the master does. */
static void fold(bdl_nbc_t *nb)
{
    uint64_t k = nb->count;
    const bdl_dt_t *t = nb->t;
    if (!k || !t->psize || nb->first > nb->last)
        return;
    uint64_t n = k * t->psize;
    char *acc = malloc(n), *tmp = malloc(n);
    if (!acc || !tmp)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory folding a reduction of %llu bytes",
                  (unsigned long long)n);
    bdl_fold_op_t o = {nb->op, nb->user ? &nb->uop : NULL, nb->dt};
    bdl_fold_t f;
    bdl_fold_init(&f, &o, t, k, acc);
    bdl_get_t *g = bdl_get_new(&nb->xf);
    for (int r = nb->first; r <= nb->last; r++) {
        char *v = r == nb->first ? acc : tmp; /* the first one in place */
        bdl_get_typed(g, r, nb->off, v, n, bdl_dt_byte());
        bdl_get_flush(g);
        bdl_fold_add(&f, v);
    }
    bdl_get_free(g);
    bdl_fold_end(&f);
    bdl_dt_unpack(t, nb->buf, k, 0, acc, n);
    free(acc);
    free(tmp);
}

static const bdl_dt_t *blk_type(const bdl_nbc_t *nb, int j) { return nb->tv ? nb->tv[j] : nb->t; }

static char *blk_at(const bdl_nbc_t *nb, int j)
{
    return bdl_at(nb->buf, nb->bdispls ? nb->bdispls[j]
                                       : bdl_voff(nb->displs, (int)nb->count, j, blk_type(nb, j)));
}

/* BDL_GET_TBLOCKS: first every sender's table entry for this rank (where its
 * block starts and ends), then the blocks. */
static void get_tblocks(bdl_nbc_t *nb)
{
    int n = nb->nblk;
    uint64_t *ent = malloc((size_t)(n ? n : 1) * 2 * sizeof *ent);
    bdl_get_t *g = bdl_get_new(&nb->xf);
    if (!ent)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory in a collective");
    for (int j = 0; j < n; j++)
        bdl_get_typed(g, nb->pfirst + j, 8 * (uint64_t)nb->tidx, &ent[2 * j], 16, bdl_dt_byte());
    bdl_get_flush(g);
    for (int j = 0; j < n; j++) {
        const bdl_dt_t *t = blk_type(nb, j);
        uint64_t k = bdl_vcount(nb->counts, (int)nb->count, j);
        uint64_t len = ent[2 * j + 1] - ent[2 * j], cap = k * t->psize;
        if (len > cap) {
            nb->err = MPI_ERR_TRUNCATE;
            len = cap;
        }
        bdl_get_part(g, nb->pfirst + j, 8 * (uint64_t)nb->tn + ent[2 * j], blk_at(nb, j), k, t, len,
                     0);
    }
    bdl_get_flush(g);
    bdl_get_free(g);
    free(ent);
}

static void get_split(bdl_nbc_t *nb)
{
    int32_t head[3];
    bdl_get_t *g = bdl_get_new(&nb->xf);
    bdl_get_typed(g, -1, 0, head, sizeof head, bdl_dt_byte());
    bdl_get_flush(g);
    int *world = NULL;
    if (head[0]) {
        world = malloc((size_t)head[2] * sizeof(int));
        if (!world)
            bdl_fatal(MPI_ERR_NO_MEM, "out of memory creating a communicator of %d ranks", head[2]);
        bdl_get_typed(g, -1, sizeof head, world, (uint64_t)head[2] * sizeof(int), bdl_dt_byte());
        bdl_get_flush(g);
    }
    bdl_get_free(g);
    nb->fin(nb->fin_arg, head[0], head[1], head[2], world);
}

/* BDL_GET_BPARTS: piece k, part k % bparts of block k / bparts, whole; a
 * piece this rank expects nothing of (counts disagree) is refused when
 * offered (refuse), else left. */
static void get_bpart(bdl_nbc_t *nb, bdl_get_t *g, int k, int refuse)
{
    int r = k / (int)nb->bparts, j = k % (int)nb->bparts;
    if (r == nb->skip)
        return;
    const bdl_dt_t *t = blk_type(nb, r);
    uint64_t cnt = bdl_vcount(nb->counts, (int)nb->count, r);
    uint64_t total = cnt * t->psize, at = (uint64_t)j * nb->part;
    if (at >= total) {
        if (refuse)
            bdl_get_refuse(g, k);
        return;
    }
    /* the last part: the rest (bparts was chosen so that it fits a part) */
    uint64_t len = j == (int)nb->bparts - 1 || total - at < nb->part ? total - at : nb->part;
    bdl_get_span(g, k, blk_at(nb, r), cnt, t, at, len);
}

/* BDL_GET_PARTS: part j, whole. */
static void get_part(bdl_nbc_t *nb, bdl_get_t *g, int j)
{
    uint64_t total = nb->count * nb->t->psize, at = (uint64_t)j * nb->part;
    uint64_t len = at < total ? total - at : 0;
    if (len > nb->part)
        len = nb->part;
    bdl_get_span(g, j, nb->buf, nb->count, nb->t, at, len);
}

static void nbc_get(bdl_nbc_t *nb)
{
    nb->xf.mismatch = 0;
    switch (nb->gkind) {
    case BDL_GET_PIECE:
        if (nb->count * nb->t->psize != 0) {
            bdl_get_t *g = bdl_get_new(&nb->xf);
            if (nb->whole)
                bdl_get_whole(g, nb->peer, nb->buf, nb->count, nb->t);
            else
                bdl_get_typed(g, nb->peer, nb->off, nb->buf, nb->count, nb->t);
            bdl_get_flush(g);
            bdl_get_free(g);
        }
        break;
    case BDL_GET_BLOCKS: {
        bdl_get_t *g = bdl_get_new(&nb->xf);
        for (int j = 0; j < nb->nblk; j++)
            if (nb->taken && nb->taken[j])
                continue;
            else if (nb->pfirst + j != nb->skip && nb->whole)
                bdl_get_whole(g, nb->pfirst + j, blk_at(nb, j),
                              bdl_vcount(nb->counts, (int)nb->count, j), blk_type(nb, j));
            else if (nb->pfirst + j != nb->skip)
                bdl_get_typed(g, nb->pfirst + j, 0, blk_at(nb, j),
                              bdl_vcount(nb->counts, (int)nb->count, j), blk_type(nb, j));
        bdl_get_flush(g);
        bdl_get_free(g);
        break;
    }
    case BDL_GET_PARTS: {
        bdl_get_t *g = bdl_get_new(&nb->xf);
        for (int j = 0; j < nb->nblk; j++)
            if (!nb->taken || !nb->taken[j])
                get_part(nb, g, j);
        bdl_get_flush(g);
        bdl_get_free(g);
        break;
    }
    case BDL_GET_BPARTS: {
        bdl_get_t *g = bdl_get_new(&nb->xf);
        for (int k = 0; k < nb->nblk * (int)nb->bparts; k++)
            if (!nb->taken || !nb->taken[k])
                get_bpart(nb, g, k, 0);
        bdl_get_flush(g);
        bdl_get_free(g);
        break;
    }
    case BDL_GET_TBLOCKS: get_tblocks(nb); break;
    case BDL_GET_FOLD: fold(nb); break;
    case BDL_GET_SPLIT: get_split(nb); break;
    default: break;
    }
    if (nb->xf.mismatch)
        nb->err = MPI_ERR_TRUNCATE;
    nb->xf.mismatch = 0;
}

int bdl_nbc_take_once(bdl_nbc_t *nb, int mode, int *go)
{
    /* the pieces this rank may be offered: an allgather in parts has
     * bparts per block */
    int npc = nb->gkind == BDL_GET_BPARTS ? nb->nblk * (int)nb->bparts : nb->nblk;
    int32_t *peers = malloc(sizeof *peers * (size_t)(npc ? npc : 1));
    if (!peers)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory in %s", nb->call ? nb->call : "a collective");
    int n = 0;
    *go = bdl_xfer_take(&nb->xf, mode, peers, npc, &n);
    int hint = (int)bdl_resp()->arg[1] - 1;
    if (n) {
        bdl_get_t *g = bdl_get_new(&nb->xf);
        for (int i = 0; i < n; i++) {
            if (nb->gkind == BDL_GET_BPARTS) {
                if (peers[i] >= 0 && peers[i] < npc && !nb->taken[peers[i]]) {
                    get_bpart(nb, g, peers[i], 1);
                    nb->taken[peers[i]] = 1;
                }
                continue;
            }
            int j = peers[i] - nb->pfirst;
            uint64_t cnt = j >= 0 && j < nb->nblk ? bdl_vcount(nb->counts, (int)nb->count, j) : 0;
            if (j < 0 || j >= nb->nblk || nb->taken[j] || peers[i] == nb->skip)
                continue;
            if (nb->gkind == BDL_GET_PARTS) {
                get_part(nb, g, j);
                nb->taken[j] = 1;
                continue;
            }
            if (!cnt) { /* a piece this rank expects nothing of: counts disagree */
                bdl_get_refuse(g, peers[i]);
                nb->taken[j] = 1;
                continue;
            }
            bdl_get_whole(g, peers[i], blk_at(nb, j), cnt, blk_type(nb, j));
            nb->taken[j] = 1;
        }
        bdl_get_flush(g);
        bdl_get_free(g);
        if (nb->xf.mismatch) /* nbc_get clears the flag: keep what it said */
            nb->err = MPI_ERR_TRUNCATE;
    }
    free(peers);
    return hint;
}

int bdl_nbc_take(bdl_nbc_t *nb, int final)
{
    int hint, go = 0;
    /* this rank may wait here: its pending nonblocking all-to-alls must not
     * wait for it meanwhile */
    bdl_nbc_pipe_settle(nb);
    if (bdl_mt_busy()) {
        /* Other threads of this rank may need the master (one of them may
         * put the piece another rank waits for before it takes what holds
         * the room): poll, with the lock given up between (mt.c), as a
         * blocking collective's wait does (bdl_nbc_progress). */
        while ((hint = bdl_nbc_take_once(nb, final ? 3 : 2, &go)) < 0 && !go)
            bdl_mt_nap();
        return hint;
    }
    do
        hint = bdl_nbc_take_once(nb, final, &go);
    while (!go);
    return hint;
}

/* ---------------------------------------------------------------- nonblocking all-to-alls */

static int *dup_ints(const int *a, int n);
static void nbc_finish(bdl_nbc_t *nb);
static void pipe_all(const bdl_nbc_t *except, int flush);

/* Those that pipeline and are not complete, for bdl_nbc_pipe_settle. */
static bdl_nbc_t **g_pend;
static int g_npend, g_cappend, g_settling;

static void pend_add(bdl_nbc_t *nb)
{
    if (g_npend == g_cappend) {
        int cap = g_cappend ? 2 * g_cappend : 8;
        bdl_nbc_t **v = realloc(g_pend, (size_t)cap * sizeof *v);
        if (!v)
            bdl_fatal(MPI_ERR_NO_MEM, "out of memory starting a nonblocking all-to-all");
        g_pend = v;
        g_cappend = cap;
    }
    g_pend[g_npend++] = nb;
    nb->pp->listed = 1;
}

static void pend_del(bdl_nbc_t *nb)
{
    for (int i = 0; i < g_npend; i++)
        if (g_pend[i] == nb) {
            g_pend[i] = g_pend[--g_npend];
            break;
        }
    nb->pp->listed = 0;
}

static char *pipe_blk(const bdl_nbc_pipe_t *pp, int r)
{
    return bdl_at(pp->buf, pp->tv ? pp->displs[r] : bdl_voff(pp->displs, pp->count, r, pp->t));
}

/* How many pieces pp puts in all (some skipped: pipe_skip). */
static int pipe_n(const bdl_nbc_t *nb)
{
    const bdl_nbc_pipe_t *pp = nb->pp;
    switch (pp->form) {
    case BDL_PP_ONE: return 1;
    case BDL_PP_NONE: return 0;
    case BDL_PP_PARTS: return (int)pp->nparts;
    default: return nb->size;
    }
}

/* The rank the k-th piece goes to (A2A, SCATTER), or -1 when it is not
 * put (its own block). */
static int pipe_peer(const bdl_nbc_t *nb, int k)
{
    const bdl_nbc_pipe_t *pp = nb->pp;
    int me = nb->xf.rank;
    switch (pp->form) {
    case BDL_PP_A2A: {
        int r = (me + 1 + k) % nb->size;
        return r == me ? -1 : r;
    }
    case BDL_PP_SCATTER: return k == pp->root ? -1 : k;
    default: return k;
    }
}

static void pipe_put_one(bdl_put_t *p, const bdl_nbc_t *nb, int k)
{
    const bdl_nbc_pipe_t *pp = nb->pp;
    switch (pp->form) {
    case BDL_PP_ONE: bdl_put_typed(p, -1, pp->buf, (uint64_t)pp->count, pp->t); break;
    case BDL_PP_PARTS: { /* the last part: the rest (longer only when counts disagree) */
        uint64_t total = (uint64_t)pp->count * pp->t->psize, at = (uint64_t)k * pp->part;
        bdl_put_span(p, k, pp->buf, (uint64_t)pp->count, pp->t, at,
                     total - at < pp->part || (uint64_t)k + 1 == pp->nparts ? total - at
                                                                            : pp->part);
        break;
    }
    default:
        bdl_put_typed(p, k, pipe_blk(pp, k), bdl_vcount(pp->counts, pp->count, k),
                      pp->tv ? pp->tv[k] : pp->t);
        break;
    }
}

int bdl_nbc_pipe_put(bdl_nbc_t *nb, int mode)
{
    bdl_nbc_pipe_t *pp = nb->pp;
    int n = pipe_n(nb);
    bdl_put_t p = bdl_put_start(&nb->xf);
    p.over = pp->over;
    for (; pp->next < n; pp->next++) {
        int r = pipe_peer(nb, pp->next), q;
        if (r < 0 || (pp->put && pp->put[r]))
            continue;
        if (p.over && mode != 2) { /* before a piece: take before putting more */
            bdl_put_flush(&p);
            p.over = 0;
            if (mode == 1) {
                q = bdl_nbc_take(nb, 0);
            } else {
                int go = 0;
                q = bdl_nbc_take_once(nb, 2 | (mode == 3 ? BDL_TAKE_NO_YIELD : 0), &go);
                if (!go) { /* past the bound: the rest in MPI_Test or MPI_Wait */
                    pp->over = 1;
                    return 0;
                }
            }
            if (pp->put && q >= 0 && q < nb->size && q != nb->xf.rank && !pp->put[q]) {
                /* In place: the master holds q's piece for this rank, which
                 * overwrites the block for q, so it is offered only once
                 * that block is PUT; put it next, over the bound (as the
                 * blocking all-to-all in place does, coll_gather.c), then
                 * take the piece.  r is still to put. */
                pipe_put_one(&p, nb, q);
                bdl_put_flush(&p);
                pp->put[q] = 1;
                pp->next--;
                continue;
            }
        }
        pipe_put_one(&p, nb, r);
        if (pp->put) {
            /* in place: whole before the next take may offer r's piece */
            if (mode != 2)
                bdl_put_flush(&p);
            pp->put[r] = 1;
        }
    }
    bdl_put_flush(&p);
    pp->over = p.over;
    return 1;
}

void bdl_nbc_pipe_settle(const bdl_nbc_t *except) { pipe_all(except, 1); }

void bdl_nbc_pipe_poll(void) { pipe_all(NULL, 0); }

int bdl_nbc_pipes_pending(void) { return g_npend; }

/* bdl_nbc_pipe_settle (flush) or bdl_nbc_pipe_poll. */
static void pipe_all(const bdl_nbc_t *except, int flush)
{
    if (!g_npend || g_settling)
        return;
    g_settling = 1;
    bd_req_t keep = bdl_g.slot->req;
    static char *win;
    if (!win && !(win = malloc(bdl_g.window)))
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory keeping a request aside");
    memcpy(win, bdl_g.win, bdl_g.window);
    for (int i = 0; i < g_npend; i++) {
        bdl_nbc_t *nb = g_pend[i];
        int go;
        if (nb == except)
            continue;
        if (!nb->pp->arrived && bdl_nbc_pipe_put(nb, flush ? 2 : 3)) {
            bdl_xfer_call(&nb->xf, BD_REQ_COLL_ARRIVE);
            nb->pp->arrived = 1;
        }
        bdl_nbc_take_once(nb, 2 | BDL_TAKE_NO_YIELD, &go);
    }
    memcpy(bdl_g.win, win, bdl_g.window);
    bdl_g.slot->req = keep;
    g_settling = 0;
}

bdl_nbc_pipe_t *bdl_nbc_pipe_new(const void *buf, int count, const int *counts, const int *displs,
                                 bdl_dt_t *t, bdl_dt_t *const *tv, int n)
{
    return bdl_nbc_pipe_new_form(BDL_PP_A2A, buf, count, counts, displs, t, tv, n, 0, 0, 0);
}

int bdl_nbc_pipe_eligible(const bdl_comm_t *c)
{
    (void)c; /* on one node or across nodes alike (coll_pipe.c: credit_away) */
    return bdl_g.hdr->job.coll_stage != 0;
}

bdl_nbc_pipe_t *bdl_nbc_pipe_new_form(int form, const void *buf, int count, const int *counts,
                                      const int *displs, bdl_dt_t *t, bdl_dt_t *const *tv, int n,
                                      int root, uint64_t part, uint64_t nparts)
{
    bdl_nbc_pipe_t *pp = calloc(1, sizeof *pp);
    if (!pp)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory starting a nonblocking collective");
    pp->form = form;
    pp->root = root;
    pp->part = part;
    pp->nparts = nparts;
    pp->buf = buf;
    pp->count = count;
    pp->counts = dup_ints(counts, n);
    pp->displs = dup_ints(displs, n);
    pp->t = t;
    if (t)
        bdl_dt_retain(t);
    if (tv) {
        if (!(pp->tv = malloc((size_t)(n ? n : 1) * sizeof *pp->tv)))
            bdl_fatal(MPI_ERR_NO_MEM, "out of memory starting a nonblocking all-to-all");
        for (int j = 0; j < n; j++) {
            pp->tv[j] = tv[j];
            bdl_dt_retain(pp->tv[j]);
        }
    }
    return pp;
}

static void pipe_free(bdl_nbc_t *nb)
{
    bdl_nbc_pipe_t *pp = nb->pp;
    if (!pp)
        return;
    if (pp->listed)
        pend_del(nb);
    if (pp->t)
        bdl_dt_release(pp->t);
    if (pp->tv)
        for (int j = 0; j < nb->size; j++)
            bdl_dt_release(pp->tv[j]);
    free(pp->tv);
    free(pp->counts);
    free(pp->displs);
    free(pp->put);
    free(pp);
    nb->pp = NULL;
}

/* MPI_Test (blocking 0) or MPI_Wait on a nonblocking all-to-all that
 * pipelines: put what is left while the staging has room, take what is
 * offered, and once every piece is put and the rank may GET the rest,
 * finish.  A test gives the run slot away only if yield. */
static int pipe_progress(bdl_nbc_t *nb, int blocking, int yield)
{
    bdl_nbc_pipe_t *pp = nb->pp;
    int others = g_npend > 1 || (g_npend == 1 && g_pend[0] != nb);
    if (blocking && others) {
        /* Other nonblocking all-to-alls that pipeline are pending: waiting
         * in this one alone could leave theirs waiting for this rank, or
         * put all their pieces over the bound.  So poll them all, within the
         * bound, until this one completes (a poll that finds nothing gives
         * the run slot away). */
        while (!pipe_progress(nb, 0, 1)) {
            /* MPI's progress rule, as a wait in the master watches for
             * (BD_COLL_WATCH): a synchronous sender this rank's posted
             * receives match may be what one of them waits for */
            bdl_p2p_match_posted();
            for (int i = 0; i < g_npend; i++)
                if (g_pend[i] != nb && pipe_progress(g_pend[i], 0, 0))
                    i--; /* it left the list */
        }
        return 1;
    }
    /* A test of this one steps the others too, within the bound and
     * without giving the slot away: a program may test one request in a
     * loop while another rank's collective waits for a piece of another of
     * this rank's pending ones (MPI 3.1 5.12: every started collective
     * completes while its ranks test or wait). */
    if (!blocking && others)
        pipe_all(nb, 0);
    if (!pp->arrived && !bdl_nbc_pipe_put(nb, blocking ? 1 : yield ? 0 : 3))
        return 0;
    if (blocking) {
        bdl_nbc_take(nb, 1);
    } else {
        int go = 0;
        bdl_nbc_take_once(nb, 3 | (yield ? 0 : BDL_TAKE_NO_YIELD), &go);
        pp->arrived = 1; /* the final take counts as arriving */
        if (!go)
            return 0;
    }
    pp->arrived = 1;
    nb->ready = 1;
    nbc_finish(nb);
    return 1;
}

/* The types and arrays a nonblocking request holds. */
static void nbc_release(bdl_nbc_t *nb)
{
    if (!nb->owns)
        return;
    bdl_dt_release(nb->t);
    if (nb->tv)
        for (int j = 0; j < nb->nblk; j++)
            bdl_dt_release(nb->tv[j]);
    free(nb->tv);
    free(nb->counts);
    free(nb->displs);
    free(nb->bdispls);
    free(nb->reqs);
    free(nb->lc_peers);
    nb->lc_peers = NULL;
    pipe_free(nb);
    free(nb->taken);
    nb->taken = NULL;
    nb->t = NULL;
    nb->tv = NULL;
    nb->counts = nb->displs = nb->bdispls = NULL;
    nb->reqs = NULL;
    nb->owns = 0;
}

static int finish_small(bdl_nbc_t *nb);

static void nbc_finish(bdl_nbc_t *nb)
{
    if (finish_small(nb)) /* GET and END in one request */
        return;
    nbc_get(nb);
    bdl_xfer_call(&nb->xf, BD_REQ_COLL_END);
    nb->done = 1;
    nbc_release(nb);
}

static void run_fin(bdl_nbc_t *nb, const MPI_Status *st)
{
    void (*fin)(bdl_nbc_t *, void *, const MPI_Status *) = nb->reqs_fin;
    nb->reqs_fin = NULL;
    if (fin)
        fin(nb, nb->fin_own, st);
    nb->fin_own = NULL;
}

/* While this rank waits for nb's requests, the master's deadlock report
 * names the collective (match.c: wait_event). */
static void name_wait(const bdl_nbc_t *nb, int on)
{
    bdl_g.lc_api = on ? nb->lc_api : 0;
    bdl_g.lc_root = on ? nb->lc_root : 0;
    bdl_g.lc_ctx = on ? nb->lc_ctx : 0;
    bdl_g.lc_peer = -1;
}

/* A request made of the library's own point-to-point requests (nonblocking
 * neighbourhood collectives, the collectives in the ranks): test or wait
 * for all of them.  Their errors are the collective's, so MPI_COMM_WORLD's
 * handler is not called here. */
static int reqs_progress(bdl_nbc_t *nb, int blocking)
{
    int flag = 1, rc;
    /* statuses for fin; an MPI_Test loop polls here, so no allocation for
     * the collectives in the ranks (at most 23 receives) */
    MPI_Status stbuf[32], *st = MPI_STATUSES_IGNORE;
    if (nb->reqs_fin)
        st = nb->nreq <= 32 ? stbuf : malloc((size_t)nb->nreq * sizeof *st);
    if (!st)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory completing a collective");
    if (blocking) {
        name_wait(nb, 1);
        for (int i = 0; nb->lc_peers && i < nb->nreq; i++) {
            bdl_g.lc_peer = nb->lc_peers[i]; /* a deadlock report names it */
            bdl_req_progress_one(nb->reqs[i]);
        }
        rc = bdl_req_waitall_quiet(nb->nreq, nb->reqs, st);
        name_wait(nb, 0);
    } else {
        rc = bdl_req_testall_quiet(nb->nreq, nb->reqs, &flag, st);
    }
    if (rc && !nb->reqs_fin)
        nb->err = MPI_ERR_TRUNCATE;
    int own = st != MPI_STATUSES_IGNORE && st != stbuf;
    if (!flag && rc == MPI_SUCCESS) {
        if (own)
            free(st);
        return 0;
    }
    nb->done = 1;
    run_fin(nb, st);
    if (own)
        free(st);
    nbc_release(nb);
    return 1;
}

/* A blocking poll of requests that are all the library's own receives
 * (reqs_progress found none complete): sleep until this rank's mailbox
 * moves, unless a drain completes one first.  Returns how many completed. */
static int reqs_sleep(bdl_nbc_t **nbs, int n)
{
    uint32_t seen = 0;
    int watch = bdl_p2p_watch_begin(&seen), done = 0;
    if (watch)
        bdl_p2p_watch_end(); /* wait_event marks the sleep itself */
    for (int i = 0; i < n; i++)
        done += reqs_progress(nbs[i], 0);
    if (done || !watch)
        return done;
    const bdl_nbc_t *named = NULL;
    for (int i = 0; i < n && !named; i++)
        if (nbs[i]->lc_api)
            named = nbs[i];
    if (named)
        name_wait(named, 1);
    bdl_p2p_wait_event(seen, BD_WAIT_ANY);
    if (named)
        name_wait(named, 0);
    return 0;
}

/* The completion of a nonblocking call in one request (WAIT, GET, END:
 * bdl_xfer_small_finish; the WAIT returns at once when the collective is
 * complete already) when the GET plan is a few whole or partial pieces
 * that fit in the window: 1 if done so.  Not for blocking calls: with it
 * a Reduce's non-roots (WAIT and END in one) left look-ahead loading 17-41%
 * of what it loaded ahead before in mem.prefetch_phase (8 ranks, -nr 1,
 * 28M), for a reason not found; those that can be are one request from
 * their start anyway (bdl_xfer_small). */
static int finish_small(bdl_nbc_t *nb)
{
    enum { MAXB = 64 };
    bdl_small_blk_t b[MAXB];
    int n = 0;
    if (nb->taken || nb->pp || !nb->nbreq)
        return 0;
    switch (nb->gkind) {
    case BDL_GET_NONE: break;
    case BDL_GET_PIECE:
        if (nb->count * nb->t->psize != 0)
            b[n++] = (bdl_small_blk_t){nb->peer, nb->buf, nb->count, nb->t, nb->off, nb->whole};
        break;
    case BDL_GET_BLOCKS:
        if (nb->nblk > MAXB)
            return 0;
        for (int j = 0; j < nb->nblk; j++)
            if (nb->pfirst + j != nb->skip)
                b[n++] = (bdl_small_blk_t){nb->pfirst + j,
                                           blk_at(nb, j),
                                           bdl_vcount(nb->counts, (int)nb->count, j),
                                           blk_type(nb, j),
                                           0,
                                           nb->whole};
        break;
    default: return 0;
    }
    int st = 0;
    if (!bdl_xfer_small_finish(&nb->xf, b, n, nb->gkind == BDL_GET_BLOCKS, &st))
        return 0;
    if (st)
        nb->err = st;
    nb->ready = 1;
    nb->done = 1;
    nbc_release(nb);
    return 1;
}

int bdl_nbc_progress(bdl_nbc_t *nb, int blocking)
{
    if (nb->done)
        return 1;
    if (blocking && bdl_mt_busy()) {
        /* Tests (each gives the run slot to a rank that waits for one)
         * with the lock given up between them (mt.c). */
        while (!bdl_nbc_progress(nb, 0))
            bdl_mt_nap();
        return 1;
    }
    if (nb->reqs)
        return reqs_progress(nb, blocking);
    if (nb->pp)
        return pipe_progress(nb, blocking, 1);
    if (!nb->ready) {
        bdl_resp()->status = BD_RESP_OK;
        if (blocking && finish_small(nb))
            return 1;
        if (blocking)
            bdl_xfer_wait(&nb->xf);
        else
            bdl_xfer_call(&nb->xf, BD_REQ_COLL_TEST);
        if (bdl_resp()->status == BD_RESP_REVOKED) {
            /* MPIX_Comm_revoke by another member: the collective fails. */
            nb->err = MPIX_ERR_REVOKED;
            nb->done = 1;
            nbc_release(nb);
            return 1;
        }
        if (!blocking && !bdl_resp()->flag)
            return 0;
        nb->ready = 1;
    }
    nbc_finish(nb);
    return 1;
}

int bdl_nbc_poll(bdl_nbc_t **nbs, int n, int block, int yield)
{
    int done = 0, k = 0, own = 0;
    for (int i = 0; i < n; i++)
        if (nbs[i]->done || nbs[i]->ready)
            done += bdl_nbc_progress(nbs[i], 0);
    if (done)
        return done;
    /* Those of the library's own requests, and the nonblocking all-to-alls
     * that pipeline (they take and put as they go), are polled here, the
     * rest in the master. */
    bdl_nbc_t *pipe = NULL;
    for (int i = 0; i < n; i++)
        if (nbs[i]->reqs) {
            own++;
            done += reqs_progress(nbs[i], 0);
        } else if (nbs[i]->pp) {
            own++;
            pipe = pipe ? pipe : nbs[i];
            done += pipe_progress(nbs[i], 0, yield);
        }
    if (done)
        return done;
    if (own == n && block && pipe) /* wait for one of them (the others progress meanwhile) */
        return bdl_nbc_progress(pipe, 1);
    if (own == n && block) /* only receives: asleep until a message comes */
        return reqs_sleep(nbs, n);
    if (own == n)
        return done;
    if (own)
        block = 0;
    if ((uint64_t)n * (sizeof(bd_coll_id_t) + 1) > bdl_g.window)
        bdl_fatal(MPI_ERR_INTERN, "too many nonblocking collective requests (%d) in one call", n);
    for (int i = 0; i < n; i++) {
        if (nbs[i]->reqs || nbs[i]->pp)
            continue;
        bd_coll_id_t id = {nbs[i]->xf.ctx, nbs[i]->xf.rank, nbs[i]->xf.seq};
        memcpy(bdl_g.win + (size_t)k++ * sizeof id, &id, sizeof id);
    }
    /* MPI's progress rule: while it waits or polls here, the rank matches
     * its posted receives (a synchronous sender, maybe on another node,
     * waits for that, and may be what the collective waits for). */
    uint32_t seen = 0;
    int watch = 0;
    if (block)
        watch = bdl_p2p_watch_begin(&seen);
    else
        bdl_p2p_match_posted();
    bd_req_t *r = bdl_req_begin(block ? BD_REQ_COLL_WAITANY : BD_REQ_COLL_TESTANY);
    r->arg[0] = k;
    r->arg[1] = !yield;
    (void)bdl_p2p_rpc_watched(r, watch, seen);
    /* NOTYET (its mailbox moved): none done; a blocking caller polls again,
     * which matches first */
    if (!bdl_resp()->flag)
        return 0;
    uint8_t flags[k];
    memcpy(flags, bdl_g.win + (size_t)k * sizeof(bd_coll_id_t), (size_t)k);
    for (int i = 0, j = 0; i < n; i++) {
        if (nbs[i]->reqs || nbs[i]->pp)
            continue;
        uint8_t f = flags[j++];
        if (f == 2) { /* its communicator was revoked (MPIX_Comm_revoke): it fails */
            nbs[i]->err = MPIX_ERR_REVOKED;
            nbs[i]->done = 1;
            nbc_release(nbs[i]);
            done++;
        } else if (f) {
            nbs[i]->ready = 1;
            done += bdl_nbc_progress(nbs[i], 0);
        }
    }
    return done;
}

int bdl_nbc_done(const bdl_nbc_t *nb) { return nb->done; }

int bdl_nbc_err(const bdl_nbc_t *nb) { return nb->err; }

void bdl_nbc_free(bdl_nbc_t *nb)
{
    if (!nb)
        return;
    nbc_release(nb);
    free(nb);
}

static int *dup_ints(const int *a, int n)
{
    if (!a)
        return NULL;
    int *b = malloc((size_t)(n ? n : 1) * sizeof(int));
    if (!b)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory starting a nonblocking collective");
    memcpy(b, a, (size_t)n * sizeof(int));
    return b;
}

/* ---------------------------------------------------------------- the request kind */

static void coll_req_progress(bdl_request_t *q, int blocking)
{
    if (!q->done)
        q->done = bdl_nbc_progress(q->impl, blocking);
}

/* One poll of pending collectives: they wait in the master only when
 * nothing else is pending, and give the slot away only when no kind is
 * polled after them. */
static int coll_req_poll(bdl_request_t **qs, int n, const bdl_req_poll_t *p)
{
    bdl_nbc_t **v = malloc((size_t)(n ? n : 1) * sizeof *v);
    if (!v)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory polling %d requests", n);
    for (int i = 0; i < n; i++)
        v[i] = qs[i]->impl;
    int k = bdl_nbc_poll(v, n, p->block && !p->others, !p->later);
    free(v);
    for (int i = 0; i < n; i++)
        qs[i]->done = bdl_nbc_done(qs[i]->impl);
    return k;
}

static void coll_req_complete(bdl_request_t *q)
{
    q->err = q->status.MPI_ERROR = bdl_nbc_err(q->impl);
}

static void coll_req_release(bdl_request_t *q)
{
    bdl_nbc_free(q->impl);
    q->impl = NULL;
}

static int coll_req_cancel(bdl_request_t *q, MPI_Request h)
{
    (void)q;
    return bdl_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Cancel",
                     "request %d is a nonblocking collective, which cannot be cancelled "
                     "(MPI 3.1 5.12)",
                     h);
}

static int coll_req_free(bdl_request_t *q, MPI_Request *h)
{
    (void)q;
    return bdl_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Request_free",
                     "request %d is a nonblocking collective, which cannot be freed "
                     "(MPI 3.1 5.12): complete it with MPI_Wait or MPI_Test",
                     *h);
}

static const bdl_req_ops_t coll_req_ops = {
    .progress = coll_req_progress,
    .poll = coll_req_poll,
    .poll_order = 1,
    .complete = coll_req_complete,
    .release = coll_req_release,
    .cancel = coll_req_cancel,
    .free = coll_req_free,
};

/* A nonblocking collective's request: complete already if nb is. */
static MPI_Request req_new_coll(bdl_nbc_t *nb)
{
    int h = bdl_req_new(&coll_req_ops);
    bdl_request_t *q = &bdl_g.reqs[h];
    q->impl = nb;
    /* its error (a revoke) goes to its communicator's handler in Wait/Test
     * (MPI 3.1 8.3), as a receive's does */
    q->ecomm = nb->comm;
    q->done = bdl_nbc_done(nb);
    bdl_status_empty(&q->status);
    return h;
}

int bdl_nbc_status(MPI_Comm comm, const char *call, int err)
{
    if (err == MPIX_ERR_REVOKED)
        return bdl_comm_revoked_error(comm, call ? call : "collective");
    if (err)
        return bdl_error(comm, err, call ? call : "collective",
                         "the data received does not match the receive buffer (the ranks' "
                         "counts or type signatures disagree)");
    return MPI_SUCCESS;
}

/* A nonblocking call's request is complete at once if its results are
 * already there. */
int bdl_nbc_launch(bdl_nbc_t *nb, MPI_Request *request)
{
    if (!request) {
        if (nb->size > 1)
            bdl_nbc_progress(nb, 1);
        return bdl_nbc_status(nb->comm, nb->call, nb->err);
    }
    bdl_nbc_t *h = malloc(sizeof *h);
    if (!h)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory starting a nonblocking collective");
    *h = *nb;
    h->owns = 1;
    h->nbreq = 1;
    h->counts = dup_ints(nb->counts, nb->nblk);
    h->displs = dup_ints(nb->displs, nb->nblk);
    h->bdispls = dup_ints(nb->bdispls, nb->nblk);
    bdl_dt_retain(h->t);
    if (nb->tv) {
        h->tv = malloc((size_t)(nb->nblk ? nb->nblk : 1) * sizeof *h->tv);
        if (!h->tv)
            bdl_fatal(MPI_ERR_NO_MEM, "out of memory starting a nonblocking collective");
        for (int j = 0; j < nb->nblk; j++) {
            h->tv[j] = nb->tv[j];
            bdl_dt_retain(h->tv[j]);
        }
    }
    if (nb->size == 1) {
        h->done = 1;
        nbc_release(h);
    } else if (h->pp && !h->pp->arrived && h->pp->next < pipe_n(h)) {
        pend_add(h); /* past the bound: the rest in MPI_Test, MPI_Wait (pipe_progress) */
    } else {
        bdl_xfer_arrive(&h->xf);
        if (h->pp)
            h->pp->arrived = 1;
        if (bdl_resp()->flag) {
            h->ready = 1;
            nbc_finish(h);
        } else if (h->pp) {
            pend_add(h); /* it takes its pieces as they come (pipe_progress) */
        }
    }
    *request = req_new_coll(h);
    return MPI_SUCCESS;
}

/* A request that is complete from the start. */
MPI_Request bdl_nbc_completed(void)
{
    bdl_nbc_t *h = calloc(1, sizeof *h);
    if (!h)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory starting a nonblocking operation");
    h->done = 1;
    return req_new_coll(h);
}

/* A request that completes when the library's requests reqs[n] (taken
 * over) have; their errors are reported as truncation. */
MPI_Request bdl_nbc_of_requests(MPI_Request *reqs, int n)
{
    return bdl_nbc_of_requests_fin(reqs, n, NULL, NULL, MPI_COMM_WORLD, 0, 0, 0, NULL);
}

MPI_Request bdl_nbc_of_requests_fin(MPI_Request *reqs, int n,
                                    void (*fin)(bdl_nbc_t *, void *, const MPI_Status *), void *arg,
                                    MPI_Comm comm, int api, int root, int ctx, const int *peers)
{
    bdl_nbc_t *h = calloc(1, sizeof *h);
    if (!h)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory starting a nonblocking operation");
    h->owns = 1;
    h->nreq = n;
    h->reqs = reqs;
    h->done = !n;
    h->reqs_fin = fin;
    h->fin_own = arg;
    h->comm = comm;
    h->lc_api = api;
    h->lc_root = root;
    h->lc_ctx = ctx;
    if (peers && n) {
        if (!(h->lc_peers = malloc((size_t)n * sizeof *h->lc_peers)))
            bdl_fatal(MPI_ERR_NO_MEM, "out of memory starting a nonblocking operation");
        memcpy(h->lc_peers, peers, (size_t)n * sizeof *peers);
    }
    if (!n) {
        free(reqs);
        h->reqs = NULL;
        run_fin(h, NULL);
    }
    return req_new_coll(h);
}

/* ---------------------------------------------------------------- communicator creation */

int bdl_nbc_start_split(bdl_comm_t *c, int api, const void *in, uint64_t n, bdl_nbc_fin_t fin,
                        void *arg, MPI_Request *request)
{
    bdl_nbc_t nb;
    bdl_nbc_init(&nb, c, NULL);
    bdl_xfer_begin(&nb.xf, c, BD_COLL_SPLIT, 0, 0, 0, 0, api | (request ? BD_API_NB : 0));
    bdl_put_t p = bdl_put_start(&nb.xf);
    bdl_put_typed(&p, -1, in, n, bdl_dt_byte());
    bdl_put_flush(&p);
    nb.gkind = BDL_GET_SPLIT;
    nb.fin = fin;
    nb.fin_arg = arg;
    return bdl_nbc_launch(&nb, request);
}
