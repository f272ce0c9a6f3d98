/* bdmpiexec: parse the options, make the job's private directory, start
 * the node's master (bdmprun) and wait for it.  Whatever happens to the
 * master, bdmpiexec removes the job directory, so no spill file outlives a
 * run; if bdmpiexec itself dies, the master is told by PDEATHSIG and
 * cleans up instead. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bd_fault.h"
#include "bd_fs.h"
#include "bd_log.h"
#include "bd_options.h"
#include "bd_trace.h"
#include "job.h"
#include "watch.h"

static const char *usage =
    "usage: bdmpiexec [-n N | -ns N] [-nn NODES] [options] PROGRAM [ARGS...]\n"
    "Runs PROGRAM (built with bdmpicc) as MPI ranks: -ns ranks on each of -nn nodes (or -n\n"
    "in all, spread evenly over the nodes), at most -nr of a node running at a time.";

static volatile sig_atomic_t g_child = -1;

/* How long the job's processes get to end by themselves once the master
 * (or MPI launcher) has: an orphaned master notices within 0.1 s and ends
 * its ranks; more is for a loaded machine. */
#define BD_JOB_GRACE_MS 3000
/* The same when bdmpiexec itself was killed: the whole job is then ending
 * (a multi-node one in order, through MPICH), not only what is left. */
#define BD_JOB_ORPHAN_GRACE_MS 5000

static void forward(int sig)
{
    if (g_child > 0)
        kill((pid_t)g_child, sig);
}

/* Ctrl-Z and fg/bg: passed to our child (the master, or MPICH's launcher,
 * which passes them to the masters), as MPICH's launcher does to its
 * processes; the masters stop and continue their ranks.  Then we stop as
 * the default action would have. */
static volatile sig_atomic_t g_watching; /* -nn > 1: bd_job_masters_watch passes them */

static void forward_stop(int sig)
{
    int e = errno;
    if (g_watching) {
        bd_job_watch_signal = sig;
        return;
    }
    if (g_child > 0)
        kill((pid_t)g_child, sig);
    if (sig == SIGTSTP)
        raise(SIGSTOP);
    errno = e;
}

/* MPICH's launcher: $BDMPI_MPIEXEC, else mpiexec.mpich or mpiexec on PATH,
 * but never bdmpiexec itself: with BDMPI's compatibility directory
 * (libexec/bdmpi/compat/bin) first on PATH, "mpiexec" is a link to us. */
static const char *find_mpiexec(void)
{
    const char *e = getenv("BDMPI_MPIEXEC");
    if (e && *e)
        return e;
    static char buf[PATH_MAX];
    char self[PATH_MAX], real[PATH_MAX];
    if (!realpath("/proc/self/exe", self))
        self[0] = 0;
    const char *path = getenv("PATH");
    const char *names[] = {"mpiexec.mpich", "mpiexec.hydra", "mpiexec"};
    for (int k = 0; k < 3; k++) {
        for (const char *p = path; p && *p;) {
            const char *colon = strchr(p, ':');
            size_t n = colon ? (size_t)(colon - p) : strlen(p);
            snprintf(buf, sizeof buf, "%.*s/%s", (int)n, p, names[k]);
            if (access(buf, X_OK) == 0 && !(realpath(buf, real) && !strcmp(real, self)))
                return buf;
            p = colon ? colon + 1 : NULL;
        }
    }
    return NULL;
}

/* -mem-node: a size per node, at most -nn of them (bdmprun reads its own). */
static int check_mem_node(const bd_opts_t *o)
{
    const char *list = o->str[BD_OPT_MEM_NODE];
    if (!list)
        return 0;
    char buf[1024];
    if (snprintf(buf, sizeof buf, "%s", list) >= (int)sizeof buf) {
        bd_log_error("-mem-node: the list is too long");
        return -1;
    }
    int n = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        long long v;
        if (bd_opts_parse_size(t, &v) < 0 || v < 0) {
            bd_log_error("-mem-node: entry %d, '%s', is not a size (e.g. -mem-node 8M,1G)", n, t);
            return -1;
        }
        n++;
    }
    if (n > o->num[BD_OPT_NN]) {
        bd_log_error("-mem-node: %d budgets for %lld node(s) (-nn)", n, o->num[BD_OPT_NN]);
        return -1;
    }
    return 0;
}

