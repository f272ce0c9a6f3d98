/* Collectives in the ranks (docs/design.md, "Collectives in the ranks"):
 * small blocking collectives on an intracommunicator whose members are all
 * ranks of this node run over the direct point-to-point path (every message
 * straight into the receiver's mailbox, core/match.c), without a round trip
 * to the master.  Each message is one mailbox entry on the communicator's
 * hidden context with the tag LC_TAG: a header describing the sender's call
 * (what the master compares in BEGIN) and the packed data.  One tag for all
 * of them keeps every message from one peer in call order, so a message
 * left over by a mismatched call is found by the next collective that
 * receives from that peer (its sequence number differs).  Predefined
 * reductions fold the packed basic elements in rank order, acc = v0, then
 * acc = v_r op acc for r = 1, 2, ... (bd_op_apply), exactly as the master
 * does (src/master/coll.c:try_fold), so results are bit-identical whichever
 * path a call takes; user ops (small data) in the same order, as the
 * user-op chain (mpi/coll_reduce.c) does.  Scans and exscans too,
 * predefined or user ops (through the master a blocking scan is one
 * request, 16-46 us at -ns 2 -nr 2, where an Allreduce here takes 0.6).
 *
 * Larger data (above BDL_LC_MAX a message) runs here too when every member
 * holds a run slot at once (-nr >= size): the header goes alone and the
 * data follows as a message of its own (tag in the header's sep), which
 * the point-to-point path moves with a single copy (the receiver reads it
 * from the sender's memory, core/match.c), straight between the programs'
 * buffers when they are contiguous.  Receives of such data are posted
 * before anything is sent, so the data lands in the receive buffer, never
 * in the unexpected queue.  Each message decides alone (its size as its
 * sender knows it) and the header says which way it went, so ranks whose
 * counts disagree still meet and report MPI_ERR_TRUNCATE. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "bd_dtype.h"
#include "bd_mbox.h"
#include "coll.h"
#include "coll_local.h"
#include "core.h"
#include "dt.h"
#include "request.h"

/* Scratch buffers: a message (header and data) each.  A thread runs one
 * blocking collective at a time; under MPI_THREAD_MULTIPLE several threads
 * may each be inside one (their waits give the lock up), so the buffers
 * are the thread's own, freed when it ends (free_thread_buffers). */
enum { LC_NSCR = 3 };
static _Thread_local char *g_scr[LC_NSCR];
static void free_thread_buffers(void);

static char *scratch(int i)
{
    if (!g_scr[i]) {
        if (bdl_mt_on)
            bdl_mt_at_thread_exit(free_thread_buffers);
        g_scr[i] = malloc(LC_HDR + BDL_LC_MAX);
        if (!g_scr[i])
            bdl_fatal(MPI_ERR_NO_MEM, "out of memory in a collective");
    }
    return g_scr[i];
}

/* ---------------------------------------------------------------- when */

/* Every member may hold a run slot at once (-nr >= size): Allreduce then
 * spreads every contribution in one hop.  With fewer slots the path in the
 * ranks is still 2-5x faster than the master's (docs/performance.md); a
 * rank waiting in it names its call to the master (bdl_g.lc_api), so a
 * deadlock against a collective through the master (a nonblocking call
 * where the others call the blocking one) is reported as the mismatch. */
int bdl_lc_all_run(const bdl_comm_t *c) { return (int)bdl_g.hdr->job.nr >= c->size; }

int bdl_lc_eligible(const bdl_comm_t *c, uint64_t bytes)
{
    if (c->inter || c->size < 2 || bdl_g.hdr->eager < 2 * LC_HDR)
        return 0;
    /* Larger data only while every member runs: single copies need a
     * reader that runs (a sender that waits turns its data into a spill
     * file, match.c), and the master path stages large data under the
     * memory budget when ranks wait unloaded (docs/design.md).  And only
     * where ranks may read each other's memory (a property of the node,
     * the same for every rank there): else every block would be a spill
     * file. */
    if (bytes > BDL_LC_MAX &&
        (!bdl_lc_all_run(c) || !atomic_load_explicit(&bdl_g.slot->cma_ok, memory_order_relaxed)))
        return 0;
    for (int r = 0; r < c->size; r++)
        if (!bdl_p2p_local(c->world[r]))
            return 0;
    return 1;
}

/* ---------------------------------------------------------------- messages */

static const char *const g_api_names[BD_API__COUNT] = {
    [BD_API_BARRIER] = "MPI_Barrier",
    [BD_API_BCAST] = "MPI_Bcast",
    [BD_API_REDUCE] = "MPI_Reduce",
    [BD_API_ALLREDUCE] = "MPI_Allreduce",
    [BD_API_GATHER] = "MPI_Gather",
    [BD_API_SCATTER] = "MPI_Scatter",
    [BD_API_ALLGATHER] = "MPI_Allgather",
    [BD_API_ALLTOALL] = "MPI_Alltoall",
    [BD_API_GATHERV] = "MPI_Gatherv",
    [BD_API_SCATTERV] = "MPI_Scatterv",
    [BD_API_ALLGATHERV] = "MPI_Allgatherv",
    [BD_API_ALLTOALLV] = "MPI_Alltoallv",
    [BD_API_ALLTOALLW] = "MPI_Alltoallw",
    [BD_API_REDUCE_SCATTER] = "MPI_Reduce_scatter",
    [BD_API_REDUCE_SCATTER_BLOCK] = "MPI_Reduce_scatter_block",
    [BD_API_SCAN] = "MPI_Scan",
    [BD_API_EXSCAN] = "MPI_Exscan",
};

