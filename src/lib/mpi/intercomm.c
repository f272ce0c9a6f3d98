/* Intercommunicators (MPI 3.1 sections 6.6 and 5.2.2).
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
    T_MERGE,
    T_SPLIT,
    T_ALLTOALLW,
};

static int ictx(const bdl_comm_t *c) { return c->ctx | BDL_CTX_INTERNAL; }

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

static int send_to(const bdl_comm_t *c, int remote, int tag, const void *buf, uint64_t count,
                   const bdl_dt_t *t)
{
    return bdl_send_typed(ictx(c), c->rworld[remote], c->rank, tag, buf, count, t, 0, NULL);
}

static int recv_from(MPI_Comm comm, const char *call, const bdl_comm_t *c, int remote, int tag,
                     void *buf, uint64_t count, const bdl_dt_t *t)
{
    int rc = bdl_recv_typed(ictx(c), remote, tag, buf, count, t, MPI_STATUS_IGNORE);
    if (rc)
        return bdl_error(comm, rc, call,
                         "%llu bytes from remote rank %d truncated to the %llu-byte receive buffer",
                         (unsigned long long)bdl_resp()->nbytes, remote,
                         (unsigned long long)(count * t->psize));
    return MPI_SUCCESS;
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
        send_to(c, 0, T_BARRIER, NULL, 0, bdl_dt_byte());
        if ((rc = recv_from(comm, "MPI_Barrier", c, 0, T_BARRIER, NULL, 0, bdl_dt_byte())))
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
        return send_to(c, 0, T_BCAST, buf, (uint64_t)count, t);
    if (c->rank == 0 && (rc = recv_from(comm, call, c, root, T_BCAST, buf, (uint64_t)count, t)))
        return rc;
    return MPI_Bcast(buf, count, dt, 0, local_of(c));
}

/* The reduction of the local group's sendbufs, at local rank 0 in *acc
 * (allocated there; *mem is what to free). */
static int reduce_local(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *sendbuf,
                        int count, MPI_Datatype dt, const bdl_dt_t *t, MPI_Op op, void **acc,
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
    int rc = MPI_Reduce(sendbuf, *acc, count, dt, op, 0, local_of(c));
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
        return recv_from(comm, call, c, 0, T_REDUCE, recvbuf, (uint64_t)count, t);
    void *acc, *mem;
    if ((rc = reduce_local(c, comm, call, sendbuf, count, dt, t, op, &acc, &mem)))
        return rc;
    if (c->rank == 0)
        send_to(c, root, T_REDUCE, acc, (uint64_t)count, t);
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
        send_to(c, 0, T_ALLREDUCE, acc, (uint64_t)count, t);
        free(mem);
        if ((rc = recv_from(comm, call, c, 0, T_ALLREDUCE, recvbuf, (uint64_t)count, t)))
            return rc;
    }
    return MPI_Bcast(recvbuf, count, dt, 0, local_of(c));
}

/* Reduce_scatter and Reduce_scatter_block: the reduction of one group's
 * vectors (n elements, the sum of the counts, equal in both groups) is
 * scattered over the other group by that group's counts. */
int bdl_inter_reduce_scatter(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *sendbuf,
                             void *recvbuf, const int *counts, int block, MPI_Datatype dt,
                             MPI_Op op)
{
    bdl_dt_t *t;
    int rc;
    if ((rc = bdl_dt_check(comm, call, "", dt, &t)))
        return rc;
    if (block < 0 && !counts)
        return bdl_error(comm, MPI_ERR_ARG, call, "recvcounts is NULL");
    int64_t n = 0;
    for (int r = 0; r < c->size; r++) {
        int k = block >= 0 ? block : counts[r];
        if (k < 0)
            return bdl_error(comm, MPI_ERR_COUNT, call, "invalid count %d for rank %d", k, r);
        n += k;
    }
    if (n > INT32_MAX)
        return bdl_error(comm, MPI_ERR_COUNT, call, "%lld elements in all is too many",
                         (long long)n);
    void *acc, *mem;
    if ((rc = reduce_local(c, comm, call, sendbuf, (int)n, dt, t, op, &acc, &mem)))
        return rc;
    void *res = NULL, *rmem = NULL;
    if (c->rank == 0) {
        send_to(c, 0, T_REDSCAT, acc, (uint64_t)n, t);
        free(mem);
        if (!(rmem = tmp_alloc(t, (uint64_t)n, &res)))
            return no_mem(comm, call);
        if ((rc = recv_from(comm, call, c, 0, T_REDSCAT, res, (uint64_t)n, t))) {
            free(rmem);
            return rc;
        }
    }
    if (block >= 0)
        rc = MPI_Scatter(res, block, dt, recvbuf, block, dt, 0, local_of(c));
    else {
        int *displs = malloc((size_t)c->size * sizeof(int));
        if (!displs) {
            free(rmem);
            return no_mem(comm, call);
        }
        for (int r = 0, d = 0; r < c->size; d += counts[r], r++)
            displs[r] = d;
        rc = MPI_Scatterv(res, counts, displs, dt, recvbuf, counts[c->rank], dt, 0, local_of(c));
        free(displs);
    }
    free(rmem);
    return rc;
}

