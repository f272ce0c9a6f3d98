/* MPI_THREAD_MULTIPLE (bottom room): one lock around the rank's MPI entry
 * points, and waits that give it up while they wait.  docs/design.md,
 * "Threads (MPI_THREAD_MULTIPLE)".
 *
 * A rank has one slot to its master: one request in flight, one data
 * window, and a master that takes a rank waiting in it for a rank that
 * computes nothing (it may unload its memory and consume its mailbox).  So
 * the library's code runs in one thread at a time: every entry point takes
 * the lock (BDL_CHECK_INIT), recursively, since entry points call each
 * other.  A thread that would wait in the master while another thread of
 * the rank has called MPI ("busy") does not: it polls, and between polls
 * drops the lock (bdl_mt_nap), so one thread's blocking receive does not
 * stop another's send. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif

#include "core.h"
#include "nbc.h"
#include "request.h"

int bdl_mt_on;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int g_nthreads;  /* threads that called MPI and have not ended */
static atomic_int g_nwaiting;  /* threads waiting for the lock */
static atomic_uint g_acquired; /* times the lock was taken */
static pthread_key_t g_key;
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;
enum { MAX_EXIT_FNS = 4 };
static void (*g_exit_fns[MAX_EXIT_FNS])(void);
static atomic_int g_nexit_fns;

static _Thread_local int t_depth; /* how deep this thread holds the lock */
static _Thread_local int t_known; /* counted in g_nthreads */
static _Thread_local int t_naps;  /* naps since this thread last entered MPI */

/* A thread that called MPI ends: it no longer counts, and the library frees
 * what it kept for it (a collective's scratch buffers, mpi/coll_local.c). */
static void thread_ends(void *unused)
{
    (void)unused;
    int n = atomic_load(&g_nexit_fns);
    for (int i = 0; i < n; i++)
        g_exit_fns[i]();
    atomic_fetch_sub(&g_nthreads, 1);
}

static void make_key(void)
{
    if (pthread_key_create(&g_key, thread_ends))
        bdl_fatal(MPI_ERR_INTERN, "cannot create a thread key for MPI_THREAD_MULTIPLE");
}

void bdl_mt_at_thread_exit(void (*fn)(void))
{
    int n = atomic_load(&g_nexit_fns);
    for (int i = 0; i < n; i++)
        if (g_exit_fns[i] == fn)
            return;
    if (n == MAX_EXIT_FNS)
        bdl_fatal(MPI_ERR_INTERN, "too many thread exit functions");
    g_exit_fns[n] = fn;
    atomic_store(&g_nexit_fns, n + 1);
}

static void take(void)
{
    if (!t_known) {
        t_known = 1;
        pthread_once(&g_key_once, make_key);
        atomic_fetch_add(&g_nthreads, 1);
        /* the main thread's value is never destroyed (it exits the process) */
        pthread_setspecific(g_key, (void *)1);
    }
    atomic_fetch_add(&g_nwaiting, 1);
    pthread_mutex_lock(&g_lock);
    atomic_fetch_sub(&g_nwaiting, 1);
    atomic_fetch_add(&g_acquired, 1);
}

int bdl_mt_guard(void)
{
    if (!bdl_mt_on)
        return 0;
    if (t_depth++ == 0) {
        take();
        t_naps = 0;
    }
    return 1;
}

void bdl_mt_unguard(int *held)
{
    if (*held && --t_depth == 0)
        pthread_mutex_unlock(&g_lock);
}

int bdl_mt_busy(void) { return bdl_mt_on && atomic_load(&g_nthreads) > 1; }

/* Give the lock up for a moment: to a thread that waits for it (until it
 * has taken it, at most about a millisecond), else for a sleep that grows
 * from 2 us to 256 us over successive naps of one call (a thread that polls
 * for a message another rank sends costs little CPU, and a reply comes
 * within a few naps). */
