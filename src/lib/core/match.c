/* Message matching in the rank (docs/design.md, "Point-to-point without the
 * master").  Every message to this rank arrives in its mailbox (bd_mbox.h):
 * from ranks of the node directly, from other nodes through the master.
 * The rank alone matches: it drains the mailbox in arrival order, binding
 * each message to the first posted receive it matches (posting order) or
 * queueing it as unexpected; a new receive takes the first unexpected
 * message it matches.  That is MPI's matching rule; since one sender's
 * messages enter the mailbox in its program order, and the entries the
 * master took out while the rank waited (overflow) are older than all
 * still in the ring and are drained first, it also keeps MPI's
 * non-overtaking order.
 *
 * The master hears only of waits: a rank with nothing to match spins
 * briefly (when no rank waits for its run slot), then asks the master to
 * block it until its mailbox's event count moves (BD_REQ_P2P_WAIT). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bd_iowatch.h"
#include "bd_mbox.h"
#include "core.h"
#include "dt.h"
#include "nbc.h"
#include "request.h"
#include "spin.h"
#include "unexp.h"

/* A posted receive, in posting order. */
typedef struct precv {
    struct precv *next;
    int ctx, src, tag;
    int src_world; /* the source's world rank when known (a blocking receive), else -1 */
    int handle;    /* its request (0: a blocking receive, below) */
    void *buf;
    const bdl_dt_t *dt;
    uint64_t count;
    int done, err;
    MPI_Status status;
    int deferred;  /* matched; the payload waits in its spill file (e) until reported */
    bd_mentry_t e; /* ... the message's envelope then */
} precv_t;

typedef bdl_umsg_t umsg_t;

static precv_t *g_posted, **g_posted_tail = &g_posted;
static umsg_t *g_mprobed; /* taken by MPI_Mprobe, waiting for MPI_Mrecv */
static uint64_t g_next_match_id;

/* Synchronous sends of this rank not yet acknowledged. */
static uint64_t *g_sync;
static int g_nsync, g_capsync;
static uint64_t g_next_sync_id;

/* Acknowledgements owed to synchronous senders, sent after a drain (a
 * drain never makes a request to the master: its position is unpublished). */
typedef struct {
    int world;
    uint64_t id;
    int remote;
} ack_t;
static ack_t *g_acks;
static int g_nacks, g_capacks;

static bd_mbox_t *mbox_of(int world)
{
    bd_shm_hdr_t *h = bdl_g.hdr;
    return bd_slot_mbox(h, bd_shm_slot(h, (uint32_t)bd_world_slot(h, world)));
}

static bd_mbox_t *my_mbox(void) { return bd_slot_mbox(bdl_g.hdr, bdl_g.slot); }

void bdl_p2p_init(void)
{
    /* Let the other ranks read our memory (Yama's ptrace_scope 1 allows
     * only ancestors otherwise), then check that reading works here: the
     * master allows it likewise; a seccomp filter or ptrace_scope 2 would
     * refuse, and then no one reads from us nor we from others. */
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    uint64_t magic = 0;
    struct iovec l = {&magic, sizeof magic};
    struct iovec r = {(void *)(uintptr_t)bdl_g.hdr->master_addr, sizeof magic};
    int ok = process_vm_readv(getppid(), &l, 1, &r, 1, 0) == (ssize_t)sizeof magic &&
             magic == BD_SHM_MAGIC;
    atomic_store_explicit(&bdl_g.slot->cma_ok, (uint32_t)ok, memory_order_release);
}

int bdl_p2p_local(int world) { return bd_world_slot(bdl_g.hdr, world) >= 0; }

/* A poll loop for a message from such a rank waits, through it, for what
 * only the master brings (another node's message, a collective's end):
 * HPL's row broadcast at -nn 2 polls for a rank of its own node that waits
 * for the pivot exchange down a column.  Spinning for it keeps from the CPU
 * the master that must deliver (with -nr 1 they share one), so the loop
 * sleeps in the master as a poll for another node does.  running and
 * queued are hints: a wrong answer costs at most one -poll-remote bound,
 * and a message from the rank wakes the sleeper at once. */
int bdl_p2p_parked(int world)
{
    if (world < 0 || world == bdl_g.world_rank || bdl_nbc_pipes_pending())
        return 0;
    int sl = bd_world_slot(bdl_g.hdr, world);
    if (sl < 0)
        return 0;
    bd_slot_t *d = bd_shm_slot(bdl_g.hdr, (uint32_t)sl);
    return !atomic_load_explicit(&d->running, memory_order_relaxed) &&
           !atomic_load_explicit(&d->queued, memory_order_relaxed);
}

static void ring_master(void)
{
    uint64_t one = 1;
    while (write(bdl_g.event_fd, &one, sizeof one) < 0 && errno == EINTR)
        ;
}

/* We have put a message in the mailbox of a rank asleep in the master:
 * the master must look at it.  With -nr 1 it cannot resume that rank
 * while we hold the one run slot, and every request of ours wakes it and
 * makes it look at every waiter's mailbox first (master.c
 * recheck_blocked), so the ring is owed until then: on one CPU each ring
 * is the master preempting us for a round that can change nothing (16
 * ranks in a ring at -nr 1 rang it 16 times per hand-over of the slot).
 * Not with look-ahead loading once the master has unloaded a rank (it
 * loads for the rank the run queue serves next while we run; before any
 * unload there is nothing to load), nor for a lent run (serving RMA),
 * which holds no slot: `running` is the master's hint that we hold one. */
