/* mem_internal.h - private declarations shared by the bdmem sources. */
#ifndef BD_MEM_INTERNAL_H
#define BD_MEM_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include "bd_mem.h"

/* Per-sbpage state bits. */
#define SB_RES 0x01 /* resident (installed / accessible) */
#define SB_DIRTY                                                                                   \
    0x02 /* written since it became resident (mprotect path; uffd path only during unload) */
#define SB_DISK 0x04    /* a copy is in the backing file */
#define SB_LOADING 0x08 /* being read by an I/O slot (accounted, not yet resident) */
/* Write prediction (G.predict): an sbpage that was written during its last
 * residency is loaded writable and untracked (SB_VERIFY); the unload
 * compares its content hash with the stored one (or with that of zeros) to
 * find out whether it changed.  SB_COLD records that it did not, so that
 * it is tracked exactly the next time.  Fresh sbpages are not cold. */
#define SB_VERIFY 0x10 /* resident, writable, untracked: changed or not is decided by hashing */
#define SB_COLD 0x20   /* was not written during its last residency */
/* Look-ahead loading (bd_mem_prefetch): what a residency touched is kept
 * for the phase it began in (the MPI call the process returned from, see
 * bd_mem_phase): per allocation (AR) and per sbpage (LRLW), SB_WARM << k for
 * phase slot k.  A look-ahead load brings back what the phase the process
 * will resume from touched last time. */
#define SB_WARM 0x40
#define BDM_NPHASE 2

/* Asynchronous I/O slots: one worker thread per slot runs one pread or
 * pwrite at a time, so that loads and write-back keep IO_NSLOT requests in
 * flight and overlap I/O with copying and with the application. */
#define IO_NSLOT 4
enum { IO_FREE = 0, IO_SUB = 1, IO_DONE = 2, IO_STOP = 3 };
enum { IO_READ = 0, IO_WRITE = 1 };
#define IO_OWNED 1     /* the submitter waits for and reaps it while holding the lock */
#define IO_DEMAND 2    /* a faulting thread waits for it (a read error is fatal) */
#define IO_UNTRACKED 4 /* install writable without write tracking (SB_VERIFY) */
#define IO_REMOTE 8    /* through the remote tier (cfg.rput/rget) instead of sl->fd */
#define IO_RTRIED 16   /* a write the remote tier refused, written to sl->fd instead */
#define IO_PRECLEAN 32 /* pre-cleaning write of a running process: the memory stays resident */

/* Pre-cleaning (mem_preclean.c), per sbpage in alloc_t.pc: the generation
 * of the last write-protecting scan that covered it, whether that scan found
 * it written (and the one before), whether it is written too often to be
 * worth re-protecting, and whether a pre-cleaning write of it is in flight. */
#define PC_GEN 0x00ff
#define PC_FOUND 0x0100 /* the covering scan found a page of it written */
#define PC_PREV 0x0200  /* the scan before that did too */
#define PC_HOT 0x0400   /* written at two scans in a row: not scanned for a while */
#define PC_IO 0x0800    /* a pre-cleaning write of it is in flight */
#define PC_DONE 0x1000  /* pre-cleaned since it was loaded */
#define PC_AGAIN 0x2000 /* written again after it was pre-cleaned: never pre-cleaned again */

