/* Busy waiting between ranks (issue 12): how long a rank that waits for
 * another may spin before it sleeps in the master, and when spinning would
 * only keep the awaited rank from running.  Used by the matching engine
 * (match.c) for mailbox events and single-copy reads. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"
#include "request.h"
#include "spin.h"

/* The CPU world rank w's process runs on, or waits to run on (field 39
 * of /proc/PID/stat); -1 if unknown. */
static int cpu_of(int w)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat",
             (int)bd_shm_slot(bdl_g.hdr, (uint32_t)bd_world_slot(bdl_g.hdr, w))->pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    char *p = strrchr(buf, ')'); /* the command may hold spaces */
    if (!p)
        return -1;
    int field = 2;
    for (p++; *p && field < 39; p++)
        if (*p == ' ')
            field++;
    return field == 39 ? atoi(p) : -1;
}

void bdl_spin_start(bdl_spin_t *s, int peer)
{
    *s = (bdl_spin_t){.t0 = bdl_now_ns(), .peer = peer};
}

/* One step of a busy wait; 1 when it should stop because the rank it waits
 * for shares our CPU.  The scheduler sometimes wakes two ranks onto one CPU
 * (their master's): a rank spinning for its peer's answer then kept that
 * peer from running until the spin ended (80-215 us per 8-byte ping-pong at
 * -ns 2 -nr 2; 220 MB/s against 3.7 GB/s for 8 KiB at -ns 8 -nr 2).  So a
 * wait for a known rank that has lasted 20 us looks once where that rank
 * is (/proc, some microseconds), and if it is on our CPU, the waiter
 * sleeps instead (in the master, which the peer's message rings).  Not
 * sched_yield: with other busy processes on the CPU, a yield may hand one
 * of them its whole time slice (2 ms per ping-pong with two CPU hogs). */
#define BDL_COLOC_CHECK_NS 20000
int bdl_spin_step(bdl_spin_t *s, unsigned i)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if ((i & 63) || s->checked || s->peer < 0 || s->peer == bdl_g.world_rank ||
        !bdl_p2p_local(s->peer) || bdl_now_ns() - s->t0 < BDL_COLOC_CHECK_NS)
        return 0;
    s->checked = 1;
    int cpu = cpu_of(s->peer);
    return cpu >= 0 && cpu == sched_getcpu();
}

/* Spinning is worth it while no rank waits for a run slot, or while the
 * one rank we wait for (world rank `from`, -1: any) holds one: its answer
 * comes in microseconds, where giving our slot away costs two wake-ups
 * through the master now and two more to get it back. */
int bdl_spin_worth(int from)
{
    bd_shm_hdr_t *h = bdl_g.hdr;
    if (!atomic_load_explicit(&h->runnable_waiting, memory_order_relaxed))
        return 1;
    if (from < 0 || from == bdl_g.world_rank || !bdl_p2p_local(from))
        return 0;
    bd_slot_t *d = bd_shm_slot(h, (uint32_t)bd_world_slot(h, from));
    return atomic_load_explicit(&d->running, memory_order_relaxed) != 0;
}

static bd_slot_t *slot_of(int w)
{
    return bd_shm_slot(bdl_g.hdr, (uint32_t)bd_world_slot(bdl_g.hdr, w));
}

static uint64_t my_slot_word(void)
{
    return (uint64_t)(bd_world_slot(bdl_g.hdr, bdl_g.world_rank) + 1);
}

static uint64_t gift_word(int from)
{
    return my_slot_word() << 32 | (uint64_t)(bd_world_slot(bdl_g.hdr, from) + 1);
}

/* The request is taken only when spinning is not worth it by the rules
 * above (a rank waits for a slot, `from` does not run): a pair of ranks
 * exchanging messages at -ns 8 -nr 2 whose two ranks did not hold a slot
 * at once otherwise handed one slot back and forth through the master on
 * every message (60 us per exchange against about 1 us for a pair that
 * runs at once), and never got out of it.  Not when another rank spins
 * for us: it holds its slot until we act, and we would hold ours until a
 * third rank acts, so the slot `from` needs could come only from a rank
 * that neither of us waits for. */
/* d waits for a run slot with its wait over, or will as soon as the
 * master looks: it sleeps in the master waiting for its mailbox, which has
 * moved since (we have just sent to it, and the master has not yet seen
 * our ring). */
