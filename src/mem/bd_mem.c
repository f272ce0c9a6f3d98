/* bd_mem.c - SBMA core: accounting, loading (demand, read-ahead, AR
 * streams) through the I/O slots, faults, and unloading with write-back.
 * The allocation table, backing files and malloc path are in mem_alloc.c,
 * configuration, start/stop and the runtime's whole-manager calls in
 * mem_init.c.
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

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define G bdm_g

mem_global_t bdm_g = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .uffd = -1,
    .pagemap_fd = -1,
    .stop_fd = -1,
    .memfd = -1,
    .io_evfd = -1,
    .dd_fd = -1,
    .pc_fd = -1,
};

void bdm_unlock_release(void)
{
    size_t r = G.rel_pending;
    G.rel_pending = 0;
    pthread_mutex_unlock(&G.lock);
    bdm_do_release(r);
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
    return (a->st[i] & SB_DISK) == (a->st[j] & SB_DISK) &&
           untracked_sb(a, i) == untracked_sb(a, j) &&
           (!(a->st[i] & SB_DISK) || bdm_loc_run(a, i, j));
}

/* ------------------------------------------------------------------------ */
/* accounting                                                                */

static size_t acct_target(const alloc_t *a)
{
    if (bdm_is_ar() && a->loaded)
        return a->len;
    return (a->nres + a->nload + a->npf) * G.sbpage;
}

void bdm_acct_add(alloc_t *a, size_t n)
{
    a->acct += n;
    G.st.resident += n;
    if (G.st.resident > G.st.peak_resident)
        G.st.peak_resident = G.st.resident;
}

void bdm_pf_stop(alloc_t *a)
{
    if (!a->pf)
        return;
    a->pf = 0;
    a->npf = 0;
    a->ra_end = a->ra_next;
    G.rel_pending += bdm_acct_trim(a);
}

void bdm_note_warm(alloc_t *a, int touched, int k)
{
    a->warm = (a->warm & ~(1 << k)) | (touched << k);
    if (bdm_is_ar())
        return;
    uint8_t w = (uint8_t)(SB_WARM << k);
    for (size_t i = 0; i < a->nsb; i++)
        a->st[i] = (uint8_t)((a->st[i] & ~w) | ((a->st[i] & SB_RES) ? w : 0));
}

/* Give back accounted bytes above the target; returns bytes to release. */
size_t bdm_acct_trim(alloc_t *a)
{
    size_t t = acct_target(a);
    if (a->acct <= t)
        return 0;
    size_t ex = a->acct - t;
    a->acct = t;
    G.st.resident -= ex;
    return ex;
}

void bdm_do_release(size_t n)
{
    if (n && G.release)
        G.release(G.ctx, n);
}

/* ------------------------------------------------------------------------ */
/* loading                                                                   */

static void degrade(alloc_t *a);

/* G.verify: n sbpages of a from sbpage s, just read into buf, are what was
 * written, or the process stops. */
static void verify_run(const alloc_t *a, const uint8_t *buf, size_t s, size_t n)
{
    size_t k = bdm_crc_check(buf, n, a->crc + s);
    if (k < n)
        bdm_die_corrupt(a, (uint64_t)(s + k) * G.sbpage);
}