/* All masters on this machine (hydra's fork launcher).  Their MPI library
 * makes shared-memory files in /dev/shm and unlinks each once the masters
 * have attached to it; a master killed before that (a kill -9, or hydra
 * killing the rest of a job one of whose processes died) leaves the file,
 * and nothing could later tell it from another job's.  So UCX's files go
 * into a private directory of this job under /dev/shm (UCX_POSIX_DIR:
 * still memory, not storage), removed when the job ends, and MPICH's own
 * node-local segment, whose path is fixed in the library, is not made at
 * all: MPIR_CVAR_NOLOCAL makes each master treat the others as remote,
 * which on one machine is UCX's shared memory again.  A user's own setting
 * of either is kept.  dir gets the directory made, or "". */
/* Said whatever the log level: the user should know we removed something. */
static void notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void notice(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bd_log_vmsg("note: ", fmt, ap);
    va_end(ap);
}

/* A launcher killed together with its guardian (kill -9 of both, as
 * "pkill -9 bdmpiexec" does: the guardian is a bdmpiexec too, or CTest's
 * timeout, which kills the whole process tree), or between making its
 * directories and forking the guardian, leaves them: the job directory
 * under -wd and the MPI shared-memory one below.  Both are made by
 * bd_fs_make_jobdir, whose owner file names the launcher and, once forked,
 * the guardian; the next launcher removes those whose owners are all gone
 * (bd_fs_jobdir_sweep), once untouched for longer than a guardian takes to
 * end an orphaned job (one whose launcher was just killed may still be
 * ending, its masters' UCX files still mapped). */
static void jobdir_removed(const char *path, int pid)
{
    notice("removed %s, the directory of a job whose launcher (pid %d) was killed", path, pid);
}

static void shmdir_removed(const char *path, int pid)
{
    notice("removed %s, left by a launcher (pid %d) that was killed", path, pid);
}

static void local_shm_setup(char *dir, size_t len)
{
    bd_fs_jobdir_sweep("/dev/shm", 2 * BD_JOB_ORPHAN_GRACE_MS / 1000, shmdir_removed);
    if (!getenv("MPIR_CVAR_NOLOCAL"))
        setenv("MPIR_CVAR_NOLOCAL", "1", 1);
    /* The masters' MPI_Init has hwloc read the machine's PCI devices and
     * I/O objects (the kernel's PCI config reads), for network cards the
     * masters do not use when they are all here: without them an empty
     * program at -nn 2 -ns 1 took 59 ms instead of 76 (median of 12,
     * docs/performance.md, session 22).  Only for the masters and mpiexec:
     * the masters remove it again before they start the ranks
     * (BD_MASTER_ONLY_ENV), whose own hwloc may want the devices.  A user's
     * own setting is kept, and reaches the ranks. */
    if (!getenv("HWLOC_COMPONENTS") && setenv("HWLOC_COMPONENTS", "-pci,-linuxio", 1) == 0)
        setenv(BD_MASTER_ONLY_ENV, "HWLOC_COMPONENTS", 1);
    dir[0] = 0;
    if (getenv("UCX_POSIX_DIR"))
        return;
    char err[256];
    if (bd_fs_make_jobdir("/dev/shm", dir, len, err, sizeof err) < 0 ||
        setenv("UCX_POSIX_DIR", dir, 1) < 0) {
        if (dir[0] && !strstr(dir, "XXXXXX"))
            bd_fs_remove_tree(dir);
        dir[0] = 0; /* no /dev/shm: UCX's default, as without us */
    }
}

/* Does every host of hostfile name this machine (localhost, a loopback
 * address, or our host name)?  Then its masters are all here, as with the
 * fork launcher, and their MPI shared memory can be the job's
 * (local_shm_setup).  Lines are "host[:count]"; '#' starts a comment. */