typedef struct alloc {
    uintptr_t base;  /* first byte, sbpage aligned */
    size_t size;     /* requested size */
    size_t len;      /* mapped bytes, whole sbpages */
    size_t nsb;      /* len / sbpage */
    size_t nres;     /* resident sbpages */
    uint8_t *st;     /* nsb state bytes (mmap'd) */
    size_t st_bytes; /* mapped size of st */
    uint64_t
        *hash; /* G.predict: 2 words per sbpage, hash of the stored copy (valid with SB_DISK) */
    size_t hash_bytes;   /* mapped size of hash */
    uint32_t *crc;       /* G.verify: CRC32C of each sbpage's stored copy (valid with SB_DISK) */
    size_t crc_bytes;    /* mapped size of crc */
    size_t acct;         /* bytes acquired from the budget */
    uint64_t id;         /* unique, names the backing file */
    int loaded;          /* AR: every stored sbpage was brought in since the last unload */
    size_t pf_take;      /* bytes a look-ahead load chose to load (bd_mem_prefetch) */
    int fd;              /* backing file descriptor or -1 */
    int has_file;        /* backing file exists */
    int inflight;        /* I/O slots working on this allocation */
    int degrade_pending; /* mprotect failed with ENOMEM in an I/O worker */
    size_t nload;        /* sbpages SB_LOADING */
    size_t ra_lo, ra_next, ra_end, ra_win; /* read-ahead stream (sbpage indices) */
    int warm;       /* bit k: touched in the last residency of phase slot k (AR look-ahead) */
    int ovw;        /* most of it was overwritten by a receive (bd_mem_discard*) since its
                       phase began: not worth loading ahead for that phase (AR) */
    int pf;         /* the stream [ra_next, ra_end) is a look-ahead load of warm sbpages */
    size_t npf;     /* sbpages that stream has accounted but not started reading */
    int classified; /* bdm_unload_clean ran: dirty state scanned, every sbpage classified */
    uint64_t touch; /* G.touch_clock at its last bdm_ensure: a shrink gives back the oldest */
    uint16_t *pc;   /* G.preclean: nsb pre-cleaning states (PC_*), mapped */
    size_t pc_bytes;
    /* Storage deduplication (G.dd): slot[i] = k + 1 when the stored copy of
     * sbpage i is slot k of the node's shared store (holding one reference
     * on it), 0 when it is at offset i * sbpage of the allocation's own file
     * (never shared).  Mapped only when G.dd; nslot counts the nonzero ones. */
    uint32_t *slot;
    size_t slot_bytes;
    size_t nslot;
    /* Remote tier (G.rput): rm[i] = 1 when the stored copy of sbpage i is
     * in the remote tier (SB_DISK set, slot[i] == 0), nrm counts them.
     * Mapped only when the tier is on. */
    uint8_t *rm;
    size_t rm_bytes;
    size_t nrm;
    uint64_t rd, wr;   /* bytes read back / written for it (cfg.alloc_report) */
    uint32_t nrd, nwr; /* and in how many requests */
    struct alloc *next_free;
} alloc_t;

