/* mem_dedup.c - identical sbpages stored once per node (issue 17; the
 * storage side of sbllmalloc.txt's idea: ranks of a node often hold the
 * same data, and BDMPI writes every rank's copy to storage).
 *
 * The store.  All processes of a node that pass the same shared region
 * (bd_mem_config_t.share: the runtime gives every rank the same part of the
 * job's shared memory) share one store file, dir/bdmem.store, cut into
 * slots of one sbpage, and a table in the region: per slot a reference
 * count, a 64-bit key and a hash-chain link, a bitmap of used slots and the
 * hash buckets.  An sbpage whose stored copy is in the store holds one
 * reference on its slot (alloc_t.slot); an sbpage stored in its
 * allocation's own file (when the table is full) is never shared.
 *
 * Unload of a dirty sbpage (bdm_dd_plan): its content hash (the keyed
 * GF(2^128) hash the write prediction computes anyway; with storage
 * deduplication every process of the node uses the same key, drawn once by
 * the process that initialises the table) is looked up among the indexed
 * slots.  A candidate is *not* trusted on its hash: the hash is universal,
 * not collision resistant, and its key lies in memory every rank can read,
 * so data made to collide is conceivable.  The candidate's copy is read back
 * from the store and compared byte for byte with the sbpage; only if they
 * are equal does the sbpage take a reference on it instead of being
 * written.  The comparison costs a read of one sbpage per hit, and nothing
 * when nothing matches.  (A collision-resistant hash, SHA-256 say, would
 * have to be computed for every sbpage written, shared or not, to be there
 * when a match comes; the read is paid only by the sbpages that save a
 * write.)  An all-zero sbpage (hash 0, then checked byte by byte) is not
 * stored at all: it reads back as zeros.
 *
 * Copy on write.  A dirty sbpage whose slot is referenced by nobody else is
 * rewritten in place (taken out of the index first, so that nobody adopts a
 * slot being written); one whose slot others share drops its reference and
 * gets a fresh slot.  A slot is indexed only once its write has reached
 * storage (bdm_dd_written), so a candidate's copy is always complete, and a
 * process comparing with a candidate holds a reference on it meanwhile, so
 * it can be neither rewritten in place nor freed under the comparison.
 *
 * Freeing.  free, realloc, discard and exit drop references; a slot whose
 * count reaches zero leaves the index, its range of the file is punched
 * (FALLOC_FL_PUNCH_HOLE: its disk space is given back) and only then is its
 * bit cleared, so a slot is never reused before the punch is done.
 *
 * Concurrency and crashes.  The table lock is a robust process-shared
 * mutex, held only for table updates (never across I/O).  A rank that dies
 * holding it leaves every update either done or not done (each changes a
 * chain with a single store), so the next locker marks the mutex consistent
 * and goes on; what a dead rank referenced stays allocated until the job
 * ends, when the master removes the job directory and with it the store.
 * Two ranks unloading the same content at the same moment may both write it
 * (neither is indexed yet): deduplication is best effort, correctness does
 * not depend on it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bd_crc.h"
#include "mem_internal.h"
#include "mem_store.h"

#define G bdm_g
#define H (G.dd)

static inline uint64_t *bits(void) { return bdm_st_bits(H); }
static inline dd_rec_t *rec(uint32_t k) { return bdm_st_rec(H, k); }
static inline uint32_t *bucket_of(uint64_t sel) { return bdm_st_bucket_of(H, sel); }

/* Bytes per slot: a record, a bit, and a sixteenth of a bucket (4 bytes). */
#define DD_SLOT_BYTES8 (8 * sizeof(dd_rec_t) + 1 + 2) /* in eighths of a byte */

size_t bd_mem_share_min(void) { return DD_HDR + 4096 * 4; }

static void dd_lock(void)
{
    int rc = bdm_st_lock(H);
    if (rc) /* a process died between EOWNERDEAD and making it consistent */
        bdm_die("the node's storage-deduplication table lock cannot be recovered", rc, 0);
}

