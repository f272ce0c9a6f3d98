/* Multi-node: what masters say to each other (bdmpi.txt 5.1, 5.3).
 *
 * Outgoing items to each node wait in one FIFO per destination, so a large
 * message streamed in chunks is never overtaken by a later small one from
 * the same master (MPI's non-overtaking order).  Large payloads move in
 * chunks of BDR_NODE_CHUNK bytes with at most BDR_NODE_TOKENS chunks in
 * flight per destination (flow-control.txt 3.3), read from the sender's
 * spill file and written to a spill file on the receiving node, so no
 * master ever holds a whole large message in memory. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bd_iowatch.h"
#include "bd_crc.h"
#include "bd_fs.h"
#include "bd_log.h"
#include "master.h"
#include "net.h"

#define BDR_NODE_CHUNK (1u << 20)
#define BDR_NODE_TOKENS 4

typedef struct xfer {
    struct xfer *next;
    bdr_net_hdr_t h;
    char *inline_data; /* small payload (owned) */
    size_t inline_len;
    int netbuf; /* inline_data is a bdr_net_buf: handed to the transport as it is */
    int fd;     /* large payload: file range [off, total) */
    uint64_t file_base, total, off;
    int header_sent;
    char unlink_path[BD_PATH_MAX + 64]; /* removed when sent (a slave's spill file) */
    uint32_t *ck;         /* recorded checksums: a spill file's, one per chunk (bd_fs.h), */
    uint32_t *blk_ck;     /* or a collective piece's, one per block of BD_FS_DIO_ALIGN */
    void (*sent)(void *); /* called when it has left (bdr_node_send_cb) */
    void *sent_arg;
    void (*lent)(void *); /* the payload is lent (bdr_node_send_lent): given back by this */
    void *lent_arg;
    char *lent_data;
    size_t lent_len;
} xfer_t;

typedef struct incoming {
    int active;
    bdr_net_hdr_t h;
    uint64_t total, got;
    int fd;
    msg_t *msg; /* p2p message being received */
    int dst_world;
    bd_fs_ck_t ck; /* its spill file's checksums, written after the data */
} incoming_t;

static xfer_t **g_q_head, **g_q_tail;
static incoming_t *g_in;
static int *g_done_from;
static int g_ndone, g_sent_done;
static int g_aborting;
static uint64_t g_inline_queued;        /* bytes of small payloads waiting in the queues */
extern uint64_t g_net_sent, g_net_recv; /* deadlock.c's message totals */

int bdr_node_of_world(int world) { return bd_world_node(g_m.hdr, world); }

int bdr_node_init(void)
{
    int n = g_m.nnodes;
    g_q_head = calloc((size_t)n, sizeof *g_q_head);
    g_q_tail = calloc((size_t)n, sizeof *g_q_tail);
    g_in = calloc((size_t)n, sizeof *g_in);
    g_done_from = calloc((size_t)n, sizeof *g_done_from);
    return g_q_head && g_q_tail && g_in && g_done_from ? 0 : -1;
}

static void enqueue(int dst, xfer_t *x)
{
    x->next = NULL;
    if (g_q_tail[dst])
        g_q_tail[dst]->next = x;
    else
        g_q_head[dst] = x;
    g_q_tail[dst] = x;
}

static xfer_t *xfer_new(const bdr_net_hdr_t *h)
{
    xfer_t *x = calloc(1, sizeof *x);
    if (!x) {
        bdr_master_fail(1, "master out of memory queuing data for another node");
        return NULL;
    }
    x->h = *h;
    x->h.src_node = g_m.node;
    x->fd = -1;
    return x;
}

void bdr_node_send(int dst, const bdr_net_hdr_t *h, const void *data, size_t len)
{
    xfer_t *x = xfer_new(h);
    if (!x)
        return;
    if (len) {
        x->inline_data = malloc(len);
        if (!x->inline_data) {
            free(x);
            bdr_master_fail(1, "master out of memory queuing %zu bytes for node %d", len, dst);
            return;
        }
        memcpy(x->inline_data, data, len);
        x->inline_len = len;
        g_inline_queued += len;
    }
    enqueue(dst, x);
}

void bdr_node_send_netbuf(int dst, const bdr_net_hdr_t *h, void *buf, size_t len)
{
    xfer_t *x = xfer_new(h);
    if (!x) {
        bdr_net_free_buf(buf, len);
        return;
    }
    x->inline_data = buf;
    x->inline_len = len;
    x->netbuf = buf != NULL;
    g_inline_queued += len;
    enqueue(dst, x);
}