static int read_run(alloc_t *a, size_t s, size_t n, int in_fault)
{
    size_t sb = G.sbpage;
    if (bdm_rm(a, s)) { /* [s, s+n) is all remote (bdm_loc_run) */
        uintptr_t dst = a->base + s * sb;
        int rc = 0;
        for (size_t k = 0; k < n && rc == 0;) {
            size_t m = n - k < G.io_piece / sb ? n - k : G.io_piece / sb;
            uint8_t *buf = bdm_is_uffd() ? G.bounce : bdm_stage(dst + k * sb);
            G.bounce_dirty |= bdm_is_uffd();
            rc = bdm_rmt_read(a, s + k, m, buf);
            if (rc == 0 && G.verify)
                verify_run(a, buf, s + k, m);
            if (rc == 0 && bdm_is_uffd())
                bdm_uffd_install(dst + k * sb, buf, m * sb);
            k += m;
        }
        if (rc != 0 && in_fault)
            bdm_die("reading managed memory back from another node failed", -rc, n * sb);
        return rc;
    }
    uint32_t loc = bdm_loc(a, s);
    int fd = loc ? G.dd_fd : bdm_open_backing(a, 0);
    if (fd < 0) {
        if (in_fault)
            bdm_die("cannot open backing file to load managed memory", -fd, n * sb);
        return fd;
    }
    uint64_t t0 = bdm_now_ns();
    off_t off = loc ? (off_t)(loc - 1) * (off_t)sb : (off_t)(s * sb);
    size_t len = n * sb;
    uintptr_t dst = a->base + s * sb;
    int rc = 0;
    if (bdm_is_uffd()) {
        size_t piece = G.bounce_len;
        G.bounce_dirty = 1;
        while (len > 0 && rc == 0) {
            size_t m = len < piece ? len : piece;
            rc = bdm_pread_all(fd, G.bounce, m, off);
            if (rc == 0 && G.verify)
                verify_run(a, G.bounce, (size_t)off / sb, m / sb);
            if (rc == 0) {
                bdm_uffd_install(dst, G.bounce, m);
                bdm_backing_drop_cache(fd, off, m, 0);
                dst += m;
                off += (off_t)m;
                len -= m;
            }
        }
    } else {
        rc = bdm_pread_all(fd, bdm_stage(dst), len, off);
        if (rc == 0 && G.verify)
            verify_run(a, bdm_stage(dst), s, n);
        if (rc == 0)
            bdm_backing_drop_cache(fd, off, len, 0);
    }
    G.st.io_ns += bdm_now_ns() - t0;
    if (rc != 0) {
        if (in_fault)
            bdm_die("reading backing file failed while loading managed memory", -rc, n * sb);
        return rc;
    }
    bdm_count_io(a, 0, n * sb);
    bdm_backing_done(a);
    return 0;
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
    if (rc == -EBADMSG)
        bdm_die_corrupt(a, (uint64_t)sl->off + sl->bad * sb);
    if (sl->op == IO_READ) {
        for (size_t x = sl->s; x < sl->s + sl->n; x++)
            a->st[x] &= (uint8_t)~SB_LOADING;
        a->nload -= sl->n;
        if (rc == -ENOMEM && !bdm_is_uffd()) {
            /* read, but mprotect ran out of mappings: degrade() makes it accessible */
            a->degrade_pending = 1;
            rc = 0;
        }
        if (rc == 0) {
            uint8_t f = (sl->flags & IO_UNTRACKED) ? SB_RES | SB_VERIFY : SB_RES;
            for (size_t x = sl->s; x < sl->s + sl->n; x++)
                a->st[x] |= f;
            a->nres += sl->n;
            if (sl->flags & IO_REMOTE) {
                G.st.remote_get += sl->len;
            } else {
                bdm_count_io(a, 0, sl->n * sb);
                bdm_backing_drop_cache(sl->fd, sl->off, sl->len, 0);
            }
        } else {
            if (sl->flags & IO_DEMAND)
                bdm_die("reading backing file failed while loading managed memory", -rc, sl->len);
            if ((sl->flags & IO_OWNED) && !G.io_err)
                G.io_err = rc;
            /* read-ahead that failed is simply not resident; a demand load retries */
            G.rel_pending += bdm_acct_trim(a);
        }
    } else if (sl->flags & IO_PRECLEAN) {
        /* a pre-cleaning write: the memory stays resident.  SB_DIRTY was
         * cleared when it was submitted; a scan that found the sbpage
         * written again meanwhile has set it again, and that stays. */
        for (size_t x = sl->s; x < sl->s + sl->n; x++)
            a->pc[x] &= (uint16_t)~PC_IO;
        if (rc == 0) {
            bdm_backing_drop_cache(sl->fd, sl->off, sl->len, 1);
            bdm_count_io(a, 1, sl->len);
            G.st.precleaned += sl->len;
            if (G.verify)
                memcpy(a->crc + sl->s, sl->crc, sl->n * sizeof *a->crc);
            for (size_t x = sl->s; x < sl->s + sl->n; x++)
                a->st[x] |= SB_DISK;
            bdm_dd_written(a, sl->s, sl->n);
        } else {
            /* the stored copy may be torn: the unload must write it again */
            for (size_t x = sl->s; x < sl->s + sl->n; x++)
                a->st[x] |= SB_DIRTY;
        }
    } else {
        if (rc == 0 && (sl->flags & IO_REMOTE)) {
            G.st.remote_put += sl->len;
            for (size_t x = sl->s; x < sl->s + sl->n; x++)
                if (!a->rm[x]) {
                    a->rm[x] = 1;
                    a->nrm++;
                }
        } else if (rc == 0) {
            if (sl->flags & IO_RTRIED) { /* the tier forgot its copies when it refused */
                G.st.remote_refused += sl->len;
                for (size_t x = sl->s; x < sl->s + sl->n; x++)
                    if (a->rm[x]) {
                        a->rm[x] = 0;
                        a->nrm--;
                    }
            } else {
                bdm_rm_forget(a, sl->s, sl->s + sl->n); /* written to the store */
            }
        }
        if (rc == 0) {
            if (!(sl->flags & IO_REMOTE)) {
                bdm_backing_drop_cache(sl->fd, sl->off, sl->len, 1);
                bdm_count_io(a, 1, sl->len);
            }
            if (G.verify)
                memcpy(a->crc + sl->s, sl->crc, sl->n * sizeof *a->crc);
            for (size_t x = sl->s; x < sl->s + sl->n; x++)
                a->st[x] = (uint8_t)((a->st[x] & ~SB_DIRTY) | SB_DISK);
            bdm_dd_written(a, sl->s, sl->n);
            release_mem_or_die(a, sl->s, sl->s + sl->n);
        } else if (!G.io_err) {
            G.io_err = rc;
        }
    }
    a->inflight--;
    if (a->inflight == 0)
        bdm_backing_done(a);
    __atomic_store_n(&sl->state, IO_FREE, __ATOMIC_RELEASE);
}