static void dd_unlock(void) { bdm_st_unlock(H); }

static int init_table(struct dd_hdr *h, size_t len)
{
    size_t avail = len - DD_HDR;
    size_t nslot = avail * 8 / DD_SLOT_BYTES8;
    nslot &= ~(size_t)63;
    if (nslot > UINT32_MAX - 64)
        nslot = (UINT32_MAX - 64) & ~(size_t)63;
    size_t nb = 64;
    while (nb * 2 <= nslot / 16)
        nb *= 2;
    h->nslot = (uint32_t)nslot;
    h->nbucket = (uint32_t)nb;
    h->bucket_off = DD_HDR;
    h->bits_off = h->bucket_off + nb * 4;
    h->rec_off = bdm_round_up(h->bits_off + nslot / 8, 8);
    if (h->rec_off + nslot * sizeof(dd_rec_t) > len)
        return -EINVAL;
    h->sbpage = G.sbpage;
    uint64_t key[2] = {0, 0};
    if (syscall(SYS_getrandom, key, sizeof key, 1 /* GRND_NONBLOCK */) != (long)sizeof key) {
        key[0] = bdm_now_ns() ^ ((uint64_t)getpid() << 32);
        key[1] = (uint64_t)(uintptr_t)&key ^ 0x9E3779B97F4A7C15ULL;
    }
    h->key[0] = key[0];
    h->key[1] = key[1];
    pthread_mutexattr_t at;
    pthread_mutexattr_init(&at);
    pthread_mutexattr_setpshared(&at, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&at, PTHREAD_MUTEX_ROBUST);
    int rc = pthread_mutex_init(&h->lock, &at);
    pthread_mutexattr_destroy(&at);
    if (rc)
        return -rc;
    h->magic = DD_MAGIC;
    return 0;
}

int bdm_dd_setup(void *share, size_t len)
{
    /* Off without a fast hash: the portable one runs far below disk speed. */
    if (!share || !bdm_hash_fast())
        return 0;
    if (len < bd_mem_share_min() || ((uintptr_t)share & 4095))
        return -EINVAL;
    struct dd_hdr *h = share;
    uint32_t z = 0;
    if (atomic_compare_exchange_strong(&h->state, &z, 1)) {
        int rc = init_table(h, len);
        if (rc) {
            atomic_store(&h->state, 0);
            return rc;
        }
        atomic_store(&h->state, 2);
    } else {
        /* another process initialises it: that takes microseconds; give up
         * after ten seconds (it died in the middle) */
        for (int n = 0; atomic_load(&h->state) != 2; n++) {
            if (n > 100000)
                return -ETIMEDOUT;
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        }
    }
    if (h->magic != DD_MAGIC || h->sbpage != G.sbpage)
        return -EINVAL;
    char path[sizeof G.dir + 32];
    memcpy(path, G.dir, G.dirlen);
    memcpy(path + G.dirlen, "/bdmem.store", 13);
    int fd = -1;
    if (G.direct_io) {
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_DIRECT, 0600);
        if (fd < 0 && errno == EINVAL) { /* as bdm_open_backing: no O_DIRECT here */
            G.direct_io = 0;
            G.st.direct_io = 0;
        }
    }
    if (fd < 0 && !G.direct_io)
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    G.dd_vbuf = bdm_map(G.sbpage);
    if (!G.dd_vbuf) {
        close(fd);
        return -ENOMEM;
    }
    G.dd_fd = fd;
    G.dd = h;
    G.dd_punch = 0;
    bdm_hash_setkey(h->key);
    G.st.dedup = 1;
    return 0;
}

void bdm_dd_teardown(void)
{
    if (!G.dd)
        return;
    bdm_dd_flush();
    close(G.dd_fd);
    G.dd_fd = -1;
    bdm_unmap(G.dd_vbuf, G.sbpage);
    G.dd_vbuf = NULL;
    G.dd = NULL;
}

