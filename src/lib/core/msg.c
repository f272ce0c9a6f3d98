/* Point-to-point transfer on the rank's side, and the point-to-point
 * request kinds.  Sends are buffered (bdmpi.txt 5.3): up to the threshold
 * through the window into the master's memory, larger ones into a spill
 * file this rank writes and the receiver reads, so every send completes at
 * once and the sender keeps running.  Receives are posted to the master
 * when called (so matching follows MPI's order) and their data is
 * delivered when the rank waits or tests. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
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

int bdl_send_typed_id(int ctx, int world_dst, int myrank, int tag, const void *buf, uint64_t count,
                      const bdl_dt_t *t, int sync, uint64_t send_id, uint64_t *sync_id)
{
    uint64_t n = count * t->psize;
    const char *contig = bdl_dt_contig(t, buf, count);
    uint64_t file_num = 0;
    int in_file = n > bdl_g.threshold;
    if (in_file) {
        char path[BD_PATH_MAX + 64];
        int fd = spill_open(n, &file_num, path, sizeof path);
        if (contig) {
            bdl_lib_mem_prepare(contig, n, 0);
            int rc = bd_write_full(fd, contig, n);
            if (rc < 0)
                spill_failed(path, n, -rc);
        } else {
            /* Pack window-sized pieces and write each: no copy of the whole message. */
            for (uint64_t off = 0; off < n;) {
                uint64_t k = n - off < bdl_g.window ? n - off : bdl_g.window;
                bdl_dt_pack(t, buf, count, off, bdl_g.win, k);
                int rc = bd_write_full(fd, bdl_g.win, k);
                if (rc < 0)
                    spill_failed(path, n, -rc);
                off += k;
            }
        }
        if (close(fd) < 0)
            spill_failed(path, n, errno);
    } else if (n) {
        if (contig)
            memcpy(bdl_g.win, contig, n);
        else
            bdl_dt_pack(t, buf, count, 0, bdl_g.win, n);
    }
    bd_req_t *r = bdl_req_begin(BD_REQ_SEND);
    r->ctx = ctx;
    r->peer = world_dst;
    r->myrank = myrank;
    r->tag = tag;
    r->nbytes = n;
    r->flags = (in_file ? BD_SEND_FILE : 0) | (sync ? BD_SEND_SYNC : 0);
    r->arg[0] = (int64_t)file_num;
    r->rid = send_id;
    bdl_rpc();
    if (sync_id)
        *sync_id = (uint64_t)bdl_resp()->arg[0];
    return MPI_SUCCESS;
}

int bdl_send_typed(int ctx, int world_dst, int myrank, int tag, const void *buf, uint64_t count,
                   const bdl_dt_t *t, int sync, uint64_t *sync_id)
{
    return bdl_send_typed_id(ctx, world_dst, myrank, tag, buf, count, t, sync, 0, sync_id);
}

void bdl_ssend_wait(uint64_t id)
{
    bd_req_t *r = bdl_req_begin(BD_REQ_SSEND_WAIT);
    r->arg[0] = (int64_t)id;
    bdl_rpc();
}

int bdl_send_bytes(int ctx, int world_dst, int myrank, int tag, const void *buf, uint64_t n,
                   int sync, uint64_t *sync_id)
{
    return bdl_send_typed(ctx, world_dst, myrank, tag, buf, n, bdl_dt_byte(), sync, sync_id);
}

/* ---------------------------------------------------------------- receiving */

/* The master has answered a receive with a message: unpack it into count
 * elements of t at buf. */
int bdl_take_delivery(void *buf, const bdl_dt_t *t, uint64_t count, MPI_Status *st)
{
    bd_resp_t *rs = bdl_resp();
    uint64_t cap = count * t->psize;
    uint64_t n = rs->nbytes, take = n < cap ? n : cap;
    char *contig = bdl_dt_contig(t, buf, count);
    /* Only a buffer the message fills entirely may be discarded first. */
    if (contig)
        bdl_lib_mem_discard(contig, take);
    if (rs->arg[2]) {
        char path[BD_PATH_MAX + 64];
        bd_spill_path(path, sizeof path, bdl_g.hdr->jobdir, (int)rs->arg[1], (uint64_t)rs->arg[0]);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            bdl_fatal(MPI_ERR_OTHER, "cannot open spill file %s of a %llu-byte message: %s", path,
                      (unsigned long long)n, strerror(errno));
        int rc = 0;
        if (contig) {
            bdl_lib_mem_prepare(contig, take, 1);
            rc = bd_pread_full(fd, contig, take, 0);
        } else {
            /* Read window-sized pieces and unpack each. */
            for (uint64_t off = 0; off < take && rc == 0;) {
                uint64_t k = take - off < bdl_g.window ? take - off : bdl_g.window;
                rc = bd_pread_full(fd, bdl_g.win, k, off);
                if (rc == 0)
                    bdl_dt_unpack(t, buf, count, off, bdl_g.win, k);
                off += k;
            }
        }
        if (rc < 0)
            bdl_fatal(MPI_ERR_OTHER, "cannot read %llu bytes from spill file %s: %s",
                      (unsigned long long)take, path, strerror(-rc));
        close(fd);
        unlink(path);
    } else if (take) {
        if (contig)
            memcpy(contig, bdl_g.win, take);
        else
            bdl_dt_unpack(t, buf, count, 0, bdl_g.win, take);
    }
    if (st != MPI_STATUS_IGNORE) {
        st->MPI_SOURCE = rs->src;
        st->MPI_TAG = rs->tag;
        st->bd_cancelled = 0;
        st->bd_nbytes = (long long)take;
        st->MPI_ERROR = n > cap ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
    }
    return n > cap ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
}

