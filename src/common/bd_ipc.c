#include "bd_ipc.h"
#include "bd_mbox.h"

#include <errno.h>
#include <linux/futex.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define ROUND_UP(x, a) (((x) + (a)-1) / (a) * (a))

uint64_t bd_shm_layout(bd_shm_hdr_t *h, uint32_t nslaves, uint64_t window, uint64_t threshold)
{
    const uint64_t page = 4096;
    h->nslaves = nslaves;
    h->window = ROUND_UP(window, page);
    h->slot_offset = ROUND_UP(sizeof(bd_shm_hdr_t), page);
    h->window_offset = ROUND_UP(sizeof(bd_slot_t), page);
    /* Mailbox rings: room for many small messages in flight; smaller with
     * many ranks (the pages of a ring stay resident once touched). */
    h->mbox_ring = (h->ninit ? h->ninit : nslaves) <= 64 ? 256 * 1024 : 64 * 1024;
    h->eager = threshold < h->mbox_ring / 8 ? threshold : h->mbox_ring / 8;
    h->mbox_offset = h->window_offset + h->window;
    h->slot_stride = h->mbox_offset + ROUND_UP(bd_mbox_bytes(h->mbox_ring), page);
    h->total_size = h->slot_offset + h->slot_stride * nslaves;
    return h->total_size;
}

void bd_job_config_fill(bd_job_config_t *job, const bd_opts_t *o)
{
    job->nr = (uint32_t)o->num[BD_OPT_NR];
    job->mem_strategy = (int32_t)o->num[BD_OPT_MEM_STRATEGY];
    job->msg_threshold = (uint64_t)o->num[BD_OPT_MSG_THRESHOLD];
    job->mem_budget = (uint64_t)o->num[BD_OPT_MEM];
    job->sbpage = (uint64_t)o->num[BD_OPT_SBPAGE];
    job->mem_threshold = (uint64_t)o->num[BD_OPT_MEM_THRESHOLD];
    job->mem_readahead = (uint64_t)o->num[BD_OPT_MEM_READAHEAD];
    job->mem_predict = (int32_t)o->num[BD_OPT_MEM_PREDICT];
    job->mem_prefetch = (int32_t)o->num[BD_OPT_MEM_PREFETCH];
    job->mem_preclean = (int32_t)o->num[BD_OPT_MEM_PRECLEAN];
    job->mem_preclean_tick = (uint64_t)o->num[BD_OPT_MEM_PRECLEAN_TICK];
    job->mem_alloc_stats = (int32_t)o->num[BD_OPT_MEM_ALLOC_STATS];
    job->stats = (int32_t)o->num[BD_OPT_STATS];
    job->initial_errh = (int32_t)o->num[BD_OPT_INITIAL_ERRHANDLER];
    job->mem_track = (int32_t)o->num[BD_OPT_MEM_TRACK];
    job->mem_wp = (int32_t)o->num[BD_OPT_MEM_WP];
    job->mem_dedup = (int32_t)o->num[BD_OPT_MEM_DEDUP];
    job->mem_share = (int32_t)o->num[BD_OPT_MEM_SHARE];
    job->mem_remote = (int32_t)o->num[BD_OPT_MEM_REMOTE];
    job->spin_ns = (uint64_t)o->num[BD_OPT_SPIN] * 1000;
    job->poll_quantum_ns = (uint64_t)o->num[BD_OPT_POLL_QUANTUM] * 1000;
    job->poll_remote_ns = (uint64_t)o->num[BD_OPT_POLL_REMOTE] * 1000;
    job->universe_size = (uint64_t)o->num[BD_OPT_UNIVERSE_SIZE];
    job->spill_max = (uint64_t)o->num[BD_OPT_SPILL_MAX];
    job->p2p_tokens = (uint64_t)o->num[BD_OPT_P2P_TOKENS];
    job->coll_stage = (uint64_t)o->num[BD_OPT_COLL_STAGE];
    job->coll_byref = (int32_t)o->num[BD_OPT_COLL_BYREF];
    job->net_direct = (uint64_t)o->num[BD_OPT_NET_DIRECT];
}

int bd_spill_charge(bd_shm_hdr_t *h, uint64_t n, uint64_t *total)
{
    uint64_t cur = atomic_load_explicit(&h->spill_bytes, memory_order_relaxed);
    for (;;) {
        *total = cur + n;
        if (h->job.spill_max && cur + n > h->job.spill_max)
            return -ENOSPC;
        if (atomic_compare_exchange_weak_explicit(&h->spill_bytes, &cur, cur + n,
                                                  memory_order_relaxed, memory_order_relaxed))
            break;
    }
    uint64_t peak = atomic_load_explicit(&h->spill_peak, memory_order_relaxed);
    while (peak < *total &&
           !atomic_compare_exchange_weak_explicit(&h->spill_peak, &peak, *total,
                                                  memory_order_relaxed, memory_order_relaxed)) {
    }
    return 0;
}

void bd_spill_quota_msg(char *out, size_t len, const bd_shm_hdr_t *h, int src, uint64_t n,
                        const char *what, uint64_t total)
{
    snprintf(out, len,
             "spill quota exceeded in %s: rank %d sent %llu bytes (%s), which would make %llu "
             "bytes of communication data in the node's spill files, over -spill-max %llu "
             "[MPI_ERR_QUOTA]",
             h->jobdir, src, (unsigned long long)n, what, (unsigned long long)total,
             (unsigned long long)h->job.spill_max);
}

void bd_spill_uncharge(bd_shm_hdr_t *h, uint64_t n)
{
    atomic_fetch_sub_explicit(&h->spill_bytes, n, memory_order_relaxed);
}

int bd_spill_unlink(bd_shm_hdr_t *h, const char *path, uint64_t n)
{
    if (unlink(path) < 0)
        return -errno;
    bd_spill_uncharge(h, n);
    return 0;
}

int bd_futex_wait(_Atomic uint32_t *addr, uint32_t expected, int timeout_ms)
{
    struct timespec ts, *tp = NULL;
    if (timeout_ms >= 0) {
        ts.tv_sec = timeout_ms / 1000;
        ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000L;
        tp = &ts;
    }
    /* Shared (not PRIVATE) futex: the word lives in memory mapped by many processes. */
    long r = syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT, expected, tp, NULL, 0);
    if (r < 0 && errno != EAGAIN)
        return -errno;
    return 0;
}

int bd_futex_wake(_Atomic uint32_t *addr, int n)
{
    long r = syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE, n, NULL, NULL, 0);
    return r < 0 ? -errno : (int)r;
}

void bd_spill_path(char *out, size_t len, const char *jobdir, int src, uint64_t num)
{
    snprintf(out, len, "%s/msg-%d-%llu", jobdir, src, (unsigned long long)num);
}

int bd_write_full(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int bd_pwrite_full(int fd, const void *buf, size_t len, uint64_t off)
{
    const char *p = buf;
    while (len) {
        ssize_t w = pwrite(fd, p, len, (off_t)off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += w;
        off += (uint64_t)w;
        len -= (size_t)w;
    }
    return 0;
}

int bd_pread_full(int fd, void *buf, size_t len, uint64_t off)
{
    char *p = buf;
    while (len) {
        ssize_t r = pread(fd, p, len, (off_t)off);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (r == 0)
            return -EIO;
        p += r;
        off += (uint64_t)r;
        len -= (size_t)r;
    }
    return 0;
}