void bdl_mt_nap(void)
{
    if (!bdl_mt_on || t_depth == 0)
        return;
    int depth = t_depth;
    unsigned before = atomic_load(&g_acquired);
    int waiting = atomic_load(&g_nwaiting) > 0;
    t_depth = 0;
    pthread_mutex_unlock(&g_lock);
    if (waiting) {
        for (int i = 0; i < 500 && atomic_load(&g_acquired) == before; i++)
            nanosleep(&(struct timespec){0, 2000}, NULL);
    } else {
        long us = 2L << (t_naps < 7 ? t_naps : 7);
        t_naps++;
        nanosleep(&(struct timespec){0, us * 1000}, NULL);
    }
    take();
    t_depth = depth;
}

void bdl_mt_pause(void)
{
    bdl_p2p_poll_failed(); /* RMA flagged for us, and the run slot to a rank that waits for one */
    bdl_mt_nap();
}

/* A poll found nothing: serve the one-sided requests that wait for us (the
 * rank polled for may be an origin waiting for them), and give the run
 * slot away if another rank wants it, now or after a quantum.
 *
 * A program that only waits (while (!flag) MPI_Test) must hand its slot
 * over at once: the rank it waits for may need the slot.  One that works
 * between polls (HPCC's RandomAccess tests for updates after each one it
 * makes) must not: a hand-over costs tens of microseconds, and at -nr 1 it
 * made every rank of such a program do one step per hand-over.  The two
 * look alike to MPI, so the rank learns which it is:
 *  - a rank that has sent nothing in this run and to which nothing came
 *    since it last handed over is waiting: it hands over at once;
 *  - otherwise it keeps the slot for a quantum from the start of its run.
 *    The quantum doubles (from QUANTUM_MIN, up to -poll-quantum) when a
 *    hand-over brought the rank nothing (others ran, nothing came: handing
 *    over was not what it needed) and shrinks by a quarter, to 0 below
 *    QUANTUM_MIN, when it brought messages (a ping-pong driven by polls,
 *    whose every hand-over brings the answer, stays at 0).
 * Out of core a hand-over costs more: the rank's memory is unloaded as it
 * waits and loaded again after (a random-access table, all of it).  So a
 * working rank also keeps its slot for 4 times what its last hand-over
 * cost it in storage I/O and memory grants, up to QUANTUM_MEM_MAX.
 * Progress: a rank keeps its slot for at most max(-poll-quantum,
 * QUANTUM_MEM_MAX) per run. */
#define QUANTUM_MIN 20000ull         /* ns */
#define QUANTUM_MEM_MAX 250000000ull /* ns */
static uint64_t g_quantum, g_mem_floor;
static uint32_t g_seq_handed; /* our mailbox's events when we last handed over */
static uint64_t g_sent_run;   /* bdl_g.nsent when our run started (that hand-over) */
static uint64_t g_mem_handed; /* mem_ns() when we last handed over */
static int g_handed;          /* handed over since the last unsuccessful poll */

/* Time the rank has spent on its managed memory: storage I/O (running or
 * waiting) and waits for memory grants. */
static uint64_t mem_ns(void)
{
    _Atomic uint64_t *st = bdl_g.slot->stats;
    return atomic_load_explicit(&st[BD_STAT_TIME_IO_RUN_NS], memory_order_relaxed) +
           atomic_load_explicit(&st[BD_STAT_TIME_IO_WAIT_NS], memory_order_relaxed) +
           atomic_load_explicit(&st[BD_STAT_TIME_GRANT_NS], memory_order_relaxed);
}