static void wake_receiver(void)
{
    const bd_job_config_t *job = &bdl_g.hdr->job;
    if (job->nr == 1 &&
        (job->mem_prefetch != 0 ||
         !atomic_load_explicit(&bdl_g.hdr->unloads_began, memory_order_relaxed)) &&
        !bdl_g.lent && atomic_load_explicit(&bdl_g.slot->running, memory_order_relaxed)) {
        bdl_g.ring_owed = 1;
        return;
    }
    ring_master();
}

static int matches(int ctx, int src, int tag, const bd_mentry_t *e)
{
    return e->ctx == ctx && (src == MPI_ANY_SOURCE || src == e->src) &&
           (tag == MPI_ANY_TAG || tag == e->tag);
}

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (!q)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory (%zu bytes) in point-to-point matching", n);
    return q;
}

/* ---------------------------------------------------------------- synchronous sends */

uint64_t bdl_p2p_sync_new(void)
{
    if (g_nsync == g_capsync) {
        g_capsync = g_capsync ? 2 * g_capsync : 16;
        g_sync = xrealloc(g_sync, (size_t)g_capsync * sizeof *g_sync);
    }
    g_sync[g_nsync] = ++g_next_sync_id;
    return g_sync[g_nsync++];
}

static int sync_index(uint64_t id)
{
    for (int i = 0; i < g_nsync; i++)
        if (g_sync[i] == id)
            return i;
    return -1;
}

void bdl_p2p_sync_forget(uint64_t id)
{
    int i = sync_index(id);
    if (i >= 0)
        g_sync[i] = g_sync[--g_nsync];
}

static void add_ack(ack_t a)
{
    if (g_nacks == g_capacks) {
        g_capacks = g_capacks ? 2 * g_capacks : 16;
        g_acks = xrealloc(g_acks, (size_t)g_capacks * sizeof *g_acks);
    }
    g_acks[g_nacks++] = a;
}

/* A matched message: its synchronous sender may go on. */
static void owe_ack(const bd_mentry_t *e)
{
    if (e->flags & (BD_SEND_SYNC | BD_ME_REMOTE_SYNC))
        add_ack((ack_t){e->src_world, e->sync_id, (e->flags & BD_ME_REMOTE_SYNC) != 0});
}

/* ---------------------------------------------------------------- single-copy reads */

static pid_t pid_of(int world)
{
    bd_shm_hdr_t *h = bdl_g.hdr;
    return bd_shm_slot(h, (uint32_t)bd_world_slot(h, world))->pid;
}

/* Read n bytes at the sender's address into dst. */
static void cma_read(const bd_mentry_t *e, uint64_t off, void *dst, uint64_t n)
{
    pid_t pid = pid_of(e->src_world);
    uint64_t done = 0;
    while (done < n) {
        struct iovec l = {(char *)dst + done, n - done};
        struct iovec r = {(void *)(uintptr_t)(e->file_num + off + done), n - done};
        ssize_t k = process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (k <= 0)
            bdl_fatal(MPI_ERR_OTHER,
                      "cannot read a %llu-byte message from the memory of rank %d (pid %d): %s",
                      (unsigned long long)e->nbytes, e->src_world, (int)pid,
                      k < 0 ? strerror(errno) : "nothing read");
        done += (uint64_t)k;
    }
}

/* ---------------------------------------------------------------- delivery */

static void spill_path_of(const bd_mentry_t *e, char *path, size_t len)
{
    bd_spill_path(path, len, bdl_g.hdr->jobdir, e->src_world, e->file_num);
}

static void drop_payload(const bd_mentry_t *e)
{
    if (e->flags & BD_SEND_FILE) {
        char path[BD_PATH_MAX + 64];
        spill_path_of(e, path, sizeof path);
        bd_mbox_drop_file(bdl_g.hdr, e, path);
    }
}

/* Put message e (inline payload at data) into count elements of t at buf;
 * fill st.  Returns MPI_SUCCESS or MPI_ERR_TRUNCATE. */
static bd_mentry_t g_last; /* the envelope of the last message delivered */

const bd_mentry_t *bdl_p2p_last(void) { return &g_last; }