void bdr_node_send_lent(int dst, const bdr_net_hdr_t *h, void *payload, size_t len,
                        void (*done)(void *), void *arg)
{
    xfer_t *x = xfer_new(h);
    if (!x) {
        done(arg);
        return;
    }
    x->lent = done;
    x->lent_arg = arg;
    x->lent_data = payload;
    x->lent_len = len;
    enqueue(dst, x);
}

void bdr_node_send_cb(int dst, const bdr_net_hdr_t *h, void (*sent)(void *), void *arg)
{
    xfer_t *x = xfer_new(h);
    if (!x)
        return;
    x->sent = sent;
    x->sent_arg = arg;
    enqueue(dst, x);
}

/* Send `total` bytes of fd from file_base on, in chunks, after header h
 * (which must have BD_NH_LARGE set and u[5] = total).  The fd is dup'ed. */
void bdr_node_send_file(int dst, const bdr_net_hdr_t *h, int fd, uint64_t file_base, uint64_t total,
                        const char *unlink_path, uint32_t *blk_ck)
{
    xfer_t *x = xfer_new(h);
    if (!x) {
        free(blk_ck);
        return;
    }
    x->blk_ck = blk_ck;
    x->fd = dup(fd);
    if (x->fd < 0) {
        free(x);
        bdr_master_fail(1, "dup failed: %s", strerror(errno));
        return;
    }
    x->file_base = file_base;
    x->total = total;
    if (unlink_path)
        snprintf(x->unlink_path, sizeof x->unlink_path, "%s", unlink_path);
    enqueue(dst, x);
}

/* A collective piece's chunk of n bytes at x->off, just read: do its
 * blocks match the sums recorded when they were written?  The last block
 * of the piece is summed with its padding (zeros written after the piece),
 * read from the file.  On a mismatch, *bad: the block's offset in the
 * piece. */
static int blocks_differ(const xfer_t *x, const char *chunk, uint64_t n, uint64_t *bad)
{
    const uint64_t B = BD_FS_DIO_ALIGN;
    for (uint64_t k = 0; k < n; k += B) {
        uint64_t part = n - k < B ? n - k : B;
        uint32_t crc = bd_crc32c(0, chunk + k, part);
        if (part < B) {
            char pad[BD_FS_DIO_ALIGN];
            if (bd_pread_full(x->fd, pad, B - part, x->file_base + x->off + k + part) < 0)
                memset(pad, 0xff, B - part); /* unreadable: it cannot match */
            crc = bd_crc32c(crc, pad, B - part);
        }
        if (crc != x->blk_ck[(x->off + k) / B]) {
            *bad = x->off + k;
            return 1;
        }
    }
    return 0;
}

static int counted_send(int dst, const bdr_net_hdr_t *h, const void *p, size_t len)
{
    int rc = bdr_net_send(dst, h, p, len);
    if (rc == 0)
        g_net_sent++;
    return rc;
}

/* The item at the head of dst's queue is done with (sent, or dropped). */
static void pop_head(int dst)
{
    xfer_t *x = g_q_head[dst];
    if (x->fd >= 0) {
        close(x->fd);
        if (x->unlink_path[0])
            bd_spill_unlink(g_m.hdr, x->unlink_path, x->total);
    }
    g_q_head[dst] = x->next;
    if (!g_q_head[dst])
        g_q_tail[dst] = NULL;
    g_inline_queued -= x->inline_len;
    if (x->lent) /* dropped before it left */
        x->lent(x->lent_arg);
    if (x->netbuf)
        bdr_net_free_buf(x->inline_data, x->inline_len);
    else
        free(x->inline_data);
    free(x->ck);
    free(x->blk_ck);
    free(x);
}