/* The nonblocking forms that run in the ranks (coll_local_nb.c). */
static const char *const g_nb_names[BD_API__COUNT] = {
    [BD_API_BARRIER] = "MPI_Ibarrier",     [BD_API_BCAST] = "MPI_Ibcast",
    [BD_API_REDUCE] = "MPI_Ireduce",       [BD_API_ALLREDUCE] = "MPI_Iallreduce",
    [BD_API_GATHER] = "MPI_Igather",       [BD_API_SCATTER] = "MPI_Iscatter",
    [BD_API_ALLGATHER] = "MPI_Iallgather", [BD_API_ALLTOALL] = "MPI_Ialltoall",
    [BD_API_SCAN] = "MPI_Iscan",           [BD_API_EXSCAN] = "MPI_Iexscan",
};

const char *bdl_lc_api_name(int api)
{
    const char *const *names = api & BD_API_NB ? g_nb_names : g_api_names;
    api &= ~BD_API_NB;
    return api > 0 && api < BD_API__COUNT && names[api] ? names[api] : "a collective";
}

void bdl_lc_start(lc_t *x, bdl_comm_t *c, MPI_Comm comm, const char *call, int api, int root)
{
    *x = (lc_t){.c = c, .comm = comm, .call = call, .ctx = bdl_comm_ictx(c)};
    x->h = (lc_hdr_t){.api = api, .root = root, .seq = c->coll_seq++};
    atomic_fetch_add_explicit(&bdl_g.slot->stats[BD_STAT_COLLS], 1, memory_order_relaxed);
}

/* Name the call to the master while this rank may wait in it. */
static void lc_waiting(const lc_t *x, int on)
{
    bdl_g.lc_api = on ? x->h.api : 0;
    bdl_g.lc_root = x->h.root;
    bdl_g.lc_ctx = x->c->ctx;
    bdl_g.lc_peer = -1; /* the receive names its peer */
}

/* Send n bytes at msg (the header is written here) to rank r, in mailbox
 * entries with their payload inline (at most the eager limit each: never a
 * spill file); not counted as program messages. */
void bdl_lc_send(const lc_t *x, int r, char *msg, uint64_t n)
{
    lc_hdr_t h = x->h;
    h.bytes = n - LC_HDR;
    h.revoked = x->err == MPIX_ERR_REVOKED || x->c->revoked;
    memcpy(msg, &h, LC_HDR);
    uint64_t eager = bdl_g.hdr->eager;
    for (uint64_t off = 0; off < n || !off;) {
        uint64_t k = n - off < eager ? n - off : eager;
        bd_mentry_t e = {.kind = BD_ME_MSG,
                         .ctx = x->ctx,
                         .src = x->c->rank,
                         .tag = LC_TAG,
                         .src_world = bdl_g.world_rank,
                         .nbytes = k};
        bdl_p2p_post(x->c->world[r], &e, msg + off, k, NULL, NULL, 0);
        off += k;
    }
}

/* A message of another call than ours: the collective mismatch the master
 * reports in BEGIN; the job ends. */
_Noreturn void bdl_lc_mismatch(const lc_t *x, const lc_hdr_t *h, int r)
{
    if (h->seq != x->h.seq)
        bdl_fatal(MPI_ERR_OTHER,
                  "collective mismatch on communicator context %d: rank %d called %s (root %d) "
                  "as its collective %llu there, where rank %d sent for %s (root %d) as its "
                  "collective %llu",
                  x->c->ctx, bdl_g.world_rank, bdl_lc_api_name(x->h.api), x->h.root,
                  (unsigned long long)x->h.seq, x->c->world[r], bdl_lc_api_name(h->api), h->root,
                  (unsigned long long)h->seq);
    if (x->fold && h->api == x->h.api && h->root == x->h.root)
        bdl_fatal(MPI_ERR_OTHER,
                  "collective mismatch on communicator context %d: rank %d called %s (root %d, "
                  "op %d, type %d, %llu elements) where another rank called it with op %d, type "
                  "%d, %llu elements",
                  x->c->ctx, bdl_g.world_rank, bdl_lc_api_name(x->h.api), x->h.root, x->h.op,
                  x->h.dtype, (unsigned long long)x->h.count, h->op, h->dtype,
                  (unsigned long long)h->count);
    bdl_fatal(MPI_ERR_OTHER,
              "collective mismatch on communicator context %d: rank %d called %s (root %d) where "
              "another rank called %s (root %d)",
              x->c->ctx, bdl_g.world_rank, bdl_lc_api_name(x->h.api), x->h.root,
              bdl_lc_api_name(h->api), h->root);
}

