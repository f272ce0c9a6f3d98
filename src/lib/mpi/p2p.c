/* Point-to-point on the slave side.  Sends are buffered (bdmpi.txt 5.3):
 * up to the threshold through the window into the master's memory, larger
 * ones into a spill file this rank writes and the receiver reads, so every
 * send completes at once and the sender keeps running.  Receives are
 * posted to the master when called (so matching follows MPI's order) and
 * their data is delivered when the rank waits or tests. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bd_dtype.h"
#include "bd_log.h"
#include "core.h"
#include "dt.h"
#include "mpi_int.h"
#include "nbc.h"
#include "objects.h"
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

static void status_proc_null(MPI_Status *st)
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

/* MPI_Type_size, MPI_Type_get_extent, MPI_Get_count and MPI_Get_elements
 * are in dtype.c. */

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

/* The id the next send carries (set by isend for MPI_Cancel; 0: none). */
static uint64_t g_send_rid;

int bdl_send_typed(int ctx, int world_dst, int myrank, int tag, const void *buf, uint64_t count,
                   const bdl_dt_t *t, int sync, uint64_t *sync_id)
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
    r->rid = g_send_rid;
    g_send_rid = 0;
    bdl_rpc();
    if (sync_id)
        *sync_id = (uint64_t)bdl_resp()->arg[0];
    return MPI_SUCCESS;
}

int bdl_send_bytes(int ctx, int world_dst, int myrank, int tag, const void *buf, uint64_t n,
                   int sync, uint64_t *sync_id)
{
    return bdl_send_typed(ctx, world_dst, myrank, tag, buf, n, bdl_dt_byte(), sync, sync_id);
}

/* Validate a send; on success *nbytes and *c are set.  Returns MPI_SUCCESS,
 * an error code (already reported), or -1 for MPI_PROC_NULL. */
static int send_check(const char *call, const void *buf, int count, MPI_Datatype dt, int dest,
                      int tag, MPI_Comm comm, bdl_dt_t **t, bdl_comm_t **c)
{
    BDL_CHECK_INIT(call);
    int rc;
    *c = bdl_comm_get(comm);
    if (!*c)
        return bdl_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);
    if (count < 0)
        return bdl_error(comm, MPI_ERR_COUNT, call, "invalid count %d", count);
    if ((rc = bdl_dt_check(comm, call, "send", dt, t)))
        return rc;
    if (tag < 0)
        return bdl_error(comm, MPI_ERR_TAG, call, "invalid tag %d (must be 0..MPI_TAG_UB)", tag);
    if (dest == MPI_PROC_NULL)
        return -1;
    if (dest < 0 || dest >= bdl_comm_peers(*c))
        return bdl_error(comm, MPI_ERR_RANK, call, "invalid destination rank %d (%s size %d)", dest,
                         (*c)->inter ? "remote group" : "communicator", bdl_comm_peers(*c));
    /* NULL is MPI_BOTTOM: fine with derived types of absolute addresses. */
    if (count > 0 && !buf && (*t)->predefined)
        return bdl_error(comm, MPI_ERR_BUFFER, call, "NULL buffer with count %d", count);
    return MPI_SUCCESS;
}

static int do_send(const char *call, const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                   MPI_Comm comm, int sync, uint64_t *sync_id)
{
    bdl_dt_t *t = NULL;
    bdl_comm_t *c;
    int rc = send_check(call, buf, count, dt, dest, tag, comm, &t, &c);
    if (rc)
        return rc;
    return bdl_send_typed(c->ctx, bdl_comm_peer_world(c, dest), c->rank, tag, buf, (uint64_t)count,
                          t, sync, sync_id);
}

static void ssend_wait(uint64_t id)
{
    bd_req_t *r = bdl_req_begin(BD_REQ_SSEND_WAIT);
    r->arg[0] = (int64_t)id;
    bdl_rpc();
}

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    int rc = do_send("MPI_Send", buf, count, datatype, dest, tag, comm, 0, NULL);
    return rc < 0 ? MPI_SUCCESS : rc;
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    uint64_t id = 0;
    int rc = do_send("MPI_Ssend", buf, count, datatype, dest, tag, comm, 1, &id);
    if (rc)
        return rc < 0 ? MPI_SUCCESS : rc;
    ssend_wait(id);
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- requests */

static int req_alloc(int kind)
{
    if (bdl_g.ndetached)
        bdl_p2p_reap_detached();
    for (int i = 1; i < bdl_g.nreqs; i++)
        if (bdl_g.reqs[i].kind == BDL_RQ_FREE) {
            memset(&bdl_g.reqs[i], 0, sizeof bdl_g.reqs[i]);
            bdl_g.reqs[i].kind = kind;
            return i;
        }
    int n = bdl_g.nreqs ? bdl_g.nreqs * 2 : 64;
    bdl_request_t *t = realloc(bdl_g.reqs, (size_t)n * sizeof *t);
    if (!t)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory allocating a request");
    memset(t + bdl_g.nreqs, 0, (size_t)(n - bdl_g.nreqs) * sizeof *t);
    int h = bdl_g.nreqs ? bdl_g.nreqs : 1;
    bdl_g.reqs = t;
    bdl_g.nreqs = n;
    bdl_g.reqs[h].kind = kind;
    return h;
}

/* A nonblocking collective's request: complete already if nb is. */
MPI_Request bdl_req_new_coll(bdl_nbc_t *nb)
{
    int h = req_alloc(BDL_RQ_COLL);
    bdl_request_t *q = &bdl_g.reqs[h];
    q->nbc = nb;
    q->done = bdl_nbc_done(nb);
    bdl_status_empty(&q->status);
    return h;
}

