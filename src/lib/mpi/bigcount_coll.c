/* MPI 4.0 large-count entry points ("_c"), coll part.  GENERATED from
 * include/mpi.h by `scripts/gen-bigcount.py --source coll >
 * src/lib/mpi/bigcount_coll.c`: do not edit.  The conversions (bdl_bc_*)
 * are in bigcount.c, which says why. */
#include <limits.h>
#include <stdlib.h>

#include "core.h"
#include "mpi_int.h"

int MPI_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Bcast_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc = bdl_bc_fit_dt(call, comm, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Bcast(buffer, i_count, datatype, root, comm);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                 MPI_Op op, int root, MPI_Comm comm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Reduce_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc = bdl_bc_fit_dt(call, comm, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Reduce(sendbuf, recvbuf, i_count, datatype, op, root, comm);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                    MPI_Op op, MPI_Comm comm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Allreduce_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc = bdl_bc_fit_dt(call, comm, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Allreduce(sendbuf, recvbuf, i_count, datatype, op, comm);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Scan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
               MPI_Op op, MPI_Comm comm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Scan_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc = bdl_bc_fit_dt(call, comm, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Scan(sendbuf, recvbuf, i_count, datatype, op, comm);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Exscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                 MPI_Op op, MPI_Comm comm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Exscan_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc = bdl_bc_fit_dt(call, comm, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Exscan(sendbuf, recvbuf, i_count, datatype, op, comm);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Reduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Reduce_scatter_block_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_recvcount;
    if ((rc = bdl_bc_fit_dt(call, comm, "recvcount", recvcount, &i_recvcount, &datatype,
                            &w_datatype)))
        goto out;
    rc = MPI_Reduce_scatter_block(sendbuf, recvbuf, i_recvcount, datatype, op, comm);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Reduce_local_c(const void *inbuf, void *inoutbuf, MPI_Count count, MPI_Datatype datatype,
                       MPI_Op op)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Reduce_local_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc =
             bdl_bc_fit_dt(call, MPI_COMM_WORLD, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Reduce_local(inbuf, inoutbuf, i_count, datatype, op);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Gather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                 MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Gather_c";
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
    rc = MPI_Gather(sendbuf, i_sendcount, sendtype, recvbuf, i_recvcount, recvtype, root, comm);
out:
    bdl_bc_dt_free(&w_sendtype);
    bdl_bc_dt_free(&w_recvtype);
    return rc;
}

int MPI_Scatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Scatter_c";
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
    rc = MPI_Scatter(sendbuf, i_sendcount, sendtype, recvbuf, i_recvcount, recvtype, root, comm);
out:
    bdl_bc_dt_free(&w_sendtype);
    bdl_bc_dt_free(&w_recvtype);
    return rc;
}

int MPI_Allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Allgather_c";
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
    rc = MPI_Allgather(sendbuf, i_sendcount, sendtype, recvbuf, i_recvcount, recvtype, comm);
out:
    bdl_bc_dt_free(&w_sendtype);
    bdl_bc_dt_free(&w_recvtype);
    return rc;
}

int MPI_Alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Alltoall_c";
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
    rc = MPI_Alltoall(sendbuf, i_sendcount, sendtype, recvbuf, i_recvcount, recvtype, comm);
out:
    bdl_bc_dt_free(&w_sendtype);
    bdl_bc_dt_free(&w_recvtype);
    return rc;
}

int MPI_Gatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                  const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                  int root, MPI_Comm comm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Gatherv_c";
    int rc = MPI_SUCCESS;
    if ((rc = bdl_bcw_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                              root, comm)) != BDL_BC_THIN)
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
    rc = MPI_Gatherv(sendbuf, i_sendcount, sendtype, recvbuf, i_recvcounts, i_displs, recvtype,
                     root, comm);
out:
    bdl_bc_dt_free(&w_sendtype);
    free(i_recvcounts);
    free(i_displs);
    return rc;
}

int MPI_Scatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                   MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                   int root, MPI_Comm comm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Scatterv_c";
    int rc = MPI_SUCCESS;
    if ((rc = bdl_bcw_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                               root, comm)) != BDL_BC_THIN)
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
    rc = MPI_Scatterv(sendbuf, i_sendcounts, i_displs, sendtype, recvbuf, i_recvcount, recvtype,
                      root, comm);
out:
    free(i_sendcounts);
    free(i_displs);
    bdl_bc_dt_free(&w_recvtype);
    return rc;
}

int MPI_Allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                     MPI_Comm comm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Allgatherv_c";
    int rc = MPI_SUCCESS;
    if ((rc = bdl_bcw_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                 recvtype, comm)) != BDL_BC_THIN)
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
    rc = MPI_Allgatherv(sendbuf, i_sendcount, sendtype, recvbuf, i_recvcounts, i_displs, recvtype,
                        comm);
out:
    bdl_bc_dt_free(&w_sendtype);
    free(i_recvcounts);
    free(i_displs);
    return rc;
}

int MPI_Alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                    MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                    const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Alltoallv_c";
    int rc = MPI_SUCCESS;
    if ((rc = bdl_bcw_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                rdispls, recvtype, comm)) != BDL_BC_THIN)
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
    rc = MPI_Alltoallv(sendbuf, i_sendcounts, i_sdispls, sendtype, recvbuf, i_recvcounts, i_rdispls,
                       recvtype, comm);
out:
    free(i_sendcounts);
    free(i_sdispls);
    free(i_recvcounts);
    free(i_rdispls);
    return rc;
}

int MPI_Alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                    const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                    const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Alltoallw_c";
    int rc = MPI_SUCCESS;
    if ((rc = bdl_bcw_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                rdispls, recvtypes, comm)) != BDL_BC_THIN)
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
    rc = MPI_Alltoallw(sendbuf, i_sendcounts, i_sdispls, sendtypes, recvbuf, i_recvcounts,
                       i_rdispls, recvtypes, comm);
out:
    free(i_sendcounts);
    free(i_sdispls);
    free(i_recvcounts);
    free(i_rdispls);
    return rc;
}

int MPI_Reduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Reduce_scatter_c";
    int rc = MPI_SUCCESS;
    if ((rc = bdl_bcw_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm)) !=
        BDL_BC_THIN)
        return rc;
    int *i_recvcounts = NULL;
    if ((rc = bdl_bc_ints(call, comm, "recvcounts", recvcounts, bdl_bc_size(comm, 0),
                          &i_recvcounts)))
        goto out;
    rc = MPI_Reduce_scatter(sendbuf, recvbuf, i_recvcounts, datatype, op, comm);
out:
    free(i_recvcounts);
    return rc;
}
