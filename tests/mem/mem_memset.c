/* A zeroing memset over unloaded sbpages reads nothing back
 * (fill-override.c): the sbpages it covers whole read as zeros without
 * I/O, partly covered ones keep their other bytes, and a memset with any
 * other byte loads and fills as usual.
 * usage: mem_memset <araw|arlw|lrlw> <uffd|mprotect> */
#include "memtest.h"

#define SB (64u << 10)

/* through a pointer, so that the compiler cannot inline the C library's */
static void *(*volatile g_memset)(void *, int, size_t) = memset;

int main(int argc, char **argv)
{
    if (argc != 3)
        return 1;
    bd_mem_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.dir = mt_mkdir();
    cfg.sbpage = SB;
    cfg.threshold = SB;
    cfg.strategy = mt_strategy(argv[1]);
    cfg.track = mt_track(argv[2]);
    cfg.readahead = (size_t)-1; /* exact byte counts: no read-ahead */
    mt_init(&cfg);
    const size_t n = 4u << 20;
    uint8_t *a = bd_mem_alloc(n, 0);
    CHECK(a);
    g_memset(a, 0xaa, n);
    CHECK(bd_mem_unload_all() == 0);

    /* sbpages 2..6 covered whole, 1 and 7 in part */
    bd_mem_stats_t s0, s1;
    bd_mem_stats(&s0);
    g_memset(a + SB + 100, 0, 6 * SB);
    bd_mem_stats(&s1);
    uint64_t rd = s1.bytes_read - s0.bytes_read;
    if (cfg.strategy == BD_MEM_LRLW)
        CHECKF(rd == 2 * SB, "read %llu bytes, want the 2 partly covered sbpages",
               (unsigned long long)rd);
    else
        CHECKF(rd <= n - 5 * SB, "read %llu bytes: covered sbpages were read back",
               (unsigned long long)rd);
    for (size_t k = 0; k < n; k += 61) {
        uint8_t want = k >= SB + 100 && k < 7 * SB + 100 ? 0 : 0xaa;
        CHECKF(a[k] == want, "offset %zu holds %#x, want %#x", k, a[k], want);
    }
    CHECK(a[SB + 99] == 0xaa && a[SB + 100] == 0 && a[7 * SB + 99] == 0 && a[7 * SB + 100] == 0xaa);

    /* the zeros are stored like any data: unload, read back */
    CHECK(bd_mem_unload_all() == 0);
    CHECK(a[4 * SB] == 0 && a[SB + 99] == 0xaa && a[n - 1] == 0xaa);

    /* another byte value: loaded and filled as usual */
    CHECK(bd_mem_unload_all() == 0);
    g_memset(a + 3 * SB, 0x5c, 2 * SB);
    CHECK(a[3 * SB - 1] == 0 && a[3 * SB] == 0x5c && a[5 * SB - 1] == 0x5c && a[5 * SB] == 0);

    /* the whole allocation, unloaded: nothing read */
    CHECK(bd_mem_unload_all() == 0);
    bd_mem_stats(&s0);
    g_memset(a, 0, n);
    bd_mem_stats(&s1);
    CHECKF(s1.bytes_read == s0.bytes_read, "read %llu bytes clearing an unloaded allocation",
           (unsigned long long)(s1.bytes_read - s0.bytes_read));
    for (size_t k = 0; k < n; k += 97)
        CHECK(a[k] == 0);

    bd_mem_free(a);
    mt_finish();
    return 0;
}