/* Receive rank r's next message into msg (room for a header and BDL_LC_MAX
 * bytes) and check that it belongs to this call; its header goes to x->in.
 * Returns its inline data bytes (0 when the data follows apart, x->in.sep). */
static uint64_t lc_recv(lc_t *x, int r, char *msg)
{
    MPI_Status st;
    lc_hdr_t h;
    uint64_t got = 0, total = 0;
    /* MPIX_Comm_revoke by a member: the call fails, and receives nothing
     * more (the peers may have left it). */
    if (x->err == MPIX_ERR_REVOKED || x->c->revoked) {
        x->err = MPIX_ERR_REVOKED;
        x->in = (lc_hdr_t){0};
        return 0;
    }
    do {
        lc_waiting(x, 1);
        int rc = bdl_recv_bytes(x->ctx, r, LC_TAG, msg + got, LC_HDR + BDL_LC_MAX - got, &st);
        lc_waiting(x, 0);
        if (rc == MPIX_ERR_REVOKED) {
            x->err = rc;
            x->in = (lc_hdr_t){0};
            return 0;
        }
        atomic_fetch_sub_explicit(&bdl_g.slot->stats[BD_STAT_RECVS], 1, memory_order_relaxed);
        got += (uint64_t)st.bd_nbytes;
        if (got == (uint64_t)st.bd_nbytes && got >= LC_HDR) {
            memcpy(&h, msg, LC_HDR);
            total = LC_HDR + h.bytes;
        }
        if (rc != MPI_SUCCESS || got < LC_HDR || got > total || total > LC_HDR + BDL_LC_MAX)
            bdl_fatal(MPI_ERR_INTERN, "%s: a malformed collective message from rank %d", x->call,
                      x->c->world[r]);
    } while (got < total);
    if (h.seq != x->h.seq || h.api != x->h.api || h.root != x->h.root ||
        (x->fold && (h.op != x->h.op || h.dtype != x->h.dtype || h.count != x->h.count)))
        bdl_lc_mismatch(x, &h, r);
    if (h.sep && (h.bytes || (h.sep != LC_DTAG && h.sep != LC_DTAG2)))
        bdl_fatal(MPI_ERR_INTERN, "%s: a malformed collective message from rank %d", x->call,
                  x->c->world[r]);
    if (h.revoked)
        x->err = MPIX_ERR_REVOKED;
    x->in = h;
    return h.bytes;
}

/* The data of a message is n bytes where this rank expects want: the
 * ranks' counts disagree (erroneous, and MPI can tell); the call reports
 * MPI_ERR_TRUNCATE, as the master path does, and takes what fits. */
static uint64_t lc_fit(lc_t *x, uint64_t n, uint64_t want)
{
    if (n == want)
        return n;
    if (x->err != MPIX_ERR_REVOKED)
        x->err = MPI_ERR_TRUNCATE;
    return n < want ? n : want;
}

static int lc_end(const lc_t *x)
{
    if (x->err == MPIX_ERR_REVOKED)
        return bdl_comm_revoked_error(x->comm, x->call);
    if (x->err)
        return bdl_error(x->comm, x->err, x->call,
                         "the data received does not match the receive buffer (the ranks' "
                         "counts or type signatures disagree)");
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- data apart from headers */

/* What this call's sends still need: single-copy sends others read from
 * our memory, and the packed copies some of them read from.  One blocking
 * collective runs at a time; lg_settle empties them. */
static uint64_t *g_cma;
static void **g_tmp;
static int g_ncma, g_capcma, g_ntmp, g_captmp;

static void *grow(void *p, int *cap, int n, size_t elem)
{
    if (n < *cap)
        return p;
    *cap = *cap ? 2 * *cap : 16;
    p = realloc(p, (size_t)*cap * elem);
    if (!p)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory in a collective");
    return p;
}

static void *lc_malloc(uint64_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory in a collective (%llu bytes)",
                  (unsigned long long)n);
    return p;
}

/* Large working buffers, kept from call to call and grown as needed: a
 * fresh allocation of managed memory costs a grant from the master at its
 * first touch (an RPC; 0.6 ms a call measured for a 1 MiB Allreduce under
 * load), and the rank that waits for it reads no message meanwhile, so
 * its peers' single-copy sends went to spill files.  They stay managed
 * memory, in the budget, and are unloaded with the rest of the rank. */
enum { LC_BIG_SLOTS, LC_BIG_IN, LC_BIG_OUT, LC_NBIG };
static _Thread_local char *g_big[LC_NBIG];
static _Thread_local uint64_t g_big_len[LC_NBIG];

static void free_thread_buffers(void)
{
    for (int i = 0; i < LC_NSCR; i++) {
        free(g_scr[i]);
        g_scr[i] = NULL;
    }
    for (int i = 0; i < LC_NBIG; i++) {
        free(g_big[i]);
        g_big[i] = NULL;
        g_big_len[i] = 0;
    }
}

static char *big(int i, uint64_t n)
{
    if (n > g_big_len[i]) {
        if (bdl_mt_on)
            bdl_mt_at_thread_exit(free_thread_buffers);
        free(g_big[i]);
        g_big[i] = lc_malloc(n);
        g_big_len[i] = n;
    }
    return g_big[i];
}

