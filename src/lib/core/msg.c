/* Point-to-point sending on the rank's side, and the point-to-point
 * request kinds.  Sends are buffered (bdmpi.txt 5.3), so every send
 * completes at once and the sender keeps running: to a rank of this node
 * straight into its mailbox (match.c), inline up to the eager limit, larger
 * ones in a spill file this rank writes and the receiver reads; to a rank
 * of another node through the master.  Receives are matched in the rank
 * (match.c). */
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bd_iowatch.h"
#include "bd_fs.h"
#include "bd_log.h"
#include "bd_mbox.h"
#include "core.h"
#include "dt.h"
#include "request.h"

void bdl_status_empty(MPI_Status *st)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_TAG = MPI_ANY_TAG;
    st->MPI_ERROR = MPI_SUCCESS;
    st->bd_cancelled = 0;
    st->bd_nbytes = 0;
}

void bdl_status_proc_null(MPI_Status *st)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    bdl_status_empty(st);
    st->MPI_SOURCE = MPI_PROC_NULL;
}

int bdl_check_dtype(MPI_Datatype dt, int *size)
{
    const bdl_dt_t *t = bdl_dt_lookup(dt);
    if (!t || !t->committed || !t->contig || (t->psize && t->runs[0].off) || t->psize > INT_MAX)
        return -1;
    *size = (int)t->psize;
    return 0;
}

/* ---------------------------------------------------------------- sending */

static int spill_open(uint64_t n, uint64_t *file_num, char *path, size_t plen)
{
    *file_num = ++bdl_g.spill_seq;
    bd_spill_path(path, plen, bdl_g.hdr->jobdir, bdl_g.world_rank, *file_num);
    int fd = BD_FAULT_SYS(BD_FAULT_SPILL_OPEN)
                 ?: open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        bdl_fatal(MPI_ERR_OTHER, "cannot create spill file %s for a %llu-byte message: %s", path,
                  (unsigned long long)n, strerror(errno));
    return fd;
}

static void spill_failed(const char *path, uint64_t n, int err)
{
    bdl_fatal(MPI_ERR_OTHER, "cannot write %llu bytes to spill file %s in %s: %s",
              (unsigned long long)n, path, bdl_g.hdr->jobdir, strerror(err));
}

void bdl_spill_write(const void *buf, uint64_t count, const bdl_dt_t *t, const char *contig,
                     uint64_t n, int dst, uint64_t *file_num)
{
    char path[BD_PATH_MAX + 64];
    uint64_t total;
    if (bd_spill_charge(bdl_g.hdr, n, &total) < 0) {
        char what[48], msg[BD_PATH_MAX + 256];
        snprintf(what, sizeof what, "a message to rank %d", dst);
        bd_spill_quota_msg(msg, sizeof msg, bdl_g.hdr, bdl_g.world_rank, n, what, total);
        bdl_fatal(MPI_ERR_QUOTA, "%s", msg);
    }
    int fd = spill_open(n, file_num, path, sizeof path);
    bd_fs_ck_t ck; /* the checksum trailer, which the reader checks */
    bd_fs_ck_init(&ck);
    if (contig) {
        bdl_lib_mem_prepare(contig, n, 0);
        bd_fs_ck_add(&ck, contig, n);
        /* in steps, each one storage call for the stall detector */
        int rc = 0;
        for (uint64_t off = 0; off < n && rc == 0; off += BDL_SPILL_STEP) {
            uint64_t k = n - off < BDL_SPILL_STEP ? n - off : BDL_SPILL_STEP;
            rc = BD_IO_NEG(BD_FAULT_SPILL_WRITE, bd_write_full(fd, contig + off, k));
        }
        if (rc < 0)
            spill_failed(path, n, -rc);
    } else {
        /* Pack window-sized pieces and write each: no copy of the whole message. */
        for (uint64_t off = 0; off < n;) {
            uint64_t k = n - off < bdl_g.window ? n - off : bdl_g.window;
            bdl_dt_pack(t, buf, count, off, bdl_g.win, k);
            bd_fs_ck_add(&ck, bdl_g.win, k);
            int rc = BD_IO_NEG(BD_FAULT_SPILL_WRITE, bd_write_full(fd, bdl_g.win, k));
            if (rc < 0)
                spill_failed(path, n, -rc);
            off += k;
        }
    }
    int rc = bd_fs_ck_write(&ck, fd, n);
    bd_fs_ck_free(&ck);
    if (rc < 0)
        spill_failed(path, n, -rc);
    if (close(fd) < 0)
        spill_failed(path, n, errno);
}

