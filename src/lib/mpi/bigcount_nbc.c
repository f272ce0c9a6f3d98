/* MPI 4.0 large-count entry points ("_c"), nbc part.  GENERATED from
 * include/mpi.h by `scripts/gen-bigcount.py --source nbc >
 * src/lib/mpi/bigcount_nbc.c`: do not edit.  The conversions (bdl_bc_*)
 * are in bigcount.c, which says why. */
#include <limits.h>
#include <stdlib.h>

#include "core.h"
#include "mpi_int.h"

int MPI_Ibcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                 MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Ibcast_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc = bdl_bc_fit_dt(call, comm, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Ibcast(buffer, i_count, datatype, root, comm, request);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Ireduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op, int root, MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Ireduce_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc = bdl_bc_fit_dt(call, comm, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Ireduce(sendbuf, recvbuf, i_count, datatype, op, root, comm, request);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Iallreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Iallreduce_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc = bdl_bc_fit_dt(call, comm, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Iallreduce(sendbuf, recvbuf, i_count, datatype, op, comm, request);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Iscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Iscan_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc = bdl_bc_fit_dt(call, comm, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Iscan(sendbuf, recvbuf, i_count, datatype, op, comm, request);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Iexscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Iexscan_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc = bdl_bc_fit_dt(call, comm, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Iexscan(sendbuf, recvbuf, i_count, datatype, op, comm, request);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Ireduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Ireduce_scatter_block_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_recvcount;
    if ((rc = bdl_bc_fit_dt(call, comm, "recvcount", recvcount, &i_recvcount, &datatype,
                            &w_datatype)))
        goto out;
    rc = MPI_Ireduce_scatter_block(sendbuf, recvbuf, i_recvcount, datatype, op, comm, request);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Igather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Igather_c";
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
    rc = MPI_Igather(sendbuf, i_sendcount, sendtype, recvbuf, i_recvcount, recvtype, root, comm,
                     request);
out:
    bdl_bc_dt_free(&w_sendtype);
    bdl_bc_dt_free(&w_recvtype);
    return rc;
}

int MPI_Iscatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                   MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Iscatter_c";
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
    rc = MPI_Iscatter(sendbuf, i_sendcount, sendtype, recvbuf, i_recvcount, recvtype, root, comm,
                      request);
out:
    bdl_bc_dt_free(&w_sendtype);
    bdl_bc_dt_free(&w_recvtype);
    return rc;
}

int MPI_Iallgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                     MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Iallgather_c";
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
    rc = MPI_Iallgather(sendbuf, i_sendcount, sendtype, recvbuf, i_recvcount, recvtype, comm,
                        request);
out:
    bdl_bc_dt_free(&w_sendtype);
    bdl_bc_dt_free(&w_recvtype);
    return rc;
}

int MPI_Ialltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Ialltoall_c";
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
    rc = MPI_Ialltoall(sendbuf, i_sendcount, sendtype, recvbuf, i_recvcount, recvtype, comm,
                       request);
out:
    bdl_bc_dt_free(&w_sendtype);
    bdl_bc_dt_free(&w_recvtype);
    return rc;
}

int MPI_Igatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                   int root, MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Igatherv_c";
    int rc = MPI_SUCCESS;
    if ((rc = bdl_bcw_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                               root, comm, request)) != BDL_BC_THIN)
        return rc;
    MPI_Datatype w_sendtype = MPI_DATATYPE_NULL;
    int *i_recvcounts = NULL;
    int *i_displs = NULL;
    int i_sendcount;
    if ((rc = bdl_bc_fit_dt(call, comm, "sendcount", sendcount, &i_sendcount, &sendtype,
                            &w_sendtype)))
        goto out;
    if ((rc = bdl_bc_ints(call, comm, "recvcounts", recvcounts, bdl_bc_size(comm, 1),
                          &i_recvcounts)))
        goto out;
    if ((rc = bdl_bc_aints(call, comm, "displs", displs, bdl_bc_size(comm, 1), &i_displs)))
        goto out;
    rc = MPI_Igatherv(sendbuf, i_sendcount, sendtype, recvbuf, i_recvcounts, i_displs, recvtype,
                      root, comm, request);
out:
    bdl_bc_dt_free(&w_sendtype);
    free(i_recvcounts);
    free(i_displs);
    return rc;
}

