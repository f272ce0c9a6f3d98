/* Persistent point-to-point requests (MPI 3.1 3.9): each MPI_Start makes
 * the request again as the matching nonblocking call would. */
#include "core.h"
#include "dt.h"
#include "objects.h"
#include "request.h"

static int persistent(const char *call, const bdl_req_ops_t *kind, const void *buf, int count,
                      MPI_Datatype dt, int peer, int tag, MPI_Comm comm, MPI_Request *request)
{
    BDL_CHECK_INIT(call);
    if (!bdl_comm_get(comm))
        return bdl_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);
    if (count < 0)
        return bdl_error(comm, MPI_ERR_COUNT, call, "invalid count %d", count);
    int h = bdl_req_new(kind == &bdl_req_recv_ops ? &bdl_req_recv_ops : &bdl_req_send_ops);
    bdl_request_t *q = &bdl_g.reqs[h];
    q->persistent = 1;
    q->inactive = 1;
    q->pkind = kind;
    q->pbuf = buf;
    q->pcount = count;
    q->pdt = bdl_dt_alias(dt);
    if (q->pdt == MPI_DATATYPE_NULL && dt != MPI_DATATYPE_NULL) {
        bdl_req_free_slot(q);
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
    BDL_MT_GUARD;
    return persistent("MPI_Send_init", &bdl_req_send_ops, buf, count, datatype, dest, tag, comm,
                      request);
}

int MPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    return persistent("MPI_Bsend_init", &bdl_req_send_ops, buf, count, datatype, dest, tag, comm,
                      request);
}

int MPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    return persistent("MPI_Rsend_init", &bdl_req_send_ops, buf, count, datatype, dest, tag, comm,
                      request);
}

int MPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    return persistent("MPI_Ssend_init", &bdl_req_ssend_ops, buf, count, datatype, dest, tag, comm,
                      request);
}

int MPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                  MPI_Request *request)
{
    BDL_MT_GUARD;
    return persistent("MPI_Recv_init", &bdl_req_recv_ops, buf, count, datatype, source, tag, comm,
                      request);
}

int MPI_Start(MPI_Request *request)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Start");
    bdl_request_t *q = request ? bdl_req_lookup(*request) : NULL;
    if (!q || !q->persistent)
        return bdl_req_bad("MPI_Start", request ? *request : MPI_REQUEST_NULL);
    if (!q->inactive)
        return bdl_error(q->pcomm, MPI_ERR_REQUEST, "MPI_Start", "request %d is already active",
                         *request);
    if (q->ops->start) /* persistent collectives, partitioned communication */
        return q->ops->start(q, *request);
    /* Start it as the matching nonblocking call, then move that request's
     * state into this handle (the temporary handle is released). */
    MPI_Request tmp;
    int rc;
    if (q->pkind == &bdl_req_recv_ops)
        rc = MPI_Irecv((void *)q->pbuf, q->pcount, q->pdt, q->ppeer, q->ptag, q->pcomm, &tmp);
    else
        rc = (q->pkind == &bdl_req_ssend_ops ? MPI_Issend : MPI_Isend)(
            q->pbuf, q->pcount, q->pdt, q->ppeer, q->ptag, q->pcomm, &tmp);
    if (rc)
        return rc;
    q = &bdl_g.reqs[*request]; /* the table may have moved */
    bdl_request_t *t = &bdl_g.reqs[tmp];
    q->ops = t->ops;
    q->done = t->done;
    q->err = t->err;
    q->rid = t->rid;
    q->buf = t->buf;
    q->dt = t->dt;
    q->count = t->count;
    q->send_id = t->send_id;
    q->send_dst = t->send_dst;
    q->remote = t->remote;
    q->src_world1 = t->src_world1;
    q->cma_id = t->cma_id;
    q->status = t->status;
    q->impl = t->impl;
    q->inactive = 0;
    if (q->ops == &bdl_req_recv_ops)
        bdl_p2p_recv_moved(q, *request);
    bdl_req_free_slot(t);
    return MPI_SUCCESS;
}

int MPI_Startall(int count, MPI_Request requests[])
{
    BDL_MT_GUARD;
    for (int i = 0; i < count; i++) {
        int rc = MPI_Start(&requests[i]);
        if (rc)
            return rc;
    }
    return MPI_SUCCESS;
}
