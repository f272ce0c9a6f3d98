/* bd_mem_store.h - the node's store of managed memory (mem_dedup.c) seen
 * from a process that manages no memory: the master holds, reads and gives
 * back references that ranks handed it (bd_mem_store_take in bd_mem.h:
 * collective data sent by reference to its stored copy).  The only part of
 * the memory manager the master uses; mem_store.c alone implements it. */
#ifndef BD_MEM_STORE_API_H
#define BD_MEM_STORE_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The store of the table at share (len bytes, the region the ranks were
 * given) in dir. */
struct dd_hdr;
typedef struct bd_mem_store {
    struct dd_hdr *h;
    int fd;
    size_t sbpage;
} bd_mem_store_t;
/* 0, -ENOENT when no rank has set the store up yet, or -errno. */
int bd_mem_store_attach(bd_mem_store_t *st, void *share, size_t len, const char *dir,
                        size_t sbpage);
void bd_mem_store_detach(bd_mem_store_t *st);
/* Read slots [slot, slot + n) (numbered from 1) into buf, aligned for
 * direct I/O and n sbpages long.  0 or -errno. */
int bd_mem_store_read(bd_mem_store_t *st, uint32_t slot, size_t n, void *buf);
/* 0 when the sbpage at buf has CRC32C crc, else -EBADMSG. */
int bd_mem_store_check(const bd_mem_store_t *st, const void *buf, uint32_t crc);
/* Drop one reference on each of slots[0..n) (0 entries are zeros, skipped);
 * a slot nobody holds any more is freed.  0 or -errno (the table's lock is
 * unusable). */
int bd_mem_store_drop(bd_mem_store_t *st, const uint32_t *slots, size_t n);

#ifdef __cplusplus
}
#endif
#endif