int bdl_recv_typed(int ctx, int src, int tag, void *buf, uint64_t count, const bdl_dt_t *t,
                   MPI_Status *st)
{
    bd_req_t *r = bdl_req_begin(BD_REQ_RECV);
    r->ctx = ctx;
    r->peer = src;
    r->tag = tag;
    bdl_rpc();
    return bdl_take_delivery(buf, t, count, st);
}

int bdl_recv_bytes(int ctx, int src, int tag, void *buf, uint64_t cap, MPI_Status *st)
{
    return bdl_recv_typed(ctx, src, tag, buf, cap, bdl_dt_byte(), st);
}

/* ---------------------------------------------------------------- requests */

/* Try to complete a receive; blocking: wait for its message. */
static void recv_progress(bdl_request_t *q, int blocking)
{
    if (q->done)
        return;
    bd_req_t *r = bdl_req_begin(blocking ? BD_REQ_WAIT : BD_REQ_TEST);
    r->rid = q->rid;
    bdl_rpc();
    bd_resp_t *rs = bdl_resp();
    if (rs->status == BD_RESP_ERROR)
        bdl_fatal(MPI_ERR_INTERN, "the master does not know receive request %llu",
                  (unsigned long long)q->rid);
    if (!rs->flag)
        return;
    q->err = bdl_take_delivery(q->buf, q->dt, q->count, &q->status);
    q->done = 1;
    bdl_dt_release(q->dt);
    q->dt = NULL;
}

/* Until it is received, a synchronous send is pending. */
static void ssend_progress(bdl_request_t *q, int blocking)
{
    if (q->done)
        return;
    bd_req_t *r = bdl_req_begin(blocking ? BD_REQ_SSEND_WAIT : BD_REQ_SSEND_TEST);
    r->arg[0] = (int64_t)q->rid;
    bdl_rpc();
    q->done = bdl_resp()->flag || blocking;
}

/* A buffered send is complete from the start. */
static void send_progress(bdl_request_t *q, int blocking)
{
    (void)q;
    (void)blocking;
}

/* Synchronous sends are polled one by one (the master cannot wait for
 * several). */
static int ssend_poll(bdl_request_t **qs, int n, const bdl_req_poll_t *p)
{
    (void)p;
    int ndone = 0;
    for (int i = 0; i < n; i++) {
        ssend_progress(qs[i], 0);
        ndone += qs[i]->done;
    }
    return ndone;
}

/* Receives are polled in a single request to the master, which sleeps
 * until one has a message only when nothing else must be polled meanwhile. */
static int recv_poll(bdl_request_t **qs, int n, const bdl_req_poll_t *p)
{
    uint64_t max = (bdl_g.window - 64) / 9;
    if ((uint64_t)n > max)
        bdl_fatal(MPI_ERR_INTERN, "too many receive requests (%d) in one call", n);
    int64_t *rids = (int64_t *)bdl_g.win;
    for (int i = 0; i < n; i++)
        rids[i] = (int64_t)qs[i]->rid;
    bd_req_t *r = bdl_req_begin(p->block && !p->spinning ? BD_REQ_WAITANY : BD_REQ_TESTANY);
    r->arg[0] = n;
    bdl_rpc();
    if (!bdl_resp()->flag)
        return 0;
    uint8_t flags[n];
    memcpy(flags, bdl_g.win + (size_t)n * 8, (size_t)n);
    int ndone = 0;
    for (int i = 0; i < n; i++)
        if (flags[i]) {
            recv_progress(qs[i], 1);
            ndone++;
        }
    return ndone;
}

/* Withdraw a posted receive that has not been matched yet. */
static int recv_cancel(bdl_request_t *q, MPI_Request h)
{
    (void)h;
    if (q->done || !q->rid)
        return MPI_SUCCESS;
    bd_req_t *r = bdl_req_begin(BD_REQ_CANCEL);
    r->rid = q->rid;
    bdl_rpc();
    if (!bdl_resp()->flag)
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
    bd_req_t *r = bdl_req_begin(BD_REQ_CANCEL_SEND);
    r->peer = q->send_dst;
    r->rid = q->send_id;
    bdl_rpc();
    if (!bdl_resp()->flag)
        return MPI_SUCCESS;
    q->done = 1;
    q->send_id = 0;
    bdl_status_empty(&q->status);
    q->status.bd_cancelled = 1;
    return MPI_SUCCESS;
}

/* MPI_Request_free: a receive still posted is detached (it completes
 * whenever the library next looks, MPI 3.1 3.7.3); anything else is freed. */
static int p2p_free(bdl_request_t *q, MPI_Request *h)
{
    *h = MPI_REQUEST_NULL;
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

const bdl_req_ops_t bdl_req_recv_ops = {
    .progress = recv_progress,
    .poll = recv_poll,
    .poll_order = 2,
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
    q->rid = ++bdl_g.next_rid;
    bd_req_t *r = bdl_req_begin(BD_REQ_IRECV);
    r->rid = q->rid;
    r->ctx = ctx;
    r->peer = src;
    r->tag = tag;
    bdl_rpc();
    return h;
}

MPI_Request bdl_isend_req(int sync, uint64_t sync_id, uint64_t send_id, int send_dst)
{
    int h = bdl_req_new(sync ? &bdl_req_ssend_ops : &bdl_req_send_ops);
    bdl_request_t *q = &bdl_g.reqs[h];
    q->rid = sync_id;
    q->send_id = send_id;
    q->send_dst = send_dst;
    bdl_status_empty(&q->status);
    q->done = !sync;
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
