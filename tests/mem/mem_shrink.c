/* A running rank asked to give back part of its memory (issue 16): the
 * budget answers a load BD_MEM_ACQUIRE_SHRINK with a size, and the manager
 * unloads the allocations touched longest ago until that much is back,
 * never the one being loaded, then asks again.  What it unloaded reads back
 * intact; when the others do not hold enough, everything goes.
 * usage: mem_shrink <araw|arlw|lrlw> <uffd|mprotect> */
#include "memtest.h"

#define MB (1u << 20)
/* set by the test, read and modified from the fault path */
static volatile long long balance;
static volatile size_t shrink_next; /* answer the next request: give back this much */
static volatile int shrinks_asked;

static int acq(void *ctx, size_t n, size_t *give_back)
{
    (void)ctx;
    if (shrink_next) {
        *give_back = shrink_next;
        shrink_next = 0;
        shrinks_asked++;
        return BD_MEM_ACQUIRE_SHRINK;
    }
    balance += (long long)n;
    return 0;
}
static void rel(void *ctx, size_t n)
{
    (void)ctx;
    balance -= (long long)n;
    CHECK(balance >= 0);
}

static void fill(uint8_t *p, size_t n, int seed)
{
    for (size_t i = 0; i < n; i += 4096)
        p[i] = (uint8_t)(seed + i / 4096);
}

static int same(const uint8_t *p, size_t n, int seed)
{
    for (size_t i = 0; i < n; i += 4096)
        if (p[i] != (uint8_t)(seed + i / 4096))
            return 0;
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 1;
    bd_mem_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.dir = mt_mkdir();
    cfg.sbpage = 64u << 10;
    cfg.strategy = mt_strategy(argv[1]);
    cfg.track = mt_track(argv[2]);
    cfg.acquire = acq;
    cfg.release = rel;
    mt_init(&cfg);
    const size_t n = 4 * MB;
    uint8_t *a = bd_mem_alloc(n, 0), *b = bd_mem_alloc(n, 0), *c = bd_mem_alloc(n, 0);
    uint8_t *d = bd_mem_alloc(n, 0);
    CHECK(a && b && c && d);
    fill(a, n, 1);
    fill(b, n, 2);
    fill(c, n, 3);
    CHECKF(bd_mem_resident_bytes() == 3 * n, "resident %zu", bd_mem_resident_bytes());

    /* 5 MiB back: a (touched first) is not enough, b goes too; c stays */
    shrink_next = 5 * MB;
    *(volatile uint8_t *)d = 9; /* the fault, before the checks below */
    CHECK(shrinks_asked == 1);
    size_t dres = cfg.strategy == BD_MEM_LRLW ? 64u << 10 : n;
    CHECKF(bd_mem_resident_bytes() == n + dres, "after the shrink: resident %zu, want %zu",
           bd_mem_resident_bytes(), n + dres);
    CHECKF((size_t)balance == bd_mem_resident_bytes(), "balance %lld", balance);
    bd_mem_stats_t st;
    bd_mem_stats(&st);
    CHECKF(st.shrinks == 1 && st.shrunk_bytes == 2 * n, "shrinks %llu, %llu bytes",
           (unsigned long long)st.shrinks, (unsigned long long)st.shrunk_bytes);
    /* c was not touched again: it did not fault back in */
    CHECK(same(c, n, 3));
    CHECKF(bd_mem_resident_bytes() == n + dres, "c stayed resident: %zu", bd_mem_resident_bytes());
    CHECK(same(a, n, 1) && same(b, n, 2));

    /* more than everything but the allocation being loaded: all of it goes */
    CHECK(bd_mem_unload_all() == 0);
    fill(a, n, 4);
    size_t before = bd_mem_resident_bytes();
    shrink_next = 64 * MB;
    ((volatile uint8_t *)b)[1] = 7;
    CHECK(shrinks_asked == 2);
    CHECKF(bd_mem_resident_bytes() < before + n, "resident %zu after shrinking all (was %zu)",
           bd_mem_resident_bytes(), before);
    CHECK(same(a, n, 4) && b[1] == 7 && same(c, n, 3) && d[0] == 9);
    bd_mem_free(a);
    bd_mem_free(b);
    bd_mem_free(c);
    bd_mem_free(d);
    CHECK(balance == 0);
    mt_finish();
    return 0;
}
