/* Resident memory after bd_mem_unload_all is near zero (statm and stats).
 * usage: mem_resident <uffd|mprotect> */
#include "memtest.h"

static size_t rss(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size = 0, res = 0;
    if (!f || fscanf(f, "%lu %lu", &size, &res) != 2)
        exit(1);
    fclose(f);
    return res * (size_t)sysconf(_SC_PAGESIZE);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 1;
    bd_mem_config_t cfg;
    mt_setup(&cfg, "lrlw", 64u << 10, argv[1]);
    const size_t n = 128u << 20;
    size_t base = rss();
    uint8_t *a = bd_mem_alloc(n, 0);
    CHECK(a);
    for (size_t k = 0; k < n; k += 512)
        a[k] = (uint8_t)(k >> 9);
    size_t full = rss();
    CHECKF(full >= base + n - (4u << 20), "rss %zu base %zu", full, base);
    CHECK(bd_mem_resident_bytes() == n);
    CHECK(bd_mem_unload_all() == 0);
    size_t after = rss();
    fprintf(stderr, "rss base %zu MiB, loaded %zu MiB, unloaded %zu MiB\n", base >> 20, full >> 20,
            after >> 20);
    CHECKF(after <= base + (4u << 20), "rss after unload %zu (base %zu)", after, base);
    CHECK(bd_mem_resident_bytes() == 0);
    /* reading half back makes half resident, plus at most the read-ahead
   * window (8 MiB by default) of the sequential scan */
    for (size_t k = 0; k < n / 2; k += 512)
        CHECK(a[k] == (uint8_t)(k >> 9));
    size_t res = bd_mem_resident_bytes();
    CHECKF(res >= n / 2 && res <= n / 2 + (8u << 20), "resident %zu after reading %zu", res, n / 2);
    bd_mem_stats_t st;
    bd_mem_stats(&st);
    CHECK(st.peak_resident == n);
    bd_mem_free(a);
    CHECK(bd_mem_resident_bytes() == 0);
    CHECK(rss() <= base + (4u << 20));
    mt_finish();
    return 0;
}
