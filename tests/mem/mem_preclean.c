/* Pre-cleaning (cfg.preclean, write-behind): while the process runs, dirty
 * sbpages that are no longer being written are written back in the
 * background and stay resident; a write after that must make them dirty
 * again, or it is lost at the next unload.
 * usage: mem_preclean <araw|arlw|lrlw> [on|off [tick_us [delay_us]]]
 * (uffd path only; on|off: write prediction; tick_us: CPU time between two
 * scans; delay_us: each pre-cleaning write waits that long after its
 * CRC32C was taken, so that writes and scans fall inside write-backs in
 * flight and a stored copy older than its checksum is likely)
 * Per round, in one residency (bd_mem_phase .. bd_mem_idle):
 *  - every byte of A is written, and the test waits until pre-cleaning has
 *    stored all of A (MEM stats; it fails if nothing is ever pre-cleaned;
 *    from the second round on without the sbpages that were written again
 *    after their pre-cleaning, which are left to the unloads);
 *  - then some sbpages are written again (a byte, a word or all of it);
 *  - a second thread writes words at random places of C while pre-cleaning
 *    runs (writes that race with the write-back of the same sbpage), with
 *    pauses so that its sbpages go cold and are cleaned in between;
 *  - an allocation is freed and another made while writes may be in
 *    flight;
 *  - every sbpage of a fresh allocation D is written twice, the second
 *    time while its write-back may be in flight, and never again;
 * then the process "blocks": bd_mem_idle, bd_mem_unload_all, and the next
 * round checks every byte of A and C against an unmanaged copy (the reads
 * check each sbpage's CRC32C too: a stored copy that pre-cleaning tore and
 * nobody rewrote stops the process).  Skips (77) where userfaultfd or
 * PAGEMAP_SCAN's write-protecting walk is not available. */
#include <pthread.h>
#include <time.h>

#include "memtest.h"

#define SB (64u << 10)
#define NA 96u /* sbpages of A */
#define NC 32u /* sbpages of C */
#define ND 16u /* sbpages of D, made anew every round */
#define ROUNDS 4

static uint8_t *A, *C, *D, *shA, *shC, *shD;
static volatile int stop_writer;

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Scans come with the process's CPU time: the main thread spins while it
 * waits, as a program that computes would. */
static void spin_ms(int ms)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do
        clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
}

static uint64_t precleaned(void)
{
    bd_mem_stats_t s;
    bd_mem_stats(&s);
    return s.precleaned;
}

static void *writer(void *arg)
{
    uint64_t rng = (uint64_t)(uintptr_t)arg | 1;
    size_t n = 0;
    while (!stop_writer) {
        size_t off = (size_t)(mt_rng(&rng) % (NC * SB / 8)) * 8;
        uint64_t v = mt_rng(&rng);
        memcpy(C + off, &v, 8);
        memcpy(shC + off, &v, 8);
        if (++n % 256 == 0)
            sleep_ms(2 + (int)(mt_rng(&rng) % 15)); /* let sbpages go cold */
    }
    return NULL;
}

static void check_all(int round)
{
    for (size_t i = 0; i < NA * SB; i++)
        CHECKF(A[i] == shA[i], "round %d: A[%zu] (sbpage %zu) = %u, want %u", round, i, i / SB,
               A[i], shA[i]);
    for (size_t i = 0; i < NC * SB; i++)
        CHECKF(C[i] == shC[i], "round %d: C[%zu] (sbpage %zu) = %u, want %u", round, i, i / SB,
               C[i], shC[i]);
    for (size_t i = 0; i < ND * SB; i++)
        CHECKF(D[i] == shD[i], "round %d: D[%zu] (sbpage %zu) = %u, want %u", round, i, i / SB,
               D[i], shD[i]);
}

/* Each sbpage of D written twice and never again: the first write makes it
 * dirty and, a tick or two later, cold, so it is written back; the second
 * comes about while that write-back is in flight (with delay_us), and only
 * the scan that sees it during the flight, or the unload's, can save it. */
