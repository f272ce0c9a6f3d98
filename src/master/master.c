#include "master.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bd_fs.h"
#include "bd_log.h"
#include "exec.h"
#include "net.h"

master_t g_m;

double bdr_master_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void bdr_master_kill_all(void)
{
    /* also before the table exists (an allocation failed making it) */
    for (int i = 0; g_m.slaves && i < g_m.ns; i++) {
        slave_t *s = &g_m.slaves[i];
        if (!s->exited && s->pid > 0)
            kill(s->pid, SIGKILL);
    }
}

void bdr_master_fail(int status, const char *fmt, ...)
{
    if (g_m.stopping)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (g_m.nnodes > 1)
        bd_log_error("node %d: %s", g_m.node, msg);
    else
        bd_log_error("%s", msg);
    bdr_remote_lost();
    bdr_node_abort_all(status ? status : 1, msg);
    g_m.stopping = 1;
    g_m.job_failed = status ? status : 1;
    bdr_master_kill_all();
}

/* -nn > 1: "node.N.pid" beside our job directory, in bdmpiexec's (when it
 * runs on this host), holds our pid until we end in order, so that if we
 * die bdmpiexec can name this node (src/launcher/watch.c). */
static void node_pid_file(int make)
{
    const char *wd = g_m.opts.str[BD_OPT_WD];
    if (g_m.nnodes < 2 || !wd || !*wd)
        return;
    char path[BD_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/node.%d.pid", wd, g_m.node);
    if (!make) {
        unlink(path);
        return;
    }
    char tmp[BD_PATH_MAX + 80];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return; /* another host's directory, or none: nobody watches */
    fprintf(f, "%d\n", (int)getpid());
    if (fclose(f) == 0)
        rename(tmp, path); /* whole or not at all */
    else
        unlink(tmp);
}

/* -mem-node: this node's entry of the list, if it has one, is its -mem. */
static int mem_node_budget(uint64_t *budget)
{
    const char *list = g_m.opts.str[BD_OPT_MEM_NODE];
    if (!list || !*list)
        return 0;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", list);
    int n = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t;
         t = strtok_r(NULL, ",", &save), n++) {
        long long v;
        if (bd_opts_parse_size(t, &v) < 0 || v < 0) {
            if (g_m.node == 0)
                bd_log_error("-mem-node: entry %d, '%s', is not a size (e.g. 8M,1G)", n, t);
            return -1;
        }
        if (n == g_m.node && v > 0)
            *budget = (uint64_t)v;
    }
    return 0;
}

slave_t *bdr_master_slave_by_world(int world)
{
    int idx = bd_world_slot(g_m.hdr, world);
    if (idx < 0 || idx >= g_m.ns || g_m.slaves[idx].world != world)
        return NULL; /* another node's, or a spawned rank whose slot was reused */
    return &g_m.slaves[idx];
}

/* ---------------------------------------------------------------- dispatch */

typedef struct {
    bdr_req_handler_t fn;
    int any_state; /* may come from a rank that holds no run slot */
    /* Its data, in the window and in the answer, is all in the window's
     * first page (bdr_req_win_page): what the pages after it held is dead
     * while the rank waits in it.  0 (unknown) for any code not checked. */
    int win_page;
} route_t;

static void req_init(slave_t *s, const bd_req_t *r);
static void req_abort(slave_t *s, const bd_req_t *r);
static void req_finalize(slave_t *s, const bd_req_t *r);
static void req_crit_enter(slave_t *s, const bd_req_t *r);
static void req_crit_exit(slave_t *s, const bd_req_t *r);
static void req_yield(slave_t *s, const bd_req_t *r);

/* Who answers each request; a code without a handler ends the job. */
static const route_t g_routes[BD_REQ__COUNT] = {
    [BD_REQ_INIT] = {req_init, 1},
    [BD_REQ_FINALIZE] = {req_finalize, 0},
    [BD_REQ_ABORT] = {req_abort, 1},
    [BD_REQ_CRIT_ENTER] = {req_crit_enter, 0, 1},
    [BD_REQ_CRIT_EXIT] = {req_crit_exit, 0, 1},
    [BD_REQ_YIELD] = {req_yield, 0, 1},
    /* p2p.c, mbox.c */
    [BD_REQ_SEND] = {bdr_p2p_req_send, 0},
    [BD_REQ_P2P_WAIT] = {bdr_mbox_req_wait, 0, 1},
    [BD_REQ_MBOX_FULL] = {bdr_mbox_req_full, 0, 1},
    [BD_REQ_MBOX_FETCH] = {bdr_mbox_req_fetch, 0},
    [BD_REQ_MBOX_CANCEL] = {bdr_mbox_req_cancel, 0},
    [BD_REQ_SYNC_ACK] = {bdr_mbox_req_sync_ack, 0},
    [BD_REQ_NET_PULL] = {bdr_direct_req_pull, 0},
    /* coll.c, comm.c */
    [BD_REQ_COLL_BEGIN] = {bdr_coll_req_begin, 0, 1},
    [BD_REQ_COLL_PUT] = {bdr_coll_req_put, 0},
    [BD_REQ_COLL_PUTREF] = {bdr_coll_req_putref, 0},
    [BD_REQ_COLL_ARRIVE] = {bdr_coll_req_arrive, 0, 1},
    [BD_REQ_COLL_TEST] = {bdr_coll_req_test, 0, 1},
    [BD_REQ_COLL_WAIT] = {bdr_comm_req_coll_wait, 0, 1},
    [BD_REQ_COLL_WAITANY] = {bdr_coll_req_waitany, 0},
    [BD_REQ_COLL_TESTANY] = {bdr_coll_req_waitany, 0},
    [BD_REQ_COLL_GET] = {bdr_coll_req_get, 0},
    [BD_REQ_COLL_END] = {bdr_coll_req_end, 0, 1},
    [BD_REQ_COLL_SMALL] = {bdr_coll_req_small, 0},
    [BD_REQ_COLL_TAKE] = {bdr_coll_req_take, 0},
    [BD_REQ_CTX_ALLOC] = {bdr_comm_req_ctx_alloc, 0},
    [BD_REQ_COMM_REGISTER] = {bdr_comm_req_register, 0},
    [BD_REQ_COMM_DUP] = {bdr_comm_req_dup, 0},
    [BD_REQ_COMM_FREE] = {bdr_comm_req_free, 0},
    /* rma.c */
    [BD_REQ_RMA_ENABLE] = {bdr_rma_req_enable, 0},
    [BD_REQ_COMM_REVOKE] = {bdr_comm_req_revoke, 0},
    [BD_REQ_RMA_NEXT] = {bdr_rma_req_next, 0},
    [BD_REQ_RMA_DONE] = {bdr_rma_req_done, 0},
    /* spawn.c */
    [BD_REQ_SPAWN] = {bdr_spawn_req, 0},
    [BD_REQ_NAME] = {bdr_name_req, 0},
};

