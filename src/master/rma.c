/* One-sided communication in the master: getting RMA service messages
 * (BD_CTX_RMA_SVC: lock, unlock, flush, operations; see src/lib/mpi/rma.c) to
 * their target rank, which applies them itself.
 *
 *  - A target that runs or waits for a run slot gets rma_pending set in its
 *    slot; it serves them before its next request.
 *  - A target blocked in MPI is woken with BD_CMD_RMA.  While it serves it
 *    counts as running (so the deadlock detector and the memory accounting
 *    leave it alone, and its sends are handled as usual); its blocked
 *    request is put aside and restored at RMA_DONE, after which it is
 *    blocked in that request again and rechecked.
 *  - RMA_NEXT hands it the first service message, like a receive. */
#include <stdlib.h>
#include <string.h>

#include "bd_log.h"
#include "master.h"

typedef struct {
    int serving;  /* woken with BD_CMD_RMA, RMA_DONE not yet received */
    int want;     /* has service messages but could not be woken yet */
    bd_req_t req; /* the request it is blocked in */
    bd_resp_t resp;
} rma_slave_t;

static int g_on;
static rma_slave_t *g_rs;

static msg_t *first_svc(slave_t *s, msg_t **prev_out)
{
    msg_t *prev = NULL;
    for (msg_t *m = s->unexp_head; m; prev = m, m = m->next)
        if (m->ctx == BD_CTX_RMA_SVC) {
            if (prev_out)
                *prev_out = prev;
            return m;
        }
    return NULL;
}

static void take_next(slave_t *s)
{
    bd_resp_t *rs = &s->slot->resp;
    msg_t *prev = NULL, *m = first_svc(s, &prev);
    if (!m) {
        rs->flag = 0;
        bdr_master_respond(s);
        return;
    }
    if (prev)
        prev->next = m->next;
    else
        s->unexp_head = m->next;
    if (s->unexp_tail == m)
        s->unexp_tail = prev;
    rs->status = BD_RESP_OK;
    rs->flag = 1;
    rs->src = m->src;
    rs->tag = m->tag;
    rs->nbytes = m->nbytes;
    if (m->in_file) {
        /* the rank reads and removes the spill file */
        rs->arg[0] = (int64_t)m->file_num;
        rs->arg[1] = m->src_world;
        rs->arg[2] = 1;
    } else if (m->nbytes) {
        memcpy(s->win, m->data, m->nbytes);
    }
    if (m->data) {
        g_m.bytes_buffered -= m->nbytes;
        free(m->data);
    }
    free(m);
    atomic_fetch_add_explicit(&s->slot->stats[BD_STAT_RECVS], 1, memory_order_relaxed);
    bdr_master_respond(s);
}

void bdr_rma_handle(slave_t *s)
{
    bd_req_t *r = &s->slot->req;
    if (!g_rs) {
        g_rs = calloc((size_t)g_m.ns, sizeof *g_rs);
        if (!g_rs) {
            bdr_master_fail(1, "master out of memory");
            return;
        }
    }
    rma_slave_t *x = &g_rs[s->idx];
    switch (r->code) {
    case BD_REQ_RMA_ENABLE:
        g_on = 1;
        bdr_master_respond(s);
        return;
    case BD_REQ_RMA_NEXT: take_next(s); return;
    case BD_REQ_RMA_DONE:
        if (!x->serving) {
            bdr_master_fail(1, "rank %d ended an RMA service it was not asked for", s->world);
            return;
        }
        /* Blocked in its request again, as before the service. */
        x->serving = 0;
        s->slot->req = x->req;
        s->slot->resp = x->resp;
        s->state = SL_BLOCKED;
        g_m.nrunning--;
        bdr_master_poke(s);
        if (g_m.hdr->job.mem_strategy == BD_MEMS_ARAW &&
            atomic_load_explicit(&s->slot->mem_resident, memory_order_relaxed) > 0)
            bdr_memacct_unload(s);
        return;
    default:
        bdr_master_fail(1, "rank %d sent an unknown RMA request %u", s->world, r->code);
        return;
    }
}

void bdr_rma_poll(void)
{
    if (!g_on || !g_rs)
        return;
    for (int i = 0; i < g_m.ns; i++) {
        slave_t *s = &g_m.slaves[i];
        rma_slave_t *x = &g_rs[i];
        if (x->serving || s->exited || (!s->poke && !x->want))
            continue;
        if (s->state == SL_RUNNING || s->state == SL_RUNNABLE) {
            x->want = 0;
            if (!atomic_load_explicit(&s->slot->rma_pending, memory_order_relaxed) &&
                first_svc(s, NULL))
                atomic_store_explicit(&s->slot->rma_pending, 1, memory_order_release);
            continue;
        }
        if (s->state != SL_BLOCKED || !first_svc(s, NULL)) {
            x->want = 0;
            continue;
        }
        if (s->unload_sent || atomic_load_explicit(&s->slot->cmd, memory_order_acquire)) {
            x->want = 1; /* after the unload */
            continue;
        }
        x->want = 0;
        x->serving = 1;
        x->req = s->slot->req;
        x->resp = s->slot->resp;
        s->state = SL_RUNNING;
        g_m.nrunning++;
        atomic_store_explicit(&s->slot->cmd, BD_CMD_RMA, memory_order_relaxed);
        bdr_master_respond(s); /* wakes it; it sees the command, not an answer */
    }
}