void bdl_spill_check(bd_fs_ck_t *ck, int fd, const char *path, uint64_t take, uint64_t n)
{
    int rc = 0;
    for (uint64_t off = take; off < n && rc == 0;) { /* a truncated receive: the rest too */
        uint64_t k = n - off < bdl_g.window ? n - off : bdl_g.window;
        rc = bd_pread_full(fd, bdl_g.win, k, off);
        if (rc == 0)
            bd_fs_ck_add(ck, bdl_g.win, k);
        off += k;
    }
    uint64_t bad = 0;
    if (rc == 0)
        rc = bd_fs_ck_verify(ck, fd, n, &bad);
    bd_fs_ck_free(ck);
    if (rc == -EBADMSG)
        bdl_fatal(MPI_ERR_OTHER, "storage returned corrupted data for rank %d at offset %llu in %s",
                  bdl_g.world_rank, (unsigned long long)bad, path);
    if (rc < 0)
        bdl_fatal(MPI_ERR_OTHER, "cannot read spill file %s back to check it: %s", path,
                  strerror(-rc));
}

/* A message to a rank of another node, or a one-sided service message:
 * through the master (small in the window, large in a spill file). */
static void send_via_master(int ctx, int world_dst, int myrank, int tag, uint64_t n, int in_file,
                            uint64_t file_num, int sync, uint64_t send_id, uint64_t sync_id)
{
    bd_req_t *r = bdl_req_begin(BD_REQ_SEND);
    r->ctx = ctx;
    r->peer = world_dst;
    r->myrank = myrank;
    r->tag = tag;
    r->nbytes = n;
    r->flags = (in_file ? BD_SEND_FILE : 0) | (sync ? BD_SEND_SYNC : 0);
    r->arg[0] = (int64_t)file_num;
    r->arg[1] = (int64_t)sync_id;
    r->rid = send_id;
    bdl_rpc();
}

/* A small message to a rank of another node, posted to our master's queue
 * (bd_slot_t.outq) without waiting: 1, or 0 when it does not fit (too large,
 * or the queue is full: the request path then ships the queue first, so the
 * order holds).  The master ships the queue before any request of ours, so
 * whatever we ask next (a wait, a cancel, a large send) comes after. */
static int post_remote(int ctx, int world_dst, int myrank, int tag, const bdl_dt_t *t,
                       const void *buf, uint64_t count, const char *contig, uint64_t n, int sync,
                       uint64_t send_id, uint64_t sync_id)
{
    if (n > BD_OUTQ_MAX || ctx == BD_CTX_RMA_SVC)
        return 0;
    bd_slot_t *sl = bdl_g.slot;
    const uint64_t hs = sizeof(bd_oentry_t);
    uint64_t head = atomic_load_explicit(&sl->ob_head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&sl->ob_tail, memory_order_acquire);
    uint64_t need = (hs + n + 7) & ~7ull, off = head % BD_OUTQ_BYTES, pad = 0;
    if (off + need > BD_OUTQ_BYTES)
        pad = BD_OUTQ_BYTES - off;
    if (head + pad + need - tail > BD_OUTQ_BYTES)
        return 0;
    if (pad >= hs) {
        bd_oentry_t p = {.size = (uint32_t)pad, .dst = -1};
        memcpy(sl->outq + off, &p, sizeof p);
    }
    off = (head + pad) % BD_OUTQ_BYTES;
    bd_oentry_t e = {.size = (uint32_t)need,
                     .dst = world_dst,
                     .ctx = ctx,
                     .src = myrank,
                     .tag = tag,
                     .nbytes = (uint32_t)n,
                     .send_id = send_id,
                     .sync_id = sync ? sync_id : 0};
    memcpy(sl->outq + off, &e, sizeof e);
    if (n && contig)
        memcpy(sl->outq + off + hs, contig, n);
    else if (n)
        bdl_dt_pack(t, buf, count, 0, sl->outq + off + hs, n);
    atomic_store_explicit(&sl->ob_head, head + pad + need, memory_order_seq_cst);
    if (!atomic_exchange_explicit(&sl->ob_bell, 1, memory_order_seq_cst)) {
        uint64_t one = 1;
        while (write(bdl_g.event_fd, &one, sizeof one) < 0 && errno == EINTR)
            ;
    }
    atomic_fetch_add_explicit(&sl->stats[BD_STAT_SENDS_POSTED], 1, memory_order_relaxed);
    return 1;
}

