/*
 * bd_mem.h - storage-backed memory manager (SBMA) for BDMPI slaves.
 *
 * The manager owns a slave's large allocations.  Each allocation is cut into
 * sbpages (a fixed number of OS pages).  For every sbpage it knows whether
 * the sbpage is resident, whether it was written since it was last made
 * resident (dirty), and whether a copy exists in the allocation's backing
 * file (on storage).  bd_mem_unload_all() writes only dirty sbpages and
 * releases all memory; the next touch of an unloaded sbpage reads it back if
 * (and only if) it is on storage, otherwise it reads as zeros.  A sbpage that
 * is never written is never written to or read from storage.
 *
 * Strategies (see the SBMA paper, sections 3.1-3.3):
 *   BD_MEM_ARAW  aggressive read, aggressive write: the runtime calls
 *                bd_mem_block_point() at every blocking MPI call, which
 *                unloads everything; the first touch of an allocation
 *                accounts all of it and starts loading every sbpage of it
 *                that is on storage: the touched chunk first, the rest in
 *                the background, in address order (an unload stops it).
 *   BD_MEM_ARLW  like ARAW for loading; bd_mem_block_point() does nothing,
 *                the runtime calls bd_mem_unload_all() when the master asks.
 *   BD_MEM_LRLW  lazy read: a touch loads only the chunk (cfg.chunk bytes,
 *                at least 64 KiB, aligned) around the touched address;
 *                unloading as in ARLW.  Faults that follow each other's
 *                chunks form a sequential stream, which is read ahead
 *                (stored sbpages only) by a window that doubles from one
 *                chunk up to cfg.readahead (8 MiB) past the last fault; the
 *                read-ahead is acquired from the budget like any other load
 *                before it becomes resident.  Any other fault ends the stream.
 *
 * I/O: backing-file reads and writes run on IO_NSLOT (4) worker threads,
 * one request of at most 1 MiB (or one sbpage) each, so up to 4 requests are
 * in flight.  A read is installed by its worker (UFFDIO_COPY, which wakes the
 * threads waiting for those pages, or mprotect on the fallback path), so the
 * application runs on the first data while the rest is still being read.
 * Write-back writes dirty runs through the same slots and releases each
 * piece as soon as it is on storage.  On uffd each slot owns a 1 MiB bounce
 * buffer (4 MiB in all, given back with MADV_DONTNEED at every unload).
 *
 * ---------------------------------------------------------------------------
 * Write prediction (cfg.predict; on by default where the CPU has PCLMULQDQ)
 * ---------------------------------------------------------------------------
 * Exact write tracking costs a fault per first write, per 4 KiB page or per
 * sbpage (below), which halves the speed of programs that rewrite their
 * data in every phase.  With write prediction an sbpage that was written
 * during its last residency (and a fresh one) is expected to be written
 * again: it is loaded writable and untracked (SB_VERIFY), so writes to it
 * cost nothing.  At unload its content hash is compared with the hash of
 * the copy on storage (recorded when that copy was written), or with the
 * hash of zeros if it was never stored; only if they differ is it written.
 * An sbpage that proves unchanged is tracked exactly the next time it is
 * loaded, so data that a program only reads costs one hash pass after its
 * last write and nothing afterwards.  "Only dirty data is written" holds
 * with "dirty" meaning "different from storage": rewriting the same bytes
 * writes nothing.
 *   The hash (mem_hash.c) is a universal hash with a random per-process
 * key, the polynomial hash over GF(2^128): two different contents of n
 * 16-byte blocks collide for at most n of the 2^128 keys, whatever the
 * data, so a change is missed with probability at most n/2^128 (2^-112 for
 * 1 MiB sbpages) per unload of the sbpage.  It runs at memory speed; at
 * unload the hashing of one piece overlaps the writing of the previous
 * ones.  Worst case: a predicted sbpage that is loaded and left unchanged
 * costs hashing it, which is cheaper than reloading it (mem_bench's "clean
 * unload"; figures in docs/performance.md).  Without PCLMULQDQ the portable
 * hash is far slower and prediction is off unless forced.  Ranks take
 * cfg.predict from bdmpiexec's -mem-predict.
 *
 * ---------------------------------------------------------------------------
 * Tracking paths (which one runs, and what it costs)
 * ---------------------------------------------------------------------------
 * All managed memory lives in one virtual arena reserved at bd_mem_init()
 * (PROT_NONE, MAP_NORESERVE; default up to 16 TiB of address space, no
 * memory).  That makes "is this pointer ours?" a single range comparison.
 *
 * 1. userfaultfd path (BD_MEM_TRACK_UFFD).  Selected by BD_MEM_TRACK_AUTO
 *    when userfaultfd(2) can be opened and the kernel offers
 *    UFFD_FEATURE_WP_ASYNC (Linux 6.7+) and PAGEMAP_SCAN on
 *    /proc/self/pagemap.  Memory is private anonymous memory registered in
 *    MISSING and WP mode.
 *      - first touch of a non-resident page: the kernel sends a MISSING event
 *        to a handler thread owned by the manager; it hands the chunk to the
 *        I/O workers, which read it into their bounce buffers (O_DIRECT) and
 *        install it with UFFDIO_COPY in write-protected mode
 *        (UFFDIO_COPY_MODE_WP), which is atomic per page, so other threads
 *        never see a half-loaded sbpage; the copy wakes the faulting thread.
 *        Non-stored sbpages are installed as zeros by the handler.
 *      - writes, sbpages below 1 MiB: with WP_ASYNC the kernel lifts the
 *        write protection itself, without any signal or message, and
 *        remembers the page as written; every first write to a 4 KiB page
 *        is still a kernel fault.  Transparent huge pages do not
 *        help: the first write splits the PMD and faults per 4 KiB page.
 *      - writes, sbpages of 1 MiB and more: synchronous write-protect
 *        faults (no WP_ASYNC): the first write to a clean sbpage sends one
 *        message; the handler unprotects the whole sbpage
 *        (UFFDIO_WRITEPROTECT, which makes its pages writable and wakes the
 *        thread) and marks it dirty: one round trip per sbpage instead of a
 *        fault per 4 KiB page.  A write fault on a never-stored sbpage
 *        installs it writable at once.  cfg.wp forces either mode (ranks:
 *        -mem-wp).  Below 1 MiB sbpages the round trip costs more than the
 *        4 KiB faults it saves (measurements in docs/performance.md).
 *      - unload: one PAGEMAP_SCAN ioctl (PAGE_IS_WRITTEN and PAGE_IS_PRESENT)
 *        per allocation lists the written pages; the sbpages containing them
 *        are written back, then MADV_DONTNEED releases everything.
 *    Costs: one handler-thread round trip per demand-loaded chunk (pages
 *    that read-ahead or an AR stream installed first cost none; AR
 *    allocations, accounted as a whole, are zero-filled in 2 MiB pieces), a
 *    copy from the bounce buffer (by the I/O worker), per first write one
 *    kernel fault per 4 KiB page (async) or one round trip per sbpage
 *    (sync), no signals, no VMA fragmentation.  As root (or with vm.unprivileged_userfaultfd=1, or
 *    with access to /dev/userfaultfd) faults raised by the kernel itself are
 *    handled too, so read(2)/write(2)/recv(2) into unloaded managed memory
 *    simply block until the handler thread has loaded it.  Unprivileged users
 *    with vm.unprivileged_userfaultfd=0 get a UFFD_USER_MODE_ONLY descriptor:
 *    user-space accesses work, but a raw syscall that touches a non-resident
 *    page fails with EFAULT, so buffers must be prepared with
 *    bd_mem_prepare() first (as in the fallback path; the syscall wrappers do
 *    it, see below).  bd_mem_stats_t.kernel_faults tells which one you got.
 *
 * 2. mprotect fallback (BD_MEM_TRACK_MPROTECT).  Used when userfaultfd is
 *    unavailable (EPERM, ENOSYS, missing feature) or when forced.  The arena
 *    is a MAP_SHARED mapping of one memfd; a second, always read-write "staging"
 *    view of the same memfd is used by the manager to fill and write back
 *    pages, so the application view can stay PROT_NONE until a load is
 *    complete (atomic sbpage update for multithreaded programs).  Per sbpage
 *    the application view is PROT_NONE (not resident), PROT_READ (clean) or
 *    PROT_READ|PROT_WRITE (dirty); protection changes are coalesced over runs
 *    of sbpages.  A SIGSEGV handler loads on access and marks sbpages dirty on
 *    the first write, mapping the sbpage writable at once
 *    (MADV_POPULATE_WRITE); loads map what they read (MADV_POPULATE_READ),
 *    so neither costs a kernel fault per 4 KiB page afterwards.  Memory is released with FALLOC_FL_PUNCH_HOLE.
 *    Costs: one SIGSEGV per loaded chunk and one more per first write to a
 *    loaded sbpage (on x86-64 the error code tells a write fault on a
 *    non-resident sbpage apart, so that case needs one signal, not two); one VMA per run of sbpages with equal protection, so
 *    scattered writes fragment the address space (vm.max_map_count, usually
 *    65530): if mprotect fails with ENOMEM the allocation is degraded to "all
 *    resident, all dirty" (correct, but the next unload writes all of it).
 *    Raw syscalls reading into non-resident or clean memory fail with
 *    EFAULT: bd_mem_prepare() must be called on buffers before they are
 *    handed to the kernel (the syscall wrappers do it, see below).
 *
 * Selection: cfg.track (ranks: bdmpiexec's -mem-track).  Forcing uffd when
 * it is not available makes bd_mem_init() fail with -ENOTSUP.  The manager
 * reads no environment variable: bd_mem_config_t carries all of its
 * configuration.
 *
 * Storage: one file per allocation in cfg.dir, mode 0600, created at the
 * first write-back, opened with O_DIRECT (falls back to buffered I/O plus
 * POSIX_FADV_DONTNEED when the file system refuses O_DIRECT), removed by
 * bd_mem_free()/realloc and by bd_mem_fini().  Writes and reads are issued
 * in runs of whole sbpages straight from/to page-aligned memory.
 *
 * Identical sbpages stored once (cfg.share; mem_dedup.c has the details):
 * processes that pass the same shared region share a store file,
 * dir/bdmem.store, of one-sbpage slots with reference counts, indexed by
 * content hash.  At unload a dirty sbpage whose hash matches an indexed
 * slot is compared byte for byte with that slot's copy (read back: the hash
 * is universal, not collision resistant) and, if equal, refers to it
 * instead of being written; otherwise it is written to a slot of its own
 * (rewritten in place if nobody else refers to it, a fresh slot if others
 * do: copy on write), indexed once the write completed.  All-zero sbpages
 * are not stored.  References are dropped by free, realloc, discard and
 * exit; a slot nobody refers to is punched out of the file.  With the
 * table full, sbpages go to their allocation's own file as without it.
 * Needs the fast hash (PCLMULQDQ); off without it.
 *
 * Syscalls on managed memory: programs linked with bdmem_override (every
 * BDMPI rank, except in sanitizer builds) get syscall-override.c, which
 * wraps read, pread(64), readv, preadv(64)(v2), recv, recvfrom, recvmsg,
 * write, pwrite(64), writev, pwritev(64)(v2), send, sendto, sendmsg, fread,
 * fwrite, fread_unlocked, fwrite_unlocked and the _FORTIFY_SOURCE variants
 * (__read_chk, ...): when the buffer intersects the arena they call
 * bd_mem_prepare() on it (for_write for inputs) before the C library's
 * function, on every path, so these calls work and never see EFAULT on the
 * mprotect path or with a user-mode-only userfaultfd either.  Unmanaged
 * buffers cost one lock-free range check (bd_mem_overlaps).  Transfers over
 * 8 MiB go in 8 MiB steps (never for datagrams, MSG_PEEK, recvmsg/sendmsg)
 * so a short read into a huge buffer does not load all of it; a syscall's
 * buffer is still part of the rank's working set, which must fit in the
 * budget.  Also wrapped: recvmmsg, sendmmsg, getrandom, getentropy,
 * vmsplice; a FILE buffer given to setvbuf/setbuffer/setbuf in managed
 * memory is replaced by an unmanaged one of the same size.  Not covered
 * (EFAULT possible unless the kernel's faults are handled): asynchronous
 * I/O (aio, io_uring) and buffers in use by a syscall in one thread while
 * another blocks in MPI and the rank is unloaded; docs/design.md has the
 * full list.  The manager's own I/O on backing files calls the kernel
 * directly, never the wrappers.
 *
 * Threads: all functions are thread safe.  Several threads may fault on the
 * same sbpage at once.  bd_mem_unload_all() and bd_mem_discard() must not
 * run while other threads write the memory they unload/discard (in BDMPI
 * they run when the slave is blocked in an MPI call).  The acquire/release
 * callbacks run without internal locks held, possibly in the fault handler
 * (the handler thread or a SIGSEGV handler); they must not touch managed
 * memory and must not allocate managed memory.
 *
 * fork(): the manager is inactive in the child (pthread_atfork); freeing
 * inherited managed pointers there is a no-op and malloc goes to libc.  On
 * the uffd path the child has a private copy of the resident pages
 * (non-resident ones read as zeros); on the mprotect path the arena is
 * MADV_DONTFORK, so the child cannot corrupt the parent's memory through
 * the shared memfd (touching it crashes).  Only exec-style children are
 * supported.
 *
 * Signals: the mprotect path installs a SIGSEGV handler at bd_mem_init and
 * chains to the previous handler for faults that are not its own; a program
 * that replaces the SIGSEGV handler afterwards breaks that path.
 *
 * Costs: bench/mem_bench measures every path, strategy and sbpage size
 * against unmanaged memory and raw O_DIRECT I/O; docs/performance.md has
 * the figures and the machines they come from.
 *
 * Errors: functions return 0 or -errno.  A failure that cannot be reported
 * (I/O error while loading in the fault handler, a refused acquire) prints a
 * message naming the directory and byte count with write(2) and aborts;
 * data is never dropped silently.  bd_mem_free() of a pointer inside the
 * arena that is not the start of a live allocation (double free, interior
 * pointer) aborts with a message.
 */