static bdl_request_t *req_get(MPI_Request h)
{
    if (h <= 0 || h >= bdl_g.nreqs || bdl_g.reqs[h].kind == BDL_RQ_FREE)
        return NULL;
    return &bdl_g.reqs[h];
}

int bdl_req_new(int kind) { return req_alloc(kind); }
bdl_request_t *bdl_req_lookup(MPI_Request h) { return req_get(h); }

/* The message for an error a completed request reports. */
static const char *req_err_msg(int err)
{
    return err == MPI_ERR_TRUNCATE ? "received message truncated"
                                   : "a generalized request's query_fn or free_fn failed";
}

/* A request with work to do or to report: inactive persistent requests
 * count as null in Wait/Test calls (MPI 3.1 3.9). */
static bdl_request_t *req_live(MPI_Request h)
{
    bdl_request_t *q = req_get(h);
    return q && !q->inactive ? q : NULL;
}

static int isend(const char *call, const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                 MPI_Comm comm, int sync, MPI_Request *request)
{
    uint64_t id = 0, send_id = ++bdl_g.next_rid;
    g_send_rid = send_id;
    int rc = do_send(call, buf, count, dt, dest, tag, comm, sync, &id);
    g_send_rid = 0;
    if (rc > 0)
        return rc;
    int h = req_alloc(sync && rc == 0 ? BDL_RQ_SSEND : BDL_RQ_SEND);
    bdl_request_t *q = &bdl_g.reqs[h];
    q->rid = id;
    if (rc == 0) {
        bdl_comm_t *c = bdl_comm_get(comm);
        q->send_id = send_id;
        q->send_dst = bdl_comm_peer_world(c, dest);
    }
    bdl_status_empty(&q->status);
    q->done = !(sync && rc == 0);
    *request = h;
    return MPI_SUCCESS;
}

int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    return isend("MPI_Isend", buf, count, datatype, dest, tag, comm, 0, request);
}

int MPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    return isend("MPI_Issend", buf, count, datatype, dest, tag, comm, 1, request);
}

/* ---------------------------------------------------------------- receiving */

/* The master has answered a receive with a message: unpack it into count
 * elements of t at buf. */
static int take_delivery(void *buf, const bdl_dt_t *t, uint64_t count, MPI_Status *st)
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
    return take_delivery(buf, t, count, st);
}

int bdl_recv_bytes(int ctx, int src, int tag, void *buf, uint64_t cap, MPI_Status *st)
{
    return bdl_recv_typed(ctx, src, tag, buf, cap, bdl_dt_byte(), st);
}

static int recv_check(const char *call, const void *buf, int count, MPI_Datatype dt, int src,
                      int tag, MPI_Comm comm, bdl_dt_t **t, bdl_comm_t **c)
{
    BDL_CHECK_INIT(call);
    int rc;
    *c = bdl_comm_get(comm);
    if (!*c)
        return bdl_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);
    if (count < 0)
        return bdl_error(comm, MPI_ERR_COUNT, call, "invalid count %d", count);
    if ((rc = bdl_dt_check(comm, call, "receive", dt, t)))
        return rc;
    if (tag < 0 && tag != MPI_ANY_TAG)
        return bdl_error(comm, MPI_ERR_TAG, call, "invalid tag %d", tag);
    if (src == MPI_PROC_NULL)
        return -1;
    if (src != MPI_ANY_SOURCE && (src < 0 || src >= bdl_comm_peers(*c)))
        return bdl_error(comm, MPI_ERR_RANK, call, "invalid source rank %d (%s size %d)", src,
                         (*c)->inter ? "remote group" : "communicator", bdl_comm_peers(*c));
    if (count > 0 && !buf && (*t)->predefined)
        return bdl_error(comm, MPI_ERR_BUFFER, call, "NULL buffer with count %d", count);
    return MPI_SUCCESS;
}

int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    bdl_dt_t *t = NULL;
    bdl_comm_t *c;
    int rc = recv_check("MPI_Recv", buf, count, datatype, source, tag, comm, &t, &c);
    if (rc < 0) {
        status_proc_null(status);
        return MPI_SUCCESS;
    }
    if (rc)
        return rc;
    rc = bdl_recv_typed(c->ctx, source, tag, buf, (uint64_t)count, t, status);
    if (rc)
        return bdl_error(comm, rc, "MPI_Recv",
                         "message of %llu bytes from rank %d (tag %d) truncated to the %llu-byte "
                         "receive buffer",
                         (unsigned long long)bdl_resp()->nbytes, bdl_resp()->src, bdl_resp()->tag,
                         (unsigned long long)((uint64_t)count * t->psize));
    return MPI_SUCCESS;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    bdl_dt_t *t = NULL;
    bdl_comm_t *c;
    int rc = recv_check("MPI_Irecv", buf, count, datatype, source, tag, comm, &t, &c);
    if (rc > 0)
        return rc;
    int h = req_alloc(BDL_RQ_RECV);
    bdl_request_t *q = &bdl_g.reqs[h];
    q->buf = buf;
    q->count = (uint64_t)count;
    if (rc < 0) {
        q->done = 1;
        status_proc_null(&q->status);
    } else {
        /* The program may free the type before the receive completes. */
        q->dt = t;
        bdl_dt_retain(t);
        q->rid = ++bdl_g.next_rid;
        bd_req_t *r = bdl_req_begin(BD_REQ_IRECV);
        r->rid = q->rid;
        r->ctx = c->ctx;
        r->peer = source;
        r->tag = tag;
        bdl_rpc();
    }
    *request = h;
    return MPI_SUCCESS;
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status *status)
{
    /* Sends are buffered, so send-then-receive cannot deadlock. */
    int rc = do_send("MPI_Sendrecv", sendbuf, sendcount, sendtype, dest, sendtag, comm, 0, NULL);
    if (rc > 0)
        return rc;
    bdl_dt_t *t = NULL;
    bdl_comm_t *c;
    rc = recv_check("MPI_Sendrecv", recvbuf, recvcount, recvtype, source, recvtag, comm, &t, &c);
    if (rc < 0) {
        status_proc_null(status);
        return MPI_SUCCESS;
    }
    if (rc)
        return rc;
    rc = bdl_recv_typed(c->ctx, source, recvtag, recvbuf, (uint64_t)recvcount, t, status);
    if (rc)
        return bdl_error(comm, rc, "MPI_Sendrecv", "message of %llu bytes truncated to %llu bytes",
                         (unsigned long long)bdl_resp()->nbytes,
                         (unsigned long long)((uint64_t)recvcount * t->psize));
    return MPI_SUCCESS;
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                         int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    /* The send is buffered before the receive starts, so buf can be reused at once. */
    return MPI_Sendrecv(buf, count, datatype, dest, sendtag, buf, count, datatype, source, recvtag,
                        comm, status);
}

