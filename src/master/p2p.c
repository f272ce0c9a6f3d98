/* Point-to-point requests in the master, answered from the message store
 * (msgstore.c). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "master.h"
#include "mpi.h"

static void count_send(slave_t *s, const bd_req_t *r)
{
    int file = (r->flags & BD_SEND_FILE) != 0;
    atomic_fetch_add_explicit(&s->slot->stats[file ? BD_STAT_SENDS_FILE : BD_STAT_SENDS_MEM], 1,
                              memory_order_relaxed);
    atomic_fetch_add_explicit(&s->slot->stats[file ? BD_STAT_BYTES_FILE : BD_STAT_BYTES_MEM],
                              r->nbytes, memory_order_relaxed);
}

void bdr_p2p_req_send(slave_t *s, const bd_req_t *r)
{
    if (r->peer < 0 || r->peer >= (int)g_m.hdr->world_size) {
        bdr_master_fail(1, "rank %d sent to world rank %d, which does not exist", s->world,
                        r->peer);
        return;
    }
    if (!(r->flags & BD_SEND_FILE) && r->nbytes > g_m.hdr->window) {
        bdr_master_fail(1, "rank %d sent %llu bytes through a %llu-byte window", s->world,
                        (unsigned long long)r->nbytes, (unsigned long long)g_m.hdr->window);
        return;
    }
    uint64_t sync_id = 0;
    if (r->flags & BD_SEND_SYNC) {
        sync_id = bdr_msg_sync_new(s);
        if (sync_id)
            s->slot->resp.arg[0] = (int64_t)sync_id;
    }
    count_send(s, r);
    if (!bdr_master_slave_by_world(r->peer)) {
        bdr_node_send_p2p(s, r, sync_id);
        bdr_sched_respond(s);
        return;
    }
    msg_t *m = calloc(1, sizeof *m);
    if (!m) {
        bdr_master_fail(1, "master out of memory buffering a message from rank %d", s->world);
        return;
    }
    m->ctx = r->ctx;
    m->src = r->myrank;
    m->tag = r->tag;
    m->src_world = s->world;
    m->nbytes = r->nbytes;
    m->sync_id = sync_id;
    m->send_id = r->rid;
    if (r->flags & BD_SEND_FILE) {
        m->in_file = 1;
        m->file_num = (uint64_t)r->arg[0];
    } else if (r->nbytes) {
        m->data = malloc(r->nbytes);
        if (!m->data) {
            free(m);
            bdr_master_fail(1, "master out of memory buffering %llu bytes from rank %d",
                            (unsigned long long)r->nbytes, s->world);
            return;
        }
        memcpy(m->data, s->win, r->nbytes);
        g_m.bytes_buffered += r->nbytes;
        if (g_m.bytes_buffered > g_m.peak_buffered)
            g_m.peak_buffered = g_m.bytes_buffered;
    }
    bdr_msg_deliver(r->peer, m);
    bdr_sched_respond(s);
}

/* Complete a posted receive whose message is bound. */
static void finish_posted(slave_t *s, precv_t *p)
{
    msg_t *m = p->bound;
    bdr_msg_unpost(s, p);
    bdr_msg_hand_over(s, m);
}

/* WAITANY/TESTANY: window holds int64 rids[n]; the answer is flag=any and
 * one byte per rid (1: its message is there) after the rids. */
static int any_bound(slave_t *s, int respond)
{
    const int64_t *rids = (const int64_t *)s->win;
    int64_t n = s->slot->req.arg[0];
    uint8_t *flags = (uint8_t *)s->win + n * 8;
    int any = 0;
    for (int64_t i = 0; i < n; i++) {
        precv_t *p = bdr_msg_posted(s, (uint64_t)rids[i]);
        int b = p && p->bound;
        any |= b;
        if (respond)
            flags[i] = (uint8_t)b;
        else if (b)
            return 1;
    }
    if (respond)
        s->slot->resp.flag = any;
    return any;
}

