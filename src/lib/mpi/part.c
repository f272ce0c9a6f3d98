/* Partitioned point-to-point communication (MPI 4.0 4.2): MPI_Psend_init,
 * MPI_Precv_init, MPI_Pready(_range, _list), MPI_Parrived.
 *
 * One message per round, sent when the last partition is ready: a send in
 * BDMPI is a copy into the receiver's mailbox (or one process_vm_readv), so
 * sending each partition separately would only multiply the fixed costs
 * (an envelope, a wake-up of the receiver, its matching) without letting
 * the receiver do anything earlier that matters here: the receiver is a
 * process that may not even hold a run slot.  MPI_Parrived is therefore
 * true for every partition once the round's message has arrived.
 *
 * Matching: MPI matches partitioned inits by (communicator, peer, tag) in
 * the order of the init calls, once; the rounds of a matched pair then
 * follow each other.  So each side numbers its channels to a peer with a
 * tag in init order (n), and a round's message travels on the
 * communicator's hidden context as a small header (tag, n, bytes) on
 * PART_HDR followed at once by the data on PART_DATA.  The receiver reads
 * the headers of a communicator in arrival order and takes the data that
 * follows each one straight into the channel's buffer when that channel
 * waits for a round, or into a stash (later rounds, or a channel whose
 * Precv_init has not happened yet) that MPI_Start empties in order. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "dt.h"
#include "objects.h"
#include "request.h"

#define PART_HDR 0x50410000
#define PART_DATA 0x50410001

typedef struct part_hdr {
    int32_t tag, n;
    uint64_t nbytes;
} part_hdr_t;

/* A round's data that came before its channel wanted it. */
typedef struct stash {
    struct stash *next;
    int ctx, src, tag, n;
    uint64_t nbytes;
    char *data;
} stash_t;

typedef struct part {
    int send;
    void *buf;
    int partitions;
    uint64_t count;  /* elements per partition */
    MPI_Datatype dt; /* an alias handle */
    int peer, tag, n, ctx, peer_world;
    MPI_Comm comm;
    /* this round */
    int active;  /* started, its completion not reported yet */
    char *ready; /* send: partition marked ready */
    int nready;
    int filled;      /* receive: the round's data is in buf */
    uint64_t cma_id; /* send: a single-copy send still being read */
    uint64_t got;    /* receive: bytes of the round */
    int err;         /* receive: MPI_ERR_TRUNCATE when the round was larger */
    struct part *next_recv;
} part_t;

/* Channels counted per (context, peer, tag, direction), in init order. */
typedef struct chan_count {
    struct chan_count *next;
    int ctx, peer, tag, send, next_n;
} chan_count_t;

static chan_count_t *g_counts;
static stash_t *g_stash, **g_stash_tail = &g_stash;
static part_t *g_recvs; /* receive channels, for the headers to find */

static const bdl_req_ops_t part_ops;

static int next_channel(int ctx, int peer, int tag, int send)
{
    for (chan_count_t *k = g_counts; k; k = k->next)
        if (k->ctx == ctx && k->peer == peer && k->tag == tag && k->send == send)
            return k->next_n++;
    chan_count_t *k = calloc(1, sizeof *k);
    if (!k)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory creating a partitioned request");
    *k = (chan_count_t){g_counts, ctx, peer, tag, send, 1};
    g_counts = k;
    return 0;
}

static uint64_t round_elems(const part_t *p) { return (uint64_t)p->partitions * p->count; }

static void deliver(part_t *p, const char *data, uint64_t nbytes)
{
    bdl_dt_t *t = bdl_dt_lookup(p->dt);
    uint64_t cap = round_elems(p) * t->size;
    if (nbytes > cap) {
        p->err = MPI_ERR_TRUNCATE;
        nbytes = cap;
    }
    bdl_dt_unpack(t, p->buf, round_elems(p), 0, data, nbytes);
    p->got = nbytes;
    p->filled = 1;
}

/* The receive channel (ctx, src, tag, n) waiting for a round, or NULL. */
static part_t *waiting_channel(int ctx, int src, int tag, int n)
{
    for (part_t *p = g_recvs; p; p = p->next_recv)
        if (p->ctx == ctx && p->peer == src && p->tag == tag && p->n == n)
            return p;
    return NULL;
}