int bdm_dd_resize(alloc_t *a, size_t nsb)
{
    if (!G.dd)
        return 0;
    void *n = bdm_meta_grow(a->slot, &a->slot_bytes, (nsb ? nsb : 1) * sizeof(uint32_t));
    if (!n)
        return -ENOMEM;
    a->slot = n;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* the table (dd_lock held)                                                  */

static void unindex(uint32_t k) { bdm_st_unindex(H, k); }

static void index_slot(uint32_t k, uint64_t key)
{
    dd_rec_t *r = rec(k);
    if (r->indexed || r->refs == 0)
        return;
    r->key = key;
    uint32_t *p = bucket_of(key >> 32 ^ key);
    r->next = *p;
    r->indexed = 1;
    *p = k + 1;
}

/* An indexed slot holding key, with a reference taken for the caller, or
 * 0 (else slot + 1). */
static uint32_t find_ref(uint64_t key)
{
    for (uint32_t s = *bucket_of(key >> 32 ^ key); s; s = rec(s - 1)->next) {
        dd_rec_t *r = rec(s - 1);
        if (r->key == key && r->indexed && r->refs > 0) {
            r->refs++;
            return s;
        }
    }
    return 0;
}

static int bit_used(uint32_t k) { return (bits()[k / 64] >> (k % 64)) & 1; }

/* A free slot (refs 1, not indexed), the one after hint if it is free so
 * that runs of sbpages get runs of slots; 0 when the store is full, else
 * slot + 1. */
static uint32_t alloc_slot(uint32_t hint)
{
    uint32_t n = H->nslot, k = n;
    if (hint < n && !bit_used(hint)) {
        k = hint;
    } else {
        uint64_t *b = bits();
        uint32_t nw = n / 64, w0 = H->cursor / 64;
        for (uint32_t c = 0; c <= nw && k == n; c++) {
            uint32_t w = (w0 + c) % nw;
            if (b[w] != ~0ULL)
                k = w * 64 + (uint32_t)__builtin_ctzll(~b[w]);
        }
        if (k == n)
            return 0;
    }
    bits()[k / 64] |= 1ULL << (k % 64);
    H->used++;
    H->cursor = k + 1 < n ? k + 1 : 0;
    dd_rec_t *r = rec(k);
    r->refs = 1;
    r->indexed = 0;
    r->next = 0;
    return k + 1;
}

/* ------------------------------------------------------------------------ */
/* freeing: the punch happens before the bit is cleared                      */

void bdm_dd_flush(void)
{
    if (!G.dd || !G.dd_punch)
        return;
    size_t sb = G.sbpage;
    uint32_t k0 = G.dd_punch0, n = G.dd_punch;
    G.dd_punch = 0;
    fallocate(G.dd_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)k0 * (off_t)sb,
              (off_t)n * (off_t)sb);
    dd_lock();
    for (uint32_t k = k0; k < k0 + n; k++)
        bits()[k / 64] &= ~(1ULL << (k % 64));
    H->used -= n;
    dd_unlock();
}

/* Drop a reference on slot s - 1 (dd_lock held); a slot nobody refers to
 * any more is queued for the punch. */
static void unref(uint32_t s)
{
    dd_rec_t *r = rec(s - 1);
    if (r->refs == 0 || --r->refs > 0)
        return;
    unindex(s - 1);
    if (G.dd_punch && s - 1 == G.dd_punch0 + G.dd_punch) {
        G.dd_punch++;
        return;
    }
    if (G.dd_punch) {
        dd_unlock();
        bdm_dd_flush();
        dd_lock();
    }
    G.dd_punch0 = s - 1;
    G.dd_punch = 1;
}

void bdm_dd_drop(alloc_t *a, size_t s0, size_t s1)
{
    if (!G.dd || !a->slot || !a->nslot)
        return;
    int locked = 0;
    for (size_t i = s0; i < s1; i++) {
        if (!a->slot[i])
            continue;
        if (!locked) {
            dd_lock();
            locked = 1;
        }
        unref(a->slot[i]);
        a->slot[i] = 0;
        a->nslot--;
    }
    if (locked)
        dd_unlock();
}