/* Gather and Gatherv: the root receives one piece from every remote rank. */
int bdl_inter_gather(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *sendbuf,
                     int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                     const int *recvcounts, const int *displs, MPI_Datatype recvtype, int root)
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
        return bdl_send_typed(ictx(c), c->rworld[root], c->rank, T_GATHER, sendbuf,
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
        int64_t off = (int64_t)(recvcounts ? displs[r] : (int64_t)r * recvcount) * t->extent;
        if ((rc = recv_from(comm, call, c, r, T_GATHER, at(recvbuf, off), (uint64_t)k, t)))
            return rc;
    }
    return MPI_SUCCESS;
}

/* Scatter and Scatterv: the root sends one piece to every remote rank. */
int bdl_inter_scatter(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *sendbuf,
                      int sendcount, const int *sendcounts, const int *displs,
                      MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                      int root)
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
        return recv_from(comm, call, c, root, T_SCATTER, recvbuf, (uint64_t)recvcount, t);
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
        int64_t off = (int64_t)(sendcounts ? displs[r] : (int64_t)r * sendcount) * t->extent;
        send_to(c, r, T_SCATTER, at(sendbuf, off), (uint64_t)k, t);
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
                    MPI_Datatype recvtype)
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
        send_to(c, r, tag, at(sendbuf, off), (uint64_t)k, st);
    }
    for (int r = 0; r < c->rsize; r++) {
        int k = recvcounts ? recvcounts[r] : recvcount;
        int64_t off = (recvcounts ? (int64_t)rdispls[r] : (int64_t)r * recvcount) * rt->extent;
        if ((rc = recv_from(comm, call, c, r, tag, at(recvbuf, off), (uint64_t)k, rt)))
            return rc;
    }
    return MPI_SUCCESS;
}

int bdl_inter_allgather(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *sendbuf,
                        int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        const int *recvcounts, const int *displs, MPI_Datatype recvtype)
{
    if (sendcount < 0)
        return bdl_error(comm, MPI_ERR_COUNT, call, "invalid send count %d", sendcount);
    return exchange(c, comm, call, T_ALLGATHER, sendbuf, sendcount, NULL, NULL, sendtype, recvbuf,
                    recvcount, recvcounts, displs, recvtype);
}

int bdl_inter_alltoall(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *sendbuf,
                       int sendcount, const int *sendcounts, const int *sdispls,
                       MPI_Datatype sendtype, void *recvbuf, int recvcount, const int *recvcounts,
                       const int *rdispls, MPI_Datatype recvtype)
{
    return exchange(c, comm, call, T_ALLTOALL, sendbuf, sendcount, sendcounts, sdispls, sendtype,
                    recvbuf, recvcount, recvcounts, rdispls, recvtype);
}

/* Alltoallw: block r (sendcounts[r] elements of sendtypes[r] at sdispls[r]
 * bytes) to remote rank r; from it, block r of recvbuf alike. */
int bdl_inter_alltoallw(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *sendbuf,
                        const int *sendcounts, const int *sdispls, const MPI_Datatype *sendtypes,
                        void *recvbuf, const int *recvcounts, const int *rdispls,
                        const MPI_Datatype *recvtypes)
{
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
        send_to(c, r, T_ALLTOALLW, at(sendbuf, sdispls[r]), (uint64_t)sendcounts[r], st[r]);
    for (int r = 0; r < n && !rc; r++)
        rc = recv_from(comm, call, c, r, T_ALLTOALLW, at(recvbuf, rdispls[r]),
                       (uint64_t)recvcounts[r], rt[r]);
    free(st);
    free(rt);
    return rc;
}

