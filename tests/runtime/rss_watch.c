/* rss_watch LAUNCHER_PID [INTERVAL_MS]: the peak resident memory of a BDMPI
 * job, from consistent snapshots.
 *
 * Every INTERVAL_MS (default 20) while LAUNCHER_PID lives: find its master
 * (the child named bdmprun) and the master's children (the ranks), stop
 * them all with SIGSTOP, wait until every thread of each is stopped, read
 * each one's memory from /proc/PID/smaps_rollup, and continue them.  What
 * counts is the job's own memory as issue 13 states the budget: the
 * proportional set size of anonymous and shared-memory pages (Pss_Anon +
 * Pss_Shmem), so the shared-memory file the master and the ranks all map
 * counts once, and pages of the executable and libraries (file pages, the
 * same for any job) do not count; RSS and file PSS are printed for the
 * report.  (Kernels without smaps_rollup: RssAnon + RssShmem of status.)  Reading the processes one after another
 * while they run is not a snapshot: memory that one rank gives back after
 * it was read and another rank loads before it is read counts twice.  A
 * budget handover between two ranks is fast enough for that to add tens of
 * MiB when the machine is loaded and the reads are slow (mem.budget.16x256
 * once read 627 MiB where consistent snapshots read at most ~570 MiB).
 *
 * Stops and continues are invisible to the job apart from the delay
 * (the master does not wait for stopped children; interrupted waits are
 * restarted).  Prints, at the end, "peak KIB" and the snapshot that had it,
 * one line per process.  Exit status 0, or 2 on bad arguments. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define MAXP 8192

typedef struct {
    pid_t pid;
    long own;                                /* KiB: Pss_Anon + Pss_Shmem, what counts */
    long rss, pss_anon, pss_shmem, pss_file; /* KiB, for the report */
} proc_rss_t;

static pid_t g_stopped[MAXP];
static int g_nstopped;

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* State letter and parent of pid (from /proc/PID/stat, whose second field
 * may hold spaces and parentheses).  Returns 0 or -1. */
static int stat_of(const char *path, char *state, pid_t *ppid, char *comm, size_t commlen)
{
    char buf[1024];
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *l = strchr(buf, '('), *r = strrchr(buf, ')');
    if (!l || !r || r < l)
        return -1;
    if (comm) {
        size_t cl = (size_t)(r - l - 1) < commlen - 1 ? (size_t)(r - l - 1) : commlen - 1;
        memcpy(comm, l + 1, cl);
        comm[cl] = 0;
    }
    int pp = 0;
    if (sscanf(r + 1, " %c %d", state, &pp) != 2)
        return -1;
    if (ppid)
        *ppid = pp;
    return 0;
}

/* Children of parent, named name if name is not NULL. */
static int children(pid_t parent, const char *name, pid_t *out, int max)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        char path[300], st, comm[64];
        pid_t pp;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        if (stat_of(path, &st, &pp, comm, sizeof comm) == 0 && pp == parent &&
            (!name || !strcmp(comm, name)))
            out[n++] = (pid_t)atoi(e->d_name);
    }
    closedir(d);
    return n;
}

/* 1 when every thread of pid is stopped (or pid is gone). */
static int all_stopped(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return 1;
    int ok = 1;
    struct dirent *e;
    while (ok && (e = readdir(d))) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        char tp[300], st;
        snprintf(tp, sizeof tp, "/proc/%d/task/%s/stat", (int)pid, e->d_name);
        if (stat_of(tp, &st, NULL, NULL, 0) == 0 && st != 'T' && st != 't' && st != 'Z' &&
            st != 'X')
            ok = 0;
    }
    closedir(d);
    return ok;
}

static void resume_all(void)
{
    /* ranks first, the master (stopped first) last */
    for (int i = g_nstopped - 1; i >= 0; i--)
        kill(g_stopped[i], SIGCONT);
    g_nstopped = 0;
}

static void on_signal(int sig)
{
    resume_all();
    signal(sig, SIG_DFL);
    raise(sig);
}