/* ---------------------------------------------------------------- probing */

static int probe(const char *call, int source, int tag, MPI_Comm comm, int blocking, int *flag,
                 MPI_Status *status)
{
    BDL_CHECK_INIT(call);
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c)
        return bdl_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);
    if (tag < 0 && tag != MPI_ANY_TAG)
        return bdl_error(comm, MPI_ERR_TAG, call, "invalid tag %d", tag);
    if (source == MPI_PROC_NULL) {
        if (flag)
            *flag = 1;
        status_proc_null(status);
        return MPI_SUCCESS;
    }
    if (source != MPI_ANY_SOURCE && (source < 0 || source >= bdl_comm_peers(c)))
        return bdl_error(comm, MPI_ERR_RANK, call, "invalid source rank %d (%s size %d)", source,
                         c->inter ? "remote group" : "communicator", bdl_comm_peers(c));
    bd_req_t *r = bdl_req_begin(blocking ? BD_REQ_PROBE : BD_REQ_IPROBE);
    r->ctx = c->ctx;
    r->peer = source;
    r->tag = tag;
    bdl_rpc();
    bd_resp_t *rs = bdl_resp();
    if (flag)
        *flag = rs->flag;
    if (rs->flag && status != MPI_STATUS_IGNORE) {
        status->MPI_SOURCE = rs->src;
        status->MPI_TAG = rs->tag;
        status->MPI_ERROR = MPI_SUCCESS;
        status->bd_cancelled = 0;
        status->bd_nbytes = (long long)rs->nbytes;
    }
    return MPI_SUCCESS;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    return probe("MPI_Probe", source, tag, comm, 1, NULL, status);
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    return probe("MPI_Iprobe", source, tag, comm, 0, flag, status);
}

/* ---------------------------------------------------------------- completion */

/* Try to complete q (without reporting it).  blocking: wait for it. */
static void req_progress(bdl_request_t *q, int blocking)
{
    if (q->kind == BDL_RQ_GREQ) {
        if (blocking)
            bdl_greq_wait(q);
        return;
    }
    if (q->done)
        return;
    if (q->kind == BDL_RQ_COLL) {
        q->done = bdl_nbc_progress(q->nbc, blocking);
        return;
    }
    if (q->kind == BDL_RQ_SSEND) {
        bd_req_t *r = bdl_req_begin(blocking ? BD_REQ_SSEND_WAIT : BD_REQ_SSEND_TEST);
        r->arg[0] = (int64_t)q->rid;
        bdl_rpc();
        q->done = bdl_resp()->flag || blocking;
        return;
    }
    bd_req_t *r = bdl_req_begin(blocking ? BD_REQ_WAIT : BD_REQ_TEST);
    r->rid = q->rid;
    bdl_rpc();
    bd_resp_t *rs = bdl_resp();
    if (rs->status == BD_RESP_ERROR)
        bdl_fatal(MPI_ERR_INTERN, "the master does not know receive request %llu",
                  (unsigned long long)q->rid);
    if (!rs->flag)
        return;
    q->err = take_delivery(q->buf, q->dt, q->count, &q->status);
    q->done = 1;
    bdl_dt_release(q->dt);
    q->dt = NULL;
}

/* Report a completed request and free it. */
static int req_finish(MPI_Request *h, MPI_Status *st)
{
    bdl_request_t *q = &bdl_g.reqs[*h];
    if (q->kind == BDL_RQ_GREQ)
        q->err = bdl_greq_finish(q);
    if (q->kind == BDL_RQ_COLL)
        q->err = q->status.MPI_ERROR = bdl_nbc_err(q->nbc);
    int err = q->err;
    if (st != MPI_STATUS_IGNORE)
        *st = q->status;
    if (q->persistent) {
        q->inactive = 1;
        return err;
    }
    if (q->kind == BDL_RQ_COLL) {
        bdl_nbc_free(q->nbc);
        q->nbc = NULL;
    }
    q->kind = BDL_RQ_FREE;
    *h = MPI_REQUEST_NULL;
    return err;
}

/* The calls that complete one request leave the status's MPI_ERROR alone
 * (MPI 3.1 3.2.5: the error is the call's return value). */
static int req_finish1(MPI_Request *h, MPI_Status *st)
{
    int keep = st != MPI_STATUS_IGNORE ? st->MPI_ERROR : 0;
    int err = req_finish(h, st);
    if (st != MPI_STATUS_IGNORE)
        st->MPI_ERROR = keep;
    return err;
}

/* MPI_REQUEST_NULL, or a persistent request that is not started: calls
 * that wait or test return at once with an empty status. */
static int req_is_null(MPI_Request h)
{
    return h == MPI_REQUEST_NULL || (req_get(h) && !req_live(h));
}