static const route_t *route_of(uint32_t code)
{
    return code < BD_REQ__COUNT ? &g_routes[code] : NULL;
}

int bdr_req_win_page(const bd_req_t *r)
{
    if (r->code == BD_REQ_COLL_WAITANY || r->code == BD_REQ_COLL_TESTANY) /* ids, then flags */
        return r->arg[0] >= 0 && (uint64_t)r->arg[0] * (sizeof(bd_coll_id_t) + 1) <= 4096;
    if (r->code == BD_REQ_COLL_SMALL)
        return bdr_coll_small_win_page(r);
    const route_t *rt = route_of(r->code);
    return rt && rt->win_page;
}

/* Answer s's current request anew, knowing it waited (a failed poll answers
 * instead of yielding again). */
static void redo(slave_t *s)
{
    const route_t *rt = route_of(s->slot->req.code);
    if (!rt || !rt->fn) {
        bdr_master_fail(1, "rank %d sent an unknown request %u", s->world, s->slot->req.code);
        return;
    }
    s->resuming = 1;
    rt->fn(s, &s->slot->req);
    s->resuming = 0;
    if (s->state == SL_BLOCKED || s->polled)
        bdr_pipe_blocked(s);
    if (s->state == SL_BLOCKED || s->state == SL_RUNNABLE) {
        bdr_mbox_stopped(s);
        bdr_unmanaged_sample(s, 0);
    }
}

/* s got a run slot: finish the request it waited in. */
static void resume(slave_t *s)
{
    blk_t why = s->blk;
    s->blk = BLK_NONE;
    atomic_fetch_add_explicit(&s->slot->stats[BD_STAT_RESUMES], 1, memory_order_relaxed);
    switch (why) {
    case BLK_INIT:
        s->slot->resp.arg[0] = g_m.hdr->world_size;
        s->slot->resp.arg[1] = s->world;
        if (s->sp)
            bdr_spawn_init_answer(s);
        bdr_sched_respond(s);
        break;
    case BLK_CRIT: /* the count was passed to it */
    case BLK_NONE: bdr_sched_respond(s); break;
    case BLK_YIELD:
        /* A plain yield is over once it runs again; a poll that gave its
         * slot away polls again. */
        if (s->slot->req.code == BD_REQ_YIELD)
            bdr_sched_respond(s);
        else
            redo(s);
        break;
    case BLK_MBOX:
    case BLK_ROOM: bdr_sched_respond(s); break; /* it looks again itself */
    case BLK_COLL:
        if (s->revoked) { /* MPIX_Comm_revoke: the collective fails */
            s->revoked = 0;
            s->small_open = 0;
            s->slot->resp.status = BD_RESP_REVOKED;
            bdr_sched_respond(s);
        } else {
            redo(s);
        }
        break;
    }
}

/* Give free run slots to the run queue's choices, resuming each. */
static void schedule(void)
{
    slave_t *s;
    while ((s = bdr_sched_next()) != NULL) {
        bdr_remote_turn(s);
        resume(s);
    }
    bdr_sched_publish();
}

/* Re-examine blocked slaves whose condition may have changed. */
static void recheck_blocked(void)
{
    for (int i = 0; i < g_m.ns; i++) {
        slave_t *s = &g_m.slaves[i];
        /* A mailbox moves without the master: look at every waiter. */
        if (s->state != SL_BLOCKED || (!s->poke && s->blk != BLK_MBOX && s->blk != BLK_ROOM &&
                                       !(s->blk == BLK_COLL && bdr_mbox_watch_moved(s))))
            continue;
        s->poke = 0;
        int ready = 0;
        switch (s->blk) {
        case BLK_COLL: ready = bdr_coll_ready(s) || bdr_mbox_watch_moved(s); break;
        case BLK_CRIT: ready = s->crit_granted; break;
        case BLK_MBOX:
        case BLK_ROOM: ready = bdr_mbox_ready(s); break;
        default: break;
        }
        if (ready)
            bdr_sched_make_runnable(s);
    }
}

/* ---------------------------------------------------------------- requests */

static void req_init(slave_t *s, const bd_req_t *r)
{
    (void)r;
    if (s->state != SL_PREINIT) {
        bdr_master_fail(1, "rank %d called MPI_Init twice", s->world);
        return;
    }
    s->inited = 1;
    bdr_sched_inited(s);
}

static void req_abort(slave_t *s, const bd_req_t *r)
{
    char *msg = s->win;
    msg[1023] = 0;
    bdr_master_fail((int)r->arg[0],
                    "rank %d called MPI_Abort with error code %lld%s%s; ending the job", s->world,
                    (long long)r->arg[0], msg[0] ? ": " : "", msg);
}

static void req_finalize(slave_t *s, const bd_req_t *r)
{
    (void)r;
    s->finalized = 1;
    bdr_sched_finalized(s);
    bdr_msg_cleanup(s);
    bdr_sched_respond(s);
}

/* BDMPI_Enter_critical: at most -nc ranks of the node inside. */
static void req_crit_enter(slave_t *s, const bd_req_t *r)
{
    (void)r;
    if (g_m.crit_count < g_m.nc) {
        g_m.crit_count++;
        bdr_sched_respond(s);
    } else {
        s->crit_granted = 0;
        bdr_sched_block(s, BLK_CRIT);
    }
}

static void req_crit_exit(slave_t *s, const bd_req_t *r)
{
    (void)r;
    for (int i = 0; i < g_m.ns; i++) {
        slave_t *w = &g_m.slaves[i];
        if (w->state == SL_BLOCKED && w->blk == BLK_CRIT && !w->crit_granted) {
            w->crit_granted = 1; /* the count passes straight to the waiter */
            bdr_sched_poke(w);
            bdr_sched_respond(s);
            return;
        }
    }
    g_m.crit_count--;
    bdr_sched_respond(s);
}