#ifndef BD_MEM_H
#define BD_MEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The manager is built with -fvisibility=hidden.  BD_MEM_EXPORT marks what
 * the shared library linking it (libbdmpi) must still export: the allocation
 * and system-call overrides (alloc-override.c, syscall-override.c), which
 * interpose on the C library's functions.  A program queries its manager
 * through BDMPI_Mem_info (bdmpi.h). */
#define BD_MEM_EXPORT __attribute__((visibility("default")))

typedef enum { BD_MEM_ARAW = 0, BD_MEM_ARLW = 1, BD_MEM_LRLW = 2 } bd_mem_strategy_t;

typedef enum {
    BD_MEM_TRACK_AUTO = 0,    /* uffd when available, else mprotect */
    BD_MEM_TRACK_UFFD = 1,    /* userfaultfd + WP_ASYNC + PAGEMAP_SCAN, or fail */
    BD_MEM_TRACK_MPROTECT = 2 /* mprotect + SIGSEGV fallback */
} bd_mem_track_t;

typedef enum {
    BD_MEM_WP_AUTO = 0,  /* sync from 1 MiB sbpages up, async below */
    BD_MEM_WP_ASYNC = 1, /* the kernel tracks first writes (UFFD_FEATURE_WP_ASYNC) */
    BD_MEM_WP_SYNC = 2   /* the handler thread unprotects a whole sbpage per first write */
} bd_mem_wp_t;