static int deliver(const bd_mentry_t *e, const char *data, void *buf, const bdl_dt_t *t,
                   uint64_t count, MPI_Status *st)
{
    memcpy(&g_last, e, sizeof g_last);
    uint64_t cap = count * t->psize;
    uint64_t n = e->nbytes, take = n < cap ? n : cap;
    char *contig = bdl_dt_contig(t, buf, count);
    if (contig)
        bdl_lib_mem_discard(contig, take); /* only a buffer filled entirely may go first */
    bd_mentry_t pe;
    int placed = 0;
    if (e->flags & BD_ME_PULL) {
        memcpy(&pe, e, sizeof pe);
        placed = bdl_net_pull(&pe, contig, take);
        e = &pe;
    }
    if (placed) {
        /* written into contig by our master */
    } else if (e->flags & BD_SEND_FILE) {
        char path[BD_PATH_MAX + 64];
        spill_path_of(e, path, sizeof path);
        int fd = BD_FAULT_SYS(BD_FAULT_SPILL_OPEN) ?: open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
            bdl_fatal(MPI_ERR_OTHER, "cannot open spill file %s of a %llu-byte message: %s", path,
                      (unsigned long long)n, strerror(errno));
        int rc = 0;
        bd_fs_ck_t ck; /* what was read is checked against the writer's checksums */
        bd_fs_ck_init(&ck);
        if (contig) {
            bdl_lib_mem_prepare(contig, take, 1);
            for (uint64_t off = 0; off < take && rc == 0; off += BDL_SPILL_STEP) {
                uint64_t k = take - off < BDL_SPILL_STEP ? take - off : BDL_SPILL_STEP;
                rc = BD_IO_NEG(BD_FAULT_SPILL_READ, bd_pread_full(fd, contig + off, k, off));
            }
            if (rc == 0)
                bd_fs_ck_add(&ck, contig, take);
        } else {
            for (uint64_t off = 0; off < take && rc == 0;) {
                uint64_t k = take - off < bdl_g.window ? take - off : bdl_g.window;
                rc = BD_IO_NEG(BD_FAULT_SPILL_READ, bd_pread_full(fd, bdl_g.win, k, off));
                if (rc == 0) {
                    bd_fs_ck_add(&ck, bdl_g.win, k);
                    bdl_dt_unpack(t, buf, count, off, bdl_g.win, k);
                }
                off += k;
            }
        }
        if (rc < 0)
            bdl_fatal(MPI_ERR_OTHER, "cannot read %llu bytes from spill file %s: %s",
                      (unsigned long long)take, path, strerror(-rc));
        bdl_spill_check(&ck, fd, path, take, n);
        close(fd);
        bd_mbox_drop_file(bdl_g.hdr, e, path);
    } else if (e->flags & BD_ME_CMA) {
        if (contig) {
            bdl_lib_mem_prepare(contig, take, 1);
            cma_read(e, 0, contig, take);
        } else {
            for (uint64_t off = 0; off < take;) {
                uint64_t k = take - off < bdl_g.window ? take - off : bdl_g.window;
                cma_read(e, off, bdl_g.win, k);
                bdl_dt_unpack(t, buf, count, off, bdl_g.win, k);
                off += k;
            }
        }
    } else if (take) {
        if (contig)
            memcpy(contig, data, take);
        else
            bdl_dt_unpack(t, buf, count, 0, data, take);
    }
    atomic_fetch_add_explicit(&bdl_g.slot->stats[BD_STAT_RECVS], 1, memory_order_relaxed);
    if (st != MPI_STATUS_IGNORE) {
        st->MPI_SOURCE = e->src;
        st->MPI_TAG = e->tag;
        st->bd_cancelled = 0;
        st->bd_nbytes = (long long)take;
        st->MPI_ERROR = n > cap ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
    }
    return n > cap ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
}

/* Issue 13: a nonblocking receive of a message in a spill file, into
 * managed memory, is matched now but filled only when the program is told
 * it is complete (bdl_p2p_recv_settle, from Wait, Test and their forms).
 * Filled at the match, the buffer is dirty while the rank may still block
 * for another request of the same MPI_Waitall (SGD: U arrives, V comes
 * later) and be unloaded meanwhile: the data is then written to storage
 * and read back before the program can look at it.  The file holds it at
 * no memory cost.  Not for single-copy messages (their sender waits for
 * the read), nor a receive the program freed (nothing reports it). */
static int defer_ok(const precv_t *p, const bd_mentry_t *e)
{
    if (!p->handle || !(e->flags & BD_SEND_FILE) || (e->flags & BD_ME_PULL) ||
        bdl_g.reqs[p->handle].detached)
        return 0;
    uint64_t cap = p->count * p->dt->psize, take = e->nbytes < cap ? e->nbytes : cap;
    const char *contig = bdl_dt_contig(p->dt, p->buf, p->count);
    return contig && bdl_lib_mem_managed(contig, take);
}

/* Match p with e and leave the payload in its file: the request is done
 * (for Waitall and the like) and keeps p, and its type, until settled. */
static void defer(precv_t *p, const bd_mentry_t *e)
{
    memcpy(&p->e, e, sizeof p->e);
    p->deferred = 1;
    p->done = 1;
    owe_ack(e);
    bdl_request_t *q = &bdl_g.reqs[p->handle];
    q->impl = p;
    q->done = bdl_req_stamp();
    atomic_fetch_add_explicit(&bdl_g.slot->stats[BD_STAT_RECVS_DEFERRED], 1, memory_order_relaxed);
}

void bdl_p2p_recv_settle(bdl_request_t *q)
{
    precv_t *p = q->impl;
    if (!q->done || !p || !p->deferred)
        return;
    q->impl = NULL;
    q->err = deliver(&p->e, NULL, p->buf, p->dt, p->count, &q->status);
    bdl_dt_release(q->dt);
    q->dt = NULL;
    free(p);
}

static void complete_posted(precv_t *p, const bd_mentry_t *e, const char *data)
{
    if (defer_ok(p, e)) {
        defer(p, e);
        return;
    }
    p->err = deliver(e, data, p->buf, p->dt, p->count, &p->status);
    p->done = 1;
    owe_ack(e);
    if (p->handle) {
        bdl_request_t *q = &bdl_g.reqs[p->handle];
        q->err = p->err;
        q->status = p->status;
        q->done = bdl_req_stamp();
        q->impl = NULL;
        bdl_dt_release(q->dt);
        q->dt = NULL;
        free(p);
    }
}