static int read_rss(pid_t pid, proc_rss_t *p)
{
    char path[64], line[256];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    snprintf(path, sizeof path, "/proc/%d/smaps_rollup", (int)pid);
    FILE *f = fopen(path, "r");
    int have = 0;
    if (f) {
        while (fgets(line, sizeof line, f)) {
            have |= sscanf(line, "Rss: %ld", &p->rss) == 1;
            have |= (sscanf(line, "Pss_Anon: %ld", &p->pss_anon) == 1) << 1;
            sscanf(line, "Pss_Shmem: %ld", &p->pss_shmem);
            sscanf(line, "Pss_File: %ld", &p->pss_file);
        }
        fclose(f);
    }
    if (!(have & 2)) { /* no smaps_rollup or no Pss_Anon: status */
        snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
        f = fopen(path, "r");
        if (!f)
            return -1;
        while (fgets(line, sizeof line, f)) {
            have |= sscanf(line, "VmRSS: %ld", &p->rss) == 1;
            have |= (sscanf(line, "RssAnon: %ld", &p->pss_anon) == 1) << 1;
            sscanf(line, "RssShmem: %ld", &p->pss_shmem);
            sscanf(line, "RssFile: %ld", &p->pss_file);
        }
        fclose(f);
    }
    p->own = p->pss_anon + p->pss_shmem;
    return have & 2 ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc < 2 || atoi(argv[1]) <= 0) {
        fprintf(stderr, "usage: rss_watch LAUNCHER_PID [INTERVAL_MS]\n");
        return 2;
    }
    pid_t launcher = (pid_t)atoi(argv[1]);
    long interval_us = (argc > 2 ? atol(argv[2]) : 20) * 1000;
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    signal(SIGHUP, on_signal);
    static proc_rss_t snap[MAXP], best[MAXP];
    static pid_t pids[MAXP];
    long peak = 0, samples = 0, slow = 0;
    int nbest = 0;
    while (kill(launcher, 0) == 0) {
        pid_t master;
        char st;
        char lp[64];
        snprintf(lp, sizeof lp, "/proc/%d/stat", (int)launcher);
        if (stat_of(lp, &st, NULL, NULL, 0) < 0 || st == 'Z')
            break;
        if (children(launcher, "bdmprun", &master, 1) == 1) {
            int n = 0;
            pids[n++] = master;
            n += children(master, NULL, pids + 1, MAXP - 1);
            /* the master first, so that it grants nothing while ranks stop */
            for (int i = 0; i < n; i++)
                if (kill(pids[i], SIGSTOP) == 0)
                    g_stopped[g_nstopped++] = pids[i];
            int frozen = 0;
            for (int tries = 0; tries < 20000 && !frozen; tries++) {
                frozen = 1;
                for (int i = 0; i < g_nstopped && frozen; i++)
                    frozen = all_stopped(g_stopped[i]);
                if (!frozen)
                    sleep_us(50);
            }
            int m = 0;
            long tot = 0;
            if (frozen)
                for (int i = 0; i < g_nstopped; i++)
                    if (read_rss(g_stopped[i], &snap[m]) == 0)
                        tot += snap[m++].own;
            resume_all();
            if (!frozen)
                slow++; /* a thread did not stop within ~1 s: no snapshot */
            samples++;
            if (frozen && tot > peak) {
                peak = tot;
                nbest = m;
                memcpy(best, snap, (size_t)m * sizeof *snap);
            }
        }
        sleep_us(interval_us);
    }
    printf("peak %ld KiB (Pss_Anon + Pss_Shmem) in %ld snapshots (%ld skipped)\n", peak, samples,
           slow);
    for (int i = 0; i < nbest; i++)
        printf("  %s pid %d: %ld KiB (Pss_Anon %ld, Pss_Shmem %ld; Pss_File %ld, Rss %ld)\n",
               i ? "rank  " : "master", (int)best[i].pid, best[i].own, best[i].pss_anon,
               best[i].pss_shmem, best[i].pss_file, best[i].rss);
    return 0;
}