static void write_twice(uint64_t *rng)
{
    for (size_t k = 0; k < ND; k++) {
        for (int w = 0; w < 2; w++) {
            size_t o = k * SB + (size_t)(mt_rng(rng) % (SB / 8)) * 8;
            uint64_t v = mt_rng(rng);
            memcpy(D + o, &v, 8);
            memcpy(shD + o, &v, 8);
            spin_ms(w == 0 ? 2 : 1);
        }
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s <araw|arlw|lrlw> [on|off]\n", argv[0]);
        return 1;
    }
    bd_mem_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.dir = mt_mkdir();
    cfg.sbpage = SB;
    cfg.strategy = mt_strategy(argv[1]);
    cfg.track = BD_MEM_TRACK_UFFD;
    cfg.wp = BD_MEM_WP_ASYNC;
    cfg.predict = argc > 2 && !strcmp(argv[2], "off") ? -1 : 0;
    cfg.preclean = 1;
    cfg.preclean_tick_us = argc > 3 ? (unsigned)atoi(argv[3]) : 0;
    cfg.preclean_delay_us = argc > 4 ? (unsigned)atoi(argv[4]) : 0;
    mt_init(&cfg);
    bd_mem_stats_t s;
    bd_mem_stats(&s);
    if (!s.preclean) {
        fprintf(stderr, "pre-cleaning not available here: skipping\n");
        bd_mem_fini();
        mt_rmdir();
        return SKIP;
    }
    A = bd_mem_alloc(NA * SB, 0);
    C = bd_mem_alloc(NC * SB, 0);
    D = bd_mem_alloc(ND * SB, 0);
    shA = calloc(NA, SB);
    shC = calloc(NC, SB);
    shD = calloc(ND, SB);
    CHECK(A && C && D && shA && shC && shD);
    /* pre-cleaning starts after the first unload (memory is short) */
    memset(A, 1, SB);
    bd_mem_idle();
    CHECK(bd_mem_unload_all() == 0);
    uint64_t rng = 88172645463325252ULL;
    uint64_t total_pc = 0;
    for (int r = 0; r < ROUNDS; r++) {
        bd_mem_phase(1);
        if (r > 0) {
            check_all(r);   /* everything reloaded from storage */
            bd_mem_free(D); /* a fresh D: nothing in it was pre-cleaned yet */
            D = bd_mem_alloc(ND * SB, 0);
            CHECK(D);
            memset(shD, 0, (size_t)ND * SB);
        }
        /* all of A, then wait until pre-cleaning has stored it */
        uint64_t pc0 = precleaned();
        for (size_t i = 0; i < NA * SB; i++)
            A[i] = shA[i] = (uint8_t)(i * 131 + (size_t)r * 17 + (i >> 16));
        /* from the second round on, the sbpages written again after they
         * were cleaned (every third, and the last) are left to the unload */
        uint64_t want = (uint64_t)(r == 0 ? NA : NA - (NA + 2) / 3 - 1) * SB;
        /* Under load an sbpage may look cold in the middle of the loop above
         * and be written again: pre-cleaned no more (PC_AGAIN), it never
         * comes; so the wait also ends after 2 s without progress. */
        int waited = 0, still = 0;
        for (uint64_t last = precleaned(); last - pc0 < want && waited < 20000 && still < 2000;) {
            spin_ms(5);
            waited += 5;
            uint64_t now = precleaned();
            still = now == last ? still + 5 : 0;
            last = now;
        }
        uint64_t got = precleaned() - pc0;
        CHECKF(got > 0, "round %d: nothing pre-cleaned in %d ms", r, waited);
        total_pc += got;
        /* written again after they were cleaned: a byte, a word, all */
        for (size_t k = 0; k < NA; k += 3) {
            size_t base = k * SB, kind = mt_rng(&rng) % 3;
            if (kind == 0) {
                size_t o = base + mt_rng(&rng) % SB;
                A[o] = shA[o] = (uint8_t)(A[o] + 1);
            } else if (kind == 1) {
                size_t o = base + (mt_rng(&rng) % (SB / 8)) * 8;
                uint64_t v = mt_rng(&rng);
                memcpy(A + o, &v, 8);
                memcpy(shA + o, &v, 8);
            } else {
                for (size_t i = base; i < base + SB; i++)
                    A[i] = shA[i] = (uint8_t)(A[i] ^ 0x5a);
            }
        }
        /* writes racing with the write-back */
        stop_writer = 0;
        pthread_t th;
        CHECK(pthread_create(&th, NULL, writer, (void *)(uintptr_t)(r + 7)) == 0);
        spin_ms(150);
        /* free and allocate while pre-cleaning writes may be in flight */
        uint8_t *t = bd_mem_alloc(8 * SB, 0);
        CHECK(t);
        memset(t, 0x77, 8 * SB);
        spin_ms(30);
        bd_mem_free(t);
        spin_ms(150);
        stop_writer = 1;
        pthread_join(th, NULL);
        write_twice(&rng);
        spin_ms(20);
        /* one more write just before the process blocks */
        A[NA * SB - 1] = shA[NA * SB - 1] = (uint8_t)(r + 200);
        bd_mem_idle();
        CHECK(bd_mem_unload_all() == 0);
        bd_mem_stats(&s);
        CHECKF(s.resident == 0, "round %d: %llu bytes resident after unload", r,
               (unsigned long long)s.resident);
    }
    bd_mem_phase(1);
    check_all(ROUNDS);
    bd_mem_idle();
    printf("pre-cleaned %llu bytes in %d rounds; written %llu, read %llu\n",
           (unsigned long long)total_pc, ROUNDS, (unsigned long long)s.bytes_written,
           (unsigned long long)s.bytes_read);
    bd_mem_free(A);
    bd_mem_free(C);
    bd_mem_free(D);
    free(shA);
    free(shC);
    free(shD);
    mt_finish();
    return 0;
}