static int hostfile_all_local(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0; /* mpiexec will say why */
    char me[256] = "", line[512];
    if (gethostname(me, sizeof me - 1) < 0)
        me[0] = 0;
    size_t melen = strcspn(me, "."); /* the short name matches too */
    int hosts = 0, local = 1;
    while (local && fgets(line, sizeof line, f)) {
        line[strcspn(line, "#\n")] = 0;
        char *h = line + strspn(line, " \t");
        h[strcspn(h, " \t:")] = 0;
        if (!*h)
            continue;
        hosts++;
        local = !strcmp(h, "localhost") || !strncmp(h, "127.", 4) || !strcmp(h, "::1") ||
                (me[0] && (!strcmp(h, me) || (strlen(h) == melen && !strncmp(h, me, melen))));
    }
    fclose(f);
    return local && hosts > 0;
}

/* -trace FILE: made absolute (the masters may start elsewhere) and checked
 * now, so a run is not lost for a file that cannot be written; ts 0 of the
 * timeline is now, for every node (BDMPI_TRACE_T0). */
static int trace_setup(bd_opts_t *o, char *abs, size_t len)
{
    const char *p = o->str[BD_OPT_TRACE];
    if (!p)
        return 0;
    char cwd[PATH_MAX];
    if (p[0] != '/' && getcwd(cwd, sizeof cwd))
        snprintf(abs, len, "%s/%s", cwd, p);
    else
        snprintf(abs, len, "%s", p);
    FILE *f = fopen(abs, "w");
    if (!f) {
        bd_log_error("-trace: cannot write the timeline to '%s': %s", abs, strerror(errno));
        return -1;
    }
    fclose(f);
    o->str[BD_OPT_TRACE] = abs;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char v[32];
    snprintf(v, sizeof v, "%llu",
             (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec);
    setenv("BDMPI_TRACE_T0", v, 1);
    return 0;
}

/* Tasks (processes and threads) of our real user now: what RLIMIT_NPROC
 * counts. */
static long user_tasks(void)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    long n = 0;
    uid_t me = getuid();
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        char path[300], line[256];
        snprintf(path, sizeof path, "/proc/%s/status", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        long uid = -1, threads = 0;
        while (fgets(line, sizeof line, f)) {
            if (!strncmp(line, "Uid:", 4))
                uid = strtol(line + 4, NULL, 10);
            else if (!strncmp(line, "Threads:", 8))
                threads = strtol(line + 8, NULL, 10);
        }
        fclose(f);
        if (uid == (long)me)
            n += threads;
    }
    closedir(d);
    return n;
}

/* Limits a job of this size would run into halfway, checked at the start
 * instead (issue 18).  Open files: each rank keeps up to 256 backing files
 * open (src/mem) and a few more (spill files, its memfd, eventfds); a soft
 * limit below BD_NOFILE_NEED is raised to it when the hard limit allows.
 * Processes: each rank is a process with up to 5 threads of its memory
 * manager (4 I/O workers, the userfaultfd handler), each master one with
 * an I/O thread; the kernel does not apply RLIMIT_NPROC to root.  Returns
 * 0, or -1 with a message in err. */
#define BD_NOFILE_NEED 320
#define BD_TASKS_PER_RANK 6
static int check_limits(const bd_opts_t *o, char *err, size_t errlen)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur < BD_NOFILE_NEED) {
        if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= BD_NOFILE_NEED) {
            rl.rlim_cur = BD_NOFILE_NEED;
            setrlimit(RLIMIT_NOFILE, &rl);
        } else {
            snprintf(err, errlen,
                     "the open-file limit (RLIMIT_NOFILE, ulimit -n) is %llu, but each rank and "
                     "master may need %d open files (backing and spill files): raise the limit",
                     (unsigned long long)rl.rlim_max, BD_NOFILE_NEED);
            return -1;
        }
    }
    long nodes_here = o->str[BD_OPT_HOSTFILE] ? 1 : o->num[BD_OPT_NN];
    long need = nodes_here * (o->num[BD_OPT_NS] * BD_TASKS_PER_RANK + 2);
    if (geteuid() != 0 && getrlimit(RLIMIT_NPROC, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        long used = user_tasks();
        if ((unsigned long long)(used + need) > (unsigned long long)rl.rlim_cur) {
            snprintf(err, errlen,
                     "-ns %lld needs up to %ld processes and threads on this machine (%ld ranks, "
                     "%d tasks each, and the masters), but the process limit (RLIMIT_NPROC, ulimit "
                     "-u) is %llu with %ld in use: raise the limit or lower -ns",
                     o->num[BD_OPT_NS], need, nodes_here * (long)o->num[BD_OPT_NS],
                     BD_TASKS_PER_RANK, (unsigned long long)rl.rlim_cur, used);
            return -1;
        }
    }
    return 0;
}

