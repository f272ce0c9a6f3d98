/* Intercommunicator collectives (MPI 3.1 section 5.2.2); intercommunicators
 * are made in objects/intercomm_create.c.
 *
 * An intercommunicator is an entry of the communicator table whose rank,
 * size and world list describe the local group and whose rworld lists the
 * remote group.  Point-to-point on it needs nothing from the master: a
 * sender addresses a world rank of the remote group and stamps its local
 * rank, which is exactly the source rank the receiver names.  Its context
 * is derived from the two groups' hidden local communicators (see
 * BDL_CTX_INTER), so both groups agree on it without another round trip.
 *
 * Collectives run on the hidden local intracommunicator (c->local) plus
 * point-to-point between the groups on the intercommunicator's internal
 * context, which user messages can never match.  They are written for
 * correctness over speed: a program's intercommunicator collectives are
 * rarely its hot path, and every step here is an ordinary blocking call the
 * master schedules like any other.
 *
 * Every intercommunicator also has a hidden intracommunicator of both
 * groups, its union (c->ucomm), registered with the masters by its members
 * under a derived context: the nonblocking collectives run on it as single
 * instances the master progresses (coll.c), and MPI_Comm_idup splits it.
 * An intercommunicator made by MPI_Comm_(i)dup takes its contexts from the
 * new union: the union's context | BDL_CTX_INTER for point-to-point, and a
 * derived context for each group's hidden local communicator. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "dt.h"
#include "mpi_int.h"
#include "nbc.h"
#include "objects.h"
#include "request.h"

/* Tags on the internal context; each collective pairs its own messages in
 * call order, so distinct tags are for readability of deadlock reports. */
enum {
    T_BARRIER = 1,
    T_BCAST,
    T_REDUCE,
    T_ALLREDUCE,
    T_GATHER,
    T_SCATTER,
    T_ALLGATHER,
    T_ALLTOALL,
    T_REDSCAT,
    T_MERGE, /* 10 and 11: intercommunicator creation's (objects/intercomm_create.c) */
    T_SPLIT,
    T_ALLTOALLW,
};

/* The hidden local communicator, reporting errors as the intercommunicator does. */
static MPI_Comm local_of(const bdl_comm_t *c)
{
    bdl_g.comms[c->local].errh = c->errh;
    return c->local;
}

static char *at(const void *buf, int64_t off) { return (char *)((intptr_t)buf + (intptr_t)off); }

/* Room for count elements of t; *base is what to pass as the buffer. */
static void *tmp_alloc(const bdl_dt_t *t, uint64_t count, void **base)
{
    uint64_t span = count ? (count - 1) * (uint64_t)t->extent + (uint64_t)t->true_extent : 0;
    char *p = malloc(span ? span : 1);
    *base = p ? p - t->true_lb : NULL;
    return p;
}

static int check_count(MPI_Comm comm, const char *call, int count, MPI_Datatype dt, bdl_dt_t **t,
                       const char *what)
{
    if (count < 0)
        return bdl_error(comm, MPI_ERR_COUNT, call, "invalid %s%scount %d", what, *what ? " " : "",
                         count);
    return bdl_dt_check(comm, call, what, dt, t);
}

/* root is MPI_ROOT (the caller is the root), MPI_PROC_NULL (the caller is
 * in the root's group but not the root) or the root's rank in the remote group. */
static int check_iroot(const bdl_comm_t *c, MPI_Comm comm, const char *call, int root)
{
    if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < c->rsize))
        return MPI_SUCCESS;
    return bdl_error(comm, MPI_ERR_ROOT, call,
                     "invalid root %d on an intercommunicator (MPI_ROOT, MPI_PROC_NULL or a rank "
                     "of the remote group of size %d)",
                     root, c->rsize);
}

static int no_mem(MPI_Comm comm, const char *call)
{
    return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
}

/* ---------------------------------------------------------------- collectives */

/* No rank leaves before every rank of both groups has entered: each group
 * gathers at its leader, the leaders swap a message, the groups are released. */
