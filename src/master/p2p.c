/* Point-to-point in the master: per destination, messages that arrived
 * before a matching receive was posted (unexpected, in arrival order) and
 * receives posted before their message arrived (in posting order).  A
 * message is bound to the first posted receive it matches, else queued;
 * a receive takes the first queued message it matches.  That is MPI's
 * matching rule, and since one sender's requests reach the master in
 * program order, it also gives MPI's non-overtaking order. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bd_log.h"
#include "master.h"
#include "mpi.h"

static int matches(int ctx, int src, int tag, const msg_t *m)
{
    return m->ctx == ctx && (src == MPI_ANY_SOURCE || src == m->src) &&
           (tag == MPI_ANY_TAG || tag == m->tag);
}

static sync_rec_t *sync_find(slave_t *s, uint64_t id)
{
    for (int i = 0; i < s->nsyncs; i++)
        if (s->syncs[i].id == id)
            return &s->syncs[i];
    return NULL;
}

void bdr_p2p_sync_matched(slave_t *snd, uint64_t sync_id)
{
    sync_rec_t *rec = sync_find(snd, sync_id);
    if (rec) {
        rec->matched = 1;
        bdr_sched_poke(snd);
    }
}

/* A synchronous send completes once its message is matched. */
static void note_matched(msg_t *m)
{
    if (!m->sync_id)
        return;
    slave_t *snd = bdr_master_slave_by_world(m->src_world);
    if (snd)
        bdr_p2p_sync_matched(snd, m->sync_id);
    else
        bdr_node_sync_matched(m->src_world, m->sync_id);
}

static precv_t *find_posted(slave_t *s, uint64_t rid)
{
    for (precv_t *p = s->posted_head; p; p = p->next)
        if (p->rid == rid)
            return p;
    return NULL;
}

static void unlink_posted(slave_t *s, precv_t *p)
{
    precv_t **pp = &s->posted_head, *prev = NULL;
    while (*pp && *pp != p) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    if (!*pp)
        return;
    *pp = p->next;
    if (s->posted_tail == p)
        s->posted_tail = prev;
}

/* Remove and return the first unexpected message matching (ctx, src, tag). */
static msg_t *take_unexpected(slave_t *s, int ctx, int src, int tag, int remove)
{
    msg_t *prev = NULL;
    for (msg_t *m = s->unexp_head; m; prev = m, m = m->next) {
        if (!matches(ctx, src, tag, m))
            continue;
        if (remove) {
            if (prev)
                prev->next = m->next;
            else
                s->unexp_head = m->next;
            if (s->unexp_tail == m)
                s->unexp_tail = prev;
            m->next = NULL;
        }
        return m;
    }
    return NULL;
}

static void free_msg(msg_t *m, int remove_file)
{
    if (m->data) {
        g_m.bytes_buffered -= m->nbytes;
        free(m->data);
    }
    if (m->in_file && remove_file) {
        char path[BD_PATH_MAX + 64];
        bd_spill_path(path, sizeof path, g_m.jobdir, m->src_world, m->file_num);
        unlink(path);
    }
    free(m);
}

/* Hand message m to slave s as the answer to its receive. */
static void deliver(slave_t *s, msg_t *m)
{
    bd_resp_t *rs = &s->slot->resp;
    rs->status = BD_RESP_OK;
    rs->flag = 1;
    rs->src = m->src;
    rs->tag = m->tag;
    rs->nbytes = m->nbytes;
    if (m->in_file) {
        rs->arg[0] = (int64_t)m->file_num;
        rs->arg[1] = m->src_world;
        rs->arg[2] = 1;
    } else if (m->nbytes) {
        memcpy(s->win, m->data, m->nbytes);
    }
    atomic_fetch_add_explicit(&s->slot->stats[BD_STAT_RECVS], 1, memory_order_relaxed);
    free_msg(m, 0); /* the receiver reads and removes the spill file */
    bdr_sched_respond(s);
}

/* Message m (from here or another node) arrives for world rank dst of this
 * node: bind it to the first matching posted receive, else queue it. */
void bdr_p2p_arrive(int dst_world, msg_t *m)
{
    slave_t *d = bdr_master_slave_by_world(dst_world);
    if (!d || d->exited) {
        free_msg(m, 1); /* nobody can ever receive it */
        return;
    }
    precv_t *p = d->posted_head;
    for (; p; p = p->next)
        if (!p->bound && matches(p->ctx, p->src, p->tag, m))
            break;
    if (p) {
        p->bound = m;
        note_matched(m);
    } else {
        if (d->unexp_tail)
            d->unexp_tail->next = m;
        else
            d->unexp_head = m;
        d->unexp_tail = m;
    }
    bdr_sched_poke(d);
}