typedef struct {
    const char *dir;  /* existing private directory for backing files (required) */
    size_t sbpage;    /* bytes, multiple of the OS page size; 0 = 64 KiB */
    size_t threshold; /* bd_mem_threshold(): allocations >= this are managed; 0 = 1 MiB */
    size_t chunk;     /* LRLW load unit, rounded up to whole sbpages; 0 = 64 KiB (min 64 KiB) */
    size_t arena;     /* virtual address space to reserve; 0 = try 16 TiB downwards */
    size_t readahead; /* LRLW read-ahead window for sequential faults; 0 = 8 MiB,
                       * (size_t)-1 = none */
    bd_mem_strategy_t strategy;
    bd_mem_track_t track;
    bd_mem_wp_t wp;    /* write tracking mode of the uffd path */
    const char *label; /* names the process in fatal messages (e.g. "rank 3"); may be NULL */
    int predict;       /* write prediction (see "Write prediction" above): 0 = on when
                        * a fast hash exists (PCLMULQDQ), 1 = on, -1 = off */
    int verify;        /* 0 = on: every sbpage read back from storage is checked against
                        * the CRC32C of what was written (a mismatch stops the process:
                        * "storage returned corrupted data"); -1 = off (benchmarks) */
    /* Memory budget accounting.  acquire(ctx, n) is called before n more bytes
   * become resident and returns 0 when granted (it may block, e.g. while the
   * master makes other slaves unload).  BD_MEM_ACQUIRE_SHRINK means "not
   * granted: give back *give_back bytes of what you hold (0: all of it),
   * then ask again": the manager unloads that much, the allocations touched
   * longest ago first and never the one the load is for (storing what
   * changed, as bd_mem_unload_all does), or all its memory, and retries a
   * demand load; an optional read-ahead just stops.  The runtime answers
   * so when every process holding memory waits for more and none can be
   * unloaded under it.  A negative return aborts the program when it
   * happens in the fault handler; bd_mem_prepare() returns it instead.  release(ctx, n) is called after n bytes
   * stopped being resident (unload, discard, shrink, free, fini).  AR
   * strategies account a whole allocation at its first touch; LRLW accounts
   * each loaded chunk (the runtime may batch requests to the master).
   * NULL = no accounting. */
    int (*acquire)(void *ctx, size_t bytes, size_t *give_back);
    void (*release)(void *ctx, size_t bytes);
    void *ctx;
    /* Storage I/O notifications (time accounting, tracing), NULL = none:
     * io_begin(ctx, write) just before a read (write = 0) or write of a
     * backing file starts, io_end(ctx, write, bytes, t0) just after it
     * ended, t0 being its CLOCK_MONOTONIC start in ns.  Called by whichever
     * thread does the I/O (I/O workers, the fault handler, a SIGSEGV
     * handler, the caller of an unload), with or without the manager's
     * lock: they must be async-signal-safe and take no lock.  write = 2: a
     * pre-cleaning write, in the background of the running process. */
    void (*io_begin)(void *ctx, int write);
    void (*io_end)(void *ctx, int write, size_t bytes, uint64_t t0_ns);
    /* Storage deduplication between the processes of a node (see "Identical
     * sbpages stored once" above), NULL = off: share is share_len bytes of
     * memory shared by every process that passes the same region, zero-filled
     * before the first of them starts (the first one initialises it), and
     * all of them must pass the same dir and sbpage.  At least
     * bd_mem_share_min() bytes. */
    void *share;
    size_t share_len;
    /* Remote-memory tier (the runtime's -mem-remote), NULL = off.  Stored
     * copies may live outside this process, in a store the runtime reaches
     * (another node's memory): the manager hands it whole runs of sbpages
     * of an allocation (id: the allocation's unique number, sb: the first
     * sbpage, n sbpages, at most 1 MiB) through lane k (0..3, the I/O worker
     * that does the request; a lane is used by one request at a time, and
     * the runtime's lanes serialize other users).  rput stores buf and
     * returns 0 (stored there, which replaces any older copy there), 1
     * (refused: no room; any older copy there is gone, the manager stores
     * the run locally as without the tier) or -errno; rget fills buf with
     * what the last accepted rput stored, returning 0 or -errno (fatal);
     * rdrop forgets copies the manager no longer needs (freed, discarded,
     * stored locally since).  Called by I/O workers, the unloading thread
     * and fault handlers, with or without the manager's lock: only
     * async-signal-safe work.  Off when sbpage is over 1 MiB. */
    int (*rput)(void *ctx, int lane, uint64_t id, size_t sb, size_t n, const void *buf);
    int (*rget)(void *ctx, int lane, uint64_t id, size_t sb, size_t n, void *buf);
    void (*rdrop)(void *ctx, uint64_t id, size_t sb, size_t n);
    /* Pre-cleaning (write-behind), 1 = on: while the process runs (between
     * bd_mem_phase() and bd_mem_idle()), a thread of the manager scans the
     * resident memory every 10 ms with PAGEMAP_SCAN, re-arming the write
     * protection of what was written (PM_SCAN_WP_MATCHING), and writes back
     * in the background the dirty sbpages that the last scan found
     * unwritten; they stay resident and clean, and a later write makes them
     * dirty again.  Only on the uffd path with asynchronous write tracking
     * (ignored elsewhere).  The scans come every preclean_tick_us of the
     * process's CPU time (0 = 10 ms): a program that waits for a load does
     * not make its data look unwritten. */
    int preclean;
    unsigned preclean_tick_us;
    /* Tests: each pre-cleaning write waits this long between taking the
     * CRC32C of the data and writing it, so that the program's writes and
     * the next scans fall inside write-backs in flight.  0 = none. */
    unsigned preclean_delay_us;
    /* Debugging: when an allocation is destroyed (free, realloc, fini) and
     * the manager moved any of it, one line on stderr gives its size and
     * the bytes read back and written for it (written with write(2): free
     * may run inside malloc). */
    int alloc_report;
} bd_mem_config_t;

