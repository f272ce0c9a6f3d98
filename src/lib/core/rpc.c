/* The rank's library state and its RPC to the master (bottom room). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "bd_trace.h"
#include "core.h"
#include "nbc.h"
#include "request.h"

bdl_lib_t bdl_g;

/* The service of the room above (one-sided communication), NULL members
 * until it is installed. */
static bdl_rpc_service_t g_service;

void bdl_rpc_set_service(const bdl_rpc_service_t *svc) { g_service = *svc; }

void bdl_rpc_serve_flagged(void)
{
    if (atomic_load_explicit(&bdl_g.slot->rma_pending, memory_order_relaxed) && g_service.pending)
        g_service.pending();
}

uint64_t bdl_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Requests after which the master may hand our run slot to another rank. */
static int may_block(const bd_req_t *r)
{
    /* a nonblocking collective's start is answered at once */
    if (r->code == BD_REQ_COLL_SMALL &&
        (r->arg[2] == BD_SMALL_LAUNCH || r->arg[2] == BD_SMALL_BEGIN))
        return 0;
    switch (r->code) {
    case BD_REQ_P2P_WAIT:
    case BD_REQ_MBOX_FULL:
    case BD_REQ_COLL_WAIT:
    case BD_REQ_COLL_SMALL:
    case BD_REQ_CRIT_ENTER:
    case BD_REQ_YIELD:
    case BD_REQ_COLL_TEST:
    case BD_REQ_COLL_WAITANY:
    case BD_REQ_COLL_TESTANY: return 1;
    default: return 0;
    }
}

/* Tell the master how much of us is resident, so it can resume the rank
 * that is cheapest to resume (bdmpi.txt 5.2). */
static void report_resident(void)
{
    if (bdl_g.mem_active) {
        atomic_store_explicit(&bdl_g.slot->resident, bdl_lib_mem_resident(), memory_order_relaxed);
        return;
    }
    static int fd = -2;
    if (fd == -2)
        fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    char buf[128];
    ssize_t n = fd >= 0 ? pread(fd, buf, sizeof buf - 1, 0) : -1;
    if (n <= 0)
        return;
    buf[n] = 0;
    unsigned long long size, res;
    if (sscanf(buf, "%llu %llu", &size, &res) == 2)
        atomic_store_explicit(&bdl_g.slot->resident, res * (uint64_t)sysconf(_SC_PAGESIZE),
                              memory_order_relaxed);
}

void bdl_rpc(void)
{
    bd_slot_t *sl = bdl_g.slot;
    /* RMA requests wait for this rank: serve them first. */
    if (atomic_load_explicit(&sl->rma_pending, memory_order_relaxed) &&
        sl->req.code != BD_REQ_ABORT && g_service.pending)
        g_service.pending();
    int blocking = may_block(&sl->req);
    if (blocking) {
        /* Nor may our pending nonblocking all-to-alls that pipeline wait
         * for us: their pieces are put and those offered taken first
         * (nbc.c; it keeps the request and the window aside).  A yield
         * comes back by itself, after its poll stepped them
         * (bdl_p2p_poll_failed). */
        if (sl->req.code != BD_REQ_YIELD)
            bdl_nbc_pipe_settle(NULL);
        /* Our single-copy sends must not wait on us while we wait: they
         * become spill files (or complete) first.  That may itself make
         * requests, so the one being made is kept aside. */
        bd_req_t keep = sl->req;
        bdl_p2p_settle();
        sl->req = keep;
    }
    /* nused: the ranks alive on the node, spawned ones included */
    int shared =
        bdl_g.hdr->job.nr < atomic_load_explicit(&bdl_g.hdr->nused, memory_order_relaxed) &&
        may_block(&sl->req);
    uint64_t phase = shared ? bdl_lib_mem_phase_key(&sl->req) : 0;
    /* Only a call that gave up the run slot starts a phase: look-ahead loads
     * for the call a rank waits in, so what follows a call answered at once
     * (K-means' Broadcast, after its Allreduce) belongs to the call before. */
    uint64_t resumes =
        shared ? atomic_load_explicit(&sl->stats[BD_STAT_RESUMES], memory_order_relaxed) : 0;
    if (shared) {
        report_resident();
        /* Another rank may run while this one waits: hold no unaccounted memory. */
        bdl_lib_mem_idle();
    }
    uint64_t t0 = bdl_now_ns();
    if (sl->req.code == BD_REQ_INIT)
        bd_trace_rank_init(bdl_g.hdr, sl, bdl_g.event_fd);
    uint32_t trace = bd_trace_wait_begin(&sl->req, bdl_g.mpi_call);
    uint32_t seen = atomic_load_explicit(&sl->resp_seq, memory_order_relaxed);
    uint32_t seq = atomic_load_explicit(&sl->req_seq, memory_order_relaxed) + 1;
    /* Waiting in the master from here on (the master lends the slot of a
     * rank asleep outside it, src/master/asleep.c); nested requests, made
     * while serving a command, restore the outer value. */
    uint32_t was_in_rpc = atomic_load_explicit(&sl->in_rpc, memory_order_relaxed);
    atomic_store_explicit(&sl->in_rpc, 1, memory_order_relaxed);
    atomic_store_explicit(&sl->req_seq, seq, memory_order_release);
    uint64_t one = 1;
    while (write(bdl_g.event_fd, &one, sizeof one) < 0 && errno == EINTR)
        ;
    (void)BD_FAULT_HIT(BD_FAULT_RPC_DIE); /* fault injection: a rank that dies mid-request */
    /* The master looks at every waiter's mailbox in the round this wakes. */
    bdl_g.ring_owed = 0;
    for (;;) {
        uint32_t now;
        while ((now = atomic_load_explicit(&sl->resp_seq, memory_order_acquire)) == seen)
            bd_futex_wait(&sl->resp_seq, seen, -1);
        seen = now;
        /* A command while we wait (unload our memory) is not the answer. */
        uint32_t cmd = atomic_load_explicit(&sl->cmd, memory_order_acquire);
        if (cmd == BD_CMD_NONE)
            break;
        if (cmd == BD_CMD_RMA) {
            /* Serve RMA requests to us, then wait on.  The master sends the
             * command only to ranks that enabled RMA, after installing it. */
            if (!g_service.command)
                bdl_fatal(MPI_ERR_INTERN, "RMA service command without a window");
            bdl_g.lent = 1;
            seen = g_service.command();
            bdl_g.lent = 0;
            continue;
        }
        bdl_lib_mem_command();
    }
    atomic_store_explicit(&sl->in_rpc, was_in_rpc, memory_order_relaxed);
    bd_trace_wait_end(trace);
    uint64_t t1 = bdl_now_ns();
    atomic_fetch_add_explicit(&sl->stats[BD_STAT_WAIT_NS], t1 - t0, memory_order_relaxed);
    if (blocking)
        bdl_g.run_since_ns = t1; /* we may have waited for a run slot: our run starts again */
    if (shared) {
        /* what runs from here on belongs to this call, or still to the one
         * the rank last waited in (which lets pre-cleaning run again) */
        static uint64_t running_phase;
        if (atomic_load_explicit(&sl->stats[BD_STAT_RESUMES], memory_order_relaxed) != resumes ||
            !running_phase)
            running_phase = phase;
        bdl_lib_mem_phase(running_phase);
    }
}
