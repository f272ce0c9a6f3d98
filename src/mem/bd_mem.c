/* bd_mem.c - SBMA core: arena, allocation table, load/unload, public API.
 *
 * Locking: one mutex (G.lock) protects the allocation table and all sbpage
 * state.  It is taken by API calls and by the fault path (handler thread or
 * SIGSEGV handler).  Code holding it never touches the application's view of
 * memory from user space (it uses the kernel: pread/pwrite/UFFDIO_COPY, or
 * the staging view), so a fault can never happen while it is held.  The
 * acquire/release callbacks are always called with the lock dropped.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mem_internal.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define G bdm_g
#define MAX_OPEN_FDS 256
#define DEFAULT_ARENA (16ULL << 40)
#define MIN_ARENA (1ULL << 30)
#define KIB 1024UL

mem_global_t bdm_g = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .uffd = -1,
    .pagemap_fd = -1,
    .stop_fd = -1,
    .memfd = -1,
    .io_evfd = -1,
};

static void do_release(size_t n);
#define LOCK() pthread_mutex_lock(&G.lock)
/* Unlocking gives back what reaping I/O slots found over-accounted. */
#define UNLOCK() unlock_release()
static void unlock_release(void)
{
    size_t r = G.rel_pending;
    G.rel_pending = 0;
    pthread_mutex_unlock(&G.lock);
    do_release(r);
}

static void atfork_child(void);

static inline int is_uffd(void) { return G.track == BD_MEM_TRACK_UFFD; }
static inline int is_ar(void) { return G.strategy != BD_MEM_LRLW; }
static inline size_t round_up(size_t v, size_t m) { return (v + m - 1) / m * m; }

/* ------------------------------------------------------------------------ */
/* allocation records and table                                              */

static alloc_t *alloc_new(void)
{
    if (!G.free_allocs) {
        size_t bytes = 64 * KIB;
        alloc_t *blk = bdm_map(bytes);
        if (!blk)
            return NULL;
        for (size_t i = 0; i < bytes / sizeof(alloc_t); i++) {
            blk[i].next_free = G.free_allocs;
            G.free_allocs = &blk[i];
        }
    }
    alloc_t *a = G.free_allocs;
    G.free_allocs = a->next_free;
    memset(a, 0, sizeof *a);
    a->fd = -1;
    return a;
}

static void alloc_put(alloc_t *a)
{
    a->next_free = G.free_allocs;
    G.free_allocs = a;
}

