/* The rank's side of the memory manager: start SBMA in MPI_Init with the
 * job's settings, ask the master before memory becomes resident, unload
 * when the master says so, and report statistics. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#ifndef PR_SET_MEMORY_MERGE
#define PR_SET_MEMORY_MERGE 67
#endif

#include "bd_log.h"
#include "bd_mem.h"
#include "bd_options.h"
#include "bd_trace.h"
#include "core.h"

static atomic_flag g_acq_lock = ATOMIC_FLAG_INIT;
static int g_ksm;           /* -mem-share on and the kernel took PR_SET_MEMORY_MERGE */
static uint64_t g_ksm_peak; /* the most of our memory seen merged (bytes) */

/* -mem-share: how much of this rank's memory KSM has merged now
 * (ksm_merging_pages of /proc/self/ksm_stat, Linux 6.1+), kept as the peak:
 * sampled before every unload the master orders (after it, nothing is
 * resident) and at the end. */
static void ksm_sample(void)
{
    if (!g_ksm)
        return;
    int fd = open("/proc/self/ksm_stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    char buf[512];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return;
    buf[n] = 0;
    const char *p = strstr(buf, "ksm_merging_pages ");
    if (!p)
        return;
    uint64_t bytes = strtoull(p + 18, NULL, 10) * (uint64_t)sysconf(_SC_PAGESIZE);
    if (bytes > g_ksm_peak)
        g_ksm_peak = bytes;
    atomic_store_explicit(&bdl_g.slot->stats[BD_STAT_MEM_KSM], g_ksm_peak, memory_order_relaxed);
}

static void ring_master(void)
{
    uint64_t one = 1;
    while (write(bdl_g.event_fd, &one, sizeof one) < 0 && errno == EINTR)
        ;
}

/* Runs in fault handlers too: only atomics, futexes and write(2). */
static int acquire_cb(void *ctx, size_t bytes, size_t *give_back)
{
    (void)ctx;
    bd_slot_t *sl = bdl_g.slot;
    while (atomic_flag_test_and_set_explicit(&g_acq_lock, memory_order_acquire))
        sched_yield();
    atomic_store_explicit(&sl->mem_req_bytes, bytes, memory_order_relaxed);
    uint32_t seq = atomic_fetch_add_explicit(&sl->mem_req_seq, 1, memory_order_release) + 1;
    uint64_t t0 = bd_trace_grant_begin();
    ring_master();
    uint32_t v;
    while ((v = atomic_load_explicit(&sl->mem_resp_seq, memory_order_acquire)) != seq)
        bd_futex_wait(&sl->mem_resp_seq, v, -1);
    bd_trace_grant_end(t0, bytes);
    int rc = atomic_load_explicit(&sl->mem_resp_status, memory_order_relaxed);
    if (give_back)
        *give_back = (size_t)atomic_load_explicit(&sl->mem_resp_give, memory_order_relaxed);
    atomic_flag_clear_explicit(&g_acq_lock, memory_order_release);
    return rc;
}

static void release_cb(void *ctx, size_t bytes)
{
    (void)ctx;
    atomic_fetch_sub_explicit(&bdl_g.slot->mem_resident, bytes, memory_order_relaxed);
    if (atomic_load_explicit(&bdl_g.hdr->mem_waiters, memory_order_relaxed))
        ring_master();
}

/* The remote-memory tier (-mem-remote): the manager's requests travel to
 * the master through this rank's lanes (bd_ipc.h, bd_rmt_lane_t), which
 * forwards them to another node.  Runs in I/O workers and fault handlers
 * too: only atomics, memcpy, futexes and write(2).  A lane is claimed by
 * compare-and-swap; the preferred one (the I/O worker's own) is free
 * unless a synchronous load or a drop borrowed it for a moment. */
static uint32_t my_slot(void)
{
    return (uint32_t)(((char *)bdl_g.slot - (char *)bdl_g.hdr - bdl_g.hdr->slot_offset) /
                      bdl_g.hdr->slot_stride);
}

static _Atomic int g_rmt_used; /* a lane's data area was written since the last idle point */

static bd_rmt_lane_t *lane_claim(int want, int *k_out)
{
    for (;;) {
        for (int t = 0; t < BD_RMT_LANES; t++) {
            int k = want >= 0 ? (want + t) % BD_RMT_LANES : t;
            bd_rmt_lane_t *l = bd_rmt_lane(bdl_g.hdr, my_slot(), k);
            uint32_t z = 0;
            if (atomic_compare_exchange_strong_explicit(&l->busy, &z, 1, memory_order_acquire,
                                                        memory_order_relaxed)) {
                *k_out = k;
                return l;
            }
        }
        sched_yield();
    }
}

static int lane_call(bd_rmt_lane_t *l, uint32_t op, uint64_t id, size_t sb, size_t n,
                     const void *buf)
{
    l->op = op;
    l->id = id;
    l->sb = sb;
    l->nsb = (uint32_t)n;
    l->sbpage = bdl_g.hdr->job.sbpage;
    l->addr = (uintptr_t)buf;
    uint32_t seq = atomic_fetch_add_explicit(&l->req_seq, 1, memory_order_release) + 1;
    ring_master();
    uint32_t v;
    while ((v = atomic_load_explicit(&l->resp_seq, memory_order_acquire)) != seq)
        bd_futex_wait(&l->resp_seq, v, -1);
    return atomic_load_explicit(&l->status, memory_order_relaxed);
}

/* The master copies between buf and the other node itself (one copy, no
 * pass through the lane) when this rank lets others read its memory; the
 * lane's data area is the way when it cannot (BD_RMT_IN_LANE). */
static const void *direct(const void *buf)
{
    return atomic_load_explicit(&bdl_g.slot->cma_ok, memory_order_relaxed) ? buf : NULL;
}

static int rmt_put(void *ctx, int lane, uint64_t id, size_t sb, size_t n, const void *buf)
{
    (void)ctx;
    int k;
    bd_rmt_lane_t *l = lane_claim(lane, &k);
    int rc = direct(buf) ? lane_call(l, BD_RMT_PUT, id, sb, n, buf) : BD_RMT_IN_LANE;
    if (rc == BD_RMT_IN_LANE) {
        g_rmt_used = 1;
        memcpy(bd_rmt_data(bdl_g.hdr, my_slot(), k), buf, n * bdl_g.hdr->job.sbpage);
        rc = lane_call(l, BD_RMT_PUT, id, sb, n, NULL);
    }
    atomic_store_explicit(&l->busy, 0, memory_order_release);
    return rc;
}

static int rmt_get(void *ctx, int lane, uint64_t id, size_t sb, size_t n, void *buf)
{
    (void)ctx;
    int k;
    bd_rmt_lane_t *l = lane_claim(lane, &k);
    int rc = lane_call(l, BD_RMT_GET, id, sb, n, direct(buf));
    if (rc == BD_RMT_IN_LANE) {
        g_rmt_used = 1;
        memcpy(buf, bd_rmt_data(bdl_g.hdr, my_slot(), k), n * bdl_g.hdr->job.sbpage);
        rc = 0;
    }
    atomic_store_explicit(&l->busy, 0, memory_order_release);
    return rc;
}

static void rmt_drop(void *ctx, uint64_t id, size_t sb, size_t n)
{
    (void)ctx;
    int k;
    bd_rmt_lane_t *l = lane_claim(-1, &k);
    (void)lane_call(l, BD_RMT_DROP, id, sb, n, NULL); /* answered at once */
    atomic_store_explicit(&l->busy, 0, memory_order_release);
}

/* The lanes' data areas are shared memory outside the budget, like the
 * manager's bounce buffers: given back whenever the rank may wait. */
static void rmt_idle(void)
{
    if (!g_rmt_used || !bdl_g.hdr->rmt_offset)
        return;
    g_rmt_used = 0;
    for (int k = 0; k < BD_RMT_LANES; k++) {
        bd_rmt_lane_t *l = bd_rmt_lane(bdl_g.hdr, my_slot(), k);
        uint32_t z = 0;
        if (!atomic_compare_exchange_strong_explicit(&l->busy, &z, 1, memory_order_acquire,
                                                     memory_order_relaxed)) {
            g_rmt_used = 1; /* in use: next time */
            continue;
        }
        madvise(bd_rmt_data(bdl_g.hdr, my_slot(), k), BD_RMT_LANE_BYTES, MADV_REMOVE);
        atomic_store_explicit(&l->busy, 0, memory_order_release);
    }
}

/* The manager's configuration comes from the job configuration in the
 * shared-memory header and from nothing else. */
void bdl_lib_mem_init(void)
{
    const bd_job_config_t *job = &bdl_g.hdr->job;
    if (job->mem_strategy == BD_MEMS_NONE)
        return;
    static const bd_mem_strategy_t strat[] = {BD_MEM_ARAW, BD_MEM_ARAW, BD_MEM_ARLW, BD_MEM_LRLW};
    static const bd_mem_track_t track[] = {BD_MEM_TRACK_AUTO, BD_MEM_TRACK_UFFD,
                                           BD_MEM_TRACK_MPROTECT};
    static const bd_mem_wp_t wp[] = {BD_MEM_WP_AUTO, BD_MEM_WP_ASYNC, BD_MEM_WP_SYNC};
    static const int predict[] = {[BD_MEMP_AUTO] = 0, [BD_MEMP_ON] = 1, [BD_MEMP_OFF] = -1};
    /* fatal messages of the manager (double free, I/O errors) name the rank */
    char label[32];
    snprintf(label, sizeof label, "rank %d", bdl_g.world_rank);
    bd_mem_config_t cfg = {
        .dir = bdl_g.hdr->jobdir,
        .sbpage = job->sbpage,
        .threshold = job->mem_threshold,
        .strategy = strat[job->mem_strategy & 3],
        /* -mem-readahead 0 means off; for the manager 0 means its default */
        .readahead = job->mem_readahead > 0 ? (size_t)job->mem_readahead : (size_t)-1,
        .track = track[(unsigned)job->mem_track % 3],
        .wp = wp[(unsigned)job->mem_wp % 3],
        .predict = predict[(unsigned)job->mem_predict % 3],
        .label = label,
        .acquire = job->mem_budget ? acquire_cb : NULL,
        .release = job->mem_budget ? release_cb : NULL,
        .io_begin = bd_trace_io_begin, /* time accounting, timeline */
        .io_end = bd_trace_io_end,
        /* every rank of the node passes the same zero-filled table */
        .share = bdl_g.hdr->dedup_bytes ? (char *)bdl_g.hdr + bdl_g.hdr->dedup_offset : NULL,
        .share_len = bdl_g.hdr->dedup_bytes,
        /* the master made the lanes only with -mem-remote on and other nodes */
        .rput = bdl_g.hdr->rmt_offset ? rmt_put : NULL,
        .rget = bdl_g.hdr->rmt_offset ? rmt_get : NULL,
        .rdrop = bdl_g.hdr->rmt_offset ? rmt_drop : NULL,
        .preclean = job->mem_preclean == 0,
        .preclean_tick_us = (unsigned)job->mem_preclean_tick,
        .alloc_report = job->mem_alloc_stats,
    };
    _Static_assert(BD_MEM_RESP_SHRINK == BD_MEM_ACQUIRE_SHRINK, "acquire answers differ");
    int rc = bd_mem_init(&cfg);
    if (rc < 0) {
        bd_mem_stats_t st;
        bd_mem_stats(&st);
        bdl_fatal(MPI_ERR_OTHER, "cannot start the memory manager in %s: %s%s%s%s", cfg.dir,
                  strerror(-rc), st.err_call ? " (" : "", st.err_call ? st.err_call : "",
                  st.err_call ? " failed)" : "");
    }
    bdl_g.mem_active = 1;
    {
        bd_mem_stats_t st;
        bd_mem_stats(&st);
        atomic_store_explicit(&bdl_g.slot->mem_anon, st.track == BD_MEM_TRACK_UFFD,
                              memory_order_relaxed);
    }
    /* -mem-share: every anonymous private mapping of this process, present
     * and future, becomes mergeable (the uffd path's managed memory is such;
     * the mprotect path's is a shared memfd, which KSM never merges).  Where
     * the kernel refuses (no KSM, before Linux 6.4) the rank runs as without
     * it; the master said so at the start. */
    if (job->mem_share == 0 && prctl(PR_SET_MEMORY_MERGE, 1, 0, 0, 0) == 0)
        g_ksm = 1;
}

void bdl_lib_mem_stats(void)
{
    if (!bdl_g.mem_active)
        return;
    bd_mem_stats_t st;
    bd_mem_stats(&st);
    ksm_sample();
    _Atomic uint64_t *o = bdl_g.slot->stats;
    atomic_store_explicit(&o[BD_STAT_MEM_WRITTEN], st.bytes_written, memory_order_relaxed);
    atomic_store_explicit(&o[BD_STAT_MEM_READ], st.bytes_read, memory_order_relaxed);
    atomic_store_explicit(&o[BD_STAT_MEM_LOADS], st.loads, memory_order_relaxed);
    atomic_store_explicit(&o[BD_STAT_MEM_UNLOADS], st.unloads, memory_order_relaxed);
    atomic_store_explicit(&o[BD_STAT_MEM_FAULTS], st.faults, memory_order_relaxed);
    atomic_store_explicit(&o[BD_STAT_MEM_IO_NS], st.io_ns, memory_order_relaxed);
    atomic_store_explicit(&o[BD_STAT_MEM_PEAK], st.peak_resident, memory_order_relaxed);
    atomic_store_explicit(&o[BD_STAT_MEM_HASHED], st.bytes_hashed, memory_order_relaxed);
    atomic_store_explicit(&o[BD_STAT_MEM_PREDICT_MISS], st.verified_clean, memory_order_relaxed);
    atomic_store_explicit(&o[BD_STAT_MEM_SHRINKS], st.shrinks, memory_order_relaxed);
    atomic_store_explicit(&o[BD_STAT_MEM_SHRUNK], st.shrunk_bytes, memory_order_relaxed);
    atomic_store_explicit(&o[BD_STAT_MEM_PREFETCHED], st.prefetched, memory_order_relaxed);
    atomic_store_explicit(&o[BD_STAT_MEM_DEDUP], st.dedup_bytes, memory_order_relaxed);
    atomic_store_explicit(&o[BD_STAT_MEM_DEDUP_ZERO], st.dedup_zero, memory_order_relaxed);
    atomic_store_explicit(&o[BD_STAT_MEM_DEDUP_VERIFY], st.dedup_verify, memory_order_relaxed);
    atomic_store_explicit(&o[BD_STAT_MEM_PRECLEANED], st.precleaned, memory_order_relaxed);
}

/* The master told this (waiting) rank to write its memory out, or to load
 * it back ahead of its turn. */
/* Store every dirty byte and give the memory back, or stop the rank with
 * what could not be stored, where, and why. */
static void unload_or_die(void)
{
    int rc = bd_mem_unload_all();
    if (rc == 0)
        return;
    bd_mem_stats_t st;
    bd_mem_stats(&st);
    struct statvfs fs;
    unsigned long long avail =
        statvfs(bdl_g.hdr->jobdir, &fs) == 0 ? (unsigned long long)fs.f_bavail * fs.f_frsize : 0;
    bdl_fatal(MPI_ERR_OTHER,
              "cannot write %llu bytes of managed memory to storage in %s: %s (%s%s%llu "
              "bytes free there)",
              (unsigned long long)st.unwritten, bdl_g.hdr->jobdir, strerror(-rc),
              st.err_call ? st.err_call : "", st.err_call ? " failed, " : "", avail);
}

void bdl_lib_mem_command(void)
{
    uint32_t cmd = atomic_load_explicit(&bdl_g.slot->cmd, memory_order_acquire);
    if (cmd == BD_CMD_PREFETCH && bdl_g.mem_active) {
        /* what it touched after this call last time; refused: loaded when touched */
        int64_t got =
            bd_mem_prefetch(bdl_lib_mem_phase_key(&bdl_g.slot->req),
                            atomic_load_explicit(&bdl_g.slot->cmd_limit, memory_order_relaxed));
        if (got > 0) /* not bdl_lib_mem_stats(): it would wait for the reads */
            atomic_fetch_add_explicit(&bdl_g.slot->stats[BD_STAT_MEM_PREFETCHED], (uint64_t)got,
                                      memory_order_relaxed);
    } else if (cmd == BD_CMD_UNLOAD && bdl_g.mem_active) {
        ksm_sample();
        unload_or_die();
        bdl_lib_mem_stats();
    }
    atomic_store_explicit(&bdl_g.slot->cmd, BD_CMD_NONE, memory_order_release);
    ring_master();
}

/* Names the call a rank waits in, for the memory manager's phases. */
uint64_t bdl_lib_mem_phase_key(const bd_req_t *r) { return bd_req_phase_key(r); }

void bdl_lib_mem_phase(uint64_t key)
{
    if (bdl_g.mem_active)
        bd_mem_phase(key);
}

void bdl_lib_mem_idle(void)
{
    if (bdl_g.mem_active) {
        bd_mem_idle();
        rmt_idle();
    }
}

uint64_t bdl_lib_mem_resident(void) { return bdl_g.mem_active ? bd_mem_resident_bytes() : 0; }

/* buf is about to be overwritten with len bytes (a receive): drop what it
 * held without writing it back or reading it in. */
void bdl_lib_mem_discard(void *buf, uint64_t len)
{
    /* Resident sbpages stay: releasing them only to fault them back in at
     * once costs a round of accounting and faults per message. */
    if (bdl_g.mem_active && len >= bdl_g.hdr->job.sbpage && bd_mem_owns(buf))
        bd_mem_discard_stored(buf, len);
}

int bdl_lib_mem_managed(const void *buf, uint64_t len)
{
    return bdl_g.mem_active && len >= bdl_g.hdr->job.sbpage && bd_mem_owns(buf);
}

int bdl_lib_mem_loads_whole(const void *buf)
{
    int s = bdl_g.hdr->job.mem_strategy;
    return bdl_g.mem_active && (s == BD_MEMS_ARAW || s == BD_MEMS_ARLW) && bd_mem_owns(buf);
}

/* The kernel is about to read (for_write=0) or fill (1) buf. */
void bdl_lib_mem_prepare(const void *buf, uint64_t len, int for_write)
{
    if (!bdl_g.mem_active || !len || !bd_mem_owns(buf))
        return;
    int rc = bd_mem_prepare(buf, len, for_write);
    if (rc < 0) {
        bd_mem_stats_t st;
        bd_mem_stats(&st);
        bdl_fatal(MPI_ERR_OTHER, "cannot make %llu bytes of managed memory resident: %s%s%s%s",
                  (unsigned long long)len, strerror(-rc), st.err_call ? " (" : "",
                  st.err_call ? st.err_call : "", st.err_call ? " failed)" : "");
    }
}

int bdl_lib_mem_pin(uint64_t bytes)
{
    if (!bytes || !bdl_g.hdr->job.mem_budget)
        return 0;
    int rc;
    while ((rc = acquire_cb(NULL, (size_t)bytes, NULL)) == BD_MEM_RESP_SHRINK) {
        /* Every holder of memory waits for more: store ours and ask again
         * (a failed store would make the same answer come back forever). */
        if (bdl_g.mem_active)
            unload_or_die();
    }
    if (rc)
        return rc;
    bd_slot_t *sl = bdl_g.slot;
    atomic_fetch_add_explicit(&sl->mem_pinned, bytes, memory_order_relaxed);
    atomic_fetch_sub_explicit(&sl->mem_resident, bytes, memory_order_relaxed);
    return 0;
}

void bdl_lib_mem_unpin(uint64_t bytes)
{
    if (!bytes || !bdl_g.hdr->job.mem_budget)
        return;
    atomic_fetch_sub_explicit(&bdl_g.slot->mem_pinned, bytes, memory_order_relaxed);
    if (atomic_load_explicit(&bdl_g.hdr->mem_waiters, memory_order_relaxed))
        ring_master();
}
