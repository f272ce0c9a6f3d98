/* No silent wait (issue 18).  The deadlock detector (deadlock.c) ends a job
 * whose ranks all wait in MPI, at once, since nothing else can wake them.
 * Waits for anything else can also last for ever: for a memory grant that
 * nobody will free room for, for a run slot held by such a rank, for
 * storage that does not answer.  Those cannot be proven endless (a grant
 * or an I/O may still come), so they are judged by time, -stall-timeout
 * seconds (0: never):
 *  - a storage stall: a process of the node (a rank, or the master) has
 *    storage calls in progress and none has completed for the timeout
 *    (bd_iowatch.h counts them at every storage site);
 *  - nothing can progress: no rank computes (each waits for memory, a run
 *    slot, storage or MPI), at least one waits for memory or storage (waits
 *    in MPI alone stay the deadlock detector's, which also knows about
 *    other nodes), and nothing has moved for the timeout: no request, no
 *    grant, no storage call completed, no message between nodes.
 * Either way the master logs "rank R waits for ..." for every rank and ends
 * the job as any failure does (ranks killed, spill directory removed).
 *
 * The master's own storage calls run in its loop (spill files of messages)
 * or in its staging thread: the loop sees the staging thread's, and a
 * watchdog thread sees those that block the loop itself.  The watchdog
 * also hears the loop's heartbeat (bdr_stall_beat, once a turn; the loop
 * turns at least once a second): a loop that stops turning for longer than
 * the timeout, with no storage call of the master in progress to explain
 * it, is a hung master (a bug, a blocking call that should not block), and
 * the ranks would wait for it for ever; it is reported and the job ends. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bd_fs.h"
#include "bd_iowatch.h"
#include "bd_log.h"
#include "master.h"

extern uint64_t g_net_sent, g_net_recv; /* deadlock.c, counted by node.c */

/* The last count of completed storage calls seen of a process, and since
 * when it has not moved while calls were in progress. */
typedef struct {
    uint64_t done;
    double since;
} io_seen_t;

static io_seen_t *g_io;  /* per slave slot */
static io_seen_t g_mio;  /* the master's own (its staging thread's calls) */
static double g_next;    /* the next look */
static uint64_t g_moved; /* the progress count last seen ... */
static double g_still;   /* ... and since when it has not changed */

static _Atomic uint64_t g_beats;   /* turns of the event loop */
static _Atomic int g_loop_done;    /* the loop has ended: nothing to watch */
static _Atomic uint64_t g_resumes; /* continues after a stop (bdr_stall_resumed) */

void bdr_stall_beat(void) { atomic_fetch_add_explicit(&g_beats, 1, memory_order_relaxed); }
void bdr_stall_loop_done(void) { atomic_store_explicit(&g_loop_done, 1, memory_order_relaxed); }

void bdr_stall_resumed(void)
{
    double now = bdr_master_now();
    g_still = now;
    g_mio.since = now;
    for (int i = 0; g_io && i < g_m.nslots; i++)
        g_io[i].since = now;
    atomic_fetch_add_explicit(&g_resumes, 1, memory_order_relaxed);
}

static double timeout_s(void) { return (double)g_m.opts.num[BD_OPT_STALL_TIMEOUT]; }

/* How long w's storage calls have been in progress without one completing
 * (0 when none is in progress). */
static double io_stuck_for(bd_iowatch_t *w, io_seen_t *seen, double now)
{
    uint64_t done = atomic_load_explicit(&w->done, memory_order_relaxed);
    uint32_t busy = atomic_load_explicit(&w->busy, memory_order_acquire);
    if (!busy || done != seen->done) {
        seen->done = done;
        seen->since = now;
        return 0;
    }
    return now - seen->since;
}

static const char *site_name(bd_iowatch_t *w)
{
    uint32_t s = atomic_load_explicit(&w->site, memory_order_relaxed);
    return s < BD_FAULT__COUNT ? bd_fault_names[s] : "?";
}

/* Everything that shows the node moving. */
static uint64_t progress_count(void)
{
    uint64_t c = g_net_sent + g_net_recv + (uint64_t)g_m.nlive;
    c += atomic_load_explicit(&bd_iowatch->done, memory_order_relaxed);
    for (int i = 0; i < g_m.ns; i++) {
        bd_slot_t *sl = g_m.slaves[i].slot;
        c += atomic_load_explicit(&sl->req_seq, memory_order_relaxed) +
             atomic_load_explicit(&sl->mem_req_seq, memory_order_relaxed) +
             atomic_load_explicit(&sl->mem_resp_seq, memory_order_relaxed) +
             atomic_load_explicit(&sl->io.done, memory_order_relaxed) +
             atomic_load_explicit(&sl->cmd, memory_order_relaxed);
    }
    return c;
}