/* Read every header that has arrived on ctx, with the data behind it. */
static void drain(int ctx)
{
    MPI_Status st;
    while (bdl_p2p_probe(ctx, MPI_ANY_SOURCE, PART_HDR, 0, 0, 0, -1, &st, NULL)) {
        part_hdr_t h;
        int src = st.MPI_SOURCE;
        bdl_recv_bytes(ctx, src, PART_HDR, &h, sizeof h, MPI_STATUS_IGNORE);
        part_t *p = waiting_channel(ctx, src, h.tag, h.n);
        /* A channel active and still waiting for this round takes it in
         * place, unless earlier rounds are stashed (they come first). */
        int stashed = 0;
        for (stash_t *s = g_stash; s && p; s = s->next)
            if (s->ctx == ctx && s->src == src && s->tag == h.tag && s->n == h.n)
                stashed = 1;
        if (p && p->active && !p->filled && !stashed) {
            uint64_t cap = round_elems(p);
            MPI_Status ds;
            p->err = bdl_recv_typed(ctx, src, PART_DATA, p->buf, cap, bdl_dt_lookup(p->dt), &ds);
            p->got = (uint64_t)ds.bd_nbytes;
            p->filled = 1;
            continue;
        }
        stash_t *s = calloc(1, sizeof *s);
        char *data = malloc(h.nbytes ? h.nbytes : 1);
        if (!s || !data)
            bdl_fatal(MPI_ERR_NO_MEM, "out of memory keeping a partitioned message of %llu bytes",
                      (unsigned long long)h.nbytes);
        bdl_recv_bytes(ctx, src, PART_DATA, data, h.nbytes, MPI_STATUS_IGNORE);
        *s = (stash_t){NULL, ctx, src, h.tag, h.n, h.nbytes, data};
        *g_stash_tail = s;
        g_stash_tail = &s->next;
    }
}

/* MPI_Start of a receive: its round may be stashed already. */
static void take_stash(part_t *p)
{
    for (stash_t **pp = &g_stash; *pp; pp = &(*pp)->next) {
        stash_t *s = *pp;
        if (s->ctx != p->ctx || s->src != p->peer || s->tag != p->tag || s->n != p->n)
            continue;
        deliver(p, s->data, s->nbytes);
        *pp = s->next;
        if (g_stash_tail == &s->next)
            g_stash_tail = pp;
        free(s->data);
        free(s);
        return;
    }
}

/* Send the round (every partition is ready). */
static void send_round(part_t *p)
{
    if (p->peer == MPI_PROC_NULL)
        return;
    bdl_comm_t *c = bdl_comm_get(p->comm);
    bdl_dt_t *t = bdl_dt_lookup(p->dt);
    part_hdr_t h = {p->tag, p->n, round_elems(p) * t->size};
    bdl_send_bytes(p->ctx, p->peer_world, c->rank, PART_HDR, &h, sizeof h, 0, NULL);
    bdl_send_typed_id(p->ctx, p->peer_world, c->rank, PART_DATA, p->buf, round_elems(p), t, 0,
                      ++bdl_g.next_rid, NULL, &p->cma_id);
}

static int part_done(bdl_request_t *q, int blocking)
{
    part_t *p = q->impl;
    if (p->send) {
        if (p->nready < p->partitions)
            return 0;
        if (p->cma_id && bdl_p2p_cma_done(p->cma_id, blocking))
            p->cma_id = 0;
        return !p->cma_id;
    }
    if (!p->filled && p->peer != MPI_PROC_NULL)
        drain(p->ctx);
    return p->filled || p->peer == MPI_PROC_NULL;
}

static void part_progress(bdl_request_t *q, int blocking)
{
    while (!q->done) {
        uint32_t seen = bdl_p2p_event_seq();
        if ((q->done = part_done(q, blocking)) || !blocking)
            return;
        /* A send waits for its partitions (another thread's MPI_Pready):
         * the master's deadlock detection reports a program that never
         * marks them. */
        bdl_p2p_wait_event(seen, BD_WAIT_ANY);
    }
}

static int part_poll(bdl_request_t **qs, int n, const bdl_req_poll_t *pp)
{
    for (;;) {
        uint32_t seen = bdl_p2p_event_seq();
        int k = 0;
        for (int i = 0; i < n; i++)
            if ((qs[i]->done = part_done(qs[i], 0)))
                k++;
        if (k || !pp->block || pp->others || pp->spinning)
            return k;
        bdl_p2p_wait_event(seen, BD_WAIT_ANY);
    }
}