static uint64_t new_sync(slave_t *s)
{
    if (s->nsyncs == s->capsyncs) {
        int cap = s->capsyncs ? 2 * s->capsyncs : 8;
        sync_rec_t *n = realloc(s->syncs, (size_t)cap * sizeof *n);
        if (!n) {
            bdr_master_fail(1, "master out of memory");
            return 0;
        }
        s->syncs = n;
        s->capsyncs = cap;
    }
    uint64_t id = ++g_m.next_sync_id;
    s->syncs[s->nsyncs++] = (sync_rec_t){id, 0};
    s->slot->resp.arg[0] = (int64_t)id;
    return id;
}

static void count_send(slave_t *s, const bd_req_t *r)
{
    int file = (r->flags & BD_SEND_FILE) != 0;
    atomic_fetch_add_explicit(&s->slot->stats[file ? BD_STAT_SENDS_FILE : BD_STAT_SENDS_MEM], 1,
                              memory_order_relaxed);
    atomic_fetch_add_explicit(&s->slot->stats[file ? BD_STAT_BYTES_FILE : BD_STAT_BYTES_MEM],
                              r->nbytes, memory_order_relaxed);
}

static void handle_send(slave_t *s, bd_req_t *r)
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
    uint64_t sync_id = (r->flags & BD_SEND_SYNC) ? new_sync(s) : 0;
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
    bdr_p2p_arrive(r->peer, m);
    bdr_sched_respond(s);
}

static precv_t *post_recv(slave_t *s, uint64_t rid, bd_req_t *r)
{
    precv_t *p = calloc(1, sizeof *p);
    if (!p) {
        bdr_master_fail(1, "master out of memory posting a receive for rank %d", s->world);
        return NULL;
    }
    p->rid = rid;
    p->ctx = r->ctx;
    p->src = r->peer;
    p->tag = r->tag;
    p->bound = take_unexpected(s, r->ctx, r->peer, r->tag, 1);
    if (p->bound)
        note_matched(p->bound);
    if (s->posted_tail)
        s->posted_tail->next = p;
    else
        s->posted_head = p;
    s->posted_tail = p;
    return p;
}