static int bad_request(const char *call, MPI_Request h)
{
    return bdl_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, call, "invalid request handle %d", h);
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    BDL_CHECK_INIT("MPI_Wait");
    if (req_is_null(*request)) {
        bdl_status_empty(status);
        return MPI_SUCCESS;
    }
    bdl_request_t *q = req_live(*request);
    if (!q)
        return bad_request("MPI_Wait", *request);
    req_progress(q, 1);
    int err = req_finish1(request, status);
    if (err)
        return bdl_error(MPI_COMM_WORLD, err, "MPI_Wait", "%s", req_err_msg(err));
    return MPI_SUCCESS;
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    BDL_CHECK_INIT("MPI_Test");
    if (req_is_null(*request)) {
        *flag = 1;
        bdl_status_empty(status);
        return MPI_SUCCESS;
    }
    bdl_request_t *q = req_live(*request);
    if (!q)
        return bad_request("MPI_Test", *request);
    req_progress(q, 0);
    *flag = q->done;
    if (!q->done)
        return MPI_SUCCESS;
    int err = req_finish1(request, status);
    if (err)
        return bdl_error(MPI_COMM_WORLD, err, "MPI_Test", "%s", req_err_msg(err));
    return MPI_SUCCESS;
}

int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    BDL_CHECK_INIT("MPI_Request_get_status");
    if (req_is_null(request)) {
        *flag = 1;
        bdl_status_empty(status);
        return MPI_SUCCESS;
    }
    bdl_request_t *q = req_live(request);
    if (!q)
        return bad_request("MPI_Request_get_status", request);
    req_progress(q, 0);
    *flag = q->done;
    if (q->done && q->kind == BDL_RQ_GREQ) {
        int err = bdl_greq_query(q, status);
        if (err)
            return bdl_error(MPI_COMM_WORLD, err, "MPI_Request_get_status",
                             "query_fn of generalized request %d returned error %d", request, err);
        return MPI_SUCCESS;
    }
    if (q->done && status != MPI_STATUS_IGNORE)
        *status = q->status;
    return MPI_SUCCESS;
}

/* One poll of every pending request in the list: receives in a single
 * request to the master, synchronous sends one by one.  With `block`, wait
 * until at least one has completed.  Unless `every`, a request that is
 * already done ends the call at once.  Returns how many are done. */
/* One poll of the pending nonblocking collectives among reqs (with block:
 * wait in the master until one completes); completes those that are ready. */
static int poll_colls(int count, MPI_Request reqs[], int block, int yield)
{
    int n = 0;
    for (int i = 0; i < count; i++) {
        bdl_request_t *q = req_live(reqs[i]);
        n += q && !q->done && q->kind == BDL_RQ_COLL;
    }
    bdl_nbc_t **v = malloc((size_t)(n ? n : 1) * sizeof *v);
    if (!v)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory polling %d requests", n);
    n = 0;
    for (int i = 0; i < count; i++) {
        bdl_request_t *q = req_live(reqs[i]);
        if (q && !q->done && q->kind == BDL_RQ_COLL)
            v[n++] = q->nbc;
    }
    int k = bdl_nbc_poll(v, n, block, yield);
    free(v);
    for (int i = 0; i < count; i++) {
        bdl_request_t *q = req_live(reqs[i]);
        if (q && !q->done && q->kind == BDL_RQ_COLL)
            q->done = bdl_nbc_done(q->nbc);
    }
    return k;
}

static int poll_many(int count, MPI_Request reqs[], int block, int every)
{
    if (block) {
        /* Generalized requests complete from outside: poll all of them. */
        for (int i = 0; i < count; i++) {
            bdl_request_t *q = req_live(reqs[i]);
            if (q && q->kind == BDL_RQ_GREQ && !q->done) {
                int n;
                while (!(n = poll_many(count, reqs, 0, every)))
                    bdl_greq_pause();
                return n;
            }
        }
    }
    int ndone = 0, nrecv = 0, nssend = 0, ncoll = 0;
    for (int i = 0; i < count; i++) {
        bdl_request_t *q = req_live(reqs[i]);
        if (!q)
            continue;
        if (q->done)
            ndone++;
        else if (q->kind == BDL_RQ_RECV)
            nrecv++;
        else if (q->kind == BDL_RQ_SSEND)
            nssend++;
        else if (q->kind == BDL_RQ_COLL)
            ncoll++;
    }
    if ((ndone && !every) || (!nrecv && !nssend && !ncoll))
        return ndone;
    if (ndone)
        block = 0;
    for (;;) {
        if (nssend) {
            for (int i = 0; i < count; i++) {
                bdl_request_t *q = req_live(reqs[i]);
                if (q && !q->done && q->kind == BDL_RQ_SSEND) {
                    req_progress(q, 0);
                    ndone += q->done;
                }
            }
            if (ndone)
                return ndone;
        }
        if (ncoll) {
            /* A set of only collectives waits in the master; otherwise this
             * poll leaves giving the slot away to the receive poll after it. */
            ndone += poll_colls(count, reqs, block && !nrecv && !nssend, !nrecv);
            if (ndone && (!every || !nrecv))
                return ndone;
        }
        if (nrecv) {
            uint64_t max = (bdl_g.window - 64) / 9;
            if ((uint64_t)nrecv > max)
                bdl_fatal(MPI_ERR_INTERN, "too many receive requests (%d) in one call", nrecv);
            int64_t *rids = (int64_t *)bdl_g.win;
            int k = 0;
            for (int i = 0; i < count; i++) {
                bdl_request_t *q = req_live(reqs[i]);
                if (q && !q->done && q->kind == BDL_RQ_RECV)
                    rids[k++] = (int64_t)q->rid;
            }
            /* Only a pure-receive set can sleep in the master; with synchronous
             * sends in the set we must keep polling both kinds. */
            bd_req_t *r = bdl_req_begin(block && !nssend ? BD_REQ_WAITANY : BD_REQ_TESTANY);
            r->arg[0] = k;
            bdl_rpc();
            if (bdl_resp()->flag) {
                uint8_t flags[k];
                memcpy(flags, bdl_g.win + (size_t)k * 8, (size_t)k);
                int j = 0;
                for (int i = 0; i < count; i++) {
                    bdl_request_t *q = req_live(reqs[i]);
                    if (q && !q->done && q->kind == BDL_RQ_RECV) {
                        if (flags[j++]) {
                            req_progress(q, 1);
                            ndone++;
                        }
                    }
                }
            }
        }
        if (ndone || !block)
            return ndone;
    }
}

