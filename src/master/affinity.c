/* Placement of the master and its ranks (-pin).  With -nr 1 one rank runs
 * at a time, and every hand-over of the run slot is two wake-ups: the rank
 * that blocks rings the master, the master wakes the next rank.  On one
 * CPU each is a context switch (3-4 us here); across CPUs an
 * inter-processor wake-up of an idle CPU (about 50 us on this VM).  So the
 * master binds itself to one CPU before it forks the ranks, which inherit
 * it.  Threads started earlier (MPICH's, with -nn > 1) keep their own.
 * Measured (docs/performance.md, "-pin"): 16 ranks at -nr 1, ring and
 * Allreduce 1.12-1.17x faster; applications in memory steadier and about
 * as fast or faster; under araw about 30% slower. */
#include <sched.h>
#include <string.h>
#include <errno.h>

#include "bd_log.h"
#include "master.h"

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
    if (sched_setaffinity(0, sizeof one, &one) < 0)
        bd_log_info("-pin: cannot bind to CPU %d: %s", cpu, strerror(errno));
    else
        bd_log_info("-pin: the master and its ranks on CPU %d", cpu);
}