static void progress_out(void)
{
    bdr_net_out_blocked(0);
    for (int dst = 0; dst < g_m.nnodes; dst++) {
        while (g_q_head[dst]) {
            xfer_t *x = g_q_head[dst];
            /* The job is ending with a failure (every node has been told):
             * what is queued would never be used, and an item that failed
             * would be tried for ever, with our DONE stuck behind it (a
             * read of a spill file failing at every try hung the job;
             * soak, issue 18).  Only DONE still leaves. */
            if (g_m.stopping && x->h.type != BDR_NH_DONE) {
                pop_head(dst);
                continue;
            }
            if (x->lent) {
                /* the memory is its lender's again once MPICH is done with it */
                void (*done)(void *) = x->lent;
                x->lent = NULL;
                if (bdr_net_send_lent(dst, &x->h, x->lent_data, x->lent_len, done, x->lent_arg) <
                    0) {
                    bdr_master_fail(1, "cannot send to the master of node %d", dst);
                    return;
                }
                g_net_sent++;
            } else if (x->fd < 0 && x->netbuf) {
                /* the buffer is the transport's from here, sent or not */
                int rc = bdr_net_send_buf(dst, &x->h, x->inline_data, x->inline_len);
                x->inline_data = NULL;
                if (rc < 0) {
                    bdr_master_fail(1, "cannot send to the master of node %d", dst);
                    return;
                }
                g_net_sent++;
            } else if (x->fd < 0) {
                if (counted_send(dst, &x->h, x->inline_data, x->inline_len) < 0) {
                    bdr_master_fail(1, "cannot send to the master of node %d", dst);
                    return;
                }
                if (x->sent)
                    x->sent(x->sent_arg);
            } else {
                if (!x->header_sent) {
                    /* a spill file is checked chunk by chunk before it leaves */
                    int rc = x->unlink_path[0] ? bd_fs_ck_load(x->fd, x->total, &x->ck) : 0;
                    if (rc < 0) {
                        bdr_master_fail(1, "cannot read the checksums of spill file %s: %s",
                                        x->unlink_path, strerror(-rc));
                        return;
                    }
                    if (counted_send(dst, &x->h, NULL, 0) < 0) {
                        bdr_master_fail(1, "cannot send to the master of node %d", dst);
                        return;
                    }
                    x->header_sent = 1;
                }
                while (x->off < x->total &&
                       bdr_net_pending(dst) < (size_t)BDR_NODE_TOKENS * BDR_NODE_CHUNK) {
                    uint64_t n = x->total - x->off;
                    if (n > BDR_NODE_CHUNK)
                        n = BDR_NODE_CHUNK;
                    /* Read straight into the buffer MPICH sends from: one
                     * copy less per chunk. */
                    char *chunk = bdr_net_buf(n);
                    if (!chunk) {
                        bdr_master_fail(1, "master out of memory");
                        return;
                    }
                    int rc = BD_IO_NEG(BD_FAULT_SPILL_READ,
                                       bd_pread_full(x->fd, chunk, n, x->file_base + x->off));
                    if (rc < 0) {
                        bdr_net_free_buf(chunk, n);
                        bdr_master_fail(1, "cannot read %llu bytes to send to node %d: %s",
                                        (unsigned long long)n, dst, strerror(-rc));
                        return;
                    }
                    uint64_t bad = 0;
                    if (x->ck && bd_crc32c(0, chunk, n) != x->ck[x->off / BDR_NODE_CHUNK]) {
                        bdr_net_free_buf(chunk, n);
                        bdr_master_fail(1,
                                        "storage returned corrupted data for rank %d at offset "
                                        "%llu in %s",
                                        x->h.a[3], (unsigned long long)x->off, x->unlink_path);
                        return;
                    }
                    if (x->blk_ck && blocks_differ(x, chunk, n, &bad)) {
                        bdr_net_free_buf(chunk, n);
                        bdr_master_fail(1,
                                        "storage returned corrupted data for collective data to "
                                        "send to node %d at offset %llu in a spill file in %s",
                                        dst, (unsigned long long)(x->file_base + bad), g_m.jobdir);
                        return;
                    }
                    bdr_net_hdr_t ch = {.type = BDR_NH_CHUNK, .src_node = g_m.node};
                    ch.u[0] = x->off;
                    if (bdr_net_send_buf(dst, &ch, chunk, n) < 0) {
                        bdr_master_fail(1, "cannot send to the master of node %d", dst);
                        return;
                    }
                    g_net_sent++;
                    x->off += n;
                }
                if (x->off < x->total) {
                    bdr_net_out_blocked(1); /* their completions are awaited */
                    break;                  /* out of tokens: the rest waits */
                }
            }
            pop_head(dst);
        }
    }
}

/* ---------------------------------------------------------------- p2p */

