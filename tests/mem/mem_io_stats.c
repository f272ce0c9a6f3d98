/* Only the necessary I/O happens.
 * usage: mem_io_stats <araw|arlw|lrlw> <uffd|mprotect>
 *  - unloading an allocation that was only read writes 0 bytes;
 *  - only dirty sbpages are written;
 *  - a never-written allocation is never read or written;
 *  - LRLW reads only the chunks that are touched, AR reads whole allocations. */
#include "memtest.h"

#define SB (64u << 10)

static bd_mem_stats_t st0;
static void mark(void) { bd_mem_stats(&st0); }
static uint64_t dw(void)
{
    bd_mem_stats_t s;
    bd_mem_stats(&s);
    return s.bytes_written - st0.bytes_written;
}
static uint64_t dr(void)
{
    bd_mem_stats_t s;
    bd_mem_stats(&s);
    return s.bytes_read - st0.bytes_read;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 1;
    bd_mem_config_t cfg;
    mt_setup(&cfg, argv[1], SB, argv[2]);
    int lazy = cfg.strategy == BD_MEM_LRLW;
    const size_t n = 8u << 20;
    uint8_t *a = bd_mem_alloc(n, 0);
    uint8_t *never = bd_mem_alloc(4u << 20, 0);
    CHECK(a && never);

    /* full write: everything is written once */
    mark();
    memset(a, 0x5a, n);
    CHECK(bd_mem_unload_all() == 0);
    CHECKF(dw() == n, "written %llu", (unsigned long long)dw());
    CHECK(dr() == 0);

    /* read everything: loads all, writes nothing */
    mark();
    unsigned sum = 0;
    for (size_t k = 0; k < n; k += 4096)
        sum += a[k];
    CHECK(sum == 0x5a * (n / 4096));
    CHECK(bd_mem_unload_all() == 0);
    CHECKF(dw() == 0, "read-only unload wrote %llu bytes", (unsigned long long)dw());
    CHECKF(dr() == n, "read %llu", (unsigned long long)dr());

    /* touch one byte: LRLW loads one chunk, AR starts loading everything (in
   * the background; the unload stops it) */
    mark();
    CHECK(a[3 * SB + 5] == 0x5a);
    CHECK(bd_mem_unload_all() == 0);
    CHECK(dw() == 0);
    if (lazy)
        CHECKF(dr() == SB, "lazy read %llu", (unsigned long long)dr());
    else
        CHECKF(dr() >= SB && dr() <= n && dr() % SB == 0, "aggressive read %llu",
               (unsigned long long)dr());

    /* three written bytes in three sbpages: exactly three sbpages written */
    mark();
    a[0] = 1;
    a[SB * 10 + 7] = 2;
    a[n - 1] = 3;
    CHECK(bd_mem_unload_all() == 0);
    CHECKF(dw() == 3 * SB, "written %llu", (unsigned long long)dw());
    CHECK(a[0] == 1 && a[SB * 10 + 7] == 2 && a[n - 1] == 3 && a[SB * 10 + 8] == 0x5a);

    /* the never-written allocation: read it, unload, read again: no I/O */
    CHECK(bd_mem_unload_all() == 0);
    mark();
    for (size_t k = 0; k < (4u << 20); k += 4096)
        CHECK(never[k] == 0);
    CHECK(bd_mem_unload_all() == 0);
    for (size_t k = 0; k < (4u << 20); k += 8192)
        CHECK(never[k] == 0);
    CHECK(bd_mem_unload_all() == 0);
    CHECKF(dw() == 0 && dr() == 0, "never-written allocation caused I/O: w %llu r %llu",
           (unsigned long long)dw(), (unsigned long long)dr());
    CHECKF(mt_nfiles() == 1, "files %d", mt_nfiles());

    /* unloading with nothing resident does nothing */
    mark();
    CHECK(bd_mem_unload_all() == 0);
    CHECK(dw() == 0 && dr() == 0);

    bd_mem_free(a);
    bd_mem_free(never);
    mt_finish();
    return 0;
}
