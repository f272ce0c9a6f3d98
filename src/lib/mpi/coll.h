/* libbdmpi, top room: what the collective entry points share (coll_*.c,
 * intercomm_nbc.c, op.c): argument checks and the nonblocking
 * intercommunicator collectives. */
#ifndef BDL_COLL_H
#define BDL_COLL_H

#include "core.h"
#include "dt.h"
#include "nbc.h"

/* The start of a collective entry point: c is the communicator; a
 * nonblocking call (nb_req) needs a request. */
#define BDL_COLL_GET_COMM(call)                                                                    \
    BDL_CHECK_INIT(call);                                                                          \
    bdl_comm_t *c = bdl_comm_get(comm);                                                            \
    if (!c)                                                                                        \
        return bdl_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);               \
    bdl_p2p_revoke_check();                                                                        \
    if ((c = bdl_comm_get(comm))->revoked)                                                         \
        return bdl_comm_revoked_error(comm, call);                                                 \
    if (nb_req && !request)                                                                        \
        return bdl_error(comm, MPI_ERR_ARG, call, "NULL request argument");

/* The description's api field: which call, and whether it is nonblocking. */
static inline int bdl_coll_api(int api, const MPI_Request *request)
{
    return api | (request ? BD_API_NB : 0);
}

/* coll_check.c: checks that report their errors on comm for call. */
int bdl_coll_check_buf(MPI_Comm comm, const char *call, int count, MPI_Datatype dt, bdl_dt_t **t,
                       const char *what);
int bdl_coll_check_root(bdl_comm_t *c, MPI_Comm comm, const char *call, int root);
/* MPI forbids an output buffer to overlap an input buffer of the same call
 * (MPI 3.1 2.6.2); MPI_IN_PLACE is the way to share.  MPI_ERR_BUFFER when
 * count elements of st at sbuf and rcount elements of rt at rbuf overlap
 * (MPI_BOTTOM and empty buffers are never checked: absolute addresses). */
int bdl_coll_check_alias(MPI_Comm comm, const char *call, const void *sbuf, uint64_t scount,
                         const bdl_dt_t *st, const void *rbuf, uint64_t rcount, const bdl_dt_t *rt);
/* v-style counts and displacements of n ranks (what: "send ", "receive "). */
int bdl_coll_check_counts(MPI_Comm comm, const char *call, const int counts[], const int displs[],
                          int n, const char *what);
/* Reduce_scatter(_block): elements in all (total), before this rank's part
 * (myoff) and in it (mine), from the counts (or block for every rank). */
int bdl_coll_redscat_sizes(const bdl_comm_t *c, MPI_Comm comm, const char *call, const int counts[],
                           int block, uint64_t *total, uint64_t *myoff, uint64_t *mine);

/* coll_check.c: receive buffers in managed memory.  What a collective
 * will overwrite entirely loses its stored copy before anything is
 * written into it (whole sbpages only; resident ones stay, to be
 * overwritten in place), so it is never read back from storage only to be
 * overwritten: without it the first byte received into a non-resident
 * buffer loads the buffer (an AR allocation streams in whole).  Called
 * before the rank writes its own block and before it may block, so a
 * buffer unloaded meanwhile has nothing stored to read back either.  MPI
 * lets a collective write its receive buffer at any time before it
 * completes (MPI 3.1 5.12), so this is right for nonblocking calls too.
 * Non-contiguous types lose only their blocks of at least an sbpage. */
void bdl_coll_discard(void *buf, uint64_t count, const bdl_dt_t *t);
/* The ranges one call overwrites, gathered one buffer at a time: init
 * (returns 0 when there is nothing to do: no memory manager), add each
 * (count elements of t at buf), drop them all (ranges that touch are
 * merged first, so an sbpage across two blocks' boundary goes too). */
typedef struct bdl_ivl {
    uintptr_t lo, hi;
} bdl_ivl_t;
typedef struct bdl_ovw {
    bdl_ivl_t *v;
    size_t n, cap;
    uint64_t sb;
    bdl_ivl_t small[32];
} bdl_ovw_t;
int bdl_ovw_init(bdl_ovw_t *o);
void bdl_ovw_add(bdl_ovw_t *o, const void *buf, uint64_t count, const bdl_dt_t *t);
void bdl_ovw_drop(bdl_ovw_t *o);
/* The same for n blocks laid out as a v-style receive buffer (count,
 * counts and displs in extents of t; or, Alltoallw, per-block types tv and
 * byte displacements bdispls), block skip (-1: none) excepted; blocks that
 * touch are dropped as one range, so sbpages across their boundaries go
 * too, and gaps between blocks are kept. */
