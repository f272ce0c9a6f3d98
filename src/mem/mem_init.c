/* mem_init.c - SBMA configuration and life cycle (bd_mem_init, fini,
 * fork), the arena tests (owns, overlaps) and the runtime's calls on the
 * whole manager (unload_all, block_point, idle, discard, prepare, stats).
 * Locking as in bd_mem.c. */
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
#include "mem_internal.h"

#define G bdm_g
#define DEFAULT_ARENA (16ULL << 40)
#define MIN_ARENA (1ULL << 30)
#define KIB 1024UL

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

/* A forked child shares the parent's userfaultfd and (mprotect path) memfd:
 * it must not use the manager.  Managed pointers stay "ours" in the child, so
 * free() of them is a no-op there. */
static void atfork_child(void) { __atomic_store_n(&G.active, 0, __ATOMIC_RELAXED); }

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
    G.io_begin = cfg->io_begin;
    G.io_end = cfg->io_end;
    /* the tier's lanes carry one I/O request of at most 1 MiB */
    int rmt =
        cfg->rput && cfg->rget && cfg->rdrop && (cfg->sbpage ? cfg->sbpage : 65536) <= 1024 * KIB;
    G.rput = rmt ? cfg->rput : NULL;
    G.rget = rmt ? cfg->rget : NULL;
    G.rdrop = rmt ? cfg->rdrop : NULL;
    G.direct_io = 1;
    G.verify = cfg->verify >= 0;
    G.nfds = 0;
    memset(&G.st, 0, sizeof G.st);
    G.st.direct_io = 1;
    G.phase_cur = -1;
    G.pf_slot = 0;
    memset(G.phase_used, 0, sizeof G.phase_used);

    int track = cfg->track;

    rc = reserve_arena(cfg->arena);
    if (rc)
        goto out;
    /* I/O requests of 1 MiB (at least one sbpage); on uffd each slot has its
   * own bounce buffer of that size */
    G.io_piece = bdm_round_up(1024 * KIB, sbpage);
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
    /* storage deduplication: the node's table and store (the hash key
     * becomes the node's) */
    rc = bdm_dd_setup(cfg->share, cfg->share_len);
    if (rc)
        goto fail_bounce;
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
    /* pre-cleaning needs PM_SCAN_WP_MATCHING, i.e. asynchronous write
     * protection on the uffd path; and it writes to local storage only,
     * which with the remote tier would leave an older copy in the tier
     * beside the newer local one: not with the tier (both came in one
     * merge; making pre-cleaning drop tier copies is left open) */
    G.preclean = cfg->preclean > 0 && G.track == BD_MEM_TRACK_UFFD && !G.wp_sync && !G.rput;
    G.pc_run = 0;
    G.pc_gen = G.pc_scans = 0;
    G.pc_last = 0;
    G.pc_tick = (cfg->preclean_tick_us ? cfg->preclean_tick_us : 10000) * 1000ULL;
    G.pc_delay = cfg->preclean_delay_us * 1000ULL;
    G.alloc_report = cfg->alloc_report;
    G.pc_clock = CLOCK_PROCESS_CPUTIME_ID;
    rc = bdm_io_start();
    if (rc) {
        if (G.track == BD_MEM_TRACK_UFFD)
            bdm_uffd_teardown();
        else
            bdm_prot_teardown();
        goto fail_bounce;
    }
    if (bdm_pc_start() != 0)
        G.preclean = 0; /* no thread: the unloads write everything, as without it */
    G.st.preclean = G.preclean;
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
    bdm_dd_teardown();
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
    bdm_io_drain();
    while (G.ntab > 0) {
        alloc_t *a = G.tab[G.ntab - 1];
        G.ntab--;
        rel += bdm_destroy(a);
    }
    bdm_dd_teardown();
    UNLOCK();
    bdm_pc_stop();
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
    bdm_do_release(rel);
}

int bd_mem_active(void) { return __atomic_load_n(&G.active, __ATOMIC_ACQUIRE); }

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