static int finish_all(const char *call, int count, MPI_Request reqs[], MPI_Status *statuses)
{
    int err = 0;
    for (int i = 0; i < count; i++) {
        MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
        if (reqs[i] == MPI_REQUEST_NULL || !req_live(reqs[i])) {
            bdl_status_empty(st);
            continue;
        }
        if (req_finish(&reqs[i], st))
            err = 1;
    }
    if (err)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_IN_STATUS, call,
                         "a received message was truncated (see the statuses)");
    return MPI_SUCCESS;
}

static int check_reqs(const char *call, int count, MPI_Request reqs[])
{
    if (count < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_COUNT, call, "invalid count %d", count);
    for (int i = 0; i < count; i++)
        if (reqs[i] != MPI_REQUEST_NULL && !req_get(reqs[i]))
            return bad_request(call, reqs[i]);
    return MPI_SUCCESS;
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status *statuses)
{
    BDL_CHECK_INIT("MPI_Waitall");
    int rc = check_reqs("MPI_Waitall", count, requests);
    if (rc)
        return rc;
    for (int i = 0; i < count; i++) {
        bdl_request_t *q = req_live(requests[i]);
        if (q)
            req_progress(q, 1);
    }
    return finish_all("MPI_Waitall", count, requests, statuses);
}

int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status *statuses)
{
    BDL_CHECK_INIT("MPI_Testall");
    int rc = check_reqs("MPI_Testall", count, requests);
    if (rc)
        return rc;
    int pending = 0;
    for (int i = 0; i < count; i++) {
        bdl_request_t *q = req_live(requests[i]);
        if (q && !q->done)
            pending++;
    }
    if (pending)
        poll_many(count, requests, 0, 1);
    *flag = 1;
    for (int i = 0; i < count; i++) {
        bdl_request_t *q = req_live(requests[i]);
        if (q && !q->done)
            *flag = 0;
    }
    if (!*flag)
        return MPI_SUCCESS;
    return finish_all("MPI_Testall", count, requests, statuses);
}

static int first_done(int count, MPI_Request reqs[])
{
    for (int i = 0; i < count; i++) {
        bdl_request_t *q = req_live(reqs[i]);
        if (q && q->done)
            return i;
    }
    return -1;
}

static int any_active(int count, MPI_Request reqs[])
{
    for (int i = 0; i < count; i++)
        if (req_live(reqs[i]))
            return 1;
    return 0;
}

static int waitany(const char *call, int count, MPI_Request reqs[], int *index, int *flag,
                   MPI_Status *status, int block)
{
    BDL_CHECK_INIT(call);
    int rc = check_reqs(call, count, reqs);
    if (rc)
        return rc;
    if (!any_active(count, reqs)) {
        *index = MPI_UNDEFINED;
        if (flag)
            *flag = 1;
        bdl_status_empty(status);
        return MPI_SUCCESS;
    }
    poll_many(count, reqs, block, 0);
    int i = first_done(count, reqs);
    if (flag)
        *flag = i >= 0;
    if (i < 0) {
        *index = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    *index = i;
    int err = req_finish1(&reqs[i], status);
    if (err)
        return bdl_error(MPI_COMM_WORLD, err, call, "%s", req_err_msg(err));
    return MPI_SUCCESS;
}

int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    return waitany("MPI_Waitany", count, requests, index, NULL, status, 1);
}

int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
    return waitany("MPI_Testany", count, requests, index, flag, status, 0);
}

static int somecall(const char *call, int incount, MPI_Request reqs[], int *outcount, int indices[],
                    MPI_Status *statuses, int block)
{
    BDL_CHECK_INIT(call);
    int rc = check_reqs(call, incount, reqs);
    if (rc)
        return rc;
    if (!any_active(incount, reqs)) {
        *outcount = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    poll_many(incount, reqs, block, 1);
    int n = 0, err = 0;
    for (int i = 0; i < incount; i++) {
        bdl_request_t *q = req_live(reqs[i]);
        if (!q || !q->done)
            continue;
        MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[n];
        indices[n++] = i;
        if (req_finish(&reqs[i], st))
            err = 1;
    }
    *outcount = n;
    if (err)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_IN_STATUS, call,
                         "a received message was truncated (see the statuses)");
    return MPI_SUCCESS;
}

int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status *statuses)
{
    return somecall("MPI_Waitsome", incount, requests, outcount, indices, statuses, 1);
}

int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status *statuses)
{
    return somecall("MPI_Testsome", incount, requests, outcount, indices, statuses, 0);
}

/* ---------------------------------------------------------------- cancel, free, persistent */

/* Withdraw a posted receive that has not been matched yet. */
static int cancel_recv(bdl_request_t *q)
{
    if (q->done || q->kind != BDL_RQ_RECV || !q->rid)
        return 0;
    bd_req_t *r = bdl_req_begin(BD_REQ_CANCEL);
    r->rid = q->rid;
    bdl_rpc();
    if (!bdl_resp()->flag)
        return 0;
    q->done = 1;
    bdl_status_empty(&q->status);
    q->status.bd_cancelled = 1;
    bdl_dt_release(q->dt);
    q->dt = NULL;
    return 1;
}

