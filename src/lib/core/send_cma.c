/* Single-copy sends inside a node (docs/design.md, "Point-to-point without
 * the master"): the sender's side.  The receiver's side, reading the
 * payload with process_vm_readv as it matches, is in match.c. */
#include <stdlib.h>
#include <string.h>

#include "bd_mbox.h"
#include "core.h"
#include "dt.h"
#include "request.h"
#include "spin.h"

static bd_mbox_t *mbox_of(int world)
{
    bd_shm_hdr_t *h = bdl_g.hdr;
    return bd_slot_mbox(h, bd_shm_slot(h, (uint32_t)bd_world_slot(h, world)));
}

/* A large message to a running rank of the node stays in our memory until
 * the receiver has read it (once, with process_vm_readv, straight into the
 * posted buffer when a receive is posted, else into its unexpected queue
 * at once).  No acknowledgement: every consumer (the receiver's drain, the
 * master emptying a ring) reads a single-copy payload before it moves the
 * ring's consumer position past the entry, so the position passing the
 * end of our entry says it has been read.  A receiver that does not look at its
 * mailbox (its ring's consumer position stands still), or a wait of ours
 * in the master, turns the entry in place into a spill file: same place in
 * the ring, so the order holds, and we never wait for a receive (sends stay
 * buffered, bdmpi.txt 5.3) nor leave memory the manager may unload exposed. */
typedef struct {
    uint64_t id;
    int dst;
    int acked; /* read (or dst is gone) */
    const void *buf;
    uint64_t n;
    uint64_t end; /* the ring position just past our entry */
    uint64_t tail_seen, t_tail;
} cma_send_t;

static cma_send_t *g_cs;
static int g_ncs, g_capcs;

/* The master never tells a rank whose send buffers others are reading to
 * give its memory back (memacct.c): a reader would wait on that rank. */
static void publish_cma_out(void)
{
    atomic_store_explicit(&bdl_g.slot->cma_out, (uint32_t)g_ncs, memory_order_release);
}
static int g_settling;

/* How long a sender waits for a receiver that will read soon (reader_near)
 * but does not drain, before it writes the spill file instead: 1 ms, plus
 * as long as writing the file and reading it back would take (about 1 ns
 * a byte here), so waiting never costs more than twice what the file
 * would.  A receiver busy copying an earlier large message does not drain
 * meanwhile; with a fixed 1 ms, 2-8 MiB exchanges went to files a third
 * of the time.  A receiver that cannot run soon: 100 us. */
#define BDL_CMA_STALE_RUNNING_NS 1000000ull
#define BDL_CMA_STALE_NS_PER_BYTE 1
#define BDL_CMA_STALE_AWAY_NS 100000ull
/* A collective in the ranks (mpi/coll_local.c) waits longer for a running
 * receiver: it is in the same call or about to be, and its mailbox stands
 * still only while it copies or folds another rank's data, or while the
 * machine's other load keeps it off its CPU (with 1 ms, half the sends of
 * a 1 MiB Allreduce at -nr 2 went to spill files on a loaded machine). */
#define BDL_CMA_STALE_COLL_NS 20000000ull

static cma_send_t *cma_find(uint64_t id)
{
    for (int i = 0; i < g_ncs; i++)
        if (g_cs[i].id == id)
            return &g_cs[i];
    return NULL;
}

/* c is complete: count it as what it became. */
static void cma_count(const cma_send_t *c)
{
    _Atomic uint64_t *st = bdl_g.slot->stats;
    atomic_fetch_add_explicit(&st[c->acked ? BD_STAT_SENDS_DIRECT : BD_STAT_SENDS_FILE], 1,
                              memory_order_relaxed);
    atomic_fetch_add_explicit(&st[c->acked ? BD_STAT_BYTES_DIRECT : BD_STAT_BYTES_FILE], c->n,
                              memory_order_relaxed);
}

void bdl_p2p_cma_forget(uint64_t id)
{
    cma_send_t *c = cma_find(id);
    if (c) {
        *c = g_cs[--g_ncs];
        publish_cma_out();
    }
}

/* dst will read soon: it holds a run slot, or it sleeps on its mailbox
 * and a run slot is free for it (the master resumes it at our ring). */
static int reader_near(int dst)
{
    bd_shm_hdr_t *h = bdl_g.hdr;
    bd_slot_t *d = bd_shm_slot(h, (uint32_t)bd_world_slot(h, dst));
    if (atomic_load_explicit(&d->running, memory_order_relaxed))
        return 1;
    return atomic_load_explicit(&bd_slot_mbox(h, d)->sleeping, memory_order_relaxed) &&
           atomic_load_explicit(&h->free_slots, memory_order_relaxed) > 0;
}

int bdl_p2p_reader_near(int dst) { return reader_near(dst); }

int bdl_p2p_cma_usable(int dst)
{
    if (dst == bdl_g.world_rank || !atomic_load_explicit(&bdl_g.slot->cma_ok, memory_order_relaxed))
        return 0;
    bd_shm_hdr_t *h = bdl_g.hdr;
    bd_slot_t *d = bd_shm_slot(h, (uint32_t)bd_world_slot(h, dst));
    return atomic_load_explicit(&d->cma_ok, memory_order_relaxed) && reader_near(dst);
}