static int io_busy(const slave_t *s)
{
    return atomic_load_explicit(&s->slot->io.busy, memory_order_relaxed) > 0;
}

/* What rank s waits for, into what (one line). */
static void describe(slave_t *s, double now, char *what, size_t len)
{
    uint64_t res = atomic_load_explicit(&s->slot->mem_resident, memory_order_relaxed);
    if (!s->exited && io_busy(s)) {
        bd_iowatch_t *w = &s->slot->io;
        snprintf(what, len,
                 "waits for storage: %u call(s) in progress (the last one started: %s), none "
                 "completed for %.1f s",
                 atomic_load_explicit(&w->busy, memory_order_relaxed), site_name(w),
                 now - g_io[s->idx].since);
    } else if (!s->exited && s->mem_pending) {
        uint32_t cma = atomic_load_explicit(&s->slot->cma_out, memory_order_relaxed);
        snprintf(what, len,
                 "waits for a memory grant of %llu bytes (it holds %llu; the node's budget is "
                 "%llu bytes, %llu of them accounted)%s",
                 (unsigned long long)s->mem_want, (unsigned long long)res,
                 (unsigned long long)g_m.hdr->job.mem_budget,
                 (unsigned long long)bdr_memacct_node_resident(),
                 cma ? "; other ranks are reading its send buffers (single copy)" : "");
    } else if (!s->exited && s->unload_sent) {
        snprintf(what, len, "waits for its unload to storage (%llu bytes resident)",
                 (unsigned long long)res);
    } else if (!s->exited && s->pf_sent) {
        snprintf(what, len, "waits for its look-ahead load from storage");
    } else if (s->state == SL_RUNNABLE) {
        snprintf(what, len, "waits for a run slot (%d of %d held)", g_m.nrunning, g_m.nr);
    } else if (bdr_deadlock_describe(s, what, len)) {
        /* blocked in MPI, or ended */
    } else if (s->state == SL_PREINIT) {
        snprintf(what, len, "has not called MPI_Init");
    } else {
        snprintf(what, len, "runs (holds a run slot, %llu bytes resident)",
                 (unsigned long long)res);
    }
}

static void report_and_end(const char *why)
{
    double now = bdr_master_now();
    bd_log_error("stall: %s", why);
    for (int i = 0; i < g_m.ns; i++) {
        slave_t *s = &g_m.slaves[i];
        if (s->world < 0 || (s->exited && s->spawned))
            continue;
        char what[600];
        describe(s, now, what, sizeof what);
        bd_log_error("  rank %d %s", s->world, what);
    }
    if (atomic_load_explicit(&bd_iowatch->busy, memory_order_relaxed))
        bd_log_error("  the master waits for storage: %u call(s) in progress (%s)",
                     atomic_load_explicit(&bd_iowatch->busy, memory_order_relaxed),
                     site_name(bd_iowatch));
    bdr_master_fail(1, "ending the job: it cannot progress (-stall-timeout %.0f s)", timeout_s());
}

/* A rank that does not wait: it computes, or runs outside the scheduler. */
static int active(const slave_t *s)
{
    if (s->exited)
        return 0;
    if (s->mem_pending || io_busy(s) || s->unload_sent || s->pf_sent)
        return 0;
    return s->state == SL_RUNNING || s->state == SL_PREINIT || s->state == SL_FINALIZED;
}