/* MPI_Cancel of a nonblocking send (MPI 3.1 3.8.4): its message can be
 * withdrawn while it waits unreceived in a queue of this node; once a
 * receive or a matched probe has it, the cancel fails.  (A message to a
 * rank of another node is not withdrawn: the cancel fails, which MPI
 * allows.) */
static void cancel_send(slave_t *s, const bd_req_t *r)
{
    s->slot->resp.flag = 0;
    slave_t *d = bdr_master_slave_by_world(r->peer);
    if (!d || !r->rid)
        return;
    msg_t *m = bdr_msg_take_send(d, s->world, r->rid);
    if (!m)
        return;
    if (m->sync_id) {
        sync_rec_t *rec = bdr_msg_sync_find(s, m->sync_id);
        if (rec)
            bdr_msg_sync_drop(s, rec);
    }
    bdr_msg_free(m, 1); /* with its spill file */
    s->slot->resp.flag = 1;
}

/* Answer a (matched) probe with message m. */
static void probe_answer(slave_t *s, const msg_t *m)
{
    bd_resp_t *rs = &s->slot->resp;
    rs->flag = 1;
    rs->src = m->src;
    rs->tag = m->tag;
    rs->nbytes = m->nbytes;
    rs->arg[0] = (int64_t)m->match_id;
}

void bdr_p2p_req_irecv(slave_t *s, const bd_req_t *r)
{
    bdr_msg_post(s, r->rid, r->ctx, r->peer, r->tag);
    bdr_sched_respond(s);
}

void bdr_p2p_req_recv(slave_t *s, const bd_req_t *r)
{
    /* rid 0 is the one blocking receive a slave can have outstanding. */
    precv_t *p = bdr_msg_posted(s, 0);
    if (!p) {
        msg_t *m = bdr_msg_take(s, r->ctx, r->peer, r->tag);
        if (m) {
            bdr_msg_hand_over(s, m);
            return;
        }
        p = bdr_msg_post(s, 0, r->ctx, r->peer, r->tag);
        if (!p)
            return;
    }
    if (p->bound) {
        finish_posted(s, p);
        return;
    }
    bdr_sched_block(s, BLK_RECV);
}

void bdr_p2p_req_wait(slave_t *s, const bd_req_t *r)
{
    precv_t *p = bdr_msg_posted(s, r->rid);
    if (!p) {
        s->slot->resp.status = BD_RESP_ERROR;
        bdr_sched_respond(s);
        return;
    }
    if (p->bound) {
        finish_posted(s, p);
        return;
    }
    if (r->code == BD_REQ_TEST) {
        bdr_sched_poll_failed(s);
        return;
    }
    bdr_sched_block(s, BLK_RECV);
}

void bdr_p2p_req_waitany(slave_t *s, const bd_req_t *r)
{
    if (any_bound(s, 1)) {
        bdr_sched_respond(s);
        return;
    }
    if (r->code == BD_REQ_TESTANY) {
        bdr_sched_poll_failed(s);
        return;
    }
    bdr_sched_block(s, BLK_ANY);
}

void bdr_p2p_req_probe(slave_t *s, const bd_req_t *r)
{
    msg_t *m = bdr_msg_peek(s, r->ctx, r->peer, r->tag);
    if (m) {
        bd_resp_t *rs = &s->slot->resp;
        rs->flag = 1;
        rs->src = m->src;
        rs->tag = m->tag;
        rs->nbytes = m->nbytes;
        bdr_sched_respond(s);
        return;
    }
    if (r->code == BD_REQ_IPROBE) {
        bdr_sched_poll_failed(s);
        return;
    }
    bdr_sched_block(s, BLK_PROBE);
}

void bdr_p2p_req_mprobe(slave_t *s, const bd_req_t *r)
{
    msg_t *m = bdr_msg_take(s, r->ctx, r->peer, r->tag);
    if (m) {
        /* Matched now: no receive but MRECV can have it. */
        bdr_msg_keep_matched(s, m);
        probe_answer(s, m);
        bdr_sched_respond(s);
        return;
    }
    if (r->code == BD_REQ_IMPROBE) {
        bdr_sched_poll_failed(s);
        return;
    }
    bdr_sched_block(s, BLK_PROBE);
}

