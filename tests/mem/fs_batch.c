/* bd_fs_pread_batch (src/common/bd_fs.c): many direct reads at once give
 * back exactly the file's bytes, in batches larger than the depth kept in
 * flight, for runs of several blocks and single blocks, and a read past
 * the end of the file is -EIO.  Also through a buffered descriptor.
 * Exit 0 pass, 1 fail, 77 skip (no directory that takes direct I/O). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bd_fs.h"

#define BLK 65536u
#define NBLK 256u

static uint8_t byte_at(uint64_t off) { return (uint8_t)((off * 2654435761u) >> 13); }

static int check(bd_fs_batch_t *b, int fd, const char *how)
{
    enum { N = 150 }; /* more than the 64 kept in flight */
    bd_fs_rd_t v[N];
    void *mem = NULL;
    if (posix_memalign(&mem, BD_FS_DIO_ALIGN, (size_t)N * 3 * BLK))
        return 1;
    char *buf = mem;
    unsigned seed = 7;
    for (int i = 0; i < N; i++) {
        unsigned nb = 1 + rand_r(&seed) % 3, first = rand_r(&seed) % (NBLK - nb);
        v[i] = (bd_fs_rd_t){buf + (size_t)i * 3 * BLK, (size_t)nb * BLK, (uint64_t)first * BLK};
    }
    memset(buf, 0xee, (size_t)N * 3 * BLK);
    int rc = bd_fs_pread_batch(b, fd, v, N), bad = 0;
    if (rc != 0) {
        printf("FAIL %s: batch of %d reads returned %d\n", how, N, rc);
        free(mem);
        return 1;
    }
    for (int i = 0; i < N && !bad; i++)
        for (size_t k = 0; k < v[i].len; k++)
            if (((uint8_t *)v[i].buf)[k] != byte_at(v[i].off + k)) {
                printf("FAIL %s: read %d differs at byte %zu\n", how, i, k);
                bad = 1;
                break;
            }
    /* the last read goes past the end of the file */
    v[0] = (bd_fs_rd_t){buf, BLK, 0};
    v[1] = (bd_fs_rd_t){buf + 3 * BLK, 2 * BLK, (uint64_t)(NBLK - 1) * BLK};
    rc = bd_fs_pread_batch(b, fd, v, 2);
    if (rc != -EIO) {
        printf("FAIL %s: a read past the end returned %d, not -EIO\n", how, rc);
        bad = 1;
    }
    free(mem);
    if (!bad)
        printf("ok %s: %d reads, then one past the end\n", how, N);
    return bad;
}

int main(void)
{
    const char *dir = getenv("BDMPI_TEST_DISK_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/bdmpi-fsbatch.XXXXXX", dir ? dir : "/var/tmp");
    int wfd = mkstemp(path);
    if (wfd < 0) {
        printf("SKIP: cannot create %s: %s\n", path, strerror(errno));
        return 77;
    }
    unlink(path);
    static uint8_t blk[BLK];
    for (uint64_t b = 0; b < NBLK; b++) {
        for (size_t k = 0; k < BLK; k++)
            blk[k] = byte_at(b * BLK + k);
        if (bd_fs_pwrite_all(wfd, blk, BLK, b * BLK) < 0) {
            printf("FAIL: cannot write the file\n");
            return 1;
        }
    }
    char fdpath[64];
    snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", wfd);
    int dfd = open(fdpath, O_RDONLY | O_DIRECT);
    int fail = 0;
    bd_fs_batch_t b = {0};
    if (dfd >= 0) {
        fail |= check(&b, dfd, "direct");
        close(dfd);
    } else {
        printf("no direct I/O here (%s): buffered only\n", strerror(errno));
    }
    fail |= check(&b, wfd, "buffered");
    bd_fs_batch_close(&b);
    close(wfd);
    if (!fail)
        printf("PASS fs_batch\n");
    return fail;
}
