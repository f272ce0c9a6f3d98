/* Nonblocking collectives in the ranks (docs/design.md, "Collectives in the
 * ranks"): MPI_Ibarrier, MPI_Ibcast, MPI_Ireduce, MPI_Iallreduce,
 * MPI_Iscan and MPI_Iexscan (user ops too: their functions run in the
 * MPI_Wait or MPI_Test that completes the call), MPI_Igather,
 * MPI_Iscatter, MPI_Iallgather and
 * MPI_Ialltoall (not their v and w forms, whose block sizes not every
 * member knows), on an intracommunicator of at most LNB_MAX_SIZE members
 * that are all ranks of this node, when each message fits one mailbox
 * entry (the eager limit).  Through the master each was six requests
 * (BEGIN, PUT, ARRIVE, then WAIT, GET, END at completion): 150-230 us
 * where the blocking call in the ranks takes 0.5 us with both ranks
 * running.
 *
 * A rank sends everything it sends for the call at the call, as messages
 * of the blocking path (coll_local.c: same tag, same header, so a blocking
 * call on one rank against a nonblocking one on another is the collective
 * mismatch), and posts its receives then, as the library's own requests;
 * the call's request completes when they have, and then what came is
 * checked and unpacked or folded.  A rank's part thus needs nobody after
 * the call, as MPI's nonblocking collectives require: a rank that calls
 * MPI_Ibarrier and then waits in a receive that another rank sends only
 * after its own MPI_Wait on the barrier must not hold that rank up.  Hence
 * one hop and no tree: Iallreduce and Ibarrier send to every member (at
 * most LNB_MAX_SIZE - 1 messages a rank), Iscan and Iexscan to every
 * member above the sender, Ibcast and Ireduce to or from the root, the
 * others each block straight to its receiver.  Folds run in rank order
 * (bdl_fold_*), as the master's, so results are bit-identical whichever
 * path a call takes.  Through the master a scan is two requests (68-98
 * us at -ns 2 -nr 2), and a user-op reduction a gather of every
 * contribution to every rank that folds (108-190 us there, 2.5 ms at -ns
 * 16 -nr 1).
 * Receives are posted in call order on one tag, so instances in flight on
 * one communicator, and blocking calls after them, take their messages in
 * order (core/match.c matches posted receives first). */
#include <stdlib.h>
#include <string.h>

#include "bd_dtype.h"
#include "coll.h"
#include "coll_local.h"
#include "core.h"
#include "dt.h"
#include "nbc.h"
#include "request.h"

/* Members at most: Ibarrier and Iallreduce cost size * (size - 1)
 * messages.  Measured against the master path (mpi_bench, 8 bytes): 24
 * ranks at -nr 1 and -nr 2 1.5-2.4x faster; 32 at -nr 2 Iallreduce 0.8x
 * (Ibarrier 1.1-1.5x). */
#define LNB_MAX_SIZE 24

/* Calls where every member waits for every other (Ibarrier, Iallreduce,
 * Iallgather, Ialltoall) cost every member a wake-up either way, and here
 * size * (size - 1) messages besides; with fewer run slots than members
 * they run here up to this size.  Measured against the master path (which
 * became two requests in session 28; 8 and 512 bytes, -nr 1 and 2): 8
 * ranks 1.2-1.4x faster, 12 ranks 0.96-1.2x, 16 ranks 0.86-1.1x, 24 ranks
 * at -nr 2 0.65-0.85x.  Ibcast and Ireduce, where only the root waits
 * for all or all for the root, were 9-40x faster at 8-24 ranks (the
 * others do not wait, or wait once), as are Igather and Iscatter.  A
 * user-op Iallreduce asks as an Ireduce: through the master it is a
 * gather of every contribution to every rank (2.5 ms at 16 ranks, -nr 1,
 * against 0.34 here). */
#define LNB_LOCKSTEP_MAX 12
/* Iscan and Iexscan: the bytes of all size * (size - 1) / 2 messages at
 * most (16 ranks at -nr 1: 1 KiB each 1.2x faster than the master path, 2
 * KiB 0.87x; 24 ranks: 512 bytes 1.13x, 1 KiB 0.64x). */
#define LNB_SCAN_BYTES (128 << 10)

