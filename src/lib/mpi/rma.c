/* One-sided communication (MPI 3.1 chapter 11): the data calls, the three
 * synchronization modes and the target side that applies operations.
 *
 * Ranks never touch each other's memory, so an operation is a message: the
 * origin packs the origin data, the target datatype's layout (its runs, see
 * dtype.c) and the displacement, and sends it; the target applies it to its
 * own memory and answers get-like operations with the data.  Sends are
 * buffered, so issuing never waits; an origin waits only for answers.
 *
 *  - Fence: operations travel on the window's data context with a tag of
 *    the fence epoch.  MPI_Win_fence sums, with one reduce-scatter on the
 *    window's communicator, how many each rank receives, then applies that
 *    many and collects the answers to its own gets.
 *  - Post/start/complete/wait and passive target (lock, unlock, flush):
 *    operations, lock requests, unlocks, flushes and completes are service
 *    messages (BD_CTX_RMA_SVC) that the target applies whenever it serves
 *    them: at any request it makes to the master (the master flags that
 *    some wait), and while it is blocked in MPI (the master wakes it with
 *    BD_CMD_RMA).  A target that computes without calling MPI serves them
 *    at its next MPI call (the progress rule of MPI 3.1 11.7.3).
 *
 * Operations from one origin are applied in the order they were issued. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bd_iowatch.h"
#include "bd_dtype.h"
#include "bd_log.h"
#include "win.h"

/* Service message kinds (the tag of a message on BD_CTX_RMA_SVC). */
enum { K_PUT = 1, K_GET, K_ACC, K_GACC, K_CAS, K_LOCK, K_UNLOCK, K_FLUSH, K_COMPLETE };
/* Tags on a window's data context. */
enum { T_GRANT = 1, T_ACK, T_REPLY, T_POST, T_WAKE, T_FENCE = 16 };
#define FENCE_TAGS (1 << 20)

typedef struct rma_hdr {
    int32_t win; /* window id */
    int32_t kind;
    int32_t origin;  /* origin's rank in the window */
    int32_t op;      /* accumulate op; lock type */
    int32_t basic;   /* predefined type of an accumulate's elements */
    uint32_t nruns;  /* runs of the target datatype that follow the header */
    int64_t disp;    /* target offset in bytes (dynamic windows: the address) */
    int64_t extent;  /* of the target datatype */
    int64_t lo, hi;  /* bytes touched, relative to disp */
    uint64_t count;  /* target elements */
    uint64_t psize;  /* packed bytes of one target element */
    uint64_t nbytes; /* data after the runs */
} rma_hdr_t;

static int g_enabled;
static void serve_pending(void);
static uint32_t serve_command(void);
static int g_serving;      /* inside the service loop */
static char *g_save;       /* the slot window saved around a service */
static int g_wait_id = -1; /* window whose post epoch's completes this rank waits for */

/* ---------------------------------------------------------------- helpers */

void bdl_rma_enable(void)
{
    if (g_enabled)
        return;
    g_enabled = 1;
    /* Before the master hears of it: from then on RMA may reach us. */
    bdl_rpc_set_service(&(bdl_rpc_service_t){serve_pending, serve_command});
    bdl_req_begin(BD_REQ_RMA_ENABLE);
    bdl_rpc();
}

static void send_data(bdl_win_t *w, int to, int tag, const void *buf, uint64_t n)
{
    bdl_send_bytes(w->dctx, w->world[to], w->rank, tag, buf, n, 0, NULL);
}

static void recv_data(bdl_win_t *w, int from, int tag, void *buf, uint64_t n)
{
    MPI_Status st;
    bdl_recv_bytes(w->dctx, from, tag, buf, n, &st);
}

/* Move the packed stream of count elements laid out as runs at base. */
static void walk(char *base, const rma_hdr_t *h, const bdl_run_t *runs, char *stream, int to_mem)
{
    uint64_t pos = 0;
    for (uint64_t i = 0; i < h->count; i++) {
        char *e = base + (int64_t)i * h->extent;
        for (uint32_t r = 0; r < h->nruns; r++) {
            const bdl_run_t *u = &runs[r];
            for (uint64_t j = 0; j < u->cnt; j++) {
                char *p = e + u->off + (int64_t)j * u->stride;
                if (to_mem)
                    memcpy(p, stream + pos, u->len);
                else
                    memcpy(stream + pos, p, u->len);
                pos += u->len;
            }
        }
    }
}

static void *xmalloc(uint64_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory for %llu bytes of one-sided communication",
                  (unsigned long long)n);
    return p;
}

/* ---------------------------------------------------------------- target side */

/* Where an operation's target data starts, or NULL (reported) when it is
 * outside the window. */
static char *target_addr(bdl_win_t *w, const rma_hdr_t *h)
{
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return w->base + h->disp;
    char *a = (char *)(intptr_t)h->disp;
    if (h->hi <= h->lo)
        return a;
    /* Every byte must be attached; adjacent regions may share an access. */
    char *pos = a + h->lo, *end = a + h->hi;
    while (pos < end) {
        char *next = NULL;
        for (int i = 0; i < w->nregions && !next; i++) {
            bdl_win_region_t *g = &w->regions[i];
            if (pos >= g->base && pos < g->base + g->size)
                next = g->base + g->size;
        }
        if (!next)
            break;
        pos = next;
    }
    if (pos >= end)
        return a;
    bdl_win_error(bdl_win_handle(w), MPI_ERR_RMA_RANGE, "MPI_Put/Get/Accumulate",
                  "rank %d accessed [%p, %p), which is not attached to this rank's dynamic window",
                  h->origin, (void *)(a + h->lo), (void *)(a + h->hi));
    return NULL;
}