/* ------------------------------------------------------------------------ */
/* unload                                                                    */

static int all_zero(const uint8_t *p, size_t n)
{
    const uint64_t *w = (const uint64_t *)p;
    uint64_t acc = 0;
    for (size_t i = 0; i < n / 8; i += 8) {
        for (int k = 0; k < 8; k++)
            acc |= w[i + k];
        if (acc)
            return 0;
    }
    return 1;
}

/* Sbpage i's copy in its own file is no longer wanted: give its disk space
 * back (nothing reads it: the state says where the data is now). */
static void punch_own(alloc_t *a, size_t i)
{
    if (!(a->st[i] & SB_DISK) || bdm_loc(a, i) || !a->has_file)
        return;
    int fd = bdm_open_backing(a, 0);
    if (fd >= 0) {
        fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)(i * G.sbpage),
                  (off_t)G.sbpage);
        bdm_backing_done(a);
    }
}

/* Point sbpage i at slot s (whose reference the caller holds). */
static void set_slot(alloc_t *a, size_t i, uint32_t s)
{
    uint32_t old = a->slot[i];
    if (old == s)
        return;
    if (old) {
        dd_lock();
        unref(old);
        dd_unlock();
    }
    a->slot[i] = s;
    if (!old)
        a->nslot++;
    if (!s)
        a->nslot--;
}

int bdm_dd_plan(alloc_t *a, size_t i)
{
    size_t sb = G.sbpage;
    const uint8_t *p = (const uint8_t *)(a->base + i * sb);
    const uint64_t *h = a->hash + 2 * i;
    uint64_t key = h[0] ^ (h[1] << 1 | h[1] >> 63);
    if ((h[0] | h[1]) == 0 && all_zero(p, sb)) {
        bdm_rm_forget(a, i, i + 1);
        punch_own(a, i);
        set_slot(a, i, 0);
        a->st[i] &= (uint8_t)~SB_DISK;
        G.st.dedup_zero += sb;
        return 0;
    }
    dd_lock();
    uint32_t m = find_ref(key);
    dd_unlock();
    if (m) {
        uint64_t t0 = bdm_now_ns();
        if (G.io_begin)
            G.io_begin(G.ctx, 0);
        G.bounce_dirty = 1; /* dd_vbuf too is given back at bdm_bounce_idle */
        int rc = bdm_pread_all(G.dd_fd, G.dd_vbuf, sb, (off_t)(m - 1) * (off_t)sb);
        if (G.io_end)
            G.io_end(G.ctx, 0, rc == 0 ? sb : 0, t0);
        G.st.io_ns += bdm_now_ns() - t0;
        G.st.dedup_verify += sb;
        if (rc == 0 && memcmp(G.dd_vbuf, p, sb) == 0) {
            if (a->slot[i] == m) { /* its own copy: keep one reference */
                dd_lock();
                unref(m);
                dd_unlock();
            } else {
                bdm_rm_forget(a, i, i + 1);
                punch_own(a, i);
                set_slot(a, i, m);
            }
            a->st[i] |= SB_DISK;
            /* no write records its checksum: the shared copy holds these bytes */
            if (G.verify)
                a->crc[i] = bd_crc32c(0, p, sb);
            G.st.dedup_bytes += sb;
            return 0;
        }
        dd_lock();
        unref(m);
        dd_unlock();
    }
    uint32_t old = a->slot[i], to;
    if (G.rput) {
        /* The remote tier on: what must be written goes to its own file's
         * place, offered to the tier first (bdm_unload_one), and is never
         * indexed; only copies stored on the node are shared. */
        set_slot(a, i, 0);
        return 1;
    }
    dd_lock();
    if (old && rec(old - 1)->refs == 1) {
        unindex(old - 1); /* rewritten in place: nobody may adopt it meanwhile */
        to = old;
    } else {
        if (old)
            rec(old - 1)->refs--; /* shared: the others keep it (more than one) */
        uint32_t hint = i > 0 && a->slot[i - 1] ? a->slot[i - 1] : H->cursor;
        to = alloc_slot(hint);
    }
    dd_unlock();
    if (to != old) {
        if (to)
            punch_own(a, i);
        a->slot[i] = to;
        if (!old)
            a->nslot++;
        else if (!to)
            a->nslot--;
    }
    return 1;
}

