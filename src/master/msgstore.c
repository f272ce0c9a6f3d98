/* The message store: per local rank, messages that arrived before a
 * matching receive was posted (unexpected, in arrival order), receives
 * posted before their message arrived (in posting order), messages taken
 * by a matched probe (waiting for MPI_Mrecv), and the records of its
 * synchronous sends.  A message is bound to the first posted receive it
 * matches, else queued; a receive takes the first queued message it
 * matches.  That is MPI's matching rule, and since one sender's requests
 * reach the master in program order, it also gives MPI's non-overtaking
 * order.  Whenever a message is matched, its synchronous sender is told. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "master.h"
#include "mpi.h"

static int matches(int ctx, int src, int tag, const msg_t *m)
{
    return m->ctx == ctx && (src == MPI_ANY_SOURCE || src == m->src) &&
           (tag == MPI_ANY_TAG || tag == m->tag);
}

/* ---------------------------------------------------------------- synchronous sends */

sync_rec_t *bdr_msg_sync_find(slave_t *s, uint64_t id)
{
    for (int i = 0; i < s->nsyncs; i++)
        if (s->syncs[i].id == id)
            return &s->syncs[i];
    return NULL;
}

uint64_t bdr_msg_sync_new(slave_t *s)
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
    return id;
}

void bdr_msg_sync_drop(slave_t *s, sync_rec_t *rec) { *rec = s->syncs[--s->nsyncs]; }

void bdr_msg_sync_matched(slave_t *snd, uint64_t sync_id)
{
    sync_rec_t *rec = bdr_msg_sync_find(snd, sync_id);
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
        bdr_msg_sync_matched(snd, m->sync_id);
    else
        bdr_node_sync_matched(m->src_world, m->sync_id);
}

/* ---------------------------------------------------------------- messages */

void bdr_msg_free(msg_t *m, int remove_file)
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

/* The first unexpected message matching (ctx, src, tag); with remove, it
 * leaves the queue. */
static msg_t *find_unexpected(slave_t *s, int ctx, int src, int tag, int remove)
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

msg_t *bdr_msg_peek(slave_t *s, int ctx, int src, int tag)
{
    return find_unexpected(s, ctx, src, tag, 0);
}

msg_t *bdr_msg_take(slave_t *s, int ctx, int src, int tag)
{
    msg_t *m = find_unexpected(s, ctx, src, tag, 1);
    if (m)
        note_matched(m);
    return m;
}

msg_t *bdr_msg_take_send(slave_t *d, int src_world, uint64_t send_id)
{
    msg_t *prev = NULL;
    for (msg_t *m = d->unexp_head; m; prev = m, m = m->next) {
        if (m->src_world != src_world || m->send_id != send_id)
            continue;
        if (prev)
            prev->next = m->next;
        else
            d->unexp_head = m->next;
        if (d->unexp_tail == m)
            d->unexp_tail = prev;
        return m;
    }
    return NULL;
}

void bdr_msg_keep_matched(slave_t *s, msg_t *m)
{
    m->match_id = ++g_m.next_sync_id;
    m->next = s->matched;
    s->matched = m;
}

msg_t *bdr_msg_take_matched(slave_t *s, uint64_t match_id)
{
    msg_t **pp = &s->matched;
    while (*pp && (*pp)->match_id != match_id)
        pp = &(*pp)->next;
    msg_t *m = *pp;
    if (!m)
        return NULL;
    *pp = m->next;
    m->next = NULL;
    return m;
}

void bdr_msg_deliver(int dst_world, msg_t *m)
{
    slave_t *d = bdr_master_slave_by_world(dst_world);
    if (!d || d->exited) {
        bdr_msg_free(m, 1); /* nobody can ever receive it */
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

void bdr_msg_hand_over(slave_t *s, msg_t *m)
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
    bdr_msg_free(m, 0); /* the receiver reads and removes the spill file */
    bdr_sched_respond(s);
}

/* ---------------------------------------------------------------- posted receives */

precv_t *bdr_msg_post(slave_t *s, uint64_t rid, int ctx, int src, int tag)
{
    precv_t *p = calloc(1, sizeof *p);
    if (!p) {
        bdr_master_fail(1, "master out of memory posting a receive for rank %d", s->world);
        return NULL;
    }
    p->rid = rid;
    p->ctx = ctx;
    p->src = src;
    p->tag = tag;
    p->bound = bdr_msg_take(s, ctx, src, tag);
    if (s->posted_tail)
        s->posted_tail->next = p;
    else
        s->posted_head = p;
    s->posted_tail = p;
    return p;
}

precv_t *bdr_msg_posted(slave_t *s, uint64_t rid)
{
    for (precv_t *p = s->posted_head; p; p = p->next)
        if (p->rid == rid)
            return p;
    return NULL;
}

void bdr_msg_unpost(slave_t *s, precv_t *p)
{
    precv_t **pp = &s->posted_head, *prev = NULL;
    while (*pp && *pp != p) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    if (*pp) {
        *pp = p->next;
        if (s->posted_tail == p)
            s->posted_tail = prev;
    }
    free(p);
}

void bdr_msg_cleanup(slave_t *s)
{
    while (s->unexp_head) {
        msg_t *m = s->unexp_head;
        s->unexp_head = m->next;
        bdr_msg_free(m, 1);
    }
    s->unexp_tail = NULL;
    while (s->posted_head) {
        precv_t *p = s->posted_head;
        s->posted_head = p->next;
        if (p->bound)
            bdr_msg_free(p->bound, 1);
        free(p);
    }
    s->posted_tail = NULL;
    while (s->matched) {
        msg_t *m = s->matched;
        s->matched = m->next;
        bdr_msg_free(m, 1);
    }
}
