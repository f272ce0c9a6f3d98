/* Error handling.
 * usage: mem_errors <uffd|mprotect>
 *  - a failed write-back (file size limit -> EFBIG) is reported by
 *    bd_mem_unload_all and loses nothing; a later unload succeeds;
 *  - double free and freeing an interior pointer abort with a clear message. */
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "memtest.h"

static const char *track_arg;

/* Run "self <track> <what>" as a fresh process (fork + exec: a forked child
 * may not use the parent's manager); expect SIGABRT and a message with want. */
static void expect_abort(const char *what, const char *want)
{
    int pfd[2];
    CHECK(pipe(pfd) == 0);
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        dup2(pfd[1], 2);
        close(pfd[0]);
        close(pfd[1]);
        execl("/proc/self/exe", "mem_errors", track_arg, what, mt_dir, (char *)NULL);
        _exit(3);
    }
    close(pfd[1]);
    char out[2048];
    size_t n = 0;
    ssize_t r;
    while (n < sizeof out - 1 && (r = read(pfd[0], out + n, sizeof out - 1 - n)) > 0)
        n += (size_t)r;
    out[n] = 0;
    close(pfd[0]);
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECKF(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "child status %d, output: %s",
           status, out);
    CHECKF(strstr(out, want) != NULL, "message '%s' lacks '%s'", out, want);
    fprintf(stderr, "ok, child said: %s", out);
}

static int child(const char *what, const char *dir)
{
    bd_mem_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.dir = dir; /* the parent's directory, which the parent cleans up */
    cfg.track = mt_track(track_arg);
    if (bd_mem_init(&cfg) != 0)
        return 1;
    char *p = bd_mem_alloc(1u << 20, 0);
    p[0] = 1;
    if (!strcmp(what, "double")) {
        bd_mem_free(p);
        bd_mem_free(p);
    } else {
        bd_mem_free(p + 4096);
    }
    return 0; /* not reached */
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 1;
    track_arg = argv[1];
    if (argc == 4)
        return child(argv[2], argv[3]);
    bd_mem_config_t cfg;
    mt_setup(&cfg, "arlw", 64u << 10, argv[1]);
    /* 16 pieces of 1 MiB: more than the 4 I/O slots, so the write error
   * comes back while the unload is still walking the allocation */
    const size_t n = 16u << 20;
    uint8_t *a = bd_mem_alloc(n, 0);
    CHECK(a);
    for (size_t k = 0; k < n; k++)
        a[k] = (uint8_t)(k * 5);

    /* write-back fails: file size limit below the allocation */
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit old, lim;
    CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
    lim = old;
    lim.rlim_cur = 1u << 20;
    CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
    int rc = bd_mem_unload_all();
    CHECKF(rc == -EFBIG, "unload returned %d", rc);
    bd_mem_stats_t st;
    bd_mem_stats(&st); /* what it still needs to store: all but the first MiB */
    CHECKF(st.unwritten >= n - (1u << 20) && st.unwritten <= n, "unwritten %llu",
           (unsigned long long)st.unwritten);
    for (size_t k = 0; k < n; k += 333)
        CHECK(a[k] == (uint8_t)(k * 5));
    CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
    CHECK(bd_mem_unload_all() == 0);
    bd_mem_stats(&st);
    CHECK(st.unwritten == 0);
    CHECK(bd_mem_resident_bytes() == 0);
    for (size_t k = 0; k < n; k++)
        CHECKF(a[k] == (uint8_t)(k * 5), "offset %zu", k);

    expect_abort("double", "double free");
    expect_abort("interior", "invalid pointer");

    /* a forked child cannot use the manager, and freeing inherited managed
   * pointers there is harmless */
    pid_t pid = fork();
    if (pid == 0) {
        if (bd_mem_active() || bd_mem_alloc(1u << 20, 0) != NULL)
            _exit(1);
        bd_mem_free(a);
        _exit(0);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(bd_mem_active());

    bd_mem_free(a);
    mt_finish();
    return 0;
}
