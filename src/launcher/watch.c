/* bdmpiexec's watch over the masters of a -nn > 1 job (watch.h). */
#include "watch.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bd_log.h"
#include "job.h"

#define MW_MAX 64

volatile sig_atomic_t bd_job_watch_signal;

typedef struct {
    pid_t pid, parent; /* parent: the process that started it, when first seen */
    int fd;            /* pidfd; -1 once it has ended */
    int node;          /* from its node.N.pid file; -1 until known */
    double orphan_at;  /* when its parent was first seen gone; 0: not */
    int killed;        /* by us: its death is not the job's cause */
} mw_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The parent of pid, or 0 when it has ended (or is a zombie). */
static pid_t parent_of(pid_t pid)
{
    bd_job_proc_stat_t st;
    if (bd_job_proc_stat(pid, &st) < 0 || st.state == 'Z' || st.state == 'X')
        return 0;
    return st.ppid;
}

/* The children of pid (its main thread's: MPICH's launcher and proxy
 * start processes from it), at most max; how many. */
static int children_of(pid_t pid, pid_t *out, int max)
{
    char path[96];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int n = 0, c;
    while (n < max && fscanf(f, "%d", &c) == 1)
        out[n++] = (pid_t)c;
    fclose(f);
    return n;
}

static mw_t *find(mw_t *m, int nm, pid_t pid)
{
    for (int i = 0; i < nm; i++)
        if (m[i].pid == pid)
            return &m[i];
    return NULL;
}

/* Start watching pid, started by parent; NULL when it is gone already or
 * the table is full. */
static mw_t *add(mw_t *m, int *nm, pid_t pid, pid_t parent)
{
    mw_t *w = find(m, *nm, pid);
    if (w || *nm == MW_MAX)
        return w;
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (fd < 0)
        return NULL;
    /* The pid was read before the pidfd was made: it must still be the
     * same process, a child of parent. */
    if (parent && parent_of(pid) != parent) {
        close(fd);
        return NULL;
    }
    w = &m[(*nm)++];
    *w = (mw_t){.pid = pid, .parent = parent ? parent : parent_of(pid), .fd = fd, .node = -1};
    return w;
}

int bd_job_masters_watch(pid_t launcher, int *st, const char *jobdir, int nn, int grace_ms,
                         int *also)
{
    mw_t m[MW_MAX];
    int nm = 0, first = -1;
    double t_first = 0;
    *also = -1;
    /* The launcher's own end wakes the poll below: looked at only between
     * polls it cost every -nn > 1 job up to 50 ms at its end. */
    int lfd = (int)syscall(SYS_pidfd_open, launcher, 0);
    for (;;) {
        pid_t r = waitpid(launcher, st, WNOHANG);
        if (r == launcher || (r < 0 && errno != EINTR))
            break;
        /* Masters started on this host by MPICH's fork launcher are the
         * children of its proxies (the launcher's children); masters of
         * this host started otherwise (a hostfile) say who they are in
         * node.N.pid once they have started. */
        pid_t prox[8], kids[MW_MAX];
        int np = children_of(launcher, prox, 8);
        for (int i = 0; i < np; i++) {
            int nk = children_of(prox[i], kids, MW_MAX);
            for (int k = 0; k < nk; k++)
                add(m, &nm, kids[k], prox[i]);
        }
        for (int n = 0; n < nn; n++) {
            char path[PATH_MAX];
            snprintf(path, sizeof path, "%s/node.%d.pid", jobdir, n);
            FILE *f = fopen(path, "r");
            int p = 0;
            if (f) {
                if (fscanf(f, "%d", &p) != 1)
                    p = 0;
                fclose(f);
            }
            mw_t *w = p > 0 ? add(m, &nm, (pid_t)p, 0) : NULL;
            if (w)
                w->node = n;
        }
        struct pollfd pf[MW_MAX + 1];
        int idx[MW_MAX + 1], npf = 0;
        for (int i = 0; i < nm; i++)
            if (m[i].fd >= 0) {
                pf[npf] = (struct pollfd){.fd = m[i].fd, .events = POLLIN};
                idx[npf++] = i;
            }
        if (lfd >= 0)
            pf[npf++] = (struct pollfd){.fd = lfd, .events = POLLIN};
        int got = poll(pf, (nfds_t)npf, 50);
        if (lfd >= 0)
            npf--; /* the launcher's: waitpid above takes its end */
        int sig = bd_job_watch_signal;
        if (sig) {
            bd_job_watch_signal = 0;
            kill(launcher, sig);
            for (int i = 0; i < nm; i++)
                if (m[i].fd >= 0 && !m[i].killed)
                    syscall(SYS_pidfd_send_signal, m[i].fd, sig, NULL, 0);
            if (sig == SIGTSTP)
                raise(SIGSTOP); /* continued, the handler asks for SIGCONT */
            continue;
        }
        /* A death seen over 100 ms before is the cause.  One seen later
         * than another may still have come first: a master killed with
         * much memory is seen dead only once its memory is freed, and
         * meanwhile MPICH (UCX) in another master that was reading from it
         * aborts at once (remote.kill, -mem-remote on: node 0 named for
         * node 1 on a loaded machine); so the two are named together. */
        int known = first >= 0 && now_s() - t_first > 0.1 ? first : -1;
        for (int j = 0; got > 0 && j < npf; j++) {
            if (!(pf[j].revents & (POLLIN | POLLHUP)))
                continue;
            mw_t *w = &m[idx[j]];
            /* Its node.N.pid still there: it died without its orderly end.
             * When a master dies, MPICH ends the others within
             * milliseconds, so the first death is the cause. */
            char path[PATH_MAX];
            snprintf(path, sizeof path, "%s/node.%d.pid", jobdir, w->node);
            if (known < 0 && w->node >= 0 && !w->killed && access(path, F_OK) == 0) {
                /* Two deaths in one round (a loaded machine that ran us
                 * late): either may have been first. */
                if (first < 0)
                    first = w->node, t_first = now_s();
                else if (*also < 0 && w->node != first)
                    *also = w->node;
            }
            close(w->fd);
            w->fd = -1;
        }
        /* A master whose starter (MPICH's proxy) has ended ends its part of
         * the job by itself within 0.1 s.  One that cannot (stopped, or
         * stuck before it watches its parent) would keep the launcher
         * waiting for ever on the pipes it inherited from the proxy: after
         * the grace, it is killed. */
        double t = now_s();
        for (int i = 0; i < nm; i++) {
            mw_t *w = &m[i];
            if (w->fd < 0)
                continue;
            pid_t pp = parent_of(w->pid);
            if (pp == w->parent && pp > 1) {
                w->orphan_at = 0;
                continue;
            }
            if (w->killed)
                continue;
            if (w->orphan_at == 0) {
                w->orphan_at = t;
                continue;
            }
            if ((t - w->orphan_at) * 1000 < grace_ms)
                continue;
            char who[48] = "";
            if (w->node >= 0)
                snprintf(who, sizeof who, " of node %d", w->node);
            bd_log_error("the master%s (bdmprun, pid %d) still ran %.1f s after the process that "
                         "started it (MPICH's proxy, pid %d) ended: killed",
                         who, (int)w->pid, grace_ms / 1000.0, (int)w->parent);
            syscall(SYS_pidfd_send_signal, w->fd, SIGKILL, NULL, 0);
            w->killed = 1;
        }
    }
    for (int i = 0; i < nm; i++)
        if (m[i].fd >= 0)
            close(m[i].fd);
    if (lfd >= 0)
        close(lfd);
    return first;
}