static void apply_op(const rma_hdr_t *h, const char *in, char *inout, uint64_t n)
{
    if (h->op == MPI_REPLACE) {
        memcpy(inout, in, n);
        return;
    }
    if (h->op == MPI_NO_OP)
        return;
    const bd_dtype_info_t *bi = bd_dtype_info(h->basic);
    bd_op_apply(h->op, h->basic, in, inout, (size_t)(n / bi->size));
}

/* Apply one operation (fence message or service message) as its target. */
static void apply(bdl_win_t *w, const char *msg, uint64_t len)
{
    rma_hdr_t h;
    memcpy(&h, msg, sizeof h);
    uint64_t rl = (uint64_t)h.nruns * sizeof(bdl_run_t);
    if (len < sizeof h + rl + h.nbytes)
        bdl_fatal(MPI_ERR_INTERN, "short RMA message (%llu bytes) from rank %d",
                  (unsigned long long)len, h.origin);
    bdl_run_t *runs = xmalloc(rl);
    memcpy(runs, msg + sizeof h, rl);
    const char *data = msg + sizeof h + rl;
    uint64_t total = h.count * h.psize;
    char *base = target_addr(w, &h);
    char *old = NULL;
    if (h.kind != K_PUT && h.kind != K_ACC) {
        old = xmalloc(total);
        if (base)
            walk(base, &h, runs, old, 0);
        else
            memset(old, 0, total);
    }
    if (base) {
        switch (h.kind) {
        case K_PUT: walk(base, &h, runs, (char *)data, 1); break;
        case K_ACC:
        case K_GACC:
            if (h.op == MPI_NO_OP)
                break;
            if (h.op == MPI_REPLACE) {
                walk(base, &h, runs, (char *)data, 1);
            } else {
                char *tmp = xmalloc(total);
                if (old)
                    memcpy(tmp, old, total);
                else
                    walk(base, &h, runs, tmp, 0);
                apply_op(&h, data, tmp, total);
                walk(base, &h, runs, tmp, 1);
                free(tmp);
            }
            break;
        case K_CAS:
            /* data: the new value, then the value to compare with */
            if (memcmp(old, data + total, total) == 0)
                walk(base, &h, runs, (char *)data, 1);
            break;
        default: break;
        }
    }
    if (old)
        send_data(w, h.origin, T_REPLY, old, total);
    free(old);
    free(runs);
}

static int lock_fits(bdl_win_t *w, int type)
{
    return w->excl < 0 && (type == MPI_LOCK_SHARED || w->nshared == 0);
}

static void grant(bdl_win_t *w, int origin, int type)
{
    if (type == MPI_LOCK_EXCLUSIVE)
        w->excl = origin;
    else
        w->nshared++;
    send_data(w, origin, T_GRANT, NULL, 0);
}

static void lock_request(bdl_win_t *w, int origin, int type)
{
    if (w->nwaits == 0 && lock_fits(w, type)) {
        grant(w, origin, type);
        return;
    }
    if (w->nwaits == w->capwaits) {
        int n = w->capwaits ? 2 * w->capwaits : 8;
        bdl_lock_wait_t *t = realloc(w->waits, (size_t)n * sizeof *t);
        if (!t)
            bdl_fatal(MPI_ERR_NO_MEM, "out of memory queueing a lock request");
        w->waits = t;
        w->capwaits = n;
    }
    w->waits[w->nwaits++] = (bdl_lock_wait_t){origin, type};
}

static void lock_release(bdl_win_t *w, int origin)
{
    if (w->excl == origin)
        w->excl = -1;
    else if (w->nshared > 0)
        w->nshared--;
    while (w->nwaits > 0 && lock_fits(w, w->waits[0].type)) {
        bdl_lock_wait_t q = w->waits[0];
        memmove(w->waits, w->waits + 1, (size_t)(--w->nwaits) * sizeof *w->waits);
        grant(w, q.origin, q.type);
    }
}

static void serve_one(const char *msg, uint64_t len)
{
    rma_hdr_t h;
    if (len < sizeof h)
        bdl_fatal(MPI_ERR_INTERN, "short RMA request (%llu bytes)", (unsigned long long)len);
    memcpy(&h, msg, sizeof h);
    bdl_win_t *w = bdl_win_by_id(h.win);
    if (!w)
        bdl_fatal(MPI_ERR_WIN,
                  "an RMA request (kind %d from rank %d) arrived for window %d, which this "
                  "rank does not have (freed while another rank still used it?)",
                  h.kind, h.origin, h.win);
    switch (h.kind) {
    case K_LOCK: lock_request(w, h.origin, h.op); break;
    case K_UNLOCK:
        lock_release(w, h.origin);
        send_data(w, h.origin, T_ACK, NULL, 0);
        break;
    case K_FLUSH: send_data(w, h.origin, T_ACK, NULL, 0); break;
    case K_COMPLETE:
        w->post_done++;
        if (g_wait_id == w->id && w->post_done >= w->post_expect) {
            g_wait_id = -1;
            send_data(w, w->rank, T_WAKE, NULL, 0);
        }
        break;
    default: apply(w, msg, len); break;
    }
}

