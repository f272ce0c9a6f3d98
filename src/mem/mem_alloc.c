/* mem_alloc.c - SBMA allocation records and table, per-allocation
 * metadata, backing files, and the malloc path (bd_mem_alloc, free,
 * realloc, usable_size).  Locking as in bd_mem.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bd_fault.h"
#include "bd_iowatch.h"
#include "mem_internal.h"

#define G bdm_g
#define MAX_OPEN_FDS 256
#define KIB 1024UL

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

void bdm_alloc_put(alloc_t *a)
{
    a->next_free = G.free_allocs;
    G.free_allocs = a;
}

/* Index of the last allocation with base <= addr, or -1. */
long bdm_tab_idx(uintptr_t addr)
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
    long i = bdm_tab_idx(addr);
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
    long i = bdm_tab_idx(a->base) + 1;
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
    size_t need = bdm_round_up(nsb ? nsb : 1, G.page);
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

/* Room for at least need bytes in *p, an anonymous mapping of *bytes
 * (none yet if NULL): grown, page-rounded, by mremap (contents kept, new
 * bytes zero).  Returns the mapping (p itself when it is large enough) or
 * NULL. */
void *bdm_meta_grow(void *p, size_t *bytes, size_t need)
{
    need = bdm_round_up(need, G.page);
    if (need <= *bytes)
        return p;
    void *n = p ? mremap(p, *bytes, need, MREMAP_MAYMOVE)
                : mmap(NULL, need, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (n == MAP_FAILED)
        return NULL;
    *bytes = need;
    return n;
}

/* G.predict: room for the hashes of nsb sbpages (pages are touched only for
 * sbpages that get written). */
static int hash_resize(alloc_t *a, size_t nsb)
{
    if (!G.predict && !G.dd) /* deduplication indexes stored copies by hash */
        return 0;
    void *n = bdm_meta_grow(a->hash, &a->hash_bytes, (nsb ? nsb : 1) * 2 * sizeof(uint64_t));
    if (!n)
        return -ENOMEM;
    a->hash = n;
    return 0;
}

/* G.verify: room for the CRC32C of nsb sbpages (touched only for sbpages
 * that get written). */
static int crc_resize(alloc_t *a, size_t nsb)
{
    if (!G.verify)
        return 0;
    void *n = bdm_meta_grow(a->crc, &a->crc_bytes, (nsb ? nsb : 1) * sizeof(uint32_t));
    if (!n)
        return -ENOMEM;
    a->crc = n;
    return 0;
}

void bdm_meta_free(alloc_t *a)
{
    if (a->st)
        munmap(a->st, a->st_bytes);
    if (a->hash)
        munmap(a->hash, a->hash_bytes);
    if (a->slot)
        munmap(a->slot, a->slot_bytes);
    if (a->crc)
        munmap(a->crc, a->crc_bytes);
    if (a->rm)
        munmap(a->rm, a->rm_bytes);
    a->rm = NULL;
    a->rm_bytes = 0;
    a->nrm = 0;
    if (a->pc)
        munmap(a->pc, a->pc_bytes);
    a->pc = NULL;
    a->pc_bytes = 0;
    a->st = NULL;
    a->hash = NULL;
    a->slot = NULL;
    a->slot_bytes = 0;
    a->nslot = 0;
    a->crc = NULL;
}

/* ------------------------------------------------------------------------ */
/* backing files                                                             */

void bdm_backing_path(const alloc_t *a, char *out)
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
    bdm_backing_path(a, path);
    /* never through a symlink, and a new file is ours alone (O_EXCL), even
     * in a directory others could write to */
    int flags = O_RDWR | O_CLOEXEC | O_NOFOLLOW;
    if (!a->has_file)
        flags |= O_CREAT | O_EXCL;
    int fd = -1;
    if (G.direct_io) {
        fd = BD_IO_SYS(BD_FAULT_MEM_OPEN, open(path, flags | O_DIRECT, 0600));
        if (fd < 0 && errno == EINVAL) {
            G.direct_io = 0; /* file system without O_DIRECT (e.g. some tmpfs) */
            G.st.direct_io = 0;
            if (flags & O_EXCL)
                unlink(path); /* the refused open may have created it (O_EXCL: ours) */
        }
    }
    if (fd < 0 && !G.direct_io)
        fd = BD_IO_SYS(BD_FAULT_MEM_OPEN, open(path, flags, 0600));
    if (fd < 0) {
        G.st.err_call = "open";
        return -errno;
    }
    a->has_file = 1;
    a->fd = fd;
    G.nfds++;
    return fd;
}

