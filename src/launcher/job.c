#include "job.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* When bdmpiexec started, before it started any process of the job (the
 * guardian, forked later, inherits it): every process of the job started
 * after, so the environment, whose reading waits for a process's memory
 * map lock, is read only of those, not of every process of the machine. */
static unsigned long long g_job_start;

void bd_job_id_make(char *out, size_t len)
{
    bd_job_proc_stat_t me;
    g_job_start = bd_job_proc_stat(getpid(), &me) == 0 ? me.start : 0;
    unsigned long long v = 0;
    if (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v) {
        /* No entropy source: pid and time still differ between the jobs
         * of one machine, which is all the id has to tell apart. */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        v = ((unsigned long long)getpid() << 40) ^ (unsigned long long)ts.tv_nsec ^
            ((unsigned long long)ts.tv_sec << 20);
    }
    snprintf(out, len, "%016llx", v);
}

int bd_job_proc_stat(pid_t pid, bd_job_proc_stat_t *out)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    /* "pid (comm) S ppid ...": the name may itself hold ')' and spaces. */
    const char *p = strrchr(buf, ')');
    int ppid;
    if (!p || sscanf(p + 1, " %c %d", &out->state, &ppid) != 2)
        return -1;
    out->ppid = (pid_t)ppid;
    /* the start time is field 22; the state (field 3) follows ") " */
    for (int field = 2; *p && field < 22; p++)
        if (*p == ' ')
            field++;
    out->start = strtoull(p, NULL, 10);
    return 0;
}

int bd_job_proc_alive(pid_t pid)
{
    bd_job_proc_stat_t st;
    return bd_job_proc_stat(pid, &st) == 0 && st.state != 'Z' && st.state != 'X';
}

/* Does the environment of pid hold the entry want ("NAME=value")?  The
 * entries are NUL-terminated; the whole area is read (it may be large). */
static int environ_has(const char *pid, const char *want)
{
    char path[300];
    snprintf(path, sizeof path, "/proc/%s/environ", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    size_t cap = 64 * 1024, len = 0;
    char *buf = malloc(cap + 1);
    for (ssize_t r = 1; buf && r > 0;) {
        if (len == cap) {
            char *nb = realloc(buf, 2 * cap + 1);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        r = read(fd, buf + len, cap - len);
        if (r < 0 && errno == EINTR)
            r = 1;
        else if (r > 0)
            len += (size_t)r;
    }
    close(fd);
    if (!buf)
        return 0;
    buf[len] = 0;
    int found = 0;
    for (size_t i = 0; i < len && !found; i += strlen(buf + i) + 1)
        found = !strcmp(buf + i, want);
    free(buf);
    return found;
}

int bd_job_procs_find(const char *id, pid_t skip, pid_t *out, int max)
{
    char want[128];
    snprintf(want, sizeof want, "%s=%s", BD_JOB_ID_ENV, id);
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    uid_t me = geteuid();
    pid_t self = getpid();
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        pid_t pid = (pid_t)strtol(e->d_name, NULL, 10);
        if (pid == self || pid == skip)
            continue;
        char path[300];
        struct stat st;
        snprintf(path, sizeof path, "/proc/%s", e->d_name);
        if (stat(path, &st) < 0 || st.st_uid != me)
            continue; /* another user's: never ours */
        bd_job_proc_stat_t ps;
        if (bd_job_proc_stat(pid, &ps) < 0 || ps.state == 'Z' || ps.state == 'X')
            continue; /* ended */
        if (ps.start < g_job_start)
            continue; /* older than us: not of this job */
        if (!environ_has(e->d_name, want))
            continue;
        if (n < max)
            out[n] = pid;
        n++;
    }
    closedir(d);
    return n;
}

static void nap_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

int bd_job_procs_end(const char *id, pid_t skip, int grace_ms, pid_t *killed, int nkilled_max)
{
    enum { MAXP = 1024 };
    static pid_t left[MAXP];
    int n = 0;
    /* Ranks die of their master's end (PDEATHSIG) a moment after it:
     * look often at first, then less. */
    for (int waited = 0, step = 5;; waited += step, step = step < 100 ? step * 2 : 100) {
        n = bd_job_procs_find(id, skip, left, MAXP);
        if (n == 0)
            return 0;
        if (waited >= grace_ms)
            break;
        nap_ms(step);
    }
    if (n > MAXP)
        n = MAXP;
    for (int i = 0; i < n; i++) {
        kill(left[i], SIGKILL);
        if (i < nkilled_max)
            killed[i] = left[i];
    }
    /* A process being killed may take a moment to be torn down (large
     * memory); what a killed master's ranks need is their PDEATHSIG. */
    for (int waited = 0; waited < 2000; waited += 20) {
        pid_t more[64];
        int m = bd_job_procs_find(id, skip, more, 64);
        if (m == 0)
            break;
        for (int i = 0; i < m && i < 64; i++)
            kill(more[i], SIGKILL);
        nap_ms(20);
    }
    return n;
}