/* Smallest share_len bd_mem_init accepts. */
size_t bd_mem_share_min(void);

#define BD_MEM_ACQUIRE_SHRINK 1
/* cfg.rput's refusal (lane -1 in rget: any lane the runtime has free). */
#define BD_MEM_REMOTE_REFUSED 1

typedef struct {
    uint64_t bytes_written;  /* bytes written to backing files */
    uint64_t bytes_read;     /* bytes read from backing files */
    uint64_t loads;          /* load operations (chunks or whole allocations) */
    uint64_t unloads;        /* allocations unloaded (memory released) */
    uint64_t prefetched;     /* bytes accounted for look-ahead loads (bd_mem_prefetch) */
    uint64_t shrinks;        /* times memory was given back on the budget's request
                              * while running (BD_MEM_ACQUIRE_SHRINK) */
    uint64_t shrunk_bytes;   /* bytes those shrinks gave back */
    uint64_t faults;         /* fault events handled (uffd messages or SIGSEGVs) */
    uint64_t io_ns;          /* wall time spent in storage I/O */
    uint64_t resident;       /* bytes currently accounted as resident */
    uint64_t peak_resident;  /* maximum of resident */
    uint64_t nallocs;        /* live managed allocations */
    uint64_t managed_bytes;  /* sum of their sizes (rounded to sbpages) */
    int track;               /* bd_mem_track_t actually in use */
    int kernel_faults;       /* 1 if syscalls into non-resident memory work without prepare */
    int direct_io;           /* 1 if backing files use O_DIRECT */
    uint64_t unwritten;      /* dirty bytes the last bd_mem_unload_all() could not
                               * store (0 after one that succeeded) */
    int predict;             /* write prediction in use */
    uint64_t bytes_hashed;   /* bytes hashed at unloads (write prediction) */
    uint64_t verified_clean; /* bytes loaded untracked that proved unchanged (mispredicted) */
    uint64_t hash_ns;        /* time spent hashing */
    int dedup;               /* storage deduplication in use (cfg.share) */
    uint64_t dedup_bytes;    /* bytes not written: an identical copy was stored on the node */
    uint64_t dedup_zero;     /* bytes not written: the sbpage was all zeros */
    uint64_t dedup_verify;   /* bytes read to compare a candidate copy with the data */
    uint64_t remote_put;     /* bytes stored through cfg.rput (remote tier) */
    uint64_t remote_get;     /* bytes read back through cfg.rget */
    uint64_t remote_refused; /* bytes cfg.rput refused, stored locally instead */
    int preclean;            /* pre-cleaning in use (cfg.preclean where the path allows it) */
    uint64_t precleaned;     /* bytes written back by pre-cleaning while running */
    uint64_t preclean_ns;    /* time the pre-cleaning thread held the lock (scans, hashing) */
    const char *err_call;    /* the storage call that failed last ("pwrite", "open", ...),
                              * for messages; NULL if none did */
} bd_mem_stats_t;