int bdl_lcn_eligible(const bdl_comm_t *c, uint64_t bytes, int api)
{
    if (c->size > LNB_MAX_SIZE || c->revoked || LC_HDR + bytes > bdl_g.hdr->eager)
        return 0;
    uint64_t p = (uint64_t)c->size;
    switch (api) {
    case BD_API_BARRIER:
    case BD_API_ALLREDUCE:
    case BD_API_ALLGATHER:
    case BD_API_ALLTOALL:
        if (c->size > LNB_LOCKSTEP_MAX && !bdl_lc_all_run(c))
            return 0;
        break;
    case BD_API_SCAN:
    case BD_API_EXSCAN:
        if (p * (p - 1) / 2 * bytes > LNB_SCAN_BYTES)
            return 0;
        break;
    default: break;
    }
    return bdl_lc_eligible(c, bytes);
}

/* One call in flight: what its completion checks, and where it puts what
 * came.  Nothing points into the communicator (the program may free it
 * before the request completes). */
typedef struct lnb {
    lc_hdr_t h; /* what this rank's messages said (data bytes aside) */
    int fold;   /* compare op, type and count too; fold the data */
    int ctx;    /* for messages: the communicator's context ... */
    int me;     /* ... and this rank's rank in it */
    int size;
    int nrecv;
    int *peer;   /* the communicator rank receive k is from */
    int *pworld; /* ... and its world rank */
    char *in;    /* receive k's message at in + k * slot */
    uint64_t slot;
    uint64_t n; /* data bytes each message should carry */
    char *mine; /* our own packed contribution (a fold), after LC_HDR */
    void *out;  /* NULL: nothing to write (a barrier) */
    uint64_t count;
    bdl_dt_t *t; /* retained */
    int blocks;  /* receive k goes to block peer[k] of out (count elements of t each) */
    int err;     /* the call's own (the root's own block does not fit: MPI_ERR_TRUNCATE) */
    int last;    /* a fold: of the ranks 0..last */
    MPI_Op op;
    int user;          /* a user op: a copy of it (the program may free it meanwhile) ... */
    bdl_user_op_t uop; /* ... */
    MPI_Datatype dt;   /* ... and the type its function sees */
} lnb_t;

static void lnb_free(lnb_t *l)
{
    if (l->t)
        bdl_dt_release(l->t);
    free(l->peer);
    free(l->pworld);
    free(l->in);
    free(l->mine);
    free(l);
}

static _Noreturn void lnb_mismatch(const lnb_t *l, const lc_hdr_t *h, int k)
{
    bdl_fatal(MPI_ERR_OTHER,
              "collective mismatch on communicator context %d: rank %d called %s (root %d%s) as "
              "its collective %llu there, where rank %d sent for %s (root %d) as its collective "
              "%llu",
              l->ctx, bdl_g.world_rank, bdl_lc_api_name(l->h.api), l->h.root,
              l->fold && h->api == l->h.api ? ", with another op, type or count" : "",
              (unsigned long long)l->h.seq, l->pworld[k], bdl_lc_api_name(h->api), h->root,
              (unsigned long long)h->seq);
}

/* The request's receives are all complete: check each message against
 * the call, then unpack (a broadcast) or fold (a reduction's root, every
 * rank of an allreduce) into the program's buffer. */