/* Take and apply every service message waiting for this rank; how many. */
static int serve_loop(void)
{
    int served = 0;
    atomic_store_explicit(&bdl_g.slot->rma_pending, 0, memory_order_relaxed);
    for (;;) {
        bdl_req_begin(BD_REQ_RMA_NEXT);
        bdl_rpc();
        bd_resp_t *rs = bdl_resp();
        if (!rs->flag)
            break;
        uint64_t n = rs->nbytes;
        char *msg = xmalloc(n);
        if (rs->arg[2]) {
            char path[BD_PATH_MAX + 64];
            bd_spill_path(path, sizeof path, bdl_g.hdr->jobdir, (int)rs->arg[1],
                          (uint64_t)rs->arg[0]);
            int fd =
                BD_FAULT_SYS(BD_FAULT_SPILL_OPEN) ?: open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
            int rc = fd < 0 ? -errno : BD_IO_NEG(BD_FAULT_SPILL_READ, bd_pread_full(fd, msg, n, 0));
            if (rc < 0)
                bdl_fatal(MPI_ERR_OTHER, "cannot read the %llu-byte RMA request in %s: %s",
                          (unsigned long long)n, path, strerror(-rc));
            bd_fs_ck_t ck;
            bd_fs_ck_init(&ck);
            bd_fs_ck_add(&ck, msg, n);
            bdl_spill_check(&ck, fd, path, n, n);
            close(fd);
            unlink(path);
        } else if (n) {
            memcpy(msg, bdl_g.win, n);
        }
        serve_one(msg, n);
        free(msg);
        served++;
    }
    return served;
}

/* Serve now, from an MPI call of this rank. */
static int serve_now(void)
{
    if (g_serving || !g_enabled)
        return 0;
    g_serving = 1;
    int n = serve_loop();
    g_serving = 0;
    return n;
}

static void save_slot(bd_req_t *req)
{
    if (!g_save)
        g_save = xmalloc(bdl_g.window);
    *req = bdl_g.slot->req;
    memcpy(g_save, bdl_g.win, bdl_g.window);
}

/* bdl_rpc's service: RMA requests wait for this rank (rma_pending). */
static void serve_pending(void)
{
    if (g_serving || !g_enabled)
        return;
    /* The request about to be made is in the slot already: keep it. */
    bd_req_t req;
    save_slot(&req);
    g_serving = 1;
    serve_loop();
    g_serving = 0;
    memcpy(bdl_g.win, g_save, bdl_g.window);
    bdl_g.slot->req = req;
}

/* bdl_rpc's service: BD_CMD_RMA while blocked; the resp_seq to wait past. */
static uint32_t serve_command(void)
{
    bd_slot_t *sl = bdl_g.slot;
    atomic_store_explicit(&sl->cmd, BD_CMD_NONE, memory_order_release);
    bd_req_t req;
    save_slot(&req);
    g_serving = 1;
    serve_loop();
    g_serving = 0;
    memcpy(bdl_g.win, g_save, bdl_g.window);
    /* Back to waiting for the answer to the blocked request: the master puts
     * that request back in the slot.  DONE is not answered, so whatever
     * comes after this value is that answer or a command. */
    uint32_t seen = atomic_load_explicit(&sl->resp_seq, memory_order_acquire);
    bdl_req_begin(BD_REQ_RMA_DONE);
    uint32_t seq = atomic_load_explicit(&sl->req_seq, memory_order_relaxed) + 1;
    atomic_store_explicit(&sl->req_seq, seq, memory_order_release);
    uint64_t one = 1;
    while (write(bdl_g.event_fd, &one, sizeof one) < 0 && errno == EINTR)
        ;
    return seen;
}

/* ---------------------------------------------------------------- origin side */

static void pend_add(bdl_win_t *w, int target, void *buf, uint64_t count, bdl_dt_t *t)
{
    if (w->npend == w->cappend) {
        int n = w->cappend ? 2 * w->cappend : 16;
        bdl_rma_pending_t *p = realloc(w->pend, (size_t)n * sizeof *p);
        if (!p)
            bdl_fatal(MPI_ERR_NO_MEM, "out of memory recording an RMA operation");
        w->pend = p;
        w->cappend = n;
    }
    bdl_dt_retain(t);
    w->pend[w->npend++] = (bdl_rma_pending_t){target, buf, count, t};
}

/* Receive the answers of target's get-like operations (all targets: -1),
 * in the order they were issued; at most upto of them (-1: all). */
static void drain(bdl_win_t *w, int target, int upto)
{
    int k = 0, got = 0;
    for (int i = 0; i < w->npend; i++) {
        bdl_rma_pending_t *p = &w->pend[i];
        if ((target < 0 || p->target == target) && (upto < 0 || got < upto)) {
            MPI_Status st;
            bdl_recv_typed(w->dctx, p->target, T_REPLY, p->buf, p->count, p->t, &st);
            bdl_dt_release(p->t);
            got++;
            continue;
        }
        w->pend[k++] = *p;
    }
    w->npend = k;
}

static int pend_count(bdl_win_t *w, int target)
{
    int n = 0;
    for (int i = 0; i < w->npend; i++)
        n += w->pend[i].target == target;
    return n;
}

static void send_svc(bdl_win_t *w, int target, int kind, const void *buf, uint64_t n)
{
    bdl_send_bytes(BD_CTX_RMA_SVC, w->world[target], bdl_g.world_rank, kind, buf, n, 0, NULL);
}

static void send_ctl(bdl_win_t *w, int target, int kind, int arg)
{
    rma_hdr_t h;
    memset(&h, 0, sizeof h);
    h.win = w->id;
    h.kind = kind;
    h.origin = w->rank;
    h.op = arg;
    send_svc(w, target, kind, &h, sizeof h);
}

/* The post of target's exposure epoch (post/start) has come. */
static void wait_post(bdl_win_t *w, int target)
{
    if (w->start[target] == 1) {
        recv_data(w, target, T_POST, NULL, 0);
        w->start[target] = 2;
    }
}

static int bad_dt(MPI_Datatype dt, bdl_dt_t **out)
{
    *out = bdl_dt_lookup(dt);
    return !*out || !(*out)->committed;
}

enum { M_NONE, M_FENCE, M_SVC };