/* A large contiguous message to a rank of another node without spill
 * files (-net-direct; docs/design.md "Several nodes"): our master reads it
 * from our memory in chunks and streams them to the receiver's master,
 * which writes them into the receive buffer when the receiver takes the
 * message soon, else into a spill file of its node.  The buffer is made
 * resident first, and it stays so: we hold our run slot until the master
 * answers, once it has read the last byte (running ranks are never
 * unloaded), so the send is complete when the call returns. */
static int net_direct_ok(int ctx, int world_dst, uint64_t n, const char *contig)
{
    uint64_t min = bdl_g.hdr->job.net_direct;
    return min && n >= min && contig && ctx != BD_CTX_RMA_SVC && !bdl_p2p_local(world_dst) &&
           n > bdl_g.threshold && atomic_load_explicit(&bdl_g.slot->cma_ok, memory_order_relaxed);
}

static void send_pulled(int ctx, int world_dst, int myrank, int tag, const char *contig, uint64_t n,
                        int sync, uint64_t send_id, uint64_t sync_id)
{
    bdl_lib_mem_prepare(contig, n, 0);
    bd_req_t *r = bdl_req_begin(BD_REQ_SEND);
    r->ctx = ctx;
    r->peer = world_dst;
    r->myrank = myrank;
    r->tag = tag;
    r->nbytes = n;
    r->flags = BD_SEND_PULL | (sync ? BD_SEND_SYNC : 0);
    r->arg[1] = (int64_t)sync_id;
    r->arg[2] = (int64_t)(uintptr_t)contig;
    r->rid = send_id;
    bdl_rpc();
    _Atomic uint64_t *st = bdl_g.slot->stats;
    atomic_fetch_add_explicit(&st[BD_STAT_NET_DIRECT], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&st[BD_STAT_NET_DIRECT_BYTES], n, memory_order_relaxed);
}

/* A message from another node whose data has not come yet (BD_ME_PULL,
 * -net-direct): ask our master for it.  With a contiguous destination dst
 * (made resident for writing here, and resident until the answer: we hold
 * our run slot meanwhile) it writes the first `take` bytes there and
 * answers flag 1; otherwise (dst NULL) it answers with the whole message in
 * a spill file, and *e becomes that spill-file message. */
int bdl_net_pull(bd_mentry_t *e, char *dst, uint64_t take)
{
    if (dst)
        bdl_lib_mem_prepare(dst, take, 1);
    bd_req_t *r = bdl_req_begin(BD_REQ_NET_PULL);
    r->peer = e->src_world;
    r->rid = e->file_num;
    r->nbytes = dst ? take : 0;
    r->arg[0] = (int64_t)(uintptr_t)dst;
    r->arg[1] = dst != NULL;
    bdl_rpc();
    const bd_resp_t *rs = bdl_resp();
    if (rs->flag)
        return 1;
    e->flags = (e->flags & ~BD_ME_PULL) | BD_SEND_FILE;
    e->file_num = (uint64_t)rs->arg[0];
    return 0;
}