void bdl_p2p_poll_failed(void)
{
    atomic_fetch_add_explicit(&bdl_g.slot->stats[BD_STAT_POLLS], 1, memory_order_relaxed);
    bdl_rpc_serve_flagged();
    bdl_nbc_pipe_poll();
    if (!atomic_load_explicit(&bdl_g.hdr->runnable_waiting, memory_order_relaxed) &&
        !bdl_g.ring_owed)
        return;
    uint64_t max = bdl_g.hdr->job.poll_quantum_ns;
    if (max) {
        uint32_t seq = bdl_p2p_event_seq();
        if (g_handed) {
            g_handed = 0;
            if (seq == g_seq_handed)
                g_quantum = g_quantum < QUANTUM_MIN / 2 ? QUANTUM_MIN : 2 * g_quantum;
            else
                g_quantum -= g_quantum / 4;
            g_quantum = g_quantum > max ? max : g_quantum < QUANTUM_MIN / 2 ? 0 : g_quantum;
            uint64_t cost = mem_ns() - g_mem_handed;
            g_mem_floor = 4 * cost < QUANTUM_MEM_MAX ? 4 * cost : QUANTUM_MEM_MAX;
        }
        int working = bdl_g.nsent != g_sent_run || seq != g_seq_handed;
        uint64_t q = g_quantum > g_mem_floor ? g_quantum : g_mem_floor;
        if (working && q && bdl_now_ns() - bdl_g.run_since_ns < q) {
            atomic_fetch_add_explicit(&bdl_g.slot->stats[BD_STAT_POLLS_KEPT], 1,
                                      memory_order_relaxed);
            return;
        }
    }
    /* what comes while we are away counts as what handing over brought */
    g_seq_handed = bdl_p2p_event_seq();
    g_sent_run = bdl_g.nsent;
    g_mem_handed = mem_ns();
    g_handed = 1;
    bdl_req_begin(BD_REQ_YIELD);
    bdl_rpc();
}

/* An RMA epoch on our own window (flush, unlock) completes without another
 * rank running, found something or not: a loop of them (a spin lock whose
 * word we hold) polls, and must let the rank it waits for run; but a
 * program that only works on its own window must not hand its slot over at
 * every epoch (mpi4py's test_rma_nb locks itself for each of hundreds of
 * operations).  So at most once per -poll-quantum of running is it a poll;
 * -poll-quantum 0: always. */
static uint64_t g_own_since, g_own_resumes;

void bdl_p2p_poll_failed_own(void)
{
    uint64_t q = bdl_g.hdr->job.poll_quantum_ns;
    if (!q) {
        bdl_p2p_poll_failed();
        return;
    }
    /* Since the master last gave us a run slot (run_since_ns restarts at
     * every blocking request, and the epoch's own messages make some). */
    _Atomic uint64_t *st = bdl_g.slot->stats;
    uint64_t now = bdl_now_ns();
    uint64_t res = atomic_load_explicit(&st[BD_STAT_RESUMES], memory_order_relaxed);
    if (!g_own_since || res != g_own_resumes) {
        g_own_since = now;
        g_own_resumes = res;
    }
    if (now - g_own_since < q) {
        bdl_rpc_serve_flagged();
        bdl_nbc_pipe_poll();
        if (atomic_load_explicit(&bdl_g.hdr->runnable_waiting, memory_order_relaxed))
            atomic_fetch_add_explicit(&st[BD_STAT_POLLS_KEPT], 1, memory_order_relaxed);
        return;
    }
    g_own_since = 0;
    bdl_p2p_poll_failed();
}

/* A poll for what only another node can send found nothing: a receive or
 * probe naming a rank there, a synchronous send to one.  Nothing on this
 * node can change that; only our master brings it.  Spinning for it is
 * worse than useless: with -nr 1 the master shares our CPU (-pin auto) and
 * must run to deliver it, and a slot handed to another rank of the node
 * that polls for another node too comes straight back (HPCC's HPL at
 * -nn 2: 47-78k hand-overs per node, two wake-ups each).  So a rank that
 * polls for it in a loop (failed polls back to back, less than
 * REMOTE_GAP_NS apart, nothing sent or received between them) sleeps in
 * the master until its mailbox moves or -poll-remote passes, its slot free
 * for a rank with work meanwhile; with -nr > 1, when no rank waits for a
 * slot, it spins -spin first, as a blocking receive does (match.c
 * wait_event).  The first poll of a loop, and a rank that works between
 * its polls (HPL's look-ahead: an update between probes), poll as any
 * other (bdl_p2p_poll_failed).  The sleep is bounded, so a loop that also
 * waits for something else (a time, a flag in memory) goes on. */