/* A collective's own messages are not the program's: what a send adds to
 * the point-to-point counters is taken back. */
enum { LC_NSTAT = 6 };
static const int g_send_stat[LC_NSTAT] = {BD_STAT_SENDS_MEM,    BD_STAT_SENDS_FILE,
                                          BD_STAT_SENDS_DIRECT, BD_STAT_BYTES_MEM,
                                          BD_STAT_BYTES_FILE,   BD_STAT_BYTES_DIRECT};
typedef struct lc_stats {
    uint64_t v[LC_NSTAT];
} lc_stats_t;

static void stats_save(lc_stats_t *sv)
{
    for (int i = 0; i < LC_NSTAT; i++)
        sv->v[i] = atomic_load_explicit(&bdl_g.slot->stats[g_send_stat[i]], memory_order_relaxed);
}

static void stats_drop(const lc_stats_t *sv)
{
    for (int i = 0; i < LC_NSTAT; i++) {
        _Atomic uint64_t *p = &bdl_g.slot->stats[g_send_stat[i]];
        atomic_fetch_sub_explicit(p, atomic_load_explicit(p, memory_order_relaxed) - sv->v[i],
                                  memory_order_relaxed);
    }
}

/* Send count elements of t at buf to rank r: inline after the header up
 * to BDL_LC_MAX bytes (unless x->big), else the header alone and the data
 * as a message of its own with tag `tag`: read once from our memory when
 * it is contiguous, from a packed copy otherwise (point-to-point would
 * write a spill file for a non-contiguous one); lg_settle waits for it. */
static void lg_send(lc_t *x, int r, const void *buf, uint64_t count, const bdl_dt_t *t, int tag)
{
    uint64_t n = count * t->psize;
    char *msg = scratch(0);
    lc_hdr_t keep = x->h;
    if (!x->fold)
        x->h.count = n;
    if (!x->big && n <= BDL_LC_MAX) {
        bdl_dt_pack(t, buf, count, 0, msg + LC_HDR, n);
        bdl_lc_send(x, r, msg, LC_HDR + n);
        x->h = keep;
        return;
    }
    x->h.sep = (uint64_t)tag;
    bdl_lc_send(x, r, msg, LC_HDR);
    x->h = keep;
    if (!bdl_dt_contig(t, buf, count) && n > bdl_g.hdr->eager) {
        void *tmp = lc_malloc(n);
        bdl_dt_pack(t, buf, count, 0, tmp, n);
        g_tmp = grow(g_tmp, &g_captmp, g_ntmp, sizeof *g_tmp);
        g_tmp[g_ntmp++] = tmp;
        buf = tmp;
        count = n;
        t = bdl_dt_byte();
    }
    lc_stats_t sv;
    stats_save(&sv);
    uint64_t id = 0;
    bdl_send_typed_id(x->ctx, x->c->world[r], x->c->rank, tag, buf, count, t, 0, 0, NULL, &id);
    stats_drop(&sv);
    if (id) {
        g_cma = grow(g_cma, &g_capcma, g_ncma, sizeof *g_cma);
        g_cma[g_ncma++] = id;
    }
}

/* Wait until every receiver has read what this call sent from our memory
 * (draining our mailbox meanwhile, so our own posted receives progress; a
 * receiver that does not read in time gets a spill file instead, match.c),
 * then free the packed copies. */
static void lg_settle(void)
{
    for (int i = 0; i < g_ncma; i++) {
        lc_stats_t sv;
        stats_save(&sv);
        bdl_p2p_cma_wait_coll(g_cma[i]);
        stats_drop(&sv);
    }
    g_ncma = 0;
    for (int i = 0; i < g_ntmp; i++)
        free(g_tmp[i]);
    g_ntmp = 0;
}

/* One block this rank sends or receives. */
typedef struct lc_blk {
    int peer;
    void *buf;
    uint64_t count;
    const bdl_dt_t *t;
    bdl_precv_t *p; /* the posted receive of data sent apart */
    int posted, err;
    MPI_Status st;
} lc_blk_t;

/* Post the receive of b's data if it will come apart from its header (it
 * does above BDL_LC_MAX), so it lands in b's buffer when it arrives. */
static void lg_post(const lc_t *x, lc_blk_t *b, int tag)
{
    if (!x->big && b->count * b->t->psize <= BDL_LC_MAX)
        return;
    b->posted = 1;
    b->err = MPI_SUCCESS;
    b->p = bdl_recv_begin(x->ctx, b->peer, x->c->world[b->peer], tag, b->buf, b->count, b->t,
                          &b->st, &b->err);
}

/* Take b's header: inline data is unpacked here; data apart is received
 * by lg_end (posted now if its sender's size differs from ours). */