static void part_complete(bdl_request_t *q)
{
    part_t *p = q->impl;
    bdl_status_empty(&q->status);
    q->err = p->send ? MPI_SUCCESS : p->err;
    q->status.MPI_ERROR = q->err;
    p->active = 0;
    if (p->send)
        return;
    if (p->peer == MPI_PROC_NULL) {
        bdl_status_proc_null(&q->status);
        return;
    }
    q->status.MPI_SOURCE = p->peer;
    q->status.MPI_TAG = p->tag;
    q->status.bd_nbytes = (long long)p->got;
}

static int part_cancel(bdl_request_t *q, MPI_Request h)
{
    part_t *p = q->impl;
    return bdl_error(p->comm, MPI_ERR_REQUEST, "MPI_Cancel",
                     "request %d is a partitioned request, which cannot be cancelled", h);
}

static int part_free(bdl_request_t *q, MPI_Request *h)
{
    part_t *p = q->impl;
    if (!q->inactive)
        return bdl_error(p->comm, MPI_ERR_REQUEST, "MPI_Request_free",
                         "request %d is an active partitioned request: complete it first", *h);
    for (part_t **pp = &g_recvs; *pp; pp = &(*pp)->next_recv)
        if (*pp == p) {
            *pp = p->next_recv;
            break;
        }
    bdl_dt_alias_free(p->dt);
    free(p->ready);
    free(p);
    q->impl = NULL;
    bdl_req_free_slot(q);
    *h = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

static int part_start(bdl_request_t *q, MPI_Request h)
{
    (void)h;
    part_t *p = q->impl;
    q->inactive = 0;
    q->done = 0;
    q->err = 0;
    bdl_status_empty(&q->status);
    p->active = 1;
    p->nready = 0;
    p->filled = 0;
    p->got = 0;
    p->err = 0;
    p->cma_id = 0;
    memset(p->ready, 0, (size_t)p->partitions);
    if (!p->send && p->peer != MPI_PROC_NULL)
        take_stash(p);
    return MPI_SUCCESS;
}

static const bdl_req_ops_t part_ops = {
    .progress = part_progress,
    .poll = part_poll,
    .poll_order = 2,
    .complete = part_complete,
    .cancel = part_cancel,
    .free = part_free,
    .start = part_start,
};

static int pinit(const char *call, int send, const void *buf, int partitions, MPI_Count count,
                 MPI_Datatype dt, int peer, int tag, MPI_Comm comm, MPI_Info info,
                 MPI_Request *request)
{
    BDL_CHECK_INIT(call);
    bdl_comm_t *c = bdl_comm_get(comm);
    bdl_dt_t *t;
    int rc;
    if (!c)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_COMM, call, "invalid communicator %d", comm);
    if (partitions < 1)
        return bdl_error(comm, MPI_ERR_ARG, call, "invalid partition count %d (must be >= 1)",
                         partitions);
    if (count < 0)
        return bdl_error(comm, MPI_ERR_COUNT, call, "invalid count %lld", (long long)count);
    if ((rc = bdl_dt_check(comm, call, send ? "send" : "receive", dt, &t)))
        return rc;
    if (tag < 0)
        return bdl_error(comm, MPI_ERR_TAG, call,
                         "invalid tag %d (must be 0..MPI_TAG_UB; no MPI_ANY_TAG)", tag);
    if (peer != MPI_PROC_NULL && (peer < 0 || peer >= bdl_comm_peers(c)))
        return bdl_error(comm, MPI_ERR_RANK, call,
                         "invalid %s rank %d (%s size %d; no MPI_ANY_SOURCE)",
                         send ? "destination" : "source", peer,
                         c->inter ? "remote group" : "communicator", bdl_comm_peers(c));
    if (info != MPI_INFO_NULL && !bdl_info_valid(info))
        return bdl_error(comm, MPI_ERR_INFO, call, "invalid info %d", info);
    if (!request)
        return bdl_error(comm, MPI_ERR_ARG, call, "request is NULL");
    part_t *p = calloc(1, sizeof *p);
    char *ready = calloc((size_t)partitions, 1);
    MPI_Datatype alias = bdl_dt_alias(dt);
    if (!p || !ready || alias == MPI_DATATYPE_NULL) {
        free(p);
        free(ready);
        return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
    }
    *p = (part_t){.send = send,
                  .buf = (void *)buf,
                  .partitions = partitions,
                  .count = (uint64_t)count,
                  .dt = alias,
                  .peer = peer,
                  .tag = tag,
                  .ctx = bdl_comm_ictx(c),
                  .comm = comm,
                  .ready = ready};
    if (peer != MPI_PROC_NULL) {
        p->peer_world = bdl_comm_peer_world(c, peer);
        p->n = next_channel(p->ctx, peer, tag, send);
    }
    if (!send) {
        p->next_recv = g_recvs;
        g_recvs = p;
    }
    int h = bdl_req_new(&part_ops);
    bdl_request_t *q = &bdl_g.reqs[h];
    q->persistent = 1;
    q->inactive = 1;
    q->pcomm = comm;
    q->impl = p;
    bdl_status_empty(&q->status);
    *request = h;
    return MPI_SUCCESS;
}