void bdr_stall_check(void)
{
    double t = timeout_s();
    if (t <= 0 || g_m.stopping || !g_io)
        return;
    double now = bdr_master_now();
    if (now < g_next)
        return;
    double step = t < 4 ? t / 4 : 1;
    if (g_next && now - g_next > step + 1) {
        /* The master did not run for a while (SIGSTOP, a suspended
         * machine): what it saw before says nothing about now. */
        g_still = now;
        g_mio.since = now;
        for (int i = 0; i < g_m.nslots; i++)
            g_io[i].since = now;
    }
    g_next = now + step;

    /* storage that makes no progress */
    char why[300];
    for (int i = 0; i < g_m.ns; i++) {
        slave_t *s = &g_m.slaves[i];
        if (s->exited)
            continue;
        double d = io_stuck_for(&s->slot->io, &g_io[i], now);
        if (d >= t) {
            snprintf(why, sizeof why,
                     "rank %d: a storage call (%s) has been in progress for %.1f s without "
                     "completing",
                     s->world, site_name(&s->slot->io), d);
            report_and_end(why);
            return;
        }
    }
    double d = io_stuck_for(bd_iowatch, &g_mio, now);
    if (d >= t) {
        snprintf(why, sizeof why,
                 "the master: a storage call (%s) has been in progress for %.1f s without "
                 "completing",
                 site_name(bd_iowatch), d);
        report_and_end(why);
        return;
    }

    /* every rank waits, some for memory or storage, and nothing moves */
    uint64_t moved = progress_count();
    int waits_other = atomic_load_explicit(&bd_iowatch->busy, memory_order_relaxed) > 0;
    int any_active = 0;
    for (int i = 0; i < g_m.ns; i++) {
        slave_t *s = &g_m.slaves[i];
        any_active |= active(s);
        if (!s->exited && (s->mem_pending || io_busy(s) || s->unload_sent || s->pf_sent))
            waits_other = 1;
    }
    if (moved != g_moved || any_active || !waits_other || g_m.nlive == 0) {
        g_moved = moved;
        g_still = now;
        return;
    }
    if (now - g_still >= t) {
        snprintf(why, sizeof why,
                 "no rank of the node can progress: every one waits, some for memory or "
                 "storage, and nothing has changed for %.1f s",
                 now - g_still);
        report_and_end(why);
    }
}

/* The watchdog of the master's own storage calls: those of the loop block
 * the loop, so it cannot see them.  On a stall it does what the loop's
 * failure would: says so, kills the ranks, removes the spill directory,
 * and exits (other nodes' masters see this one end). */
static void *watchdog(void *arg)
{
    (void)arg;
    io_seen_t seen = {0, bdr_master_now()};
    uint64_t beats = 0;
    double beat_at = bdr_master_now(); /* when the beats last moved */
    double t = timeout_s();
    struct timespec nap = {.tv_sec = t >= 4 ? 1 : 0, .tv_nsec = t >= 4 ? 0 : (long)(t / 4 * 1e9)};
    double last = bdr_master_now();
    uint64_t resumes = 0;
    for (;;) {
        nanosleep(&nap, NULL);
        double now = bdr_master_now();
        uint64_t r = atomic_load_explicit(&g_resumes, memory_order_relaxed);
        if (now - last > t / 4 + 2 || r != resumes)
            seen.since = beat_at = now; /* we were stopped: start again */
        resumes = r;
        last = now;
        uint64_t b = atomic_load_explicit(&g_beats, memory_order_relaxed);
        /* Not before the first turn (the ranks are being started), nor
         * sooner than 5 s: a turn can be that late on a loaded machine,
         * and -stall-timeout 1 is for waits of ranks, not for this. */
        if (b != beats || !b || atomic_load_explicit(&bd_iowatch->busy, memory_order_relaxed) ||
            atomic_load_explicit(&g_loop_done, memory_order_relaxed)) {
            beats = b; /* turning, or blocked in storage: reported below */
            beat_at = now;
        } else if (now - beat_at >= (t + 1 > 5 ? t + 1 : 5)) {
            bd_log_error("stall: the master's event loop has not turned for %.1f s (no storage "
                         "call of it in progress): the master hangs; ending the job "
                         "(-stall-timeout)",
                         now - beat_at);
            bdr_master_kill_all();
            bd_fs_remove_tree(g_m.jobdir);
            _exit(1);
        }
        double d = io_stuck_for(bd_iowatch, &seen, now);
        if (d < t + 1) /* the loop, when it runs, reports first and better */
            continue;
        bd_log_error("stall: the master: a storage call (%s) has been in progress for %.1f s "
                     "without completing; ending the job (-stall-timeout)",
                     site_name(bd_iowatch), d);
        bdr_master_kill_all();
        bd_fs_remove_tree(g_m.jobdir);
        _exit(1);
    }
    return NULL;
}

void bdr_stall_init(void)
{
    g_io = calloc((size_t)g_m.nslots, sizeof *g_io);
    double now = bdr_master_now();
    g_still = now;
    g_mio.since = now;
    for (int i = 0; g_io && i < g_m.nslots; i++)
        g_io[i].since = now;
    if (timeout_s() <= 0)
        return;
    pthread_t th;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 64 * 1024);
    /* the watchdog takes no signal: the loop's signalfd gets them all */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    if (pthread_create(&th, &a, watchdog, NULL) != 0)
        bd_log_error("warning: no watchdog thread for the master's storage calls");
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&a);
}
