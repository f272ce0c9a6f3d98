/* The end of the manager with fault events still queued.
 * usage: mem_fini_stale <araw|arlw|lrlw> <uffd|mprotect> [ROUNDS]
 * When several threads fault on one page at once, the kernel queues an
 * event for each; the handler serves the first, and the others, read
 * later, name a page that is already there.  One read after bd_mem_fini
 * had stopped the I/O workers (and unmapped their slots) crashed the
 * handler (session 27: mem.mem_threads.lrlw_uffd, once in a full suite).
 * Each round is a child process: eight threads fault on the same stored
 * sbpage together, the main thread joins them and ends the manager at
 * once.  Every child must exit 0.  A child that crashes cannot remove
 * its directory, so the children make theirs inside the parent's, which
 * the parent removes whole. */
#include <ftw.h>
#include <pthread.h>
#include <sys/wait.h>

#include "memtest.h"

#define NT 8
#define SB (64u << 10)

static volatile uint8_t *buf;
static pthread_barrier_t bar;

static void *toucher(void *arg)
{
    int id = (int)(intptr_t)arg;
    pthread_barrier_wait(&bar);
    buf[(size_t)id * 64] = (uint8_t)(id + 1); /* all in the first 4 KiB page */
    return NULL;
}

static int one_round(const char *strategy, const char *track)
{
    bd_mem_config_t cfg;
    mt_setup(&cfg, strategy, SB, track);
    buf = bd_mem_alloc(4 * SB, 0);
    CHECK(buf);
    for (size_t k = 0; k < 4 * SB; k += 4096)
        buf[k] = 7;
    CHECK(bd_mem_unload_all() == 0); /* stored: the touches below fault */
    pthread_barrier_init(&bar, NULL, NT);
    pthread_t th[NT];
    for (int i = 0; i < NT; i++)
        pthread_create(&th[i], NULL, toucher, (void *)(intptr_t)i);
    for (int i = 0; i < NT; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < NT; i++)
        CHECKF(buf[(size_t)i * 64] == (uint8_t)(i + 1), "thread %d's write lost", i);
    bd_mem_free((void *)buf);
    mt_finish();
    return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static char top[256];

static void rm_top(void) { nftw(top, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

int main(int argc, char **argv)
{
    if (argc < 3)
        return 1;
    const char *base = getenv("TMPDIR");
    snprintf(top, sizeof top, "%s/bdmem-test-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(top)) {
        perror("mkdtemp");
        return 1;
    }
    atexit(rm_top);
    setenv("TMPDIR", top, 1);
    int rounds = argc > 3 ? atoi(argv[3]) : 200, bad = 0;
    for (int r = 0; r < rounds; r++) {
        pid_t p = fork();
        if (p == 0)
            _exit(one_round(argv[1], argv[2]));
        int st = 0;
        if (p < 0 || waitpid(p, &st, 0) != p)
            return 1;
        if (WIFEXITED(st) && WEXITSTATUS(st) == SKIP)
            return SKIP;
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            if (bad++ < 5)
                fprintf(stderr, "round %d: the child %s %d\n", r,
                        WIFSIGNALED(st) ? "was killed by signal" : "exited with",
                        WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
        }
    }
    fprintf(stderr, "%d of %d rounds failed\n", bad, rounds);
    return bad ? 1 : 0;
}