static void recheck_blocked(void);

/* A poll that found nothing (see resume() for its end).  The waiters'
 * mailboxes are looked at first: with -nr 1 the poller may have sent to
 * one without ringing us (it owes the ring, match.c wake_receiver), and
 * that one is the rank it should yield to. */
static void req_yield(slave_t *s, const bd_req_t *r)
{
    (void)r;
    if (!s->resuming)
        recheck_blocked();
    bdr_sched_poll_failed(s);
}

static void handle_request(slave_t *s)
{
    bd_req_t *r = &s->slot->req;
    bdr_asleep_back(s);            /* awake: it counts as running again */
    if (bdr_comm_notes_pending(s)) /* what it told before it asked (read after req_seq) */
        bdr_comm_notes_take(s);
    if (bdr_outq_pending(s)) /* what it sent before it asked */
        bdr_outq_take(s);
    memset(&s->slot->resp, 0, sizeof s->slot->resp);
    atomic_fetch_add_explicit(&s->slot->stats[BD_STAT_RPCS], 1, memory_order_relaxed);
    const route_t *rt = route_of(r->code);
    if (!(rt && rt->any_state) && s->state != SL_RUNNING) {
        bdr_master_fail(1,
                        "rank %d sent request %u while not running (state %d): is a second "
                        "thread calling MPI?",
                        s->world, r->code, s->state);
        return;
    }
    if (!rt || !rt->fn) {
        bdr_master_fail(1, "rank %d sent an unknown request %u", s->world, r->code);
        return;
    }
    /* The rank wrote its window beyond the first page for this request, or
     * we will answer there (mbox.c bdr_mbox_stopped). */
    if (!bdr_req_win_page(r))
        s->win_dirty = 1;
    rt->fn(s, r);
    /* bounded staging stops holding back for it (coll_pipe.c away) */
    if (s->state == SL_BLOCKED || s->polled)
        bdr_pipe_blocked(s);
    if (s->state == SL_BLOCKED || s->state == SL_RUNNABLE) {
        bdr_mbox_stopped(s);
        bdr_unmanaged_sample(s, 0);
    }
}

/* ---------------------------------------------------------------- processes */

static const char *g_prog_path;
static char **g_prog_argv;

static pid_t g_master_pid;
static sigset_t g_orig_mask;

int bdr_master_start(slave_t *s, const char *path, char *const *argv, const char *wdir, char *err,
                     size_t errlen)
{
    /* The child runs only async-signal-safe calls (exec.h): its
     * environment and the files to try are made here.  The exec's outcome
     * comes back through a close-on-exec pipe: EOF when the exec
     * succeeded, the child's errno when it failed. */
    char slot_e[32], shm_e[32], ev_e[32];
    snprintf(slot_e, sizeof slot_e, "BDMPI_SLOT=%d", s->idx);
    snprintf(shm_e, sizeof shm_e, "BDMPI_SHM_FD=%d", g_m.shm_fd);
    snprintf(ev_e, sizeof ev_e, "BDMPI_EVENT_FD=%d", g_m.event_fd);
    const char *const set[] = {slot_e, shm_e, ev_e};
    bdr_exec_t x;
    if (bdr_exec_prepare(&x, path, argv, set, 3) < 0) {
        snprintf(err, errlen, "out of memory preparing its environment");
        return -1;
    }
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "pipe failed: %s", strerror(errno));
        bdr_exec_free(&x);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "fork failed: %s", strerror(errno));
        close(p[0]);
        close(p[1]);
        bdr_exec_free(&x);
        return -1;
    }
    if (pid == 0) {
        close(p[0]);
        /* The slave must never outlive its master. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != g_master_pid)
            _exit(1);
        sigprocmask(SIG_SETMASK, &g_orig_mask, NULL);
        bdr_affinity_child(); /* the kernel's default slice (affinity.c) */
        /* A session of its own (-rank-session): with autogroup scheduling
         * the kernel shares the CPUs between sessions first, and ranks in
         * one session shared one share (K-means at -ns 2 -nr 2 on a
         * loaded machine: 1.5x MPICH's time, whose processes each get a
         * session from its launcher; docs/performance.md, issue 12
         * session 14).  The master stays in bdmpiexec's, so a terminal's
         * signals still reach the launcher and the master. */
        if (g_m.opts.num[BD_OPT_RANK_SESSION] == 0)
            (void)setsid();
        if (g_m.nnodes > 1) {
            /* MPICH's launcher leaves its own pipes open in the masters
             * (its output forwarding, the proxy's control); a rank, or a
             * process a rank leaves behind, holding them keeps mpiexec
             * and so bdmpiexec from ending (soak, issue 18).  A rank gets
             * its standard streams and our two descriptors only.  (With one
             * node, what the user gave bdmpiexec is passed on.) */
            close_range(3, ~0u, CLOSE_RANGE_CLOEXEC);
            fcntl(g_m.shm_fd, F_SETFD, 0);
            fcntl(g_m.event_fd, F_SETFD, 0);
        }
        if (s->idx != 0) {
            int fd = open("/dev/null", O_RDONLY);
            if (fd >= 0) {
                dup2(fd, STDIN_FILENO);
                close(fd);
            }
        }
        int e = wdir && chdir(wdir) < 0 ? errno : bdr_exec_run(&x, argv);
        (void)!write(p[1], &e, sizeof e);
        _exit(127);
    }
    bdr_exec_free(&x);
    close(p[1]);
    int e = 0;
    ssize_t n;
    while ((n = read(p[0], &e, sizeof e)) < 0 && errno == EINTR)
        ;
    close(p[0]);
    s->pid = pid;
    s->slot->pid = pid;
    s->exited = 0;
    g_m.nlive++;
    atomic_fetch_add_explicit(&g_m.hdr->nused, 1, memory_order_relaxed);
    if (n == (ssize_t)sizeof e) {
        s->start_failed = 1; /* reaped like the others, but ends nothing */
        if (wdir && e == ENOENT && access(wdir, F_OK) < 0)
            snprintf(err, errlen, "cannot change to directory '%s': %s", wdir, strerror(e));
        else
            snprintf(err, errlen, "cannot run '%s': %s", path, strerror(e));
        return -1;
    }
    return 0;
}