static int find_master(char *out, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n < 0)
        return -1;
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (!slash)
        return -1;
    *slash = 0;
    if ((size_t)snprintf(out, len, "%s/bdmprun", self) >= len)
        return -1;
    return access(out, X_OK);
}

int main(int argc, char **argv)
{
    bd_log_set_prefix("bdmpiexec");
    bd_opts_t opts;
    char err[512];
    if (bd_opts_load_env(&opts, err, sizeof err) < 0) {
        bd_log_error("%s", err);
        return 2;
    }
    int first = argc;
    int r = bd_opts_parse_argv(&opts, argc, argv, &first, err, sizeof err);
    if (r == 1) {
        bd_opts_print_help(stdout, usage);
        return 0;
    }
    if (r == 2) {
        printf("bdmpiexec: BDMPI %s\n", BDMPI_VERSION);
        return 0;
    }
    if (argc == 2 && !strcmp(argv[1], "--help-md")) {
        bd_opts_print_markdown(stdout);
        return 0;
    }
    if (r < 0 || bd_opts_resolve_total(&opts, err, sizeof err) < 0) {
        bd_log_error("%s", err);
        return 2;
    }
    if (first >= argc) {
        bd_log_error("no program given (see -h)");
        return 2;
    }
    if (check_mem_node(&opts) < 0)
        return 2;
    bd_opts_normalise(&opts);
    /* -fault reaches the master and the ranks as BDMPI_FAULT (read there
     * before main); a spec they would ignore is refused here. */
    if (opts.str[BD_OPT_FAULT] && bd_fault_arm(opts.str[BD_OPT_FAULT], err, sizeof err) < 0) {
        bd_log_error("option 'fault': %s", err);
        return 2;
    }
    if (check_limits(&opts, err, sizeof err) < 0) {
        bd_log_error("%s", err);
        return 2;
    }

    char master[PATH_MAX];
    if (find_master(master, sizeof master) < 0) {
        bd_log_error("cannot find bdmprun next to bdmpiexec (%s)", master);
        return 2;
    }
    static char trace_path[PATH_MAX + 64];
    if (trace_setup(&opts, trace_path, sizeof trace_path) < 0)
        return 2;
    char jobdir[1024];
    /* Directories of jobs whose launcher and guardian were both killed (a
     * kill -9 of both, or CTest's timeout, which kills the whole process
     * tree) hold their spill files: nobody else removes them. */
    bd_fs_jobdir_sweep(opts.str[BD_OPT_WD], 2 * BD_JOB_ORPHAN_GRACE_MS / 1000, jobdir_removed);
    if (bd_fs_make_jobdir(opts.str[BD_OPT_WD], jobdir, sizeof jobdir, err, sizeof err) < 0) {
        bd_log_error("%s", err);
        return 2;
    }
    /* mkdtemp makes it 0700, but a file system that ignores modes (a
     * FAT or SMB mount as -wd) leaves it open to everyone. */
    if (bd_fs_check_private_dir(jobdir, err, sizeof err) < 0) {
        bd_log_error("the job directory '%s' made under -wd is not private: %s; give a -wd on "
                     "a file system with Unix permissions",
                     jobdir, err);
        bd_fs_remove_tree(jobdir);
        return 2;
    }
    /* -genv/-x first, so that BDMPI's own variables keep the values of its
     * options. */
    /* The mark of the job's processes (job.h): what is left of them when
     * the job has ended is found by it, and only that is killed. */
    char job_id[32];
    bd_job_id_make(job_id, sizeof job_id);
    if (bd_opts_apply_envsets(&opts) < 0 || bd_opts_export_env(&opts) < 0 ||
        setenv("BDMPI_JOBDIR", jobdir, 1) < 0 || setenv(BD_JOB_ID_ENV, job_id, 1) < 0) {
        bd_log_error("cannot set the environment: %s", strerror(errno));
        bd_fs_remove_tree(jobdir);
        return 2;
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = forward;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sa.sa_handler = forward_stop;
    sigaction(SIGTSTP, &sa, NULL);
    sigaction(SIGCONT, &sa, NULL);

    int nargs = argc - first;
    /* Site-specific mpiexec options, e.g. "-launcher ssh -iface ib0". */
    char *extra = getenv("BDMPI_MPIEXEC_ARGS") ? strdup(getenv("BDMPI_MPIEXEC_ARGS")) : NULL;
    int nextra = 0;
    for (char *p = extra; p && *p; p++)
        nextra += *p != ' ' && (p == extra || p[-1] == ' ');
    char **margv = calloc((size_t)nargs + 12 + (size_t)nextra, sizeof(char *));
    if (!margv) {
        bd_fs_remove_tree(jobdir);
        return 2;
    }
    int k = 0;
    const char *exe = master;
    char nn_s[32];
    static char shmdir[64]; /* the masters' MPI shared-memory files; "": none */
    if (opts.num[BD_OPT_NN] > 1) {
        /* One master per node, started by MPICH; each makes its own spill
         * directory inside ours (on this machine) or under -wd (elsewhere). */
        exe = find_mpiexec();
        if (!exe) {
            bd_log_error("-nn %lld needs MPICH's mpiexec (install mpich, or set BDMPI_MPIEXEC)",
                         opts.num[BD_OPT_NN]);
            bd_fs_remove_tree(jobdir);
            return 2;
        }
        snprintf(nn_s, sizeof nn_s, "%lld", opts.num[BD_OPT_NN]);
        margv[k++] = (char *)exe;
        margv[k++] = "-n";
        margv[k++] = nn_s;
        if (opts.str[BD_OPT_HOSTFILE]) {
            margv[k++] = "-f";
            margv[k++] = (char *)opts.str[BD_OPT_HOSTFILE];
            if (!extra && hostfile_all_local(opts.str[BD_OPT_HOSTFILE]))
                local_shm_setup(shmdir, sizeof shmdir);
        } else if (!extra) {
            margv[k++] = "-launcher";
            margv[k++] = "fork";
            local_shm_setup(shmdir, sizeof shmdir);
        }
        for (char *save = NULL, *t = extra ? strtok_r(extra, " ", &save) : NULL; t;
             t = strtok_r(NULL, " ", &save))
            margv[k++] = t;
        setenv("BDMPI_WD", jobdir, 1);
        unsetenv("BDMPI_JOBDIR");
    }
    margv[k++] = master;
    for (int i = 0; i < nargs; i++)
        margv[k++] = argv[first + i];

    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        bd_log_error("fork failed: %s", strerror(errno));
        bd_fs_remove_tree(jobdir);
        bd_fs_remove_tree(shmdir[0] ? shmdir : NULL);
        return 2;
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
            _exit(1);
        execv(exe, margv);
        bd_log_error("cannot run %s: %s", exe, strerror(errno));
        _exit(127);
    }
    g_child = pid;
    pid_t guardian = -1;
    {
        /* A guardian in its own session outlives us if we are killed, even
         * together with our whole process group (kill -9 -PGID, timeout -s
         * KILL).  Then our child is told (PDEATHSIG) and the job ends; the
         * guardian gives it BD_JOB_ORPHAN_GRACE_MS to, kills what is left
         * of it and removes its directories.  On a normal end we stop it. */
        pid_t me = getpid();
        guardian = fork();
        if (guardian == 0) {
            signal(SIGTSTP, SIG_DFL);
            signal(SIGCONT, SIG_DFL);
            setsid();
            while (getppid() == me)
                usleep(100000);
            bd_job_procs_end(job_id, 0, BD_JOB_ORPHAN_GRACE_MS, NULL, 0);
            bd_fs_remove_tree(jobdir);
            bd_fs_remove_tree(shmdir[0] ? shmdir : NULL);
            _exit(0);
        }
        if (guardian > 0) {
            bd_fs_jobdir_mark_guardian(jobdir, guardian);
            if (shmdir[0])
                bd_fs_jobdir_mark_guardian(shmdir, guardian);
        }
    }
    int st = 0, first_dead = -1, also_dead = -1;
    g_watching = opts.num[BD_OPT_NN] > 1;
    if (opts.num[BD_OPT_NN] > 1)
        first_dead = bd_job_masters_watch(pid, &st, jobdir, (int)opts.num[BD_OPT_NN],
                                          BD_JOB_GRACE_MS, &also_dead);
    else
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
    /* Our child has ended, and with it the job should have: the ranks die
     * with their master (PDEATHSIG), the masters end by themselves when
     * their MPI launcher is gone.  Whatever still runs after the grace is
     * killed, before the directories it might still write into go. */
    pid_t killed[8];
    int nkilled = bd_job_procs_end(job_id, guardian, BD_JOB_GRACE_MS, killed, 8);
    if (nkilled > 0) {
        char list[8 * 12] = "";
        for (int i = 0; i < nkilled && i < 8; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), " %d", (int)killed[i]);
        bd_log_error("%d process%s of the job still ran %.1f s after %s (pid %d) ended: killed "
                     "(pid%s%s)",
                     nkilled, nkilled > 1 ? "es" : "", BD_JOB_GRACE_MS / 1000.0,
                     opts.num[BD_OPT_NN] > 1 ? "the MPI launcher" : "the master", (int)pid,
                     nkilled > 1 ? "s" : "", list);
    }
    bd_fs_remove_tree(jobdir);
    bd_fs_remove_tree(shmdir[0] ? shmdir : NULL);
    if (guardian > 0) {
        kill(guardian, SIGKILL);
        waitpid(guardian, NULL, 0);
    }
    free(margv);
    free(extra);
    if (opts.str[BD_OPT_TRACE]) {
        /* One file: the nodes' parts merged (when they are readable here). */
        int ok = opts.num[BD_OPT_NN] == 1 ||
                 bd_trace_merge_parts(opts.str[BD_OPT_TRACE], (int)opts.num[BD_OPT_NN]) == 0;
        if (ok)
            fprintf(stderr,
                    "bdmpiexec: timeline in %s (open it in https://ui.perfetto.dev or "
                    "chrome://tracing)\n",
                    opts.str[BD_OPT_TRACE]);
    }
    if (first_dead >= 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
        char who[96];
        if (also_dead >= 0)
            snprintf(who, sizeof who, "the master of node %d or of node %d (seen dead together)",
                     first_dead < also_dead ? first_dead : also_dead,
                     first_dead < also_dead ? also_dead : first_dead);
        else
            snprintf(who, sizeof who, "the master of node %d", first_dead);
        bd_log_error("%s (bdmprun) ended before the job did, without an orderly end (killed or "
                     "crashed): the job cannot go on without it%s",
                     who,
                     opts.num[BD_OPT_MEM_REMOTE] == 0
                         ? "; with -mem-remote on, other nodes' memory it held is lost with it, "
                           "so the job stops"
                         : "");
        if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
            return WEXITSTATUS(st);
    }
    if (WIFSIGNALED(st)) {
        bd_log_error("the master (bdmprun, pid %d) was killed by signal %d (%s)", (int)pid,
                     WTERMSIG(st), strsignal(WTERMSIG(st)));
        return 128 + WTERMSIG(st);
    }
    return WEXITSTATUS(st);
}
