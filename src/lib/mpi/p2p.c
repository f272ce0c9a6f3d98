/* Point-to-point entry points: sends, receives, probes and their combined
 * forms.  The transfer and the point-to-point request kinds are
 * core/msg.c's (sends are buffered and complete at once; receives are
 * posted when called and delivered when the rank waits or tests); matched
 * probes, persistent requests and the Wait/Test calls have their own files. */
#include <stdint.h>
#include <stdlib.h>

#include "core.h"
#include "dt.h"
#include "mpi_int.h"
#include "request.h"

/* ---------------------------------------------------------------- sending */

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
    if ((*c)->revoked)
        return bdl_comm_revoked_error(comm, call);
    if (count < 0)
        return bdl_error(comm, MPI_ERR_COUNT, call, "invalid count %d", count);
    if ((rc = bdl_dt_check_count(comm, call, "send", dt, count, t)))
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

/* send_id: the id MPI_Cancel withdraws the message by (0: none). */
static int do_send(const char *call, const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                   MPI_Comm comm, int sync, uint64_t send_id, uint64_t *sync_id, uint64_t *cma_id)
{
    bdl_dt_t *t = NULL;
    bdl_comm_t *c;
    int rc = send_check(call, buf, count, dt, dest, tag, comm, &t, &c);
    if (rc)
        return rc;
    return bdl_send_typed_id(c->ctx, bdl_comm_peer_world(c, dest), c->rank, tag, buf,
                             (uint64_t)count, t, sync, send_id, sync_id, cma_id);
}

int bdl_mpi_send(const char *call, const void *buf, int count, MPI_Datatype datatype, int dest,
                 int tag, MPI_Comm comm, int flow)
{
    bdl_dt_t *t = NULL;
    bdl_comm_t *c;
    int rc = send_check(call, buf, count, datatype, dest, tag, comm, &t, &c);
    if (rc)
        return rc < 0 ? MPI_SUCCESS : rc;
    /* Flow control: beyond -p2p-tokens, a synchronous send (MPI allows a
     * standard send to be one; docs/design.md). */
    int w = bdl_comm_peer_world(c, dest);
    int sync = flow && bdl_flow_sync(w, (uint64_t)count * t->psize);
    uint64_t id = 0;
    rc = bdl_send_typed_id(c->ctx, w, c->rank, tag, buf, (uint64_t)count, t, sync, 0,
                           sync ? &id : NULL, NULL);
    if (rc == MPI_SUCCESS && sync)
        bdl_p2p_flow_wait(id, w);
    return rc;
}

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    BDL_MT_GUARD;
    return bdl_mpi_send("MPI_Send", buf, count, datatype, dest, tag, comm, 1);
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    BDL_MT_GUARD;
    uint64_t id = 0;
    int rc = do_send("MPI_Ssend", buf, count, datatype, dest, tag, comm, 1, 0, &id, NULL);
    if (rc)
        return rc < 0 ? MPI_SUCCESS : rc;
    bdl_ssend_wait(id);
    return MPI_SUCCESS;
}

static int isend(const char *call, const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                 MPI_Comm comm, int sync, MPI_Request *request)
{
    uint64_t id = 0, send_id = ++bdl_g.next_rid, cma = 0;
    int rc = do_send(call, buf, count, dt, dest, tag, comm, sync, send_id, &id, &cma);
    if (rc > 0)
        return rc;
    if (rc == 0)
        *request =
            bdl_isend_req(sync, id, send_id, bdl_comm_peer_world(bdl_comm_get(comm), dest), cma);
    else /* MPI_PROC_NULL */
        *request = bdl_isend_req(0, id, 0, 0, 0);
    return MPI_SUCCESS;
}

int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    BDL_MT_GUARD;
    return isend("MPI_Isend", buf, count, datatype, dest, tag, comm, 0, request);
}

int MPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    BDL_MT_GUARD;
    return isend("MPI_Issend", buf, count, datatype, dest, tag, comm, 1, request);
}

/* ---------------------------------------------------------------- receiving */