static void count_send(int in_file, uint64_t n)
{
    _Atomic uint64_t *st = bdl_g.slot->stats;
    atomic_fetch_add_explicit(&st[in_file ? BD_STAT_SENDS_FILE : BD_STAT_SENDS_MEM], 1,
                              memory_order_relaxed);
    atomic_fetch_add_explicit(&st[in_file ? BD_STAT_BYTES_FILE : BD_STAT_BYTES_MEM], n,
                              memory_order_relaxed);
}

int bdl_send_typed_id(int ctx, int world_dst, int myrank, int tag, const void *buf, uint64_t count,
                      const bdl_dt_t *t, int sync, uint64_t send_id, uint64_t *sync_id,
                      uint64_t *cma_id)
{
    uint64_t n = count * t->psize;
    const char *contig = bdl_dt_contig(t, buf, count);
    bdl_g.nsent++;
    int direct = ctx != BD_CTX_RMA_SVC && bdl_p2p_local(world_dst);
    uint64_t limit = direct ? bdl_g.hdr->eager : bdl_g.threshold;
    uint64_t file_num = 0;
    int in_file = n > limit;
    uint64_t sid = sync ? bdl_p2p_sync_new() : 0;
    if (sync_id)
        *sync_id = sid;
    if (cma_id)
        *cma_id = 0;
    if (direct && in_file && n <= bdl_g.hdr->mbox_ring / 8) {
        /* Mid-size: inline too, if the ring has room now.  Two copies of up
         * to 1/8 of a ring cost far less than a process_vm_readv here (4-5
         * us for 4-8 KiB, 16-20 us for 32 KiB; 0.4-2.4 us for the two
         * copies), let alone a spill file for a receiver that does not run
         * (0.5-1.5 ms per exchange of 8 KiB at -ns 8 -nr 2).  The ring's
         * size bounds the memory; the master turns such an entry into a
         * spill file if it must take it out of the ring for a receiver that
         * waits (only -msg-threshold bytes are held in memory). */
        bd_mentry_t e = {.kind = BD_ME_MSG,
                         .flags = sync ? BD_SEND_SYNC : 0,
                         .ctx = ctx,
                         .src = myrank,
                         .tag = tag,
                         .src_world = bdl_g.world_rank,
                         .nbytes = n,
                         .send_id = send_id,
                         .sync_id = sid};
        if (bdl_p2p_try_post(world_dst, &e, contig, n, t, buf, count) == 0) {
            count_send(0, n);
            return MPI_SUCCESS;
        }
    }
    if (direct && in_file && contig && bdl_p2p_cma_usable(world_dst)) {
        /* Single copy: the receiver reads it from our memory (counted when
         * it completes, as what it became). */
        bdl_lib_mem_prepare(contig, n, 0);
        bd_mentry_t e = {.kind = BD_ME_MSG,
                         .flags = sync ? BD_SEND_SYNC : 0,
                         .ctx = ctx,
                         .src = myrank,
                         .tag = tag,
                         .src_world = bdl_g.world_rank,
                         .nbytes = n,
                         .send_id = send_id ? send_id : ++bdl_g.next_rid,
                         .sync_id = sid};
        uint64_t id = bdl_p2p_cma_post(world_dst, &e, contig);
        if (cma_id)
            *cma_id = id;
        else
            bdl_p2p_cma_done(id, 1);
        return MPI_SUCCESS;
    }
    if (!direct && net_direct_ok(ctx, world_dst, n, contig)) {
        send_pulled(ctx, world_dst, myrank, tag, contig, n, sync, send_id, sid);
        return MPI_SUCCESS;
    }
    count_send(in_file, n);
    if (in_file)
        bdl_spill_write(buf, count, t, contig, n, world_dst, &file_num);
    int flow = direct && in_file && bdl_g.hdr->job.p2p_tokens;
    if (flow) /* given back by whoever removes the file (bd_mbox_drop_file) */
        atomic_fetch_add_explicit(&bdl_g.slot->flow_out, n, memory_order_relaxed);
    if (direct) {
        bd_mentry_t e = {.kind = BD_ME_MSG,
                         .flags = (in_file ? BD_SEND_FILE : 0) | (sync ? BD_SEND_SYNC : 0) |
                                  (flow ? BD_ME_FLOW : 0),
                         .ctx = ctx,
                         .src = myrank,
                         .tag = tag,
                         .src_world = bdl_g.world_rank,
                         .nbytes = n,
                         .send_id = send_id,
                         .sync_id = sid,
                         .file_num = file_num};
        if (in_file || !n)
            bdl_p2p_post(world_dst, &e, NULL, 0, NULL, NULL, 0);
        else
            bdl_p2p_post(world_dst, &e, contig, n, t, buf, count);
        return MPI_SUCCESS;
    }
    if (!in_file &&
        post_remote(ctx, world_dst, myrank, tag, t, buf, count, contig, n, sync, send_id, sid))
        return MPI_SUCCESS;
    if (!in_file && n) {
        if (contig)
            memcpy(bdl_g.win, contig, n);
        else
            bdl_dt_pack(t, buf, count, 0, bdl_g.win, n);
    }
    send_via_master(ctx, world_dst, myrank, tag, n, in_file, file_num, sync, send_id, sid);
    return MPI_SUCCESS;
}