int MPI_Iscatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                    MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                    MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Iscatterv_c";
    int rc = MPI_SUCCESS;
    if ((rc = bdl_bcw_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                                root, comm, request)) != BDL_BC_THIN)
        return rc;
    int *i_sendcounts = NULL;
    int *i_displs = NULL;
    MPI_Datatype w_recvtype = MPI_DATATYPE_NULL;
    if ((rc = bdl_bc_ints(call, comm, "sendcounts", sendcounts, bdl_bc_size(comm, 1),
                          &i_sendcounts)))
        goto out;
    if ((rc = bdl_bc_aints(call, comm, "displs", displs, bdl_bc_size(comm, 1), &i_displs)))
        goto out;
    int i_recvcount;
    if ((rc = bdl_bc_fit_dt(call, comm, "recvcount", recvcount, &i_recvcount, &recvtype,
                            &w_recvtype)))
        goto out;
    rc = MPI_Iscatterv(sendbuf, i_sendcounts, i_displs, sendtype, recvbuf, i_recvcount, recvtype,
                       root, comm, request);
out:
    free(i_sendcounts);
    free(i_displs);
    bdl_bc_dt_free(&w_recvtype);
    return rc;
}

int MPI_Iallgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                      void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                      MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Iallgatherv_c";
    int rc = MPI_SUCCESS;
    if ((rc = bdl_bcw_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                  recvtype, comm, request)) != BDL_BC_THIN)
        return rc;
    MPI_Datatype w_sendtype = MPI_DATATYPE_NULL;
    int *i_recvcounts = NULL;
    int *i_displs = NULL;
    int i_sendcount;
    if ((rc = bdl_bc_fit_dt(call, comm, "sendcount", sendcount, &i_sendcount, &sendtype,
                            &w_sendtype)))
        goto out;
    if ((rc = bdl_bc_ints(call, comm, "recvcounts", recvcounts, bdl_bc_size(comm, 1),
                          &i_recvcounts)))
        goto out;
    if ((rc = bdl_bc_aints(call, comm, "displs", displs, bdl_bc_size(comm, 1), &i_displs)))
        goto out;
    rc = MPI_Iallgatherv(sendbuf, i_sendcount, sendtype, recvbuf, i_recvcounts, i_displs, recvtype,
                         comm, request);
out:
    bdl_bc_dt_free(&w_sendtype);
    free(i_recvcounts);
    free(i_displs);
    return rc;
}

int MPI_Ialltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Ialltoallv_c";
    int rc = MPI_SUCCESS;
    if ((rc = bdl_bcw_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                 rdispls, recvtype, comm, request)) != BDL_BC_THIN)
        return rc;
    int *i_sendcounts = NULL;
    int *i_sdispls = NULL;
    int *i_recvcounts = NULL;
    int *i_rdispls = NULL;
    if ((rc = bdl_bc_ints(call, comm, "sendcounts", sendcounts, bdl_bc_size(comm, 1),
                          &i_sendcounts)))
        goto out;
    if ((rc = bdl_bc_aints(call, comm, "sdispls", sdispls, bdl_bc_size(comm, 1), &i_sdispls)))
        goto out;
    if ((rc = bdl_bc_ints(call, comm, "recvcounts", recvcounts, bdl_bc_size(comm, 1),
                          &i_recvcounts)))
        goto out;
    if ((rc = bdl_bc_aints(call, comm, "rdispls", rdispls, bdl_bc_size(comm, 1), &i_rdispls)))
        goto out;
    rc = MPI_Ialltoallv(sendbuf, i_sendcounts, i_sdispls, sendtype, recvbuf, i_recvcounts,
                        i_rdispls, recvtype, comm, request);
out:
    free(i_sendcounts);
    free(i_sdispls);
    free(i_recvcounts);
    free(i_rdispls);
    return rc;
}

int MPI_Ialltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                     MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Ialltoallw_c";
    int rc = MPI_SUCCESS;
    if ((rc = bdl_bcw_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                 rdispls, recvtypes, comm, request)) != BDL_BC_THIN)
        return rc;
    int *i_sendcounts = NULL;
    int *i_sdispls = NULL;
    int *i_recvcounts = NULL;
    int *i_rdispls = NULL;
    if ((rc = bdl_bc_ints(call, comm, "sendcounts", sendcounts, bdl_bc_size(comm, 1),
                          &i_sendcounts)))
        goto out;
    if ((rc = bdl_bc_aints(call, comm, "sdispls", sdispls, bdl_bc_size(comm, 1), &i_sdispls)))
        goto out;
    if ((rc = bdl_bc_ints(call, comm, "recvcounts", recvcounts, bdl_bc_size(comm, 1),
                          &i_recvcounts)))
        goto out;
    if ((rc = bdl_bc_aints(call, comm, "rdispls", rdispls, bdl_bc_size(comm, 1), &i_rdispls)))
        goto out;
    rc = MPI_Ialltoallw(sendbuf, i_sendcounts, i_sdispls, sendtypes, recvbuf, i_recvcounts,
                        i_rdispls, recvtypes, comm, request);