void bdm_backing_done(alloc_t *a)
{
    if (a->fd >= 0 && G.nfds > MAX_OPEN_FDS && a->inflight == 0) {
        close(a->fd);
        a->fd = -1;
        G.nfds--;
    }
}

void bdm_backing_drop_cache(int fd, off_t off, size_t len, int written)
{
    if (G.direct_io)
        return;
    if (written)
        sync_file_range(fd, off, (off_t)len,
                        SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                            SYNC_FILE_RANGE_WAIT_AFTER);
    posix_fadvise(fd, off, (off_t)len, POSIX_FADV_DONTNEED);
}

void bdm_backing_remove(alloc_t *a)
{
    if (a->fd >= 0) {
        close(a->fd);
        a->fd = -1;
        G.nfds--;
    }
    if (a->has_file) {
        char path[sizeof G.dir + 64];
        bdm_backing_path(a, path);
        unlink(path);
        a->has_file = 0;
    }
}

/* ------------------------------------------------------------------------ */
/* malloc path                                                               */

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
    size_t len = bdm_round_up(size, G.sbpage);
    if (len < size) {
        errno = ENOMEM;
        return NULL;
    }
    LOCK();
    uintptr_t base = gap_find(len, align);
    alloc_t *a = NULL;
    int rc = base ? 0 : -ENOMEM;
    if (rc == 0 && bdm_is_uffd())
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
            rc = bdm_dd_resize(a, a->nsb);
        if (rc == 0)
            rc = bdm_rm_resize(a, a->nsb);
        if (rc == 0)
            rc = crc_resize(a, a->nsb);
        if (rc == 0)
            rc = bdm_pc_resize(a, a->nsb);
        if (rc == 0)
            rc = tab_insert(a);
        if (rc != 0) {
            bdm_meta_free(a);
            bdm_alloc_put(a);
            if (bdm_is_uffd())
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
    long i = bdm_tab_idx((uintptr_t)p);
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
    bdm_io_drain();
    long i = find_exact("bd_mem_free", p);
    alloc_t *a = G.tab[i];
    tab_remove(i);
    size_t rel = bdm_destroy(a);
    if (G.ntab == 0)
        bdm_bounce_idle();
    UNLOCK();
    bdm_do_release(rel);
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
    size_t newlen = bdm_round_up(size, sb);
    if (newlen < size) {
        errno = ENOMEM;
        return NULL;
    }
    LOCK();
    if (!bd_mem_owns(p))
        bad_pointer("bd_mem_realloc", p);
    bdm_io_drain();
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
        bdm_dd_drop(a, ns, a->nsb);
        bdm_rm_forget(a, ns, a->nsb);
        bdm_dd_flush();
        if (bdm_is_uffd()) {
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
                if ((BD_FAULT_SYS(BD_FAULT_MEM_FTRUNCATE) ?: ftruncate(fd, (off_t)newlen)) !=
                    0) { /* only wastes disk space */
                }
                bdm_backing_done(a);
            }
        }
        G.st.managed_bytes -= a->len - newlen;
        a->len = newlen;
        a->nsb = ns;
        a->size = size;
        size_t ex = bdm_acct_trim(a);
        UNLOCK();
        bdm_do_release(ex);
        return p;
    }
    /* grow in place if the address space behind is free */
    uintptr_t next = (size_t)idx + 1 < G.ntab ? G.tab[idx + 1]->base : G.arena_lo + G.arena_len;
    if (next - a->base >= newlen) {
        int rc = st_resize(a, newlen / sb);
        if (rc == 0)
            rc = hash_resize(a, newlen / sb);
        if (rc == 0)
            rc = bdm_dd_resize(a, newlen / sb);
        if (rc == 0)
            rc = bdm_rm_resize(a, newlen / sb);
        if (rc == 0)
            rc = crc_resize(a, newlen / sb);
        if (rc == 0)
            rc = bdm_pc_resize(a, newlen / sb);
        if (rc == 0 && bdm_is_uffd())
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