void bdm_reap_done(void)
{
    for (int k = 0; k < IO_NSLOT; k++)
        if (__atomic_load_n(&G.io[k].state, __ATOMIC_ACQUIRE) == IO_DONE)
            reap(&G.io[k]);
}

static io_slot_t *slot_free(void)
{
    bdm_reap_done();
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
    uint32_t loc = bdm_loc(a, s); /* [s, s+n) is one run of locations */
    sl->op = op;
    sl->fd = loc ? G.dd_fd : fd;
    sl->a = a;
    sl->s = s;
    sl->n = n;
    sl->flags = flags;
    sl->rc = 0;
    sl->len = n * sb;
    sl->off = loc ? (off_t)(loc - 1) * (off_t)sb : (off_t)(s * sb);
    sl->seq = ++G.io_seq;
    if (op == IO_READ && bdm_rm(a, s)) /* [s, s+n) is all remote (bdm_loc_run) */
        sl->flags |= IO_REMOTE;
    if (op == IO_READ) {
        sl->install = addr;
        sl->buf = bdm_is_uffd() ? G.bounce + (size_t)(sl - G.io) * G.io_piece : bdm_stage(addr);
        G.bounce_dirty |= bdm_is_uffd();
        for (size_t x = s; x < s + n; x++)
            a->st[x] |= SB_LOADING;
        a->nload += n;
        if (G.verify)
            memcpy(sl->crc, a->crc + s, n * sizeof *a->crc);
    } else {
        sl->install = 0;
        sl->buf = bdm_is_uffd() ? (uint8_t *)addr : bdm_stage(addr);
    }
    a->inflight++;
    bdm_io_submit(sl);
}

io_slot_t *bdm_slot_free(void) { return slot_free(); }

void bdm_slot_go(io_slot_t *sl, alloc_t *a, int op, size_t s, size_t n, int flags, int fd)
{
    slot_go(sl, a, op, s, n, flags, fd);
}

io_slot_t *bdm_slot_get(void) { return slot_get(); }

/* Wait for every request touching sbpages [i0, i1) of a and reap it. */
static void drain_range(alloc_t *a, size_t i0, size_t i1)
{
    for (int k = 0; k < IO_NSLOT; k++) {
        io_slot_t *sl = &G.io[k];
        if (__atomic_load_n(&sl->state, __ATOMIC_ACQUIRE) != IO_FREE && sl->a == a && sl->s < i1 &&
            sl->s + sl->n > i0)
            bdm_io_wait(sl);
    }
    bdm_reap_done();
}