void bdl_coll_discard_blocks(void *buf, int n, int count, const int counts[], const int displs[],
                             const bdl_dt_t *t, bdl_dt_t *const *tv, const int bdispls[], int skip);

/* One side of a gather, scatter or all-to-all, in the all-to-all's three
 * forms: regular (counts NULL), v (counts and displacements in extents),
 * w (per-peer types, displacements in bytes). */
typedef struct bdl_a2a_side {
    const void *buf;
    int count;
    const int *counts, *displs;
    MPI_Datatype type;
    const MPI_Datatype *types; /* w: per peer */
    bdl_dt_t *t;
    bdl_dt_t **tv;
} bdl_a2a_side_t;

/* coll_gather.c: the v forms with a type per peer on the v side (byte
 * displacements; the large-count calls' entries past INT_MAX,
 * bigcount_arr.c); intracommunicators. */
int bdl_gatherv_typed(const char *call, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                      void *recvbuf, const int recvcounts[], const int bdispls[],
                      MPI_Datatype recvtype, const MPI_Datatype recvtypes[], int root,
                      MPI_Comm comm, int all, MPI_Request *request);
int bdl_scatterv_typed(const char *call, const void *sendbuf, const int sendcounts[],
                       const int bdispls[], MPI_Datatype sendtype, const MPI_Datatype sendtypes[],
                       void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                       MPI_Request *request);
/* coll_reduce.c: MPI_Ireduce_scatter with MPI_Count counts (some past
 * INT_MAX; intracommunicators). */
int bdl_ireduce_scatter_c(const char *call, const void *sendbuf, void *recvbuf,
                          const MPI_Count recvcounts[], MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                          MPI_Request *request);
int bdl_alltoall_typed(const char *call, int api, bdl_a2a_side_t *s, bdl_a2a_side_t *rv,
                       MPI_Comm comm, MPI_Request *request);

/* coll_local.c: collectives in the ranks (docs/design.md, "Collectives in
 * the ranks").  A blocking collective on c whose data is at most bytes per
 * rank runs there when bdl_lc_eligible says so, which depends only on
 * what every member shares (the communicator, the job's -nr, the size of
 * the data), so all members decide alike.  Above BDL_LC_MAX it says yes
 * only when every member holds a run slot at once (-nr >= size); the v
 * and w forms, whose sizes the members do not all know, ask with
 * UINT64_MAX.  The calls below count the
 * collective, check it against the other members' calls and report their
 * errors as the master path does; arguments are checked already. */
#define BDL_LC_MAX 16384 /* largest data per rank, in bytes */
int bdl_lc_eligible(const bdl_comm_t *c, uint64_t bytes);
/* Every member of c may hold a run slot at once (-nr >= size). */
int bdl_lc_all_run(const bdl_comm_t *c);
int bdl_lc_barrier(bdl_comm_t *c, MPI_Comm comm, const char *call);
/* coll_local_nb.c: the nonblocking Ibarrier, Ibcast, Ireduce, Iallreduce,
 * Iscan, Iexscan and the regular gathers, scatters and all-to-alls there,
 * when bdl_lcn_eligible says so for api (BD_API_*, the blocking form's;
 * alike on all members: at most 24 of them, 12 for those where all wait
 * for all unless every member runs, each message one mailbox entry).
 * Each makes *request. */
int bdl_lcn_eligible(const bdl_comm_t *c, uint64_t bytes, int api);
int bdl_lcn_barrier(bdl_comm_t *c, MPI_Comm comm, const char *call, MPI_Request *request);
int bdl_lcn_bcast(bdl_comm_t *c, MPI_Comm comm, const char *call, void *buf, uint64_t count,
                  bdl_dt_t *t, int root, MPI_Request *request);
int bdl_lcn_reduce(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *in, void *out,
                   uint64_t count, bdl_dt_t *t, const bdl_fold_op_t *o, int root, int all,
                   MPI_Request *request);
/* MPI_Iscan, MPI_Iexscan (exclusive): every rank's contribution goes to
 * the ranks above it at the call. */
int bdl_lcn_scan(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *in, void *out,
                 uint64_t count, bdl_dt_t *t, const bdl_fold_op_t *o, int exclusive,
                 MPI_Request *request);
