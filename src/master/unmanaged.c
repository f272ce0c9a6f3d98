/* Memory of the ranks outside the memory manager (issue 13, "stay inside
 * the budget").  The budget accounts what the manager holds (allocations
 * of at least -mem-threshold), buffered messages and collective data; the
 * rest of a rank (its allocations under -mem-threshold, libraries' data,
 * stacks) is outside, and the bound the job keeps is -mem + 16 MiB + 512
 * KiB a rank.  A program with many ranks and much small memory passed it:
 * PageRank at 64 ranks and -mem-threshold 256K holds 600-850 KiB a rank
 * outside, 40-60 MiB over the bound at -mem 1G (docs/performance.md, "Real
 * scale").  So the master measures each rank's memory outside the manager
 * when it stops running (it cannot change while the rank waits) and when
 * it asks for memory (ranks granted before they were measured took the job
 * over the bound), at most every PERIOD_S a rank but at the first ask of
 * each turn: one read of /proc/PID/statm, whose resident minus
 * shared pages is the rank's anonymous memory, less its managed memory on
 * the userfaultfd path (anonymous there; a shared memfd on the mprotect
 * path).  What a rank holds beyond ALLOW is counted in the node's resident
 * memory (memacct.c node_resident), so the manager's ranks unload more and
 * the job stays within the bound; when the count grows, blocked ranks are
 * unloaded at once (bdr_memacct_fit).
 *
 * ALLOW is the per-rank allowance less what a rank keeps of the shared
 * file (its slot page, a window's first page, a ring's live entries: up to
 * 128 KiB; mbox.c gives back the rest).  At most half of the budget is
 * counted so: beyond that the ranks' own small memory is more than the
 * manager can make room for, and when it is 8 MiB more than that the job
 * says once that it may pass the bound and what to change, and runs on. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "bd_log.h"
#include "master.h"

#define ALLOW (384 * 1024)
#define PERIOD_S 0.25
#define UNCOUNTED_SAY (8u << 20)

static struct {
    uint64_t total, peak; /* counted beyond ALLOW, all ranks; the most seen */
    int said;
    long page;
} g_u;

/* Anonymous resident bytes of pid, or -1. */
static int64_t anon_of(pid_t pid)
{
    char buf[128];
    unsigned long long size, res, shared;
    if (bdr_proc_read(pid, "statm", buf, sizeof buf) <= 0 ||
        sscanf(buf, "%llu %llu %llu", &size, &res, &shared) != 3 || shared > res)
        return -1;
    if (!g_u.page)
        g_u.page = sysconf(_SC_PAGESIZE);
    return (int64_t)((res - shared) * (uint64_t)g_u.page);
}

static void set(slave_t *s, uint64_t v)
{
    g_u.total = g_u.total - s->outside + v;
    s->outside = v;
    if (g_u.total > g_u.peak)
        g_u.peak = g_u.total;
}

void bdr_unmanaged_sample(slave_t *s, int asking)
{
    uint64_t budget = g_m.hdr->job.mem_budget;
    if (!budget || s->exited)
        return;
    double now = bdr_master_now();
    /* The first ask of a turn always: a rank measured when it stopped in
     * MPI_Init, before it allocated anything, asked for its first grants
     * within PERIOD_S and was counted as holding nothing (test
     * mem.budget.outside). */
    int new_turn = asking && s->outside_turn != s->turn_seq;
    /* Only the first ask: later ones come while the rank loads, its I/O
     * bounce buffers resident (4 MiB, the fixed allowance's, given back at
     * its next wait), which would count as its own. */
    if (asking && !new_turn)
        return;
    /* A stop after a turn measured only at its first ask always: what the
     * rank allocated after that ask (PageRank's setup: its small arrays,
     * after the grant for its first large one) went uncounted until its
     * next turn, and 64 ranks' setup turns, shorter than PERIOD_S each,
     * took the job 5-8 MiB past the bound (mem.budget.pagerank64.*). */
    int after_ask = !asking && s->outside_asked && s->outside_turn == s->turn_seq;
    if (!new_turn && !after_ask && s->outside_t > 0 && now - s->outside_t < PERIOD_S)
        return;
    s->outside_t = now;
    s->outside_turn = s->turn_seq;
    s->outside_asked = asking;
    int64_t anon = anon_of(s->pid);
    if (anon < 0)
        return;
    uint64_t managed = 0;
    if (atomic_load_explicit(&s->slot->mem_anon, memory_order_relaxed))
        managed = atomic_load_explicit(&s->slot->mem_resident, memory_order_relaxed);
    uint64_t out = (uint64_t)anon > managed ? (uint64_t)anon - managed : 0;
    uint64_t was = bdr_unmanaged_counted();
    set(s, out > ALLOW ? out - ALLOW : 0);
    /* more to count: blocked ranks are unloaded now, not at the next grant */
    if (bdr_unmanaged_counted() > was)
        bdr_memacct_fit();
    /* Past the half that is counted, the rest may still fit in what the
     * master leaves of its 16 MiB; past 8 MiB more it likely does not. */
    if (g_u.total > budget / 2 + UNCOUNTED_SAY && !g_u.said) {
        g_u.said = 1;
        bd_log_warn(
            "the ranks hold %" PRIu64 " MiB outside the memory manager beyond %d KiB a rank "
            "(allocations under -mem-threshold %" PRIu64 " bytes, libraries, stacks), of which "
            "at most half of the budget (-mem %" PRIu64 " MiB) is counted in it: the job may "
            "pass -mem + 16 MiB + 512 KiB a rank; a lower -mem-threshold puts more of it under "
            "the manager",
            g_u.total >> 20, ALLOW / 1024, g_m.hdr->job.mem_threshold, budget >> 20);
    }
}

void bdr_unmanaged_exited(slave_t *s) { set(s, 0); }

uint64_t bdr_unmanaged_counted(void)
{
    uint64_t half = g_m.hdr->job.mem_budget / 2;
    return g_u.total < half ? g_u.total : half;
}

uint64_t bdr_unmanaged_peak(void) { return g_u.peak; }