static void unlink_posted(precv_t *p)
{
    precv_t **pp = &g_posted;
    while (*pp && *pp != p)
        pp = &(*pp)->next;
    if (!*pp)
        return;
    *pp = p->next;
    if (g_posted_tail == &p->next)
        g_posted_tail = pp;
}

/* A single-copy entry is read while it is claimed, and its sender waits
 * for the claim to end.  A read into managed memory that is not resident
 * would wait for a grant from the budget, and that grant may wait for the
 * sender's memory: a cycle nobody breaks.  So the destination is made
 * resident before the entry is claimed: the posted receive it matches, or
 * the buffer it will be kept in when unexpected (g_spare, used by arrive). */
static umsg_t *g_spare;
static uint64_t g_spare_len;

static void prepare_cma_dest(const bd_mentry_t *e)
{
    if (!bdl_g.mem_active || e->kind == BD_ME_ACK)
        return;
    for (precv_t *p = g_posted; p; p = p->next)
        if (matches(p->ctx, p->src, p->tag, e)) {
            const bdl_dt_t *t = p->dt;
            uint64_t cap = p->count * t->psize, take = e->nbytes < cap ? e->nbytes : cap;
            char *contig = bdl_dt_contig(t, p->buf, p->count);
            if (contig) {
                bdl_lib_mem_discard(contig, take);
                bdl_lib_mem_prepare(contig, take, 1);
            } else if (p->count && t->true_extent > 0) {
                uint64_t span = (uint64_t)t->extent * (p->count - 1) + (uint64_t)t->true_extent;
                bdl_lib_mem_prepare((char *)p->buf + t->true_lb, span, 1);
            }
            return;
        }
    if (g_spare && g_spare_len != e->nbytes) {
        free(g_spare);
        g_spare = NULL;
    }
    if (!g_spare)
        g_spare = malloc(sizeof *g_spare + e->nbytes);
    if (g_spare) {
        g_spare_len = e->nbytes;
        bdl_lib_mem_prepare(g_spare->data, e->nbytes, 1);
    }
}

void bdl_p2p_note_revoke(int world)
{
    if (!bdl_p2p_local(world))
        return; /* its master bumps it when it delivers the notice */
    bd_shm_hdr_t *h = bdl_g.hdr;
    bd_slot_t *sl = bd_shm_slot(h, (uint32_t)(world - (int)h->first_rank));
    atomic_fetch_add_explicit(&sl->revoke_seq, 1, memory_order_release);
}

void bdl_p2p_revoke_check(void)
{
    static uint32_t seen;
    uint32_t now = atomic_load_explicit(&bdl_g.slot->revoke_seq, memory_order_acquire);
    if (now != seen) {
        seen = now;
        bdl_p2p_drain();
    }
}

void bdl_p2p_fail_revoked(int ctx)
{
    precv_t **pp = &g_posted;
    while (*pp) {
        precv_t *p = *pp;
        /* The program's receives, and the library's on the hidden context
         * (collectives in the ranks, communicator creation). */
        if (p->ctx != ctx && p->ctx != (ctx | BDL_CTX_INTERNAL)) {
            pp = &p->next;
            continue;
        }
        unlink_posted(p);
        p->err = MPIX_ERR_REVOKED;
        p->done = 1;
        p->status.MPI_SOURCE = MPI_ANY_SOURCE;
        p->status.MPI_TAG = MPI_ANY_TAG;
        p->status.bd_cancelled = 0;
        p->status.bd_nbytes = 0;
        p->status.MPI_ERROR = MPIX_ERR_REVOKED;
        if (p->handle) {
            bdl_request_t *q = &bdl_g.reqs[p->handle];
            q->err = p->err;
            q->status = p->status;
            q->done = 1;
            q->impl = NULL;
            bdl_dt_release(q->dt);
            q->dt = NULL;
            free(p);
        }
    }
}

/* Revoke notices taken (arrive): a blocking probe looks at its
 * communicator again when this moves. */
static uint32_t g_revokes, g_revokes_spread;

/* A message arrives (in mailbox order): to the first posted receive it
 * matches, else to the unexpected queue. */
static void arrive(const bd_mentry_t *e, const char *data)
{
    if (e->kind == BD_ME_ACK) {
        bdl_p2p_sync_forget(e->sync_id);
        return;
    }
    if (e->tag == BDL_TAG_REVOKE && (e->ctx & BDL_CTX_INTERNAL)) {
        /* MPIX_Comm_revoke by another member: never a message to match. */
        int ctx = e->ctx & ~BDL_CTX_INTERNAL;
        if (bdl_comm_revoke_ctx(ctx)) {
            bdl_p2p_fail_revoked(ctx);
            g_revokes++;
        }
        return;
    }
    for (precv_t *p = g_posted; p; p = p->next)
        if (matches(p->ctx, p->src, p->tag, e)) {
            unlink_posted(p);
            complete_posted(p, e, data);
            return;
        }
    uint64_t inl = e->flags & (BD_SEND_FILE | BD_ME_PULL) ? 0 : e->nbytes;
    umsg_t *u = NULL;
    if (g_spare && g_spare_len == inl)
        u = g_spare;
    else
        free(g_spare);
    g_spare = NULL;
    if (!u)
        u = malloc(sizeof *u + inl);
    if (!u)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory keeping a %llu-byte unexpected message",
                  (unsigned long long)e->nbytes);
    u->e = *e;
    u->match_id = 0;
    /* A nonblocking send stays cancellable until matched (one of another
     * node through our master, which also drops data still to be pulled). */
    u->ux = e->send_id ? bd_mbox_unexp_add(my_mbox(), e->src_world, e->send_id) : -1;
    if (e->flags & BD_ME_CMA) {
        /* Unexpected: copy it out now, so its sender does not wait for our receive. */
        cma_read(e, 0, u->data, inl);
        u->e.flags &= ~BD_ME_CMA;
    } else if (inl) {
        memcpy(u->data, data, inl);
    }
    bdl_unexp_append(u);
}

