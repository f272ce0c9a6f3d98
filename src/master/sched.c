/* The scheduler of one node (bdmpi.txt 5.2): at most -nr ranks hold a run
 * slot; the others are blocked in MPI or wait in the run queue.  Request
 * handlers call this module to answer, block or wake a rank; it never calls
 * them.  Resuming a rank (re-answering its request) is the dispatcher's
 * work (master.c), after bdr_sched_next() has given it a slot. */
#include "master.h"

void bdr_sched_respond(slave_t *s)
{
    if (s->mute) { /* one step of a request answered as a whole (coll_small.c) */
        s->muted++;
        return;
    }
    bd_slot_t *sl = s->slot;
    uint32_t v = atomic_load_explicit(&sl->resp_seq, memory_order_relaxed) + 1;
    atomic_store_explicit(&sl->resp_seq, v, memory_order_release);
    bd_futex_wake(&sl->resp_seq, 1);
}

/* The run-slot hint ranks read (single-copy sends go only to running ranks). */
static void set_running(slave_t *s, int on)
{
    atomic_store_explicit(&s->slot->running, (uint32_t)on, memory_order_relaxed);
}

/* The hint that s waits for a run slot with its wait over (bd_slot_t.queued). */
static void set_queued(slave_t *s, int on)
{
    atomic_store_explicit(&s->slot->queued, (uint32_t)on, memory_order_relaxed);
}

void bdr_sched_make_runnable(slave_t *s)
{
    if (s->state == SL_RUNNABLE)
        return;
    s->state = SL_RUNNABLE;
    s->runnable_order = ++g_m.order_counter;
    s->bypassed = 0;
    s->passed = 0;
    g_m.nrunnable++;
    set_queued(s, s->blk != BLK_YIELD);
}

void bdr_sched_block(slave_t *s, blk_t why)
{
    if (s->state == SL_RUNNING) {
        g_m.nrunning--;
        bdr_memacct_turn_end(s);
    }
    set_running(s, 0);
    s->blk = why;
    atomic_fetch_add_explicit(&s->slot->stats[BD_STAT_BLOCKS], 1, memory_order_relaxed);
    if (why == BLK_YIELD) {
        atomic_fetch_add_explicit(&s->slot->stats[BD_STAT_YIELDS], 1, memory_order_relaxed);
        bdr_sched_make_runnable(s);
    } else {
        s->state = SL_BLOCKED;
    }
    /* ARAW: a rank that gives up its run slot writes its memory out (sbma.txt 3.1). */
    if (g_m.hdr->job.mem_strategy == BD_MEMS_ARAW &&
        atomic_load_explicit(&s->slot->mem_resident, memory_order_relaxed) > 0)
        bdr_memacct_unload(s);
}

void bdr_sched_poll_failed(slave_t *s)
{
    atomic_fetch_add_explicit(&s->slot->stats[BD_STAT_POLLS], 1, memory_order_relaxed);
    s->polled = 1; /* it waits for others: nobody waits for its memory (memacct.c) */
    if (!s->resuming && g_m.nrunnable > 0)
        bdr_sched_block(s, BLK_YIELD);
    else
        bdr_sched_respond(s);
}

void bdr_sched_inited(slave_t *s)
{
    g_m.ninit_pending--;
    s->blk = BLK_INIT;
    bdr_sched_make_runnable(s);
}

void bdr_sched_finalized(slave_t *s)
{
    set_running(s, 0);
    s->state = SL_FINALIZED;
    g_m.nrunning--;
}

sl_state_t bdr_sched_exited(slave_t *s)
{
    bdr_asleep_back(s);
    if (s->state == SL_RUNNING)
        g_m.nrunning--;
    else if (s->state == SL_RUNNABLE)
        g_m.nrunnable--;
    if (s->state == SL_PREINIT)
        g_m.ninit_pending--;
    sl_state_t was = s->state;
    s->state = SL_EXITED;
    set_running(s, 0);
    set_queued(s, 0);
    /* A request for a slot it made, or one made for it, dies with it. */
    uint64_t g = atomic_load_explicit(&g_m.hdr->slot_gift, memory_order_relaxed);
    if (g && ((int)(g >> 32) - 1 == s->idx || (int)(g & 0xffffffffu) - 1 == s->idx))
        atomic_compare_exchange_strong(&g_m.hdr->slot_gift, &g, 0);
    return was;
}