static void lnb_fin(bdl_nbc_t *nb, void *arg, const MPI_Status *st)
{
    lnb_t *l = arg;
    int err = nb->err ? nb->err : l->err;
    uint64_t taken = 0; /* messages delivered (each counted in RECVS) */
    const char **v = NULL;
    if (l->fold && !(v = calloc((size_t)l->size, sizeof *v)))
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory completing a collective");
    for (int k = 0; k < l->nrecv; k++) {
        const char *msg = l->in + (uint64_t)k * l->slot;
        int e = st ? st[k].MPI_ERROR : MPI_SUCCESS;
        if (e != MPI_SUCCESS && e != MPI_ERR_TRUNCATE) {
            /* Nothing came (the communicator was revoked): the call fails. */
            err = e;
            continue;
        }
        taken++;
        lc_hdr_t h;
        memcpy(&h, msg, LC_HDR);
        if (h.seq != l->h.seq || h.api != l->h.api || h.root != l->h.root ||
            (l->fold && (h.op != l->h.op || h.dtype != l->h.dtype || h.count != l->h.count)))
            lnb_mismatch(l, &h, k);
        if (h.sep)
            bdl_fatal(MPI_ERR_INTERN, "a malformed collective message from rank %d", l->pworld[k]);
        /* Counts that disagree (erroneous): MPI_ERR_TRUNCATE, as on the
         * blocking path, and what fits is taken; a longer message was cut
         * at the slot, past the n bytes taken. */
        if (h.revoked)
            err = MPIX_ERR_REVOKED;
        else if (h.bytes != l->n && !err)
            err = MPI_ERR_TRUNCATE;
        if (v)
            v[l->peer[k]] = msg + LC_HDR;
        else if (l->out && h.bytes && (err == MPI_SUCCESS || err == MPI_ERR_TRUNCATE))
            bdl_dt_unpack(l->t,
                          l->blocks
                              ? bdl_at(l->out, bdl_voff(NULL, (int)l->count, l->peer[k], l->t))
                              : l->out,
                          l->count, 0, msg + LC_HDR, h.bytes < l->n ? h.bytes : l->n);
    }
    atomic_fetch_sub_explicit(&bdl_g.slot->stats[BD_STAT_RECVS], taken, memory_order_relaxed);
    if (v && l->last >= 0 && (err == MPI_SUCCESS || err == MPI_ERR_TRUNCATE)) {
        char *acc = malloc(l->n ? l->n : 1);
        if (!acc)
            bdl_fatal(MPI_ERR_NO_MEM, "out of memory completing a collective");
        v[l->me] = l->mine + LC_HDR;
        bdl_fold_op_t o = {l->op, l->user ? &l->uop : NULL, l->dt};
        bdl_fold_t f;
        bdl_fold_init(&f, &o, l->t, l->count, acc);
        for (int r = 0; r <= l->last; r++)
            bdl_fold_add(&f, v[r]);
        bdl_fold_end(&f);
        bdl_dt_unpack(l->t, l->out, l->count, 0, acc, l->n);
        free(acc);
    }
    free(v);
    nb->err = err;
    lnb_free(l);
}

/* Start a call (the header: x->h) with room for nrecv messages of n data
 * bytes. */
static lnb_t *lnb_start(lc_t *x, bdl_comm_t *c, MPI_Comm comm, const char *call, int api, int root,
                        uint64_t n, int nrecv)
{
    bdl_lc_start(x, c, comm, call, api | BD_API_NB, root);
    lnb_t *l = calloc(1, sizeof *l);
    if (!l)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory starting a collective");
    l->ctx = c->ctx;
    l->me = c->rank;
    l->size = c->size;
    l->n = n;
    l->slot = (LC_HDR + n + 15) & ~(uint64_t)15;
    l->nrecv = nrecv;
    size_t k = (size_t)(nrecv ? nrecv : 1);
    l->peer = malloc(k * sizeof *l->peer);
    l->pworld = malloc(k * sizeof *l->pworld);
    l->in = malloc(k * l->slot);
    if (!l->peer || !l->pworld || !l->in)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory starting a collective");
    return l;
}

/* Post the receive of rank r's message (the k-th receive). */
static void lnb_post(lnb_t *l, const bdl_comm_t *c, int ctx, int k, int r, MPI_Request *reqs)
{
    l->peer[k] = r;
    l->pworld[k] = c->world[r];
    reqs[k] = bdl_irecv_post(ctx, r, LC_TAG, l->in + (uint64_t)k * l->slot, l->slot,
                             (bdl_dt_t *)bdl_dt_byte());
}

/* Post the receives: from the other members of ranks [lo, hi).  Before
 * anything is sent, so that a message that comes at once lands in its
 * buffer. */
static MPI_Request *lnb_recvs(lnb_t *l, const bdl_comm_t *c, int lo, int hi)
{
    int ctx = bdl_comm_ictx(c), k = 0;
    MPI_Request *reqs = malloc((size_t)(l->nrecv ? l->nrecv : 1) * sizeof *reqs);
    if (!reqs)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory starting a collective");
    for (int r = lo; r < hi; r++)
        if (r != c->rank)
            lnb_post(l, c, ctx, k++, r, reqs);
    return reqs;
}

/* The members [lo, hi) of all (1), of one rank r (r >= 0), or none (r < 0). */
static void span(const bdl_comm_t *c, int all, int r, int *lo, int *hi)
{
    *lo = all ? 0 : r < 0 ? 0 : r;
    *hi = all ? c->size : r < 0 ? 0 : r + 1;
}

