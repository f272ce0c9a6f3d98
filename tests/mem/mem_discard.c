/* bd_mem_discard drops contents without write-back (receive buffers).
 * usage: mem_discard <araw|arlw|lrlw> <uffd|mprotect> */
#include "memtest.h"

#define SB (64u << 10)

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
    /* exact byte counts below: no read-ahead of the stored sbpages after the
     * discarded ones */
    cfg.readahead = (size_t)-1;
    mt_init(&cfg);
    const size_t n = 4u << 20;
    uint8_t *a = bd_mem_alloc(n, 0);
    CHECK(a);
    memset(a, 0xaa, n);
    CHECK(bd_mem_unload_all() == 0);

    /* stored data: sbpages 3..9 fully covered, 2 partially */
    CHECK(bd_mem_discard(a + 2 * SB + 100, 8 * SB - 100) == 0);
    bd_mem_stats_t s0, s1;
    bd_mem_stats(&s0);
    for (size_t k = 3 * SB; k < 10 * SB; k += 1000)
        CHECKF(a[k] == 0, "offset %zu", k);
    if (cfg.strategy == BD_MEM_LRLW) {
        bd_mem_stats(&s1);
        CHECKF(s1.bytes_read == s0.bytes_read, "discarded sbpages were read back");
    }
    CHECK(a[2 * SB + 99] == 0xaa && a[2 * SB + 100] == 0xaa && a[3 * SB - 1] == 0xaa);
    CHECK(a[10 * SB] == 0xaa && a[3 * SB - 1] == 0xaa && a[0] == 0xaa && a[n - 1] == 0xaa);

    /* resident dirty data that is discarded is never written */
    CHECK(bd_mem_unload_all() == 0);
    memset(a, 0xbb, n);
    CHECK(bd_mem_discard(a, n) == 0);
    bd_mem_stats(&s0);
    CHECK(bd_mem_unload_all() == 0);
    bd_mem_stats(&s1);
    CHECKF(s1.bytes_written == s0.bytes_written, "discarded dirty data written: %llu",
           (unsigned long long)(s1.bytes_written - s0.bytes_written));
    for (size_t k = 0; k < n; k += 777)
        CHECK(a[k] == 0);

    /* receive-buffer pattern: discard, prepare for write, fill, unload, check */
    memset(a, 0xcc, n);
    CHECK(bd_mem_unload_all() == 0);
    CHECK(bd_mem_discard(a + SB, 2 * SB) == 0);
    CHECK(bd_mem_prepare(a + SB, 2 * SB, 1) == 0);
    memset(a + SB, 0xdd, 2 * SB);
    CHECK(bd_mem_unload_all() == 0);
    CHECK(a[SB - 1] == 0xcc && a[SB] == 0xdd && a[3 * SB - 1] == 0xdd && a[3 * SB] == 0xcc);

    bd_mem_free(a);
    mt_finish();
    return 0;
}