/* Flow control (-p2p-tokens; docs/design.md, "Transient memory of
 * communication"): a blocking standard send of n bytes to world rank dst
 * is made synchronous when it goes to a rank of this node, is larger than
 * the eager limit, and this rank's messages waiting in spill files would
 * pass the budget with it.  MPI lets a standard send be either. */
int bdl_flow_sync(int dst, uint64_t n)
{
    uint64_t tokens = bdl_g.hdr->job.p2p_tokens;
    if (!tokens || n <= bdl_g.hdr->eager || dst == bdl_g.world_rank || !bdl_p2p_local(dst))
        return 0; /* a send to itself would wait for a receive only it can post */
    uint64_t out = atomic_load_explicit(&bdl_g.slot->flow_out, memory_order_acquire);
    if (out + n <= tokens)
        return 0;
    int i = bd_world_slot(bdl_g.hdr, dst);
    bd_slot_t *r = i >= 0 ? bd_shm_slot(bdl_g.hdr, (uint32_t)i) : NULL;
    uint32_t no = 0;
    if (r && atomic_compare_exchange_strong_explicit(&r->flow_logged, &no, 1, memory_order_relaxed,
                                                     memory_order_relaxed))
        bd_log_error("note: flow control: rank %d has %llu bytes of messages not yet received, a "
                     "%llu-byte MPI_Send to rank %d waits for its receive (-p2p-tokens %llu; "
                     "logged once per receiver)",
                     bdl_g.world_rank, (unsigned long long)out, (unsigned long long)n, dst,
                     (unsigned long long)tokens);
    atomic_fetch_add_explicit(&bdl_g.slot->stats[BD_STAT_FLOW_WAITS], 1, memory_order_relaxed);
    return 1;
}

int bdl_send_typed(int ctx, int world_dst, int myrank, int tag, const void *buf, uint64_t count,
                   const bdl_dt_t *t, int sync, uint64_t *sync_id)
{
    return bdl_send_typed_id(ctx, world_dst, myrank, tag, buf, count, t, sync, 0, sync_id, NULL);
}

void bdl_ssend_wait(uint64_t id) { bdl_p2p_sync_done(id, 1); }

int bdl_send_bytes(int ctx, int world_dst, int myrank, int tag, const void *buf, uint64_t n,
                   int sync, uint64_t *sync_id)
{
    return bdl_send_typed(ctx, world_dst, myrank, tag, buf, n, bdl_dt_byte(), sync, sync_id);
}

/* ---------------------------------------------------------------- requests */

/* Try to complete a receive; blocking: wait for its message. */
static void recv_progress(bdl_request_t *q, int blocking)
{
    if (q->done)
        return;
    if (bdl_p2p_recv_poll(&q, 1, blocking) || q->detached)
        return;
    if (q->remote || bdl_p2p_parked(q->src_world1 - 1))
        bdl_p2p_poll_failed_remote();
    else
        bdl_p2p_poll_failed();
}