static int rma_done_query(void *extra, MPI_Status *st)
{
    (void)extra;
    MPI_Status_set_elements(st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}
static int rma_done_free(void *extra)
{
    (void)extra;
    return MPI_SUCCESS;
}
static int rma_done_cancel(void *extra, int complete)
{
    (void)extra, (void)complete;
    return MPI_SUCCESS;
}

static int done_request(MPI_Request *req)
{
    if (!req)
        return MPI_SUCCESS;
    int rc = MPI_Grequest_start(rma_done_query, rma_done_free, rma_done_cancel, NULL, req);
    if (rc == MPI_SUCCESS)
        rc = MPI_Grequest_complete(*req);
    return rc;
}

/* Every data call.  obuf/ocount/odt: origin data (put, accumulate; the new
 * value of a compare-and-swap); rbuf/rcount/rdt: where answers go (get:
 * the origin buffer); cbuf: compare-and-swap's compare value. */
static int issue(const char *call, MPI_Win win, int kind, const void *obuf, int ocount,
                 MPI_Datatype odt, const void *cbuf, void *rbuf, int rcount, MPI_Datatype rdt,
                 int target, MPI_Aint tdisp, int tcount, MPI_Datatype tdt, MPI_Op op,
                 MPI_Request *req)
{
    BDL_CHECK_INIT(call);
    bdl_win_t *w = bdl_win_get(win);
    if (!w)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_WIN, call, "invalid window %d", win);
    if (req)
        *req = MPI_REQUEST_NULL;
    int has_o =
        kind == K_PUT || kind == K_ACC || kind == K_CAS || (kind == K_GACC && op != MPI_NO_OP);
    int has_r = kind == K_GET || kind == K_GACC || kind == K_CAS;
    bdl_dt_t *ot = NULL, *rt = NULL, *tt = NULL;
    if (ocount < 0 || rcount < 0 || tcount < 0)
        return bdl_win_error(win, MPI_ERR_COUNT, call, "invalid count %d",
                             ocount < 0   ? ocount
                             : rcount < 0 ? rcount
                                          : tcount);
    if (has_o && bad_dt(odt, &ot))
        return bdl_win_error(win, MPI_ERR_TYPE, call, "invalid or uncommitted origin datatype %d",
                             odt);
    if (has_r && bad_dt(rdt, &rt))
        return bdl_win_error(win, MPI_ERR_TYPE, call, "invalid or uncommitted %s datatype %d",
                             kind == K_GET ? "origin" : "result", rdt);
    if (bad_dt(tdt, &tt))
        return bdl_win_error(win, MPI_ERR_TYPE, call, "invalid or uncommitted target datatype %d",
                             tdt);
    int accum = kind == K_ACC || kind == K_GACC;
    if (target != MPI_PROC_NULL && (target < 0 || target >= w->size))
        return bdl_win_error(win, MPI_ERR_RANK, call, "invalid target rank %d (window of %d ranks)",
                             target, w->size);
    /* Moving no data at all (zero counts or empty types) does nothing. */
    uint64_t tbytes = (uint64_t)tcount * tt->psize;
    uint64_t obytes = has_o ? (uint64_t)ocount * ot->psize : 0;
    uint64_t rbytes = has_r ? (uint64_t)rcount * rt->psize : 0;
    if (tbytes == 0 && obytes == 0 && rbytes == 0)
        return done_request(req);
    if (accum) {
        if (op <= MPI_OP_NULL || op > BDMPI_OP_PREDEFINED_MAX)
            return bdl_win_error(win, MPI_ERR_OP, call,
                                 "invalid operation %d (only predefined operations accumulate)",
                                 op);
        if (kind == K_ACC && op == MPI_NO_OP)
            return bdl_win_error(win, MPI_ERR_OP, call, "MPI_NO_OP is for MPI_Get_accumulate");
        if (op != MPI_REPLACE && op != MPI_NO_OP) {
            if (tt->basic <= 0 || (ot && ot->basic != tt->basic))
                return bdl_win_error(win, MPI_ERR_TYPE, call,
                                     "accumulate datatypes must be built from one and the same "
                                     "predefined datatype");
            if (!bd_op_valid_for(op, tt->basic))
                return bdl_win_error(win, MPI_ERR_OP, call, "%s is not defined for %s",
                                     bd_op_name(op), bd_dtype_info(tt->basic)->name);
        }
    }
    if (kind == K_CAS && (!tt->predefined || tt->basic <= 0))
        return bdl_win_error(win, MPI_ERR_TYPE, call,
                             "compare-and-swap needs a predefined datatype");
    if (target == MPI_PROC_NULL)
        return done_request(req);
    if (has_o && (uint64_t)ocount * ot->psize != tbytes)
        return bdl_win_error(win, MPI_ERR_TYPE, call,
                             "origin data is %llu bytes, target data %llu bytes (type signatures "
                             "must match)",
                             (unsigned long long)((uint64_t)ocount * ot->psize),
                             (unsigned long long)tbytes);
    if (has_r && (uint64_t)rcount * rt->psize != tbytes)
        return bdl_win_error(win, MPI_ERR_TYPE, call,
                             "%s buffer holds %llu bytes, target data is %llu bytes (type "
                             "signatures must match)",
                             kind == K_GET ? "origin" : "result",
                             (unsigned long long)((uint64_t)rcount * rt->psize),
                             (unsigned long long)tbytes);
    /* Which epoch carries it. */
    int mode = M_NONE;
    if (w->lock_all || w->lock[target])
        mode = M_SVC;
    else if (w->start[target])
        mode = M_SVC;
    else if (w->fence && !req)
        mode = M_FENCE;
    if (mode == M_NONE)
        return bdl_win_error(win, MPI_ERR_RMA_SYNC, call,
                             req ? "request-based operations need a passive-target epoch: lock "
                                   "rank %d (MPI_Win_lock or MPI_Win_lock_all) first"
                                 : "no access epoch to rank %d is open (call MPI_Win_fence, "
                                   "MPI_Win_start or MPI_Win_lock first)",
                             target);
    if (req && !(w->lock_all || w->lock[target]))
        return bdl_win_error(win, MPI_ERR_RMA_SYNC, call,
                             "request-based operations need a passive-target epoch on rank %d",
                             target);
    rma_hdr_t h;
    memset(&h, 0, sizeof h);
    h.win = w->id;
    h.kind = kind;
    h.origin = w->rank;
    h.op = accum ? op : 0;
    h.basic = tt->basic;
    h.nruns = tt->nruns;
    h.extent = tt->extent;
    h.count = (uint64_t)tcount;
    h.psize = tt->psize;
    if (tbytes) {
        int64_t span = (int64_t)(tcount - 1) * tt->extent;
        h.lo = tt->true_lb + (span < 0 ? span : 0);
        h.hi = tt->true_lb + tt->true_extent + (span > 0 ? span : 0);
    }
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        h.disp = (int64_t)tdisp;
    } else {
        if (tdisp < 0)
            return bdl_win_error(win, MPI_ERR_DISP, call,
                                 "invalid target displacement %lld (must be >= 0)",
                                 (long long)tdisp);
        h.disp = (int64_t)tdisp * w->units[target];
        if (tbytes && (h.disp + h.lo < 0 || h.disp + h.hi > (int64_t)w->sizes[target]))
            return bdl_win_error(win, MPI_ERR_RMA_RANGE, call,
                                 "target bytes [%lld, %lld) are outside rank %d's window of %lld "
                                 "bytes (displacement %lld, unit %d)",
                                 (long long)(h.disp + h.lo), (long long)(h.disp + h.hi), target,
                                 (long long)w->sizes[target], (long long)tdisp, w->units[target]);
    }
    if (mode == M_SVC && w->start[target] && !w->lock_all && !w->lock[target])
        wait_post(w, target);
    uint64_t rl = (uint64_t)h.nruns * sizeof(bdl_run_t);
    h.nbytes = has_o ? tbytes * (kind == K_CAS ? 2 : 1) : 0;
    uint64_t len = sizeof h + rl + h.nbytes;
    char *msg = xmalloc(len);
    memcpy(msg, &h, sizeof h);
    memcpy(msg + sizeof h, tt->runs, rl);
    if (has_o && tbytes) {
        bdl_dt_pack(ot, obuf, (uint64_t)ocount, 0, msg + sizeof h + rl, tbytes);
        if (kind == K_CAS)
            bdl_dt_pack(ot, cbuf, 1, 0, msg + sizeof h + rl + tbytes, tbytes);
    }
    if (mode == M_FENCE) {
        bdl_send_bytes(w->dctx, w->world[target], w->rank,
                       T_FENCE + (int)(w->fence_seq % FENCE_TAGS), msg, len, 0, NULL);
        w->fence_sent[target]++;
    } else {
        send_svc(w, target, kind, msg, len);
        w->dirty[target] = 1;
    }
    free(msg);
    if (has_r)
        pend_add(w, target, rbuf, (uint64_t)rcount, rt);
    if (req && has_r) {
        /* Complete it now: its answer is the last one from target. */
        drain(w, target, pend_count(w, target));
    }
    return done_request(req);
}

int MPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
            int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
            MPI_Win win)
{
    BDL_MT_GUARD;
    return issue("MPI_Put", win, K_PUT, origin_addr, origin_count, origin_datatype, NULL, NULL, 0,
                 MPI_DATATYPE_NULL, target_rank, target_disp, target_count, target_datatype,
                 MPI_OP_NULL, NULL);
}

int MPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    BDL_MT_GUARD;
    return issue("MPI_Get", win, K_GET, NULL, 0, MPI_DATATYPE_NULL, NULL, origin_addr, origin_count,
                 origin_datatype, target_rank, target_disp, target_count, target_datatype,
                 MPI_OP_NULL, NULL);
}

int MPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                   int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    BDL_MT_GUARD;
    return issue("MPI_Accumulate", win, K_ACC, origin_addr, origin_count, origin_datatype, NULL,
                 NULL, 0, MPI_DATATYPE_NULL, target_rank, target_disp, target_count,
                 target_datatype, op, NULL);
}

int MPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                       void *result_addr, int result_count, MPI_Datatype result_datatype,
                       int target_rank, MPI_Aint target_disp, int target_count,
                       MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    BDL_MT_GUARD;
    return issue("MPI_Get_accumulate", win, K_GACC, origin_addr, origin_count, origin_datatype,
                 NULL, result_addr, result_count, result_datatype, target_rank, target_disp,
                 target_count, target_datatype, op, NULL);
}

int MPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                     int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    BDL_MT_GUARD;
    return issue("MPI_Fetch_and_op", win, K_GACC, origin_addr, 1, datatype, NULL, result_addr, 1,
                 datatype, target_rank, target_disp, 1, datatype, op, NULL);
}

int MPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                         MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win)
{
    BDL_MT_GUARD;
    return issue("MPI_Compare_and_swap", win, K_CAS, origin_addr, 1, datatype, compare_addr,
                 result_addr, 1, datatype, target_rank, target_disp, 1, datatype, MPI_OP_NULL,
                 NULL);
}

static int need_req(const char *call, MPI_Request *request)
{
    if (!request)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "request is NULL");
    return MPI_SUCCESS;
}

int MPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
             MPI_Win win, MPI_Request *request)
{
    BDL_MT_GUARD;
    int rc = need_req("MPI_Rput", request);
    return rc ? rc
              : issue("MPI_Rput", win, K_PUT, origin_addr, origin_count, origin_datatype, NULL,
                      NULL, 0, MPI_DATATYPE_NULL, target_rank, target_disp, target_count,
                      target_datatype, MPI_OP_NULL, request);
}

int MPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
             MPI_Request *request)
{
    BDL_MT_GUARD;
    int rc = need_req("MPI_Rget", request);
    return rc ? rc
              : issue("MPI_Rget", win, K_GET, NULL, 0, MPI_DATATYPE_NULL, NULL, origin_addr,
                      origin_count, origin_datatype, target_rank, target_disp, target_count,
                      target_datatype, MPI_OP_NULL, request);
}

int MPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    BDL_MT_GUARD;
    int rc = need_req("MPI_Raccumulate", request);
    return rc ? rc
              : issue("MPI_Raccumulate", win, K_ACC, origin_addr, origin_count, origin_datatype,
                      NULL, NULL, 0, MPI_DATATYPE_NULL, target_rank, target_disp, target_count,
                      target_datatype, op, request);
}

int MPI_Rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                        void *result_addr, int result_count, MPI_Datatype result_datatype,
                        int target_rank, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    BDL_MT_GUARD;
    int rc = need_req("MPI_Rget_accumulate", request);
    return rc ? rc
              : issue("MPI_Rget_accumulate", win, K_GACC, origin_addr, origin_count,
                      origin_datatype, NULL, result_addr, result_count, result_datatype,
                      target_rank, target_disp, target_count, target_datatype, op, request);
}

/* ---------------------------------------------------------------- synchronization */

#define MODE_ALL                                                                                   \
    (MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED)

#define SYNC_WIN(call, win, w)                                                                     \
    BDL_CHECK_INIT(call);                                                                          \
    bdl_win_t *w = bdl_win_get(win);                                                               \
    if (!w)                                                                                        \
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_WIN, call, "invalid window %d", win);

static int check_assert(MPI_Win win, const char *call, int assert, int allowed)
{
    if (assert & ~allowed)
        return bdl_win_error(win, MPI_ERR_ASSERT, call, "invalid assertion %#x for %s", assert,
                             call);
    return MPI_SUCCESS;
}

int MPI_Win_fence(int assert, MPI_Win win)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Win_fence";
    SYNC_WIN(call, win, w);
    int rc =
        check_assert(win, call, assert,
                     MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED);
    if (rc)
        return rc;
    if (w->nlocked || w->lock_all || w->started || w->posted)
        return bdl_win_error(win, MPI_ERR_RMA_SYNC, call,
                             "a fence cannot end a lock or post/start epoch");
    int any = 0;
    for (int r = 0; r < w->size; r++)
        any |= w->fence_sent[r] != 0;
    if (assert & MPI_MODE_NOPRECEDE) {
        /* Nobody issued anything: nothing to complete, no need to meet. */
        if (any || w->npend)
            return bdl_win_error(win, MPI_ERR_RMA_SYNC, call,
                                 "MPI_MODE_NOPRECEDE, but this rank issued RMA operations "
                                 "since the last fence");
    } else {
        int mine = 0;
        rc = MPI_Reduce_scatter_block(w->fence_sent, &mine, 1, MPI_INT, MPI_SUM, w->comm);
        if (rc)
            bdl_fatal(rc, "%s: counting the operations of the epoch failed", call);
        w = bdl_win_get(win);
        int tag = T_FENCE + (int)(w->fence_seq % FENCE_TAGS);
        for (int k = 0; k < mine; k++) {
            MPI_Status st;
            bdl_p2p_probe(w->dctx, MPI_ANY_SOURCE, tag, 1, 0, 0, -1, &st, NULL);
            int src = st.MPI_SOURCE;
            uint64_t n = (uint64_t)st.bd_nbytes;
            char *msg = xmalloc(n);
            recv_data(w, src, tag, msg, n);
            apply(w, msg, n);
            free(msg);
        }
        drain(w, -1, -1);
        memset(w->fence_sent, 0, (size_t)w->size * sizeof(int));
    }
    if (w->flavor == MPI_WIN_FLAVOR_SHARED) {
        /* The other ranks load and store this memory directly: nobody
         * leaves the fence before every rank has applied what it received
         * and finished its own stores of the epoch. */
        rc = MPI_Barrier(w->comm);
        if (rc)
            bdl_fatal(rc, "%s: synchronizing the ranks of a shared window failed", call);
        w = bdl_win_get(win);
    }
    w->fence_seq++;
    w->fence = !(assert &MPI_MODE_NOSUCCEED);
    return MPI_SUCCESS;
}

/* Window ranks of a group's members; NULL (reported in *rc) if invalid. */
static int *group_ranks(bdl_win_t *w, MPI_Win win, const char *call, MPI_Group group, int *n,
                        int *rc)
{
    const int *mem = bdl_group_members(group, n);
    *rc = MPI_SUCCESS;
    if (!mem) {
        *rc = bdl_win_error(win, MPI_ERR_GROUP, call, "invalid group %d", group);
        return NULL;
    }
    int *out = xmalloc((uint64_t)*n * sizeof(int));
    for (int i = 0; i < *n; i++) {
        out[i] = -1;
        for (int r = 0; r < w->size; r++)
            if (w->world[r] == mem[i])
                out[i] = r;
        if (out[i] < 0) {
            free(out);
            *rc = bdl_win_error(win, MPI_ERR_GROUP, call,
                                "member %d of the group is not in the window's group", i);
            return NULL;
        }
    }
    return out;
}

int MPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Win_post";
    SYNC_WIN(call, win, w);
    int rc = check_assert(win, call, assert, MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT);
    if (rc)
        return rc;
    if (w->posted)
        return bdl_win_error(win, MPI_ERR_RMA_SYNC, call,
                             "an exposure epoch is already open (MPI_Win_wait ends it)");
    int n;
    int *ranks = group_ranks(w, win, call, group, &n, &rc);
    if (!ranks)
        return rc;
    w->posted = 1;
    w->post_expect = n;
    w->post_done = 0;
    for (int i = 0; i < n; i++)
        send_data(w, ranks[i], T_POST, NULL, 0);
    free(ranks);
    return MPI_SUCCESS;
}

int MPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Win_start";
    SYNC_WIN(call, win, w);
    int rc = check_assert(win, call, assert, MPI_MODE_NOCHECK);
    if (rc)
        return rc;
    if (w->started)
        return bdl_win_error(win, MPI_ERR_RMA_SYNC, call,
                             "an access epoch is already open (MPI_Win_complete ends it)");
    int n;
    int *ranks = group_ranks(w, win, call, group, &n, &rc);
    if (!ranks)
        return rc;
    w->started = 1;
    for (int i = 0; i < n; i++)
        w->start[ranks[i]] = 1;
    free(ranks);
    return MPI_SUCCESS;
}

int MPI_Win_complete(MPI_Win win)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Win_complete";
    SYNC_WIN(call, win, w);
    if (!w->started)
        return bdl_win_error(win, MPI_ERR_RMA_SYNC, call,
                             "no access epoch is open (MPI_Win_start begins one)");
    for (int r = 0; r < w->size; r++)
        if (w->start[r]) {
            wait_post(w, r);
            send_ctl(w, r, K_COMPLETE, 0);
        }
    for (int r = 0; r < w->size; r++)
        if (w->start[r]) {
            drain(w, r, -1);
            w->start[r] = 0;
            w->dirty[r] = 0;
        }
    w->started = 0;
    return MPI_SUCCESS;
}

int MPI_Win_wait(MPI_Win win)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Win_wait";
    SYNC_WIN(call, win, w);
    if (!w->posted)
        return bdl_win_error(win, MPI_ERR_RMA_SYNC, call,
                             "no exposure epoch is open (MPI_Win_post begins one)");
    for (;;) {
        serve_now();
        w = bdl_win_get(win);
        if (w->post_done >= w->post_expect)
            break;
        /* The service that takes the last complete sends us a wake-up. */
        g_wait_id = w->id;
        recv_data(w, w->rank, T_WAKE, NULL, 0);
        w = bdl_win_get(win);
    }
    g_wait_id = -1;
    w->posted = 0;
    return MPI_SUCCESS;
}

int MPI_Win_test(MPI_Win win, int *flag)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Win_test";
    SYNC_WIN(call, win, w);
    if (!flag)
        return bdl_win_error(win, MPI_ERR_ARG, call, "flag is NULL");
    if (!w->posted)
        return bdl_win_error(win, MPI_ERR_RMA_SYNC, call,
                             "no exposure epoch is open (MPI_Win_post begins one)");
    serve_now();
    w = bdl_win_get(win);
    if (w->post_done < w->post_expect) {
        /* A poll that found nothing: let a waiting rank run, then look again. */
        bdl_req_begin(BD_REQ_YIELD);
        bdl_rpc();
        serve_now();
        w = bdl_win_get(win);
    }
    *flag = w->post_done >= w->post_expect;
    if (*flag)
        w->posted = 0;
    return MPI_SUCCESS;
}

static int check_rank(bdl_win_t *w, MPI_Win win, const char *call, int rank)
{
    if (rank == MPI_PROC_NULL)
        return -1;
    if (rank < 0 || rank >= w->size)
        return bdl_win_error(win, MPI_ERR_RANK, call, "invalid rank %d (window of %d ranks)", rank,
                             w->size);
    return MPI_SUCCESS;
}

int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Win_lock";
    SYNC_WIN(call, win, w);
    if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
        return bdl_win_error(win, MPI_ERR_LOCKTYPE, call, "invalid lock type %d", lock_type);
    int rc = check_assert(win, call, assert, MPI_MODE_NOCHECK);
    if (rc)
        return rc;
    if ((rc = check_rank(w, win, call, rank)))
        return rc < 0 ? MPI_SUCCESS : rc;
    if (w->lock[rank] || w->lock_all)
        return bdl_win_error(win, MPI_ERR_RMA_SYNC, call, "rank %d is already locked", rank);
    if (w->started && w->start[rank])
        return bdl_win_error(win, MPI_ERR_RMA_SYNC, call,
                             "rank %d is in the open access epoch of MPI_Win_start", rank);
    if (assert & MPI_MODE_NOCHECK) {
        w->nocheck[rank] = 1;
    } else {
        send_ctl(w, rank, K_LOCK, lock_type);
        recv_data(w, rank, T_GRANT, NULL, 0);
        w = bdl_win_get(win);
    }
    w->lock[rank] = lock_type;
    w->nlocked++;
    return MPI_SUCCESS;
}

/* End target's passive epoch: release (unlock) or only complete (flush). */
static void finish(bdl_win_t *w, int target, int release)
{
    /* An unlock is always answered: once every unlock is, nothing for the
     * window is left in flight when MPI_Win_free's barrier is passed. */
    int ops = w->dirty[target] || pend_count(w, target) > 0;
    int lockmsg = release && !w->nocheck[target];
    if (lockmsg)
        send_ctl(w, target, K_UNLOCK, 0);
    else if (ops)
        send_ctl(w, target, K_FLUSH, 0);
    if (lockmsg || ops) {
        drain(w, target, -1);
        recv_data(w, target, T_ACK, NULL, 0);
    }
    w->dirty[target] = 0;
    if ((lockmsg || ops) && target == w->rank) /* on us: a loop of these (a spin lock) polls */
        bdl_p2p_poll_failed_own();             /* w may move: callers look it up again */
}