static void spawn_slave(slave_t *s)
{
    char err[512];
    if (bdr_master_start(s, g_prog_path, g_prog_argv, NULL, err, sizeof err) < 0)
        bdr_master_fail(127, "rank %d: %s", s->world, err);
}

/* Ctrl-Z and fg (or bg), as MPICH's launcher passes them to its
 * processes.  Ranks in sessions of their own (-rank-session on) do not get
 * the terminal's SIGTSTP, and would ignore it anyway (the kernel drops a
 * terminal stop for an orphaned process group, which a session leader's
 * is): on SIGTSTP the master stops every rank with SIGSTOP, then itself.
 * Continued (SIGCONT, which also resumes us however it is masked), it
 * continues its ranks and tells the stall checks that the pause was not a
 * stall.  A SIGCONT read later, or without a stop of ours, continues the
 * ranks again: that is harmless, and covers a stop made by hand. */
static void job_stop(int stop)
{
    if (stop) {
        bd_log_info("SIGTSTP: stopping %d rank(s) and the master", g_m.nlive);
        for (int i = 0; i < g_m.ns; i++)
            if (g_m.slaves[i].pid > 0 && !g_m.slaves[i].exited)
                kill(g_m.slaves[i].pid, SIGSTOP);
        raise(SIGSTOP);
    }
    for (int i = 0; i < g_m.ns; i++)
        if (g_m.slaves[i].pid > 0 && !g_m.slaves[i].exited)
            kill(g_m.slaves[i].pid, SIGCONT);
    bdr_stall_resumed();
}

static void reap(void)
{
    for (;;) {
        int st;
        pid_t pid = waitpid(-1, &st, WNOHANG);
        if (pid <= 0)
            return;
        slave_t *s = NULL;
        for (int i = 0; i < g_m.ns; i++)
            if (g_m.slaves[i].pid == pid && !g_m.slaves[i].exited)
                s = &g_m.slaves[i];
        if (!s)
            continue;
        if (bdr_comm_notes_pending(s)) /* its last frees */
            bdr_comm_notes_take(s);
        if (bdr_outq_pending(s)) /* and sends */
            bdr_outq_take(s);
        s->exited = 1;
        s->exit_status = st;
        bdr_unmanaged_exited(s);
        g_m.nlive--;
        atomic_fetch_sub_explicit(&g_m.hdr->nused, 1, memory_order_relaxed);
        sl_state_t was = bdr_sched_exited(s);
        bdr_msg_cleanup(s);
        bdr_mbox_exited(s);
        if (g_m.nnodes > 1)
            bdr_direct_exited(s);
        int ends_nothing = s->start_failed || g_m.stopping;
        if (s->spawned)
            bdr_spawn_slot_reaped(s);
        if (ends_nothing)
            continue;
        const char *who = s->spawned ? "spawned rank" : "rank";
        if (WIFSIGNALED(st)) {
            int sig = WTERMSIG(st);
            bdr_master_fail(128 + sig, "%s %d (pid %d) was killed by signal %d (%s)%s", who,
                            s->world, (int)pid, sig, strsignal(sig),
                            was == SL_FINALIZED ? " after MPI_Finalize" : "");
        } else if (WEXITSTATUS(st) != 0) {
            int code = WEXITSTATUS(st);
            if (was == SL_FINALIZED) {
                if (!g_m.job_failed)
                    g_m.job_failed = code;
            } else {
                bdr_master_fail(code, "%s %d (pid %d) exited with status %d %s", who, s->world,
                                (int)pid, code,
                                s->inited ? "without calling MPI_Finalize" : "before MPI_Init");
            }
        } else if (s->inited && !s->finalized) {
            bdr_master_fail(1, "%s %d (pid %d) exited without calling MPI_Finalize", who, s->world,
                            (int)pid);
        }
    }
}

static uint64_t g_turns, g_reaps; /* --stats: turns of the event loop, safety-net reaps */

/* The node's report is built in memory and written with one write(2): with
 * -nn > 1 the masters' stderr meet in hydra's proxy, which forwards what
 * one read of a pipe gives (64 KiB), so reports written line by line came
 * out interleaved, line by line, with another node's. */
