/* mem_preclean.c - pre-cleaning (write-behind) of a running process's
 * managed memory (cfg.preclean, issue 13).
 *
 * Without it, everything a residency changed is written back when the
 * process blocks and is told to unload, while the next process waits for
 * the memory.  With it, a thread of the manager works while the process
 * runs (between bd_mem_phase and bd_mem_idle):
 *
 *   - every tick (10 ms of the process's CPU time, cfg.preclean_tick_us:
 *     a program waiting for a load does not make its data look
 *     unwritten) it scans the resident sbpages with PAGEMAP_SCAN and
 *     PM_SCAN_WP_MATCHING: the kernel lists the pages written since the
 *     last scan and write-protects them again in the same walk.  An sbpage
 *     with a written page is dirty (SB_DIRTY; an untracked one, SB_VERIFY,
 *     stays so: its hash decides);
 *   - a dirty sbpage that the last scan covered and found unwritten is
 *     cold: it is written to its backing file through the I/O slots (at
 *     most PC_MAX_IO requests at a time, so demand loads keep slots), and
 *     stays resident.  SB_DIRTY is cleared when the write is submitted;
 *
 * Correctness: when the write is submitted, every page of the sbpage is
 * write-protected (the last scan re-armed what was written and found
 * nothing written since).  A write by the program after that, even during
 * the write-back, sets the page's written bit again, and the next scan (or
 * the unload's own PAGEMAP_SCAN) makes the sbpage dirty again, so the
 * unload writes it again.  What a torn write stored (data and CRC32C
 * taken at different moments) is therefore never read: a resident dirty
 * sbpage is always written before its memory is released.  An untracked
 * sbpage (write prediction) is cold once a scan re-armed it and the next
 * found it unwritten; its hash against the stored copy's decides whether
 * it is written, as at an unload.
 *
 * An sbpage written again after it was pre-cleaned (PC_AGAIN: its data
 * was cold for a tick only, e.g. scattered updates of a buffer) is not
 * pre-cleaned again while the allocation lives: that write was wasted
 * bandwidth, and the pattern of a program's phases repeats.
 * An sbpage found written at two scans in a row is hot (PC_HOT): it is not
 * re-armed for PC_HOT_SCANS scans, which bounds the cost of re-arming data
 * the program keeps writing (each re-arm costs a kernel fault per 4 KiB
 * page at its next write).  It stays dirty, and the unload writes it.
 *
 * Everything runs under the manager's lock, like a fault; the thread never
 * allocates and never touches the program's memory except to hash it.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mem_internal.h"

#define G bdm_g

#define PC_POLL_MS 2   /* how often the thread looks at the clock */
#define PC_HOT_SCANS 5 /* hot sbpages are scanned again after this many */
#define PC_MAX_IO 2    /* pre-cleaning writes in flight */