int bdl_inter_barrier(bdl_comm_t *c, MPI_Comm comm)
{
    int rc = MPI_Barrier(local_of(c));
    if (rc)
        return rc;
    if (c->rank == 0) {
        bdl_inter_send_to(c, 0, T_BARRIER, NULL, 0, bdl_dt_byte());
        if ((rc =
                 bdl_inter_recv_from(comm, "MPI_Barrier", c, 0, T_BARRIER, NULL, 0, bdl_dt_byte())))
            return rc;
    }
    return MPI_Barrier(local_of(c));
}

int bdl_inter_bcast(bdl_comm_t *c, MPI_Comm comm, void *buf, int count, MPI_Datatype dt, int root)
{
    const char *call = "MPI_Bcast";
    bdl_dt_t *t;
    int rc;
    if ((rc = check_count(comm, call, count, dt, &t, "")) ||
        (rc = check_iroot(c, comm, call, root)))
        return rc;
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (root == MPI_ROOT)
        return bdl_inter_send_to(c, 0, T_BCAST, buf, (uint64_t)count, t);
    if (c->rank == 0 &&
        (rc = bdl_inter_recv_from(comm, call, c, root, T_BCAST, buf, (uint64_t)count, t)))
        return rc;
    return MPI_Bcast(buf, count, dt, 0, local_of(c));
}

/* The reduction of the local group's sendbufs, at local rank 0 in *acc
 * (allocated there; *mem is what to free). */
static int reduce_local(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *sendbuf,
                        MPI_Count count, MPI_Datatype dt, const bdl_dt_t *t, MPI_Op op, void **acc,
                        void **mem)
{
    *mem = NULL;
    *acc = NULL;
    if (sendbuf == MPI_IN_PLACE)
        return bdl_error(comm, MPI_ERR_BUFFER, call,
                         "MPI_IN_PLACE is not allowed on an "
                         "intercommunicator");
    if (c->rank == 0 && !(*mem = tmp_alloc(t, (uint64_t)count, acc)))
        return no_mem(comm, call);
    /* the _c form: Reduce_scatter's vector may pass INT_MAX elements */
    int rc = count <= INT_MAX ? MPI_Reduce(sendbuf, *acc, (int)count, dt, op, 0, local_of(c))
                              : MPI_Reduce_c(sendbuf, *acc, count, dt, op, 0, local_of(c));
    if (rc) {
        free(*mem);
        *mem = NULL;
    }
    return rc;
}

int bdl_inter_reduce(bdl_comm_t *c, MPI_Comm comm, const void *sendbuf, void *recvbuf, int count,
                     MPI_Datatype dt, MPI_Op op, int root)
{
    const char *call = "MPI_Reduce";
    bdl_dt_t *t;
    int rc;
    if ((rc = check_count(comm, call, count, dt, &t, "")) ||
        (rc = check_iroot(c, comm, call, root)))
        return rc;
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (root == MPI_ROOT)
        return bdl_inter_recv_from(comm, call, c, 0, T_REDUCE, recvbuf, (uint64_t)count, t);
    void *acc, *mem;
    if ((rc = reduce_local(c, comm, call, sendbuf, count, dt, t, op, &acc, &mem)))
        return rc;
    if (c->rank == 0)
        bdl_inter_send_to(c, root, T_REDUCE, acc, (uint64_t)count, t);
    free(mem);
    return MPI_SUCCESS;
}

/* Each group receives the reduction of the other group's data. */
int bdl_inter_allreduce(bdl_comm_t *c, MPI_Comm comm, const void *sendbuf, void *recvbuf, int count,
                        MPI_Datatype dt, MPI_Op op)
{
    const char *call = "MPI_Allreduce";
    bdl_dt_t *t;
    int rc;
    if ((rc = check_count(comm, call, count, dt, &t, "")))
        return rc;
    void *acc, *mem;
    if ((rc = reduce_local(c, comm, call, sendbuf, count, dt, t, op, &acc, &mem)))
        return rc;
    if (c->rank == 0) {
        bdl_inter_send_to(c, 0, T_ALLREDUCE, acc, (uint64_t)count, t);
        free(mem);
        if ((rc = bdl_inter_recv_from(comm, call, c, 0, T_ALLREDUCE, recvbuf, (uint64_t)count, t)))
            return rc;
    }
    return MPI_Bcast(recvbuf, count, dt, 0, local_of(c));
}