static void print_stats(void)
{
    uint64_t(*per)[BD_STAT__COUNT] = calloc((size_t)g_m.ns, sizeof *per);
    if (!per)
        return;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        f = stderr;
    for (int i = 0; i < g_m.ns; i++)
        for (int k = 0; k < BD_STAT__COUNT; k++)
            per[i][k] = atomic_load(&g_m.slaves[i].slot->stats[k]);
    if (g_m.ns) /* the node's values */
        per[0][BD_STAT_SPILL_PEAK] = atomic_load(&g_m.hdr->spill_peak);
    if (g_m.ns)
        per[0][BD_STAT_STAGE_PEAK] = bdr_coll_stage_peak();
    bd_stats_print(f, (const uint64_t(*)[BD_STAT__COUNT])per, g_m.ns,
                   bdr_master_now() - g_m.t_start);
    fprintf(f, "  master: peak bytes of messages in memory %llu\n",
            (unsigned long long)g_m.peak_buffered);
    fprintf(f, "  master: bytes of collective data in spill files %llu\n",
            (unsigned long long)g_m.coll_file_bytes);
    if (g_m.coll_ref_read)
        fprintf(f,
                "  master: bytes of collective data handed over by reference and read from the "
                "node's store at once (pieces for other nodes' ranks) %llu\n",
                (unsigned long long)g_m.coll_ref_read);
    if (g_m.coll_ref_batched)
        fprintf(f,
                "  master: bytes of collective data by reference read from the node's store "
                "with the same reader's other pieces, all at once %llu\n",
                (unsigned long long)g_m.coll_ref_batched);
    uint64_t hits, stored, ahead;
    bdr_stage_stats(&hits, &stored, &ahead);
    fprintf(f,
            "  master: bytes of collective data moved from memory to spill files %llu, read "
            "while being written %llu, read ahead of the GETs %llu\n",
            (unsigned long long)stored, (unsigned long long)hits, (unsigned long long)ahead);
    if (g_m.hdr->job.mem_strategy != BD_MEMS_NONE)
        fprintf(f,
                "  master: memory budget %llu bytes, peak accounted resident %llu bytes "
                "(managed memory + buffered messages)\n",
                (unsigned long long)g_m.hdr->job.mem_budget,
                (unsigned long long)g_m.peak_node_resident);
    if (g_m.hdr->job.mem_strategy != BD_MEMS_NONE)
        fprintf(f,
                "  master: peak memory of the ranks outside the memory manager beyond 384 KiB a "
                "rank %llu bytes (counted in the budget up to half of it)\n",
                (unsigned long long)bdr_unmanaged_peak());
    if (g_m.nnodes > 1)
        fprintf(f,
                "  master: messages to other nodes' masters %llu, of which deadlock-detection "
                "reports %llu\n",
                (unsigned long long)bdr_net_sent_total(),
                (unsigned long long)bdr_deadlock_reports());
    if (g_m.nnodes > 1) {
        uint64_t rung, heard, reads;
        bdr_net_bell_stats(&rung, &heard, &reads);
        fprintf(f,
                "  master: event-loop turns %llu, safety-net reaps %llu, doorbells rung %llu, "
                "heard %llu in %llu reads\n",
                (unsigned long long)g_turns, (unsigned long long)g_reaps, (unsigned long long)rung,
                (unsigned long long)heard, (unsigned long long)reads);
    }
    if (g_m.nr > 1 && g_m.hdr->job.mem_strategy != BD_MEMS_NONE)
        fprintf(f,
                "  master: a free run slot kept free for %.2f s because the next rank's memory "
                "did not fit beside the running ranks' (CORUN_HELD)\n",
                g_m.corun_idle_s + (g_m.corun_gated ? bdr_master_now() - g_m.corun_since : 0));
    bdr_pressure_stats(f);
    bdr_trace_stats(f);
    free(per);
    if (f != stderr && fclose(f) == 0) {
        for (size_t off = 0; off < len;) {
            ssize_t n = write(STDERR_FILENO, text + off, len - off);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            off += (size_t)n;
        }
    }
    free(text);
}

/* The program exists and is executable (searched in PATH like execvp). */
static int program_runnable(const char *prog)
{
    if (strchr(prog, '/'))
        return access(prog, X_OK) == 0;
    const char *path = getenv("PATH");
    char buf[4096];
    for (const char *p = path; p && *p;) {
        const char *colon = strchr(p, ':');
        size_t n = colon ? (size_t)(colon - p) : strlen(p);
        snprintf(buf, sizeof buf, "%.*s/%s", (int)n, p, prog);
        if (access(buf, X_OK) == 0)
            return 1;
        p = colon ? colon + 1 : NULL;
    }
    return 0;
}

/* A singleton (a program started without bdmpiexec, src/lib/mpi/env.c)
 * forked its rank, then exec'ed us with BDMPI_SINGLETON = "PID,SHM,EV,PIPE":
 * the rank's pid (our child), the memfd and eventfd it made for us, and a
 * pipe on which the rank waits for one byte: the shared memory is ready. */
static struct {
    pid_t pid;
    int shm_fd, event_fd, ready_fd;
} g_single;

static int singleton_parse(void)
{
    const char *v = getenv("BDMPI_SINGLETON");
    if (!v)
        return 0;
    int pid, a, b, c;
    if (sscanf(v, "%d,%d,%d,%d", &pid, &a, &b, &c) != 4 || pid <= 0) {
        bd_log_error("invalid BDMPI_SINGLETON '%s'", v);
        return -1;
    }
    g_single.pid = pid;
    g_single.shm_fd = a;
    g_single.event_fd = b;
    g_single.ready_fd = c;
    g_m.singleton = 1;
    unsetenv("BDMPI_SINGLETON");
    unsetenv("BDMPI_JOBDIR");
    return 0;
}

/* The rank the singleton forked is our slot 0 (and our child): it goes on
 * once it reads the byte. */
static void singleton_adopt(void)
{
    slave_t *s = &g_m.slaves[0];
    s->pid = g_single.pid;
    s->slot->pid = g_single.pid;
    g_m.nlive++;
    atomic_fetch_add_explicit(&g_m.hdr->nused, 1, memory_order_relaxed);
    char ok = 1;
    (void)!write(g_single.ready_fd, &ok, 1);
    close(g_single.ready_fd);
}

/* Until the event loop watches our parent (and reads SIGTERM from the
 * signalfd), setup may block in MPI for as long as another master takes:
 * MPI_Init, the node handshake.  If MPICH's proxy, our parent, is killed
 * then, the PDEATHSIG may be lost (masked, or taken by a library's handler)
 * and the other master may be gone: we would wait for ever, holding the
 * launcher's pipes, so mpiexec and bdmpiexec would wait too.  This thread
 * ends the process when the parent is gone before the loop starts; nothing
 * of ours needs cleaning then that bdmpiexec does not remove (the job's
 * directories), and ranks already started die with us (PDEATHSIG). */
static atomic_int g_init_guard_done;
static pid_t g_first_parent; /* our parent when main started */

static void *init_guard(void *arg)
{
    (void)arg;
    while (!atomic_load(&g_init_guard_done)) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
        if (!atomic_load(&g_init_guard_done) && getppid() != g_m.parent) {
            static const char msg[] = "bdmprun: the process that started this master has ended "
                                      "while it was starting: exiting\n";
            ssize_t w = write(2, msg, sizeof msg - 1);
            (void)w;
            _exit(1);
        }
    }
    return NULL;
}