/* Entries the master holds for us: older than the ring's, so first.  A
 * batch comes in the window, which arrive() may reuse (a posted
 * noncontiguous receive of a spill file unpacks through it, a pull asks the
 * master through it): the batch is copied out before any entry is taken. */
static void fetch_overflow(bd_mbox_t *mb)
{
    while (atomic_load_explicit(&mb->overflow, memory_order_acquire)) {
        bdl_req_begin(BD_REQ_MBOX_FETCH);
        bdl_rpc();
        int64_t n = bdl_resp()->arg[0];
        if (!n)
            break;
        uint64_t len = 0;
        for (int64_t i = 0; i < n; i++)
            len += ((bd_mentry_t *)(bdl_g.win + len))->size;
        char *batch = malloc(len);
        if (!batch)
            bdl_fatal(MPI_ERR_NO_MEM, "out of memory taking %lld held messages (%llu bytes)",
                      (long long)n, (unsigned long long)len);
        memcpy(batch, bdl_g.win, len);
        char *p = batch;
        for (int64_t i = 0; i < n; i++) {
            bd_mentry_t *e = (bd_mentry_t *)p;
            arrive(e, bd_mentry_data(e));
            p += e->size;
        }
        free(batch);
    }
}

static void send_acks(void);

/* Take everything the mailbox holds.  Returns how many entries. */
/* The mailbox's event count read before the last drain began: what a wait
 * after a failed poll compares with (bdl_p2p_poll_sleep). */
static uint32_t g_drain_seen;

int bdl_p2p_drain(void)
{
    bd_mbox_t *mb = my_mbox();
    g_drain_seen = atomic_load_explicit(&mb->event_seq, memory_order_acquire);
    fetch_overflow(mb);
    uint64_t tail = atomic_load_explicit(&mb->tail, memory_order_relaxed), pos = tail;
    int n = 0;
    bd_mentry_t *e;
    while ((e = bd_mbox_peek(mb, &pos))) {
        /* the flags are a hint here: the sender may turn it into a file */
        if (atomic_load_explicit(&e->state, memory_order_acquire) == BD_ME_READY &&
            (e->flags & BD_ME_CMA))
            prepare_cma_dest(e);
        if (bd_mbox_take(e)) {
            arrive(e, bd_mentry_data(e));
            n++;
        }
        bd_mbox_advance(mb, &pos, e);
        /* Published as we go: a single-copy sender watches it move. */
        atomic_store_explicit(&mb->tail, pos, memory_order_release);
    }
    if (pos != tail && bd_mbox_consumed(mb, pos))
        ring_master();
    if (g_nacks)
        send_acks();
    if (g_revokes != g_revokes_spread) {
        g_revokes_spread = g_revokes;
        bdl_comm_revoke_spread();
    }
    return n;
}

/* A rank blocked in a collective must still match: MPI's progress rule
 * completes a synchronous send whose receive is posted, whatever the
 * receiver does next, and only this rank matches its messages.  A
 * collective through the master that does not wait for it (another node's
 * Ssend then MPI_Barrier, MPICH's rqstatus at -nn 2) hung until the
 * deadlock check ended the job. */
int bdl_p2p_watch_begin(uint32_t *seen)
{
    if (!g_posted)
        return 0;
    bd_mbox_t *mb = my_mbox();
    *seen = atomic_load_explicit(&mb->event_seq, memory_order_acquire);
    bdl_p2p_drain();
    if (!g_posted)
        return 0;
    atomic_store_explicit(&mb->sleeping, 1, memory_order_seq_cst);
    return 1;
}

void bdl_p2p_match_posted(void)
{
    if (g_posted)
        bdl_p2p_drain();
}

void bdl_p2p_watch_end(void)
{
    atomic_store_explicit(&my_mbox()->sleeping, 0, memory_order_relaxed);
}

int bdl_p2p_rpc_watched(bd_req_t *r, int watch, uint32_t seen)
{
    if (watch) {
        r->flags |= BD_COLL_WATCH;
        r->arg[7] = seen;
    }
    bdl_resp()->status = BD_RESP_OK;
    bdl_rpc();
    if (!watch)
        return 0;
    bdl_p2p_watch_end();
    return bdl_resp()->status == BD_RESP_NOTYET;
}

/* ---------------------------------------------------------------- sending */

typedef struct {
    const bdl_dt_t *t;
    const void *buf;
    uint64_t count;
} pack_arg_t;

static void pack_into(void *arg, char *dst, uint64_t n)
{
    pack_arg_t *a = arg;
    bdl_dt_pack(a->t, a->buf, a->count, 0, dst, n);
}

/* Append an entry to world rank dst's mailbox, waiting for room; *end:
 * the ring position just past it.  Returns 0, or -1 when dst is gone (the
 * message is dropped). */