typedef struct {
    int active;
    pthread_mutex_t lock;
    size_t page, sbpage, threshold, chunk_sb;
    bd_mem_strategy_t strategy;
    int track; /* BD_MEM_TRACK_UFFD or BD_MEM_TRACK_MPROTECT */
    int kernel_faults;
    int wp_sync; /* uffd: write faults come to the handler (per sbpage) */
    int predict; /* write prediction with hash verification (SB_VERIFY) */
    int direct_io;
    int verify; /* every sbpage read back is checked against the CRC32C written with it */
    char dir[4096];
    char label[48]; /* cfg.label, for fatal messages */
    size_t dirlen;
    int (*acquire)(void *, size_t, size_t *);
    void (*release)(void *, size_t);
    void *ctx;
    void (*io_begin)(void *, int);
    void (*io_end)(void *, int, size_t, uint64_t);
    int (*rput)(void *, int, uint64_t, size_t, size_t, const void *);
    int (*rget)(void *, int, uint64_t, size_t, size_t, void *);
    void (*rdrop)(void *, uint64_t, size_t, size_t);

    /* arena */
    uintptr_t arena_lo;
    size_t arena_len;

    /* allocation table, sorted by base */
    alloc_t **tab;
    size_t ntab, tabcap;
    alloc_t *free_allocs;
    uint64_t next_id;
    uint64_t touch_clock; /* alloc_t.touch */
    int nfds;

    /* bounce / zero buffers (uffd) */
    uint8_t *bounce;
    size_t bounce_len;
    int bounce_dirty; /* read into since bdm_bounce_idle last gave it back */
    uint8_t *zeros;
    size_t zeros_len;

    /* uffd */
    int uffd;
    int pagemap_fd;
    int stop_fd;
    pthread_t thread;
    int thread_started;
    void *scanbuf;
    size_t scanbuf_n;

    /* mprotect */
    int memfd;
    uintptr_t stage_lo; /* staging view of the arena */
    int segv_installed;

    /* I/O slots */
    struct io_slot *io;
    size_t io_piece; /* bytes per request (bounce per slot on uffd) */
    int io_evfd;     /* uffd: workers signal completions to the handler */
    int io_started;
    uint64_t io_seq;
    int io_err;         /* first error of owned slots since it was reset */
    size_t rel_pending; /* accounted bytes to give back once unlocked */
    size_t ra_max_sb;   /* read-ahead window limit in sbpages (LRLW) */
    int pumping;
    int pf_active; /* a look-ahead load may still run: give the bounce buffers back after it */
    uint64_t phase_key[BDM_NPHASE]; /* the calls whose residencies the slots describe */
    uint64_t phase_used[BDM_NPHASE];
    int phase_cur; /* slot of the current residency, -1 none (or already recorded) */
    int pf_slot;   /* slot the look-ahead load in progress reads */

    /* pre-cleaning (mem_preclean.c): a thread that, while the process runs
     * (between bd_mem_phase and bd_mem_idle), writes back dirty sbpages no
     * longer being written, so that unloads find them clean */
    int preclean;       /* on (cfg.preclean, uffd path, asynchronous write tracking) */
    int pc_run;         /* the process runs */
    int pc_hold;        /* under the lock: an unload or shrink is releasing memory,
                         * no pre-cleaning write may start (it would be released
                         * as clean while in flight) */
    uint32_t pc_gen;    /* generation of the last scan, 1..255 */
    uint32_t pc_scans;  /* scans made */
    uint64_t pc_last;   /* when the last scan ran (the program's CPU time, ns) */
    uint64_t pc_tick;   /* CPU time between two scans (ns) */
    uint64_t pc_delay;  /* cfg.preclean_delay_us in ns (tests) */
    int alloc_report;   /* cfg.alloc_report */
    clockid_t pc_clock; /* the process's CPU-time clock */
    /* CPU-time clocks of the manager's own threads (pre-cleaning, I/O
     * workers, fault handler): their time is not the program's */
    clockid_t pc_own[IO_NSLOT + 2];
    int pc_nown;
    uint64_t pc_prog; /* the program's CPU time last seen (ns, never decreases) */
    int pc_fd;        /* eventfd: stop the thread */
    int pc_started;
    pthread_t pc_thread;

    /* storage deduplication (mem_dedup.c), dd == NULL: off */
    struct dd_hdr *dd;
    int dd_fd;         /* the node's store file (dir/bdmem.store) */
    uint8_t *dd_vbuf;  /* one sbpage: a candidate copy read back to compare */
    uint32_t dd_punch; /* freed slots [dd_punch0, dd_punch0 + dd_punch) not yet punched */
    uint32_t dd_punch0;

    bd_mem_stats_t st;
} mem_global_t;

/* Most sbpages one request holds (1 MiB of 4 KiB sbpages). */
#define IO_MAX_SB 256

typedef struct io_slot {
    _Atomic uint32_t state; /* IO_FREE, IO_SUB, IO_DONE, IO_STOP */
    int op, fd, rc, flags;
    /* G.verify: per sbpage of the request, the CRC32C a read must find
     * (set by the submitter) or a write stored (set by the worker); rc
     * -EBADMSG: sbpage s + bad did not match. */
    uint32_t crc[IO_MAX_SB];
    size_t bad;
    uint8_t *buf; /* read into / write from */
    size_t len;
    off_t off;
    uintptr_t install; /* read: uffd copies buf here, mprotect makes it readable */
    uint64_t ns, seq;
    alloc_t *a;
    size_t s, n; /* sbpages [s, s+n) of a */
    pthread_t th;
} io_slot_t;

extern mem_global_t bdm_g;

/* util */
void bdm_die(const char *what, int err, size_t bytes) __attribute__((noreturn));
/* Storage gave back something else than what was written to a's backing
 * file at offset off: the data is never used, the process stops. */
void bdm_die_corrupt(const alloc_t *a, uint64_t off) __attribute__((noreturn));
/* G.verify: check n sbpages at buf against want[0..n); the index of the
 * first that differs, or n. */