/* A single-copy send is pending until it has been read. */
static int cma_pending(bdl_request_t *q, int blocking)
{
    if (q->cma_id && bdl_p2p_cma_done(q->cma_id, blocking))
        q->cma_id = 0;
    return q->cma_id != 0;
}

/* Until it is received, a synchronous send is pending. */
static void ssend_progress(bdl_request_t *q, int blocking)
{
    if (q->done)
        return;
    if (!cma_pending(q, blocking))
        q->done = bdl_p2p_sync_done(q->rid, blocking);
    if (q->done)
        return;
    if (q->remote && !q->cma_id)
        bdl_p2p_poll_failed_remote();
    else
        bdl_p2p_poll_failed();
}

/* A buffered send is complete from the start; a single-copy one once read. */
static void send_progress(bdl_request_t *q, int blocking)
{
    if (!q->done)
        q->done = !cma_pending(q, blocking);
}

/* A poll of the set qs[n] of one kind found nothing: it waited only for
 * other nodes' messages if every request of it does and the set holds no
 * other kind (whose completion could come from this node). */
static void poll_failed_set(bdl_request_t **qs, int n, const bdl_req_poll_t *p)
{
    int remote = !p->others;
    for (int i = 0; i < n && remote; i++)
        remote = (qs[i]->remote || bdl_p2p_parked(qs[i]->src_world1 - 1)) && !qs[i]->cma_id;
    if (remote)
        bdl_p2p_poll_failed_remote();
    else
        bdl_p2p_poll_failed();
}

/* Single-copy sends complete without anyone else waiting in the master:
 * alone in a blocking set, wait for the first. */
static int send_poll(bdl_request_t **qs, int n, const bdl_req_poll_t *p)
{
    int ndone = 0;
    for (int i = 0; i < n; i++) {
        send_progress(qs[i], 0);
        ndone += qs[i]->done;
    }
    if (!ndone && n && p->block && !p->others) {
        send_progress(qs[0], 1);
        ndone = 1;
    }
    return ndone;
}

/* Synchronous sends complete by acknowledgements in our mailbox: alone in
 * the set they wait for it to move; with other kinds they only poll. */
static int ssend_poll(bdl_request_t **qs, int n, const bdl_req_poll_t *p)
{
    for (;;) {
        uint32_t seen = bdl_p2p_event_seq();
        int ndone = 0;
        for (int i = 0; i < n; i++) {
            if (!qs[i]->done)
                qs[i]->done = bdl_p2p_sync_done(qs[i]->rid, 0);
            ndone += qs[i]->done;
        }
        if (ndone)
            return ndone;
        if (!p->block || p->others) {
            poll_failed_set(qs, n, p);
            return 0;
        }
        bdl_p2p_wait_event(seen, BD_WAIT_SSEND);
    }
}

/* Receives wait in the rank (on its mailbox) only when nothing else of the
 * set needs polling meanwhile. */
static int recv_poll(bdl_request_t **qs, int n, const bdl_req_poll_t *p)
{
    int ndone = bdl_p2p_recv_poll(qs, n, p->block && !p->spinning);
    if (!ndone && !p->block)
        poll_failed_set(qs, n, p);
    return ndone;
}

/* Withdraw a posted receive that has not been matched yet. */
static int recv_cancel(bdl_request_t *q, MPI_Request h)
{
    (void)h;
    if (!bdl_p2p_cancel_recv(q))
        return MPI_SUCCESS;
    q->done = 1;
    bdl_status_empty(&q->status);
    q->status.bd_cancelled = 1;
    bdl_dt_release(q->dt);
    q->dt = NULL;
    return MPI_SUCCESS;
}

/* A send's message is buffered at once: it can be withdrawn until it is
 * received (the master removes it, and its spill file); after that the
 * cancel fails, which MPI allows (MPI_Test_cancelled says which happened). */