/* Withdraw a nonblocking send's message if nobody has received it yet
 * (the master removes it, and its spill file). */
static int cancel_send(bdl_request_t *q)
{
    if (!q->send_id || q->status.bd_cancelled)
        return 0;
    bd_req_t *r = bdl_req_begin(BD_REQ_CANCEL_SEND);
    r->peer = q->send_dst;
    r->rid = q->send_id;
    bdl_rpc();
    if (!bdl_resp()->flag)
        return 0;
    q->done = 1;
    q->send_id = 0;
    bdl_status_empty(&q->status);
    q->status.bd_cancelled = 1;
    return 1;
}

int MPI_Cancel(MPI_Request *request)
{
    BDL_CHECK_INIT("MPI_Cancel");
    bdl_request_t *q = request ? req_live(*request) : NULL;
    if (!q)
        return bad_request("MPI_Cancel", request ? *request : MPI_REQUEST_NULL);
    if (q->kind == BDL_RQ_COLL)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Cancel",
                         "request %d is a nonblocking collective, which cannot be cancelled "
                         "(MPI 3.1 5.12)",
                         *request);
    if (q->kind == BDL_RQ_GREQ) {
        int err = bdl_greq_cancel(q);
        return err ? bdl_error(MPI_COMM_WORLD, err, "MPI_Cancel",
                               "cancel_fn of generalized request %d returned error %d", *request,
                               err)
                   : MPI_SUCCESS;
    }
    /* A send's message is buffered at once: it can be withdrawn until it is
     * received; after that the cancel fails, which MPI allows
     * (MPI_Test_cancelled says which happened). */
    if (q->kind == BDL_RQ_SEND || q->kind == BDL_RQ_SSEND)
        cancel_send(q);
    else
        cancel_recv(q);
    return MPI_SUCCESS;
}

/* Receives the program freed while still posted: they complete (their data
 * lands in the buffer) whenever the library next looks (MPI 3.1 3.7.3). */
void bdl_p2p_reap_detached(void)
{
    for (int i = 1; i < bdl_g.nreqs; i++) {
        bdl_request_t *q = &bdl_g.reqs[i];
        if (q->kind != BDL_RQ_RECV || !q->detached)
            continue;
        req_progress(q, 0);
        if (q->done) {
            q->kind = BDL_RQ_FREE;
            q->detached = 0;
            bdl_g.ndetached--;
        }
    }
}

int MPI_Request_free(MPI_Request *request)
{
    BDL_CHECK_INIT("MPI_Request_free");
    bdl_request_t *q = request ? req_get(*request) : NULL;
    if (!q)
        return bad_request("MPI_Request_free", request ? *request : MPI_REQUEST_NULL);
    if (q->kind == BDL_RQ_COLL)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Request_free",
                         "request %d is a nonblocking collective, which cannot be freed "
                         "(MPI 3.1 5.12): complete it with MPI_Wait or MPI_Test",
                         *request);
    if (q->kind == BDL_RQ_GREQ) {
        MPI_Request h = *request;
        *request = MPI_REQUEST_NULL;
        int err = bdl_greq_free(q);
        return err ? bdl_error(MPI_COMM_WORLD, err, "MPI_Request_free",
                               "free_fn of generalized request %d returned error %d", h, err)
                   : MPI_SUCCESS;
    }
    *request = MPI_REQUEST_NULL;
    if (q->persistent) {
        bdl_dt_alias_free(q->pdt);
        q->pdt = MPI_DATATYPE_NULL;
    }
    if (!q->inactive && q->kind == BDL_RQ_RECV && !q->done) {
        q->persistent = 0;
        q->detached = 1;
        bdl_g.ndetached++;
        return MPI_SUCCESS;
    }
    bdl_dt_release(q->dt);
    q->dt = NULL;
    q->kind = BDL_RQ_FREE;
    return MPI_SUCCESS;
}

static int persistent(const char *call, int kind, const void *buf, int count, MPI_Datatype dt,
                      int peer, int tag, MPI_Comm comm, MPI_Request *request)
{
    BDL_CHECK_INIT(call);
    if (!bdl_comm_get(comm))
        return bdl_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);
    if (count < 0)
        return bdl_error(comm, MPI_ERR_COUNT, call, "invalid count %d", count);
    int h = req_alloc(kind == BDL_RQ_RECV ? BDL_RQ_RECV : BDL_RQ_SEND);
    bdl_request_t *q = &bdl_g.reqs[h];
    q->persistent = 1;
    q->inactive = 1;
    q->pkind = kind;
    q->pbuf = buf;
    q->pcount = count;
    q->pdt = bdl_dt_alias(dt);
    if (q->pdt == MPI_DATATYPE_NULL && dt != MPI_DATATYPE_NULL) {
        q->kind = BDL_RQ_FREE;
        return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
    }
    q->ppeer = peer;
    q->ptag = tag;
    q->pcomm = comm;
    bdl_status_empty(&q->status);
    *request = h;
    return MPI_SUCCESS;
}

int MPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm, MPI_Request *request)
{
    return persistent("MPI_Send_init", BDL_RQ_SEND, buf, count, datatype, dest, tag, comm, request);
}

int MPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
    return persistent("MPI_Bsend_init", BDL_RQ_SEND, buf, count, datatype, dest, tag, comm,
                      request);
}

int MPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
    return persistent("MPI_Rsend_init", BDL_RQ_SEND, buf, count, datatype, dest, tag, comm,
                      request);
}

int MPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
    return persistent("MPI_Ssend_init", BDL_RQ_SSEND, buf, count, datatype, dest, tag, comm,
                      request);
}

int MPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                  MPI_Request *request)
{
    return persistent("MPI_Recv_init", BDL_RQ_RECV, buf, count, datatype, source, tag, comm,
                      request);
}

int MPI_Start(MPI_Request *request)
{
    BDL_CHECK_INIT("MPI_Start");
    bdl_request_t *q = request ? req_get(*request) : NULL;
    if (!q || !q->persistent)
        return bad_request("MPI_Start", request ? *request : MPI_REQUEST_NULL);
    if (!q->inactive)
        return bdl_error(q->pcomm, MPI_ERR_REQUEST, "MPI_Start", "request %d is already active",
                         *request);
    /* Start it as the matching nonblocking call, then move that request's
     * state into this handle (the temporary handle is released). */
    MPI_Request tmp;
    int rc;
    if (q->pkind == BDL_RQ_RECV)
        rc = MPI_Irecv((void *)q->pbuf, q->pcount, q->pdt, q->ppeer, q->ptag, q->pcomm, &tmp);
    else
        rc = (q->pkind == BDL_RQ_SSEND ? MPI_Issend : MPI_Isend)(q->pbuf, q->pcount, q->pdt,
                                                                 q->ppeer, q->ptag, q->pcomm, &tmp);
    if (rc)
        return rc;
    q = &bdl_g.reqs[*request]; /* the table may have moved */
    bdl_request_t *t = &bdl_g.reqs[tmp];
    q->kind = t->kind;
    q->done = t->done;
    q->err = t->err;
    q->rid = t->rid;
    q->buf = t->buf;
    q->dt = t->dt;
    q->count = t->count;
    q->send_id = t->send_id;
    q->send_dst = t->send_dst;
    q->status = t->status;
    q->inactive = 0;
    t->kind = BDL_RQ_FREE;
    return MPI_SUCCESS;
}

int MPI_Startall(int count, MPI_Request requests[])
{
    for (int i = 0; i < count; i++) {
        int rc = MPI_Start(&requests[i]);
        if (rc)
            return rc;
    }
    return MPI_SUCCESS;
}

/* Ready mode only promises that the receive is posted: a buffered send is
 * a correct implementation. */
int MPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    return MPI_Send(buf, count, datatype, dest, tag, comm);
}

int MPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    return MPI_Isend(buf, count, datatype, dest, tag, comm, request);
}

/* ---------------------------------------------------------------- matched probe */

/* MPI_Mprobe/MPI_Improbe take the message out of the master's queue (no
 * other receive can match it); the message handle names it until
 * MPI_Mrecv/MPI_Imrecv receives it (MPI 3.1 3.8.2, 3.8.3). */
typedef struct {
    int used;
    uint64_t id;   /* the master's id of the message */
    MPI_Comm comm; /* for errors */
} bdl_msg_handle_t;

static bdl_msg_handle_t *g_msgs;
static int g_nmsgs;

static int msg_new(uint64_t id, MPI_Comm comm)
{
    for (int i = 1; i < g_nmsgs; i++)
        if (!g_msgs[i].used) {
            g_msgs[i] = (bdl_msg_handle_t){1, id, comm};
            return i;
        }
    int n = g_nmsgs ? g_nmsgs * 2 : 16;
    bdl_msg_handle_t *m = realloc(g_msgs, (size_t)n * sizeof *m);
    if (!m)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory allocating a message handle");
    memset(m + g_nmsgs, 0, (size_t)(n - g_nmsgs) * sizeof *m);
    int h = g_nmsgs ? g_nmsgs : 1;
    g_msgs = m;
    g_nmsgs = n;
    g_msgs[h] = (bdl_msg_handle_t){1, id, comm};
    return h;
}

static int mprobe(const char *call, int source, int tag, MPI_Comm comm, int blocking, int *flag,
                  MPI_Message *message, MPI_Status *status)
{
    BDL_CHECK_INIT(call);
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c)
        return bdl_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);
    if (tag < 0 && tag != MPI_ANY_TAG)
        return bdl_error(comm, MPI_ERR_TAG, call, "invalid tag %d", tag);
    if (!message || (!blocking && !flag))
        return bdl_error(comm, MPI_ERR_ARG, call, "NULL %s argument", message ? "flag" : "message");
    if (source == MPI_PROC_NULL) {
        if (flag)
            *flag = 1;
        *message = MPI_MESSAGE_NO_PROC;
        int err = status != MPI_STATUS_IGNORE ? status->MPI_ERROR : 0;
        status_proc_null(status);
        if (status != MPI_STATUS_IGNORE)
            status->MPI_ERROR = err;
        return MPI_SUCCESS;
    }
    if (source != MPI_ANY_SOURCE && (source < 0 || source >= bdl_comm_peers(c)))
        return bdl_error(comm, MPI_ERR_RANK, call, "invalid source rank %d (%s size %d)", source,
                         c->inter ? "remote group" : "communicator", bdl_comm_peers(c));
    bd_req_t *r = bdl_req_begin(blocking ? BD_REQ_MPROBE : BD_REQ_IMPROBE);
    r->ctx = c->ctx;
    r->peer = source;
    r->tag = tag;
    bdl_rpc();
    bd_resp_t *rs = bdl_resp();
    if (flag)
        *flag = rs->flag;
    if (!rs->flag) {
        *message = MPI_MESSAGE_NULL;
        return MPI_SUCCESS;
    }
    *message = msg_new((uint64_t)rs->arg[0], comm);
    if (status != MPI_STATUS_IGNORE) { /* MPI_ERROR is left alone (MPI 3.1 3.2.5) */
        status->MPI_SOURCE = rs->src;
        status->MPI_TAG = rs->tag;
        status->bd_cancelled = 0;
        status->bd_nbytes = (long long)rs->nbytes;
    }
    return MPI_SUCCESS;
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    return mprobe("MPI_Mprobe", source, tag, comm, 1, NULL, message, status);
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                MPI_Status *status)
{
    return mprobe("MPI_Improbe", source, tag, comm, 0, flag, message, status);
}

