/* libbdmpi, top room: what the MPI entry points share among themselves
 * (the intercommunicator collectives). */
#ifndef BDL_MPI_INT_H
#define BDL_MPI_INT_H

#include "core.h"
#include "objects.h"

/* dyn.c: a spawned rank's MPI_Init makes its parent intercommunicator. */
int bdl_dyn_child_init(const bd_spawn_info_t *sp);
/* p2p.c: a blocking standard send (MPI_Send, MPI_Rsend, MPI_Bsend); flow:
 * it may be made synchronous by flow control (-p2p-tokens), never for
 * MPI_Bsend, whose message is buffered by definition. */
int bdl_mpi_send(const char *call, const void *buf, int count, MPI_Datatype datatype, int dest,
                 int tag, MPI_Comm comm, int flow);

struct bdl_dt;

/* intercomm.c: intercommunicator collectives (comm is c's handle; c is
 * valid and c->inter is set). */
int bdl_inter_barrier(bdl_comm_t *c, MPI_Comm comm);
int bdl_inter_bcast(bdl_comm_t *c, MPI_Comm comm, void *buf, int count, MPI_Datatype dt, int root);
int bdl_inter_reduce(bdl_comm_t *c, MPI_Comm comm, const void *sendbuf, void *recvbuf, int count,
                     MPI_Datatype dt, MPI_Op op, int root);
int bdl_inter_allreduce(bdl_comm_t *c, MPI_Comm comm, const void *sendbuf, void *recvbuf, int count,
                        MPI_Datatype dt, MPI_Op op);
/* counts and lcounts (MPI_Count counts, MPI_Reduce_scatter_c) NULL: every
 * rank gets block elements (Reduce_scatter_block). */
int bdl_inter_reduce_scatter(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *sendbuf,
                             void *recvbuf, const int *counts, const MPI_Count *lcounts, int block,
                             MPI_Datatype dt, MPI_Op op);
/* recvcounts/displs (sendcounts/displs) NULL for the fixed-count variants;
 * tv (not NULL): a type per remote rank on the v side, displs in bytes
 * (the large-count calls' entries past INT_MAX, bigcount_arr.c). */
int bdl_inter_gather(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *sendbuf,
                     int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                     const int *recvcounts, const int *displs, MPI_Datatype recvtype,
                     struct bdl_dt *const *tv, int root);
int bdl_inter_scatter(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *sendbuf,
                      int sendcount, const int *sendcounts, const int *displs,
                      MPI_Datatype sendtype, struct bdl_dt *const *tv, void *recvbuf, int recvcount,
                      MPI_Datatype recvtype, int root);
int bdl_inter_allgather(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *sendbuf,
                        int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        const int *recvcounts, const int *displs, MPI_Datatype recvtype,
                        struct bdl_dt *const *tv);
int bdl_inter_alltoall(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *sendbuf,
                       int sendcount, const int *sendcounts, const int *sdispls,
                       MPI_Datatype sendtype, void *recvbuf, int recvcount, const int *recvcounts,
                       const int *rdispls, MPI_Datatype recvtype);
/* Displacements in bytes, a type per remote rank; v: the call is
 * MPI_Alltoallv_c's (its messages pair with MPI_Alltoallv's). */
int bdl_inter_alltoallw(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *sendbuf,
                        const int *sendcounts, const int *sdispls, const MPI_Datatype *sendtypes,
                        void *recvbuf, const int *recvcounts, const int *rdispls,
                        const MPI_Datatype *recvtypes, int v);

/* env.c: the library instance the World Model and the sessions share:
 * bring it up (MPI_SUCCESS; already up: *provided its thread level), end it
 * (the World Model and every session are done). */
int bdl_instance_begin(int required, int *provided);
void bdl_instance_end(void);

/* bigcount.c: the conversions of the large-count (_c) entry points, which
 * report their errors on comm for call (what names the argument): v fits
 * an int; the number of entries of a counts array on comm (peers: of the
 * remote group of an intercommunicator); n MPI_Count or MPI_Aint values as
 * a new int array (NULL for a NULL array); MPI_Count as MPI_Aint values. */
int bdl_bc_fit(const char *call, MPI_Comm comm, const char *what, MPI_Count v, int *out);
/* A count of elements of *dt: past INT_MAX, count 1 of a new type *big
 * that replaces *dt; free it with bdl_bc_dt_free after the int form. */
int bdl_bc_fit_dt(const char *call, MPI_Comm comm, const char *what, MPI_Count v, int *out,
                  MPI_Datatype *dt, MPI_Datatype *big);
void bdl_bc_dt_free(MPI_Datatype *big);
MPI_Count bdl_bc_size(MPI_Comm comm, int peers);
MPI_Count bdl_bc_degree(MPI_Comm comm, int out);
int bdl_bc_ints(const char *call, MPI_Comm comm, const char *what, const MPI_Count *a, MPI_Count n,
                int **out);
int bdl_bc_aints(const char *call, MPI_Comm comm, const char *what, const MPI_Aint *a, MPI_Count n,
                 int **out);
int bdl_bc_wide(const char *call, MPI_Comm comm, const MPI_Count *a, MPI_Count n, MPI_Aint **out);

/* bigcount_arr.c: the v and w collectives' _c forms with array entries past
 * INT_MAX (scripts/gen-bigcount.py --hooks); BDL_BC_THIN when every entry
 * fits (the caller's thin layer then runs), else the call's result. */
#define BDL_BC_THIN (-1)
int bdl_bcw_Gatherv(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                    int root, MPI_Comm comm);
int bdl_bcw_Scatterv(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                     MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                     MPI_Datatype recvtype, int root, MPI_Comm comm);
int bdl_bcw_Allgatherv(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                       void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                       MPI_Datatype recvtype, MPI_Comm comm);
int bdl_bcw_Alltoallv(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                      MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                      const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
int bdl_bcw_Alltoallw(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                      const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                      const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm);
int bdl_bcw_Reduce_scatter(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int bdl_bcw_Igatherv(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                     int root, MPI_Comm comm, MPI_Request *request);
int bdl_bcw_Iscatterv(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                      MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                      MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request);
int bdl_bcw_Iallgatherv(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int bdl_bcw_Ialltoallv(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                       MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                       const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                       MPI_Request *request);
int bdl_bcw_Ialltoallw(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                       const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                       const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                       MPI_Request *request);
int bdl_bcw_Ireduce_scatter(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request);
int bdl_bcw_Neighbor_allgatherv(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                void *recvbuf, const MPI_Count recvcounts[],
                                const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm);
int bdl_bcw_Neighbor_alltoallv(const void *sendbuf, const MPI_Count sendcounts[],
                               const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                               const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                               MPI_Datatype recvtype, MPI_Comm comm);
int bdl_bcw_Neighbor_alltoallw(const void *sendbuf, const MPI_Count sendcounts[],
                               const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                               void *recvbuf, const MPI_Count recvcounts[],
                               const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                               MPI_Comm comm);
int bdl_bcw_Ineighbor_allgatherv(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, const MPI_Count recvcounts[],
                                 const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                 MPI_Request *request);
int bdl_bcw_Ineighbor_alltoallv(const void *sendbuf, const MPI_Count sendcounts[],
                                const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int bdl_bcw_Ineighbor_alltoallw(const void *sendbuf, const MPI_Count sendcounts[],
                                const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                void *recvbuf, const MPI_Count recvcounts[],
                                const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                MPI_Comm comm, MPI_Request *request);

#endif