static int send_cancel(bdl_request_t *q, MPI_Request h)
{
    (void)h;
    if (!q->send_id || q->status.bd_cancelled)
        return MPI_SUCCESS;
    if (!bdl_p2p_cancel_send(q->send_dst, q->send_id))
        return MPI_SUCCESS;
    if (q->rid)
        bdl_p2p_sync_forget(q->rid);
    q->done = 1;
    q->send_id = 0;
    q->cma_id = 0;
    bdl_status_empty(&q->status);
    q->status.bd_cancelled = 1;
    return MPI_SUCCESS;
}

/* MPI_Request_free: a receive still posted is detached (it completes
 * whenever the library next looks, MPI 3.1 3.7.3); anything else is freed. */
static int p2p_free(bdl_request_t *q, MPI_Request *h)
{
    *h = MPI_REQUEST_NULL;
    if (q->ops == &bdl_req_recv_ops) /* the program may learn of its completion otherwise */
        bdl_p2p_recv_settle(q);
    if (q->persistent) {
        bdl_dt_alias_free(q->pdt);
        q->pdt = MPI_DATATYPE_NULL;
    }
    if (!q->inactive && q->ops == &bdl_req_recv_ops && !q->done) {
        q->persistent = 0;
        q->detached = 1;
        bdl_g.ndetached++;
        return MPI_SUCCESS;
    }
    bdl_dt_release(q->dt);
    q->dt = NULL;
    bdl_req_free_slot(q);
    return MPI_SUCCESS;
}

const bdl_req_ops_t bdl_req_send_ops = {
    .progress = send_progress,
    .poll = send_poll,
    .poll_order = 0,
    .spins = 1,
    .cancel = send_cancel,
    .free = p2p_free,
};

const bdl_req_ops_t bdl_req_ssend_ops = {
    .progress = ssend_progress,
    .poll = ssend_poll,
    .poll_order = 0,
    .spins = 1,
    .poll_ends = 1,
    .cancel = send_cancel,
    .free = p2p_free,
};

/* A receive is reported: its data may still be in its spill file (match.c). */
static void recv_complete(bdl_request_t *q) { bdl_p2p_recv_settle(q); }

static int recv_status(bdl_request_t *q, MPI_Request h, MPI_Status *st)
{
    (void)h;
    bdl_p2p_recv_settle(q);
    if (st != MPI_STATUS_IGNORE)
        *st = q->status;
    return MPI_SUCCESS;
}

const bdl_req_ops_t bdl_req_recv_ops = {
    .progress = recv_progress,
    .poll = recv_poll,
    .poll_order = 2,
    .complete = recv_complete,
    .status = recv_status,
    .cancel = recv_cancel,
    .free = p2p_free,
};

MPI_Request bdl_irecv_post(int ctx, int src, int tag, void *buf, uint64_t count, bdl_dt_t *t)
{
    int h = bdl_req_new(&bdl_req_recv_ops);
    bdl_request_t *q = &bdl_g.reqs[h];
    q->buf = buf;
    q->count = count;
    if (src == MPI_PROC_NULL) {
        q->done = 1;
        bdl_status_proc_null(&q->status);
        return h;
    }
    /* The program may free the type before the receive completes. */
    q->dt = t;
    bdl_dt_retain(t);
    bdl_p2p_post_recv(h, ctx, src, tag);
    return h;
}

MPI_Request bdl_isend_req(int sync, uint64_t sync_id, uint64_t send_id, int send_dst,
                          uint64_t cma_id)
{
    int h = bdl_req_new(sync ? &bdl_req_ssend_ops : &bdl_req_send_ops);
    bdl_request_t *q = &bdl_g.reqs[h];
    q->rid = sync_id;
    q->send_id = send_id;
    q->send_dst = send_dst;
    q->remote = sync && !bdl_p2p_local(send_dst);
    q->cma_id = cma_id;
    bdl_status_empty(&q->status);
    q->done = !sync && !cma_id;
    return h;
}

MPI_Request bdl_recv_done_req(void *buf, uint64_t count, const MPI_Status *st, int err)
{
    int h = bdl_req_new(&bdl_req_recv_ops);
    bdl_request_t *q = &bdl_g.reqs[h];
    q->buf = buf;
    q->count = count;
    q->done = 1;
    q->status = *st;
    q->err = err;
    return h;
}