static void lg_hdr(lc_t *x, lc_blk_t *b, int tag)
{
    char *msg = scratch(1);
    uint64_t got = lc_recv(x, b->peer, msg);
    if (x->in.sep) {
        if (x->in.sep != (uint64_t)tag)
            bdl_fatal(MPI_ERR_INTERN, "%s: a malformed collective message from rank %d", x->call,
                      x->c->world[b->peer]);
        if (!b->posted) {
            b->posted = 1;
            b->err = MPI_SUCCESS;
            b->p = bdl_recv_begin(x->ctx, b->peer, x->c->world[b->peer], tag, b->buf, b->count,
                                  b->t, &b->st, &b->err);
        }
        return;
    }
    if (b->posted) {
        /* Its sender sent it inline (their sizes disagree): nothing comes apart. */
        if (b->p)
            bdl_recv_drop(b->p);
        b->p = NULL;
        b->posted = 0;
    }
    uint64_t k = lc_fit(x, got, b->count * b->t->psize);
    if (k)
        bdl_dt_unpack(b->t, b->buf, b->count, 0, msg + LC_HDR, k);
}

static void lg_end(lc_t *x, lc_blk_t *b)
{
    if (!b->posted)
        return;
    if (b->p) {
        lc_waiting(x, 1);
        b->err = bdl_recv_end(b->p, &b->st);
        lc_waiting(x, 0);
        b->p = NULL;
    }
    b->posted = 0;
    atomic_fetch_sub_explicit(&bdl_g.slot->stats[BD_STAT_RECVS], 1, memory_order_relaxed);
    if (b->err != MPI_SUCCESS || (uint64_t)b->st.bd_nbytes != b->count * b->t->psize)
        x->err = MPI_ERR_TRUNCATE;
}

/* One exchange: post the receives whose data comes apart (unless the
 * caller did: posted), send everything, wait until our sends are read,
 * then take the headers and the data in order. */
static void lg_xchg(lc_t *x, lc_blk_t *sv, int ns, lc_blk_t *rv, int nr, int tag, int posted)
{
    for (int i = 0; !posted && i < nr; i++)
        lg_post(x, &rv[i], tag);
    for (int i = 0; i < ns; i++)
        lg_send(x, sv[i].peer, sv[i].buf, sv[i].count, sv[i].t, tag);
    lg_settle();
    for (int i = 0; i < nr; i++)
        lg_hdr(x, &rv[i], tag);
    for (int i = 0; i < nr; i++)
        lg_end(x, &rv[i]);
}

/* ---------------------------------------------------------------- barrier, bcast */

int bdl_lc_barrier(bdl_comm_t *c, MPI_Comm comm, const char *call)
{
    lc_t x;
    bdl_lc_start(&x, c, comm, call, BD_API_BARRIER, 0);
    char *out = scratch(0), *in = scratch(1);
    int n = c->size, me = c->rank;
    /* Dissemination: in round k, to me + 2^k, from me - 2^k. */
    for (int d = 1; d < n; d *= 2) {
        bdl_lc_send(&x, (me + d) % n, out, LC_HDR);
        lc_recv(&x, (me - d + n) % n, in);
    }
    return lc_end(&x);
}

int bdl_lc_bcast(bdl_comm_t *c, MPI_Comm comm, const char *call, int api, void *buf, uint64_t count,
                 const bdl_dt_t *t, int root)
{
    lc_t x;
    bdl_lc_start(&x, c, comm, call, api, root);
    uint64_t n = count * t->psize;
    char *msg = scratch(0);
    if (c->rank == root && n <= BDL_LC_MAX) {
        /* Packed once, inline to each. */
        x.h.count = n;
        bdl_dt_pack(t, buf, count, 0, msg + LC_HDR, n);
        for (int r = 0; r < c->size; r++)
            if (r != root)
                bdl_lc_send(&x, r, msg, LC_HDR + n);
    } else if (c->rank == root) {
        /* Every member runs (bdl_lc_eligible): each reads the data from
         * our buffer itself, in parallel, where a tree would copy it
         * log2(size) times one after the other. */
        for (int k = 1; k < c->size; k++)
            lg_send(&x, (root + k) % c->size, buf, count, t, LC_DTAG);
        lg_settle();
    } else {
        lc_blk_t b = {.peer = root, .buf = buf, .count = count, .t = t};
        lg_xchg(&x, NULL, 0, &b, 1, LC_DTAG, 0);
    }
    return lc_end(&x);
}

/* ---------------------------------------------------------------- reductions */

/* Large reductions (every member runs): rank r folds segment r of the
 * packed basic elements, elements [lo[r], lo[r+1]), of every rank's
 * contribution in rank order, acc = v0, then acc = v_r op acc, which is
 * the master's fold for each element, so the result is the same bit for
 * bit.  Then the segments go to every rank (mode LC_ALL), to the root
 * (LC_ROOT), or stay where they are (LC_SCATTER: out is this rank's
 * segment, mine elements of t).  Each rank reads p-1 segments and folds
 * one, in parallel, instead of the root reading and folding everything. */
enum { LC_ROOT, LC_ALL, LC_SCATTER };