/* Initialize the manager.  Returns 0, -EALREADY, -EINVAL (bad config),
 * -ENOTSUP (forced uffd unavailable) or another -errno. */
int bd_mem_init(const bd_mem_config_t *cfg);
/* Free every allocation, remove all backing files, release the arena.  All
 * managed pointers become invalid (later bd_mem_free() of them is a no-op). */
void bd_mem_fini(void);
int bd_mem_active(void);

/* Allocation size from which the malloc override manages memory; SIZE_MAX
 * while the manager is not active. */
size_t bd_mem_threshold(void);

/* Managed allocation of size bytes (any size > 0), aligned to
 * max(align, sbpage); align must be 0 or a power of two.  Contents read as
 * zero.  Returns NULL with errno = ENOMEM/EINVAL on failure. */
void *bd_mem_alloc(size_t size, size_t align);
void bd_mem_free(void *p);
/* Grow or shrink keeping contents (in place when possible).  size 0 frees
 * and returns NULL.  p must be managed (or NULL). */
void *bd_mem_realloc(void *p, size_t size);
/* Bytes usable at p (size rounded up to whole sbpages); 0 if not managed. */
size_t bd_mem_usable_size(const void *p);
/* Nonzero if p lies in the managed arena (cheap, lock free).  Does not say
 * whether p is a live allocation. */