out:
    free(i_sendcounts);
    free(i_sdispls);
    free(i_recvcounts);
    free(i_rdispls);
    return rc;
}

int MPI_Ireduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Ireduce_scatter_c";
    int rc = MPI_SUCCESS;
    if ((rc = bdl_bcw_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request)) !=
        BDL_BC_THIN)
        return rc;
    int *i_recvcounts = NULL;
    if ((rc = bdl_bc_ints(call, comm, "recvcounts", recvcounts, bdl_bc_size(comm, 0),
                          &i_recvcounts)))
        goto out;
    rc = MPI_Ireduce_scatter(sendbuf, recvbuf, i_recvcounts, datatype, op, comm, request);
out:
    free(i_recvcounts);
    return rc;
}

int MPI_Bcast_init_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                     MPI_Info info, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Bcast_init_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc = bdl_bc_fit_dt(call, comm, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Bcast_init(buffer, i_count, datatype, root, comm, info, request);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Reduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                      MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Reduce_init_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc = bdl_bc_fit_dt(call, comm, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Reduce_init(sendbuf, recvbuf, i_count, datatype, op, root, comm, info, request);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Allreduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                         MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Allreduce_init_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc = bdl_bc_fit_dt(call, comm, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Allreduce_init(sendbuf, recvbuf, i_count, datatype, op, comm, info, request);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Scan_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                    MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Scan_init_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc = bdl_bc_fit_dt(call, comm, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Scan_init(sendbuf, recvbuf, i_count, datatype, op, comm, info, request);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Exscan_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                      MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Exscan_init_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc = bdl_bc_fit_dt(call, comm, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Exscan_init(sendbuf, recvbuf, i_count, datatype, op, comm, info, request);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Reduce_scatter_block_init_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                    MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Reduce_scatter_block_init_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_recvcount;
    if ((rc = bdl_bc_fit_dt(call, comm, "recvcount", recvcount, &i_recvcount, &datatype,
                            &w_datatype)))
        goto out;
    rc = MPI_Reduce_scatter_block_init(sendbuf, recvbuf, i_recvcount, datatype, op, comm, info,
                                       request);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Gather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                      void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                      MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Gather_init_c";
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
    rc = MPI_Gather_init(sendbuf, i_sendcount, sendtype, recvbuf, i_recvcount, recvtype, root, comm,
                         info, request);
out:
    bdl_bc_dt_free(&w_sendtype);
    bdl_bc_dt_free(&w_recvtype);
    return rc;
}

int MPI_Scatter_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                       void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                       MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Scatter_init_c";
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
    rc = MPI_Scatter_init(sendbuf, i_sendcount, sendtype, recvbuf, i_recvcount, recvtype, root,
                          comm, info, request);
out:
    bdl_bc_dt_free(&w_sendtype);
    bdl_bc_dt_free(&w_recvtype);
    return rc;
}

int MPI_Allgather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                         void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                         MPI_Info info, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Allgather_init_c";
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
    rc = MPI_Allgather_init(sendbuf, i_sendcount, sendtype, recvbuf, i_recvcount, recvtype, comm,
                            info, request);
out:
    bdl_bc_dt_free(&w_sendtype);
    bdl_bc_dt_free(&w_recvtype);
    return rc;
}

int MPI_Alltoall_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                        MPI_Info info, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Alltoall_init_c";
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
    rc = MPI_Alltoall_init(sendbuf, i_sendcount, sendtype, recvbuf, i_recvcount, recvtype, comm,
                           info, request);
out:
    bdl_bc_dt_free(&w_sendtype);
    bdl_bc_dt_free(&w_recvtype);
    return rc;
}

int MPI_Neighbor_allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                             void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                             MPI_Comm comm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Neighbor_allgather_c";
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
    rc = MPI_Neighbor_allgather(sendbuf, i_sendcount, sendtype, recvbuf, i_recvcount, recvtype,
                                comm);
out:
    bdl_bc_dt_free(&w_sendtype);
    bdl_bc_dt_free(&w_recvtype);
    return rc;
}

int MPI_Neighbor_alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                            void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                            MPI_Comm comm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Neighbor_alltoall_c";
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
    rc =
        MPI_Neighbor_alltoall(sendbuf, i_sendcount, sendtype, recvbuf, i_recvcount, recvtype, comm);
out:
    bdl_bc_dt_free(&w_sendtype);
    bdl_bc_dt_free(&w_recvtype);
    return rc;
}

