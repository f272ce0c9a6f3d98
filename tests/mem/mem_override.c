/* malloc & co. through the manager (bdmem_override).
 * usage: mem_override <uffd|mprotect> */
#include <malloc.h>

#include "memtest.h"

int main(int argc, char **argv)
{
    if (argc != 2)
        return 1;
    const size_t M = 1u << 20;
    /* before init everything is libc */
    void *volatile early = malloc(4 * M);
    CHECK(early && !bd_mem_owns(early));
    memset(early, 7, 4 * M);

    bd_mem_config_t cfg;
    mt_setup(&cfg, "lrlw", 64u << 10, argv[1]);
    CHECK(bd_mem_threshold() == M);

    char *small = malloc(100);
    CHECK(small && !bd_mem_owns(small));
    strcpy(small, "hello");

    uint8_t *big = malloc(4 * M);
    CHECK(big && bd_mem_owns(big));
    CHECK(malloc_usable_size(big) >= 4 * M);
    memset(big, 0x11, 4 * M);

    uint8_t *z = calloc(2, 3 * M);
    CHECK(z && bd_mem_owns(z));
    for (size_t k = 0; k < 6 * M; k += 999)
        CHECK(z[k] == 0);
    z[17] = 5;

    void *al = NULL;
    CHECK(posix_memalign(&al, 2 * M, 3 * M) == 0);
    CHECK(bd_mem_owns(al) && ((uintptr_t)al % (2 * M)) == 0);
    void *al2 = aligned_alloc(4096, 2 * M);
    CHECK(al2 && bd_mem_owns(al2));
    void *al3 = memalign(64, 1000);
    CHECK(al3 && !bd_mem_owns(al3) && ((uintptr_t)al3 % 64) == 0);
    void *va = valloc(M);
    CHECK(va && bd_mem_owns(va));

    /* libc -> managed when growing past the threshold */
    char *g = malloc(1000);
    CHECK(g && !bd_mem_owns(g));
    for (int k = 0; k < 1000; k++)
        g[k] = (char)k;
    g = realloc(g, 3 * M);
    CHECK(g && bd_mem_owns(g));
    for (int k = 0; k < 1000; k++)
        CHECK(g[k] == (char)k);
    /* managed -> libc when shrinking below it */
    g = realloc(g, 500);
    CHECK(g && !bd_mem_owns(g));
    for (int k = 0; k < 500; k++)
        CHECK(g[k] == (char)k);
    free(g);

    CHECK(bd_mem_unload_all() == 0);
    for (size_t k = 0; k < 4 * M; k += 4096)
        CHECK(big[k] == 0x11);
    CHECK(z[17] == 5 && z[18] == 0);
    CHECK(strcmp(small, "hello") == 0);
    big = realloc(big, 9 * M);
    CHECK(big && bd_mem_owns(big) && big[4 * M - 1] == 0x11);

    /* early (pre-init) libc pointers still free fine */
    CHECK(((uint8_t *)early)[4 * M - 1] == 7);
    free(early);
    free(small);
    free(big);
    free(z);
    free(al);
    free(al2);
    free(al3);
    free(va);
    CHECK(bd_mem_resident_bytes() == 0);

    void *stale = malloc(2 * M);
    CHECK(bd_mem_owns(stale));
    mt_finish();
    free(stale); /* after fini: ignored, no crash */
    void *after = malloc(2 * M);
    CHECK(after && !bd_mem_owns(after));
    free(after);
    return 0;
}