int bd_mem_owns(const void *p);
/* Nonzero if [p, p+len) intersects the managed arena while the manager is
 * active (cheap, lock free, async-signal-safe): the fast-path test of the
 * system call wrappers (syscall-override.c). */
int bd_mem_overlaps(const void *p, size_t len)
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 10
    __attribute__((access(none, 1))) /* only the address: read()'s buffer may be uninitialized */
#endif
    ;

/* Write back dirty sbpages of all allocations and release their memory.
 * Returns 0 or -errno (e.g. -ENOSPC); on error nothing unwritten is lost:
 * allocations that could not be written stay resident and dirty, and
 * bd_mem_stats_t.unwritten says how many bytes still need storing. */
int bd_mem_unload_all(void);

/* Phases: the runtime calls bd_mem_phase(key) when the process resumes
 * from a call in which it waited (key names that call); what the residency
 * that follows touches is recorded, at the next full unload, for that key
 * (the last two keys are kept).  The key of the residency under way (after
 * a call that did not wait) continues it and lets pre-cleaning run again. */
void bd_mem_phase(uint64_t key);

/* Look-ahead loading, for a process that waits in the call named key while
 * another runs: start reading back, in the background, what the last
 * residency that began in that call had resident (AR: the allocations it
 * had touched, whole; LRLW: the sbpages), after one request to the budget
 * for all of it.  At most limit bytes: when not all of it fits, the
 * largest allocations that fit (AR) or the first sbpages of each
 * allocation (LRLW) are chosen, so that a budget with room for part of a
 * working set still loads that part ahead.  Returns the
 * bytes it accounted (0: nothing to load), or the budget's refusal (<0).
 * It does not wait for the reads on the uffd path (the I/O workers install
 * the data, the handler thread keeps the streams going, a fault on data
 * still loading waits for it); on the mprotect path it reads everything
 * before it returns.  bd_mem_idle() and unloads stop what is left. */