int bd_mem_unload_all(void)
{
    if (!bd_mem_active())
        return 0;
    size_t rel = 0;
    int first = 0;
    LOCK();
    G.pc_hold++; /* no pre-cleaning write starts while the lock is dropped below */
    bdm_io_drain();
    /* What the next look-ahead load brings back: what this residency
     * touched.  A residency that touched nothing (a rank that ran from one
     * MPI call to the next) keeps what the one before it recorded. */
    int touched = 0;
    for (size_t i = 0; i < G.ntab; i++)
        touched |= G.tab[i]->nres > 0 || G.tab[i]->loaded;
    for (size_t i = 0; touched && G.phase_cur >= 0 && i < G.ntab; i++)
        bdm_note_warm(G.tab[i], (G.tab[i]->nres > 0 || G.tab[i]->loaded) && !G.tab[i]->ovw,
                      G.phase_cur);
    for (size_t i = 0; touched && i < G.ntab; i++)
        G.tab[i]->ovw = 0;
    if (touched)
        G.phase_cur = -1;
    /* Clean memory first, reported at once; then the write-back, each
     * allocation's memory reported as soon as it is on storage. */
    for (size_t i = 0; i < G.ntab; i++) {
        int rc = bdm_unload_clean(G.tab[i], &rel);
        if (rc && !first)
            first = rc;
    }
    for (size_t i = 0; i < G.ntab; i++) {
        if (rel) {
            UNLOCK();
            bdm_do_release(rel);
            rel = 0;
            LOCK();
        }
        int rc = bdm_unload_one(G.tab[i], &rel);
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
    bdm_dd_flush();
    bdm_bounce_idle();
    G.pc_hold--;
    UNLOCK();
    bdm_do_release(rel);
    return first;
}

int bdm_shrink(size_t want, uint64_t keep)
{
    if (!bd_mem_active())
        return 0;
    size_t freed = 0;
    int rc = 0;
    LOCK();
    G.pc_hold++; /* as in bd_mem_unload_all */
    bdm_io_drain();
    /* Recency of use is all the manager knows of a running rank's memory:
     * the allocation touched longest ago goes first (for AR strategies the
     * touch that loaded it in this residency).  Each is stored whole and
     * its memory reported at once, so the rank the master serves first can
     * load while this one goes on giving back. */
    while (freed < want) {
        alloc_t *v = NULL;
        for (size_t i = 0; i < G.ntab; i++) {
            alloc_t *a = G.tab[i];
            if (a->id != keep && a->acct > 0 && (!v || a->touch < v->touch))
                v = a;
        }
        if (!v)
            break;
        size_t rel = 0;
        rc = bdm_unload_one(v, &rel);
        freed += rel;
        if (rel) {
            UNLOCK();
            bdm_do_release(rel);
            LOCK();
        }
        if (rc)
            break;
    }
    G.pc_hold--;
    UNLOCK();
    /* Not enough outside the allocation being loaded: all of it goes, as
     * before sizes were asked (else the same request would come back). */
    if (!rc && freed < want)
        rc = bd_mem_unload_all();
    return rc;
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
    if (!bd_mem_active() || !bdm_is_uffd())
        return;
    LOCK();
    __atomic_store_n(&G.pc_run, 0, __ATOMIC_RELEASE); /* no pre-cleaning while it waits */
    /* Stop background loading (AR streams, LRLW read-ahead): it would go on
   * through the bounce buffers while the rank waits, and nothing would give
   * them back afterwards.  What it has not read is loaded when touched (a
   * fault restarts an AR stream).  At most IO_NSLOT requests are waited for. */
    for (size_t k = 0; k < G.ntab; k++) {
        bdm_pf_stop(G.tab[k]);
        G.tab[k]->ra_end = G.tab[k]->ra_next;
    }
    /* pre-cleaning writes use no bounce buffer: they go on (an unload
     * waits for them) */
    for (int k = 0; k < IO_NSLOT; k++)
        if (__atomic_load_n(&G.io[k].state, __ATOMIC_ACQUIRE) != IO_FREE &&
            !(G.io[k].flags & IO_PRECLEAN))
            bdm_io_wait(&G.io[k]);
    bdm_reap_done();
    bdm_bounce_idle();
    G.pf_active = 0;
    UNLOCK();
}

static int discard(void *addr, size_t len, int keep_resident);

int bd_mem_discard(void *addr, size_t len) { return discard(addr, len, 0); }

int bd_mem_discard_stored(void *addr, size_t len) { return discard(addr, len, 1); }

static int discard(void *addr, size_t len, int keep_resident)
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
    bdm_io_drain();
    long i = bdm_tab_idx(lo);
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
            if ((f & SB_RES) && keep_resident) {
                s = e;
                continue;
            }
            if (f & SB_RES) {
                int rc = bdm_release_mem(a, s, e);
                if (rc && !first)
                    first = rc;
                a->nres -= e - s;
            }
            bdm_dd_drop(a, s, e);
            bdm_rm_forget(a, s, e);
            if ((f & SB_DISK) && a->has_file) {
                int fd = bdm_open_backing(a, 0);
                if (fd >= 0)
                    (void)(BD_FAULT_SYS(BD_FAULT_MEM_FALLOCATE)
                               ?: fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                                            (off_t)(s * sb), (off_t)((e - s) * sb)));
            }
            for (size_t x = s; x < e; x++)
                a->st[x] = 0;
            s = e;
        }
        /* A receive buffer: what a look-ahead load would bring back for
         * this phase is overwritten before it is read (mem.coll_discard) */
        if (s1 > s0 && 2 * (s1 - s0) >= a->nsb)
            a->ovw = 1;
        if (a->has_file)
            bdm_backing_done(a);
        rel += bdm_acct_trim(a);
    }
    bdm_dd_flush();
    UNLOCK();
    bdm_do_release(rel);
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
        long i = bdm_tab_idx(cur);
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
        int rc = bdm_ensure(l, h, for_write ? 1 : 0, 0);
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
        bdm_io_drain(); /* count the I/O in flight */
    *out = G.st;
    UNLOCK();
}