static int reduce_large(lc_t *x, const void *in, void *out, uint64_t count, uint64_t mine,
                        const bdl_dt_t *t, MPI_Op op, const uint64_t *lo, int mode)
{
    bdl_comm_t *c = x->c;
    int me = c->rank, size = c->size, root = x->h.root;
    uint64_t n = count * t->psize, esz = t->psize / t->nelem;
    uint64_t seg = (lo[me + 1] - lo[me]) * esz;
    x->big = 1;
    /* Contributions and results as packed streams: the program's buffers
     * when contiguous, else copies. */
    char *pin = bdl_dt_contig(t, in, count);
    if (!pin) {
        pin = big(LC_BIG_IN, n);
        bdl_dt_pack(t, in, count, 0, pin, n);
    }
    int wants = mode == LC_ALL || (mode == LC_ROOT && me == root);
    char *pout = NULL;
    int pout_own = 0;
    if (wants && !(pout = bdl_dt_contig(t, out, count))) {
        pout = big(LC_BIG_OUT, n);
        pout_own = 1;
    }
    /* Segment me of everyone's contribution (slot r).  The fold runs where
     * our result goes when that is not an input (not in place), else in
     * slot me; rank 0's contribution is received straight into it. */
    char *slots = big(LC_BIG_SLOTS, (uint64_t)size * seg);
    char *acc = wants && pout != pin ? pout + lo[me] * esz : slots + (uint64_t)me * seg;
    lc_blk_t *sv = calloc((size_t)size, sizeof *sv), *rv = calloc((size_t)size, sizeof *rv),
             *rv2 = calloc((size_t)size, sizeof *rv2);
    if (!sv || !rv || !rv2)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory in a collective");
    const bdl_dt_t *byte = bdl_dt_byte();
    int n2 = 0;
    /* The second phase's receives first: a result segment may come while
     * we still fold.  In place (pout is pin), segment r of it is what rank
     * r reads from us in the first phase; r sends its result only after
     * that read is over, so the receive may wait there already. */
    for (int k = 1; wants && k < size; k++) {
        int r = (me - k + size) % size;
        if (mode == LC_ROOT && r == root)
            continue;
        rv2[n2] = (lc_blk_t){
            .peer = r, .buf = pout + lo[r] * esz, .count = (lo[r + 1] - lo[r]) * esz, .t = byte};
        lg_post(x, &rv2[n2++], LC_DTAG2);
    }
    for (int k = 1; k < size; k++) {
        int r = (me + k) % size, f = (me - k + size) % size;
        sv[k - 1] = (lc_blk_t){
            .peer = r, .buf = pin + lo[r] * esz, .count = (lo[r + 1] - lo[r]) * esz, .t = byte};
        rv[k - 1] = (lc_blk_t){
            .peer = f, .buf = f == 0 ? acc : slots + (uint64_t)f * seg, .count = seg, .t = byte};
    }
    lg_xchg(x, sv, size - 1, rv, size - 1, LC_DTAG, 0);
    uint64_t elems = seg / esz;
    char *mine_in = pin + lo[me] * esz;
    /* acc never aliases an input (in place, it is a slot of its own). */
    if (me == 0)
        memcpy(acc, mine_in, seg);
    for (int r = 1; r < size && elems; r++)
        bd_op_apply(op, t->basic, r == me ? mine_in : slots + (uint64_t)r * seg, acc,
                    (size_t)elems);
    if (wants && acc != pout + lo[me] * esz)
        memcpy(pout + lo[me] * esz, acc, seg);
    int ns = 0;
    const char *res = wants ? pout + lo[me] * esz : acc;
    for (int k = 1; mode != LC_SCATTER && k < size; k++) {
        int r = (me + k) % size;
        if (mode == LC_ROOT && r != root)
            continue;
        sv[ns++] = (lc_blk_t){.peer = r, .buf = (void *)res, .count = seg, .t = byte};
    }
    if (mode == LC_ROOT && me == root)
        ns = 0;
    if (mode != LC_SCATTER)
        lg_xchg(x, sv, ns, rv2, n2, LC_DTAG2, 1);
    if (mode == LC_SCATTER)
        bdl_dt_unpack(t, out, mine, 0, acc, seg);
    else if (pout_own)
        bdl_dt_unpack(t, out, count, 0, pout, n);
    free(sv);
    free(rv);
    free(rv2);
    return lc_end(x);
}

/* Fold the contributions of ranks 0..last into acc (packed), in rank
 * order: ours from mine, the others' received into tmp one by one (both
 * messages: the data after LC_HDR).  A revoked call receives nothing, and
 * nothing goes to a user function then. */
static void lc_fold_upto(lc_t *x, const bdl_fold_op_t *o, const bdl_dt_t *t, uint64_t count,
                         int last, char *mine, char *tmp, char *acc)
{
    bdl_fold_t f;
    bdl_fold_init(&f, o, t, count, acc);
    for (int r = 0; r <= last; r++) {
        const char *v = mine + LC_HDR;
        if (r != x->c->rank) {
            lc_recv(x, r, tmp);
            v = tmp + LC_HDR;
        }
        if (x->err != MPIX_ERR_REVOKED)
            bdl_fold_add(&f, v);
    }
    bdl_fold_end(&f);
}