/* A rank of ours sent to a rank on another node. */
void bdr_node_send_p2p(slave_t *s, const bd_req_t *r, uint64_t sync_id)
{
    int dst_node = bdr_node_of_world(r->peer);
    bdr_net_hdr_t h = {.type = BDR_NH_MSG};
    h.a[0] = r->ctx;
    h.a[1] = r->myrank;
    h.a[2] = r->tag;
    h.a[3] = s->world;
    h.a[4] = r->peer;
    h.u[0] = r->nbytes;
    h.u[1] = sync_id;
    h.u[4] = r->rid; /* MPI_Cancel names it so */
    if (r->flags & BD_SEND_FILE) {
        char path[BD_PATH_MAX + 64];
        bd_spill_path(path, sizeof path, g_m.jobdir, s->world, (uint64_t)r->arg[0]);
        int fd = BD_FAULT_SYS(BD_FAULT_SPILL_OPEN) ?: open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0) {
            bdr_master_fail(1, "cannot open spill file %s of rank %d: %s", path, s->world,
                            strerror(errno));
            return;
        }
        h.a[5] = 1;
        h.u[2] = (uint64_t)r->arg[0];
        h.u[5] = r->nbytes;
        bdr_node_send_file(dst_node, &h, fd, 0, r->nbytes, path, NULL);
        close(fd);
    } else {
        bdr_node_send(dst_node, &h, s->win, r->nbytes);
    }
}

void bdr_node_send_small(slave_t *s, const bd_oentry_t *e, const void *data)
{
    bdr_net_hdr_t h = {.type = BDR_NH_MSG};
    h.a[0] = e->ctx;
    h.a[1] = e->src;
    h.a[2] = e->tag;
    h.a[3] = s->world;
    h.a[4] = e->dst;
    h.u[0] = e->nbytes;
    h.u[1] = e->sync_id;
    h.u[4] = e->send_id;
    bdr_node_send(bdr_node_of_world(e->dst), &h, data, e->nbytes);
}

void bdr_node_cancel(slave_t *s, int dst_world, uint64_t send_id)
{
    bdr_net_hdr_t h = {.type = BDR_NH_CANCEL};
    h.a[0] = s->world;
    h.a[1] = dst_world;
    h.u[0] = send_id;
    s->cancel_wait = 1;
    s->cancel_id = send_id;
    /* Through the queue its message went by: the cancel arrives after it. */
    bdr_node_send(bdr_node_of_world(dst_world), &h, NULL, 0);
}

/* Another node's MPI_Cancel of a send to a rank of ours. */
static void recv_cancel(const bdr_net_hdr_t *h)
{
    slave_t *d = bdr_master_slave_by_world(h->a[1]);
    bdr_net_hdr_t a = {.type = BDR_NH_CANCEL_ANS};
    a.a[0] = h->a[0];
    a.a[1] = d && !d->exited ? bdr_mbox_cancel(d, h->a[0], h->u[0]) : 0;
    a.u[0] = h->u[0];
    bdr_node_send(h->src_node, &a, NULL, 0);
}

static void recv_cancel_answer(const bdr_net_hdr_t *h)
{
    slave_t *s = bdr_master_slave_by_world(h->a[0]);
    if (!s || !s->cancel_wait || s->cancel_id != h->u[0])
        return;
    s->cancel_wait = 0;
    s->slot->resp.flag = h->a[1] != 0;
    bdr_sched_respond(s);
}

void bdr_node_sync_matched(int sender_world, uint64_t sync_id)
{
    bdr_net_hdr_t h = {.type = BDR_NH_SYNC};
    h.a[0] = sender_world;
    h.u[0] = sync_id;
    bdr_node_send(bdr_node_of_world(sender_world), &h, NULL, 0);
}

