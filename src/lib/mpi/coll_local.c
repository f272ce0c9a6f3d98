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
 * path a call takes. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "bd_dtype.h"
#include "bd_mbox.h"
#include "coll.h"
#include "core.h"
#include "dt.h"
#include "request.h"

/* The tag of every message of a collective in the ranks, on the internal
 * context.  Others there: 1 and 2 (user-op chains, coll_reduce.c), 1..12
 * (intercommunicator collectives, on the intercommunicator's own context),
 * 16..20 (core/ctl.c's exchanges for objects/intercomm_create.c), 0x4e42xxxx
 * (neighbourhood collectives, neighbor.c). */
#define LC_TAG 0x434c4300

/* Each message: this header, then the packed data. */
typedef struct lc_hdr {
    int32_t api;    /* BD_API_* of the sender's call */
    int32_t root;   /* 0 for calls without one */
    int32_t dtype;  /* reductions: the basic type folded and the op; else 0 */
    int32_t op;     /* ... */
    uint64_t count; /* reductions: basic elements; else bytes of data that follow */
    uint64_t seq;   /* the collective's number on the communicator (coll_seq) */
    uint64_t bytes; /* data bytes that follow, in this and further entries */
    uint64_t pad;   /* the data 16-byte aligned */
} lc_hdr_t;

#define LC_HDR ((uint64_t)sizeof(lc_hdr_t))

/* One call in progress. */
typedef struct lc {
    bdl_comm_t *c;
    MPI_Comm comm;
    const char *call;
    int ctx;
    int fold; /* compare op, dtype and count too */
    int err;  /* MPI_ERR_TRUNCATE: counts disagree (reported at the end) */
    lc_hdr_t h;
} lc_t;

/* Scratch buffers: a message (header and data) each.  The library runs
 * one blocking collective at a time. */
enum { LC_NSCR = 3 };
static char *g_scr[LC_NSCR];