int bdl_lc_reduce(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *in, void *out,
                  uint64_t count, const bdl_dt_t *t, const bdl_fold_op_t *o, int root, int all)
{
    MPI_Op op = o->op;
    lc_t x;
    bdl_lc_start(&x, c, comm, call, all ? BD_API_ALLREDUCE : BD_API_REDUCE, all ? 0 : root);
    uint64_t n = count * t->psize, elems = count * t->nelem;
    x.fold = 1;
    x.h.dtype = t->basic;
    x.h.op = op;
    x.h.count = elems;
    if (n > BDL_LC_MAX) {
        uint64_t *lo = lc_malloc((uint64_t)(c->size + 1) * sizeof *lo);
        for (int r = 0; r <= c->size; r++)
            lo[r] = elems * (uint64_t)r / (uint64_t)c->size;
        int rc = reduce_large(&x, in, out, count, 0, t, op, lo, all ? LC_ALL : LC_ROOT);
        free(lo);
        return rc;
    }
    char *mine = scratch(0), *accm = scratch(1), *tmp = scratch(2);
    char *acc = accm + LC_HDR;
    /* Read in first: in place, it is also out. */
    bdl_dt_pack(t, in, count, 0, mine + LC_HDR, n);
    int me = c->rank, size = c->size;
    /* Every member on a core and the result wanted everywhere: each sends
     * its contribution to all and folds all of them itself (one hop).
     * Otherwise the root folds and, for Allreduce, sends the result. */
    int spread = all && bdl_lc_all_run(c);
    int folds = spread || me == x.h.root;
    if (spread) {
        for (int r = 0; r < size; r++)
            if (r != me)
                bdl_lc_send(&x, r, mine, LC_HDR + n);
    } else if (!folds) {
        bdl_lc_send(&x, x.h.root, mine, LC_HDR + n);
    }
    if (folds) {
        lc_fold_upto(&x, o, t, count, size - 1, mine, tmp, acc);
        if (all && !spread)
            for (int r = 0; r < size; r++)
                if (r != me)
                    bdl_lc_send(&x, r, accm, LC_HDR + n);
    } else if (all) {
        lc_recv(&x, x.h.root, accm);
    }
    if ((folds || all) && x.err != MPIX_ERR_REVOKED)
        bdl_dt_unpack(t, out, count, 0, acc, n);
    return lc_end(&x);
}

/* Every member on a core: each sends its contribution to the ranks above
 * it and folds those of the ranks below it and its own itself (one hop,
 * size * (size - 1) / 2 messages).  With one run slot (-nr 1) a chain:
 * rank r folds its contribution into the prefix of ranks 0..r-1 from rank
 * r-1 and passes the prefix of 0..r on.  Either way rank r waits only for
 * the ranks below it, as through the master: at -nr 1 rank 0 runs through
 * a loop of scans without waiting, then rank 1.  The chain wants the
 * ranks to run in rank order, which one slot gives (a rank woken by its
 * predecessor's message queues behind it); with 2 slots and more ranks a
 * rank that comes before its predecessor has passed the prefix on sleeps
 * and queues again: a Scan followed by an Allreduce in a loop took
 * 0.8-2.7x the master path's time at -ns 4-64 -nr 2 (a Scan alone
 * 0.1x), the one-hop form 0.7-1.7x (alone 0.15-2.3x).  So: one hop with
 * every member on a core, the chain with one slot, else the master
 * (bdl_lc_scan_eligible). */
int bdl_lc_scan_eligible(const bdl_comm_t *c, uint64_t bytes)
{
    return bytes <= BDL_LC_MAX && (bdl_lc_all_run(c) || bdl_g.hdr->job.nr == 1) &&
           bdl_lc_eligible(c, bytes);
}

int bdl_lc_scan(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *in, void *out,
                uint64_t count, const bdl_dt_t *t, const bdl_fold_op_t *o, int exclusive)
{
    lc_t x;
    bdl_lc_start(&x, c, comm, call, exclusive ? BD_API_EXSCAN : BD_API_SCAN, 0);
    uint64_t n = count * t->psize;
    x.fold = 1;
    x.h.dtype = t->basic;
    x.h.op = o->op;
    x.h.count = count * t->nelem;
    char *mine = scratch(0), *accm = scratch(1), *tmp = scratch(2);
    char *acc = accm + LC_HDR;
    /* Read in first: in place, it is also out. */
    bdl_dt_pack(t, in, count, 0, mine + LC_HDR, n);
    int me = c->rank, size = c->size, last = exclusive ? me - 1 : me;
    if (bdl_lc_all_run(c)) {
        for (int r = me + 1; r < size; r++)
            bdl_lc_send(&x, r, mine, LC_HDR + n);
        lc_fold_upto(&x, o, t, count, last, mine, tmp, acc);
    } else {
        bdl_fold_t f;
        bdl_fold_init(&f, o, t, count, acc);
        if (me > 0)
            lc_recv(&x, me - 1, tmp); /* the prefix of 0..me-1 */
        int ok = x.err != MPIX_ERR_REVOKED;
        if (exclusive && me > 0 && ok)
            bdl_dt_unpack(t, out, count, 0, tmp + LC_HDR, n);
        if (me > 0 && ok)
            bdl_fold_add(&f, tmp + LC_HDR);
        if (ok)
            bdl_fold_add(&f, mine + LC_HDR);
        bdl_fold_end(&f);
        /* revoked: passed on flagged, so that nobody waits for it */
        if (me + 1 < size)
            bdl_lc_send(&x, me + 1, accm, LC_HDR + n);
        if (exclusive)
            return lc_end(&x);
    }
    if (last >= 0 && x.err != MPIX_ERR_REVOKED)
        bdl_dt_unpack(t, out, count, 0, acc, n);
    return lc_end(&x);
}