static void recv_msg(bdr_net_msg_t *nm)
{
    const bdr_net_hdr_t *h = &nm->h;
    msg_t *m = calloc(1, sizeof *m);
    if (!m) {
        bdr_master_fail(1, "master out of memory receiving a message from node %d", h->src_node);
        return;
    }
    m->ctx = h->a[0];
    m->src = h->a[1];
    m->tag = h->a[2];
    m->src_world = h->a[3];
    m->nbytes = h->u[0];
    m->sync_id = h->u[1];
    m->send_id = h->u[4];
    int dst = h->a[4];
    if (h->a[5] == 2) { /* its data comes when asked for (net_direct.c) */
        if (bdr_direct_expect(h, m) < 0)
            free(m);
        else
            bdr_msg_deliver(dst, m);
        return;
    }
    if (h->a[5]) {
        /* Large: stream the chunks into our own spill file, then deliver. */
        incoming_t *in = &g_in[h->src_node];
        char path[BD_PATH_MAX + 64];
        m->in_file = 1;
        m->file_num = h->u[2];
        bd_spill_path(path, sizeof path, g_m.jobdir, m->src_world, m->file_num);
        if (bdr_spill_charge(h->u[5], m->src_world, dst, NULL) < 0) {
            free(m);
            return;
        }
        in->fd = BD_FAULT_SYS(BD_FAULT_SPILL_OPEN)
                     ?: open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (in->fd < 0) {
            free(m);
            bdr_master_fail(1, "cannot create spill file %s for a %llu-byte message: %s", path,
                            (unsigned long long)h->u[0], strerror(errno));
            return;
        }
        in->active = 1;
        bd_fs_ck_init(&in->ck);
        in->h = *h;
        in->total = h->u[5];
        in->got = 0;
        in->msg = m;
        in->dst_world = dst;
        if (in->total == 0) {
            bd_fs_ck_write(&in->ck, in->fd, 0);
            close(in->fd);
            in->active = 0;
            bdr_msg_deliver(dst, m);
        }
        return;
    }
    if (m->nbytes) {
        m->data = malloc(m->nbytes);
        if (!m->data || nm->len != m->nbytes) {
            free(m->data);
            free(m);
            bdr_master_fail(1, "bad or unallocatable message of %llu bytes from node %d",
                            (unsigned long long)h->u[0], h->src_node);
            return;
        }
        memcpy(m->data, nm->payload, m->nbytes);
        g_m.bytes_buffered += m->nbytes;
        if (g_m.bytes_buffered > g_m.peak_buffered)
            g_m.peak_buffered = g_m.bytes_buffered;
    }
    bdr_msg_deliver(dst, m);
}

static void recv_chunk(bdr_net_msg_t *nm)
{
    incoming_t *in = &g_in[nm->h.src_node];
    if (!in->active || nm->h.u[0] != in->got || in->got + nm->len > in->total) {
        bdr_master_fail(1, "unexpected data chunk from node %d", nm->h.src_node);
        return;
    }
    if (in->msg) {
        bd_fs_ck_add(&in->ck, nm->payload, nm->len);
        int rc =
            BD_IO_NEG(BD_FAULT_SPILL_WRITE, bd_pwrite_full(in->fd, nm->payload, nm->len, in->got));
        if (rc < 0) {
            bdr_master_fail(1, "cannot write %zu bytes of a message to %s: %s", nm->len, g_m.jobdir,
                            strerror(-rc));
            return;
        }
    } else {
        bdr_coll_remote_chunk(&in->h, in->got, nm->payload, nm->len);
    }
    in->got += nm->len;
    if (in->got == in->total) {
        in->active = 0;
        if (in->msg) {
            int rc = bd_fs_ck_write(&in->ck, in->fd, in->total);
            bd_fs_ck_free(&in->ck);
            close(in->fd);
            if (rc < 0) {
                bdr_master_fail(1, "cannot write %llu bytes of a message to %s: %s",
                                (unsigned long long)in->total, g_m.jobdir, strerror(-rc));
                return;
            }
            bdr_msg_deliver(in->dst_world, in->msg);
            in->msg = NULL;
        } else {
            bdr_coll_remote_done(&in->h);
        }
    }
}

/* A collective piece too large to travel inline starts arriving. */
void bdr_node_expect_chunks(const bdr_net_hdr_t *h, uint64_t total)
{
    incoming_t *in = &g_in[h->src_node];
    in->active = 1;
    in->h = *h;
    in->total = total;
    in->got = 0;
    in->msg = NULL;
    in->fd = -1;
    if (!total) {
        in->active = 0;
        bdr_coll_remote_done(h);
    }
}

/* ---------------------------------------------------------------- job control */

void bdr_node_abort_all(int code, const char *msg)
{
    if (g_aborting || g_m.nnodes <= 1)
        return;
    g_aborting = 1;
    bdr_net_hdr_t h = {.type = BDR_NH_ABORT, .src_node = g_m.node};
    h.a[0] = code;
    for (int n = 0; n < g_m.nnodes; n++)
        if (n != g_m.node)
            bdr_net_send(n, &h, msg, strlen(msg) + 1);
    bdr_net_flush();
}

