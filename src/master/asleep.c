/* Ranks asleep outside MPI lend their run slot (-lend-asleep).
 *
 * The scheduler takes a run slot away only at an MPI call (bdmpi.txt 5.2).
 * A rank that holds one and sleeps in a system call of its own (accept on
 * a socket another rank will connect to, a read of a pipe another rank
 * writes, a sleep while it waits for a file) then keeps every rank waiting
 * for a slot from running, the one it waits for among them: with -nr 1
 * that is a hang (mpi4py's test_dynproc testJoin: rank 0 in accept, rank 1
 * waiting for the slot to connect).  Such a rank uses no CPU, so after
 * -lend-asleep milliseconds of sleep the master hands its slot to the run
 * queue.  When it wakes it simply runs on: the node then runs one rank
 * more than -nr until some rank blocks, as no rank is stopped outside MPI.
 * Memory stays within the budget: the rank given the slot asks for memory
 * like any rank, and waits for it if the budget is spent.
 *
 * "Asleep outside MPI", judged from /proc every quarter of the period and
 * only while some rank waits for a slot that none is free for:
 *  - the master holds it as running, it has no request to the master in
 *    flight (slot->in_rpc, set by the rank around every request) and no
 *    memory grant, unload, look-ahead, command or storage call pending;
 *  - its main thread is in interruptible sleep (state S) and has not run
 *    at all since the previous sample (/proc/PID/schedstat's run time), and
 *    the process has used no CPU time (/proc/PID/stat utime + stime, all
 *    threads), for the whole period;
 *  - at the end of it the main thread is in a system call: one that sleeps
 *    in a page fault (/proc/PID/syscall "-1") waits for the memory
 *    manager's userfaultfd handler, whose reads of storage may use no CPU
 *    time for several milliseconds.
 * A sample that shows it ran, or any request it makes, gives the slot back
 * (it counts as running again). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bd_log.h"
#include "master.h"

static double g_next; /* when to sample next */

static double period_s(void) { return (double)g_m.opts.num[BD_OPT_LEND_ASLEEP] * 1e-3; }

ssize_t bdr_proc_read(pid_t pid, const char *what, char *buf, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, what);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, buf, cap - 1);
    int err = errno;
    close(fd);
    if (n < 0)
        return -err;
    buf[n] = 0;
    return n;
}

/* The main thread's state letter, its run time and the process's CPU ticks;
 * 0, or -1 when /proc cannot tell (the rank is going away). */
static int sample(pid_t pid, char *state, unsigned long long *run_ns, unsigned long long *ticks)
{
    char buf[1024];
    if (bdr_proc_read(pid, "schedstat", buf, sizeof buf) <= 0 || sscanf(buf, "%llu", run_ns) != 1)
        return -1;
    if (bdr_proc_read(pid, "stat", buf, sizeof buf) <= 0)
        return -1;
    /* the command name may hold spaces and parentheses: fields start after
     * the last ')'; state is field 3, utime and stime fields 14 and 15 */
    char *p = strrchr(buf, ')');
    unsigned long long ut, st;
    if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", state, &ut,
                     &st) != 3)
        return -1;
    *ticks = ut + st;
    return 0;
}

/* 0 when the main thread's sleep is known not to be in a system call: it
 * waits in a page fault (the memory manager's userfaultfd handler resolving
 * it), which is BDMPI's work and not a wait of the program's own.  An
 * unreadable file (ptrace restrictions) says nothing: 1. */
static int in_syscall(pid_t pid)
{
    char buf[64];
    if (bdr_proc_read(pid, "syscall", buf, sizeof buf) <= 0)
        return 1;
    return buf[0] != '-' && strncmp(buf, "running", 7) != 0;
}

/* Nothing of BDMPI's is in progress for s: it is outside the library's waits. */
static int outside(const slave_t *s)
{
    bd_slot_t *sl = s->slot;
    return s->state == SL_RUNNING && !s->exited && !s->mem_pending && !s->unload_sent &&
           !s->pf_sent && !atomic_load_explicit(&sl->in_rpc, memory_order_acquire) &&
           !atomic_load_explicit(&sl->cmd, memory_order_relaxed) &&
           !atomic_load_explicit(&sl->io.busy, memory_order_relaxed) &&
           atomic_load_explicit(&sl->req_seq, memory_order_acquire) == s->seen_req;
}

void bdr_asleep_back(slave_t *s)
{
    if (!s->asleep)
        return;
    s->asleep = 0;
    s->aw_since = 0;
    g_m.nasleep--;
}

double bdr_asleep_wait_s(void)
{
    double p = period_s();
    if (p <= 0 || g_m.nrunnable == 0)
        return -1;
    return p / 4;
}

void bdr_asleep_poll(void)
{
    double p = period_s();
    if (p <= 0 || g_m.stopping)
        return;
    double now = bdr_master_now();
    if (now < g_next)
        return;
    g_next = now + p / 4;
    /* someone waits for a slot and none is free (or the free one is kept
     * from it for memory, sched.c corun_gate: a sleeper may wait for it) */
    int want = g_m.nrunnable > 0 && (g_m.nrunning - g_m.nasleep >= g_m.nr || g_m.corun_gated);
    for (int i = 0; i < g_m.ns; i++) {
        slave_t *s = &g_m.slaves[i];
        if (!s->asleep && (!want || !outside(s))) {
            s->aw_since = 0;
            continue;
        }
        char st;
        unsigned long long run, ticks;
        int ok = sample(s->pid, &st, &run, &ticks) == 0;
        int still = ok && st == 'S' && s->aw_since && run == s->aw_run && ticks == s->aw_ticks;
        if (s->asleep) {
            if (!still || !outside(s))
                bdr_asleep_back(s); /* it ran: it counts as running again */
            continue;
        }
        if (!still) {
            s->aw_run = run;
            s->aw_ticks = ticks;
            s->aw_since = ok ? now : 0;
            continue;
        }
        if (now - s->aw_since < p)
            continue;
        if (!in_syscall(s->pid)) {
            s->aw_since = now;
            continue;
        }
        s->asleep = 1;
        g_m.nasleep++;
        want = g_m.nrunnable > 0 && (g_m.nrunning - g_m.nasleep >= g_m.nr || g_m.corun_gated);
        atomic_fetch_add_explicit(&s->slot->stats[BD_STAT_LENDS], 1, memory_order_relaxed);
        bd_log_info("rank %d has slept outside MPI for %.0f ms holding a run slot: lending it",
                    s->world, (now - s->aw_since) * 1e3);
    }
}