int bdl_lc_redscat(bdl_comm_t *c, MPI_Comm comm, const char *call, int api, const void *in,
                   void *out, const int counts[], int block, const bdl_dt_t *t, MPI_Op op)
{
    lc_t x;
    bdl_lc_start(&x, c, comm, call, api, 0);
    uint64_t *lo = lc_malloc((uint64_t)(c->size + 1) * sizeof *lo), total = 0;
    for (int r = 0; r < c->size; r++) {
        lo[r] = total * t->nelem;
        total += (uint64_t)(block >= 0 ? block : counts[r]);
    }
    lo[c->size] = total * t->nelem;
    x.fold = 1;
    x.h.dtype = t->basic;
    x.h.op = op;
    x.h.count = total * t->nelem;
    uint64_t mine = (uint64_t)(block >= 0 ? block : counts[c->rank]);
    int rc = reduce_large(&x, in, out, total, mine, t, op, lo, LC_SCATTER);
    free(lo);
    return rc;
}

/* ---------------------------------------------------------------- gather, scatter, all-to-all */

static const bdl_dt_t *side_type(const bdl_a2a_side_t *x, int r) { return x->tv ? x->tv[r] : x->t; }

static char *side_block(const bdl_a2a_side_t *x, int r)
{
    return bdl_at(x->buf, x->tv ? x->displs[r] : bdl_voff(x->displs, x->count, r, x->t));
}

static lc_blk_t side_blk(const bdl_a2a_side_t *x, int r, int peer)
{
    return (lc_blk_t){.peer = peer,
                      .buf = side_block(x, r),
                      .count = bdl_vcount(x->counts, x->count, r),
                      .t = side_type(x, r)};
}

int bdl_lc_blocks(bdl_comm_t *c, MPI_Comm comm, const char *call, int api, int root,
                  const bdl_a2a_side_t *s, const bdl_a2a_side_t *rv, int err)
{
    lc_t x;
    bdl_lc_start(&x, c, comm, call, api, root);
    x.err = err;
    int me = c->rank, size = c->size;
    int fam = api == BD_API_GATHERV                                ? BD_API_GATHER
              : api == BD_API_SCATTERV                             ? BD_API_SCATTER
              : api == BD_API_ALLGATHERV                           ? BD_API_ALLGATHER
              : api == BD_API_ALLTOALLV || api == BD_API_ALLTOALLW ? BD_API_ALLTOALL
                                                                   : api;
    /* Who sends to whom: everyone its own block to the root (Gather) or to
     * all (Allgather); the root block r to rank r (Scatter); everyone block
     * r to rank r (Alltoall).  Sends start at the next rank and receives
     * at the previous one, so the ranks do not all read from one at once. */
    int sends = fam == BD_API_GATHER ? me != root : fam == BD_API_SCATTER ? me == root : 1;
    int recvs = fam == BD_API_GATHER ? me == root : fam == BD_API_SCATTER ? me != root : 1;
    int each_s = fam == BD_API_SCATTER || fam == BD_API_ALLTOALL;
    lc_blk_t *sv = calloc((size_t)size, sizeof *sv), *rb = calloc((size_t)size, sizeof *rb);
    if (!sv || !rb)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory in a collective");
    int ns = 0, nr = 0;
    for (int k = 1; sends && k < size; k++) {
        int r = (me + k) % size;
        if (fam == BD_API_GATHER && r != root)
            continue;
        sv[ns++] = side_blk(s, each_s ? r : 0, r);
    }
    for (int k = 1; recvs && k < size; k++) {
        int r = (me - k + size) % size;
        if (fam == BD_API_SCATTER && r != root)
            continue;
        rb[nr++] = side_blk(rv, fam == BD_API_SCATTER ? 0 : r, r);
    }
    char *packed = NULL;
    if (fam == BD_API_ALLTOALL && s->buf == rv->buf) {
        /* In place: block r is sent from where rank r's block lands, so
         * what goes out is packed first. */
        uint64_t total = 0;
        for (int i = 0; i < ns; i++)
            total += sv[i].count * sv[i].t->psize;
        packed = big(LC_BIG_IN, total);
        uint64_t off = 0;
        for (int i = 0; i < ns; i++) {
            uint64_t n = sv[i].count * sv[i].t->psize;
            bdl_dt_pack(sv[i].t, sv[i].buf, sv[i].count, 0, packed + off, n);
            sv[i] =
                (lc_blk_t){.peer = sv[i].peer, .buf = packed + off, .count = n, .t = bdl_dt_byte()};
            off += n;
        }
        bdl_coll_discard_blocks((void *)rv->buf, size, rv->count, rv->counts,
                                rv->tv ? NULL : rv->displs, rv->t, rv->tv,
                                rv->tv ? rv->displs : NULL, me);
    }
    lg_xchg(&x, sv, ns, rb, nr, LC_DTAG, 0);
    free(sv);
    free(rb);
    return lc_end(&x);
}
