/* Point-to-point sends that pass through the master: to ranks of other
 * nodes, and one-sided service messages (BD_CTX_RMA_SVC, kept in the
 * message store for rma.c).  Messages between ranks of this node go
 * straight into the receiver's mailbox (mbox.c). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "master.h"
#include "mpi.h"

int bdr_outq_pending(slave_t *s)
{
    bd_slot_t *sl = s->slot;
    return atomic_load_explicit(&sl->ob_head, memory_order_acquire) !=
           atomic_load_explicit(&sl->ob_tail, memory_order_relaxed);
}

void bdr_outq_take(slave_t *s)
{
    bd_slot_t *sl = s->slot;
    const uint64_t hs = sizeof(bd_oentry_t);
    /* Cleared before head is read: a send appended after that rings again. */
    atomic_store_explicit(&sl->ob_bell, 0, memory_order_seq_cst);
    uint64_t head = atomic_load_explicit(&sl->ob_head, memory_order_seq_cst);
    uint64_t tail = atomic_load_explicit(&sl->ob_tail, memory_order_relaxed);
    if (head - tail > BD_OUTQ_BYTES) {
        bdr_master_fail(1, "rank %d: its queue of sends is corrupt", s->world);
        return;
    }
    while (tail != head) {
        uint64_t off = tail % BD_OUTQ_BYTES;
        if (BD_OUTQ_BYTES - off < hs) { /* too little left for a header: skipped */
            tail += BD_OUTQ_BYTES - off;
            continue;
        }
        bd_oentry_t e;
        memcpy(&e, sl->outq + off, sizeof e);
        if (e.size < hs || (e.size & 7) || e.size > BD_OUTQ_BYTES - off || e.size > head - tail ||
            (e.dst >= 0 && e.nbytes > e.size - hs)) {
            bdr_master_fail(1, "rank %d: its queue of sends is corrupt", s->world);
            return;
        }
        if (e.dst >= 0) {
            if (e.dst >= (int)g_m.hdr->world_size && !g_m.hdr->nspawn) {
                bdr_master_fail(1, "rank %d sent to world rank %d, which does not exist", s->world,
                                e.dst);
                return;
            }
            if (bdr_master_slave_by_world(e.dst) || bdr_node_of_world(e.dst) == g_m.node) {
                bdr_master_fail(1, "rank %d queued a send to world rank %d, not on another node",
                                s->world, e.dst);
                return;
            }
            bdr_node_send_small(s, &e, sl->outq + off + hs);
        }
        tail += e.size;
    }
    atomic_store_explicit(&sl->ob_tail, tail, memory_order_release);
}

void bdr_p2p_req_send(slave_t *s, const bd_req_t *r)
{
    if (r->peer < 0 || (r->peer >= (int)g_m.hdr->world_size && !g_m.hdr->nspawn)) {
        bdr_master_fail(1, "rank %d sent to world rank %d, which does not exist", s->world,
                        r->peer);
        return;
    }
    if (!(r->flags & (BD_SEND_FILE | BD_SEND_PULL)) && r->nbytes > g_m.hdr->window) {
        bdr_master_fail(1, "rank %d sent %llu bytes through a %llu-byte window", s->world,
                        (unsigned long long)r->nbytes, (unsigned long long)g_m.hdr->window);
        return;
    }
    uint64_t sync_id = r->flags & BD_SEND_SYNC ? (uint64_t)r->arg[1] : 0;
    if ((r->flags & BD_SEND_PULL) && !bdr_master_slave_by_world(r->peer) &&
        bdr_node_of_world(r->peer) != g_m.node) {
        bdr_direct_send(s, r, sync_id); /* answered once its data has been read */
        return;
    }
    if (r->flags & BD_SEND_PULL) {
        bdr_master_fail(1,
                        "rank %d sent %llu bytes from its memory to world rank %d, which is "
                        "not on another node",
                        s->world, (unsigned long long)r->nbytes, r->peer);
        return;
    }
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