/* The request, which completes when the receives have (lnb_fin). */
static int lnb_request(const lc_t *x, lnb_t *l, const bdl_comm_t *c, MPI_Request *reqs,
                       MPI_Request *request)
{
    *request = bdl_nbc_of_requests_fin(reqs, l->nrecv, lnb_fin, l, x->comm, l->h.api, l->h.root,
                                       c->ctx, l->pworld);
    return MPI_SUCCESS;
}

/* Receives from every other member when recv_all, else from recv_from if
 * >= 0, then msg (LC_HDR + n bytes; NULL: nothing) to every other member
 * when send_all, else to send_to if >= 0, then the request. */
static int lnb_launch(lc_t *x, lnb_t *l, bdl_comm_t *c, int recv_all, int recv_from, char *msg,
                      int send_all, int send_to, MPI_Request *request)
{
    int lo, hi, slo, shi;
    span(c, recv_all, recv_from, &lo, &hi);
    span(c, send_all, send_to, &slo, &shi);
    MPI_Request *reqs = lnb_recvs(l, c, lo, hi);
    for (int d = 1; msg && d < c->size; d++) {
        int r = (c->rank + d) % c->size;
        if (r >= slo && r < shi)
            bdl_lc_send(x, r, msg, LC_HDR + l->n);
    }
    return lnb_request(x, l, c, reqs, request);
}

int bdl_lcn_barrier(bdl_comm_t *c, MPI_Comm comm, const char *call, MPI_Request *request)
{
    lc_t x;
    lnb_t *l = lnb_start(&x, c, comm, call, BD_API_BARRIER, 0, 0, c->size - 1);
    char msg[LC_HDR];
    l->h = x.h;
    return lnb_launch(&x, l, c, 1, -1, msg, 1, -1, request);
}

int bdl_lcn_bcast(bdl_comm_t *c, MPI_Comm comm, const char *call, void *buf, uint64_t count,
                  bdl_dt_t *t, int root, MPI_Request *request)
{
    lc_t x;
    uint64_t n = count * t->psize;
    int is_root = c->rank == root;
    lnb_t *l = lnb_start(&x, c, comm, call, BD_API_BCAST, root, n, is_root ? 0 : 1);
    x.h.count = n;
    l->h = x.h;
    char *msg = NULL;
    if (is_root) {
        if (!(msg = malloc(LC_HDR + n)))
            bdl_fatal(MPI_ERR_NO_MEM, "out of memory starting a collective");
        bdl_dt_pack(t, buf, count, 0, msg + LC_HDR, n);
    } else {
        bdl_dt_retain(t);
        l->t = t;
        l->out = buf;
        l->count = count;
    }
    int rc = lnb_launch(&x, l, c, 0, root, msg, 1, -1, request);
    free(msg);
    return rc;
}

/* Our contribution packed at the call (in place, `in` is `out`, written
 * only at completion): what goes out, and what a fold takes as ours. */
static char *lnb_mine(bdl_dt_t *t, const void *in, uint64_t count, uint64_t n)
{
    char *mine = malloc(LC_HDR + n);
    if (!mine)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory starting a collective");
    bdl_dt_pack(t, in, count, 0, mine + LC_HDR, n);
    return mine;
}

/* A reduction's header (x->h, copied to l): what the folding ranks
 * compare. */
static void lnb_fold_hdr(lc_t *x, lnb_t *l, const bdl_dt_t *t, MPI_Op op, uint64_t count)
{
    x->fold = 1;
    x->h.dtype = t->basic;
    x->h.op = op;
    x->h.count = count * t->nelem;
    l->h = x->h;
}

/* ... and, on a folding rank, what its completion needs. */
static void lnb_fold_setup(lc_t *x, lnb_t *l, bdl_dt_t *t, const bdl_fold_op_t *o, uint64_t count,
                           void *out, char *mine, int last)
{
    lnb_fold_hdr(x, l, t, o->op, count);
    l->fold = 1;
    bdl_dt_retain(t);
    l->t = t;
    l->out = out;
    l->count = count;
    l->op = o->op;
    l->mine = mine;
    l->last = last;
    if (o->u) {
        l->user = 1;
        l->uop = *o->u;
        l->dt = o->dt;
    }
}

