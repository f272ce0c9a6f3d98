/* mprotect path: scattered writes exhaust vm.max_map_count; the manager must
 * degrade the allocation (whole-allocation tracking) instead of failing, and
 * keep all data.  usage: mem_maxmap */
#include "memtest.h"

int main(void)
{
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    long maxmap = 0;
    if (!f || fscanf(f, "%ld", &maxmap) != 1)
        return SKIP;
    fclose(f);
    /* writing every other 4 KiB sbpage needs about one VMA per sbpage */
    size_t n = (size_t)(maxmap + 4096) * 4096;
    if (n > (600u << 20)) {
        fprintf(stderr, "vm.max_map_count %ld too large for this test: skipping\n", maxmap);
        return SKIP;
    }
    bd_mem_config_t cfg;
    mt_setup(&cfg, "lrlw", 4096, "mprotect");
    uint8_t *a = bd_mem_alloc(n, 0);
    CHECK(a);
    for (size_t k = 0; k < n; k += 8192)
        a[k] = (uint8_t)(k >> 13);
    for (size_t k = 0; k < n; k += 8192)
        CHECKF(a[k] == (uint8_t)(k >> 13), "offset %zu", k);
    CHECK(bd_mem_unload_all() == 0);
    for (size_t k = 0; k < n; k += 8192)
        CHECKF(a[k] == (uint8_t)(k >> 13), "offset %zu", k);
    for (size_t k = 4096; k < n; k += 8192)
        CHECK(a[k] == 0);
    bd_mem_free(a);
    mt_finish();
    return 0;
}