size_t bdm_crc_check(const uint8_t *buf, size_t n, const uint32_t *want);
void bdm_msg(const char *s);
uint64_t bdm_now_ns(void);
int bdm_pread_all(int fd, void *buf, size_t len, off_t off);
int bdm_pwrite_all(int fd, const void *buf, size_t len, off_t off);
int bdm_pwrite_bg(int fd, const void *buf, size_t len, off_t off);
void bdm_fmt_u64(char *out, uint64_t v);
void bdm_fmt_hex(char *out, uint64_t v);
void *bdm_map(size_t len);
void bdm_unmap(void *p, size_t len);
int bdm_io_start(void);
void bdm_io_stop(void);
void bdm_io_submit(io_slot_t *sl);
void bdm_io_wait(io_slot_t *sl);

/* content hash (mem_hash.c): keyed polynomial hash over GF(2^128); len a
 * multiple of 16.  All-zero content hashes to {0, 0}. */
void bdm_hash_setkey(const uint64_t key[2]);
int bdm_hash_fast(void); /* 0 portable (slow), 1 PCLMULQDQ, 2 VPCLMULQDQ */
int bdm_hash_cap(int level);
void bdm_hash(const void *buf, size_t len, uint64_t out[2]);
void bdm_hash_soft(const void *buf, size_t len, uint64_t out[2]);

/* Shared by the core files (bd_mem.c, mem_alloc.c, mem_init.c).  One
 * mutex, bdm_g.lock, protects the allocation table and all sbpage state
 * (see bd_mem.c); unlocking gives back what reaping I/O slots found
 * over-accounted, with the lock dropped. */
void bdm_unlock_release(void);
#define LOCK() pthread_mutex_lock(&bdm_g.lock)
#define UNLOCK() bdm_unlock_release()
static inline int bdm_is_uffd(void) { return bdm_g.track == BD_MEM_TRACK_UFFD; }
static inline size_t bdm_round_up(size_t v, size_t m) { return (v + m - 1) / m * m; }

/* bd_mem.c: accounting, I/O slots, loading, unloading. */
/* Give back accounted bytes above a's target; returns bytes to release. */
size_t bdm_acct_trim(alloc_t *a);
/* End a's look-ahead stream, giving back what it accounted and did not start. */
void bdm_pf_stop(alloc_t *a);
/* Record which sbpages of a are resident before a full unload, for phase
 * slot k (SB_WARM << k). */
void bdm_note_warm(alloc_t *a, int touched, int k);
/* Tell the budget (cfg.release) that n bytes stopped being resident; call
 * without the lock. */
void bdm_do_release(size_t n);
/* Wait for and reap every I/O slot in flight. */
void bdm_io_drain(void);
/* No I/O in flight: give the bounce buffers' memory back (it is not
 * accounted, so it must not stay resident while the rank is blocked). */
void bdm_bounce_idle(void);
/* Make [lo, hi) (inside one allocation) resident; for a fault, the chunk
 * around lo.  Returns 0, 1 (not managed), 2 (uffd fault: the data is being
 * read; installing it wakes the faulting thread) or -errno (prepare only). */
int bdm_ensure(uintptr_t lo, uintptr_t hi, int write, int in_fault);
/* Release the memory of sbpages [s0, s1) of a without writing it.  Returns
 * 0 or -errno. */
int bdm_release_mem(alloc_t *a, size_t s0, size_t s1);
/* The same, stopping the process with a message if it fails. */
void bdm_release_mem_or_die(alloc_t *a, size_t s0, size_t s1);
/* Write dirty sbpages and release all memory of a; adds the bytes to give
 * back to *rel.  On error what was not written stays resident and dirty. */
/* First pass of an unload: release the clean resident sbpages of a (adds
 * their accounted bytes to *rel) before any write-back starts. */
int bdm_unload_clean(alloc_t *a, size_t *rel);
int bdm_unload_one(alloc_t *a, size_t *rel);
/* BD_MEM_ACQUIRE_SHRINK with a size: unload at least want bytes, the
 * allocations touched longest ago first, never the one with id keep (all
 * memory, keep's too, when the others do not hold want).  Called without
 * the lock by the thread whose load was refused. */
int bdm_shrink(size_t want, uint64_t keep);
/* Free everything that belongs to a (memory, file, record); the caller
 * removes it from the table.  Returns accounted bytes to release. */