static int peer_ready(bd_slot_t *d)
{
    if (atomic_load_explicit(&d->queued, memory_order_relaxed))
        return 1;
    bd_mbox_t *mb = bd_slot_mbox(bdl_g.hdr, d);
    /* Its request is stable while it sleeps; a torn read only costs a spin. */
    return atomic_load_explicit(&mb->sleeping, memory_order_acquire) &&
           d->req.code == BD_REQ_P2P_WAIT &&
           atomic_load_explicit(&mb->event_seq, memory_order_acquire) != (uint32_t)d->req.arg[0];
}

int bdl_spin_gift_take(int from)
{
    bd_shm_hdr_t *h = bdl_g.hdr;
    if (from < 0 || from == bdl_g.world_rank || !bdl_p2p_local(from) || h->job.nr < 2)
        return 0;
    bd_slot_t *d = slot_of(from);
    /* Only for a rank that waits for us: the two of us then exchange.  A
     * rank waiting for a third one (a ring) would only block again. */
    if (atomic_load_explicit(&d->awaits, memory_order_relaxed) != (uint32_t)bdl_g.world_rank + 1 ||
        atomic_load_explicit(&d->running, memory_order_relaxed) || !peer_ready(d) ||
        atomic_load_explicit(&bdl_g.slot->spinners, memory_order_relaxed))
        return 0;
    uint64_t none = 0;
    return atomic_compare_exchange_strong(&h->slot_gift, &none, gift_word(from));
}

int bdl_spin_gift_state(int from)
{
    bd_slot_t *d = slot_of(from);
    if (atomic_load_explicit(&d->running, memory_order_relaxed))
        return 2;
    return peer_ready(d) && !atomic_load_explicit(&bdl_g.slot->spinners, memory_order_relaxed);
}

void bdl_spin_gift_drop(void)
{
    bd_shm_hdr_t *h = bdl_g.hdr;
    uint64_t g = atomic_load_explicit(&h->slot_gift, memory_order_relaxed);
    /* The master may have honoured it (and cleared it), and another rank
     * taken it since: only our own goes. */
    if (g >> 32 == my_slot_word())
        atomic_compare_exchange_strong(&h->slot_gift, &g, 0);
}

void bdl_spin_await(int from)
{
    atomic_store_explicit(&bdl_g.slot->awaits, from < 0 ? 0 : (uint32_t)from + 1,
                          memory_order_relaxed);
}

void bdl_spin_mark(int from, int on)
{
    if (from < 0 || from == bdl_g.world_rank || !bdl_p2p_local(from))
        return;
    bd_slot_t *d = slot_of(from);
    if (on)
        atomic_fetch_add_explicit(&d->spinners, 1, memory_order_relaxed);
    else
        atomic_fetch_sub_explicit(&d->spinners, 1, memory_order_relaxed);
}

static int moved(bd_mbox_t *mb, uint32_t seen)
{
    return atomic_load_explicit(&mb->event_seq, memory_order_acquire) != seen ||
           atomic_load_explicit(&mb->overflow, memory_order_relaxed);
}

/* While `from` runs, or nobody waits for a slot, as bdl_spin_worth says;
 * else, if `from` waits for a slot, we may ask the master to give it the
 * next one while we keep ours (bdl_spin_gift_take), so the two of us run
 * at once. */
int bdl_spin_event(bd_mbox_t *mb, uint32_t seen, int from, uint64_t spin_ns)
{
    int gift = 0;
    if (!bdl_spin_worth(from) && !(gift = bdl_spin_gift_take(from)))
        return 0;
    bdl_spin_t sp;
    /* No look at where `from` is while it does not run (spin.c) */
    bdl_spin_start(&sp, gift ? -1 : from);
    uint64_t t0 = sp.t0;
    int got = 0;
    bdl_spin_mark(from, 1);
    for (unsigned i = 1;; i++) {
        if (moved(mb, seen)) {
            got = 1;
            break;
        }
        if (bdl_spin_step(&sp, i))
            break;
        if (i & 63)
            continue;
        uint64_t now = bdl_now_ns();
        if (now - t0 > spin_ns)
            break;
        if (gift) {
            int st = bdl_spin_gift_state(from);
            if (!st)
                break;
            if (st == 2) { /* it got the slot: now as for any running peer */
                bdl_spin_gift_drop();
                gift = 0;
                bdl_spin_start(&sp, from);
            }
        } else if (!bdl_spin_worth(from)) {
            break;
        }
    }
    if (gift)
        bdl_spin_gift_drop();
    bdl_spin_mark(from, 0);
    return got;
}