void bdm_io_drain(void)
{
    for (int k = 0; k < IO_NSLOT; k++)
        bdm_io_wait(&G.io[k]);
    bdm_reap_done();
}

/* No I/O in flight: give the bounce buffers' memory back (it is not
 * accounted, so it must not stay resident while the rank is blocked).
 * Only if a read used them since: this runs at every wait of a rank that
 * shares the node's run slots, and a rank in memory reads nothing (one
 * madvise per hand-over of the slot at -nr 1 otherwise).  Under the lock,
 * as are the reads that set bounce_dirty. */
void bdm_bounce_idle(void)
{
    if (!G.bounce_dirty)
        return;
    if (bdm_is_uffd())
        madvise(G.bounce, G.bounce_len, MADV_DONTNEED);
    if (G.dd_vbuf)
        madvise(G.dd_vbuf, G.sbpage, MADV_DONTNEED);
    G.bounce_dirty = 0;
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
    int fd = bdm_loc(a, s) ? G.dd_fd : bdm_open_backing(a, 0);
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
            if (bdm_is_uffd())
                bdm_uffd_zero_run(a, i, j - i, !un);
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
        while (j < a->nsb && (a->st[j] & (SB_RES | SB_DISK)) == SB_DISK && bdm_loc_run(a, i, j))
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
        bdm_acct_add(a, acct_target(a) - a->acct);
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
        /* a look-ahead load reads only what was resident (and stored) */
        uint8_t skip = SB_RES | SB_LOADING;
        while (i < a->ra_end && ((a->st[i] & skip) || (a->pf && bdm_pf_skip(a->st[i]))))
            i++;
        a->ra_next = i;
        if (i >= a->ra_end) {
            if (a->pf)
                bdm_pf_stop(a);
            break;
        }
        uint8_t d = a->st[i] & SB_DISK;
        int un = untracked_sb(a, i);
        size_t j = i + 1;
        while (j < a->ra_end && j - i < per && !(a->st[j] & skip) && same_load(a, i, j) &&
               !(a->pf && bdm_pf_skip(a->st[j])))
            j++;
        if (!d &&
            (bdm_is_uffd() || !bdm_is_ar())) { /* nothing to read ahead: filled when touched */
            a->ra_next = j;
            continue;
        }
        if (!bdm_is_ar() && a->pf && a->npf >= j - i) {
            a->npf -= j - i; /* accounted by bd_mem_prefetch */
        } else if (!bdm_is_ar()) {
            size_t need = (j - i) * sb;
            if (G.acquire) {
                uintptr_t base = a->base;
                uint64_t id = a->id;
                UNLOCK();
                size_t give = 0; /* a read-ahead stops instead */
                int rc = G.acquire(G.ctx, need, &give);
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
                /* an unload or discard meanwhile ends or moves the stream;
                 * a discard may also have dropped the stored copy of
                 * [i, j) (the run would read a hole, which the CRC32C
                 * check takes for corrupted data: fault.sh's soak, LRLW on
                 * uffd) */
                int changed = i < a->ra_next || j > a->ra_end;
                for (size_t x = i; x < j && !changed; x++)
                    if ((a->st[x] & (SB_RES | SB_LOADING)) || (a->st[x] & SB_DISK) != d)
                        changed = 1;
                if (changed && (i < a->ra_next || j > a->ra_end)) {
                    G.rel_pending += need;
                    break;
                }
                bdm_acct_add(a, need);
                if (changed) {
                    G.rel_pending += bdm_acct_trim(a);
                    continue;
                }
            } else {
                bdm_acct_add(a, need);
            }
        }
        if (d) {
            if (submit_reads(a, i, j, 0) != 0) {
                a->ra_end = a->ra_next;
                G.rel_pending += bdm_acct_trim(a);
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

void bdm_pump_all(void)
{
    for (size_t k = 0; k < G.ntab && slot_free(); k++) {
        alloc_t *a = G.tab[k];
        if (a->ra_next < a->ra_end)
            pump(a);
        if (k >= G.ntab || G.tab[k] != a)
            break; /* the table changed while the lock was dropped */
    }
}

/* No I/O slot busy and no stream left to pump. */
int bdm_io_idle(void)
{
    for (int k = 0; k < IO_NSLOT; k++)
        if (__atomic_load_n(&G.io[k].state, __ATOMIC_ACQUIRE) != IO_FREE)
            return 0;
    for (size_t k = 0; k < G.ntab; k++)
        if (G.tab[k]->ra_next < G.tab[k]->ra_end)
            return 0;
    return 1;
}

/* uffd handler thread: I/O slots finished. */
void bdm_io_progress(void)
{
    LOCK();
    if (G.active) {
        bdm_reap_done();
        bdm_pump_all();
        if (G.pf_active && bdm_io_idle()) {
            /* the look-ahead load is over; the rank may still wait */
            G.pf_active = 0;
            bdm_bounce_idle();
        }
    }
    UNLOCK();
}

/* Make [lo, hi) (inside one allocation) resident; for a fault, the chunk
 * around lo.  Returns 0, 1 (not managed), 2 (uffd fault: the data is being
 * read; installing it wakes the faulting thread) or -errno (prepare only). */
int bdm_ensure(uintptr_t lo, uintptr_t hi, int write, int in_fault)
{
    size_t sb = G.sbpage;
    int shrunk = 0;
again:
    LOCK();
    /* after bd_mem_fini began (I/O slots unmapped): a duplicate event of a served fault */
    if (!G.active) {
        UNLOCK();
        return 1; /* the handler wakes the thread (test mem.mem_fini_stale) */
    }
    bdm_reap_done();
    alloc_t *a = bdm_lookup(lo);
    if (!a) {
        UNLOCK();
        return 1;
    }
    if (in_fault && !shrunk)
        G.st.faults++;
    a->touch = ++G.touch_clock;
    if (hi > a->base + a->len)
        hi = a->base + a->len;
    size_t i0 = (lo - a->base) / sb, i1 = (hi - 1 - a->base) / sb + 1;
    /* uffd faults need not wait: the worker's UFFDIO_COPY wakes the thread */
    int nowait = in_fault && bdm_is_uffd();
    if (in_fault && !bdm_is_ar()) {
        /* the program runs ahead of the look-ahead load: fault-driven
         * read-ahead takes over from here */
        if (a->pf && !(a->st[i0] & (SB_RES | SB_LOADING)))
            bdm_pf_stop(a);
        ra_note(a, i0);
    }
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
    int whole = bdm_is_ar() && !a->loaded;
    if (!all_res || whole) {
        size_t s0 = i0, s1 = i1;
        if (in_fault) {
            /* AR allocations are accounted as a whole, so the never-stored
       * sbpages the uffd path fills lazily can be filled in bigger pieces
       * (each fault is a handler-thread round trip). */
            size_t csb = G.chunk_sb;
            if (bdm_is_uffd() && bdm_is_ar() && csb * sb < (2u << 20))
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
        if (bdm_is_ar()) {
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
                size_t give = 0;
                int rc = G.acquire(G.ctx, need, &give);
                if (rc == BD_MEM_ACQUIRE_SHRINK) {
                    /* Every process holding memory waits for more: store what
                     * the budget asks of ours (the coldest part, or all) and ask
                     * again (the master serves another rank first).  What this
                     * load wanted is recomputed. */
                    LOCK();
                    size_t held = G.st.resident;
                    UNLOCK();
                    rc = give && give < held ? bdm_shrink(give, id) : bd_mem_unload_all();
                    if (rc == 0) {
                        LOCK();
                        G.st.shrinks++;
                        G.st.shrunk_bytes += held > G.st.resident ? held - G.st.resident : 0;
                        UNLOCK();
                        shrunk = 1;
                        goto again;
                    }
                    if (in_fault)
                        bdm_die("cannot store managed memory to give it back to the budget", -rc,
                                need);
                    return rc;
                }
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
                    bdm_do_release(need);
                    return in_fault ? 0 : 1;
                }
                whole = bdm_is_ar() && !a->loaded;
            }
            bdm_acct_add(a, need);
        }
        if (whole || (in_fault && bdm_is_ar() && a->ra_next >= a->ra_end)) {
            /* AR: everything stored is read from here on, this chunk first (again
       * if bd_mem_idle() stopped the stream) */
            a->loaded = 1;
            a->ra_next = 0;
            a->ra_end = a->nsb;
        }
        if (bdm_is_uffd() && G.wp_sync && write == 1 && in_fault &&
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
            G.rel_pending += bdm_acct_trim(a);
            UNLOCK();
            return rc;
        }
    }
    if (!nowait && any_loading(a, i0, i1))
        drain_range(a, i0, i1);
    if (a->degrade_pending)
        degrade(a);
    int pending = nowait && (a->st[i0] & SB_LOADING);
    if (bdm_is_uffd() && G.wp_sync && write == 1 && !in_fault)
        unprotect_range(a, i0, i1);
    if (!bdm_is_uffd()) {
        int wrote =
            write == 1 || (write == -1 && was_res); /* a fault on a readable page is a write */
        if (write == 1)
            mark_dirty(a, i0, i1);
        else if (wrote)
            mark_dirty(a, i0, i0 + 1);
        if (wrote && in_fault && G.predict && !a->degrade_pending)
            write_ahead(a, write == 1 ? i1 : i0 + 1);
    }
    G.rel_pending += bdm_acct_trim(a);
    if (a->ra_next < a->ra_end)
        pump(a); /* may drop the lock: a is not used after it */
    UNLOCK();
    return pending ? 2 : 0;
}

int bdm_fault(uintptr_t addr, int write)
{
    int rc = bdm_ensure(addr, addr + G.page, write, 1);
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

int bdm_release_mem(alloc_t *a, size_t s0, size_t s1)
{
    uintptr_t addr = a->base + s0 * G.sbpage;
    size_t len = (s1 - s0) * G.sbpage;
    if (len == 0)
        return 0;
    if (bdm_is_uffd()) {
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
    /* A pre-cleaning write reads the program's memory (O_DIRECT): its
     * pages must stay mapped until it is done.  Released under it, the
     * worker's get_user_pages would raise a userfault that the handler
     * cannot serve (it needs the lock, held here by whoever waits for that
     * write): wait for it and apply it first.  Its sbpages look clean
     * (SB_DIRTY was cleared at submission), which is how they got here. */
    if (a->pc)
        for (int k = 0; k < IO_NSLOT; k++) {
            io_slot_t *sl = &G.io[k];
            if (__atomic_load_n(&sl->state, __ATOMIC_ACQUIRE) != IO_FREE && sl->a == a &&
                (sl->flags & IO_PRECLEAN) && sl->s < s1 && sl->s + sl->n > s0) {
                bdm_io_wait(sl);
                reap(sl); /* a pre-cleaning reap releases nothing */
            }
        }
    int rc = bdm_release_mem(a, s0, s1);
    if (rc)
        bdm_die("releasing memory of an unloaded allocation failed", -rc, (s1 - s0) * G.sbpage);
    for (size_t x = s0; x < s1; x++)
        a->st[x] &= (uint8_t) ~(SB_RES | SB_DIRTY | SB_VERIFY);
    if (a->pc) /* pre-cleaning: "written again after it was cleaned" counts per residency */
        for (size_t x = s0; x < s1; x++)
            a->pc[x] &= (uint16_t)~PC_DONE;
    a->nres -= s1 - s0;
}

void bdm_release_mem_or_die(alloc_t *a, size_t s0, size_t s1) { release_mem_or_die(a, s0, s1); }

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
    if (!(G.predict || G.dd) || !(f & SB_RES)) /* deduplication needs the hash of dirty ones */
        return;
    uint64_t h[2];
    uint64_t *old = a->hash + 2 * i;
    if (f & (SB_DIRTY | SB_VERIFY)) {
        uint64_t t0 = bdm_now_ns();
        bdm_hash((const void *)(a->base + i * G.sbpage), G.sbpage, h);
        if (G.predict) { /* the write prediction's figures; deduplication's hashing is not */
            G.st.hash_ns += bdm_now_ns() - t0;
            G.st.bytes_hashed += G.sbpage;
        }
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

/* The first pass of an unload: find what is dirty, and release every clean
 * resident run at once, so that the budget gets that memory back before the
 * write-back of the dirty runs begins; the rank waiting for memory can then
 * load while the writes go on (issue 13: unloads were a rank's whole
 * residency written and released in one piece, all of it on the waiting
 * rank's critical path).  Streams stop here, before the caller drops the
 * lock to report the release.  Contract: as for bdm_unload_one, the rank's
 * threads do not write managed memory during an unload (the rank waits in
 * MPI), so the dirty state found here stays true. */
int bdm_unload_clean(alloc_t *a, size_t *rel)
{
    a->ra_lo = a->ra_next = a->ra_end = a->ra_win = 0;
    a->pf = 0;
    a->npf = 0;
    /* The mprotect path releases with PROT_NONE: clean runs made PROT_NONE
     * between dirty ones still mapped would split the allocation into a
     * mapping per run and exhaust vm.max_map_count (mem.mem_maxmap).  There
     * the single pass of bdm_unload_one, which releases in address order so
     * neighbouring released runs merge, does everything. */
    if (a->nres == 0 || !bdm_is_uffd())
        return 0;
    int rc = bdm_uffd_scan_dirty(a);
    if (rc)
        return rc;
    for (size_t i = 0; i < a->nsb; i++)
        classify(a, i);
    a->classified = 1;
    for (size_t i = 0; i < a->nsb;) {
        if ((a->st[i] & (SB_RES | SB_DIRTY)) != SB_RES) {
            i++;
            continue;
        }
        size_t j = i + 1;
        while (j < a->nsb && (a->st[j] & (SB_RES | SB_DIRTY)) == SB_RES)
            j++;
        release_mem_or_die(a, i, j);
        i = j;
    }
    /* AR: no longer loaded whole; what stays accounted is the dirty part */
    a->loaded = 0;
    *rel += bdm_acct_trim(a);
    return 0;
}

/* Write dirty sbpages and release all memory of a.  Adds the bytes to give
 * back to *rel.  Clean runs are released at once; dirty runs are written
 * through the I/O slots (IO_NSLOT requests of at most G.io_piece bytes in
 * flight) and each piece is released as soon as it is on storage.  On error
 * what was not written stays resident and dirty.  No I/O is in flight. */
int bdm_unload_one(alloc_t *a, size_t *rel)
{
    size_t sb = G.sbpage, per = G.io_piece / sb;
    a->ra_lo = a->ra_next = a->ra_end = a->ra_win = 0;
    a->pf = 0;
    a->npf = 0;
    int classified = a->classified;
    a->classified = 0;
    if (a->nres == 0 && !a->loaded && !classified) {
        *rel += a->acct;
        G.st.resident -= a->acct;
        a->acct = 0;
        return 0;
    }
    if (bdm_is_uffd() && !classified) {
        int rc = bdm_uffd_scan_dirty(a);
        if (rc)
            return rc;
    }
    G.io_err = 0;
    int rc = 0, fd = -1;
    size_t cl = classified ? a->nsb : 0; /* sbpages [0, cl) are classified */
    a->inflight++;                       /* keeps the descriptor open while slots are reaped */
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
        } else if (G.dd) {
            rc = bdm_dd_write(a, i, j, &fd);
            if (rc)
                break;
        } else {
            if (fd < 0)
                fd = bdm_open_backing(a, 1);
            if (fd < 0) {
                rc = fd;
                break;
            }
            slot_go(slot_get(), a, IO_WRITE, i, j - i, IO_OWNED | (G.rput ? IO_REMOTE : 0), fd);
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
        G.rel_pending += bdm_acct_trim(a);
        if (a->inflight == 0)
            bdm_backing_done(a);
        return rc;
    }
    a->nres = 0;
    a->loaded = 0;
    *rel += a->acct;
    G.st.resident -= a->acct;
    a->acct = 0;
    G.st.unloads++;
    bdm_backing_done(a);
    return 0;
}

/* Free everything that belongs to a (memory, file, record); caller removes it
 * from the table.  Returns accounted bytes to release. */
size_t bdm_destroy(alloc_t *a)
{
    if (bdm_is_uffd()) {
        bdm_uffd_unmap(a->base, a->len);
    } else {
        bdm_prot_set(a->base, a->len, PROT_NONE);
        bdm_prot_punch(a->base, a->len);
    }
    bdm_backing_remove(a);
    bdm_rm_forget(a, 0, a->nsb);
    bdm_dd_drop(a, 0, a->nsb);
    bdm_dd_flush();
    bdm_alloc_report(a);
    size_t rel = a->acct;
    G.st.resident -= a->acct;
    G.st.nallocs--;
    G.st.managed_bytes -= a->len;
    bdm_meta_free(a);
    bdm_alloc_put(a);
    return rel;
}