size_t bdm_destroy(alloc_t *a);

/* mem_alloc.c: allocation records, table, metadata, backing files. */
void bdm_alloc_put(alloc_t *a);
/* Count bytes read back (write 0) or written for a (G.st and a's own). */
void bdm_count_io(alloc_t *a, int write, uint64_t bytes);
/* cfg.alloc_report: one line on stderr for a, about to be destroyed. */
void bdm_alloc_report(const alloc_t *a);
/* Index of the last allocation with base <= addr, or -1. */
long bdm_tab_idx(uintptr_t addr);
void bdm_meta_free(alloc_t *a);
void bdm_backing_done(alloc_t *a);
void bdm_backing_drop_cache(int fd, off_t off, size_t len, int written);
void bdm_backing_remove(alloc_t *a);
/* The path of a's backing file into out (sizeof G.dir + 64 bytes). */
void bdm_backing_path(const alloc_t *a, char *out);

/* core (called by the tracking back ends) */
alloc_t *bdm_lookup(uintptr_t addr);
/* Handle an access at addr.  write: 1 write, 0 read, -1 unknown.
 * Returns 0 handled (or nothing to do), 1 if addr is not managed. */
int bdm_fault(uintptr_t addr, int write);
int bdm_open_backing(alloc_t *a, int create);
/* uffd handler thread: reap finished I/O slots and continue read-ahead. */
void bdm_io_progress(void);
/* uffd sync write-protect mode: a write to a protected page at addr.
 * Returns 0 handled, 1 not managed. */
int bdm_wp_fault(uintptr_t addr);

/* uffd back end */
int bdm_uffd_setup(int forced);
void bdm_uffd_teardown(void);
int bdm_uffd_map(uintptr_t base, size_t len);
void bdm_uffd_unmap(uintptr_t base, size_t len);
void bdm_uffd_install(uintptr_t dst, const void *src, size_t len);
void bdm_uffd_install_mode(uintptr_t dst, const void *src, size_t len, int wp);
void bdm_uffd_unprotect(uintptr_t addr, size_t len);
void bdm_uffd_wake(uintptr_t addr, size_t len);
int bdm_uffd_scan_dirty(alloc_t *a);

/* mprotect back end */
int bdm_prot_setup(void);
void bdm_prot_teardown(void);
int bdm_prot_set(uintptr_t addr, size_t len, int prot);
int bdm_prot_punch(uintptr_t addr, size_t len);
static inline uint8_t *bdm_stage(uintptr_t addr)
{
    return (uint8_t *)(bdm_g.stage_lo + (addr - bdm_g.arena_lo));
}

/* mem_dedup.c: identical sbpages stored once per node.  Everything is
 * called with the lock held; the node's table has its own (robust,
 * process-shared) lock, taken inside and never held while G.lock is
 * waited for. */
int bdm_dd_setup(void *share, size_t len);
void bdm_dd_teardown(void);
/* Room for the slot numbers of nsb sbpages. */
int bdm_dd_resize(alloc_t *a, size_t nsb);
/* Drop the stored copies of sbpages [s0, s1) that are in the store. */
void bdm_dd_drop(alloc_t *a, size_t s0, size_t s1);
/* Unload, resident dirty sbpage i (hashed by classify): 0 = nothing to
 * write (an identical copy is stored, or it is all zeros: the state says
 * which), 1 = write it where bdm_loc says (a store slot of its own or the
 * allocation's file). */
int bdm_dd_plan(alloc_t *a, size_t i);
/* The write of sbpages [s, s+n) reached storage: index their slots. */
void bdm_dd_written(alloc_t *a, size_t s, size_t n);
/* Punch the freed slots still pending. */
void bdm_dd_flush(void);
/* Does a have anything stored (own file or store)? */
static inline int bdm_has_stored(const alloc_t *a) { return a->has_file || a->nslot > 0; }
/* Where sbpage i is (to be) stored: the store slot + 1, or 0 for its own
 * file. */
static inline uint32_t bdm_loc(const alloc_t *a, size_t i) { return a->slot ? a->slot[i] : 0; }
/* Can sbpages i and j > i be read or written by one request (same file,
 * consecutive offsets)? */