/* Receive the message *message names into (buf, count, dt); st gets the
 * status.  Returns MPI_SUCCESS, MPI_ERR_TRUNCATE (not yet reported) or an
 * error already reported; *proc_null is set for MPI_MESSAGE_NO_PROC. */
static int mrecv(const char *call, void *buf, int count, MPI_Datatype dt, MPI_Message *message,
                 MPI_Status *st, int *proc_null, MPI_Comm *comm)
{
    BDL_CHECK_INIT(call);
    *proc_null = 0;
    *comm = MPI_COMM_WORLD;
    if (!message)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "NULL message argument");
    if (*message == MPI_MESSAGE_NO_PROC) {
        *proc_null = 1;
        *message = MPI_MESSAGE_NULL;
        int err = st != MPI_STATUS_IGNORE ? st->MPI_ERROR : 0;
        status_proc_null(st);
        if (st != MPI_STATUS_IGNORE)
            st->MPI_ERROR = err;
        return MPI_SUCCESS;
    }
    int h = *message;
    if (h <= 0 || h >= g_nmsgs || !g_msgs[h].used)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, call,
                         "invalid message handle %d (MPI_MESSAGE_NULL, or already received)", h);
    *comm = g_msgs[h].comm;
    bdl_dt_t *t = NULL;
    int rc;
    if (count < 0)
        return bdl_error(*comm, MPI_ERR_COUNT, call, "invalid count %d", count);
    if ((rc = bdl_dt_check(*comm, call, "receive", dt, &t)))
        return rc;
    if (count > 0 && !buf && t->predefined)
        return bdl_error(*comm, MPI_ERR_BUFFER, call, "NULL buffer with count %d", count);
    bd_req_t *r = bdl_req_begin(BD_REQ_MRECV);
    r->rid = g_msgs[h].id;
    bdl_rpc();
    if (bdl_resp()->status == BD_RESP_ERROR)
        bdl_fatal(MPI_ERR_INTERN, "the master does not know matched message %llu",
                  (unsigned long long)g_msgs[h].id);
    g_msgs[h].used = 0;
    *message = MPI_MESSAGE_NULL;
    /* A single receive leaves MPI_ERROR alone (MPI 3.1 3.2.5). */
    int err = st != MPI_STATUS_IGNORE ? st->MPI_ERROR : 0;
    rc = take_delivery(buf, t, (uint64_t)count, st);
    if (st != MPI_STATUS_IGNORE)
        st->MPI_ERROR = err;
    return rc;
}

static int truncated(MPI_Comm comm, const char *call, int count, MPI_Datatype dt)
{
    bdl_dt_t *t = bdl_dt_lookup(dt);
    return bdl_error(comm, MPI_ERR_TRUNCATE, call,
                     "message of %llu bytes from rank %d (tag %d) truncated to the %llu-byte "
                     "receive buffer",
                     (unsigned long long)bdl_resp()->nbytes, bdl_resp()->src, bdl_resp()->tag,
                     (unsigned long long)((uint64_t)count * (t ? t->psize : 0)));
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status)
{
    int pn;
    MPI_Comm comm;
    int rc = mrecv("MPI_Mrecv", buf, count, datatype, message, status, &pn, &comm);
    if (rc == MPI_ERR_TRUNCATE && !pn)
        return truncated(comm, "MPI_Mrecv", count, datatype);
    return rc;
}

int MPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
               MPI_Request *request)
{
    if (!request)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Imrecv", "NULL request argument");
    /* The message is already here: the request completes at once. */
    MPI_Status st;
    int pn;
    MPI_Comm comm;
    bdl_status_empty(&st);
    int rc = mrecv("MPI_Imrecv", buf, count, datatype, message, &st, &pn, &comm);
    st.MPI_ERROR = rc == MPI_ERR_TRUNCATE ? rc : MPI_SUCCESS;
    if (rc && rc != MPI_ERR_TRUNCATE)
        return rc;
    int h = req_alloc(BDL_RQ_RECV);
    bdl_request_t *q = &bdl_g.reqs[h];
    q->buf = buf;
    q->count = (uint64_t)count;
    q->done = 1;
    q->status = st;
    q->err = rc;
    *request = h;
    return MPI_SUCCESS;
}

MPI_Fint MPI_Message_c2f(MPI_Message message) { return (MPI_Fint)message; }
MPI_Message MPI_Message_f2c(MPI_Fint message) { return (MPI_Message)message; }

/* ---------------------------------------------------------------- MPI_Isendrecv */

/* MPI 4.0: the send is buffered at once, so the request is the receive's. */
int MPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return bdl_error(comm, MPI_ERR_ARG, "MPI_Isendrecv", "NULL request argument");
    bdl_dt_t *t = NULL;
    bdl_comm_t *c;
    int rc =
        recv_check("MPI_Isendrecv", recvbuf, recvcount, recvtype, source, recvtag, comm, &t, &c);
    if (rc > 0)
        return rc;
    rc = do_send("MPI_Isendrecv", sendbuf, sendcount, sendtype, dest, sendtag, comm, 0, NULL);
    if (rc > 0)
        return rc;
    return MPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, request);
}

int MPI_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    /* The message leaves buf before the receive is posted. */
    return MPI_Isendrecv(buf, count, datatype, dest, sendtag, buf, count, datatype, source, recvtag,
                         comm, request);
}