void bdr_p2p_req_mrecv(slave_t *s, const bd_req_t *r)
{
    msg_t *m = bdr_msg_take_matched(s, r->rid);
    if (!m) {
        s->slot->resp.status = BD_RESP_ERROR;
        bdr_sched_respond(s);
        return;
    }
    bdr_msg_hand_over(s, m);
}

void bdr_p2p_req_cancel_send(slave_t *s, const bd_req_t *r)
{
    cancel_send(s, r);
    bdr_sched_respond(s);
}

void bdr_p2p_req_ssend_wait(slave_t *s, const bd_req_t *r)
{
    sync_rec_t *rec = bdr_msg_sync_find(s, (uint64_t)r->arg[0]);
    if (!rec || rec->matched) {
        if (rec)
            bdr_msg_sync_drop(s, rec);
        s->slot->resp.flag = 1;
        bdr_sched_respond(s);
        return;
    }
    if (r->code == BD_REQ_SSEND_TEST) {
        bdr_sched_poll_failed(s);
        return;
    }
    bdr_sched_block(s, BLK_SSEND);
}

void bdr_p2p_req_cancel(slave_t *s, const bd_req_t *r)
{
    precv_t *p = bdr_msg_posted(s, r->rid);
    if (p && !p->bound) {
        bdr_msg_unpost(s, p);
        s->slot->resp.flag = 1;
    }
    bdr_sched_respond(s);
}

int bdr_p2p_ready(slave_t *s)
{
    bd_req_t *r = &s->slot->req;
    switch (s->blk) {
    case BLK_RECV: {
        precv_t *p = bdr_msg_posted(s, r->code == BD_REQ_RECV ? 0 : r->rid);
        return p && p->bound;
    }
    case BLK_ANY: return any_bound(s, 0);
    case BLK_PROBE: return bdr_msg_peek(s, r->ctx, r->peer, r->tag) != NULL;
    case BLK_SSEND: {
        sync_rec_t *rec = bdr_msg_sync_find(s, (uint64_t)r->arg[0]);
        return !rec || rec->matched;
    }
    default: return 0;
    }
}

static void fmt_peer(char *buf, size_t len, int src, int tag)
{
    char a[32], b[32];
    if (src == MPI_ANY_SOURCE)
        snprintf(a, sizeof a, "any source");
    else
        snprintf(a, sizeof a, "rank %d", src);
    if (tag == MPI_ANY_TAG)
        snprintf(b, sizeof b, "any tag");
    else
        snprintf(b, sizeof b, "tag %d", tag);
    snprintf(buf, len, "%s, %s", a, b);
}

void bdr_p2p_describe(slave_t *s, char *buf, size_t len)
{
    bd_req_t *r = &s->slot->req;
    char who[96];
    switch (s->blk) {
    case BLK_RECV: {
        precv_t *p = bdr_msg_posted(s, r->code == BD_REQ_RECV ? 0 : r->rid);
        if (p)
            fmt_peer(who, sizeof who, p->src, p->tag);
        else
            snprintf(who, sizeof who, "?");
        snprintf(buf, len, "waits in %s for a message from %s (communicator context %d)",
                 r->code == BD_REQ_RECV ? "MPI_Recv" : "MPI_Wait", who, p ? p->ctx : -1);
        break;
    }
    case BLK_ANY:
        snprintf(buf, len, "waits in MPI_Waitany/Waitsome on %lld receive requests",
                 (long long)r->arg[0]);
        break;
    case BLK_PROBE:
        fmt_peer(who, sizeof who, r->peer, r->tag);
        snprintf(buf, len, "waits in %s for a message from %s (communicator context %d)",
                 r->code == BD_REQ_MPROBE ? "MPI_Mprobe" : "MPI_Probe", who, r->ctx);
        break;
    case BLK_SSEND:
        snprintf(buf, len, "waits in MPI_Ssend/Issend for its message to be received");
        break;
    default: snprintf(buf, len, "is blocked");
    }
}
