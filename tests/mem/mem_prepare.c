/* Buffers handed to syscalls: bd_mem_prepare makes them accessible.
 * usage: mem_prepare <uffd|mprotect> */
#include <fcntl.h>

#include "memtest.h"

int main(int argc, char **argv)
{
    if (argc != 2)
        return 1;
    bd_mem_config_t cfg;
    mt_setup(&cfg, "lrlw", 64u << 10, argv[1]);
    bd_mem_stats_t st;
    bd_mem_stats(&st);
    const size_t n = 3u << 20;

    /* a plain file with a pattern */
    char path[300];
    snprintf(path, sizeof path, "%s/../bdmem-prepare-%d", cfg.dir, (int)getpid());
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    uint8_t *tmp = malloc(n);
    for (size_t k = 0; k < n; k++)
        tmp[k] = (uint8_t)(k * 31);
    CHECK(write(fd, tmp, n) == (ssize_t)n);

    uint8_t *a = bd_mem_alloc(n, 0);
    CHECK(a);
    memset(a, 1, n);
    CHECK(bd_mem_unload_all() == 0);

    /* receive into unloaded managed memory */
    CHECK(bd_mem_prepare(a, n, 1) == 0);
    CHECK(pread(fd, a, n, 0) == (ssize_t)n);
    CHECK(bd_mem_unload_all() == 0);
    CHECK(memcmp(a, tmp, n) == 0);

    /* send from unloaded managed memory */
    CHECK(bd_mem_unload_all() == 0);
    CHECK(bd_mem_prepare(a + 1000, n - 2000, 0) == 0);
    CHECK(pwrite(fd, a + 1000, n - 2000, 0) == (ssize_t)(n - 2000));
    CHECK(pread(fd, tmp, n - 2000, 0) == (ssize_t)(n - 2000));
    CHECK(memcmp(tmp, a + 1000, n - 2000) == 0);

    /* without prepare: works only when the kernel's own faults are handled */
    CHECK(bd_mem_unload_all() == 0);
    ssize_t r = pread(fd, a, 4096, 0);
    if (st.kernel_faults) {
        CHECK(r == 4096);
    } else {
        CHECKF(r == -1 && errno == EFAULT, "expected EFAULT, got %zd", r);
    }
    fprintf(stderr, "kernel faults handled: %d\n", st.kernel_faults);

    close(fd);
    unlink(path);
    free(tmp);
    bd_mem_free(a);
    mt_finish();
    return 0;
}