void bdr_sched_lend(slave_t *s)
{
    /* a service turn, not one -nr 1 would have run first (memacct.c
     * reserved_for_elders keeps nothing for it) */
    s->turn_seq = UINT64_MAX;
    set_running(s, 1);
    s->state = SL_RUNNING;
    g_m.nrunning++;
}

void bdr_sched_lend_end(slave_t *s)
{
    set_running(s, 0);
    s->state = SL_BLOCKED;
    g_m.nrunning--;
    bdr_sched_poke(s);
    if (g_m.hdr->job.mem_strategy == BD_MEMS_ARAW &&
        atomic_load_explicit(&s->slot->mem_resident, memory_order_relaxed) > 0)
        bdr_memacct_unload(s);
}

/* How many times ranks whose wait is over may go before a rank that only
 * yielded a poll, once it is queued.  Without a bound, ranks that block on
 * every call and are woken at once (origins spinning on compare-and-swap
 * at a target that serves them) keep the slot from a poller for ever, and
 * the poller may be what they wait for (it holds their lock and polled its
 * own window: test rma_poll at -ns 8 -nr 1). */
#define BDR_YIELD_PASSED_MAX (g_m.ns + 4)

/* 0: a poller passed over too often; 1: a rank whose wait is over; 2: a
 * poller. */
static int queue_class(const slave_t *s)
{
    if (s->blk != BLK_YIELD)
        return 1;
    return s->passed >= BDR_YIELD_PASSED_MAX ? 0 : 2;
}

/* The run queue's choice: ranks whose wait is over come before ranks that
 * only yielded a poll (unless one was passed over BDR_YIELD_PASSED_MAX
 * times: it goes first); among ranks whose wait is over, the one with most
 * memory resident (bdmpi.txt 5.2); then FIFO.  A rank being unloaded
 * waits. */
static slave_t *pick_runnable(int (*want)(const slave_t *))
{
    slave_t *best = NULL;
    for (int i = 0; i < g_m.ns; i++) {
        slave_t *s = &g_m.slaves[i];
        /* a command it has not acknowledged would swallow the answer */
        if (s->state != SL_RUNNABLE || s->unload_sent || s->pf_sent || (want && !want(s)))
            continue;
        if (!best) {
            best = s;
            continue;
        }
        int sc = queue_class(s), bc = queue_class(best);
        if (sc != bc) {
            if (sc < bc)
                best = s;
            continue;
        }
        uint64_t sr = atomic_load_explicit(&s->slot->resident, memory_order_relaxed);
        uint64_t br = atomic_load_explicit(&best->slot->resident, memory_order_relaxed);
        if (sc == 1 && sr != br) {
            if (sr > br)
                best = s;
            continue;
        }
        if (s->runnable_order < best->runnable_order)
            best = s;
    }
    return best;
}

/* The rank a running one spins for (hdr->slot_gift), if it may have the
 * next slot: it waits for one with its wait over, and its spinner still
 * runs.  NULL otherwise. */
static slave_t *gift_target(uint64_t g)
{
    int by = (int)(g >> 32) - 1, to = (int)(g & 0xffffffffu) - 1;
    if (!g || by < 0 || to < 0 || by >= g_m.ns || to >= g_m.ns)
        return NULL;
    slave_t *s = &g_m.slaves[to];
    if (g_m.slaves[by].state != SL_RUNNING || s->state != SL_RUNNABLE || s->blk == BLK_YIELD ||
        s->unload_sent || s->pf_sent)
        return NULL;
    return s;
}

/* How often the run queue's own choice may be passed over for a rank that
 * a running one spins for, before it goes first anyway: a bound on how
 * long the pairing below can make any rank wait. */
#define BDR_BYPASS_MAX 4

/* The run queue's choice, unless a running rank spins until a queued one
 * sends to it (hdr->slot_gift): then that one, so that the two run at
 * once and exchange without the master (pairs exchanging at -ns 8 -nr 2
 * otherwise settle into handing one slot back and forth through the
 * master on every message).  The choice passed over counts it, and after
 * BDR_BYPASS_MAX times goes first. */