int64_t bd_mem_prefetch(uint64_t key, uint64_t limit);
/* Called by the runtime when the slave is about to block: unloads
 * everything under ARAW, does nothing otherwise. */
int bd_mem_block_point(void);
/* Called by the runtime when the slave may wait: gives back the memory of
 * the manager's I/O buffers (not accounted in the budget) if no I/O is in
 * flight.  Unload does the same. */
void bd_mem_idle(void);
/* The contents of [addr, addr+len) will be overwritten: sbpages entirely
 * inside the range are dropped without write-back and read as zeros
 * afterwards.  Partially covered sbpages are kept.  Returns 0 or -errno. */
int bd_mem_discard(void *addr, size_t len);
/* The same for the sbpages of the range that are not resident (their
 * stored copy is dropped, so preparing them does not read it); resident
 * ones are left as they are, to be overwritten in place. */
int bd_mem_discard_stored(void *addr, size_t len);
/* Make [addr, addr+len) resident (and writable if for_write) now, so that
 * the kernel can access it in a syscall.  Unmanaged ranges are ignored.
 * Returns 0 or -errno. */
int bd_mem_prepare(const void *addr, size_t len, int for_write);

/* Collective data by reference to its stored copy (issue 13, "move only
 * what must move"): a rank hands the master the node-store slots that hold
 * a buffer it sends, instead of loading the buffer to copy it.
 *
 * In a managed process: when every sbpage that [addr, addr + len) overlaps
 * lies in one allocation, is out of memory, and has its stored copy in the
 * node's store (-mem-dedup) or was never stored (zeros), take a reference
 * on each copy for the caller to hand over, and give the offset of addr in
 * its sbpage (*first), the slots (slots[k]: slot + 1, 0 = zeros), their
 * CRC32C (crcs[k], meaningful when *crc_valid) for k < n.  Returns n (at
 * most max), 0 when that is not so (send by value), or -errno.  The
 * process may change the buffer afterwards: its next write-back of those
 * sbpages goes to fresh slots while the references are held.  The holder
 * reads and gives them back through bd_mem_store.h. */
int bd_mem_store_take(const void *addr, size_t len, size_t max, uint32_t *first, uint32_t *slots,
                      uint32_t *crcs, int *crc_valid);

size_t bd_mem_resident_bytes(void);
void bd_mem_stats(bd_mem_stats_t *out);

#ifdef __cplusplus
}
#endif
#endif /* BD_MEM_H */
