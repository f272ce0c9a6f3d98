/* The uffd path's bounce buffers (4 x 1 MiB) are one mapping, 2 MiB
 * aligned, with huge pages asked for (MADV_HUGEPAGE: "hg" in smaps'
 * VmFlags).  They are faulted in again after every wait of a rank: in
 * 4 KiB pages that cost 2.6 ms per 4 MiB on the test machine, about half of
 * the master's process_vm_writev time with -mem-remote on (the system's THP
 * "always" gave no huge pages without the advice; docs/performance.md,
 * issue 16 session 22).  Also loads data back through them, so that what
 * passes the bounce buffers is checked.
 * usage: mem_bounce_huge (skips without userfaultfd or transparent huge
 * pages) */
#include "memtest.h"

/* 1: a 4 MiB mapping, 2 MiB aligned, advised for huge pages; prints what
 * of it is in huge pages now. */
static int bounce_advised(void)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    CHECK(f);
    char line[512];
    unsigned long lo = 0, hi = 0;
    unsigned long huge_kb = 0;
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long a, b;
        if (sscanf(line, "%lx-%lx ", &a, &b) == 2) {
            lo = a, hi = b;
            continue;
        }
        unsigned long kb;
        if (sscanf(line, "AnonHugePages: %lu kB", &kb) == 1)
            huge_kb = kb;
        if (strncmp(line, "VmFlags:", 8) == 0 && hi - lo == (4ul << 20) && lo % (2ul << 20) == 0 &&
            strstr(line, " hg")) {
            fprintf(stderr, "bounce buffers at %lx-%lx, %lu KiB in huge pages now\n", lo, hi,
                    huge_kb);
            found = 1;
        }
    }
    fclose(f);
    return found;
}

int main(void)
{
    FILE *t = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char mode[128] = "";
    if (!t || !fgets(mode, sizeof mode, t) || strstr(mode, "[never]")) {
        fprintf(stderr, "no transparent huge pages here: skipped\n");
        return SKIP;
    }
    fclose(t);
    bd_mem_config_t cfg;
    mt_setup(&cfg, "lrlw", 64u << 10, "uffd");
    const size_t n = 16u << 20;
    uint8_t *a = bd_mem_alloc(n, 0);
    CHECK(a);
    for (size_t k = 0; k < n; k += 512)
        a[k] = (uint8_t)(k >> 9);
    CHECK(bd_mem_unload_all() == 0);
    for (size_t k = 0; k < n; k += 512) /* back through the bounce buffers */
        CHECK(a[k] == (uint8_t)(k >> 9));
    CHECKF(bounce_advised(), "no 2 MiB aligned 4 MiB mapping advised for huge pages");
    bd_mem_free(a);
    mt_finish();
    return 0;
}