static int post(int dst, const bd_mentry_t *proto, const void *data, uint64_t nbytes,
                const bdl_dt_t *t, const void *buf, uint64_t count, uint64_t *end)
{
    bd_mbox_t *mb = mbox_of(dst);
    pack_arg_t a = {t, buf, count};
    for (;;) {
        bd_mbox_lock(mb);
        int rc = bd_mbox_append(mb, proto, data, nbytes, data || !nbytes ? NULL : pack_into, &a);
        if (end)
            *end = atomic_load_explicit(&mb->head, memory_order_relaxed);
        bd_mbox_unlock(mb);
        if (rc == 0) {
            if (bd_mbox_notify(mb))
                wake_receiver();
            return 0;
        }
        if (rc == -EPIPE) { /* nobody will ever receive it */
            drop_payload(proto);
            return -1;
        }
        if (dst == bdl_g.world_rank) {
            bdl_p2p_drain(); /* our own ring: we are its consumer */
            continue;
        }
        /* Full: the master empties it if its owner waits, else we wait for room. */
        bd_req_t *r = bdl_req_begin(BD_REQ_MBOX_FULL);
        r->peer = dst;
        r->arg[0] = (int64_t)bd_mentry_size(nbytes);
        bdl_rpc();
    }
}

int bdl_p2p_post(int dst, const bd_mentry_t *proto, const void *data, uint64_t nbytes,
                 const bdl_dt_t *t, const void *buf, uint64_t count)
{
    return post(dst, proto, data, nbytes, t, buf, count, NULL);
}

int bdl_p2p_post_end(int dst, const bd_mentry_t *proto, uint64_t *end)
{
    return post(dst, proto, NULL, 0, NULL, NULL, 0, end);
}

int bdl_p2p_try_post(int dst, const bd_mentry_t *proto, const void *data, uint64_t nbytes,
                     const bdl_dt_t *t, const void *buf, uint64_t count)
{
    bd_mbox_t *mb = mbox_of(dst);
    pack_arg_t a = {t, buf, count};
    bd_mbox_lock(mb);
    int rc = bd_mbox_append(mb, proto, data, nbytes, data || !nbytes ? NULL : pack_into, &a);
    bd_mbox_unlock(mb);
    if (rc == 0 && bd_mbox_notify(mb))
        wake_receiver();
    return rc == -EPIPE ? 0 : rc;
}

static void send_acks(void)
{
    /* Sending may drain (our own ring) and owe more: take the list first. */
    while (g_nacks) {
        ack_t a = g_acks[--g_nacks];
        if (a.remote) {
            bd_req_t *r = bdl_req_begin(BD_REQ_SYNC_ACK);
            r->peer = a.world;
            r->arg[0] = (int64_t)a.id;
            bdl_rpc();
            continue;
        }
        bd_mentry_t e = {.kind = BD_ME_ACK, .src_world = bdl_g.world_rank, .sync_id = a.id};
        bdl_p2p_post(a.world, &e, NULL, 0, NULL, NULL, 0);
    }
}

/* ---------------------------------------------------------------- waiting */

static uint32_t event_seq(void)
{
    return atomic_load_explicit(&my_mbox()->event_seq, memory_order_acquire);
}

uint32_t bdl_p2p_event_seq(void) { return event_seq(); }

/* Nothing matched since `seen` was read (before the last drain): wait for
 * the mailbox to move.  Spins for up to -spin while that is worth it
 * (bdl_spin_event), then sleeps in the master, which gives our run slot away. */
static void wait_event(uint32_t seen, int why, int ctx, int peer, int tag, int from)
{
    if (bdl_mt_busy()) { /* another thread may need the library meanwhile (mt.c) */
        if (event_seq() == seen)
            bdl_mt_pause();
        return;
    }
    bd_mbox_t *mb = my_mbox();
    uint64_t spin_ns = bdl_g.hdr->job.spin_ns;
    bdl_spin_await(from);
    if (spin_ns && bdl_g.hdr->job.nr > 1 && bdl_spin_event(mb, seen, from, spin_ns)) {
        bdl_spin_await(-1);
        return;
    }
    atomic_store_explicit(&mb->sleeping, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&mb->event_seq, memory_order_seq_cst) == seen) {
        bd_req_t *r = bdl_req_begin(BD_REQ_P2P_WAIT);
        r->arg[0] = seen;
        r->arg[1] = why;
        r->ctx = ctx;
        r->peer = peer;
        r->tag = tag;
        if (bdl_g.lc_api) {
            r->arg[1] = BD_WAIT_LCOLL;
            if (peer < 0)
                r->peer = bdl_g.lc_peer;
            r->ctx = bdl_g.lc_ctx;
            r->arg[3] = bdl_g.lc_api;
            r->arg[4] = bdl_g.lc_root;
        }
        bdl_rpc();
    }
    atomic_store_explicit(&mb->sleeping, 0, memory_order_relaxed);
    bdl_spin_await(-1);
}

void bdl_p2p_wait_event(uint32_t seen, int why) { wait_event(seen, why, -1, -1, -1, -1); }