/* ---------------------------------------------------------------- creation */

/* The union of an intercommunicator's groups, the group first whose hidden
 * communicator has the smaller context (both sides agree on it): a hidden
 * intracommunicator of the world ranks the two groups' lists give, with
 * context ctx, registered with the master by each member (none of its
 * members talks to a master before it registers).  Sets c's ucomm, uoff
 * and roff; -1 out of memory or when the list does not fit the window. */
static int union_add(MPI_Comm inter, int ctx, int local_first)
{
    bdl_comm_t *c = &bdl_g.comms[inter];
    int n = c->size + c->rsize;
    int *uw = malloc((size_t)n * sizeof(int));
    if (!uw)
        return -1;
    int uoff = local_first ? 0 : c->rsize, roff = local_first ? c->size : 0;
    memcpy(uw + uoff, c->world, (size_t)c->size * sizeof(int));
    memcpy(uw + roff, c->rworld, (size_t)c->rsize * sizeof(int));
    int urank = uoff + c->rank;
    if (bdl_comm_register(ctx, uw, n) < 0) {
        free(uw);
        return -1;
    }
    int u = bdl_comm_add(ctx, urank, n, uw, c->errh);
    if (u < 0) {
        bd_req_t *r = bdl_req_begin(BD_REQ_COMM_FREE);
        r->ctx = ctx;
        bdl_rpc();
        free(uw);
        return -1;
    }
    c = &bdl_g.comms[inter];
    c->ucomm = u;
    c->uoff = uoff;
    c->roff = roff;
    return 0;
}

/* The entry for a new intercommunicator over the local group of hidden
 * (which it takes over) and the remote group rworld[rsize] (taken over),
 * whose own hidden communicator has context rctx; with its union. */
static int inter_add(MPI_Comm hidden, int rctx, int rsize, int *rworld, MPI_Errhandler errh,
                     MPI_Comm *out)
{
    bdl_comm_t *h = &bdl_g.comms[hidden];
    int *lw = malloc((size_t)h->size * sizeof(int));
    if (!lw)
        return -1;
    memcpy(lw, h->world, (size_t)h->size * sizeof(int));
    int local_first = h->ctx < rctx;
    int base = local_first ? h->ctx : rctx;
    int n = bdl_comm_add(base | BDL_CTX_INTER, h->rank, h->size, lw, errh);
    if (n < 0) {
        free(lw);
        return -1;
    }
    bdl_comm_t *c = &bdl_g.comms[n];
    c->inter = 1;
    c->rsize = rsize;
    c->rworld = rworld;
    c->local = hidden;
    if (union_add(n, base | BDL_CTX_INTER | BD_CTX_DERIVED, local_first) < 0) {
        c = &bdl_g.comms[n];
        free(c->world);
        memset(c, 0, sizeof *c);
        return -1;
    }
    bdl_g.comms[hidden].errh = errh;
    *out = n;
    return 0;
}

void bdl_inter_idup_done(MPI_Comm h, int ctx, int urank, int un, int *uworld)
{
    bdl_comm_t *c = &bdl_g.comms[h];
    int u = bdl_comm_add(ctx, urank, un, uworld, c->errh);
    c = &bdl_g.comms[h];
    int *lw = malloc((size_t)c->size * sizeof(int));
    if (u < 0 || !lw)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory completing MPI_Comm_idup");
    memcpy(lw, c->world, (size_t)c->size * sizeof(int));
    /* The new local group: derived from the new union's context, told
     * apart from the other group's by the group's place in the union. */
    int lctx = ctx | BD_CTX_DERIVED | (c->uoff ? BDL_CTX_GROUP1 : 0);
    if (c->size > 1 && bdl_comm_register(lctx, lw, c->size) < 0)
        bdl_fatal(MPI_ERR_OTHER, "MPI_Comm_idup: a group of %d ranks does not fit the window",
                  c->size);
    int l = bdl_comm_add(lctx, c->rank, c->size, lw, c->errh);
    if (l < 0)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory completing MPI_Comm_idup");
    c = &bdl_g.comms[h];
    c->ctx = ctx | BDL_CTX_INTER;
    c->local = l;
    c->ucomm = u;
    c->pending = 0;
}