/* Reduce_scatter and Reduce_scatter_block: the reduction of one group's
 * vectors (n elements, the sum of the counts, equal in both groups) is
 * scattered over the other group by that group's counts.  The counts are
 * ints (counts), MPI_Counts (lcounts: MPI_Reduce_scatter_c with an entry
 * past INT_MAX) or block for every rank.  Sizes are 64-bit throughout: one
 * group's counts may all fit an int while their sum, which the other
 * group's MPI_Count entries share, does not. */
int bdl_inter_reduce_scatter(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *sendbuf,
                             void *recvbuf, const int *counts, const MPI_Count *lcounts, int block,
                             MPI_Datatype dt, MPI_Op op)
{
    bdl_dt_t *t;
    int rc;
    if ((rc = bdl_dt_check(comm, call, "", dt, &t)))
        return rc;
    if (block < 0 && !counts && !lcounts)
        return bdl_error(comm, MPI_ERR_ARG, call, "recvcounts is NULL");
    MPI_Count n = 0;
    MPI_Count *cnt = malloc((size_t)c->size * sizeof *cnt);
    MPI_Aint *displs = malloc((size_t)c->size * sizeof *displs);
    if (!cnt || !displs) {
        free(cnt);
        free(displs);
        return no_mem(comm, call);
    }
    for (int r = 0; r < c->size; r++) {
        MPI_Count k = block >= 0 ? block : counts ? counts[r] : lcounts[r];
        if (k < 0) {
            free(cnt);
            free(displs);
            return bdl_error(comm, MPI_ERR_COUNT, call, "invalid count %lld for rank %d",
                             (long long)k, r);
        }
        cnt[r] = k;
        displs[r] = (MPI_Aint)n;
        n += k;
    }
    void *acc, *mem, *res = NULL, *rmem = NULL;
    if ((rc = reduce_local(c, comm, call, sendbuf, n, dt, t, op, &acc, &mem)))
        goto out;
    if (c->rank == 0) {
        bdl_inter_send_to(c, 0, T_REDSCAT, acc, (uint64_t)n, t);
        free(mem);
        if (!(rmem = tmp_alloc(t, (uint64_t)n, &res))) {
            rc = no_mem(comm, call);
            goto out;
        }
        if ((rc = bdl_inter_recv_from(comm, call, c, 0, T_REDSCAT, res, (uint64_t)n, t)))
            goto out;
    }
    if (block >= 0)
        rc = MPI_Scatter(res, block, dt, recvbuf, block, dt, 0, local_of(c));
    else
        rc = MPI_Scatterv_c(res, cnt, displs, dt, recvbuf, cnt[c->rank], dt, 0, local_of(c));
out:
    free(rmem);
    free(cnt);
    free(displs);
    return rc;
}

/* Block r of a v side: with per-peer types tv (bigcount_arr.c) displs are
 * in bytes, else in extents of t (NULL: r * count). */
static char *vblk(const void *buf, const int *displs, int count, int r, const bdl_dt_t *t,
                  bdl_dt_t *const *tv)
{
    if (tv)
        return at(buf, displs[r]);
    return at(buf, (displs ? (int64_t)displs[r] : (int64_t)r * count) * t->extent);
}

/* Gather and Gatherv: the root receives one piece from every remote rank. */
int bdl_inter_gather(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *sendbuf,
                     int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                     const int *recvcounts, const int *displs, MPI_Datatype recvtype,
                     bdl_dt_t *const *tv, int root)
{
    int rc;
    if ((rc = check_iroot(c, comm, call, root)))
        return rc;
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    bdl_dt_t *t;
    if (root != MPI_ROOT) {
        if ((rc = check_count(comm, call, sendcount, sendtype, &t, "send")))
            return rc;
        return bdl_send_typed(bdl_comm_ictx(c), c->rworld[root], c->rank, T_GATHER, sendbuf,
                              (uint64_t)sendcount, t, 0, NULL);
    }
    if ((rc = recvcounts ? bdl_dt_check(comm, call, "receive", recvtype, &t)
                         : check_count(comm, call, recvcount, recvtype, &t, "receive")))
        return rc;
    if (recvcounts && !displs)
        return bdl_error(comm, MPI_ERR_ARG, call, "recvcounts or displs is NULL");
    for (int r = 0; r < c->rsize; r++) {
        int k = recvcounts ? recvcounts[r] : recvcount;
        if (k < 0)
            return bdl_error(comm, MPI_ERR_COUNT, call, "invalid receive count %d for rank %d", k,
                             r);
        if ((rc =
                 bdl_inter_recv_from(comm, call, c, r, T_GATHER,
                                     vblk(recvbuf, recvcounts ? displs : NULL, recvcount, r, t, tv),
                                     (uint64_t)k, tv ? tv[r] : t)))
            return rc;
    }
    return MPI_SUCCESS;
}