/* Index of the last allocation with base <= addr, or -1. */
static long tab_idx(uintptr_t addr)
{
    long lo = 0, hi = (long)G.ntab - 1, ans = -1;
    while (lo <= hi) {
        long mid = (lo + hi) / 2;
        if (G.tab[mid]->base <= addr) {
            ans = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return ans;
}

alloc_t *bdm_lookup(uintptr_t addr)
{
    long i = tab_idx(addr);
    if (i < 0)
        return NULL;
    alloc_t *a = G.tab[i];
    return addr < a->base + a->len ? a : NULL;
}

static int tab_insert(alloc_t *a)
{
    if (G.ntab == G.tabcap) {
        size_t ncap = G.tabcap ? G.tabcap * 2 : 1024;
        void *nt;
        if (G.tab)
            nt = mremap(G.tab, G.tabcap * sizeof(alloc_t *), ncap * sizeof(alloc_t *),
                        MREMAP_MAYMOVE);
        else
            nt = mmap(NULL, ncap * sizeof(alloc_t *), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (nt == MAP_FAILED)
            return -ENOMEM;
        G.tab = nt;
        G.tabcap = ncap;
    }
    long i = tab_idx(a->base) + 1;
    memmove(&G.tab[i + 1], &G.tab[i], (G.ntab - (size_t)i) * sizeof(alloc_t *));
    G.tab[i] = a;
    G.ntab++;
    return 0;
}

static void tab_remove(long i)
{
    memmove(&G.tab[i], &G.tab[i + 1], (G.ntab - (size_t)i - 1) * sizeof(alloc_t *));
    G.ntab--;
}

/* First fit in the arena.  The first pass keeps as much free address space
 * behind every allocation as it is long (capped), so that realloc can
 * usually grow in place; the second pass takes any gap. */
#define GROW_ROOM_MAX (64ULL << 30)
static uintptr_t gap_find(size_t len, size_t align)
{
    uintptr_t end = G.arena_lo + G.arena_len;
    for (int pass = 0; pass < 2; pass++) {
        uintptr_t prev = G.arena_lo;
        size_t keep = 0;
        for (size_t i = 0; i <= G.ntab; i++) {
            uintptr_t next = i < G.ntab ? G.tab[i]->base : end;
            uintptr_t from = prev + (pass == 0 ? keep : 0);
            uintptr_t cand = (from + align - 1) & ~(uintptr_t)(align - 1);
            if (from >= prev && cand >= from && cand <= next && next - cand >= len)
                return cand;
            if (i < G.ntab) {
                prev = G.tab[i]->base + G.tab[i]->len;
                keep = G.tab[i]->len < GROW_ROOM_MAX ? G.tab[i]->len : GROW_ROOM_MAX;
            }
        }
    }
    return 0;
}

static int st_resize(alloc_t *a, size_t nsb)
{
    size_t need = round_up(nsb ? nsb : 1, G.page);
    if (need <= a->st_bytes)
        return 0;
    void *n;
    if (a->st)
        n = mremap(a->st, a->st_bytes, need, MREMAP_MAYMOVE);
    else
        n = mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (n == MAP_FAILED)
        return -ENOMEM;
    a->st = n;
    a->st_bytes = need;
    return 0;
}

/* G.predict: room for the hashes of nsb sbpages (pages are touched only for
 * sbpages that get written). */
static int hash_resize(alloc_t *a, size_t nsb)
{
    if (!G.predict)
        return 0;
    size_t need = round_up((nsb ? nsb : 1) * 2 * sizeof(uint64_t), G.page);
    if (need <= a->hash_bytes)
        return 0;
    void *n;
    if (a->hash)
        n = mremap(a->hash, a->hash_bytes, need, MREMAP_MAYMOVE);
    else
        n = mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
    if (n == MAP_FAILED)
        return -ENOMEM;
    a->hash = n;
    a->hash_bytes = need;
    return 0;
}

static void meta_free(alloc_t *a)
{
    if (a->st)
        munmap(a->st, a->st_bytes);
    if (a->hash)
        munmap(a->hash, a->hash_bytes);
    a->st = NULL;
    a->hash = NULL;
}

/* Write prediction: load sbpage i writable and untracked (SB_VERIFY). */
static inline int untracked_sb(const alloc_t *a, size_t i)
{
    return G.predict && !(a->st[i] & SB_COLD);
}

/* Sbpages i and j can be loaded by one request: same storage state, same
 * tracking. */
static inline int same_load(const alloc_t *a, size_t i, size_t j)
{
    return (a->st[i] & SB_DISK) == (a->st[j] & SB_DISK) && untracked_sb(a, i) == untracked_sb(a, j);
}

/* ------------------------------------------------------------------------ */
/* backing files                                                             */

static void backing_path(const alloc_t *a, char *out)
{
    char num[24];
    memcpy(out, G.dir, G.dirlen);
    size_t n = G.dirlen;
    memcpy(out + n, "/bdmem.", 7);
    n += 7;
    bdm_fmt_u64(num, (uint64_t)getpid());
    memcpy(out + n, num, strlen(num));
    n += strlen(num);
    out[n++] = '.';
    bdm_fmt_u64(num, a->id);
    memcpy(out + n, num, strlen(num) + 1);
}

int bdm_open_backing(alloc_t *a, int create)
{
    if (a->fd >= 0)
        return a->fd;
    if (!a->has_file && !create)
        return -ENOENT;
    char path[sizeof G.dir + 64];
    backing_path(a, path);
    int flags = O_RDWR | O_CLOEXEC;
    if (!a->has_file)
        flags |= O_CREAT | O_TRUNC;
    int fd = -1;
    if (G.direct_io) {
        fd = open(path, flags | O_DIRECT, 0600);
        if (fd < 0 && errno == EINVAL) {
            G.direct_io = 0; /* file system without O_DIRECT (e.g. some tmpfs) */
            G.st.direct_io = 0;
        }
    }
    if (fd < 0 && !G.direct_io)
        fd = open(path, flags, 0600);
    if (fd < 0)
        return -errno;
    a->has_file = 1;
    a->fd = fd;
    G.nfds++;
    return fd;
}

static void backing_done(alloc_t *a)
{
    if (a->fd >= 0 && G.nfds > MAX_OPEN_FDS && a->inflight == 0) {
        close(a->fd);
        a->fd = -1;
        G.nfds--;
    }
}

static void backing_drop_cache(int fd, off_t off, size_t len, int written)
{
    if (G.direct_io)
        return;
    if (written)
        sync_file_range(fd, off, (off_t)len,
                        SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                            SYNC_FILE_RANGE_WAIT_AFTER);
    posix_fadvise(fd, off, (off_t)len, POSIX_FADV_DONTNEED);
}

static void backing_remove(alloc_t *a)
{
    if (a->fd >= 0) {
        close(a->fd);
        a->fd = -1;
        G.nfds--;
    }
    if (a->has_file) {
        char path[sizeof G.dir + 64];
        backing_path(a, path);
        unlink(path);
        a->has_file = 0;
    }
}

/* ------------------------------------------------------------------------ */
/* accounting                                                                */

static size_t acct_target(const alloc_t *a)
{
    if (is_ar() && a->loaded)
        return a->len;
    return (a->nres + a->nload) * G.sbpage;
}

static void acct_add(alloc_t *a, size_t n)
{
    a->acct += n;
    G.st.resident += n;
    if (G.st.resident > G.st.peak_resident)
        G.st.peak_resident = G.st.resident;
}

/* Give back accounted bytes above the target; returns bytes to release. */
static size_t acct_trim(alloc_t *a)
{
    size_t t = acct_target(a);
    if (a->acct <= t)
        return 0;
    size_t ex = a->acct - t;
    a->acct = t;
    G.st.resident -= ex;
    return ex;
}

static void do_release(size_t n)
{
    if (n && G.release)
        G.release(G.ctx, n);
}

/* ------------------------------------------------------------------------ */
/* loading                                                                   */

static void degrade(alloc_t *a);

static int read_run(alloc_t *a, size_t s, size_t n, int in_fault)
{
    size_t sb = G.sbpage;
    int fd = bdm_open_backing(a, 0);
    if (fd < 0) {
        if (in_fault)
            bdm_die("cannot open backing file to load managed memory", -fd, n * sb);
        return fd;
    }
    uint64_t t0 = bdm_now_ns();
    off_t off = (off_t)(s * sb);
    size_t len = n * sb;
    uintptr_t dst = a->base + s * sb;
    int rc = 0;
    if (is_uffd()) {
        size_t piece = G.bounce_len;
        while (len > 0 && rc == 0) {
            size_t m = len < piece ? len : piece;
            rc = bdm_pread_all(fd, G.bounce, m, off);
            if (rc == 0) {
                bdm_uffd_install(dst, G.bounce, m);
                backing_drop_cache(fd, off, m, 0);
                dst += m;
                off += (off_t)m;
                len -= m;
            }
        }
    } else {
        rc = bdm_pread_all(fd, bdm_stage(dst), len, off);
        if (rc == 0)
            backing_drop_cache(fd, off, len, 0);
    }
    G.st.io_ns += bdm_now_ns() - t0;
    if (rc != 0) {
        if (in_fault)
            bdm_die("reading backing file failed while loading managed memory", -rc, n * sb);
        return rc;
    }
    G.st.bytes_read += n * sb;
    backing_done(a);
    return 0;
}

static void zero_run(alloc_t *a, size_t s, size_t n, int wp)
{
    if (!is_uffd())
        return; /* memfd holes read as zeros */
    uintptr_t dst = a->base + s * G.sbpage;
    size_t len = n * G.sbpage;
    while (len > 0) {
        size_t m = len < G.zeros_len ? len : G.zeros_len;
        bdm_uffd_install_mode(dst, G.zeros, m, wp);
        dst += m;
        len -= m;
    }
}

/* mprotect path: give sbpages [i, j) of a the protection prot.  Returns 0,
 * or 1 if the process ran out of mappings and a was degraded instead (all
 * of it resident, dirty and writable).  what names the step for the fatal
 * message of any other failure. */
static int prot_run(alloc_t *a, size_t i, size_t j, int prot, const char *what)
{
    size_t sb = G.sbpage;
    int rc = bdm_prot_set(a->base + i * sb, (j - i) * sb, prot);
    if (rc == -ENOMEM) {
        degrade(a);
        return 1;
    }
    if (rc)
        bdm_die(what, -rc, (j - i) * sb);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* I/O slots (workers in mem_util.c).  Everything here runs with the lock.   */

static void release_mem_or_die(alloc_t *a, size_t s0, size_t s1);
static void unprotect_range(alloc_t *a, size_t i0, size_t i1);

/* Apply a finished request to the sbpage state and free the slot. */
static void reap(io_slot_t *sl)
{
    alloc_t *a = sl->a;
    size_t sb = G.sbpage;
    int rc = sl->rc;
    G.st.io_ns += sl->ns;
    if (sl->op == IO_READ) {
        for (size_t x = sl->s; x < sl->s + sl->n; x++)
            a->st[x] &= (uint8_t)~SB_LOADING;
        a->nload -= sl->n;
        if (rc == -ENOMEM && !is_uffd()) {
            /* read, but mprotect ran out of mappings: degrade() makes it accessible */
            a->degrade_pending = 1;
            rc = 0;
        }
        if (rc == 0) {
            uint8_t f = (sl->flags & IO_UNTRACKED) ? SB_RES | SB_VERIFY : SB_RES;
            for (size_t x = sl->s; x < sl->s + sl->n; x++)
                a->st[x] |= f;
            a->nres += sl->n;
            G.st.bytes_read += sl->n * sb;
            backing_drop_cache(sl->fd, sl->off, sl->len, 0);
        } else {
            if (sl->flags & IO_DEMAND)
                bdm_die("reading backing file failed while loading managed memory", -rc, sl->len);
            if ((sl->flags & IO_OWNED) && !G.io_err)
                G.io_err = rc;
            /* read-ahead that failed is simply not resident; a demand load retries */
            G.rel_pending += acct_trim(a);
        }
    } else {
        if (rc == 0) {
            backing_drop_cache(sl->fd, sl->off, sl->len, 1);
            G.st.bytes_written += sl->len;
            for (size_t x = sl->s; x < sl->s + sl->n; x++)
                a->st[x] = (uint8_t)((a->st[x] & ~SB_DIRTY) | SB_DISK);
            release_mem_or_die(a, sl->s, sl->s + sl->n);
        } else if (!G.io_err) {
            G.io_err = rc;
        }
    }
    a->inflight--;
    if (a->inflight == 0)
        backing_done(a);
    __atomic_store_n(&sl->state, IO_FREE, __ATOMIC_RELEASE);
}

static void reap_done(void)
{
    for (int k = 0; k < IO_NSLOT; k++)
        if (__atomic_load_n(&G.io[k].state, __ATOMIC_ACQUIRE) == IO_DONE)
            reap(&G.io[k]);
}

static io_slot_t *slot_free(void)
{
    reap_done();
    for (int k = 0; k < IO_NSLOT; k++)
        if (__atomic_load_n(&G.io[k].state, __ATOMIC_ACQUIRE) == IO_FREE)
            return &G.io[k];
    return NULL;
}

/* A free slot, waiting for the oldest request if all are busy. */
static io_slot_t *slot_get(void)
{
    for (;;) {
        io_slot_t *sl = slot_free();
        if (sl)
            return sl;
        io_slot_t *old = NULL;
        for (int k = 0; k < IO_NSLOT; k++)
            if (!old || G.io[k].seq < old->seq)
                old = &G.io[k];
        bdm_io_wait(old);
    }
}

static void slot_go(io_slot_t *sl, alloc_t *a, int op, size_t s, size_t n, int flags, int fd)
{
    size_t sb = G.sbpage;
    uintptr_t addr = a->base + s * sb;
    sl->op = op;
    sl->fd = fd;
    sl->a = a;
    sl->s = s;
    sl->n = n;
    sl->flags = flags;
    sl->rc = 0;
    sl->len = n * sb;
    sl->off = (off_t)(s * sb);
    sl->seq = ++G.io_seq;
    if (op == IO_READ) {
        sl->install = addr;
        sl->buf = is_uffd() ? G.bounce + (size_t)(sl - G.io) * G.io_piece : bdm_stage(addr);
        for (size_t x = s; x < s + n; x++)
            a->st[x] |= SB_LOADING;
        a->nload += n;
    } else {
        sl->install = 0;
        sl->buf = is_uffd() ? (uint8_t *)addr : bdm_stage(addr);
    }
    a->inflight++;
    bdm_io_submit(sl);
}

/* Wait for every request touching sbpages [i0, i1) of a and reap it. */
static void drain_range(alloc_t *a, size_t i0, size_t i1)
{
    for (int k = 0; k < IO_NSLOT; k++) {
        io_slot_t *sl = &G.io[k];
        if (__atomic_load_n(&sl->state, __ATOMIC_ACQUIRE) != IO_FREE && sl->a == a && sl->s < i1 &&
            sl->s + sl->n > i0)
            bdm_io_wait(sl);
    }
    reap_done();
}

static void io_drain(void)
{
    for (int k = 0; k < IO_NSLOT; k++)
        bdm_io_wait(&G.io[k]);
    reap_done();
}

/* No I/O in flight: give the bounce buffers' memory back (it is not
 * accounted, so it must not stay resident while the rank is blocked). */
static void bounce_idle(void)
{
    if (is_uffd())
        madvise(G.bounce, G.bounce_len, MADV_DONTNEED);
}

static int any_loading(const alloc_t *a, size_t i0, size_t i1)
{
    if (a->nload == 0)
        return 0;
    for (size_t i = i0; i < i1; i++)
        if (a->st[i] & SB_LOADING)
            return 1;
    return 0;
}

/* Start reading the stored sbpages [s, e) of a, in requests of at most
 * G.io_piece bytes.  Returns 0 or -errno (dies instead for IO_DEMAND). */
static int submit_reads(alloc_t *a, size_t s, size_t e, int flags)
{
    a->inflight++; /* keeps the descriptor open while slots are reaped below */
    int fd = bdm_open_backing(a, 0);
    if (fd < 0) {
        a->inflight--;
        if (flags & IO_DEMAND)
            bdm_die("cannot open backing file to load managed memory", -fd, (e - s) * G.sbpage);
        return fd;
    }
    size_t per = G.io_piece / G.sbpage;
    while (s < e) {
        size_t n = 1;
        while (s + n < e && n < per && untracked_sb(a, s + n) == untracked_sb(a, s))
            n++;
        slot_go(slot_get(), a, IO_READ, s, n, flags | (untracked_sb(a, s) ? IO_UNTRACKED : 0), fd);
        s += n;
    }
    a->inflight--;
    return 0;
}

/* Start making the sbpages of [s0, s1) that are neither resident nor loading
 * resident: stored ones are read through the I/O slots (flags), the others
 * are filled with zeros at once (disk_only: left to a later fault).  The
 * caller waits for the reads if it must.  Returns 0 or -errno. */
static int load_range(alloc_t *a, size_t s0, size_t s1, int disk_only, int flags)
{
    int did = 0;
    for (size_t i = s0; i < s1;) {
        if (a->st[i] & (SB_RES | SB_LOADING)) {
            i++;
            continue;
        }
        uint8_t d = a->st[i] & SB_DISK;
        int un = untracked_sb(a, i);
        size_t j = i + 1;
        while (j < s1 && !(a->st[j] & (SB_RES | SB_LOADING)) && same_load(a, i, j))
            j++;
        if (d) {
            int rc = submit_reads(a, i, j, flags);
            if (rc)
                return rc;
            did = 1;
        } else if (!disk_only) {
            if (is_uffd())
                zero_run(a, i, j - i, !un);
            else if (prot_run(a, i, j, un ? PROT_READ | PROT_WRITE : PROT_READ,
                              "mprotect failed while loading managed memory"))
                return 0;
            for (size_t x = i; x < j; x++)
                a->st[x] |= un ? SB_RES | SB_VERIFY : SB_RES;
            a->nres += j - i;
            did = 1;
        }
        i = j;
    }
    if (did)
        G.st.loads++;
    return 0;
}

/* mprotect path: mark resident sbpages of [s0, s1) dirty and writable. */
static void mark_dirty(alloc_t *a, size_t s0, size_t s1)
{
    size_t sb = G.sbpage;
    size_t i = s0;
    /* SB_VERIFY sbpages are writable already; their hash decides */
    while (i < s1) {
        if ((a->st[i] & (SB_RES | SB_DIRTY | SB_VERIFY)) != SB_RES) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < s1 && (a->st[j] & (SB_RES | SB_DIRTY | SB_VERIFY)) == SB_RES)
            j++;
        if (prot_run(a, i, j, PROT_READ | PROT_WRITE, "mprotect failed while tracking writes"))
            return;
        /* map the run writable now: one call instead of a fault per 4 KiB page */
        madvise((void *)(a->base + i * sb), (j - i) * sb, MADV_POPULATE_WRITE);
        for (size_t x = i; x < j; x++)
            a->st[x] |= SB_DIRTY;
        i = j;
    }
}

/* mprotect path, write prediction: a write fault at sbpage i-1 hit tracked
 * memory.  A write rarely comes alone (a sweep writes the next sbpages
 * too), and each fault costs a signal and an mprotect (0.15x of memory
 * speed at 4 KiB sbpages), so the resident, clean, tracked sbpages that
 * follow it, up to one I/O piece, are made writable and untracked at once
 * (SB_VERIFY): their hash at unload decides whether they changed. */
static void write_ahead(alloc_t *a, size_t i)
{
    size_t sb = G.sbpage, end = i + G.io_piece / sb;
    if (end > a->nsb)
        end = a->nsb;
    size_t j = i;
    while (j < end && (a->st[j] & (SB_RES | SB_DIRTY | SB_VERIFY | SB_LOADING)) == SB_RES)
        j++;
    if (j == i)
        return;
    if (prot_run(a, i, j, PROT_READ | PROT_WRITE, "mprotect failed while tracking writes"))
        return;
    madvise((void *)(a->base + i * sb), (j - i) * sb, MADV_POPULATE_WRITE);
    for (size_t x = i; x < j; x++)
        a->st[x] |= SB_VERIFY;
}

/* The process ran out of VMAs (vm.max_map_count): make the whole allocation
 * resident, dirty and writable, which needs a single VMA.  Correct, but the
 * next unload writes all of it.  The bytes are accounted without asking. */
static void degrade(alloc_t *a)
{
    static int warned;
    drain_range(a, 0, a->nsb);
    a->degrade_pending = 0;
    if (!warned) {
        warned = 1;
        bdm_msg("bdmem: warning: mprotect ran out of memory mappings (vm.max_map_count); "
                "tracking of an allocation degraded to whole-allocation granularity\n");
    }
    for (size_t i = 0; i < a->nsb;) {
        if ((a->st[i] & (SB_RES | SB_DISK)) != SB_DISK) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < a->nsb && (a->st[j] & (SB_RES | SB_DISK)) == SB_DISK)
            j++;
        read_run(a, i, j - i, 1);
        i = j;
    }
    for (size_t i = 0; i < a->nsb; i++)
        a->st[i] |= SB_RES | SB_DIRTY;
    a->nres = a->nsb;
    if (mprotect((void *)a->base, a->len, PROT_READ | PROT_WRITE) != 0)
        bdm_die("mprotect failed even for a whole allocation; raise vm.max_map_count or use a "
                "larger sbpage",
                errno, a->len);
    if (a->acct < acct_target(a))
        acct_add(a, acct_target(a) - a->acct);
}

/* ------------------------------------------------------------------------ */
/* read-ahead                                                                */

/* LRLW: a fault at sbpage i.  Faults that follow the previous one's chunk
 * (or land inside what was read ahead for it) form a sequential stream whose
 * read-ahead window doubles up to G.ra_max_sb; any other fault ends it. */
static void ra_note(alloc_t *a, size_t i)
{
    if (!G.ra_max_sb)
        return;
    size_t csb = G.chunk_sb, c0 = i / csb * csb;
    int seq = a->ra_end && i >= a->ra_lo && i <= a->ra_end;
    if (seq) {
        size_t w = a->ra_win ? a->ra_win * 2 : csb;
        a->ra_win = w < G.ra_max_sb ? w : G.ra_max_sb;
        if (a->ra_next < c0)
            a->ra_next = c0;
    } else {
        a->ra_win = 0;
        a->ra_next = c0;
    }
    a->ra_lo = c0;
    size_t e = c0 + csb + a->ra_win;
    if (e > a->nsb)
        e = a->nsb;
    if (!seq || e > a->ra_end)
        a->ra_end = e;
}

/* Keep free I/O slots busy with the stream [ra_next, ra_end) of a: stored
 * sbpages are read (and installed by the workers), others are made resident
 * as zeros (mprotect path; the uffd path fills them when touched).  AR
 * allocations are accounted as a whole already; LRLW asks the budget first,
 * like any other load.  Never waits for I/O. */
static void pump(alloc_t *a)
{
    size_t sb = G.sbpage, per = G.io_piece / sb;
    if (G.pumping)
        return;
    G.pumping = 1;
    while (a->ra_next < a->ra_end && slot_free()) {
        size_t i = a->ra_next;
        while (i < a->ra_end && (a->st[i] & (SB_RES | SB_LOADING)))
            i++;
        a->ra_next = i;
        if (i >= a->ra_end)
            break;
        uint8_t d = a->st[i] & SB_DISK;
        int un = untracked_sb(a, i);
        size_t j = i + 1;
        while (j < a->ra_end && j - i < per && !(a->st[j] & (SB_RES | SB_LOADING)) &&
               same_load(a, i, j))
            j++;
        if (!d && (is_uffd() || !is_ar())) { /* nothing to read ahead: filled when touched */
            a->ra_next = j;
            continue;
        }
        if (!is_ar()) {
            size_t need = (j - i) * sb;
            if (G.acquire) {
                uintptr_t base = a->base;
                uint64_t id = a->id;
                UNLOCK();
                int rc = G.acquire(G.ctx, need);
                LOCK();
                alloc_t *b = bdm_lookup(base);
                if (rc != 0 || b != a ||
                    a->id != id) { /* refused (read-ahead is optional) or freed meanwhile */
                    if (rc == 0)
                        G.rel_pending += need;
                    if (b == a && a->id == id)
                        a->ra_end = a->ra_next;
                    break;
                }
                /* an unload or discard meanwhile ends or moves the stream */
                int changed = i < a->ra_next || j > a->ra_end;
                for (size_t x = i; x < j && !changed; x++)
                    if (a->st[x] & (SB_RES | SB_LOADING))
                        changed = 1;
                if (changed && (i < a->ra_next || j > a->ra_end)) {
                    G.rel_pending += need;
                    break;
                }
                acct_add(a, need);
                if (changed) {
                    G.rel_pending += acct_trim(a);
                    continue;
                }
            } else {
                acct_add(a, need);
            }
        }
        if (d) {
            if (submit_reads(a, i, j, 0) != 0) {
                a->ra_end = a->ra_next;
                G.rel_pending += acct_trim(a);
                break;
            }
        } else {
            if (prot_run(a, i, j, un ? PROT_READ | PROT_WRITE : PROT_READ,
                         "mprotect failed while loading managed memory"))
                break;
            for (size_t x = i; x < j; x++)
                a->st[x] |= un ? SB_RES | SB_VERIFY : SB_RES;
            a->nres += j - i;
        }
        a->ra_next = j;
    }
    G.pumping = 0;
}

static void pump_all(void)
{
    for (size_t k = 0; k < G.ntab && slot_free(); k++) {
        alloc_t *a = G.tab[k];
        if (a->ra_next < a->ra_end)
            pump(a);
        if (k >= G.ntab || G.tab[k] != a)
            break; /* the table changed while the lock was dropped */
    }
}

/* uffd handler thread: I/O slots finished. */
void bdm_io_progress(void)
{
    LOCK();
    if (G.active) {
        reap_done();
        pump_all();
    }
    UNLOCK();
}

/* Make [lo, hi) (inside one allocation) resident; for a fault, the chunk
 * around lo.  Returns 0, 1 (not managed), 2 (uffd fault: the data is being
 * read; installing it wakes the faulting thread) or -errno (prepare only). */
static int ensure(uintptr_t lo, uintptr_t hi, int write, int in_fault)
{
    size_t sb = G.sbpage;
    LOCK();
    reap_done();
    alloc_t *a = bdm_lookup(lo);
    if (!a) {
        UNLOCK();
        return 1;
    }
    if (in_fault)
        G.st.faults++;
    if (hi > a->base + a->len)
        hi = a->base + a->len;
    size_t i0 = (lo - a->base) / sb, i1 = (hi - 1 - a->base) / sb + 1;
    /* uffd faults need not wait: the worker's UFFDIO_COPY wakes the thread */
    int nowait = in_fault && is_uffd();
    if (in_fault && !is_ar())
        ra_note(a, i0);
    if (!nowait && any_loading(a, i0, i1))
        drain_range(a, i0, i1);
    if (a->degrade_pending)
        degrade(a);
    int was_res = (a->st[i0] & SB_RES) != 0;
    int all_res = 1;
    for (size_t i = i0; i < i1; i++)
        if (!(a->st[i] & (SB_RES | SB_LOADING))) {
            all_res = 0;
            break;
        }
    int whole = is_ar() && !a->loaded;
    if (!all_res || whole) {
        size_t s0 = i0, s1 = i1;
        if (in_fault) {
            /* AR allocations are accounted as a whole, so the never-stored
       * sbpages the uffd path fills lazily can be filled in bigger pieces
       * (each fault is a handler-thread round trip). */
            size_t csb = G.chunk_sb;
            if (is_uffd() && is_ar() && csb * sb < (2u << 20))
                csb = ((2u << 20) + sb - 1) / sb;
            s0 = i0 / csb * csb;
            s1 = s0 + csb;
            if (s1 < i1)
                s1 = i1;
            if (s1 > a->nsb)
                s1 = a->nsb;
        }
        /* accounting: ask before the bytes become resident */
        size_t target;
        if (is_ar()) {
            target = a->len;
        } else {
            size_t add = 0;
            for (size_t i = s0; i < s1; i++)
                if (!(a->st[i] & (SB_RES | SB_LOADING)))
                    add++;
            target = (a->nres + a->nload + add) * sb;
        }
        if (target > a->acct) {
            size_t need = target - a->acct;
            if (G.acquire) {
                uint64_t id = a->id;
                UNLOCK();
                int rc = G.acquire(G.ctx, need);
                if (rc != 0) {
                    if (in_fault)
                        bdm_die("memory budget refused loading managed memory (acquire failed)",
                                rc < 0 ? -rc : 0, need);
                    return rc < 0 ? rc : -ENOMEM;
                }
                LOCK();
                a = bdm_lookup(lo);
                if (!a || a->id != id) { /* freed meanwhile */
                    UNLOCK();
                    do_release(need);
                    return in_fault ? 0 : 1;
                }
                whole = is_ar() && !a->loaded;
            }
            acct_add(a, need);
        }
        if (whole || (in_fault && is_ar() && a->ra_next >= a->ra_end)) {
            /* AR: everything stored is read from here on, this chunk first (again
       * if bd_mem_idle() stopped the stream) */
            a->loaded = 1;
            a->ra_next = 0;
            a->ra_end = a->nsb;
        }
        if (is_uffd() && G.wp_sync && write == 1 && in_fault &&
            !(a->st[i0] & (SB_RES | SB_LOADING | SB_DISK))) {
            /* a never-stored sbpage being written: install it writable and dirty,
       * saving the write-protect fault that would follow at once */
            bdm_uffd_install_mode(a->base + i0 * sb, G.zeros, sb, 0);
            a->st[i0] |= SB_RES | SB_DIRTY;
            a->nres++;
        }
        G.io_err = 0;
        int rc = load_range(a, s0, s1, 0, in_fault ? IO_DEMAND : IO_OWNED);
        if (rc == 0 && !nowait) {
            drain_range(a, s0, s1);
            rc = G.io_err;
        }
        if (rc != 0) {
            G.rel_pending += acct_trim(a);
            UNLOCK();
            return rc;
        }
    }
    if (!nowait && any_loading(a, i0, i1))
        drain_range(a, i0, i1);
    if (a->degrade_pending)
        degrade(a);
    int pending = nowait && (a->st[i0] & SB_LOADING);
    if (is_uffd() && G.wp_sync && write == 1 && !in_fault)
        unprotect_range(a, i0, i1);
    if (!is_uffd()) {
        int wrote =
            write == 1 || (write == -1 && was_res); /* a fault on a readable page is a write */
        if (write == 1)
            mark_dirty(a, i0, i1);
        else if (wrote)
            mark_dirty(a, i0, i0 + 1);
        if (wrote && in_fault && G.predict && !a->degrade_pending)
            write_ahead(a, write == 1 ? i1 : i0 + 1);
    }
    G.rel_pending += acct_trim(a);
    if (a->ra_next < a->ra_end)
        pump(a); /* may drop the lock: a is not used after it */
    UNLOCK();
    return pending ? 2 : 0;
}

int bdm_fault(uintptr_t addr, int write)
{
    int rc = ensure(addr, addr + G.page, write, 1);
    return rc == 1 || rc == 2 ? rc : 0;
}

/* uffd sync mode: the first write to a clean resident sbpage.  Unprotect
 * the whole sbpage (its pages become writable, the unload's PAGEMAP_SCAN
 * sees them as written) and mark it dirty. */
int bdm_wp_fault(uintptr_t addr)
{
    LOCK();
    alloc_t *a = bdm_lookup(addr);
    if (!a) {
        UNLOCK();
        return 1;
    }
    G.st.faults++;
    size_t i = (addr - a->base) / G.sbpage;
    bdm_uffd_unprotect(a->base + i * G.sbpage, G.sbpage);
    if (a->st[i] & SB_RES)
        a->st[i] |= SB_DIRTY;
    UNLOCK();
    return 0;
}

/* uffd sync mode: [i0, i1) is resident and will be written by the kernel
 * (prepare for a syscall): unprotect it now. */
static void unprotect_range(alloc_t *a, size_t i0, size_t i1)
{
    bdm_uffd_unprotect(a->base + i0 * G.sbpage, (i1 - i0) * G.sbpage);
    for (size_t i = i0; i < i1; i++)
        if (a->st[i] & SB_RES)
            a->st[i] |= SB_DIRTY;
}

/* ------------------------------------------------------------------------ */
/* unloading                                                                 */

static int release_mem(alloc_t *a, size_t s0, size_t s1)
{
    uintptr_t addr = a->base + s0 * G.sbpage;
    size_t len = (s1 - s0) * G.sbpage;
    if (len == 0)
        return 0;
    if (is_uffd()) {
        if (madvise((void *)addr, len, MADV_DONTNEED) != 0)
            return -errno;
        return 0;
    }
    int rc = bdm_prot_set(addr, len, PROT_NONE);
    if (rc)
        return rc;
    return bdm_prot_punch(addr, len);
}

static void release_mem_or_die(alloc_t *a, size_t s0, size_t s1)
{
    int rc = release_mem(a, s0, s1);
    if (rc)
        bdm_die("releasing memory of an unloaded allocation failed", -rc, (s1 - s0) * G.sbpage);
    for (size_t x = s0; x < s1; x++)
        a->st[x] &= (uint8_t) ~(SB_RES | SB_DIRTY | SB_VERIFY);
    a->nres -= s1 - s0;
}

/* Unload: decide whether resident sbpage i must be written, and keep the
 * prediction and the stored hash up to date (G.predict).  An untracked
 * sbpage is dirty if its hash differs from its stored copy's (or, never
 * stored, from that of zeros); a dirty sbpage gets the hash of what is about
 * to be written.  If that write fails, the sbpage stays SB_DIRTY, so the
 * stale hash is never trusted.  Called once per sbpage, just before the
 * write-back loop looks at it, so hashing overlaps the writes in flight. */
static void classify(alloc_t *a, size_t i)
{
    uint8_t f = a->st[i];
    if (!G.predict || !(f & SB_RES))
        return;
    uint64_t h[2];
    uint64_t *old = a->hash + 2 * i;
    if (f & (SB_DIRTY | SB_VERIFY)) {
        uint64_t t0 = bdm_now_ns();
        bdm_hash((const void *)(a->base + i * G.sbpage), G.sbpage, h);
        G.st.hash_ns += bdm_now_ns() - t0;
        G.st.bytes_hashed += G.sbpage;
    }
    if (!(f & SB_DIRTY) && (f & SB_VERIFY)) {
        int same = (f & SB_DISK) ? h[0] == old[0] && h[1] == old[1] : (h[0] | h[1]) == 0;
        if (same) {
            G.st.verified_clean += G.sbpage;
            a->st[i] = (uint8_t)((f & ~SB_VERIFY) | SB_COLD);
            return;
        }
        f |= SB_DIRTY;
    }
    if (f & SB_DIRTY) {
        old[0] = h[0];
        old[1] = h[1];
        a->st[i] = (uint8_t)(f & ~(SB_VERIFY | SB_COLD));
    } else {
        a->st[i] = (uint8_t)(f | SB_COLD); /* tracked and not written */
    }
}

/* Write dirty sbpages and release all memory of a.  Adds the bytes to give
 * back to *rel.  Clean runs are released at once; dirty runs are written
 * through the I/O slots (IO_NSLOT requests of at most G.io_piece bytes in
 * flight) and each piece is released as soon as it is on storage.  On error
 * what was not written stays resident and dirty.  No I/O is in flight. */
static int unload_one(alloc_t *a, size_t *rel)
{
    size_t sb = G.sbpage, per = G.io_piece / sb;
    a->ra_lo = a->ra_next = a->ra_end = a->ra_win = 0;
    if (a->nres == 0 && !a->loaded) {
        *rel += a->acct;
        G.st.resident -= a->acct;
        a->acct = 0;
        return 0;
    }
    if (is_uffd()) {
        int rc = bdm_uffd_scan_dirty(a);
        if (rc)
            return rc;
    }
    G.io_err = 0;
    int rc = 0, fd = -1;
    size_t cl = 0; /* sbpages [0, cl) are classified */
    a->inflight++; /* keeps the descriptor open while slots are reaped */
    for (size_t i = 0; i < a->nsb && !G.io_err;) {
        if (i >= cl)
            classify(a, cl++);
        uint8_t f = a->st[i] & (SB_RES | SB_DIRTY);
        if (!(f & SB_RES)) {
            i++;
            continue;
        }
        size_t j = i + 1;
        for (; j < a->nsb && (!(f & SB_DIRTY) || j - i < per); j++) {
            if (j >= cl)
                classify(a, cl++);
            if ((a->st[j] & (SB_RES | SB_DIRTY)) != f)
                break;
        }
        if (!(f & SB_DIRTY)) {
            release_mem_or_die(a, i, j);
        } else {
            if (fd < 0)
                fd = bdm_open_backing(a, 1);
            if (fd < 0) {
                rc = fd;
                break;
            }
            slot_go(slot_get(), a, IO_WRITE, i, j - i, IO_OWNED, fd);
        }
        i = j;
    }
    drain_range(a, 0, a->nsb);
    a->inflight--;
    if (!rc)
        rc = G.io_err;
    if (rc) {
        /* what was not written must be known dirty: the caller reports it as
     * the data still to store, and a later unload writes it */
        while (cl < a->nsb)
            classify(a, cl++);
        G.rel_pending += acct_trim(a);
        if (a->inflight == 0)
            backing_done(a);
        return rc;
    }
    a->nres = 0;
    a->loaded = 0;
    *rel += a->acct;
    G.st.resident -= a->acct;
    a->acct = 0;
    G.st.unloads++;
    backing_done(a);
    return 0;
}

/* Free everything that belongs to a (memory, file, record); caller removes it
 * from the table.  Returns accounted bytes to release. */
static size_t destroy(alloc_t *a)
{
    if (is_uffd()) {
        bdm_uffd_unmap(a->base, a->len);
    } else {
        bdm_prot_set(a->base, a->len, PROT_NONE);
        bdm_prot_punch(a->base, a->len);
    }
    backing_remove(a);
    size_t rel = a->acct;
    G.st.resident -= a->acct;
    G.st.nallocs--;
    G.st.managed_bytes -= a->len;
    meta_free(a);
    alloc_put(a);
    return rel;
}

/* ------------------------------------------------------------------------ */
/* public API                                                                */

static int reserve_arena(size_t want)
{
    if (__atomic_load_n(&G.arena_len, __ATOMIC_ACQUIRE)) {
        /* kept from an earlier init; make sure it is a plain reservation */
        if (mmap((void *)G.arena_lo, G.arena_len, PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0) == MAP_FAILED)
            return -errno;
        return 0;
    }
    size_t sz = want ? want : DEFAULT_ARENA;
    size_t min = want ? want : MIN_ARENA;
    for (; sz >= min; sz /= 2) {
        void *p = mmap(NULL, sz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p != MAP_FAILED) {
            G.arena_lo = (uintptr_t)p;
            __atomic_store_n(&G.arena_len, sz, __ATOMIC_RELEASE);
            return 0;
        }
    }
    return -ENOMEM;
}

int bd_mem_init(const bd_mem_config_t *cfg)
{
    if (!cfg || !cfg->dir || !cfg->dir[0])
        return -EINVAL;
    LOCK();
    if (G.active) {
        UNLOCK();
        return -EALREADY;
    }
    int rc = 0;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t sbpage = cfg->sbpage ? cfg->sbpage : 64 * KIB;
    size_t chunk = cfg->chunk ? cfg->chunk : 64 * KIB;
    size_t dirlen = strlen(cfg->dir);
    struct stat sst;
    if (sbpage % page != 0 || dirlen + 64 >= sizeof G.dir || cfg->strategy > BD_MEM_LRLW ||
        cfg->track > BD_MEM_TRACK_MPROTECT || cfg->wp > BD_MEM_WP_SYNC) {
        rc = -EINVAL;
        goto out;
    }
    if (stat(cfg->dir, &sst) != 0) {
        rc = -errno;
        goto out;
    }
    if (!S_ISDIR(sst.st_mode)) {
        rc = -ENOTDIR;
        goto out;
    }
    if (access(cfg->dir, W_OK | X_OK) != 0) {
        rc = -errno;
        goto out;
    }
    if (chunk < 64 * KIB)
        chunk = 64 * KIB;
    G.page = page;
    G.sbpage = sbpage;
    G.threshold = cfg->threshold ? cfg->threshold : 1024 * KIB;
    G.chunk_sb = (chunk + sbpage - 1) / sbpage;
    G.strategy = cfg->strategy;
    memcpy(G.dir, cfg->dir, dirlen + 1);
    G.label[0] = 0;
    for (size_t k = 0; cfg->label && cfg->label[k] && k + 1 < sizeof G.label; k++) {
        G.label[k] = cfg->label[k];
        G.label[k + 1] = 0;
    }
    while (dirlen > 1 && G.dir[dirlen - 1] == '/')
        G.dir[--dirlen] = 0;
    G.dirlen = dirlen;
    G.acquire = cfg->acquire;
    G.release = cfg->release;
    G.ctx = cfg->ctx;
    G.direct_io = 1;
    G.nfds = 0;
    memset(&G.st, 0, sizeof G.st);
    G.st.direct_io = 1;

    int track = cfg->track;

    rc = reserve_arena(cfg->arena);
    if (rc)
        goto out;
    /* I/O requests of 1 MiB (at least one sbpage); on uffd each slot has its
   * own bounce buffer of that size */
    G.io_piece = round_up(1024 * KIB, sbpage);
    G.bounce_len = IO_NSLOT * G.io_piece;
    G.bounce = bdm_map(G.bounce_len);
    if (!G.bounce) {
        rc = -ENOMEM;
        goto out;
    }
    {
        size_t ra = cfg->readahead ? cfg->readahead : 8192 * KIB;
        G.ra_max_sb = ra == (size_t)-1 ? 0 : ra / sbpage;
    }
    /* uffd write tracking: asynchronous (the kernel, one fault per 4 KiB
   * page) or synchronous (the handler, one round trip per sbpage); the
   * latter is cheaper only from 1 MiB sbpages up, where one round trip
   * replaces 256 faults (docs/performance.md) */
    G.wp_sync = cfg->wp == BD_MEM_WP_AUTO ? sbpage >= 1024 * KIB : cfg->wp == BD_MEM_WP_SYNC;
    {
        uint64_t key[2] = {0, 0};
        /* the raw call: the lock is held and the syscall wrappers must not run */
        if (syscall(SYS_getrandom, key, sizeof key, 1 /* GRND_NONBLOCK */) != (long)sizeof key) {
            /* no entropy yet: the bound needs a key independent of the data,
       * not a secret one */
            key[0] = bdm_now_ns() ^ ((uint64_t)getpid() << 32);
            key[1] = (uint64_t)(uintptr_t)&key ^ 0x9E3779B97F4A7C15ULL;
        }
        bdm_hash_setkey(key);
        G.predict = cfg->predict > 0 || (cfg->predict == 0 && bdm_hash_fast() > 0);
        G.st.predict = G.predict;
    }
    G.io_evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (G.io_evfd < 0) {
        rc = -errno;
        goto fail_bounce;
    }
    G.track = BD_MEM_TRACK_MPROTECT;
    if (track != BD_MEM_TRACK_MPROTECT) {
        rc = bdm_uffd_setup(track == BD_MEM_TRACK_UFFD);
        if (rc == 0) {
            G.track = BD_MEM_TRACK_UFFD;
        } else if (track == BD_MEM_TRACK_UFFD) {
            rc = -ENOTSUP;
            goto fail_bounce;
        }
    }
    if (G.track == BD_MEM_TRACK_MPROTECT) {
        close(G.io_evfd); /* completions are reaped at faults, nobody polls */
        G.io_evfd = -1;
        rc = bdm_prot_setup();
        if (rc)
            goto fail_bounce;
    }
    rc = bdm_io_start();
    if (rc) {
        if (G.track == BD_MEM_TRACK_UFFD)
            bdm_uffd_teardown();
        else
            bdm_prot_teardown();
        goto fail_bounce;
    }
    G.st.track = G.track;
    G.st.kernel_faults = G.kernel_faults;
    G.next_id = 1;
    static int atfork_done;
    if (!atfork_done && pthread_atfork(NULL, NULL, atfork_child) == 0)
        atfork_done = 1;
    __atomic_store_n(&G.active, 1, __ATOMIC_RELEASE);
    UNLOCK();
    return 0;

fail_bounce:
    if (G.io_evfd >= 0)
        close(G.io_evfd);
    G.io_evfd = -1;
    bdm_unmap(G.bounce, G.bounce_len);
    G.bounce = NULL;
out:
    UNLOCK();
    return rc;
}

void bd_mem_fini(void)
{
    LOCK();
    if (!G.active) {
        UNLOCK();
        return;
    }
    __atomic_store_n(&G.active, 0, __ATOMIC_RELEASE);
    size_t rel = 0;
    io_drain();
    while (G.ntab > 0) {
        alloc_t *a = G.tab[G.ntab - 1];
        G.ntab--;
        rel += destroy(a);
    }
    UNLOCK();
    bdm_io_stop();
    if (G.track == BD_MEM_TRACK_UFFD)
        bdm_uffd_teardown();
    else
        bdm_prot_teardown();
    LOCK();
    if (G.io_evfd >= 0)
        close(G.io_evfd);
    G.io_evfd = -1;
    /* keep the address range reserved so that stale pointers stay ours */
    mmap((void *)G.arena_lo, G.arena_len, PROT_NONE,
         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
    bdm_unmap(G.bounce, G.bounce_len);
    G.bounce = NULL;
    UNLOCK();
    do_release(rel);
}

int bd_mem_active(void) { return __atomic_load_n(&G.active, __ATOMIC_ACQUIRE); }

/* A forked child shares the parent's userfaultfd and (mprotect path) memfd:
 * it must not use the manager.  Managed pointers stay "ours" in the child, so
 * free() of them is a no-op there. */
static void atfork_child(void) { __atomic_store_n(&G.active, 0, __ATOMIC_RELAXED); }

size_t bd_mem_threshold(void) { return bd_mem_active() ? G.threshold : (size_t)-1; }

int bd_mem_owns(const void *p)
{
    size_t len = __atomic_load_n(&G.arena_len, __ATOMIC_ACQUIRE);
    return (uintptr_t)p - G.arena_lo < len;
}

int bd_mem_overlaps(const void *p, size_t len)
{
    if (len == 0 || !bd_mem_active())
        return 0;
    uintptr_t lo = (uintptr_t)p, hi = lo + len;
    if (hi < lo)
        hi = UINTPTR_MAX; /* a bogus length still must not wrap */
    return lo < G.arena_lo + G.arena_len && hi > G.arena_lo;
}

void *bd_mem_alloc(size_t size, size_t align)
{
    if (!bd_mem_active()) {
        errno = EINVAL;
        return NULL;
    }
    if (align & (align - 1)) {
        errno = EINVAL;
        return NULL;
    }
    if (size == 0)
        size = 1;
    if (align < G.sbpage)
        align = G.sbpage;
    size_t len = round_up(size, G.sbpage);
    if (len < size) {
        errno = ENOMEM;
        return NULL;
    }
    LOCK();
    uintptr_t base = gap_find(len, align);
    alloc_t *a = NULL;
    int rc = base ? 0 : -ENOMEM;
    if (rc == 0 && is_uffd())
        rc = bdm_uffd_map(base, len);
    if (rc == 0) {
        a = alloc_new();
        if (!a)
            rc = -ENOMEM;
    }
    if (rc == 0) {
        a->base = base;
        a->size = size;
        a->len = len;
        a->nsb = len / G.sbpage;
        a->id = G.next_id++;
        rc = st_resize(a, a->nsb);
        if (rc == 0)
            rc = hash_resize(a, a->nsb);
        if (rc == 0)
            rc = tab_insert(a);
        if (rc != 0) {
            meta_free(a);
            alloc_put(a);
            if (is_uffd())
                bdm_uffd_unmap(base, len);
        }
    }
    if (rc == 0) {
        G.st.nallocs++;
        G.st.managed_bytes += len;
    }
    UNLOCK();
    if (rc != 0) {
        errno = -rc;
        return NULL;
    }
    return (void *)base;
}

static void bad_pointer(const char *fn, const void *p)
{
    char msg[200], hex[24];
    size_t n = 0;
    const char *parts[4] = {
        fn, ": invalid pointer ", hex,
        " (inside the managed arena but not the start of a live allocation: double free or "
        "interior pointer)"};
    bdm_fmt_hex(hex, (uint64_t)(uintptr_t)p);
    for (int i = 0; i < 4; i++) {
        size_t l = strlen(parts[i]);
        if (n + l >= sizeof msg)
            l = sizeof msg - 1 - n;
        memcpy(msg + n, parts[i], l);
        n += l;
    }
    msg[n] = 0;
    UNLOCK();
    bdm_die(msg, 0, 0);
}

/* Locked: the allocation starting exactly at p, or abort. */
static long find_exact(const char *fn, const void *p)
{
    long i = tab_idx((uintptr_t)p);
    if (i < 0 || G.tab[i]->base != (uintptr_t)p)
        bad_pointer(fn, p);
    return i;
}

void bd_mem_free(void *p)
{
    if (!p)
        return;
    if (!bd_mem_active()) {
        if (bd_mem_owns(p))
            return; /* after bd_mem_fini everything is gone already */
        bdm_die("bd_mem_free: pointer was not allocated by the memory manager", 0, 0);
    }
    LOCK();
    if (!bd_mem_owns(p))
        bad_pointer("bd_mem_free", p);
    io_drain();
    long i = find_exact("bd_mem_free", p);
    alloc_t *a = G.tab[i];
    tab_remove(i);
    size_t rel = destroy(a);
    if (G.ntab == 0)
        bounce_idle();
    UNLOCK();
    do_release(rel);
}

size_t bd_mem_usable_size(const void *p)
{
    if (!bd_mem_active() || !bd_mem_owns(p))
        return 0;
    LOCK();
    alloc_t *a = bdm_lookup((uintptr_t)p);
    size_t n = (a && a->base == (uintptr_t)p) ? a->len : 0;
    UNLOCK();
    return n;
}

/* Copy the first n bytes of a managed range to dst, skipping sbpages that
 * hold no data (neither resident nor stored: they read as zeros and dst is
 * fresh memory).  Runs without the lock: the copy itself faults. */
static void copy_data(uintptr_t dst, alloc_t *a, size_t n)
{
    size_t sb = G.sbpage;
    size_t ns = (n + sb - 1) / sb;
    for (size_t i = 0; i < ns;) {
        uint8_t s = __atomic_load_n(&a->st[i], __ATOMIC_RELAXED);
        size_t j = i + 1;
        int has = (s & (SB_RES | SB_DISK)) != 0;
        while (j < ns &&
               ((__atomic_load_n(&a->st[j], __ATOMIC_RELAXED) & (SB_RES | SB_DISK)) != 0) == has)
            j++;
        if (has) {
            size_t off = i * sb, end = j * sb < n ? j * sb : n;
            memcpy((void *)(dst + off), (const void *)(a->base + off), end - off);
        }
        i = j;
    }
}

void *bd_mem_realloc(void *p, size_t size)
{
    if (!p)
        return bd_mem_alloc(size, 0);
    if (size == 0) {
        bd_mem_free(p);
        return NULL;
    }
    if (!bd_mem_active()) {
        errno = EINVAL;
        return NULL;
    }
    size_t sb = G.sbpage;
    size_t newlen = round_up(size, sb);
    if (newlen < size) {
        errno = ENOMEM;
        return NULL;
    }
    LOCK();
    if (!bd_mem_owns(p))
        bad_pointer("bd_mem_realloc", p);
    io_drain();
    long idx = find_exact("bd_mem_realloc", p);
    alloc_t *a = G.tab[idx];
    if (newlen == a->len) {
        a->size = size;
        UNLOCK();
        return p;
    }
    if (newlen < a->len) { /* shrink in place */
        size_t ns = newlen / sb;
        for (size_t i = ns; i < a->nsb; i++)
            if (a->st[i] & SB_RES)
                a->nres--;
        if (is_uffd()) {
            bdm_uffd_unmap(a->base + newlen, a->len - newlen);
        } else {
            bdm_prot_set(a->base + newlen, a->len - newlen, PROT_NONE);
            bdm_prot_punch(a->base + newlen, a->len - newlen);
        }
        memset(a->st + ns, 0, a->nsb - ns);
        if (a->ra_end > ns)
            a->ra_end = ns;
        if (a->ra_next > ns)
            a->ra_next = ns;
        if (a->has_file) {
            int fd = bdm_open_backing(a, 0);
            if (fd >= 0) {
                if (ftruncate(fd, (off_t)newlen) != 0) { /* only wastes disk space */
                }
                backing_done(a);
            }
        }
        G.st.managed_bytes -= a->len - newlen;
        a->len = newlen;
        a->nsb = ns;
        a->size = size;
        size_t ex = acct_trim(a);
        UNLOCK();
        do_release(ex);
        return p;
    }
    /* grow in place if the address space behind is free */
    uintptr_t next = (size_t)idx + 1 < G.ntab ? G.tab[idx + 1]->base : G.arena_lo + G.arena_len;
    if (next - a->base >= newlen) {
        int rc = st_resize(a, newlen / sb);
        if (rc == 0)
            rc = hash_resize(a, newlen / sb);
        if (rc == 0 && is_uffd())
            rc = bdm_uffd_map(a->base + a->len, newlen - a->len);
        if (rc == 0) {
            size_t ns = newlen / sb;
            memset(a->st + a->nsb, 0, ns - a->nsb);
            G.st.managed_bytes += newlen - a->len;
            a->nsb = ns;
            a->len = newlen;
            a->size = size;
            /* AR: the new part is accounted when it is first touched */
            a->loaded = 0;
            UNLOCK();
            return p;
        }
    }
    size_t oldsize = a->size;
    UNLOCK();
    void *q = bd_mem_alloc(size, 0);
    if (!q)
        return NULL;
    copy_data((uintptr_t)q, a, oldsize < size ? oldsize : size);
    bd_mem_free(p);
    return q;
}

int bd_mem_unload_all(void)
{
    if (!bd_mem_active())
        return 0;
    size_t rel = 0;
    int first = 0;
    LOCK();
    io_drain();
    for (size_t i = 0; i < G.ntab; i++) {
        int rc = unload_one(G.tab[i], &rel);
        if (rc && !first)
            first = rc;
    }
    /* What a failed unload left dirty is what it still needed to store: the
   * runtime names it in its message (storage full or unwritable). */
    uint64_t left = 0;
    if (first)
        for (size_t i = 0; i < G.ntab; i++)
            for (size_t s = 0; s < G.tab[i]->nsb; s++)
                if (G.tab[i]->st[s] & SB_DIRTY)
                    left += G.sbpage;
    G.st.unwritten = left;
    bounce_idle();
    UNLOCK();
    do_release(rel);
    return first;
}

int bd_mem_block_point(void)
{
    if (bd_mem_active() && G.strategy == BD_MEM_ARAW)
        return bd_mem_unload_all();
    return 0;
}

/* The bounce buffers are not accounted in the budget: a rank about to wait
 * gives their memory back, so that only running ranks hold it (not only
 * the ones told to unload).  Skipped while I/O is in flight (the next unload
 * does it then); cheap when they hold nothing. */
void bd_mem_idle(void)
{
    if (!bd_mem_active() || !is_uffd())
        return;
    LOCK();
    /* Stop background loading (AR streams, LRLW read-ahead): it would go on
   * through the bounce buffers while the rank waits, and nothing would give
   * them back afterwards.  What it has not read is loaded when touched (a
   * fault restarts an AR stream).  At most IO_NSLOT requests are waited for. */
    for (size_t k = 0; k < G.ntab; k++)
        G.tab[k]->ra_end = G.tab[k]->ra_next;
    io_drain();
    bounce_idle();
    UNLOCK();
}

int bd_mem_discard(void *addr, size_t len)
{
    if (!bd_mem_active() || len == 0)
        return 0;
    uintptr_t lo = (uintptr_t)addr, hi = lo + len;
    if (hi < lo)
        return -EINVAL;
    size_t sb = G.sbpage;
    size_t rel = 0;
    int first = 0;
    LOCK();
    io_drain();
    long i = tab_idx(lo);
    if (i < 0)
        i = 0;
    for (; (size_t)i < G.ntab && G.tab[i]->base < hi; i++) {
        alloc_t *a = G.tab[i];
        uintptr_t l = lo > a->base ? lo : a->base;
        uintptr_t h = hi < a->base + a->len ? hi : a->base + a->len;
        if (l >= h)
            continue;
        size_t s0 = (l - a->base + sb - 1) / sb, s1 = (h - a->base) / sb;
        for (size_t s = s0; s < s1;) {
            uint8_t f = a->st[s] & (SB_RES | SB_DISK);
            size_t e = s + 1;
            while (e < s1 && (a->st[e] & (SB_RES | SB_DISK)) == f)
                e++;
            if (f & SB_RES) {
                int rc = release_mem(a, s, e);
                if (rc && !first)
                    first = rc;
                a->nres -= e - s;
            }
            if ((f & SB_DISK) && a->has_file) {
                int fd = bdm_open_backing(a, 0);
                if (fd >= 0)
                    fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)(s * sb),
                              (off_t)((e - s) * sb));
            }
            for (size_t x = s; x < e; x++)
                a->st[x] = 0;
            s = e;
        }
        if (a->has_file)
            backing_done(a);
        rel += acct_trim(a);
    }
    UNLOCK();
    do_release(rel);
    return first;
}

int bd_mem_prepare(const void *addr, size_t len, int for_write)
{
    if (!bd_mem_active() || len == 0)
        return 0;
    uintptr_t cur = (uintptr_t)addr, end = cur + len;
    if (end < cur)
        return -EINVAL;
    while (cur < end) {
        LOCK();
        long i = tab_idx(cur);
        alloc_t *a = NULL;
        if (i >= 0 && cur < G.tab[i]->base + G.tab[i]->len)
            a = G.tab[i];
        else if ((size_t)(i + 1) < G.ntab && G.tab[i + 1]->base < end)
            a = G.tab[i + 1];
        uintptr_t l = 0, h = 0;
        if (a) {
            l = cur > a->base ? cur : a->base;
            h = end < a->base + a->len ? end : a->base + a->len;
        }
        UNLOCK();
        if (!a)
            break;
        int rc = ensure(l, h, for_write ? 1 : 0, 0);
        if (rc < 0)
            return rc;
        cur = h;
    }
    return 0;
}

size_t bd_mem_resident_bytes(void)
{
    LOCK();
    size_t r = G.st.resident;
    UNLOCK();
    return r;
}

void bd_mem_stats(bd_mem_stats_t *out)
{
    LOCK();
    if (G.active)
        io_drain(); /* count the I/O in flight */
    *out = G.st;
    UNLOCK();
}