int MPI_Win_unlock(int rank, MPI_Win win)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Win_unlock";
    SYNC_WIN(call, win, w);
    int rc;
    if ((rc = check_rank(w, win, call, rank)))
        return rc < 0 ? MPI_SUCCESS : rc;
    if (!w->lock[rank])
        return bdl_win_error(win, MPI_ERR_RMA_SYNC, call, "rank %d is not locked%s", rank,
                             w->lock_all ? " by MPI_Win_lock (MPI_Win_unlock_all ends a "
                                           "MPI_Win_lock_all)"
                                         : "");
    finish(w, rank, 1);
    w = bdl_win_get(win);
    w->lock[rank] = 0;
    w->nocheck[rank] = 0;
    w->nlocked--;
    return MPI_SUCCESS;
}

int MPI_Win_lock_all(int assert, MPI_Win win)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Win_lock_all";
    SYNC_WIN(call, win, w);
    int rc = check_assert(win, call, assert, MPI_MODE_NOCHECK);
    if (rc)
        return rc;
    if (w->lock_all || w->nlocked)
        return bdl_win_error(win, MPI_ERR_RMA_SYNC, call, "the window is already locked");
    if (assert & MPI_MODE_NOCHECK) {
        for (int r = 0; r < w->size; r++)
            w->nocheck[r] = 1;
        w->lock_all = 2;
        return MPI_SUCCESS;
    }
    for (int r = 0; r < w->size; r++)
        send_ctl(w, r, K_LOCK, MPI_LOCK_SHARED);
    for (int r = 0; r < w->size; r++)
        recv_data(w, r, T_GRANT, NULL, 0);
    w = bdl_win_get(win);
    w->lock_all = 1;
    return MPI_SUCCESS;
}

int MPI_Win_unlock_all(MPI_Win win)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Win_unlock_all";
    SYNC_WIN(call, win, w);
    if (!w->lock_all)
        return bdl_win_error(win, MPI_ERR_RMA_SYNC, call,
                             "the window is not locked by MPI_Win_lock_all");
    for (int r = 0; r < w->size; r++) {
        finish(w, r, 1);
        w = bdl_win_get(win);
        w->nocheck[r] = 0;
    }
    w->lock_all = 0;
    return MPI_SUCCESS;
}

static int passive(bdl_win_t *w, int rank) { return w->lock_all || w->lock[rank]; }

static int flush_call(const char *call, int rank, MPI_Win win, int local)
{
    SYNC_WIN(call, win, w);
    int rc;
    if ((rc = check_rank(w, win, call, rank)))
        return rc < 0 ? MPI_SUCCESS : rc;
    if (!passive(w, rank))
        return bdl_win_error(win, MPI_ERR_RMA_SYNC, call,
                             "rank %d is not locked (flushes need a passive-target epoch)", rank);
    if (local)
        drain(w, rank, -1); /* puts are complete at the origin once issued */
    else
        finish(w, rank, 0);
    return MPI_SUCCESS;
}

int MPI_Win_flush(int rank, MPI_Win win)
{
    BDL_MT_GUARD;
    return flush_call("MPI_Win_flush", rank, win, 0);
}

int MPI_Win_flush_local(int rank, MPI_Win win)
{
    BDL_MT_GUARD;
    return flush_call("MPI_Win_flush_local", rank, win, 1);
}

static int flush_all_call(const char *call, MPI_Win win, int local)
{
    SYNC_WIN(call, win, w);
    if (!w->lock_all && !w->nlocked)
        return bdl_win_error(win, MPI_ERR_RMA_SYNC, call,
                             "no rank is locked (flushes need a passive-target epoch)");
    for (int r = 0; r < w->size; r++) {
        w = bdl_win_get(win);
        if (!passive(w, r))
            continue;
        if (local)
            drain(w, r, -1);
        else
            finish(w, r, 0);
    }
    return MPI_SUCCESS;
}

int MPI_Win_flush_all(MPI_Win win)
{
    BDL_MT_GUARD;
    return flush_all_call("MPI_Win_flush_all", win, 0);
}

int MPI_Win_flush_local_all(MPI_Win win)
{
    BDL_MT_GUARD;
    return flush_all_call("MPI_Win_flush_local_all", win, 1);
}

int MPI_Win_sync(MPI_Win win)
{
    BDL_MT_GUARD;
    SYNC_WIN("MPI_Win_sync", win, w);
    (void)w;
    /* Apply what others have sent us so far.  A program may poll its
     * window with this: when there was nothing, let a waiting rank run. */
    if (!serve_now()) {
        bdl_req_begin(BD_REQ_YIELD);
        bdl_rpc();
        serve_now();
    }
    atomic_thread_fence(memory_order_seq_cst);
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- window life */

int bdl_rma_win_busy(bdl_win_t *w)
{
    return w->nlocked || w->lock_all || w->started || w->posted || w->npend;
}

void bdl_rma_win_release(bdl_win_t *w)
{
    for (int i = 0; i < w->npend; i++)
        bdl_dt_release(w->pend[i].t);
    free(w->pend);
    free(w->waits);
    free(w->fence_sent);
    free(w->lock);
    free(w->nocheck);
    free(w->dirty);
    free(w->start);
    w->pend = NULL;
    w->waits = NULL;
    w->fence_sent = w->lock = w->nocheck = w->dirty = w->start = NULL;
}