static inline int bdm_rm(const alloc_t *a, size_t i) { return a->rm ? a->rm[i] : 0; }
static inline int bdm_loc_run(const alloc_t *a, size_t i, size_t j)
{
    uint32_t li = bdm_loc(a, i), lj = bdm_loc(a, j);
    if (bdm_rm(a, i) != bdm_rm(a, j)) /* remote and local copies never share a request */
        return 0;
    return li == 0 ? lj == 0 : lj != 0 && lj - li == j - i;
}

/* mem_remote.c: the remote tier (G.rput). */
/* Room for the remote marks of nsb sbpages. */
int bdm_rm_resize(alloc_t *a, size_t nsb);
/* The remote copies of sbpages [s0, s1) are no longer wanted: forget them
 * (cfg.rdrop) and clear their marks. */
void bdm_rm_forget(alloc_t *a, size_t s0, size_t s1);
/* An I/O worker's request with IO_REMOTE: through the tier, a refused
 * write falling back to sl->fd (IO_RTRIED).  Returns 0 or -errno. */
int bdm_rmt_io(struct io_slot *sl);
/* Read n sbpages of a from s (all remote) into buf, outside the I/O slots
 * (a synchronous load).  0 or -errno. */
int bdm_rmt_read(alloc_t *a, size_t s, size_t n, void *buf);

/* Shared by bd_mem.c and mem_prefetch.c (under the lock unless noted). */
static inline int bdm_is_ar(void) { return bdm_g.strategy != BD_MEM_LRLW; }
/* Does a look-ahead load skip sbpage state f?  (Not warm in the phase it
 * loads, or nothing stored.) */
static inline int bdm_pf_skip(uint8_t f)
{
    uint8_t w = (uint8_t)(SB_WARM << bdm_g.pf_slot);
    return (f & (w | SB_DISK)) != (w | SB_DISK);
}

/* Account n more bytes to a (acquired from the budget already). */
void bdm_acct_add(alloc_t *a, size_t n);
/* A free I/O slot or NULL (reaps finished ones first); never waits. */
io_slot_t *bdm_slot_free(void);
/* Start request op (IO_READ, IO_WRITE) on sbpages [s, s+n) of a in slot sl. */
void bdm_slot_go(io_slot_t *sl, alloc_t *a, int op, size_t s, size_t n, int flags, int fd);
/* A free I/O slot, waiting for (and reaping) one if all are busy. */
io_slot_t *bdm_slot_get(void);
/* mem_dedup.c: write the dirty run [i, j) of a (at most one I/O piece)
 * except the sbpages that need no write, whose memory is released at once;
 * *fd is a's backing file, opened on first need.  Returns 0 or -errno. */
int bdm_dd_write(alloc_t *a, size_t i, size_t j, int *fd);
/* mem_alloc.c: room for need bytes in the per-sbpage array p of *bytes
 * (an anonymous mapping grown by mremap, new bytes zero): the array, or
 * NULL. */
void *bdm_meta_grow(void *p, size_t *bytes, size_t need);
/* mem_uffd.c: install zeros in sbpages [s, s+n) of a (write-protected if
 * wp); nothing on the mprotect path. */
void bdm_uffd_zero_run(alloc_t *a, size_t s, size_t n, int wp);

/* mem_preclean.c */
int bdm_pc_start(void);
void bdm_pc_stop(void);
int bdm_pc_resize(alloc_t *a, size_t nsb);
/* Write-protect what was written in [s0, s1) of a and collect it
 * (PAGEMAP_SCAN with PM_SCAN_WP_MATCHING); mem_uffd.c.  Calls found(a, s)
 * for every sbpage with a written page, possibly several times.  Returns 0
 * or -errno. */
int bdm_uffd_scan_rearm(alloc_t *a, size_t s0, size_t s1, void (*found)(alloc_t *, size_t));

/* Reap finished I/O slots and update the sbpages' state. */
void bdm_reap_done(void);
/* Keep the free I/O slots busy with every allocation's stream. */
void bdm_pump_all(void);
/* No I/O slot is busy. */
int bdm_io_idle(void);

#endif
