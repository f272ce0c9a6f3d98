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

#include "master.h"
#include "mpi.h"

typedef struct {
    int serving;  /* woken with BD_CMD_RMA, RMA_DONE not yet received */
    bd_req_t req; /* the request it is blocked in */
    bd_resp_t resp;
    /* ... and what it waits for there: a request the service makes and
     * waits in (room in its origin's full ring for an answer) sets its
     * own, and the rank then came back blocked in its collective with
     * blk BLK_ROOM, which the collective's completion never wakes (a get
     * epoch of more than a ring of answers, then MPI_Bcast: test
     * rma_ring_full). */
    blk_t blk;
    uint32_t wait_seen;
    int room_dst;
    uint64_t room_need;
    struct coll *coll;
    int coll_rank;
} rma_slave_t;

static int g_on;
static rma_slave_t *g_rs;

/* Service messages are the target's unexpected messages on BD_CTX_RMA_SVC. */
static int has_svc(slave_t *s)
{
    return bdr_msg_peek(s, BD_CTX_RMA_SVC, MPI_ANY_SOURCE, MPI_ANY_TAG) != NULL;
}

/* RMA_NEXT: answered like a receive of the first service message, or flag 0. */
static void take_next(slave_t *s)
{
    msg_t *m = bdr_msg_take(s, BD_CTX_RMA_SVC, MPI_ANY_SOURCE, MPI_ANY_TAG);
    if (!m) {
        s->slot->resp.flag = 0;
        bdr_sched_respond(s);
        return;
    }
    bdr_msg_hand_over(s, m); /* a spill file is read and removed by the rank */
}

/* The per-rank state, made at the first RMA request; NULL when the job fails. */
static rma_slave_t *state_of(slave_t *s)
{
    if (!g_rs) {
        g_rs = calloc((size_t)g_m.nslots, sizeof *g_rs);
        if (!g_rs) {
            bdr_master_fail(1, "master out of memory");
            return NULL;
        }
    }
    return &g_rs[s->idx];
}

void bdr_rma_req_enable(slave_t *s, const bd_req_t *r)
{
    (void)r;
    if (!state_of(s))
        return;
    g_on = 1;
    bdr_sched_respond(s);
}

void bdr_rma_req_next(slave_t *s, const bd_req_t *r)
{
    (void)r;
    if (state_of(s))
        take_next(s);
}

void bdr_rma_req_done(slave_t *s, const bd_req_t *r)
{
    (void)r;
    rma_slave_t *x = state_of(s);
    if (!x)
        return;
    if (!x->serving) {
        bdr_master_fail(1, "rank %d ended an RMA service it was not asked for", s->world);
        return;
    }
    /* Blocked in its request again, as before the service. */
    x->serving = 0;
    s->slot->req = x->req;
    s->slot->resp = x->resp;
    s->blk = x->blk;
    s->wait_seen = x->wait_seen;
    s->room_dst = x->room_dst;
    s->room_need = x->room_need;
    s->coll = x->coll;
    s->coll_rank = x->coll_rank;
    bdr_sched_lend_end(s); /* pokes it: its wait is checked again */
}

/* Every round, every rank with service messages waiting: level-triggered,
 * not by its poke.  A poke is consumed by whoever looks first (a poll's
 * YIELD rechecks the blocked ranks before this runs), and a rank that was
 * running when its message came, and had already looked at rma_pending
 * before blocking, must still be served once blocked; otherwise its
 * origin waits for ever (mpi4py.util.sync at -ns 4 -nr 2, test rma_poll).
 * has_svc is the head of a list that holds only service messages: O(1). */
void bdr_rma_poll(void)
{
    if (!g_on || !g_rs)
        return;
    for (int i = 0; i < g_m.ns; i++) {
        slave_t *s = &g_m.slaves[i];
        rma_slave_t *x = &g_rs[i];
        if (x->serving || s->exited || !has_svc(s))
            continue;
        if (s->state == SL_RUNNING || s->state == SL_RUNNABLE) {
            if (!atomic_load_explicit(&s->slot->rma_pending, memory_order_relaxed))
                atomic_store_explicit(&s->slot->rma_pending, 1, memory_order_release);
            continue;
        }
        if (s->state != SL_BLOCKED)
            continue;
        /* After an unload or another command: a later round serves it. */
        if (s->unload_sent || atomic_load_explicit(&s->slot->cmd, memory_order_acquire))
            continue;
        /* Not in the middle of a send that waits for room in a full ring:
         * its answers would overtake that message (a target running its
         * service before a request answers get k, waits for room, and was
         * woken to serve get k+1: the origin took k+1's answer for k's;
         * test rma_ring_full at -nr 2).  The ring's owner drains it or
         * waits, and then the send goes on without us. */
        if (s->blk == BLK_ROOM)
            continue;
        x->serving = 1;
        x->req = s->slot->req;
        x->resp = s->slot->resp;
        x->blk = s->blk;
        x->wait_seen = s->wait_seen;
        x->room_dst = s->room_dst;
        x->room_need = s->room_need;
        x->coll = s->coll;
        x->coll_rank = s->coll_rank;
        bdr_sched_lend(s);
        atomic_store_explicit(&s->slot->cmd, BD_CMD_RMA, memory_order_relaxed);
        bdr_sched_respond(s); /* wakes it; it sees the command, not an answer */
    }
}