static char *scratch(int i)
{
    if (!g_scr[i]) {
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
static int all_run(const bdl_comm_t *c) { return (int)bdl_g.hdr->job.nr >= c->size; }

int bdl_lc_eligible(const bdl_comm_t *c, uint64_t bytes)
{
    if (c->inter || c->size < 2 || bytes > BDL_LC_MAX || bdl_g.hdr->eager < 2 * LC_HDR)
        return 0;
    for (int r = 0; r < c->size; r++)
        if (!bdl_p2p_local(c->world[r]))
            return 0;
    return 1;
}

/* ---------------------------------------------------------------- messages */

static const char *const g_api_names[BD_API__COUNT] = {
    [BD_API_BARRIER] = "MPI_Barrier",     [BD_API_BCAST] = "MPI_Bcast",
    [BD_API_REDUCE] = "MPI_Reduce",       [BD_API_ALLREDUCE] = "MPI_Allreduce",
    [BD_API_GATHER] = "MPI_Gather",       [BD_API_SCATTER] = "MPI_Scatter",
    [BD_API_ALLGATHER] = "MPI_Allgather", [BD_API_ALLTOALL] = "MPI_Alltoall",
};

static const char *api_name(int api)
{
    return api > 0 && api < BD_API__COUNT && g_api_names[api] ? g_api_names[api] : "a collective";
}

static void lc_start(lc_t *x, bdl_comm_t *c, MPI_Comm comm, const char *call, int api, int root)
{
    *x = (lc_t){.c = c, .comm = comm, .call = call, .ctx = bdl_comm_ictx(c)};
    x->h = (lc_hdr_t){.api = api, .root = root, .seq = c->coll_seq++};
    atomic_fetch_add_explicit(&bdl_g.slot->stats[BD_STAT_COLLS], 1, memory_order_relaxed);
}

/* Send n bytes at msg (the header is written here) to rank r, in mailbox
 * entries with their payload inline (at most the eager limit each: never a
 * spill file); not counted as program messages. */
static void lc_send(const lc_t *x, int r, char *msg, uint64_t n)
{
    lc_hdr_t h = x->h;
    h.bytes = n - LC_HDR;
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
static _Noreturn void mismatch(const lc_t *x, const lc_hdr_t *h, int r)
{
    if (h->seq != x->h.seq)
        bdl_fatal(MPI_ERR_OTHER,
                  "collective mismatch on communicator context %d: rank %d called %s (root %d) "
                  "as its collective %llu there, where rank %d sent for %s (root %d) as its "
                  "collective %llu",
                  x->c->ctx, bdl_g.world_rank, api_name(x->h.api), x->h.root,
                  (unsigned long long)x->h.seq, x->c->world[r], api_name(h->api), h->root,
                  (unsigned long long)h->seq);
    if (x->fold && h->api == x->h.api && h->root == x->h.root)
        bdl_fatal(MPI_ERR_OTHER,
                  "collective mismatch on communicator context %d: rank %d called %s (root %d, "
                  "op %d, type %d, %llu elements) where another rank called it with op %d, type "
                  "%d, %llu elements",
                  x->c->ctx, bdl_g.world_rank, api_name(x->h.api), x->h.root, x->h.op, x->h.dtype,
                  (unsigned long long)x->h.count, h->op, h->dtype, (unsigned long long)h->count);
    bdl_fatal(MPI_ERR_OTHER,
              "collective mismatch on communicator context %d: rank %d called %s (root %d) where "
              "another rank called %s (root %d)",
              x->c->ctx, bdl_g.world_rank, api_name(x->h.api), x->h.root, api_name(h->api),
              h->root);
}

/* Receive rank r's next message into msg (room for a header and BDL_LC_MAX
 * bytes) and check that it belongs to this call.  Returns its data bytes. */
static uint64_t lc_recv(lc_t *x, int r, char *msg)
{
    MPI_Status st;
    lc_hdr_t h;
    uint64_t got = 0, total = 0;
    /* MPIX_Comm_revoke by a member: the call fails, and receives nothing
     * more (the peers may have left it). */
    if (x->err == MPIX_ERR_REVOKED || x->c->revoked) {
        x->err = MPIX_ERR_REVOKED;
        return 0;
    }
    do {
        bdl_g.lc_api = x->h.api;
        bdl_g.lc_root = x->h.root;
        bdl_g.lc_ctx = x->c->ctx;
        int rc = bdl_recv_bytes(x->ctx, r, LC_TAG, msg + got, LC_HDR + BDL_LC_MAX - got, &st);
        bdl_g.lc_api = 0;
        if (rc == MPIX_ERR_REVOKED) {
            x->err = rc;
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
        mismatch(x, &h, r);
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

/* ---------------------------------------------------------------- barrier, bcast */

int bdl_lc_barrier(bdl_comm_t *c, MPI_Comm comm, const char *call)
{
    lc_t x;
    lc_start(&x, c, comm, call, BD_API_BARRIER, 0);
    char *out = scratch(0), *in = scratch(1);
    int n = c->size, me = c->rank;
    /* Dissemination: in round k, to me + 2^k, from me - 2^k. */
    for (int d = 1; d < n; d *= 2) {
        lc_send(&x, (me + d) % n, out, LC_HDR);
        lc_recv(&x, (me - d + n) % n, in);
    }
    return lc_end(&x);
}

int bdl_lc_bcast(bdl_comm_t *c, MPI_Comm comm, const char *call, int api, void *buf, uint64_t count,
                 const bdl_dt_t *t, int root)
{
    lc_t x;
    lc_start(&x, c, comm, call, api, root);
    uint64_t n = count * t->psize;
    char *msg = scratch(0);
    if (c->rank == root) {
        x.h.count = n;
        bdl_dt_pack(t, buf, count, 0, msg + LC_HDR, n);
        for (int r = 0; r < c->size; r++)
            if (r != root)
                lc_send(&x, r, msg, LC_HDR + n);
    } else {
        x.h.count = n;
        uint64_t got = lc_recv(&x, root, msg);
        uint64_t k = lc_fit(&x, got, n);
        if (k)
            bdl_dt_unpack(t, buf, count, 0, msg + LC_HDR, k);
    }
    return lc_end(&x);
}

/* ---------------------------------------------------------------- reductions */

int bdl_lc_reduce(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *in, void *out,
                  uint64_t count, const bdl_dt_t *t, MPI_Op op, int root, int all)
{
    lc_t x;
    lc_start(&x, c, comm, call, all ? BD_API_ALLREDUCE : BD_API_REDUCE, all ? 0 : root);
    uint64_t n = count * t->psize, elems = count * t->nelem;
    x.fold = 1;
    x.h.dtype = t->basic;
    x.h.op = op;
    x.h.count = elems;
    char *mine = scratch(0), *accm = scratch(1), *tmp = scratch(2);
    char *acc = accm + LC_HDR;
    /* Read in first: in place, it is also out. */
    bdl_dt_pack(t, in, count, 0, mine + LC_HDR, n);
    int me = c->rank, size = c->size;
    /* Every member on a core and the result wanted everywhere: each sends
     * its contribution to all and folds all of them itself (one hop).
     * Otherwise the root folds and, for Allreduce, sends the result. */
    int spread = all && all_run(c);
    int folds = spread || me == x.h.root;
    if (spread) {
        for (int r = 0; r < size; r++)
            if (r != me)
                lc_send(&x, r, mine, LC_HDR + n);
    } else if (!folds) {
        lc_send(&x, x.h.root, mine, LC_HDR + n);
    }
    if (folds) {
        for (int r = 0; r < size; r++) {
            const char *v = mine + LC_HDR;
            if (r != me) {
                lc_recv(&x, r, tmp);
                v = tmp + LC_HDR;
            }
            if (r == 0)
                memcpy(acc, v, n);
            else if (elems)
                bd_op_apply(op, t->basic, v, acc, (size_t)elems);
        }
        if (all && !spread)
            for (int r = 0; r < size; r++)
                if (r != me)
                    lc_send(&x, r, accm, LC_HDR + n);
    } else if (all) {
        lc_recv(&x, x.h.root, accm);
    }
    if (folds || all)
        bdl_dt_unpack(t, out, count, 0, acc, n);
    return lc_end(&x);
}

/* ---------------------------------------------------------------- gather, scatter, all-to-all */

/* Send count elements of t at buf to rank r (packed into the scratch message). */
static void send_block(lc_t *x, int r, const void *buf, uint64_t count, const bdl_dt_t *t)
{
    char *msg = scratch(0);
    x->h.count = count * t->psize;
    bdl_dt_pack(t, buf, count, 0, msg + LC_HDR, x->h.count);
    lc_send(x, r, msg, LC_HDR + x->h.count);
}

/* Receive rank r's block into count elements of t at buf. */
static void recv_block(lc_t *x, int r, void *buf, uint64_t count, const bdl_dt_t *t)
{
    char *msg = scratch(1);
    uint64_t k = lc_fit(x, lc_recv(x, r, msg), count * t->psize);
    if (k)
        bdl_dt_unpack(t, buf, count, 0, msg + LC_HDR, k);
}

int bdl_lc_blocks(bdl_comm_t *c, MPI_Comm comm, const char *call, int api, int root, const void *sb,
                  uint64_t scount, const bdl_dt_t *st, void *rb, uint64_t rcount,
                  const bdl_dt_t *rt, int err)
{
    lc_t x;
    lc_start(&x, c, comm, call, api, root);
    x.err = err;
    int me = c->rank, size = c->size;
    int each = api == BD_API_SCATTER || api == BD_API_ALLTOALL; /* a block for every rank */
    /* Who sends to whom: everyone its own block to the root (Gather) or to
     * all (Allgather); the root block r to rank r (Scatter); everyone block
     * r to rank r (Alltoall). */
    int sends = api == BD_API_GATHER ? me != root : api == BD_API_SCATTER ? me == root : 1;
    int recvs = api == BD_API_GATHER ? me == root : api == BD_API_SCATTER ? me != root : 1;
    for (int r = 0; sends && r < size; r++) {
        if (r == me || (api == BD_API_GATHER && r != root))
            continue;
        const void *b = each ? bdl_at(sb, bdl_voff(NULL, (int)scount, r, st)) : sb;
        send_block(&x, r, b, scount, st);
    }
    for (int r = 0; recvs && r < size; r++) {
        if (r == me || (api == BD_API_SCATTER && r != root))
            continue;
        void *b = api == BD_API_SCATTER ? rb : bdl_at(rb, bdl_voff(NULL, (int)rcount, r, rt));
        recv_block(&x, r, b, rcount, rt);
    }
    return lc_end(&x);
}
