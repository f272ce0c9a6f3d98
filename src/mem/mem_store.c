/* mem_store.c - the node's store (mem_dedup.c) seen from a process that
 * manages no memory: the master holds references on slots that ranks
 * handed it (bd_mem_store_take: collective data sent by reference to its
 * stored copy), reads them, and drops them.  Nothing here touches the
 * memory manager's state (bdm_g), so linking this file alone is enough. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bd_crc.h"
#include "bd_mem_store.h"
#include "mem_store.h"

int bd_mem_store_attach(bd_mem_store_t *st, void *share, size_t len, const char *dir, size_t sbpage)
{
    st->h = NULL;
    st->fd = -1;
    struct dd_hdr *h = share;
    if (!share || len < DD_HDR || atomic_load(&h->state) != 2)
        return -ENOENT; /* no rank has set the store up */
    if (h->magic != DD_MAGIC || h->sbpage != sbpage)
        return -EINVAL;
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/bdmem.store", dir) >= (int)sizeof path)
        return -ENAMETOOLONG;
    /* read and punched: a buffered descriptor where direct I/O is refused */
    int fd = open(path, O_RDWR | O_CLOEXEC | O_DIRECT);
    if (fd < 0 && errno == EINVAL)
        fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    st->h = h;
    st->fd = fd;
    st->sbpage = sbpage;
    return 0;
}

void bd_mem_store_detach(bd_mem_store_t *st)
{
    if (st->fd >= 0)
        close(st->fd);
    st->fd = -1;
    st->h = NULL;
}

int bd_mem_store_read(bd_mem_store_t *st, uint32_t slot, size_t n, void *buf)
{
    size_t want = n * st->sbpage, got = 0;
    off_t off = (off_t)(slot - 1) * (off_t)st->sbpage;
    while (got < want) {
        ssize_t r = pread(st->fd, (char *)buf + got, want - got, off + (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -errno;
        if (r == 0)
            return -EIO; /* a slot ends before the file does: never written */
        got += (size_t)r;
    }
    return 0;
}

int bd_mem_store_check(const bd_mem_store_t *st, const void *buf, uint32_t crc)
{
    return bd_crc32c(0, buf, st->sbpage) == crc ? 0 : -EBADMSG;
}

int bd_mem_store_drop(bd_mem_store_t *st, const uint32_t *slots, size_t n)
{
    struct dd_hdr *h = st->h;
    int rc = bdm_st_lock(h);
    if (rc)
        return -rc;
    for (size_t i = 0; i < n; i++) {
        uint32_t s = slots[i];
        if (!s)
            continue;
        dd_rec_t *r = bdm_st_rec(h, s - 1);
        if (r->refs == 0 || --r->refs > 0)
            continue;
        /* the last holder: as mem_dedup.c frees a slot, out of the index,
         * its blocks punched, and only then its bit cleared, so that it is
         * never reused before the punch (the lock is held across the
         * punch: the master frees few slots, rarely) */
        bdm_st_unindex(h, s - 1);
        fallocate(st->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                  (off_t)(s - 1) * (off_t)st->sbpage, (off_t)st->sbpage);
        bdm_st_bits(h)[(s - 1) / 64] &= ~(1ULL << ((s - 1) % 64));
        h->used--;
    }
    bdm_st_unlock(h);
    return 0;
}