/* MPI_Igather, MPI_Iscatter, MPI_Iallgather, MPI_Ialltoall (api; regular
 * forms only) after the caller has copied this rank's own block: s and rv
 * as for bdl_lc_blocks (t set, counts, displs and tv NULL); err as there. */
int bdl_lcn_blocks(bdl_comm_t *c, MPI_Comm comm, const char *call, int api, int root,
                   const bdl_a2a_side_t *s, const bdl_a2a_side_t *rv, int err,
                   MPI_Request *request);
int bdl_lc_bcast(bdl_comm_t *c, MPI_Comm comm, const char *call, int api, void *buf, uint64_t count,
                 const bdl_dt_t *t, int root);
/* In may be out (read before out is written).  A user op only up to
 * BDL_LC_MAX bytes. */
int bdl_lc_reduce(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *in, void *out,
                  uint64_t count, const bdl_dt_t *t, const bdl_fold_op_t *o, int root, int all);
/* MPI_Scan, MPI_Exscan (exclusive) where bdl_lc_scan_eligible; in may be
 * out.  Exscan leaves rank 0's out alone. */
int bdl_lc_scan_eligible(const bdl_comm_t *c, uint64_t bytes);
int bdl_lc_scan(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *in, void *out,
                uint64_t count, const bdl_dt_t *t, const bdl_fold_op_t *o, int exclusive);
/* Gather, Allgather, Scatter, Alltoall and their v and w forms (api,
 * root 0 for those without one) after the caller has copied this rank's
 * own block.  s and rv describe the send and receive buffers; a side
 * with a block per rank (the send side of Scatter and Alltoall, the
 * receive side of Gather, Allgather and Alltoall) is read as such (t and
 * tv set, counts and displs NULL when regular), the other side's block is
 * its buf, count and t.  Alltoall in place: s->buf is rv->buf.  err: the
 * caller's own block did not fit (MPI_ERR_TRUNCATE, reported at the end). */
int bdl_lc_blocks(bdl_comm_t *c, MPI_Comm comm, const char *call, int api, int root,
                  const bdl_a2a_side_t *s, const bdl_a2a_side_t *rv, int err);
/* Reduce_scatter (counts) and Reduce_scatter_block (block >= 0) with a
 * predefined op; in may be out.  Only where bdl_lc_eligible(c, UINT64_MAX). */
int bdl_lc_redscat(bdl_comm_t *c, MPI_Comm comm, const char *call, int api, const void *in,
                   void *out, const int counts[], int block, const bdl_dt_t *t, MPI_Op op);

/* intercomm_nbc.c: nonblocking collectives on intercommunicators (c is
 * valid, c->inter is set, request is not NULL). */
int bdl_ic_barrier(bdl_comm_t *c, const char *call, MPI_Request *request);
int bdl_ic_bcast(bdl_comm_t *c, MPI_Comm comm, const char *call, void *buf, int count,
                 MPI_Datatype dt, int root, MPI_Request *request);
/* tv (not NULL): a type per remote rank on the v side, displs in bytes
 * (the large-count calls' entries past INT_MAX, bigcount_arr.c). */
int bdl_ic_gather(bdl_comm_t *c, MPI_Comm comm, const char *call, int api, const void *sendbuf,
                  int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  const int *recvcounts, const int *displs, MPI_Datatype recvtype,
                  bdl_dt_t *const *tv, int root, int all, MPI_Request *request);
int bdl_ic_scatter(bdl_comm_t *c, MPI_Comm comm, const char *call, int api, const void *sendbuf,
                   int sendcount, const int *sendcounts, const int *displs, MPI_Datatype sendtype,
                   bdl_dt_t *const *tv, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                   int root, MPI_Request *request);
int bdl_ic_alltoall(bdl_comm_t *c, MPI_Comm comm, const char *call, int api, bdl_a2a_side_t *s,
                    bdl_a2a_side_t *rv, int vector, MPI_Request *request);
int bdl_ic_reduce(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *sendbuf,
                  void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root, int all,
                  MPI_Request *request);
/* counts, lcounts (MPI_Ireduce_scatter_c's) or block for every rank. */
int bdl_ic_redscat(bdl_comm_t *c, MPI_Comm comm, const char *call, int api, const void *sendbuf,
                   void *recvbuf, const int *counts, const MPI_Count *lcounts, int block,
                   MPI_Datatype dt, MPI_Op op, MPI_Request *request);

#endif