void bdm_dd_written(alloc_t *a, size_t s, size_t n)
{
    if (!G.dd || !a->slot)
        return;
    int locked = 0;
    for (size_t i = s; i < s + n; i++) {
        if (!a->slot[i])
            continue;
        if (!locked) {
            dd_lock();
            locked = 1;
        }
        const uint64_t *h = a->hash + 2 * i;
        index_slot(a->slot[i] - 1, h[0] ^ (h[1] << 1 | h[1] >> 63));
    }
    if (locked)
        dd_unlock();
}

/* Storage deduplication: write the dirty run [i, j) (at most one I/O piece)
 * except the sbpages that need no write (an identical copy is stored, or
 * they are zeros), whose memory is released at once; the others are
 * written in runs of consecutive locations. */
int bdm_dd_write(alloc_t *a, size_t i, size_t j, int *fd)
{
    uint8_t need[(1024 * 1024) / 4096];
    if (j - i > sizeof need)
        j = i + sizeof need; /* cannot happen: runs are at most G.io_piece */
    for (size_t x = i; x < j; x++)
        need[x - i] = (uint8_t)bdm_dd_plan(a, x);
    for (size_t x = i; x < j;) {
        size_t y = x + 1;
        if (!need[x - i]) {
            while (y < j && !need[y - i])
                y++;
            bdm_release_mem_or_die(a, x, y);
        } else {
            while (y < j && need[y - i] && bdm_loc_run(a, x, y))
                y++;
            if (!bdm_loc(a, x) && *fd < 0) {
                *fd = bdm_open_backing(a, 1);
                if (*fd < 0)
                    return *fd;
            }
            /* own-file runs are offered to the remote tier first */
            bdm_slot_go(bdm_slot_get(), a, IO_WRITE, x, y - x,
                        IO_OWNED | (G.rput && !bdm_loc(a, x) ? IO_REMOTE : 0), *fd);
        }
        x = y;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* references handed to another process (bd_mem.h, bd_mem_store_take)       */

int bd_mem_store_take(const void *addr, size_t len, size_t max, uint32_t *first, uint32_t *slots,
                      uint32_t *crcs, int *crc_valid)
{
    if (!bd_mem_active() || !G.dd || !len)
        return 0;
    uintptr_t lo = (uintptr_t)addr, hi = lo + len;
    if (hi < lo)
        return -EINVAL;
    size_t sb = G.sbpage;
    int n = 0;
    LOCK();
    alloc_t *a = bdm_lookup(lo);
    /* One allocation, no I/O on it in flight (an unload's write may not
     * have reached the slot yet), every sbpage of the range out of memory
     * with its copy in the store or never stored (zeros).  Anything else
     * is sent by value. */
    if (a && a->slot && !a->inflight && hi <= a->base + a->len) {
        size_t i0 = (lo - a->base) / sb, i1 = (hi - 1 - a->base) / sb + 1;
        int ok = i1 - i0 <= max;
        for (size_t i = i0; ok && i < i1; i++) {
            uint8_t f = a->st[i];
            if ((f & (SB_RES | SB_LOADING)) || ((f & SB_DISK) && (!a->slot[i] || bdm_rm(a, i))))
                ok = 0;
        }
        if (ok) {
            dd_lock();
            for (size_t i = i0; i < i1; i++) {
                uint32_t s = (a->st[i] & SB_DISK) ? a->slot[i] : 0;
                if (s)
                    rec(s - 1)->refs++;
                slots[i - i0] = s;
                crcs[i - i0] = s && G.verify ? a->crc[i] : 0;
            }
            dd_unlock();
            *first = (uint32_t)((lo - a->base) % sb);
            *crc_valid = G.verify;
            n = (int)(i1 - i0);
        }
    }
    UNLOCK();
    return n;
}