static slave_t *pick_next(void)
{
    slave_t *s = pick_runnable(NULL);
    uint64_t g = atomic_load_explicit(&g_m.hdr->slot_gift, memory_order_acquire);
    slave_t *t = gift_target(g);
    if (!s || !t || (t != s && s->bypassed >= BDR_BYPASS_MAX))
        return s;
    if (t != s)
        s->bypassed++;
    /* Honoured: another running rank may ask for its own peer now. */
    atomic_compare_exchange_strong(&g_m.hdr->slot_gift, &g, 0);
    return t;
}

/* The slot stays free while the rank that would get it does not fit in
 * memory beside the running ones (memacct.c bdr_memacct_corun_fits): two
 * working sets that do not fit together made both load part of theirs and
 * give it back to each other.  It gets the slot when a running rank blocks,
 * and always when none runs (or all that do sleep outside MPI).  Looked at before pick_next, whose choice
 * consumes a running rank's request for its peer (slot_gift). */
/* the queue's choice, when it may run only with its grants capped */
static slave_t *g_capped_q;

static int corun_gate(void)
{
    g_capped_q = NULL;
    /* a rank asleep outside MPI lent its slot (asleep.c): it may wait for
     * the one held here */
    if (g_m.nrunning - g_m.nasleep <= 0)
        return 0;
    slave_t *q = pick_runnable(NULL);
    int fit = q ? bdr_memacct_corun_fits(q) : 1;
    if (fit == BDR_CORUN_CAPPED)
        g_capped_q = q;
    if (fit)
        return 0;
    slave_t *t = gift_target(atomic_load_explicit(&g_m.hdr->slot_gift, memory_order_acquire));
    if (t && t != q && bdr_memacct_corun_fits(t))
        return 0; /* pick_next may take that one */
    if (!q->corun_held) {
        q->corun_held = 1;
        atomic_fetch_add_explicit(&q->slot->stats[BD_STAT_CORUN_HELD], 1, memory_order_relaxed);
    }
    if (!g_m.corun_gated) {
        g_m.corun_gated = 1;
        g_m.corun_since = bdr_master_now();
    }
    return 1;
}

static void corun_ungate(void)
{
    if (g_m.corun_gated)
        g_m.corun_idle_s += bdr_master_now() - g_m.corun_since;
    g_m.corun_gated = 0;
}

slave_t *bdr_sched_next(void)
{
    /* slots of ranks asleep outside MPI are lent (asleep.c) */
    if (g_m.stopping || g_m.nrunning - g_m.nasleep >= g_m.nr) {
        corun_ungate();
        return NULL;
    }
    if (corun_gate())
        return NULL;
    corun_ungate();
    slave_t *s = pick_next();
    if (!s)
        return NULL;
    s->corun_held = 0;
    if (g_m.nrunnable > 1)
        for (int i = 0; i < g_m.ns; i++) {
            slave_t *o = &g_m.slaves[i];
            if (o != s && o->state == SL_RUNNABLE && o->blk == BLK_YIELD)
                o->passed++;
        }
    bdr_memacct_turn_begin(s);
    s->capped = s == g_capped_q;
    if (s->capped)
        atomic_fetch_add_explicit(&s->slot->stats[BD_STAT_CORUN_CAPPED], 1, memory_order_relaxed);
    set_queued(s, 0);
    g_m.nrunnable--;
    g_m.nrunning++;
    s->state = SL_RUNNING;
    set_running(s, 1);
    return s;
}

slave_t *bdr_sched_peek(int (*want)(const slave_t *)) { return pick_runnable(want); }

void bdr_sched_publish(void)
{
    atomic_store_explicit(&g_m.hdr->runnable_waiting, (uint32_t)g_m.nrunnable,
                          memory_order_relaxed);
    int held = g_m.nrunning - g_m.nasleep;
    /* a slot kept free for memory is not free for a sender's reader (send_cma.c) */
    atomic_store_explicit(&g_m.hdr->free_slots,
                          (uint32_t)(held < g_m.nr && !g_m.corun_gated ? g_m.nr - held : 0),
                          memory_order_relaxed);
}