static void init_guard_start(void)
{
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    /* The thread takes no signal: SIGCHLD and SIGTERM go to the signalfd
     * once the main thread blocks them (a thread that did not block them
     * would take them, their default actions: a rank's end unseen, an end
     * without clean-up).  A parent's death during MPI_Init, with SIGTERM
     * blocked (bdr_net_init), is what the thread watches for. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    if (pthread_create(&t, &at, init_guard, NULL) != 0)
        bd_log_error("cannot start the thread that watches the launcher during start-up");
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&at);
}

static int setup(int argc, char **argv, sigset_t *orig_mask)
{
    g_m.nnodes = 1;
    char err[512];
    if (singleton_parse() < 0)
        return -1;
    if (bd_opts_load_env(&g_m.opts, err, sizeof err) < 0) {
        bd_log_error("%s", err);
        return -1;
    }
    if (g_m.singleton)
        g_m.opts.num[BD_OPT_NS] = 1, g_m.opts.num[BD_OPT_NN] = 1;
    bd_opts_normalise(&g_m.opts);
    bd_log_set_level((int)g_m.opts.num[BD_OPT_VERBOSE]);
    if (argc < 2) {
        bd_log_error("usage: bdmprun PROGRAM [ARGS...] (normally started by bdmpiexec)");
        return -1;
    }
    g_prog_path = argv[1];
    g_prog_argv = argv + 1;
    if (!program_runnable(g_prog_path)) {
        bd_log_error("cannot run '%s': %s", g_prog_path,
                     strchr(g_prog_path, '/') ? strerror(errno) : "not found in PATH");
        return -127;
    }
    g_m.ns = (int)g_m.opts.num[BD_OPT_NS];
    g_m.ninit = g_m.ns;
    g_m.nslots = g_m.ns + (int)g_m.opts.num[BD_OPT_MAX_SPAWN];
    g_m.nr = (int)g_m.opts.num[BD_OPT_NR];
    g_m.nc = (int)g_m.opts.num[BD_OPT_NC];

    if (!g_m.singleton) {
        /* If the process that started us ends, we are told to stop (and
         * clean up).  Said before MPI_Init, which MPICH's proxy serves:
         * its end while we are in there must not go unnoticed.  The signal
         * is taken through the signalfd once it exists; until then (no rank
         * started yet, nothing of ours to clean) its default action ends
         * us.  A singleton's master has no launcher: it lives as long as
         * its rank. */
        g_m.parent = g_first_parent;
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != g_m.parent)
            return -1; /* it ended before the request took effect (or
                        * before main); one that ended before we ran at
                        * all is left to bdmpiexec, which kills a master
                        * whose proxy has ended (watch.c) and what is left
                        * of a job (job.h) */
        init_guard_start();
    }
    if (g_m.opts.num[BD_OPT_NN] > 1) {
        if (bdr_net_init(&argc, &argv, &g_m.node, &g_m.nnodes) < 0)
            return -1;
        if (g_m.nnodes != g_m.opts.num[BD_OPT_NN]) {
            bd_log_error("started as %d masters for -nn %lld", g_m.nnodes, g_m.opts.num[BD_OPT_NN]);
            return -1;
        }
        if (bdr_node_init() < 0)
            return -1;
        char p[32];
        snprintf(p, sizeof p, "bdmprun[node %d]", g_m.node);
        bd_log_set_prefix(p);
    }
    const char *jd = g_m.nnodes == 1 ? getenv("BDMPI_JOBDIR") : NULL;
    if (jd) {
        /* Every spill and backing file of the job goes there: it must be
         * ours alone (bdmpiexec makes it so; someone starting us by hand
         * may not have). */
        if (bd_fs_check_private_dir(jd, err, sizeof err) < 0) {
            bd_log_error("BDMPI_JOBDIR '%s' is not a private directory: %s; it must be a "
                         "directory owned by this user with mode 0700 (bdmpiexec makes one)",
                         jd, err);
            return -1;
        }
        snprintf(g_m.jobdir, sizeof g_m.jobdir, "%s", jd);
    } else if (bd_fs_make_jobdir(g_m.opts.str[BD_OPT_WD], g_m.jobdir, sizeof g_m.jobdir, err,
                                 sizeof err) < 0) {
        bd_log_error("%s", err);
        return -1;
    }

    node_pid_file(1);
    uint64_t window = (uint64_t)g_m.opts.num[BD_OPT_WINDOW];
    uint64_t thr = (uint64_t)g_m.opts.num[BD_OPT_MSG_THRESHOLD];
    if (window < thr + 4096)
        window = thr + 4096;
    bd_shm_hdr_t tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.ninit = (uint32_t)g_m.ninit;
    tmp.nspawn = (uint32_t)(g_m.nslots - g_m.ninit);
    uint64_t total = bd_shm_layout(&tmp, (uint32_t)g_m.nslots, window, thr);
    total = bdr_trace_layout(&tmp, total);
    /* The storage-deduplication table of the node's ranks (src/mem/mem_dedup.c):
     * about 24 bytes per slot of one sbpage, 1.1 million slots (68 GiB of distinct
     * data at 64K sbpages; beyond, sbpages go to their allocation's own
     * file).  Only the pages the table uses become memory. */
    if (g_m.opts.num[BD_OPT_MEM_DEDUP] == 0 && g_m.opts.num[BD_OPT_MEM_STRATEGY] != BD_MEMS_NONE) {
        tmp.dedup_offset = (total + 4095) / 4096 * 4096;
        tmp.dedup_bytes = 26ull << 20;
        total = tmp.dedup_offset + tmp.dedup_bytes;
    }
    total = bdr_remote_layout(&tmp, total);

    /* memfd: nothing to clean up in /dev/shm whatever happens to us.  A
     * singleton (see singleton_setup) made it, and the eventfd, before it
     * forked its rank and exec'ed us. */
    g_m.shm_fd = g_m.singleton ? g_single.shm_fd : memfd_create("bdmpi-shm", 0);
    if (g_m.shm_fd < 0 || ftruncate(g_m.shm_fd, (off_t)total) < 0) {
        bd_log_error("cannot create %llu bytes of shared memory: %s", (unsigned long long)total,
                     strerror(errno));
        return -1;
    }
    g_m.hdr = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, g_m.shm_fd, 0);
    if (g_m.hdr == MAP_FAILED) {
        bd_log_error("mmap of %llu bytes of shared memory failed: %s", (unsigned long long)total,
                     strerror(errno));
        return -1;
    }
    *g_m.hdr = tmp;
    g_m.hdr->magic = BD_SHM_MAGIC;
    g_m.hdr->master_addr = (uint64_t)(uintptr_t)g_m.hdr;
    /* Ranks probe single-copy reads on us (bdl_p2p_init); Yama's
     * ptrace_scope 1 would refuse a child otherwise.  EINVAL without Yama. */
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    g_m.hdr->world_size = (uint32_t)(g_m.ns * g_m.nnodes);
    g_m.hdr->nnodes = (uint32_t)g_m.nnodes;
    g_m.hdr->node = (uint32_t)g_m.node;
    g_m.hdr->first_rank = (uint32_t)(g_m.ns * g_m.node);
    bd_job_config_t *job = &g_m.hdr->job;
    bd_job_config_fill(job, &g_m.opts);
    if (job->sbpage % 4096) {
        bd_log_error("-sbpage %llu is not a multiple of 4096", (unsigned long long)job->sbpage);
        return -1;
    }
    if (job->universe_size && job->universe_size < g_m.hdr->world_size) {
        bd_log_error("-universe-size %llu is smaller than the job's %u ranks",
                     (unsigned long long)job->universe_size, g_m.hdr->world_size);
        return -1;
    }
    if (job->mem_strategy == BD_MEMS_NONE)
        job->mem_budget = 0; /* nothing is managed: nothing to account */
    else if (mem_node_budget(&job->mem_budget) < 0)
        return -1;
    else if (!job->mem_budget)
        job->mem_budget = bdr_memacct_default_budget();
    if (bdr_remote_init() < 0)
        return -1;
    bdr_pressure_init();
    bdr_memacct_ksm_check();
    snprintf(g_m.hdr->jobdir, sizeof g_m.hdr->jobdir, "%s", g_m.jobdir);
    if (bdr_trace_open() < 0)
        return -1;

    g_m.event_fd = g_m.singleton ? g_single.event_fd : eventfd(0, EFD_NONBLOCK);
    if (g_m.event_fd < 0) {
        bd_log_error("eventfd failed: %s", strerror(errno));
        return -1;
    }
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGHUP);
    /* A terminal's Ctrl-Z (SIGTSTP) reaches us but not the ranks, which
     * lead sessions of their own (-rank-session): job_stop passes it on. */
    sigaddset(&mask, SIGTSTP);
    sigaddset(&mask, SIGCONT);
    sigprocmask(SIG_BLOCK, &mask, orig_mask);
    g_m.signal_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    g_m.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (g_m.signal_fd < 0 || g_m.epoll_fd < 0) {
        bd_log_error("signalfd/epoll failed: %s", strerror(errno));
        return -1;
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = g_m.event_fd};
    epoll_ctl(g_m.epoll_fd, EPOLL_CTL_ADD, g_m.event_fd, &ev);
    ev.data.fd = g_m.signal_fd;
    epoll_ctl(g_m.epoll_fd, EPOLL_CTL_ADD, g_m.signal_fd, &ev);
    g_m.slaves = calloc((size_t)g_m.nslots, sizeof(slave_t));
    if (!g_m.slaves)
        return -1;
    for (int i = 0; i < g_m.nslots; i++) {
        slave_t *s = &g_m.slaves[i];
        s->idx = i;
        s->slot = bd_shm_slot(g_m.hdr, (uint32_t)i);
        s->win = bd_slot_window(g_m.hdr, s->slot);
        if (i >= g_m.ninit) {
            /* a spawn slot: free until MPI_Comm_spawn takes it */
            s->world = -1;
            s->state = SL_EXITED;
            s->exited = 1;
            s->slot->world_rank = -1;
            continue;
        }
        s->world = (int)g_m.hdr->first_rank + i;
        s->state = SL_PREINIT;
        bdr_mbox_attach(s);
        s->slot->world_rank = s->world;
    }
    g_m.ninit_pending = g_m.ns;
    bdr_comm_init_predefined();
    return 0;
}

