/* bdmpiexec: parse the options, make the job's private directory, start
 * the node's master (bdmprun) and wait for it.  Whatever happens to the
 * master, bdmpiexec removes the job directory, so no spill file outlives a
 * run; if bdmpiexec itself dies, the master is told by PDEATHSIG and
 * cleans up instead. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bd_fs.h"
#include "bd_log.h"
#include "bd_options.h"

static const char *usage =
    "usage: bdmpiexec [options] PROGRAM [ARGS...]\n"
    "Runs PROGRAM (built with bdmpicc) as -ns MPI ranks on this node, at most -nr at a time.";

static volatile sig_atomic_t g_child = -1;

static void forward(int sig)
{
    if (g_child > 0)
        kill((pid_t)g_child, sig);
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
    if (argc == 2 && !strcmp(argv[1], "--help-md")) {
        bd_opts_print_markdown(stdout);
        return 0;
    }
    if (r < 0) {
        bd_log_error("%s", err);
        return 2;
    }
    if (first >= argc) {
        bd_log_error("no program given (see -h)");
        return 2;
    }
    if (opts.num[BD_OPT_NR] > opts.num[BD_OPT_NS])
        opts.num[BD_OPT_NR] = opts.num[BD_OPT_NS];

    char master[PATH_MAX];
    if (find_master(master, sizeof master) < 0) {
        bd_log_error("cannot find bdmprun next to bdmpiexec (%s)", master);
        return 2;
    }
    char jobdir[1024];
    if (bd_fs_make_jobdir(opts.str[BD_OPT_WD], jobdir, sizeof jobdir, err, sizeof err) < 0) {
        bd_log_error("%s", err);
        return 2;
    }
    if (bd_opts_export_env(&opts) < 0 || setenv("BDMPI_JOBDIR", jobdir, 1) < 0) {
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

    int nargs = argc - first;
    char **margv = calloc((size_t)nargs + 2, sizeof(char *));
    if (!margv) {
        bd_fs_remove_tree(jobdir);
        return 2;
    }
    margv[0] = master;
    for (int i = 0; i < nargs; i++)
        margv[i + 1] = argv[first + i];

    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        bd_log_error("fork failed: %s", strerror(errno));
        bd_fs_remove_tree(jobdir);
        return 2;
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
            _exit(1);
        execv(master, margv);
        bd_log_error("cannot run %s: %s", master, strerror(errno));
        _exit(127);
    }
    g_child = pid;
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    bd_fs_remove_tree(jobdir);
    free(margv);
    if (WIFSIGNALED(st)) {
        bd_log_error("the master (bdmprun, pid %d) was killed by signal %d (%s)", (int)pid,
                     WTERMSIG(st), strsignal(WTERMSIG(st)));
        return 128 + WTERMSIG(st);
    }
    return WEXITSTATUS(st);
}
