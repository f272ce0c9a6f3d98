/* mem_store.h - the layout of the node's store table (mem_dedup.c) and the
 * table operations that need no memory manager: shared by mem_dedup.c and
 * mem_store.c, which lets a process that manages no memory (the master)
 * hold and read references (bd_mem_store_*, bd_mem.h).  Private to bdmem. */
#ifndef BD_MEM_STORE_H
#define BD_MEM_STORE_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#define DD_MAGIC 0x42444d4544555031ull /* "BDMEDUP1" */
#define DD_HDR 4096

typedef struct {
    uint64_t key;  /* hash word of the indexed copy */
    uint32_t refs; /* holders of the slot (sbpages, collective pieces); 0 = free or being freed */
    uint32_t next; /* hash chain: next slot + 1, 0 = end */
    uint32_t indexed; /* on a chain (its write completed) */
    uint32_t pad;
} dd_rec_t;

struct dd_hdr {
    _Atomic uint32_t state; /* 0 fresh (zeros), 1 being initialised, 2 ready */
    uint32_t nslot, nbucket, cursor;
    uint64_t magic;
    uint64_t key[2]; /* the node's hash key */
    uint64_t sbpage;
    uint64_t used; /* slots with their bit set */
    uint64_t bucket_off, bits_off, rec_off;
    pthread_mutex_t lock;
};

static inline uint32_t *bdm_st_buckets(struct dd_hdr *h)
{
    return (uint32_t *)((char *)h + h->bucket_off);
}
static inline uint64_t *bdm_st_bits(struct dd_hdr *h)
{
    return (uint64_t *)((char *)h + h->bits_off);
}
static inline dd_rec_t *bdm_st_rec(struct dd_hdr *h, uint32_t k)
{
    return (dd_rec_t *)((char *)h + h->rec_off) + k;
}
static inline uint32_t *bdm_st_bucket_of(struct dd_hdr *h, uint64_t sel)
{
    return &bdm_st_buckets(h)[sel & (h->nbucket - 1)];
}

/* The table lock: a robust process-shared mutex.  A holder that died left
 * every update done or not done (each is a single store), so the next
 * locker makes it consistent.  0, or the error that makes the table
 * unusable. */
static inline int bdm_st_lock(struct dd_hdr *h)
{
    int rc = pthread_mutex_lock(&h->lock);
    if (rc == EOWNERDEAD)
        rc = pthread_mutex_consistent(&h->lock);
    return rc;
}

static inline void bdm_st_unlock(struct dd_hdr *h) { pthread_mutex_unlock(&h->lock); }

/* Take slot k off its hash chain (lock held): nobody adopts it from now on. */
static inline void bdm_st_unindex(struct dd_hdr *h, uint32_t k)
{
    dd_rec_t *r = bdm_st_rec(h, k);
    if (!r->indexed)
        return;
    uint32_t *p = bdm_st_bucket_of(h, r->key >> 32 ^ r->key);
    while (*p && *p != k + 1)
        p = &bdm_st_rec(h, *p - 1)->next;
    if (*p)
        *p = r->next; /* one store: the chain stays whole */
    r->indexed = 0;
    r->next = 0;
}

#endif