/* All our ranks are gone: tell the others, and finish when they all have. */
int bdr_node_all_done(void)
{
    if (!g_sent_done) {
        g_sent_done = 1;
        bdr_net_hdr_t h = {.type = BDR_NH_DONE, .src_node = g_m.node};
        for (int n = 0; n < g_m.nnodes; n++)
            if (n != g_m.node)
                bdr_node_send(n, &h, NULL, 0);
        g_done_from[g_m.node] = 1;
        g_ndone++;
    }
    progress_out();
    bdr_net_flush();
    for (int n = 0; n < g_m.nnodes; n++)
        if (g_q_head[n])
            return 0; /* our DONE (or data before it) has not left yet */
    return g_ndone == g_m.nnodes && bdr_net_idle();
}

/* 1 when nm was kept (net_direct.c holds it), else it may be freed. */
static int dispatch(bdr_net_msg_t *nm)
{
    if (nm->h.type != BDR_NH_DEADLOCK && nm->h.type != BDR_NH_ABORT)
        g_net_recv++;
    int own = bdr_direct_dispatch(nm);
    if (own)
        return own == 2;
    switch (nm->h.type) {
    case BDR_NH_MSG: recv_msg(nm); break;
    case BDR_NH_CHUNK: recv_chunk(nm); break;
    case BDR_NH_CANCEL: recv_cancel(&nm->h); break;
    case BDR_NH_CANCEL_ANS: recv_cancel_answer(&nm->h); break;
    case BDR_NH_SYNC: {
        slave_t *s = bdr_master_slave_by_world(nm->h.a[0]);
        if (s)
            bdr_msg_sync_matched(s, nm->h.u[0]);
        break;
    }
    case BDR_NH_COLL: bdr_coll_remote(nm); break;
    case BDR_NH_DEADLOCK: bdr_deadlock_net(nm); break;
    case BDR_NH_NAME: bdr_name_remote(nm); break;
    case BDR_NH_RMT_PUT:
    case BDR_NH_RMT_ACK:
    case BDR_NH_RMT_GET:
    case BDR_NH_RMT_DATA:
    case BDR_NH_RMT_DROP:
    case BDR_NH_RMT_RETURN: return bdr_remote_net(nm); /* 1: it keeps nm */
    case BDR_NH_DONE:
        bdr_remote_node_done(nm->h.src_node);
        if (!g_done_from[nm->h.src_node]) {
            g_done_from[nm->h.src_node] = 1;
            g_ndone++;
        }
        break;
    case BDR_NH_ABORT:
        g_aborting = 1;
        nm->payload[nm->len ? nm->len - 1 : 0] = 0;
        if (!g_m.stopping) {
            /* The node that failed has said why; we only say we stop. */
            g_m.stopping = 1;
            g_m.job_failed = nm->h.a[0] ? nm->h.a[0] : 1;
            bdr_master_kill_all();
        }
        break;
    default:
        bdr_master_fail(1, "unknown message %u from the master of node %d", nm->h.type,
                        nm->h.src_node);
    }
    return 0;
}

/* Returns how many messages came in. */
int bdr_node_progress(void)
{
    if (g_m.nnodes <= 1)
        return 0;
    progress_out();
    bdr_net_msg_t *nm;
    int n = 0;
    while (n < 256 && (nm = bdr_net_poll())) {
        if (!dispatch(nm))
            bdr_net_msg_free(nm);
        n++;
    }
    progress_out();
    bdr_direct_poll();
    bdr_net_flush();
    return n;
}

int bdr_node_quiet(void)
{
    if (g_m.nnodes <= 1)
        return 1;
    for (int n = 0; n < g_m.nnodes; n++)
        if (g_q_head[n] || g_in[n].active)
            return 0;
    return !bdr_direct_busy() && bdr_net_idle();
}

/* Memory the transport holds for other nodes (queued payloads and messages
 * in flight), counted against this node's budget. */
uint64_t bdr_node_transient_bytes(void)
{
    if (g_m.nnodes <= 1)
        return 0;
    uint64_t t = g_inline_queued + bdr_net_held() + bdr_direct_held_bytes();
    for (int n = 0; n < g_m.nnodes; n++)
        t += bdr_net_pending(n);
    return t - bdr_net_lent_bytes(); /* lent memory: counted by its lender */
}
