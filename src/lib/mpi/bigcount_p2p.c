/* MPI 4.0 large-count entry points ("_c"), p2p part.  GENERATED from
 * include/mpi.h by `scripts/gen-bigcount.py --source p2p >
 * src/lib/mpi/bigcount_p2p.c`: do not edit.  The conversions (bdl_bc_*)
 * are in bigcount.c, which says why. */
#include <limits.h>
#include <stdlib.h>

#include "core.h"
#include "mpi_int.h"

int MPI_Send_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Send_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc = bdl_bc_fit_dt(call, comm, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Send(buf, i_count, datatype, dest, tag, comm);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Bsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                MPI_Comm comm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Bsend_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc = bdl_bc_fit_dt(call, comm, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Bsend(buf, i_count, datatype, dest, tag, comm);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Ssend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                MPI_Comm comm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Ssend_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc = bdl_bc_fit_dt(call, comm, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Ssend(buf, i_count, datatype, dest, tag, comm);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Rsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                MPI_Comm comm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Rsend_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc = bdl_bc_fit_dt(call, comm, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Rsend(buf, i_count, datatype, dest, tag, comm);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Recv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
               MPI_Comm comm, MPI_Status *status)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Recv_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc = bdl_bc_fit_dt(call, comm, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Recv(buf, i_count, datatype, source, tag, comm, status);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Isend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Isend_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc = bdl_bc_fit_dt(call, comm, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Isend(buf, i_count, datatype, dest, tag, comm, request);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Ibsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Ibsend_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc = bdl_bc_fit_dt(call, comm, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Ibsend(buf, i_count, datatype, dest, tag, comm, request);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Issend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Issend_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc = bdl_bc_fit_dt(call, comm, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Issend(buf, i_count, datatype, dest, tag, comm, request);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Irsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Irsend_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc = bdl_bc_fit_dt(call, comm, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Irsend(buf, i_count, datatype, dest, tag, comm, request);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Irecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Irecv_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc = bdl_bc_fit_dt(call, comm, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Irecv(buf, i_count, datatype, source, tag, comm, request);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Send_init_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Send_init_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc = bdl_bc_fit_dt(call, comm, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Send_init(buf, i_count, datatype, dest, tag, comm, request);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Bsend_init_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                     MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Bsend_init_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc = bdl_bc_fit_dt(call, comm, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Bsend_init(buf, i_count, datatype, dest, tag, comm, request);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Ssend_init_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                     MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Ssend_init_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc = bdl_bc_fit_dt(call, comm, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Ssend_init(buf, i_count, datatype, dest, tag, comm, request);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Rsend_init_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                     MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Rsend_init_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc = bdl_bc_fit_dt(call, comm, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Rsend_init(buf, i_count, datatype, dest, tag, comm, request);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Recv_init_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                    MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Recv_init_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc = bdl_bc_fit_dt(call, comm, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Recv_init(buf, i_count, datatype, source, tag, comm, request);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Sendrecv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                   int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                   int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Sendrecv_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_sendtype = MPI_DATATYPE_NULL;
    MPI_Datatype w_recvtype = MPI_DATATYPE_NULL;
    int i_sendcount;
    if ((rc = bdl_bc_fit_dt(call, comm, "sendcount", sendcount, &i_sendcount, &sendtype,
                            &w_sendtype)))
        goto out;
    int i_recvcount;
    if ((rc = bdl_bc_fit_dt(call, comm, "recvcount", recvcount, &i_recvcount, &recvtype,
                            &w_recvtype)))
        goto out;
    rc = MPI_Sendrecv(sendbuf, i_sendcount, sendtype, dest, sendtag, recvbuf, i_recvcount, recvtype,
                      source, recvtag, comm, status);
out:
    bdl_bc_dt_free(&w_sendtype);
    bdl_bc_dt_free(&w_recvtype);
    return rc;
}

int MPI_Sendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int sendtag,
                           int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Sendrecv_replace_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc = bdl_bc_fit_dt(call, comm, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Sendrecv_replace(buf, i_count, datatype, dest, sendtag, source, recvtag, comm, status);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Isendrecv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                    int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                    int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Isendrecv_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_sendtype = MPI_DATATYPE_NULL;
    MPI_Datatype w_recvtype = MPI_DATATYPE_NULL;
    int i_sendcount;
    if ((rc = bdl_bc_fit_dt(call, comm, "sendcount", sendcount, &i_sendcount, &sendtype,
                            &w_sendtype)))
        goto out;
    int i_recvcount;
    if ((rc = bdl_bc_fit_dt(call, comm, "recvcount", recvcount, &i_recvcount, &recvtype,
                            &w_recvtype)))
        goto out;
    rc = MPI_Isendrecv(sendbuf, i_sendcount, sendtype, dest, sendtag, recvbuf, i_recvcount,
                       recvtype, source, recvtag, comm, request);
out:
    bdl_bc_dt_free(&w_sendtype);
    bdl_bc_dt_free(&w_recvtype);
    return rc;
}

int MPI_Isendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                            int sendtag, int source, int recvtag, MPI_Comm comm,
                            MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Isendrecv_replace_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc = bdl_bc_fit_dt(call, comm, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Isendrecv_replace(buf, i_count, datatype, dest, sendtag, source, recvtag, comm,
                               request);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Mrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message,
                MPI_Status *status)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Mrecv_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc =
             bdl_bc_fit_dt(call, MPI_COMM_WORLD, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Mrecv(buf, i_count, datatype, message, status);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Imrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message,
                 MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Imrecv_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc =
             bdl_bc_fit_dt(call, MPI_COMM_WORLD, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Imrecv(buf, i_count, datatype, message, request);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Buffer_attach_c(void *buffer, MPI_Count size)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Buffer_attach_c";
    int rc = MPI_SUCCESS;
    int i_size;
    if ((rc = bdl_bc_fit(call, MPI_COMM_WORLD, "size", size, &i_size)))
        return rc;
    rc = MPI_Buffer_attach(buffer, i_size);
    return rc;
}

int MPI_Buffer_detach_c(void *buffer_addr, MPI_Count *size)
{
    BDL_MT_GUARD;
    int rc = MPI_SUCCESS;
    int i_size = 0;
    rc = MPI_Buffer_detach(buffer_addr, &i_size);
    if (rc == MPI_SUCCESS)
        *size = (MPI_Count)i_size;
    return rc;
}