static void hidden_free(MPI_Comm h)
{
    MPI_Comm x = h;
    MPI_Comm_free(&x);
}

int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                         int remote_leader, int tag, MPI_Comm *newintercomm)
{
    const char *call = "MPI_Intercomm_create";
    BDL_CHECK_INIT(call);
    bdl_comm_t *lc = bdl_comm_get(local_comm);
    if (!lc)
        return bdl_error(local_comm, MPI_ERR_COMM, call, "invalid local_comm %d", local_comm);
    if (lc->inter)
        return bdl_error(local_comm, MPI_ERR_COMM, call,
                         "local_comm %d is an intercommunicator (must be an intracommunicator)",
                         local_comm);
    if (local_leader < 0 || local_leader >= lc->size)
        return bdl_error(local_comm, MPI_ERR_RANK, call,
                         "invalid local_leader %d (local_comm size %d)", local_leader, lc->size);
    if (!newintercomm)
        return bdl_error(local_comm, MPI_ERR_ARG, call, "newintercomm is NULL");
    int leader = lc->rank == local_leader;
    if (leader) {
        if (tag < 0)
            return bdl_error(local_comm, MPI_ERR_TAG, call, "invalid tag %d", tag);
        bdl_comm_t *pc = bdl_comm_get(peer_comm);
        if (!pc)
            return bdl_error(local_comm, MPI_ERR_COMM, call, "invalid peer_comm %d", peer_comm);
        if (remote_leader < 0 || remote_leader >= bdl_comm_peers(pc))
            return bdl_error(local_comm, MPI_ERR_RANK, call,
                             "invalid remote_leader %d (peer_comm size %d)", remote_leader,
                             bdl_comm_peers(pc));
        if (bdl_comm_peer_world(pc, remote_leader) == bdl_g.world_rank)
            return bdl_error(local_comm, MPI_ERR_RANK, call,
                             "remote_leader %d of peer_comm is the local leader itself",
                             remote_leader);
    }
    MPI_Errhandler errh = lc->errh;
    MPI_Comm hidden;
    int rc = bdl_comm_split(local_comm, 0, lc->rank, &hidden, call);
    if (rc)
        return rc;
    bdl_g.comms[hidden].errh = errh;
    /* Leaders swap {hidden context, group size} and the group's world ranks
     * on peer_comm's internal context, so the exchange never matches (or is
     * matched by) a user message on peer_comm. */
    int32_t info[2] = {0, 0};
    int *rw = NULL;
    if (leader) {
        bdl_comm_t *pc = bdl_comm_get(peer_comm), *h = &bdl_g.comms[hidden];
        int pctx = pc->ctx | BDL_CTX_INTERNAL | (pc->inter ? 0 : BDL_CTX_INTER);
        int dst = bdl_comm_peer_world(pc, remote_leader);
        int32_t mine[2] = {h->ctx, h->size};
        bdl_send_bytes(pctx, dst, pc->rank, tag, mine, sizeof mine, 0, NULL);
        bdl_send_bytes(pctx, dst, pc->rank, tag, h->world, (uint64_t)h->size * sizeof(int), 0,
                       NULL);
        MPI_Status st;
        rc = bdl_recv_bytes(pctx, remote_leader, tag, info, sizeof info, &st);
        if (rc || st.bd_nbytes != sizeof info || info[1] <= 0) {
            hidden_free(hidden);
            return bdl_error(local_comm, MPI_ERR_INTERN, call,
                             "unexpected message from the remote leader (tag %d reused?)", tag);
        }
        rw = malloc((size_t)info[1] * sizeof(int));
        if (!rw)
            bdl_fatal(MPI_ERR_NO_MEM, "%s: out of memory", call);
        rc = bdl_recv_bytes(pctx, remote_leader, tag, rw, (uint64_t)info[1] * sizeof(int), &st);
        if (rc || st.bd_nbytes != (long long)info[1] * (long long)sizeof(int))
            bdl_fatal(MPI_ERR_INTERN, "%s: the remote leader sent a malformed group", call);
    }
    if ((rc = MPI_Bcast(info, 2, MPI_INT32_T, local_leader, hidden)))
        return rc;
    if (!leader && !(rw = malloc((size_t)info[1] * sizeof(int))))
        bdl_fatal(MPI_ERR_NO_MEM, "%s: out of memory", call);
    if ((rc = MPI_Bcast(rw, info[1], MPI_INT, local_leader, hidden)))
        return rc;
    /* The groups must be disjoint; every rank sees both lists, so all agree. */
    bdl_comm_t *h = &bdl_g.comms[hidden];
    for (int i = 0; i < info[1]; i++)
        for (int j = 0; j < h->size; j++)
            if (rw[i] == h->world[j]) {
                int w = rw[i];
                free(rw);
                hidden_free(hidden);
                return bdl_error(local_comm, MPI_ERR_COMM, call,
                                 "the local and remote groups overlap (world rank %d is in both)",
                                 w);
            }
    if (inter_add(hidden, info[0], info[1], rw, errh, newintercomm) < 0) {
        free(rw);
        hidden_free(hidden);
        return no_mem(local_comm, call);
    }
    return MPI_SUCCESS;
}