int MPI_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                   int dest, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    BDL_MT_GUARD;
    return pinit("MPI_Psend_init", 1, buf, partitions, count, datatype, dest, tag, comm, info,
                 request);
}

int MPI_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source,
                   int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    BDL_MT_GUARD;
    return pinit("MPI_Precv_init", 0, buf, partitions, count, datatype, source, tag, comm, info,
                 request);
}

/* The active partitioned request h of the direction wanted, or NULL (reported). */
static part_t *active(const char *call, MPI_Request h, int send, int *rc)
{
    BDL_CHECK_INIT(call);
    bdl_request_t *q = bdl_req_lookup(h);
    if (!q || q->ops != &part_ops) {
        *rc = bdl_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, call,
                        "request %d is not a partitioned request", h);
        return NULL;
    }
    part_t *p = q->impl;
    if (p->send != send) {
        *rc = bdl_error(p->comm, MPI_ERR_REQUEST, call, "request %d is a partitioned %s request", h,
                        p->send ? "send" : "receive");
        return NULL;
    }
    if (q->inactive) {
        *rc = bdl_error(p->comm, MPI_ERR_REQUEST, call,
                        "request %d is not active (MPI_Start it first)", h);
        return NULL;
    }
    *rc = MPI_SUCCESS;
    return p;
}

static int ready(const char *call, part_t *p, int k)
{
    if (k < 0 || k >= p->partitions)
        return bdl_error(p->comm, MPI_ERR_ARG, call, "invalid partition %d (the request has %d)", k,
                         p->partitions);
    if (p->ready[k])
        return bdl_error(p->comm, MPI_ERR_ARG, call,
                         "partition %d is already marked ready in this round", k);
    p->ready[k] = 1;
    if (++p->nready == p->partitions)
        send_round(p);
    return MPI_SUCCESS;
}

int MPI_Pready(int partition, MPI_Request request)
{
    BDL_MT_GUARD;
    int rc;
    part_t *p = active("MPI_Pready", request, 1, &rc);
    return p ? ready("MPI_Pready", p, partition) : rc;
}

int MPI_Pready_range(int partition_low, int partition_high, MPI_Request request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Pready_range";
    int rc;
    part_t *p = active(call, request, 1, &rc);
    if (!p)
        return rc;
    if (partition_low < 0 || partition_high >= p->partitions || partition_low > partition_high)
        return bdl_error(p->comm, MPI_ERR_ARG, call,
                         "invalid partition range %d..%d (the request has %d)", partition_low,
                         partition_high, p->partitions);
    for (int k = partition_low; k <= partition_high; k++)
        if ((rc = ready(call, p, k)))
            return rc;
    return MPI_SUCCESS;
}

int MPI_Pready_list(int length, const int array_of_partitions[], MPI_Request request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Pready_list";
    int rc;
    part_t *p = active(call, request, 1, &rc);
    if (!p)
        return rc;
    if (length < 0 || (length > 0 && !array_of_partitions))
        return bdl_error(p->comm, MPI_ERR_ARG, call, "invalid list (length %d)", length);
    for (int i = 0; i < length; i++)
        if ((rc = ready(call, p, array_of_partitions[i])))
            return rc;
    return MPI_SUCCESS;
}

int MPI_Parrived(MPI_Request request, int partition, int *flag)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Parrived";
    BDL_CHECK_INIT(call);
    bdl_request_t *q = bdl_req_lookup(request);
    if (q && q->ops == &part_ops && q->inactive) {
        *flag = 1; /* an inactive request has nothing outstanding */
        return MPI_SUCCESS;
    }
    int rc;
    part_t *p = active(call, request, 0, &rc);
    if (!p)
        return rc;
    if (partition < 0 || partition >= p->partitions)
        return bdl_error(p->comm, MPI_ERR_ARG, call, "invalid partition %d (the request has %d)",
                         partition, p->partitions);
    q = bdl_req_lookup(request);
    if (!q->done)
        q->done = part_done(q, 0);
    if (!q->done)
        bdl_p2p_poll_failed();
    *flag = q->done;
    return MPI_SUCCESS;
}
