/* Placement of the master and its ranks (-pin).  With -nr 1 one rank runs
 * at a time, and every hand-over of the run slot is two wake-ups: the rank
 * that blocks rings the master, the master wakes the next rank.  On one
 * CPU each is a context switch (3-4 us here); across CPUs an
 * inter-processor wake-up of an idle CPU (about 50 us on this VM).  So the
 * master binds itself to one CPU before it forks the ranks, which inherit
 * it.  Threads started earlier (MPICH's, with -nn > 1) keep their own.
 * Measured (docs/performance.md, "-pin"): 16 ranks at -nr 1, ring and
 * Allreduce 1.12-1.17x faster; applications in memory steadier and about
 * as fast or faster; under araw about 30% slower.
 *
 * A master pinned with its running rank must also take the CPU from that
 * rank when something needs it while the rank computes: the rank's sends
 * to another node wait in its ring until the master ships them, a message
 * from another node until the master delivers it.  With the kernel's
 * default slice (EEVDF, about 1.4 ms here) the woken master waited for the
 * rank's slice to end: such a send reached the other node 2-3 ms late in
 * one run in ten.  A master asking for a short slice (-master-slice; the
 * kernel's custom slice, Linux 6.12) preempts at once; it gets no more CPU
 * than before, only sooner.  Ranks are set back to the default when
 * forked (bdr_affinity_child).  Only when the job spans nodes: on one node
 * nothing waits for the master while the rank computes, and PageRank out
 * of core at -ns 16 -nr 1 ran 1.25x slower with it (at -nn 2, 0.96x).
 * Not when unpinned: there the master has a CPU of its own to wake on, and
 * at -ns 2 -nr 2 a short slice made the ranks' own Allreduce path slower
 * (docs/performance.md, issue 12 session 20).
 */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bd_log.h"
#include "master.h"

/* struct sched_attr of sched_setattr(2); glibc 2.36 has no wrapper. */
typedef struct {
    uint32_t size, policy;
    uint64_t flags;
    int32_t nice;
    uint32_t priority;
    uint64_t runtime, deadline, period;
} sched_attr_t;

static int g_sliced; /* this master asked for a slice: its ranks are reset */

/* For SCHED_OTHER, sched_runtime is the slice asked for (0: the default);
 * kernels before 6.12 ignore it. */
static int slice_set(uint64_t ns)
{
    sched_attr_t a = {.size = sizeof a,
                      .policy = SCHED_OTHER,
                      .nice = getpriority(PRIO_PROCESS, 0),
                      .runtime = ns};
    return syscall(SYS_sched_setattr, 0, &a, 0) < 0 ? -errno : 0;
}

/* In a forked rank, before exec: async-signal-safe. */
void bdr_affinity_child(void)
{
    if (g_sliced)
        (void)slice_set(0);
}

void bdr_affinity_setup(void)
{
    /* auto: not with -nr > 1 (ranks run in parallel), nor under araw,
     * whose unloading at every block writes in the background while the
     * next rank runs, and wants the other CPUs (docs/performance.md). */
    long long mode = g_m.opts.num[BD_OPT_PIN];
    if (mode == BD_PIN_OFF ||
        (mode == BD_PIN_AUTO && (g_m.nr != 1 || g_m.opts.num[BD_OPT_MEM_STRATEGY] == BD_MEMS_ARAW)))
        return;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) < 0 || CPU_COUNT(&set) < 2)
        return;
    /* The CPU we are on, or for the masters of other nodes on this
     * machine the ones after it, so they do not share one. */
    int cpus[CPU_SETSIZE], n = 0, here = 0, cur = sched_getcpu();
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set)) {
            if (c == cur)
                here = n;
            cpus[n++] = c;
        }
    int cpu = cpus[(here + g_m.node) % n];
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) < 0) {
        bd_log_info("-pin: cannot bind to CPU %d: %s", cpu, strerror(errno));
        return;
    }
    bd_log_info("-pin: the master and its ranks on CPU %d", cpu);
    long long us = g_m.opts.num[BD_OPT_MASTER_SLICE];
    if (us <= 0 || g_m.nnodes < 2)
        return;
    int rc = slice_set((uint64_t)us * 1000);
    if (rc < 0)
        bd_log_info("-master-slice: sched_setattr(%lld us): %s", us, strerror(-rc));
    else
        g_sliced = 1;
}