void bdl_p2p_poll_sleep(uint64_t max_ns)
{
    bd_mbox_t *mb = my_mbox();
    uint32_t seen = g_drain_seen;
    /* as wait_event: a sender of this node that sees us asleep rings the master */
    atomic_store_explicit(&mb->sleeping, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&mb->event_seq, memory_order_seq_cst) == seen) {
        bd_req_t *r = bdl_req_begin(BD_REQ_P2P_WAIT);
        r->arg[0] = seen;
        r->arg[1] = BD_WAIT_POLL;
        r->arg[2] = (int64_t)max_ns;
        r->ctx = -1;
        r->peer = -1;
        r->tag = -1;
        bdl_rpc();
    }
    atomic_store_explicit(&mb->sleeping, 0, memory_order_relaxed);
}

/* ---------------------------------------------------------------- receiving */

/* The first unexpected message matching (ctx, src, tag); with remove, it
 * leaves the queue (matched: its sender can no longer cancel it).
 * Messages their senders cancelled are dropped on the way. */
static umsg_t *find_unexpected(int ctx, int src, int tag, int remove)
{
    for (umsg_t *u = bdl_unexp_first(ctx, src), *nx; u; u = nx) {
        nx = bdl_unexp_next(u, src);
        if (!matches(ctx, src, tag, &u->e))
            continue;
        int gone = 0;
        if (u->ux >= 0) {
            if (remove || bd_mbox_unexp_cancelled(my_mbox(), u->ux)) {
                gone = !bd_mbox_unexp_claim(my_mbox(), u->ux);
                u->ux = -1;
            }
        }
        if (gone || remove)
            bdl_unexp_unlink(u);
        if (gone) {
            drop_payload(&u->e);
            free(u);
            continue;
        }
        return u;
    }
    return NULL;
}

static int take_unexpected(umsg_t *u, void *buf, const bdl_dt_t *t, uint64_t count, MPI_Status *st)
{
    int err = deliver(&u->e, u->data, buf, t, count, st);
    owe_ack(&u->e);
    free(u);
    if (g_nacks)
        send_acks();
    return err;
}

/* A blocking receive in two halves, so MPI_Sendrecv can post it before it
 * sends.  The unexpected queue holds only messages older than everything
 * still in the mailbox, so it is searched without draining first; a
 * receive not satisfied there is posted before the mailbox is drained, and
 * a large message still in the ring is then read once, straight into buf. */
bdl_precv_t *bdl_recv_begin(int ctx, int src, int src_world, int tag, void *buf, uint64_t count,
                            const bdl_dt_t *t, MPI_Status *st, int *err)
{
    umsg_t *u = find_unexpected(ctx, src, tag, 1);
    if (u) {
        *err = take_unexpected(u, buf, t, count, st);
        return NULL;
    }
    precv_t *p = malloc(sizeof *p);
    if (!p)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory posting a receive");
    *p = (precv_t){.ctx = ctx,
                   .src = src,
                   .src_world = src_world,
                   .tag = tag,
                   .buf = buf,
                   .dt = t,
                   .count = count};
    *g_posted_tail = p;
    g_posted_tail = &p->next;
    return p;
}

int bdl_recv_end(bdl_precv_t *p, MPI_Status *st)
{
    /* Done already (the send drained): no drain, which could only take the
     * peer's next message before its receive is posted. */
    while (!p->done) {
        uint32_t seen = event_seq();
        bdl_p2p_drain();
        if (p->done)
            break;
        wait_event(seen, BD_WAIT_RECV, p->ctx, p->src, p->tag, p->src_world);
    }
    if (st != MPI_STATUS_IGNORE)
        *st = p->status;
    int err = p->err;
    free(p);
    return err;
}

void bdl_recv_drop(bdl_precv_t *p)
{
    if (!p->done)
        unlink_posted(p);
    free(p);
}

int bdl_recv_typed(int ctx, int src, int tag, void *buf, uint64_t count, const bdl_dt_t *t,
                   MPI_Status *st)
{
    int err = MPI_SUCCESS;
    bdl_precv_t *p = bdl_recv_begin(ctx, src, -1, tag, buf, count, t, st, &err);
    return p ? bdl_recv_end(p, st) : err;
}

int bdl_recv_bytes(int ctx, int src, int tag, void *buf, uint64_t cap, MPI_Status *st)
{
    return bdl_recv_typed(ctx, src, tag, buf, cap, bdl_dt_byte(), st);
}

void bdl_p2p_post_recv(int handle, int ctx, int src, int tag)
{
    bdl_request_t *q = &bdl_g.reqs[handle];
    precv_t *p = calloc(1, sizeof *p);
    if (!p)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory posting a receive");
    *p = (precv_t){.ctx = ctx,
                   .src = src,
                   .src_world = -1,
                   .tag = tag,
                   .handle = handle,
                   .buf = q->buf,
                   .dt = q->dt,
                   .count = q->count};
    /* As bdl_recv_begin: the unexpected queue first, then post, then drain. */
    umsg_t *u = find_unexpected(ctx, src, tag, 1);
    if (u && defer_ok(p, &u->e)) {
        defer(p, &u->e);
        free(u);
        if (g_nacks)
            send_acks();
        return;
    }
    if (u) {
        free(p);
        q->err = take_unexpected(u, q->buf, q->dt, q->count, &q->status);
        q->done = bdl_req_stamp();
        bdl_dt_release(q->dt);
        q->dt = NULL;
        return;
    }
    q->impl = p;
    *g_posted_tail = p;
    g_posted_tail = &p->next;
    bdl_p2p_drain();
}