/* Complete a posted receive whose message is bound. */
static void finish_posted(slave_t *s, precv_t *p)
{
    msg_t *m = p->bound;
    unlink_posted(s, p);
    free(p);
    deliver(s, m);
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
        precv_t *p = find_posted(s, (uint64_t)rids[i]);
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
    msg_t *prev = NULL;
    for (msg_t *m = d->unexp_head; m; prev = m, m = m->next) {
        if (m->src_world != s->world || m->send_id != r->rid)
            continue;
        if (prev)
            prev->next = m->next;
        else
            d->unexp_head = m->next;
        if (d->unexp_tail == m)
            d->unexp_tail = prev;
        if (m->sync_id) {
            sync_rec_t *rec = sync_find(s, m->sync_id);
            if (rec)
                *rec = s->syncs[--s->nsyncs];
        }
        free_msg(m, 1); /* with its spill file */
        s->slot->resp.flag = 1;
        return;
    }
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

int bdr_p2p_handle(slave_t *s)
{
    bd_req_t *r = &s->slot->req;
    bd_resp_t *rs = &s->slot->resp;
    switch (r->code) {
    case BD_REQ_SEND: handle_send(s, r); return 1;
    case BD_REQ_IRECV:
        post_recv(s, r->rid, r);
        bdr_sched_respond(s);
        return 1;
    case BD_REQ_RECV: {
        /* rid 0 is the one blocking receive a slave can have outstanding. */
        precv_t *p = find_posted(s, 0);
        if (!p) {
            msg_t *m = take_unexpected(s, r->ctx, r->peer, r->tag, 1);
            if (m) {
                note_matched(m);
                deliver(s, m);
                return 1;
            }
            p = post_recv(s, 0, r);
            if (!p)
                return 1;
        }
        if (p->bound) {
            finish_posted(s, p);
            return 1;
        }
        bdr_sched_block(s, BLK_RECV);
        return 0;
    }
    case BD_REQ_WAIT:
    case BD_REQ_TEST: {
        precv_t *p = find_posted(s, r->rid);
        if (!p) {
            rs->status = BD_RESP_ERROR;
            bdr_sched_respond(s);
            return 1;
        }
        if (p->bound) {
            finish_posted(s, p);
            return 1;
        }
        if (r->code == BD_REQ_TEST) {
            bdr_sched_poll_failed(s);
            return 1;
        }
        bdr_sched_block(s, BLK_RECV);
        return 0;
    }
    case BD_REQ_WAITANY:
    case BD_REQ_TESTANY:
        if (any_bound(s, 1)) {
            bdr_sched_respond(s);
            return 1;
        }
        if (r->code == BD_REQ_TESTANY) {
            bdr_sched_poll_failed(s);
            return 1;
        }
        bdr_sched_block(s, BLK_ANY);
        return 0;
    case BD_REQ_PROBE:
    case BD_REQ_IPROBE: {
        msg_t *m = take_unexpected(s, r->ctx, r->peer, r->tag, 0);
        if (m) {
            rs->flag = 1;
            rs->src = m->src;
            rs->tag = m->tag;
            rs->nbytes = m->nbytes;
            bdr_sched_respond(s);
            return 1;
        }
        if (r->code == BD_REQ_IPROBE) {
            bdr_sched_poll_failed(s);
            return 1;
        }
        bdr_sched_block(s, BLK_PROBE);
        return 0;
    }
    case BD_REQ_MPROBE:
    case BD_REQ_IMPROBE: {
        msg_t *m = take_unexpected(s, r->ctx, r->peer, r->tag, 1);
        if (m) {
            /* Matched now: no receive but MRECV can have it. */
            note_matched(m);
            m->match_id = ++g_m.next_sync_id;
            m->next = s->matched;
            s->matched = m;
            probe_answer(s, m);
            bdr_sched_respond(s);
            return 1;
        }
        if (r->code == BD_REQ_IMPROBE) {
            bdr_sched_poll_failed(s);
            return 1;
        }
        bdr_sched_block(s, BLK_PROBE);
        return 0;
    }
    case BD_REQ_MRECV: {
        msg_t **pp = &s->matched;
        while (*pp && (*pp)->match_id != r->rid)
            pp = &(*pp)->next;
        msg_t *m = *pp;
        if (!m) {
            rs->status = BD_RESP_ERROR;
            bdr_sched_respond(s);
            return 1;
        }
        *pp = m->next;
        m->next = NULL;
        deliver(s, m);
        return 1;
    }
    case BD_REQ_CANCEL_SEND:
        cancel_send(s, r);
        bdr_sched_respond(s);
        return 1;
    case BD_REQ_SSEND_WAIT:
    case BD_REQ_SSEND_TEST: {
        sync_rec_t *rec = sync_find(s, (uint64_t)r->arg[0]);
        if (!rec || rec->matched) {
            if (rec)
                *rec = s->syncs[--s->nsyncs];
            rs->flag = 1;
            bdr_sched_respond(s);
            return 1;
        }
        if (r->code == BD_REQ_SSEND_TEST) {
            bdr_sched_poll_failed(s);
            return 1;
        }
        bdr_sched_block(s, BLK_SSEND);
        return 0;
    }
    case BD_REQ_CANCEL: {
        precv_t *p = find_posted(s, r->rid);
        if (p && !p->bound) {
            unlink_posted(s, p);
            free(p);
            rs->flag = 1;
        }
        bdr_sched_respond(s);
        return 1;
    }
    case BD_REQ_YIELD: bdr_sched_respond(s); return 1;
    default: bdr_master_fail(1, "rank %d sent an unknown request %u", s->world, r->code); return 1;
    }
}

int bdr_p2p_ready(slave_t *s)
{
    bd_req_t *r = &s->slot->req;
    switch (s->blk) {
    case BLK_RECV: {
        precv_t *p = find_posted(s, r->code == BD_REQ_RECV ? 0 : r->rid);
        return p && p->bound;
    }
    case BLK_ANY: return any_bound(s, 0);
    case BLK_PROBE: return take_unexpected(s, r->ctx, r->peer, r->tag, 0) != NULL;
    case BLK_SSEND: {
        sync_rec_t *rec = sync_find(s, (uint64_t)r->arg[0]);
        return !rec || rec->matched;
    }
    default: return 0;
    }
}

void bdr_p2p_resume(slave_t *s)
{
    s->resuming = 1;
    bdr_p2p_handle(s);
    s->resuming = 0;
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
        precv_t *p = find_posted(s, r->code == BD_REQ_RECV ? 0 : r->rid);
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

void bdr_p2p_cleanup(slave_t *s)
{
    while (s->unexp_head) {
        msg_t *m = s->unexp_head;
        s->unexp_head = m->next;
        free_msg(m, 1);
    }
    s->unexp_tail = NULL;
    while (s->posted_head) {
        precv_t *p = s->posted_head;
        s->posted_head = p->next;
        if (p->bound)
            free_msg(p->bound, 1);
        free(p);
    }
    s->posted_tail = NULL;
    while (s->matched) {
        msg_t *m = s->matched;
        s->matched = m->next;
        free_msg(m, 1);
    }
}