int bdl_lcn_reduce(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *in, void *out,
                   uint64_t count, bdl_dt_t *t, const bdl_fold_op_t *o, int root, int all,
                   MPI_Request *request)
{
    lc_t x;
    uint64_t n = count * t->psize;
    int folds = all || c->rank == root;
    lnb_t *l = lnb_start(&x, c, comm, call, all ? BD_API_ALLREDUCE : BD_API_REDUCE, all ? 0 : root,
                         n, folds ? c->size - 1 : 0);
    char *mine = lnb_mine(t, in, count, n);
    if (folds)
        lnb_fold_setup(&x, l, t, o, count, out, mine, c->size - 1);
    else
        lnb_fold_hdr(&x, l, t, o->op, count);
    int rc = lnb_launch(&x, l, c, folds, -1, mine, all, all ? -1 : folds ? -2 : root, request);
    if (!folds)
        free(mine);
    return rc;
}

int bdl_lcn_scan(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *in, void *out,
                 uint64_t count, bdl_dt_t *t, const bdl_fold_op_t *o, int exclusive,
                 MPI_Request *request)
{
    lc_t x;
    uint64_t n = count * t->psize;
    int me = c->rank;
    lnb_t *l = lnb_start(&x, c, comm, call, exclusive ? BD_API_EXSCAN : BD_API_SCAN, 0, n, me);
    char *mine = lnb_mine(t, in, count, n);
    lnb_fold_setup(&x, l, t, o, count, out, mine, exclusive ? me - 1 : me);
    MPI_Request *reqs = lnb_recvs(l, c, 0, me);
    for (int r = me + 1; r < c->size; r++)
        bdl_lc_send(&x, r, mine, LC_HDR + n);
    return lnb_request(&x, l, c, reqs, request);
}

/* Block r of a side (regular form: count elements of t apart). */
static const void *blk(const bdl_a2a_side_t *x, int r)
{
    return bdl_at(x->buf, bdl_voff(NULL, x->count, r, x->t));
}

int bdl_lcn_blocks(bdl_comm_t *c, MPI_Comm comm, const char *call, int api, int root,
                   const bdl_a2a_side_t *s, const bdl_a2a_side_t *rv, int err, MPI_Request *request)
{
    int me = c->rank, size = c->size;
    /* As the blocking bdl_lc_blocks: everyone its block to the root
     * (gather) or to all (allgather), the root block r to rank r
     * (scatter), everyone block r to rank r (all-to-all). */
    int sends = api == BD_API_GATHER ? me != root : api == BD_API_SCATTER ? me == root : 1;
    int recvs = api == BD_API_GATHER ? me == root : api == BD_API_SCATTER ? me != root : 1;
    int each = api == BD_API_SCATTER || api == BD_API_ALLTOALL;
    int nrecv = !recvs ? 0 : api == BD_API_SCATTER ? 1 : size - 1;
    uint64_t n = recvs ? (uint64_t)rv->count * rv->t->psize : 0;
    lc_t x;
    lnb_t *l = lnb_start(&x, c, comm, call, api, root, n, nrecv);
    l->h = x.h;
    l->err = err;
    if (recvs) {
        bdl_dt_retain(rv->t);
        l->t = rv->t;
        l->out = (void *)rv->buf;
        l->count = (uint64_t)rv->count;
        l->blocks = api != BD_API_SCATTER;
    }
    int lo, hi;
    span(c, recvs && api != BD_API_SCATTER, recvs && api == BD_API_SCATTER ? root : -1, &lo, &hi);
    MPI_Request *reqs = lnb_recvs(l, c, lo, hi);
    uint64_t sn = sends ? (uint64_t)s->count * s->t->psize : 0;
    char *msg = sends ? malloc(LC_HDR + sn) : NULL;
    if (sends && !msg)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory starting a collective");
    /* In place (an all-to-all's blocks leave from where the others' land)
     * is safe: everything goes out now, and nothing lands before the
     * request completes. */
    x.h.count = sn;
    for (int d = 1; sends && d < size; d++) {
        int r = (me + d) % size;
        if (api == BD_API_GATHER && r != root)
            continue;
        bdl_dt_pack(s->t, blk(s, each ? r : 0), (uint64_t)s->count, 0, msg + LC_HDR, sn);
        bdl_lc_send(&x, r, msg, LC_HDR + sn);
    }
    free(msg);
    return lnb_request(&x, l, c, reqs, request);
}