int MPI_Ineighbor_allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                              MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Ineighbor_allgather_c";
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
    rc = MPI_Ineighbor_allgather(sendbuf, i_sendcount, sendtype, recvbuf, i_recvcount, recvtype,
                                 comm, request);
out:
    bdl_bc_dt_free(&w_sendtype);
    bdl_bc_dt_free(&w_recvtype);
    return rc;
}

int MPI_Ineighbor_alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                             void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                             MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Ineighbor_alltoall_c";
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
    rc = MPI_Ineighbor_alltoall(sendbuf, i_sendcount, sendtype, recvbuf, i_recvcount, recvtype,
                                comm, request);
out:
    bdl_bc_dt_free(&w_sendtype);
    bdl_bc_dt_free(&w_recvtype);
    return rc;
}

int MPI_Neighbor_allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                              void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                              MPI_Datatype recvtype, MPI_Comm comm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Neighbor_allgatherv_c";
    int rc = MPI_SUCCESS;
    if ((rc = bdl_bcw_Neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                          recvtype, comm)) != BDL_BC_THIN)
        return rc;
    MPI_Datatype w_sendtype = MPI_DATATYPE_NULL;
    int *i_recvcounts = NULL;
    int *i_displs = NULL;
    int i_sendcount;
    if ((rc = bdl_bc_fit_dt(call, comm, "sendcount", sendcount, &i_sendcount, &sendtype,
                            &w_sendtype)))
        goto out;
    if ((rc = bdl_bc_ints(call, comm, "recvcounts", recvcounts, bdl_bc_degree(comm, 0),
                          &i_recvcounts)))
        goto out;
    if ((rc = bdl_bc_aints(call, comm, "displs", displs, bdl_bc_degree(comm, 0), &i_displs)))
        goto out;
    rc = MPI_Neighbor_allgatherv(sendbuf, i_sendcount, sendtype, recvbuf, i_recvcounts, i_displs,
                                 recvtype, comm);
out:
    bdl_bc_dt_free(&w_sendtype);
    free(i_recvcounts);
    free(i_displs);
    return rc;
}

int MPI_Neighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                             const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                             const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                             MPI_Datatype recvtype, MPI_Comm comm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Neighbor_alltoallv_c";
    int rc = MPI_SUCCESS;
    if ((rc = bdl_bcw_Neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                         recvcounts, rdispls, recvtype, comm)) != BDL_BC_THIN)
        return rc;
    int *i_sendcounts = NULL;
    int *i_sdispls = NULL;
    int *i_recvcounts = NULL;
    int *i_rdispls = NULL;
    if ((rc = bdl_bc_ints(call, comm, "sendcounts", sendcounts, bdl_bc_degree(comm, 1),
                          &i_sendcounts)))
        goto out;
    if ((rc = bdl_bc_aints(call, comm, "sdispls", sdispls, bdl_bc_degree(comm, 1), &i_sdispls)))
        goto out;
    if ((rc = bdl_bc_ints(call, comm, "recvcounts", recvcounts, bdl_bc_degree(comm, 0),
                          &i_recvcounts)))
        goto out;
    if ((rc = bdl_bc_aints(call, comm, "rdispls", rdispls, bdl_bc_degree(comm, 0), &i_rdispls)))
        goto out;
    rc = MPI_Neighbor_alltoallv(sendbuf, i_sendcounts, i_sdispls, sendtype, recvbuf, i_recvcounts,
                                i_rdispls, recvtype, comm);
out:
    free(i_sendcounts);
    free(i_sdispls);
    free(i_recvcounts);
    free(i_rdispls);
    return rc;
}

int MPI_Neighbor_alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[],
                             const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                             void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                             const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Neighbor_alltoallw_c";
    int rc = MPI_SUCCESS;
    if ((rc = bdl_bcw_Neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                         recvcounts, rdispls, recvtypes, comm)) != BDL_BC_THIN)
        return rc;
    int *i_sendcounts = NULL;
    int *i_recvcounts = NULL;
    if ((rc = bdl_bc_ints(call, comm, "sendcounts", sendcounts, bdl_bc_degree(comm, 1),
                          &i_sendcounts)))
        goto out;
    if ((rc = bdl_bc_ints(call, comm, "recvcounts", recvcounts, bdl_bc_degree(comm, 0),
                          &i_recvcounts)))
        goto out;
    rc = MPI_Neighbor_alltoallw(sendbuf, i_sendcounts, sdispls, sendtypes, recvbuf, i_recvcounts,
                                rdispls, recvtypes, comm);
out:
    free(i_sendcounts);
    free(i_recvcounts);
    return rc;
}