static uint64_t pc_clock_ns(clockid_t c)
{
    struct timespec ts;
    if (clock_gettime(c, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The program's CPU time: the process's, less that of the manager's own
 * threads.  Only the pre-cleaning thread calls it.  Counting the manager's
 * threads made ticks pass while the program did not run (preempted on a
 * loaded machine, or waiting for a load the handler and workers serve):
 * the scans' own cost made the next scan due, and an sbpage the program
 * was in the middle of writing looked cold, was pre-cleaned and, written
 * again, was never pre-cleaned again (PC_AGAIN).  The threads are read
 * before the process, so a result can only overstate the program by the
 * little the manager used in between; it is clamped to never decrease. */
static uint64_t pc_now(void)
{
    uint64_t own = 0;
    for (int k = 0; k < G.pc_nown; k++)
        own += pc_clock_ns(G.pc_own[k]);
    uint64_t all = pc_clock_ns(G.pc_clock);
    uint64_t prog = all > own ? all - own : 0;
    if (prog > G.pc_prog)
        G.pc_prog = prog;
    return G.pc_prog;
}

static void pc_own_add(pthread_t th)
{
    clockid_t c;
    if (G.pc_nown < (int)(sizeof G.pc_own / sizeof G.pc_own[0]) &&
        pthread_getcpuclockid(th, &c) == 0)
        G.pc_own[G.pc_nown++] = c;
}

int bdm_pc_resize(alloc_t *a, size_t nsb)
{
    if (!G.preclean)
        return 0;
    void *n = bdm_meta_grow(a->pc, &a->pc_bytes, (nsb ? nsb : 1) * sizeof(uint16_t));
    if (!n)
        return -ENOMEM;
    a->pc = n;
    return 0;
}

static void pc_reset_all(void)
{
    for (size_t k = 0; k < G.ntab; k++)
        if (G.tab[k]->pc)
            for (size_t i = 0; i < G.tab[k]->nsb; i++)
                G.tab[k]->pc[i] &= PC_IO | PC_DONE | PC_AGAIN; /* generations only */
}

/* The scan found a written page in sbpage s of a. */
static void pc_found(alloc_t *a, size_t s)
{
    uint16_t p = a->pc[s];
    if (p & PC_FOUND)
        return; /* another page of the same sbpage */
    p |= PC_FOUND;
    if (p & PC_PREV)
        p |= PC_HOT;
    if (p & PC_DONE)
        p |= PC_AGAIN; /* its pre-cleaning was a write too many */
    a->pc[s] = p;
    /* an untracked sbpage stays untracked: its hash decides, at the unload
     * or when it is pre-cleaned */
    if (!(a->st[s] & SB_VERIFY))
        a->st[s] |= SB_DIRTY;
}

/* One scan of every allocation's resident (or loading) sbpages that are
 * not hot.  Returns 0 or -errno; on an error the state of what the failed
 * walk covered is unknown, so every such sbpage is taken as written. */
static int pc_scan(void)
{
    G.pc_gen = G.pc_gen >= 255 ? 1 : G.pc_gen + 1;
    if (G.pc_gen == 1)
        pc_reset_all(); /* stale generations must never look current */
    int cool = ++G.pc_scans % PC_HOT_SCANS == 0;
    for (size_t k = 0; k < G.ntab; k++) {
        alloc_t *a = G.tab[k];
        if (!a->pc || (a->nres == 0 && a->nload == 0))
            continue;
        for (size_t i = 0; i < a->nsb;) {
            uint8_t f = a->st[i];
            if (cool)
                a->pc[i] &= (uint16_t)~PC_HOT;
            if (!(f & (SB_RES | SB_LOADING)) || (a->pc[i] & PC_HOT)) {
                i++;
                continue;
            }
            size_t j = i;
            while (j < a->nsb && (a->st[j] & (SB_RES | SB_LOADING)) &&
                   (cool || !(a->pc[j] & PC_HOT))) {
                uint16_t p = a->pc[j];
                if (cool)
                    p &= (uint16_t)~PC_HOT;
                /* covered by this scan: found or not is decided below */
                a->pc[j] = (uint16_t)((p & (PC_HOT | PC_IO | PC_DONE | PC_AGAIN)) |
                                      ((p & PC_FOUND) ? PC_PREV : 0) | G.pc_gen);
                j++;
            }
            int rc = bdm_uffd_scan_rearm(a, i, j, pc_found);
            if (rc) {
                for (size_t x = i; x < j; x++) {
                    a->pc[x] |= PC_FOUND;
                    if (!(a->st[x] & SB_VERIFY))
                        a->st[x] |= SB_DIRTY;
                }
                return rc;
            }
            i = j;
        }
    }
    return 0;
}

/* Is sbpage i of a cold: resident, changed (or untracked), covered by the
 * last scan, which found it unwritten, and not being written already? */
static int pc_cold(const alloc_t *a, size_t i)
{
    uint8_t f = a->st[i];
    uint16_t p = a->pc[i];
    if ((f & (SB_RES | SB_LOADING)) != SB_RES || !(f & (SB_DIRTY | SB_VERIFY)))
        return 0;
    return (p & (PC_GEN | PC_FOUND | PC_HOT | PC_IO | PC_AGAIN)) == G.pc_gen;
}

/* Cold sbpage i is about to be written: record the hash of what is
 * written (write prediction, deduplication).  An untracked one that proves
 * unchanged becomes tracked and clean (it was re-armed by a scan) and
 * returns 0; otherwise it is dirty and 1 is returned. */
static int pc_prepare(alloc_t *a, size_t i)
{
    uint8_t f = a->st[i];
    if (!(G.predict || G.dd))
        return 1;
    uint64_t h[2];
    uint64_t t0 = bdm_now_ns();
    bdm_hash((const void *)(a->base + i * G.sbpage), G.sbpage, h);
    if (G.predict) {
        G.st.hash_ns += bdm_now_ns() - t0;
        G.st.bytes_hashed += G.sbpage;
    }
    uint64_t *old = a->hash + 2 * i;
    if (!(f & SB_DIRTY) && (f & SB_VERIFY)) {
        int same = (f & SB_DISK) ? h[0] == old[0] && h[1] == old[1] : (h[0] | h[1]) == 0;
        a->st[i] = (uint8_t)(f & ~SB_VERIFY);
        if (same)
            return 0;
    }
    old[0] = h[0];
    old[1] = h[1];
    a->st[i] = (uint8_t)((a->st[i] & ~(SB_VERIFY | SB_COLD)) | SB_DIRTY);
    return 1;
}

/* Pre-cleaning writes in flight, or PC_MAX_IO while reads are in flight
 * or a stream has more to read: the program's loads go first,
 * pre-cleaning takes what the device has left. */
static int pc_inflight(void)
{
    int n = 0;
    /* a stream (AR load, LRLW read-ahead) will read more: its reads would
     * queue behind a write on the device */
    for (size_t k = 0; k < G.ntab; k++)
        if (G.tab[k]->ra_next < G.tab[k]->ra_end)
            return PC_MAX_IO;
    for (int k = 0; k < IO_NSLOT; k++) {
        if (__atomic_load_n(&G.io[k].state, __ATOMIC_ACQUIRE) == IO_FREE)
            continue;
        if (G.io[k].op == IO_READ)
            return PC_MAX_IO;
        if (G.io[k].flags & IO_PRECLEAN)
            n++;
    }
    return n;
}

/* Submit the write of the dirty sbpages [i, j) of a (one run of locations,
 * at most one I/O piece), or as much of it as a slot takes. */
static int pc_write(alloc_t *a, size_t i, size_t j, int *fd)
{
    if (!bdm_loc(a, i) && *fd < 0) {
        *fd = bdm_open_backing(a, 1);
        if (*fd < 0)
            return *fd;
    }
    io_slot_t *sl = bdm_slot_free();
    if (!sl)
        return -EAGAIN;
    for (size_t x = i; x < j; x++) {
        a->st[x] &= (uint8_t)~SB_DIRTY;
        a->pc[x] |= PC_IO | PC_DONE;
    }
    bdm_slot_go(sl, a, IO_WRITE, i, j - i, IO_PRECLEAN, *fd);
    return 0;
}

/* Write back cold sbpages while slots are available.  Returns 1 if cold
 * ones are left for later. */
static int pc_flush(void)
{
    size_t per = G.io_piece / G.sbpage;
    for (size_t k = 0; k < G.ntab; k++) {
        alloc_t *a = G.tab[k];
        if (!a->pc || a->nres == 0)
            continue;
        int fd = -1, rc = 0;
        a->inflight++; /* keeps the descriptor open while slots are reaped */
        for (size_t i = 0; i < a->nsb && rc == 0;) {
            if (!pc_cold(a, i)) {
                i++;
                continue;
            }
            if (pc_inflight() >= PC_MAX_IO) {
                rc = -EAGAIN;
                break;
            }
            /* a run of cold sbpages that must be written, at most one piece */
            size_t j = i;
            while (j < a->nsb && j - i < per && pc_cold(a, j)) {
                if (!pc_prepare(a, j))
                    break; /* unchanged: clean now, ends the run */
                if (G.dd && !bdm_dd_plan(a, j)) {
                    a->st[j] &= (uint8_t)~SB_DIRTY; /* zeros or a copy already stored */
                    break;
                }
                if (j > i && !bdm_loc_run(a, i, j))
                    break; /* prepared and dirty: the next run starts with it */
                j++;
            }
            if (j == i) {
                i++; /* it became clean without a write */
                continue;
            }
            rc = pc_write(a, i, j, &fd);
            if (rc == 0)
                i = j;
        }
        a->inflight--;
        if (a->inflight == 0)
            bdm_backing_done(a);
        if (rc == -EAGAIN)
            return 1;
        if (rc)
            return 0; /* cannot write (storage full?): the unload will say so */
    }
    return 0;
}

/* One round of the thread, with the lock held.  Returns 1 if it should
 * come back soon (cold sbpages wait for a slot). */
static int pc_round(void)
{
    uint64_t t0 = bdm_now_ns(), now = pc_now();
    /* Nothing to gain before the process was ever unloaded: where memory
     * is not short (ARLW in memory) no unload ever comes, and pre-cleaning
     * would write what nobody needs written. */
    if (G.st.unloads == 0 && G.st.shrinks == 0) {
        G.pc_last = now;
        return 0;
    }
    bdm_reap_done();
    if (now - G.pc_last >= G.pc_tick) {
        G.pc_last = now;
        if (pc_scan() != 0) {
            G.preclean = G.st.preclean = 0; /* the kernel refused: the unloads do all of it */
            return 0;
        }
    }
    int more = pc_flush();
    G.st.preclean_ns += bdm_now_ns() - t0;
    return more;
}

static void *pc_main(void *arg)
{
    (void)arg;
    int more = 0;
    for (;;) {
        struct pollfd p = {G.pc_fd, POLLIN, 0};
        int r = poll(&p, 1, more ? 1 : PC_POLL_MS);
        if (r > 0)
            break; /* stop */
        if (!__atomic_load_n(&G.pc_run, __ATOMIC_ACQUIRE))
            continue;
        /* the lock only when there is something to do: a scan is due (the
         * process used a tick of CPU time) or cold sbpages wait for a slot.
         * The states stay valid while the process waits (the written bits
         * stay in the page tables): a wait in MPI only pauses the scans. */
        if (!more && pc_now() - G.pc_last < G.pc_tick)
            continue;
        more = 0;
        LOCK();
        /* not while an unload or shrink gives memory back: it drops the
         * lock between allocations, and a write submitted then would make
         * its sbpages look clean to the release that follows */
        if (G.active && G.preclean && !G.pc_hold && __atomic_load_n(&G.pc_run, __ATOMIC_ACQUIRE))
            more = pc_round();
        UNLOCK();
    }
    return NULL;
}

int bdm_pc_start(void)
{
    if (!G.preclean)
        return 0;
    G.pc_fd = eventfd(0, EFD_CLOEXEC);
    if (G.pc_fd < 0)
        return -errno;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = -pthread_create(&G.pc_thread, NULL, pc_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc) {
        close(G.pc_fd);
        G.pc_fd = -1;
        return rc;
    }
    /* before the thread's first look at the clock (it waits for pc_run,
     * set when the program first runs, after this returns) */
    G.pc_nown = 0;
    G.pc_prog = 0;
    pc_own_add(G.pc_thread);
    for (int k = 0; k < G.io_started; k++)
        pc_own_add(G.io[k].th);
    if (G.thread_started)
        pc_own_add(G.thread);
    G.pc_started = 1;
    return 0;
}

/* Called without the lock. */
void bdm_pc_stop(void)
{
    if (!G.pc_started)
        return;
    uint64_t one = 1;
    if (write(G.pc_fd, &one, sizeof one) < 0) { /* cannot fail for an eventfd */
    }
    pthread_join(G.pc_thread, NULL);
    close(G.pc_fd);
    G.pc_fd = -1;
    G.pc_started = 0;
}