#define REMOTE_GAP_NS 20000ull
static uint64_t g_rloop_t0, g_rloop_last, g_rloop_sent;
static uint32_t g_rloop_seq;

void bdl_p2p_poll_failed_remote(void)
{
    uint64_t max = bdl_g.hdr->job.poll_remote_ns;
    /* a thread's wait must let the others take the lock; a rank inside a
     * collective of the ranks, or serving RMA without a slot, does not block */
    if (!max || bdl_mt_busy() || bdl_g.lc_api || bdl_g.lent) {
        bdl_p2p_poll_failed();
        return;
    }
    uint64_t now = bdl_now_ns();
    uint32_t seq = bdl_p2p_event_seq();
    int loop = g_rloop_last && now - g_rloop_last < REMOTE_GAP_NS && seq == g_rloop_seq &&
               bdl_g.nsent == g_rloop_sent;
    if (!loop) {
        g_rloop_t0 = now;
        g_rloop_seq = seq;
        g_rloop_sent = bdl_g.nsent;
    }
    uint64_t spin = bdl_g.hdr->job.nr > 1 && !atomic_load_explicit(&bdl_g.hdr->runnable_waiting,
                                                                   memory_order_relaxed)
                        ? bdl_g.hdr->job.spin_ns
                        : 0;
    if (!loop || now - g_rloop_t0 < spin) {
        bdl_p2p_poll_failed();
    } else {
        _Atomic uint64_t *st = bdl_g.slot->stats;
        atomic_fetch_add_explicit(&st[BD_STAT_POLLS], 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&st[BD_STAT_POLL_SLEEPS], 1, memory_order_relaxed);
        bdl_rpc_serve_flagged();
        bdl_nbc_pipe_poll();
        bdl_p2p_poll_sleep(max);
        /* woken by a message (the caller's next poll looks) or at the bound:
         * the loop goes on from here */
        g_rloop_seq = bdl_p2p_event_seq();
        g_rloop_sent = bdl_g.nsent;
    }
    g_rloop_last = bdl_now_ns();
}

/* Tables the waits hold pointers into (requests, communicators) must not
 * move while a thread naps: they move once, now, into a reservation of
 * max entries that grows in place (pages come as they are touched). */
static void *reserve(void *old, size_t used, size_t max)
{
    void *p =
        mmap(NULL, max, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        bdl_fatal(MPI_ERR_NO_MEM, "MPI_THREAD_MULTIPLE: cannot reserve %zu bytes: %s", max,
                  strerror(errno));
#ifdef __SANITIZE_ADDRESS__
    /* the tables point into the heap: LeakSanitizer must look in them */
    __lsan_register_root_region(p, max);
#endif
    if (used)
        memcpy(p, old, used);
    free(old);
    return p;
}

void bdl_mt_enable(void)
{
    if (bdl_mt_on)
        return;
    bdl_g.reqs = reserve(bdl_g.reqs, (size_t)bdl_g.nreqs * sizeof(bdl_request_t),
                         (size_t)BDL_MT_MAX_REQS * sizeof(bdl_request_t));
    bdl_g.nreqs_max = BDL_MT_MAX_REQS;
    bdl_g.comms = reserve(bdl_g.comms, (size_t)bdl_g.ncomms * sizeof(bdl_comm_t),
                          (size_t)BDL_MT_MAX_COMMS * sizeof(bdl_comm_t));
    bdl_g.ncomms_max = BDL_MT_MAX_COMMS;
    bdl_mt_on = 1;
}