int main(int argc, char **argv)
{
    /* First, before the options are read: the longer we wait, the longer
     * the time in which our parent's end would go unseen. */
    g_first_parent = getppid();
    bd_log_set_prefix("bdmprun");
    sigset_t orig_mask;
    int rc = setup(argc, argv, &orig_mask);
    if (rc < 0) {
        bd_fs_remove_tree(g_m.jobdir[0] && !getenv("BDMPI_JOBDIR") ? g_m.jobdir : NULL);
        return rc == -127 ? 127 : 1;
    }
    g_m.t_start = bdr_master_now();
    g_master_pid = getpid();
    g_orig_mask = orig_mask;
    bdr_affinity_setup();
    bdr_stall_init();
    if (g_m.singleton)
        singleton_adopt();
    for (int i = g_m.singleton; i < g_m.ns && !g_m.stopping; i++)
        spawn_slave(&g_m.slaves[i]);

    /* Other nodes: MPICH cannot wake us, so each master rings the
     * doorbell of the masters it has sent to (net_mpich.c) and we sleep on
     * it with the rest.  While MPICH holds work of ours (bdr_net_busy), we
     * poll it without sleeping for a short spin, then in short naps, since
     * the data is there or on its way; otherwise we sleep until woken, with
     * a backing-off safety-net poll (1-16 ms) in case a doorbell is lost. */
    int bell_fd = g_m.nnodes > 1 ? bdr_net_fd() : -1;
    if (bell_fd >= 0) {
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = bell_fd};
        epoll_ctl(g_m.epoll_fd, EPOLL_CTL_ADD, bell_fd, &ev);
    }
    /* Spin and nap lengths: 0-200 us spins and 10-50 us naps measured the
     * same here (docs/performance.md "Inter-node progress"). */
    const double spin_s = 50e-6;
    const long nap_ns = 50000;
    int net_wait_ms = 1, again = 0;
    double last_net = 0;
    double last_reap = 0;
    double parent_checked = 0;
    atomic_store(&g_init_guard_done, 1); /* the loop watches the parent from here */
    for (;;) {
        g_turns++;
        bdr_stall_beat();
        if (BD_FAULT_HIT(BD_FAULT_MASTER_LOOP)) /* test: a hung master */
            for (;;)
                pause();
        if (g_m.parent && !g_m.orphaned && bdr_master_now() - parent_checked > 0.1) {
            /* The end of our parent comes as SIGTERM (PDEATHSIG), but a
             * signal can be missed (ours arrived before the mask); looking
             * costs one system call every 0.1 s. */
            parent_checked = bdr_master_now();
            if (getppid() != g_m.parent) {
                g_m.orphaned = 1;
                bdr_master_fail(1,
                                "the process that started this master (pid %d) has ended: "
                                "ending the job",
                                (int)g_m.parent);
            }
        }
        if (g_m.nlive == 0) {
            /* Our ranks are gone: nothing here needs the spill files any more,
             * so remove them now, before waiting for the other nodes. */
            bd_fs_remove_tree(g_m.jobdir);
            /* Our MPI launcher (MPICH's proxy) is gone: the other masters
             * may be gone with it (killed, or by SIGPIPE on its closed
             * pipes) and will not say DONE, MPI_Abort and MPI_Finalize need
             * the launcher.  The others were told; we end without MPI (the
             * soak left a master waiting for ever: issue 18). */
            if (g_m.nnodes > 1 && g_m.orphaned)
                break;
            /* A send to another master failed: our DONE cannot reach them
             * and the orderly end would wait for ever (soak, issue 18);
             * MPI_Abort ends every master (the failure has been told). */
            if (g_m.nnodes > 1 && bdr_net_broken())
                bdr_net_abort(g_m.job_failed ? g_m.job_failed : 1);
            if (g_m.nnodes == 1 || bdr_node_all_done())
                break;
        }
        struct epoll_event evs[4];
        struct timespec wait = {.tv_sec = 1};
        if (bdr_pressure_on()) /* the adaptive budget samples every 100 ms */
            wait.tv_sec = 0, wait.tv_nsec = 100000000L;
        if (g_m.nnodes > 1) {
            if (again) {
                wait.tv_sec = 0, wait.tv_nsec = 0;
            } else if (bdr_net_busy() || bdr_direct_busy()) {
                wait.tv_sec = 0;
                wait.tv_nsec = bdr_master_now() - last_net < spin_s ? 0 : nap_ns;
            } else {
                wait.tv_sec = 0, wait.tv_nsec = net_wait_ms * 1000000L;
            }
        }
        double aw = bdr_asleep_wait_s();    /* look again for ranks asleep outside MPI */
        double pw = bdr_mbox_poll_wait_s(); /* answer polls asleep here at their bound */
        if (pw >= 0 && (aw < 0 || pw < aw))
            aw = pw;
        if (aw >= 0 && aw < (double)wait.tv_sec + (double)wait.tv_nsec * 1e-9)
            wait.tv_sec = (time_t)aw, wait.tv_nsec = (long)((aw - (double)(time_t)aw) * 1e9);
        int n = epoll_pwait2(g_m.epoll_fd, evs, 4, &wait, NULL);
        if (n < 0 && errno != EINTR) {
            bdr_master_fail(1, "epoll_wait failed: %s", strerror(errno));
            break;
        }
        for (int k = 0; k < n; k++) {
            if (evs[k].data.fd == g_m.signal_fd) {
                struct signalfd_siginfo si;
                while (read(g_m.signal_fd, &si, sizeof si) == (ssize_t)sizeof si) {
                    if (si.ssi_signo == SIGCHLD)
                        continue;
                    if (si.ssi_signo == SIGTSTP || si.ssi_signo == SIGCONT) {
                        job_stop(si.ssi_signo == SIGTSTP);
                        continue;
                    }
                    bdr_master_fail(128 + (int)si.ssi_signo,
                                    "received signal %d (%s): ending the job", (int)si.ssi_signo,
                                    strsignal((int)si.ssi_signo));
                }
                reap();
            } else if (evs[k].data.fd == bell_fd) {
                bdr_net_doorbell();
            } else {
                uint64_t cnt;
                if (read(g_m.event_fd, &cnt, sizeof cnt) < 0 && errno != EAGAIN)
                    bdr_master_fail(1, "eventfd read failed: %s", strerror(errno));
            }
        }
        int got = bdr_node_progress();
        /* Always scan: a ring of the eventfd may cover many requests. */
        if (!g_m.stopping) {
            bdr_stage_poll(); /* completed staging writes free memory first */
            for (int i = 0; i < g_m.ns; i++) {
                slave_t *s = &g_m.slaves[i];
                /* communicator notices of ranks that ask nothing now */
                if (!s->exited && bdr_comm_notes_pending(s))
                    bdr_comm_notes_take(s);
                if (!s->exited && bdr_outq_pending(s)) /* its sends to other nodes */
                    bdr_outq_take(s);
                uint32_t seq = atomic_load_explicit(&s->slot->req_seq, memory_order_acquire);
                if (seq != s->seen_req && !s->exited) {
                    s->seen_req = seq;
                    handle_request(s);
                }
            }
            bdr_pressure_poll();
            bdr_remote_poll();
            bdr_memacct_poll();
            bdr_mbox_poll();
            bdr_rma_poll();
            recheck_blocked();
            bdr_asleep_poll();
            schedule();
            bdr_coll_readahead();
            bdr_deadlock_check();
            bdr_stall_check();
        }
        if (g_m.nnodes > 1) {
            /* What the requests queued for other nodes leaves now, with
             * its doorbells, not after the next sleep; what arrives
             * meanwhile is handled at once. */
            again = bdr_node_progress();
            if (got || again)
                last_net = bdr_master_now();
            if (got || again || !bdr_node_quiet())
                net_wait_ms = 1;
            else if (net_wait_ms < 16)
                net_wait_ms *= 2;
        }
        /* The safety net for a SIGCHLD not seen (the signalfd reaps the
         * rest): at a turn that found nothing, but at most every 10 ms, not
         * at every poll of a loop that spins or naps for another node's
         * data (a wait4 per turn, two per inter-node round trip). */
        if (n == 0 && bdr_master_now() - last_reap > 0.01) {
            last_reap = bdr_master_now();
            g_reaps++;
            reap();
        }
        bdr_trace_poll();
    }
    bdr_stall_loop_done();
    bdr_trace_finish();
    /* Every master ends through MPI_Finalize, also after a failure (all of
     * them have been told), so they all exit with the job's status and the
     * MPI launcher has nothing to tear down. */
    node_pid_file(0); /* an orderly end, whatever the job's status */
    if (g_m.nnodes > 1 && !g_m.orphaned)
        bdr_net_fini();
    bdr_remote_fini();
    if (g_m.opts.num[BD_OPT_STATS])
        print_stats();
    bd_fs_remove_tree(g_m.jobdir);
    if (g_m.nnodes > 1 && g_m.orphaned) {
        /* No exit handlers: MPICH's and UCX's would talk to what is gone. */
        fflush(NULL);
        _exit(g_m.job_failed ? g_m.job_failed : 1);
    }
    return g_m.job_failed;
}
