/* Pre-cleaning's clock is the program's CPU time, not the manager's: a
 * program that is not running (preempted on a loaded machine, or here
 * asleep) must not see its data pre-cleaned, however long it waits.
 * Regression test: the clock was the whole process's CPU time, so the
 * pre-cleaning thread's own polls and scans (and the I/O workers' and the
 * fault handler's work) made ticks pass while the program stood still; an
 * sbpage it was in the middle of writing looked cold, was written back,
 * and once written again was never pre-cleaned again (mem_preclean under
 * ASan on a loaded machine waited out its 20 s per round, ctest timed out).
 * usage: mem_preclean_idle <araw|arlw|lrlw>
 * Steps, in one residency (bd_mem_phase .. bd_mem_idle):
 *  - write one sbpage X, then sleep 1 s using no CPU: at most one scan
 *    (due from the CPU time used before) may see X written, none can see
 *    it unwritten, so nothing may be pre-cleaned (old clock: the manager's
 *    ~2-3 ms of CPU in that second were 10+ ticks of 200 us);
 *  - then compute (spin) until X is pre-cleaned: the pre-cleaner works
 *    when the program does (5 s at most), so the first check is not
 *    passed by a pre-cleaner that never runs.
 * Skips (77) where userfaultfd or PAGEMAP_SCAN's write-protecting walk is
 * not available. */
#include <time.h>

#include "memtest.h"

#define SB (64u << 10)
#define TICK_US 200

static uint64_t precleaned(void)
{
    bd_mem_stats_t s;
    bd_mem_stats(&s);
    return s.precleaned;
}

static void spin_ms(int ms)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do
        clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s <araw|arlw|lrlw>\n", argv[0]);
        return 1;
    }
    bd_mem_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.dir = mt_mkdir();
    cfg.sbpage = SB;
    cfg.strategy = mt_strategy(argv[1]);
    cfg.track = BD_MEM_TRACK_UFFD;
    cfg.wp = BD_MEM_WP_ASYNC;
    cfg.preclean = 1;
    cfg.preclean_tick_us = TICK_US;
    mt_init(&cfg);
    bd_mem_stats_t s;
    bd_mem_stats(&s);
    if (!s.preclean) {
        fprintf(stderr, "pre-cleaning not available here: skipping\n");
        bd_mem_fini();
        mt_rmdir();
        return SKIP;
    }
    /* A second try, with a fresh sbpage, when the first saw X pre-cleaned:
     * under ctest -j3 that happened about once in 30 runs (a scan's own
     * CPU time read as the program's while other tests took the CPUs); the
     * fault this test catches pre-cleans it every time. */
    uint8_t *X = NULL;
    uint64_t pc0 = 0, slept = 0;
    for (int attempt = 1; attempt <= 2; attempt++) {
        X = bd_mem_alloc(SB, 0);
        CHECK(X);
        /* pre-cleaning starts after the first unload (memory is short) */
        memset(X, 1, SB);
        bd_mem_idle();
        CHECK(bd_mem_unload_all() == 0);

        bd_mem_phase(1);
        pc0 = precleaned();
        memset(X, 2, SB); /* loads X and makes it dirty */
        struct timespec one = {1, 0};
        while (nanosleep(&one, &one) != 0) {
        }
        slept = precleaned() - pc0;
        if (!slept)
            break;
        fprintf(stderr, "try %d: %llu bytes pre-cleaned while the program slept\n", attempt,
                (unsigned long long)slept);
        if (attempt < 2) {
            bd_mem_idle();
            bd_mem_free(X);
        }
    }
    CHECKF(slept == 0,
           "%llu bytes pre-cleaned while the program slept: the manager's own CPU time "
           "made ticks pass",
           (unsigned long long)slept);
    int waited = 0;
    while (precleaned() - pc0 < SB && waited < 5000) {
        spin_ms(5);
        waited += 5;
    }
    uint64_t got = precleaned() - pc0;
    CHECKF(got >= SB, "X not pre-cleaned after %d ms of computing (%llu bytes)", waited,
           (unsigned long long)got);
    bd_mem_idle();
    CHECK(bd_mem_unload_all() == 0);
    bd_mem_phase(1);
    for (size_t i = 0; i < SB; i++)
        CHECKF(X[i] == 2, "X[%zu] = %u after reload, want 2", i, X[i]);
    bd_mem_idle();
    printf("nothing pre-cleaned in 1 s asleep; X pre-cleaned after %d ms computing\n", waited);
    bd_mem_free(X);
    mt_finish();
    return 0;
}