static int recv_check(const char *call, const void *buf, int count, MPI_Datatype dt, int src,
                      int tag, MPI_Comm comm, bdl_dt_t **t, bdl_comm_t **c)
{
    BDL_CHECK_INIT(call);
    int rc;
    *c = bdl_comm_get(comm);
    if (!*c)
        return bdl_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);
    if ((*c)->revoked)
        return bdl_comm_revoked_error(comm, call);
    if (count < 0)
        return bdl_error(comm, MPI_ERR_COUNT, call, "invalid count %d", count);
    if ((rc = bdl_dt_check_count(comm, call, "receive", dt, count, t)))
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
    BDL_MT_GUARD;
    bdl_dt_t *t = NULL;
    bdl_comm_t *c;
    int rc = recv_check("MPI_Recv", buf, count, datatype, source, tag, comm, &t, &c);
    if (rc < 0) {
        bdl_status_proc_null(status);
        return MPI_SUCCESS;
    }
    if (rc)
        return rc;
    bdl_precv_t *p = bdl_recv_begin(c->ctx, source,
                                    source == MPI_ANY_SOURCE ? -1 : bdl_comm_peer_world(c, source),
                                    tag, buf, (uint64_t)count, t, status, &rc);
    if (p)
        rc = bdl_recv_end(p, status);
    if (rc == MPIX_ERR_REVOKED)
        return bdl_comm_revoked_error(comm, "MPI_Recv");
    if (rc)
        return bdl_error(comm, rc, "MPI_Recv",
                         "message of %llu bytes from rank %d (tag %d) truncated to the %llu-byte "
                         "receive buffer",
                         (unsigned long long)bdl_p2p_last()->nbytes, bdl_p2p_last()->src,
                         bdl_p2p_last()->tag, (unsigned long long)((uint64_t)count * t->psize));
    return MPI_SUCCESS;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    BDL_MT_GUARD;
    bdl_dt_t *t = NULL;
    bdl_comm_t *c;
    int rc = recv_check("MPI_Irecv", buf, count, datatype, source, tag, comm, &t, &c);
    if (rc > 0)
        return rc;
    *request = bdl_irecv_post(rc < 0 ? 0 : c->ctx, rc < 0 ? MPI_PROC_NULL : source, tag, buf,
                              (uint64_t)count, t);
    bdl_request_t *q = bdl_req_lookup(*request);
    if (q) {
        q->ecomm = comm; /* its errors (truncation, revoke) go to comm's handler */
        int world = rc >= 0 && source >= 0 ? bdl_comm_peer_world(c, source) : -1;
        q->remote = world >= 0 && !bdl_p2p_local(world);
        q->src_world1 = world + 1;
    }
    return MPI_SUCCESS;
}

/* The receive is posted before the message leaves: a large message of a
 * peer that runs is then read once, straight into recvbuf, instead of into
 * the unexpected queue first (the send waits until its single-copy message
 * is read, and drains meanwhile).  Sends are buffered, so this cannot
 * deadlock either way. */
static int sendrecv(const char *call, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                    int dest, int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                    int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    bdl_dt_t *st = NULL, *rt = NULL;
    bdl_comm_t *c;
    int src = send_check(call, sendbuf, sendcount, sendtype, dest, sendtag, comm, &st, &c);
    if (src > 0)
        return src;
    int rrc = recv_check(call, recvbuf, recvcount, recvtype, source, recvtag, comm, &rt, &c);
    if (rrc > 0)
        return rrc;
    int err = MPI_SUCCESS;
    bdl_precv_t *p = NULL;
    if (rrc == 0)
        p = bdl_recv_begin(c->ctx, source,
                           source == MPI_ANY_SOURCE ? -1 : bdl_comm_peer_world(c, source), recvtag,
                           recvbuf, (uint64_t)recvcount, rt, status, &err);
    if (src == 0)
        bdl_send_typed_id(c->ctx, bdl_comm_peer_world(c, dest), c->rank, sendtag, sendbuf,
                          (uint64_t)sendcount, st, 0, 0, NULL, NULL);
    if (p)
        err = bdl_recv_end(p, status);
    if (rrc < 0)
        bdl_status_proc_null(status);
    if (err)
        return bdl_error(comm, err, call,
                         "message of %llu bytes from rank %d (tag %d) truncated to the %llu-byte "
                         "receive buffer",
                         (unsigned long long)bdl_p2p_last()->nbytes, bdl_p2p_last()->src,
                         bdl_p2p_last()->tag,
                         (unsigned long long)((uint64_t)recvcount * rt->psize));
    return MPI_SUCCESS;
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status *status)
{
    BDL_MT_GUARD;
    return sendrecv("MPI_Sendrecv", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                    recvtype, source, recvtag, comm, status);
}

/* buf is both ends: a message that stays in buf until it is read (single
 * copy) would be overwritten by the one received, so a large one leaves
 * from a packed copy and the receive is posted before it, as above (the
 * copy is local; the message received still moves once).  A small one (or
 * one over 2 GiB) is copied out by the send, which then goes first. */
