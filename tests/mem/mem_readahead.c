/* Read-ahead and asynchronous loading: a sequential scan of stored data under
 * LRLW is read ahead, but never further than the window past the last
 * fault, never past the allocation, never twice, and every read-ahead byte
 * is acquired from the budget before it becomes resident.  AR allocations
 * stream everything stored after the first touch.  Data is checked, also
 * with several threads scanning at once and with unloads interrupting a
 * stream.  No timing is asserted.
 * usage: mem_readahead <araw|arlw|lrlw> <uffd|mprotect> */
#include <pthread.h>

#include "memtest.h"

#define SB (64u << 10)
#define WIN (2u << 20) /* read-ahead window set below */

static volatile long long balance, peak;
static int acq(void *ctx, size_t n, size_t *give_back)
{
    (void)give_back;
    (void)ctx;
    long long b = __atomic_add_fetch(&balance, (long long)n, __ATOMIC_SEQ_CST);
    if (b > peak)
        peak = b; /* single fault path at a time: good enough */
    return 0;
}
static void rel(void *ctx, size_t n)
{
    (void)ctx;
    CHECK(__atomic_sub_fetch(&balance, (long long)n, __ATOMIC_SEQ_CST) >= 0);
}

static const size_t n = 32u << 20;
static uint64_t *g_a;

static uint64_t val(size_t i, uint64_t round) { return i * 0x9E3779B97F4A7C15ULL + round; }

typedef struct {
    size_t lo, hi;
    uint64_t round;
} part_t;

static void *scan(void *arg)
{
    part_t *p = arg;
    for (size_t i = p->lo; i < p->hi; i++)
        if (g_a[i] != val(i, p->round)) {
            fprintf(stderr, "word %zu wrong\n", i);
            exit(1);
        }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 1;
    bd_mem_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.dir = mt_mkdir();
    cfg.sbpage = SB;
    cfg.strategy = mt_strategy(argv[1]);
    cfg.track = mt_track(argv[2]);
    cfg.readahead = WIN;
    cfg.acquire = acq;
    cfg.release = rel;
    mt_init(&cfg);
    int lazy = cfg.strategy == BD_MEM_LRLW;
    size_t nw = n / 8;
    g_a = bd_mem_alloc(n, 0);
    CHECK(g_a);
    for (size_t i = 0; i < nw; i++)
        g_a[i] = val(i, 1);
    CHECK(bd_mem_unload_all() == 0);
    CHECK(balance == 0);

    /* sequential scan of the first half */
    bd_mem_stats_t s0, s1;
    bd_mem_stats(&s0);
    part_t half = {0, nw / 2, 1};
    scan(&half);
    size_t res = bd_mem_resident_bytes();
    CHECKF((long long)res == balance, "resident %zu, acquired %lld", res, balance);
    if (lazy)
        CHECKF(res >= n / 2 && res <= n / 2 + WIN, "resident %zu after a scan of %zu", res, n / 2);
    CHECK(bd_mem_unload_all() == 0); /* stops the stream, in flight or not */
    bd_mem_stats(&s1);
    uint64_t rd = s1.bytes_read - s0.bytes_read;
    CHECKF(rd >= n / 2 && rd <= n, "read %llu", (unsigned long long)rd);
    if (lazy)
        CHECKF(rd <= n / 2 + WIN, "read %llu for a scan of %zu", (unsigned long long)rd, n / 2);
    CHECK(s1.bytes_written == s0.bytes_written); /* read-ahead data is clean */
    CHECK(balance == 0 && bd_mem_resident_bytes() == 0);

    /* the whole allocation, to its end: read exactly once */
    bd_mem_stats(&s0);
    part_t all = {0, nw, 1};
    scan(&all);
    CHECK(bd_mem_resident_bytes() == n && balance == (long long)n);
    bd_mem_stats(&s1);
    CHECKF(s1.bytes_read - s0.bytes_read == n, "read %llu",
           (unsigned long long)(s1.bytes_read - s0.bytes_read));

    /* written after a reload: only what is written is written back */
    for (size_t i = 0; i < nw / 4; i++)
        g_a[i] = val(i, 2);
    bd_mem_stats(&s0);
    CHECK(bd_mem_unload_all() == 0);
    bd_mem_stats(&s1);
    CHECKF(s1.bytes_written - s0.bytes_written == n / 4, "wrote %llu",
           (unsigned long long)(s1.bytes_written - s0.bytes_written));

    /* four threads scan four quarters at once, twice, with an unload between */
    for (int r = 0; r < 2; r++) {
        pthread_t th[4];
        part_t p[4];
        for (int t = 0; t < 4; t++) {
            p[t].lo = nw / 4 * (size_t)t;
            p[t].hi = nw / 4 * (size_t)(t + 1);
            p[t].round = t == 0 ? 2 : 1;
            CHECK(pthread_create(&th[t], NULL, scan, &p[t]) == 0);
        }
        for (int t = 0; t < 4; t++)
            pthread_join(th[t], NULL);
        CHECK((long long)bd_mem_resident_bytes() == balance);
        CHECK(bd_mem_unload_all() == 0);
        CHECK(balance == 0);
    }

    /* free while a stream may be in flight */
    g_a[nw - 1] = 7;
    CHECK(bd_mem_unload_all() == 0);
    CHECK(g_a[0] == val(0, 2));
    bd_mem_free(g_a);
    CHECK(balance == 0);
    mt_finish();
    return 0;
}