int MPI_Ineighbor_allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                               void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                               MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Ineighbor_allgatherv_c";
    int rc = MPI_SUCCESS;
    if ((rc = bdl_bcw_Ineighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                           displs, recvtype, comm, request)) != BDL_BC_THIN)
        return rc;
    MPI_Datatype w_sendtype = MPI_DATATYPE_NULL;
    int *i_recvcounts = NULL;
    int *i_displs = NULL;
    int i_sendcount;
    if ((rc = bdl_bc_fit_dt(call, comm, "sendcount", sendcount, &i_sendcount, &sendtype,
                            &w_sendtype)))
        goto out;
    if ((rc = bdl_bc_ints(call, comm, "recvcounts", recvcounts, bdl_bc_degree(comm, 0),
                          &i_recvcounts)))
        goto out;
    if ((rc = bdl_bc_aints(call, comm, "displs", displs, bdl_bc_degree(comm, 0), &i_displs)))
        goto out;
    rc = MPI_Ineighbor_allgatherv(sendbuf, i_sendcount, sendtype, recvbuf, i_recvcounts, i_displs,
                                  recvtype, comm, request);
out:
    bdl_bc_dt_free(&w_sendtype);
    free(i_recvcounts);
    free(i_displs);
    return rc;
}

int MPI_Ineighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                              const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                              const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Ineighbor_alltoallv_c";
    int rc = MPI_SUCCESS;
    if ((rc = bdl_bcw_Ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                          recvcounts, rdispls, recvtype, comm, request)) !=
        BDL_BC_THIN)
        return rc;
    int *i_sendcounts = NULL;
    int *i_sdispls = NULL;
    int *i_recvcounts = NULL;
    int *i_rdispls = NULL;
    if ((rc = bdl_bc_ints(call, comm, "sendcounts", sendcounts, bdl_bc_degree(comm, 1),
                          &i_sendcounts)))
        goto out;
    if ((rc = bdl_bc_aints(call, comm, "sdispls", sdispls, bdl_bc_degree(comm, 1), &i_sdispls)))
        goto out;
    if ((rc = bdl_bc_ints(call, comm, "recvcounts", recvcounts, bdl_bc_degree(comm, 0),
                          &i_recvcounts)))
        goto out;
    if ((rc = bdl_bc_aints(call, comm, "rdispls", rdispls, bdl_bc_degree(comm, 0), &i_rdispls)))
        goto out;
    rc = MPI_Ineighbor_alltoallv(sendbuf, i_sendcounts, i_sdispls, sendtype, recvbuf, i_recvcounts,
                                 i_rdispls, recvtype, comm, request);
out:
    free(i_sendcounts);
    free(i_sdispls);
    free(i_recvcounts);
    free(i_rdispls);
    return rc;
}

int MPI_Ineighbor_alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[],
                              const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                              void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                              const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Ineighbor_alltoallw_c";
    int rc = MPI_SUCCESS;
    if ((rc = bdl_bcw_Ineighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                          recvcounts, rdispls, recvtypes, comm, request)) !=
        BDL_BC_THIN)
        return rc;
    int *i_sendcounts = NULL;
    int *i_recvcounts = NULL;
    if ((rc = bdl_bc_ints(call, comm, "sendcounts", sendcounts, bdl_bc_degree(comm, 1),
                          &i_sendcounts)))
        goto out;
    if ((rc = bdl_bc_ints(call, comm, "recvcounts", recvcounts, bdl_bc_degree(comm, 0),
                          &i_recvcounts)))
        goto out;
    rc = MPI_Ineighbor_alltoallw(sendbuf, i_sendcounts, sdispls, sendtypes, recvbuf, i_recvcounts,
                                 rdispls, recvtypes, comm, request);
out:
    free(i_sendcounts);
    free(i_recvcounts);
    return rc;
}

int MPI_Neighbor_allgather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                  MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Neighbor_allgather_init_c";
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
    rc = MPI_Neighbor_allgather_init(sendbuf, i_sendcount, sendtype, recvbuf, i_recvcount, recvtype,
                                     comm, info, request);
out:
    bdl_bc_dt_free(&w_sendtype);
    bdl_bc_dt_free(&w_recvtype);
    return rc;
}

int MPI_Neighbor_alltoall_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                 MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Neighbor_alltoall_init_c";
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
    rc = MPI_Neighbor_alltoall_init(sendbuf, i_sendcount, sendtype, recvbuf, i_recvcount, recvtype,
                                    comm, info, request);
out:
    bdl_bc_dt_free(&w_sendtype);
    bdl_bc_dt_free(&w_recvtype);
    return rc;
}
