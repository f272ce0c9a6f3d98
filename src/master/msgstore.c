/* The message store: messages the master holds for a local rank until it
 * takes them.  Point-to-point messages only pass through: those from other
 * nodes go on into the rank's mailbox (mbox.c), where the rank matches
 * them.  One-sided service messages (BD_CTX_RMA_SVC) stay here, in arrival
 * order, until the rank takes them with RMA_NEXT (rma.c). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bd_mbox.h"
#include "master.h"
#include "mpi.h"

int bdr_spill_charge(uint64_t n, int src_world, int dst_world, const char *what)
{
    uint64_t total;
    if (bd_spill_charge(g_m.hdr, n, &total) == 0)
        return 0;
    char w[64], msg[BD_PATH_MAX + 256];
    if (dst_world >= 0)
        snprintf(w, sizeof w, "a message to rank %d", dst_world);
    else
        snprintf(w, sizeof w, "%s", what);
    bd_spill_quota_msg(msg, sizeof msg, g_m.hdr, src_world, n, w, total);
    bdr_master_fail(1, "%s", msg);
    return -1;
}

void bdr_msg_free(msg_t *m, int remove_file)
{
    if (m->data) {
        g_m.bytes_buffered -= m->nbytes;
        free(m->data);
    }
    if (m->in_file && remove_file) {
        char path[BD_PATH_MAX + 64];
        bd_spill_path(path, sizeof path, g_m.jobdir, m->src_world, m->file_num);
        bd_spill_unlink(g_m.hdr, path, m->nbytes);
    }
    free(m);
}

static int matches(int ctx, int src, int tag, const msg_t *m)
{
    return m->ctx == ctx && (src == MPI_ANY_SOURCE || src == m->src) &&
           (tag == MPI_ANY_TAG || tag == m->tag);
}

static msg_t *find(slave_t *s, int ctx, int src, int tag, int remove)
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

msg_t *bdr_msg_peek(slave_t *s, int ctx, int src, int tag) { return find(s, ctx, src, tag, 0); }

msg_t *bdr_msg_take(slave_t *s, int ctx, int src, int tag) { return find(s, ctx, src, tag, 1); }

void bdr_msg_deliver(int dst_world, msg_t *m)
{
    slave_t *d = bdr_master_slave_by_world(dst_world);
    if (!d || d->exited) {
        bdr_msg_free(m, 1); /* nobody can ever receive it */
        return;
    }
    if (m->tag == BD_TAG_REVOKE && (m->ctx & BD_CTX_REVOKE_NOTICE)) {
        /* and the notice goes on into the mailbox */
        atomic_fetch_add_explicit(&d->slot->revoke_seq, 1, memory_order_release);
        bdr_comm_revoke(m->ctx & ~BD_CTX_REVOKE_NOTICE);
    }
    if (m->ctx != BD_CTX_RMA_SVC) {
        bd_mentry_t e = {.kind = BD_ME_MSG,
                         .flags =
                             (m->in_file ? BD_SEND_FILE : 0) | (m->sync_id ? BD_ME_REMOTE_SYNC : 0),
                         .ctx = m->ctx,
                         .src = m->src,
                         .tag = m->tag,
                         .src_world = m->src_world,
                         .nbytes = m->nbytes,
                         .send_id = m->send_id,
                         .sync_id = m->sync_id,
                         .file_num = m->file_num};
        bdr_mbox_push(d, &e, m->data);
        bdr_msg_free(m, 0);
        return;
    }
    if (d->unexp_tail)
        d->unexp_tail->next = m;
    else
        d->unexp_head = m;
    d->unexp_tail = m;
    bdr_sched_poke(d);
}

void bdr_msg_sync_matched(slave_t *snd, uint64_t sync_id)
{
    bd_mentry_t e = {.kind = BD_ME_ACK, .src_world = -1, .sync_id = sync_id};
    bdr_mbox_push(snd, &e, NULL);
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

void bdr_msg_cleanup(slave_t *s)
{
    while (s->unexp_head) {
        msg_t *m = s->unexp_head;
        s->unexp_head = m->next;
        bdr_msg_free(m, 1);
    }
    s->unexp_tail = NULL;
    bdr_mbox_close(s);
}