/* Complete what has arrived for the receive requests qs[n]; with block,
 * wait until one of them completes.  Returns how many are done. */
int bdl_p2p_recv_poll(bdl_request_t **qs, int n, int block)
{
    for (;;) {
        uint32_t seen = event_seq();
        bdl_p2p_drain();
        if (g_nacks)
            send_acks();
        int ndone = 0;
        for (int i = 0; i < n; i++)
            ndone += qs[i]->done;
        if (ndone || !block)
            return ndone;
        wait_event(seen, n == 1 ? BD_WAIT_RECV : BD_WAIT_ANY, -1, -1, n, -1);
    }
}

int bdl_p2p_cancel_recv(bdl_request_t *q)
{
    precv_t *p = q->impl;
    if (q->done || !p)
        return 0;
    unlink_posted(p);
    free(p);
    q->impl = NULL;
    return 1;
}

void bdl_p2p_recv_moved(bdl_request_t *q, int handle)
{
    precv_t *p = q->impl;
    if (p && !q->done)
        p->handle = handle;
}

int bdl_p2p_cancel_send(int dst, uint64_t send_id)
{
    if (!bdl_p2p_local(dst)) {
        /* Our master asks dst's, behind the message (node.c bdr_node_cancel). */
        bd_req_t *r = bdl_req_begin(BD_REQ_MBOX_CANCEL);
        r->peer = dst;
        r->rid = send_id;
        bdl_rpc();
        return bdl_resp()->flag;
    }
    bd_mbox_t *mb = mbox_of(dst);
    bd_mentry_t e;
    int got;
    for (;;) {
        bd_mbox_lock(mb);
        got = bd_mbox_cancel(mb, bdl_g.world_rank, send_id, &e);
        bd_mbox_unlock(mb);
        if (got >= 0)
            break;
            /* Being taken: once past the ring it is in the table below (the
         * owner registers it before it moves on), or with the master. */
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
    if (got) {
        if (e.flags & BD_ME_CMA)
            bdl_p2p_cma_forget(send_id);
        else
            drop_payload(&e);
        return 1;
    }
    /* Drained by the receiver, not matched yet. */
    if (bd_mbox_unexp_cancel(mb, bdl_g.world_rank, send_id))
        return 1;
    /* The master may hold it for a receiver that waited. */
    bd_req_t *r = bdl_req_begin(BD_REQ_MBOX_CANCEL);
    r->peer = dst;
    r->rid = send_id;
    bdl_rpc();
    return bdl_resp()->flag;
}

/* ---------------------------------------------------------------- probing */

int bdl_p2p_probe(int ctx, int src, int tag, int blocking, int take, int remote, int src_world,
                  MPI_Status *st, uint64_t *match_id)
{
    uint32_t revokes = g_revokes;
    for (;;) {
        uint32_t seen = event_seq();
        bdl_p2p_drain();
        umsg_t *u = find_unexpected(ctx, src, tag, take);
        if (u) {
            if (st != MPI_STATUS_IGNORE) {
                st->MPI_SOURCE = u->e.src;
                st->MPI_TAG = u->e.tag;
                st->bd_cancelled = 0;
                st->bd_nbytes = (long long)u->e.nbytes;
            }
            if (take) {
                u->match_id = ++g_next_match_id;
                u->next = g_mprobed;
                g_mprobed = u;
                *match_id = u->match_id;
                /* Matched now: the synchronous sender may go on. */
                owe_ack(&u->e);
                u->e.flags &= ~(BD_SEND_SYNC | BD_ME_REMOTE_SYNC);
                if (g_nacks)
                    send_acks();
            }
            return 1;
        }
        if (!blocking) {
            if (remote || bdl_p2p_parked(src_world))
                bdl_p2p_poll_failed_remote();
            else
                bdl_p2p_poll_failed();
            return 0;
        }
        /* No message will come for a probe on a revoked communicator. */
        if (revokes != g_revokes && bdl_comm_ctx_revoked(ctx))
            return -1;
        wait_event(seen, take ? BD_WAIT_MPROBE : BD_WAIT_PROBE, ctx, src, tag, -1);
    }
}

int bdl_p2p_mrecv(uint64_t match_id, void *buf, const bdl_dt_t *t, uint64_t count, MPI_Status *st)
{
    umsg_t **pp = &g_mprobed;
    while (*pp && (*pp)->match_id != match_id)
        pp = &(*pp)->next;
    umsg_t *u = *pp;
    if (!u)
        bdl_fatal(MPI_ERR_INTERN, "no matched message %llu", (unsigned long long)match_id);
    *pp = u->next;
    return take_unexpected(u, buf, t, count, st);
}

/* ---------------------------------------------------------------- synchronous waits */

void bdl_p2p_flow_wait(uint64_t id, int dst)
{
    for (;;) {
        uint32_t seen = event_seq();
        bdl_p2p_drain();
        if (sync_index(id) < 0)
            return;
        wait_event(seen, BD_WAIT_FLOW, -1, dst, -1, -1);
    }
}

int bdl_p2p_sync_done(uint64_t id, int blocking)
{
    for (;;) {
        uint32_t seen = event_seq();
        bdl_p2p_drain();
        if (sync_index(id) < 0)
            return 1;
        if (!blocking)
            return 0;
        wait_event(seen, BD_WAIT_SSEND, -1, -1, -1, -1);
    }
}
