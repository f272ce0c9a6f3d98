/* The node's memory budget (sbma.txt 4.5, the load/unload/release/proceed
 * protocol).  Ranks ask before memory becomes resident; the master grants
 * the request when the node stays within its budget, otherwise it first
 * tells blocked ranks to unload (running ranks are never unloaded under
 * them).  Under ARAW a rank is also told to unload whenever it blocks.
 * Resident bytes are counted in each rank's slot; the master's own
 * buffered messages count too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bd_log.h"
#include "master.h"

static uint64_t meminfo_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return 0;
    char line[256];
    unsigned long long kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
            break;
    fclose(f);
    return (uint64_t)kb * 1024;
}

uint64_t bdr_memacct_default_budget(void) { return meminfo_available() / 4 * 3; }

static uint64_t node_resident(void)
{
    uint64_t t = g_m.bytes_buffered + bdr_node_transient_bytes() + bdr_coll_staging_bytes();
    for (int i = 0; i < g_m.ns; i++) {
        slave_t *s = &g_m.slaves[i];
        if (!s->exited)
            t += atomic_load_explicit(&s->slot->mem_resident, memory_order_relaxed);
    }
    return t;
}

static void mem_answer(slave_t *s, int status)
{
    bd_slot_t *sl = s->slot;
    if (status == 0) {
        atomic_fetch_add_explicit(&sl->mem_resident, s->mem_want, memory_order_relaxed);
        atomic_fetch_add_explicit(&sl->stats[BD_STAT_MEM_ACQUIRES], 1, memory_order_relaxed);
    }
    atomic_store_explicit(&sl->mem_resp_status, status, memory_order_relaxed);
    atomic_store_explicit(&sl->mem_resp_seq, s->seen_mem_req, memory_order_release);
    bd_futex_wake(&sl->mem_resp_seq, 1);
    s->mem_pending = 0;
    uint64_t now = node_resident();
    if (now > g_m.peak_node_resident)
        g_m.peak_node_resident = now;
}

void bdr_memacct_unload(slave_t *s)
{
    if (s->unload_sent || s->exited)
        return;
    s->unload_sent = 1;
    g_m.nunloading++;
    atomic_store_explicit(&s->slot->cmd, BD_CMD_UNLOAD, memory_order_relaxed);
    bdr_sched_respond(s); /* wakes it; it sees the command, not an answer */
}

/* Unloading under a slave is only possible while it waits in a request. */
static int can_unload(slave_t *s)
{
    return !s->exited && !s->unload_sent && (s->state == SL_BLOCKED || s->state == SL_RUNNABLE) &&
           s->blk != BLK_INIT &&
           atomic_load_explicit(&s->slot->mem_resident, memory_order_relaxed) > 0;
}

static slave_t *oldest_pending(void)
{
    slave_t *best = NULL;
    for (int i = 0; i < g_m.ns; i++) {
        slave_t *s = &g_m.slaves[i];
        if (s->mem_pending && !s->exited && (!best || s->mem_order < best->mem_order))
            best = s;
    }
    return best;
}

void bdr_memacct_poll(void)
{
    uint32_t waiting = 0;
    for (int i = 0; i < g_m.ns; i++) {
        slave_t *s = &g_m.slaves[i];
        if (s->exited)
            continue;
        uint32_t seq = atomic_load_explicit(&s->slot->mem_req_seq, memory_order_acquire);
        if (seq != s->seen_mem_req) {
            s->seen_mem_req = seq;
            s->mem_want = atomic_load_explicit(&s->slot->mem_req_bytes, memory_order_relaxed);
            s->mem_pending = 1;
            s->mem_order = ++g_m.order_counter;
        }
        if (s->unload_sent && atomic_load_explicit(&s->slot->cmd, memory_order_acquire) == 0) {
            s->unload_sent = 0;
            g_m.nunloading--;
            bdr_sched_poke(s);
        }
    }
    uint64_t budget = g_m.hdr->job.mem_budget;
    for (;;) {
        slave_t *s = oldest_pending();
        if (!s)
            break;
        uint64_t total = node_resident();
        /* A finalized rank is no longer scheduled: let it finish. */
        if (!budget || total + s->mem_want <= budget || s->state == SL_FINALIZED) {
            mem_answer(s, 0);
            continue;
        }
        if (bdr_coll_shrink(total + s->mem_want - budget))
            continue; /* collective data kept in memory went to storage: look again */
        uint64_t need = total + s->mem_want - budget, coming = 0;
        for (int i = 0; i < g_m.ns; i++)
            if (g_m.slaves[i].unload_sent)
                coming +=
                    atomic_load_explicit(&g_m.slaves[i].slot->mem_resident, memory_order_relaxed);
        while (coming < need) {
            slave_t *v = NULL;
            uint64_t vr = 0;
            for (int i = 0; i < g_m.ns; i++) {
                slave_t *c = &g_m.slaves[i];
                uint64_t r = atomic_load_explicit(&c->slot->mem_resident, memory_order_relaxed);
                if (c != s && can_unload(c) && r > vr) {
                    v = c;
                    vr = r;
                }
            }
            if (!v)
                break;
            bdr_memacct_unload(v);
            coming += vr;
        }
        if (coming == 0 && !g_m.nunloading) {
            /* Nothing can be freed for it now.  If the memory held by others
             * will never go away under it (no other running rank), it cannot fit. */
            uint64_t mine = atomic_load_explicit(&s->slot->mem_resident, memory_order_relaxed);
            uint64_t others_running = 0;
            for (int i = 0; i < g_m.ns; i++) {
                slave_t *c = &g_m.slaves[i];
                if (c != s && !c->exited &&
                    (c->state == SL_RUNNING || c->state == SL_FINALIZED || c->mem_pending))
                    others_running +=
                        atomic_load_explicit(&c->slot->mem_resident, memory_order_relaxed);
            }
            if (!others_running) {
                bdr_master_fail(1,
                                "rank %d needs %llu more bytes of memory with %llu resident, but "
                                "the node's budget (-mem) is %llu bytes and %llu of it is held by "
                                "buffered messages: its working set cannot fit; use more ranks "
                                "or a larger -mem",
                                s->world, (unsigned long long)s->mem_want, (unsigned long long)mine,
                                (unsigned long long)budget, (unsigned long long)g_m.bytes_buffered);
                mem_answer(s, -12);
                return;
            }
        }
        waiting = 1;
        break;
    }
    for (int i = 0; i < g_m.ns; i++)
        waiting += g_m.slaves[i].mem_pending;
    atomic_store_explicit(&g_m.hdr->mem_waiters, waiting, memory_order_relaxed);
}