int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                         int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    BDL_MT_GUARD;
    static const char call[] = "MPI_Sendrecv_replace";
    bdl_dt_t *t = NULL;
    bdl_comm_t *c;
    int rc = send_check(call, buf, count, datatype, dest, sendtag, comm, &t, &c);
    if (rc > 0)
        return rc;
    uint64_t n = (uint64_t)count * t->psize;
    if (rc < 0 || n <= bdl_g.hdr->eager || n > INT32_MAX) {
        int src = do_send(call, buf, count, datatype, dest, sendtag, comm, 0, 0, NULL, NULL);
        if (src > 0)
            return src;
        return sendrecv(call, NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, buf, count, datatype, source,
                        recvtag, comm, status);
    }
    rc = recv_check(call, buf, count, datatype, source, recvtag, comm, &t, &c);
    if (rc > 0)
        return rc;
    char *tmp = malloc(n);
    if (!tmp)
        return bdl_error(comm, MPI_ERR_NO_MEM, call,
                         "no memory for a %llu-byte copy of the message", (unsigned long long)n);
    bdl_dt_pack(t, buf, (uint64_t)count, 0, tmp, n);
    rc = sendrecv(call, tmp, (int)n, MPI_BYTE, dest, sendtag, buf, count, datatype, source, recvtag,
                  comm, status);
    free(tmp);
    return rc;
}

/* ---------------------------------------------------------------- probing */

static int probe(const char *call, int source, int tag, MPI_Comm comm, int blocking, int *flag,
                 MPI_Status *status)
{
    BDL_CHECK_INIT(call);
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c)
        return bdl_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);
    if (c->revoked)
        return bdl_comm_revoked_error(comm, call);
    if (tag < 0 && tag != MPI_ANY_TAG)
        return bdl_error(comm, MPI_ERR_TAG, call, "invalid tag %d", tag);
    if (source == MPI_PROC_NULL) {
        if (flag)
            *flag = 1;
        bdl_status_proc_null(status);
        return MPI_SUCCESS;
    }
    if (source != MPI_ANY_SOURCE && (source < 0 || source >= bdl_comm_peers(c)))
        return bdl_error(comm, MPI_ERR_RANK, call, "invalid source rank %d (%s size %d)", source,
                         c->inter ? "remote group" : "communicator", bdl_comm_peers(c));
    MPI_Status st;
    int world = source >= 0 ? bdl_comm_peer_world(c, source) : -1;
    int remote = world >= 0 && !bdl_p2p_local(world);
    int found = bdl_p2p_probe(c->ctx, source, tag, blocking, 0, remote, world, &st, NULL);
    if (found < 0)
        return bdl_comm_revoked_error(comm, call);
    if (flag)
        *flag = found;
    if (found && status != MPI_STATUS_IGNORE) {
        st.MPI_ERROR = MPI_SUCCESS;
        *status = st;
    }
    return MPI_SUCCESS;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    BDL_MT_GUARD;
    return probe("MPI_Probe", source, tag, comm, 1, NULL, status);
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    BDL_MT_GUARD;
    return probe("MPI_Iprobe", source, tag, comm, 0, flag, status);
}

/* Ready mode only promises that the receive is posted: a buffered send is
 * a correct implementation. */
int MPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    BDL_MT_GUARD;
    return MPI_Send(buf, count, datatype, dest, tag, comm);
}

int MPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    BDL_MT_GUARD;
    return MPI_Isend(buf, count, datatype, dest, tag, comm, request);
}

/* ---------------------------------------------------------------- MPI_Isendrecv */

/* MPI 4.0: the send is buffered at once, so the request is the receive's.
 * Posted before the send, as in MPI_Sendrecv. */
int MPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    static const char call[] = "MPI_Isendrecv";
    if (!request)
        return bdl_error(comm, MPI_ERR_ARG, call, "NULL request argument");
    bdl_dt_t *st = NULL, *rt = NULL;
    bdl_comm_t *c;
    int src = send_check(call, sendbuf, sendcount, sendtype, dest, sendtag, comm, &st, &c);
    if (src > 0)
        return src;
    int rc = recv_check(call, recvbuf, recvcount, recvtype, source, recvtag, comm, &rt, &c);
    if (rc > 0)
        return rc;
    *request = bdl_irecv_post(rc < 0 ? 0 : c->ctx, rc < 0 ? MPI_PROC_NULL : source, recvtag,
                              recvbuf, (uint64_t)recvcount, rt);
    if (src == 0)
        bdl_send_typed_id(c->ctx, bdl_comm_peer_world(c, dest), c->rank, sendtag, sendbuf,
                          (uint64_t)sendcount, st, 0, 0, NULL, NULL);
    return MPI_SUCCESS;
}

int MPI_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    /* The message leaves buf (a single-copy one is waited for) before the
     * receive is posted: posted first, it could be filled at once. */
    static const char call[] = "MPI_Isendrecv_replace";
    if (!request)
        return bdl_error(comm, MPI_ERR_ARG, call, "NULL request argument");
    bdl_dt_t *t = NULL;
    bdl_comm_t *c;
    int rc = recv_check(call, buf, count, datatype, source, recvtag, comm, &t, &c);
    if (rc > 0)
        return rc;
    rc = do_send(call, buf, count, datatype, dest, sendtag, comm, 0, 0, NULL, NULL);
    if (rc > 0)
        return rc;
    return MPI_Irecv(buf, count, datatype, source, recvtag, comm, request);
}