/* The union of both groups, the group passing high = false first (on a tie,
 * the group holding the lower world rank 0 first), as an intracommunicator. */
int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    const char *call = "MPI_Intercomm_merge";
    BDL_CHECK_INIT(call);
    bdl_comm_t *c = bdl_comm_get(intercomm);
    if (!c)
        return bdl_error(intercomm, MPI_ERR_COMM, call, "invalid communicator %d", intercomm);
    if (!c->inter)
        return bdl_error(intercomm, MPI_ERR_COMM, call,
                         "communicator %d is not an intercommunicator", intercomm);
    if (!newintracomm)
        return bdl_error(intercomm, MPI_ERR_ARG, call, "newintracomm is NULL");
    int32_t mine = high ? 1 : 0, theirs = 0;
    int rc;
    if (c->rank == 0) {
        send_to(c, 0, T_MERGE, &mine, sizeof mine, bdl_dt_byte());
        if ((rc = recv_from(intercomm, call, c, 0, T_MERGE, &theirs, sizeof theirs, bdl_dt_byte())))
            return rc;
    }
    if ((rc = MPI_Bcast(&theirs, 1, MPI_INT32_T, 0, local_of(c))))
        return rc;
    c = bdl_comm_get(intercomm);
    int first = mine != theirs ? !mine : c->world[0] < c->rworld[0];
    int n = c->size + c->rsize;
    int *mem = malloc((size_t)n * sizeof(int));
    if (!mem)
        return no_mem(intercomm, call);
    const int *a = first ? c->world : c->rworld, *b = first ? c->rworld : c->world;
    int na = first ? c->size : c->rsize;
    memcpy(mem, a, (size_t)na * sizeof(int));
    memcpy(mem + na, b, (size_t)(n - na) * sizeof(int));
    rc = bdl_comm_create_members(intercomm, mem, n, -1, newintracomm, call);
    free(mem);
    return rc;
}

/* Split of an intercommunicator: the ranks of each color in the two groups
 * form a new intercommunicator (MPI_COMM_NULL when either side of a color is
 * empty).  Every rank learns the remote group's (color, key) pairs, the
 * local group splits its hidden communicator, and the first rank of each
 * new local group swaps the new hidden context with its remote counterpart. */