uint64_t bdl_p2p_cma_post(int dst, const bd_mentry_t *proto, const void *buf)
{
    bd_mentry_t e;
    memcpy(&e, proto, sizeof e);
    e.flags |= BD_ME_CMA;
    e.file_num = (uint64_t)(uintptr_t)buf;
    /* Tracked only once it is in the ring: waiting for room (in the
     * master) settles the sends already tracked, never this one. */
    uint64_t end = 0;
    int gone = bdl_p2p_post_end(dst, &e, &end) < 0;
    if (g_ncs == g_capcs) {
        g_capcs = g_capcs ? 2 * g_capcs : 16;
        cma_send_t *cs = realloc(g_cs, (size_t)g_capcs * sizeof *g_cs);
        if (!cs)
            bdl_fatal(MPI_ERR_NO_MEM, "out of memory (%zu bytes) for single-copy sends",
                      (size_t)g_capcs * sizeof *g_cs);
        g_cs = cs;
    }
    cma_send_t *c = &g_cs[g_ncs++];
    publish_cma_out();
    *c = (cma_send_t){
        .id = e.send_id, .dst = dst, .acked = gone, .buf = buf, .n = e.nbytes, .end = end};
    c->tail_seen = atomic_load_explicit(&mbox_of(dst)->tail, memory_order_relaxed);
    c->t_tail = bdl_now_ns();
    return e.send_id;
}

/* Turn c's entry into a spill file where it stands; 0 if a consumer has it.
 * The entry is claimed (BUSY) before the file is written, so a consumer
 * already reading it is never duplicated, and one that comes meanwhile
 * waits for the file. */
static int cma_to_file(cma_send_t *c)
{
    bd_mbox_t *mb = mbox_of(c->dst);
    bd_mbox_lock(mb);
    bd_mentry_t *e = bd_mbox_find(mb, bdl_g.world_rank, c->id);
    uint32_t st = BD_ME_READY;
    int mine = e && atomic_compare_exchange_strong_explicit(
                        &e->state, &st, BD_ME_BUSY, memory_order_acq_rel, memory_order_relaxed);
    bd_mbox_unlock(mb);
    if (!mine)
        return 0;
    uint64_t file_num;
    bdl_spill_write(c->buf, c->n, bdl_dt_byte(), c->buf, c->n, c->dst, &file_num);
    int flow = bdl_g.hdr->job.p2p_tokens != 0; /* counted as any spill-file message */
    if (flow)
        atomic_fetch_add_explicit(&bdl_g.slot->flow_out, c->n, memory_order_relaxed);
    e->flags = (e->flags & ~BD_ME_CMA) | BD_SEND_FILE | (flow ? BD_ME_FLOW : 0);
    e->file_num = file_num;
    atomic_store_explicit(&e->state, BD_ME_READY, memory_order_release);
    return 1;
}

/* One look at c: 1 when it is complete.  patient: the receiver will read
 * it as part of the same collective (BDL_CMA_STALE_COLL_NS). */
static int cma_progress_as(cma_send_t *c, int force, int patient)
{
    if (c->acked)
        return 1;
    bd_mbox_t *mb = mbox_of(c->dst);
    /* Acquire: the consumer's read of our memory is over. */
    uint64_t tail = atomic_load_explicit(&mb->tail, memory_order_acquire);
    if ((int64_t)(tail - c->end) >= 0) {
        c->acked = 1;
        return 1;
    }
    uint64_t now = bdl_now_ns();
    if (tail != c->tail_seen) {
        c->tail_seen = tail;
        c->t_tail = now;
    }
    uint64_t stale = !reader_near(c->dst) ? BDL_CMA_STALE_AWAY_NS
                     : patient            ? BDL_CMA_STALE_COLL_NS + c->n * BDL_CMA_STALE_NS_PER_BYTE
                               : BDL_CMA_STALE_RUNNING_NS + c->n * BDL_CMA_STALE_NS_PER_BYTE;
    if (force || now - c->t_tail > stale)
        return cma_to_file(c);
    return 0;
}

static int cma_progress(cma_send_t *c, int force) { return cma_progress_as(c, force, 0); }

static int cma_done_as(uint64_t id, int blocking, int patient)
{
    bdl_spin_t sp; /* no peer: a single-copy sender must not sleep in the master */
    bdl_spin_start(&sp, -1);
    for (unsigned i = 1;; i++) {
        bdl_p2p_drain();
        cma_send_t *c = cma_find(id);
        if (!c)
            return 1;
        if (cma_progress_as(c, 0, patient)) {
            cma_count(c);
            bdl_p2p_cma_forget(id);
            return 1;
        }
        if (!blocking)
            return 0;
        (void)bdl_spin_step(&sp, i);
    }
}

int bdl_p2p_cma_done(uint64_t id, int blocking) { return cma_done_as(id, blocking, 0); }

void bdl_p2p_cma_wait_coll(uint64_t id) { (void)cma_done_as(id, 1, 1); }

void bdl_p2p_settle(void)
{
    if (!g_ncs || g_settling)
        return;
    g_settling = 1;
    bdl_spin_t sp;
    bdl_spin_start(&sp, -1);
    for (unsigned k = 1; g_ncs; k++) {
        if (k > 1)
            (void)bdl_spin_step(&sp, k);
        bdl_p2p_drain();
        for (int i = 0; i < g_ncs;) {
            if (cma_progress(&g_cs[i], 1)) {
                cma_count(&g_cs[i]);
                g_cs[i] = g_cs[--g_ncs];
                publish_cma_out();
            } else
                i++;
        }
    }
    g_settling = 0;
}