/* Scatter and Scatterv: the root sends one piece to every remote rank. */
int bdl_inter_scatter(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *sendbuf,
                      int sendcount, const int *sendcounts, const int *displs,
                      MPI_Datatype sendtype, bdl_dt_t *const *tv, void *recvbuf, int recvcount,
                      MPI_Datatype recvtype, int root)
{
    int rc;
    if ((rc = check_iroot(c, comm, call, root)))
        return rc;
    if (root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    bdl_dt_t *t;
    if (root != MPI_ROOT) {
        if ((rc = check_count(comm, call, recvcount, recvtype, &t, "receive")))
            return rc;
        return bdl_inter_recv_from(comm, call, c, root, T_SCATTER, recvbuf, (uint64_t)recvcount, t);
    }
    if ((rc = sendcounts ? bdl_dt_check(comm, call, "send", sendtype, &t)
                         : check_count(comm, call, sendcount, sendtype, &t, "send")))
        return rc;
    if (sendcounts && !displs)
        return bdl_error(comm, MPI_ERR_ARG, call, "sendcounts or displs is NULL");
    for (int r = 0; r < c->rsize; r++) {
        int k = sendcounts ? sendcounts[r] : sendcount;
        if (k < 0)
            return bdl_error(comm, MPI_ERR_COUNT, call, "invalid send count %d for rank %d", k, r);
        bdl_inter_send_to(c, r, T_SCATTER,
                          vblk(sendbuf, sendcounts ? displs : NULL, sendcount, r, t, tv),
                          (uint64_t)k, tv ? tv[r] : t);
    }
    return MPI_SUCCESS;
}

/* Allgather(v) and Alltoall(v): every rank sends to every remote rank, then
 * receives from each.  Sends are buffered, so the order cannot deadlock.
 * Allgather sends all of sendbuf to everyone; Alltoall sends piece r to
 * remote rank r (at sdispls[r] with sendcounts, else at r * sendcount). */
static int exchange(bdl_comm_t *c, MPI_Comm comm, const char *call, int tag, const void *sendbuf,
                    int sendcount, const int *sendcounts, const int *sdispls, MPI_Datatype sendtype,
                    void *recvbuf, int recvcount, const int *recvcounts, const int *rdispls,
                    MPI_Datatype recvtype, bdl_dt_t *const *rtv)
{
    bdl_dt_t *st, *rt;
    int rc;
    if (sendbuf == MPI_IN_PLACE)
        return bdl_error(comm, MPI_ERR_BUFFER, call,
                         "MPI_IN_PLACE is not allowed on an intercommunicator");
    if ((rc = bdl_dt_check(comm, call, "send", sendtype, &st)) ||
        (rc = bdl_dt_check(comm, call, "receive", recvtype, &rt)))
        return rc;
    if ((sendcounts && !sdispls) || (recvcounts && !rdispls))
        return bdl_error(comm, MPI_ERR_ARG, call, "a count or displacement array is NULL");
    for (int r = 0; r < c->rsize; r++) {
        int k = sendcounts ? sendcounts[r] : sendcount;
        if (k < 0 || (recvcounts ? recvcounts[r] : recvcount) < 0)
            return bdl_error(comm, MPI_ERR_COUNT, call, "negative count for remote rank %d", r);
    }
    for (int r = 0; r < c->rsize; r++) {
        int k = sendcounts ? sendcounts[r] : sendcount;
        int64_t off = sendcounts          ? (int64_t)sdispls[r] * st->extent
                      : tag == T_ALLTOALL ? (int64_t)r * sendcount * st->extent
                                          : 0;
        bdl_inter_send_to(c, r, tag, at(sendbuf, off), (uint64_t)k, st);
    }
    for (int r = 0; r < c->rsize; r++) {
        int k = recvcounts ? recvcounts[r] : recvcount;
        if ((rc = bdl_inter_recv_from(
                 comm, call, c, r, tag,
                 vblk(recvbuf, recvcounts ? rdispls : NULL, recvcount, r, rt, rtv), (uint64_t)k,
                 rtv ? rtv[r] : rt)))
            return rc;
    }
    return MPI_SUCCESS;
}

int bdl_inter_allgather(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *sendbuf,
                        int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        const int *recvcounts, const int *displs, MPI_Datatype recvtype,
                        bdl_dt_t *const *tv)
{
    if (sendcount < 0)
        return bdl_error(comm, MPI_ERR_COUNT, call, "invalid send count %d", sendcount);
    return exchange(c, comm, call, T_ALLGATHER, sendbuf, sendcount, NULL, NULL, sendtype, recvbuf,
                    recvcount, recvcounts, displs, recvtype, tv);
}

int bdl_inter_alltoall(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *sendbuf,
                       int sendcount, const int *sendcounts, const int *sdispls,
                       MPI_Datatype sendtype, void *recvbuf, int recvcount, const int *recvcounts,
                       const int *rdispls, MPI_Datatype recvtype)
{
    return exchange(c, comm, call, T_ALLTOALL, sendbuf, sendcount, sendcounts, sdispls, sendtype,
                    recvbuf, recvcount, recvcounts, rdispls, recvtype, NULL);
}

/* Alltoallw: block r (sendcounts[r] elements of sendtypes[r] at sdispls[r]
 * bytes) to remote rank r; from it, block r of recvbuf alike.  Also
 * MPI_Alltoallv_c's blocks past INT_MAX as types per peer (v: 1), which
 * must pair with the plain Alltoallv of ranks whose entries all fit. */
int bdl_inter_alltoallw(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *sendbuf,
                        const int *sendcounts, const int *sdispls, const MPI_Datatype *sendtypes,
                        void *recvbuf, const int *recvcounts, const int *rdispls,
                        const MPI_Datatype *recvtypes, int v)
{
    int tag = v ? T_ALLTOALL : T_ALLTOALLW;
    if (sendbuf == MPI_IN_PLACE)
        return bdl_error(comm, MPI_ERR_BUFFER, call,
                         "MPI_IN_PLACE is not allowed on an intercommunicator");
    if (!sendcounts || !sdispls || !sendtypes || !recvcounts || !rdispls || !recvtypes)
        return bdl_error(comm, MPI_ERR_ARG, call, "a count, displacement or type array is NULL");
    int n = c->rsize, rc = MPI_SUCCESS;
    bdl_dt_t **st = malloc((size_t)n * sizeof *st), **rt = malloc((size_t)n * sizeof *rt);
    if (!st || !rt) {
        free(st);
        free(rt);
        return no_mem(comm, call);
    }
    for (int r = 0; r < n && !rc; r++) {
        if (sendcounts[r] < 0 || recvcounts[r] < 0)
            rc = bdl_error(comm, MPI_ERR_COUNT, call, "negative count for remote rank %d", r);
        else if (!(rc = bdl_dt_check(comm, call, "send", sendtypes[r], &st[r])))
            rc = bdl_dt_check(comm, call, "receive", recvtypes[r], &rt[r]);
    }
    for (int r = 0; r < n && !rc; r++)
        bdl_inter_send_to(c, r, tag, at(sendbuf, sdispls[r]), (uint64_t)sendcounts[r], st[r]);
    for (int r = 0; r < n && !rc; r++)
        rc = bdl_inter_recv_from(comm, call, c, r, tag, at(recvbuf, rdispls[r]),
                                 (uint64_t)recvcounts[r], rt[r]);
    free(st);
    free(rt);
    return rc;
}