int bdl_inter_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm, const char *call)
{
    bdl_comm_t *c = bdl_comm_get(comm);
    int32_t ck[2] = {color, key};
    int32_t *all = malloc((size_t)(c->rsize + c->size) * 2 * sizeof(int32_t));
    if (!all)
        return no_mem(comm, call);
    int32_t *rck = all, *lck = all + 2 * c->rsize;
    /* Local pairs at local rank 0, swapped with the remote side, spread locally. */
    int rc = MPI_Gather(ck, 2, MPI_INT32_T, lck, 2, MPI_INT32_T, 0, local_of(c));
    c = bdl_comm_get(comm);
    if (!rc && c->rank == 0) {
        send_to(c, 0, T_SPLIT, lck, (uint64_t)c->size * 8, bdl_dt_byte());
        rc = recv_from(comm, call, c, 0, T_SPLIT, rck, (uint64_t)c->rsize * 8, bdl_dt_byte());
    }
    if (!rc)
        rc = MPI_Bcast(rck, 2 * c->rsize, MPI_INT32_T, 0, local_of(c));
    if (rc) {
        free(all);
        return rc;
    }
    MPI_Comm hidden;
    if ((rc = bdl_comm_split(local_of(c), color, key, &hidden, call))) {
        free(all);
        return rc;
    }
    c = bdl_comm_get(comm);
    /* The remote members of my color, ordered by (key, remote rank). */
    int m = 0;
    int *rw = NULL;
    if (color != MPI_UNDEFINED) {
        int *idx = malloc((size_t)(c->rsize ? c->rsize : 1) * sizeof(int));
        rw = malloc((size_t)(c->rsize ? c->rsize : 1) * sizeof(int));
        if (!idx || !rw)
            bdl_fatal(MPI_ERR_NO_MEM, "%s: out of memory", call);
        for (int r = 0; r < c->rsize; r++)
            if (rck[2 * r] == color) {
                int j = m++;
                while (j > 0 && rck[2 * idx[j - 1] + 1] > rck[2 * r + 1]) {
                    idx[j] = idx[j - 1];
                    j--;
                }
                idx[j] = r;
            }
        for (int i = 0; i < m; i++)
            rw[i] = c->rworld[idx[i]];
        int rfirst = m ? idx[0] : -1;
        free(idx);
        /* Leaders of the two halves of a color swap contexts. */
        int32_t rctx = 0;
        if (m && bdl_g.comms[hidden].rank == 0) {
            int32_t mine = bdl_g.comms[hidden].ctx;
            send_to(c, rfirst, T_SPLIT, &mine, sizeof mine, bdl_dt_byte());
            if ((rc = recv_from(comm, call, c, rfirst, T_SPLIT, &rctx, sizeof rctx,
                                bdl_dt_byte()))) {
                free(rw);
                free(all);
                hidden_free(hidden);
                return rc;
            }
        }
        if (m && (rc = MPI_Bcast(&rctx, 1, MPI_INT32_T, 0, hidden))) {
            free(rw);
            free(all);
            return rc;
        }
        free(all);
        all = NULL;
        if (!m) {
            free(rw);
            hidden_free(hidden);
            *newcomm = MPI_COMM_NULL;
            return MPI_SUCCESS;
        }
        if (inter_add(hidden, rctx, m, rw, bdl_comm_get(comm)->errh, newcomm) < 0) {
            free(rw);
            hidden_free(hidden);
            return no_mem(comm, call);
        }
        return MPI_SUCCESS;
    }
    free(all);
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- queries */

/* The intercommunicator comm for a query whose output argument is out. */
static bdl_comm_t *inter_query(MPI_Comm comm, const char *call, const void *out,
                               const char *outname, int *rc)
{
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c)
        *rc = bdl_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);
    else if (!c->inter)
        *rc = bdl_error(comm, MPI_ERR_COMM, call, "communicator %d is not an intercommunicator",
                        comm);
    else if (!out)
        *rc = bdl_error(comm, MPI_ERR_ARG, call, "%s is NULL", outname);
    else
        return c;
    return NULL;
}

int MPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    BDL_CHECK_INIT("MPI_Comm_remote_size");
    int rc;
    bdl_comm_t *c = inter_query(comm, "MPI_Comm_remote_size", size, "size", &rc);
    if (!c)
        return rc;
    *size = c->rsize;
    return MPI_SUCCESS;
}

int MPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    BDL_CHECK_INIT("MPI_Comm_remote_group");
    int rc;
    bdl_comm_t *c = inter_query(comm, "MPI_Comm_remote_group", group, "group", &rc);
    if (!c)
        return rc;
    int h = bdl_group_new(c->rsize, c->rworld);
    if (h < 0)
        return no_mem(comm, "MPI_Comm_remote_group");
    *group = h;
    return MPI_SUCCESS;
}

/* No process is ever spawned, so no rank has a parent. */
int MPI_Comm_get_parent(MPI_Comm *parent)
{
    BDL_CHECK_INIT("MPI_Comm_get_parent");
    if (!parent)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Comm_get_parent", "parent is NULL");
    *parent = MPI_COMM_NULL;
    return MPI_SUCCESS;
}
