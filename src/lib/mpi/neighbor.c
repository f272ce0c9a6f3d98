/* Neighbourhood collectives (MPI 3.1 7.6): blocking allgather(v) and
 * alltoall(v, w) over the neighbours of a Cartesian, graph or distributed
 * graph topology.
 *
 * They run on the library's point-to-point in the communicator's hidden
 * context (BDL_CTX_INTERNAL), so they never match the program's messages:
 * every rank first sends one message to each out-neighbour, then receives
 * one from each in-neighbour, in neighbour order.  Sends are buffered by the
 * master and complete at once, so the receives cannot deadlock.  Two
 * messages between the same pair of ranks (a multi-edge, or both Cartesian
 * neighbours in a periodic dimension of size 1 or 2) are told apart by:
 * - Cartesian: the tag names the direction; what a rank sends to its -1
 *   neighbour in dimension d is what that neighbour receives from its +1
 *   neighbour, block 2d+1;
 * - graphs: the order, as MPI requires (the k-th message to a rank matches
 *   the k-th receive from it).
 *
 * The nonblocking forms are the same sends and receives: the receives are
 * posted at the call as the library's own requests, and the collective's
 * request completes when they all have.  Since the master matches posted
 * receives and buffers every send, nothing is left for the program to
 * progress after the call. */
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "core.h"
#include "dt.h"
#include "nbc.h"
#include "objects.h"
#include "request.h"

/* Tags on the hidden context, apart from those of the user-op reductions. */
#define NBR_TAG 0x4e420000

/* Passed as the request of the blocking forms. */
static MPI_Request g_nbr_no_request;

typedef struct {
    MPI_Comm comm;
    const char *call;
    bdl_comm_t *c;
    bdl_nbrs_t nb;
    MPI_Request *request; /* nonblocking: the collective's request ... */
    MPI_Request *reqs;    /* ... made of these receives */
    int nreqs;
} nctx_t;

static int nbr_begin(nctx_t *x, MPI_Comm comm, const char *call, MPI_Request *request)
{
    BDL_CHECK_INIT(call);
    x->comm = comm;
    x->call = call;
    x->request = request;
    x->reqs = NULL;
    x->nreqs = 0;
    x->nb.in = x->nb.out = NULL;
    x->c = bdl_comm_get(comm);
    if (!x->c)
        return bdl_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);
    if (request == &g_nbr_no_request)
        x->request = NULL;
    else if (!request)
        return bdl_error(comm, MPI_ERR_ARG, call, "NULL request argument");
    if (!x->c->topo)
        return bdl_error(comm, MPI_ERR_TOPOLOGY, call,
                         "communicator %d has no topology (neighbourhood collectives need a "
                         "Cartesian, graph or distributed graph communicator)",
                         comm);
    if (bdl_topo_neighbors(x->c, &x->nb) < 0)
        return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
    if (x->request) {
        x->reqs = malloc((size_t)(x->nb.indeg ? x->nb.indeg : 1) * sizeof *x->reqs);
        if (!x->reqs) {
            bdl_nbrs_free(&x->nb);
            return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
        }
    }
    return MPI_SUCCESS;
}

/* The end of a call: a nonblocking one hands its receives to its request. */
static int nbr_fail(nctx_t *x, int rc)
{
    bdl_nbrs_free(&x->nb);
    if (x->request && !rc) {
        *x->request = bdl_nbc_of_requests(x->reqs, x->nreqs);
        x->reqs = NULL;
    }
    /* An error after receives were posted leaves them to complete unseen. */
    for (int i = 0; i < x->nreqs && x->reqs; i++)
        bdl_req_release("MPI_Request_free", &x->reqs[i]);
    free(x->reqs);
    return rc;
}

static int send_tag(const nctx_t *x, int k) { return NBR_TAG + (x->nb.cart ? k : 0x3fff); }
static int recv_tag(const nctx_t *x, int k) { return NBR_TAG + (x->nb.cart ? k ^ 1 : 0x3fff); }

static int check_count(nctx_t *x, const char *what, int k, int n)
{
    if (n >= 0)
        return MPI_SUCCESS;
    if (k < 0)
        return bdl_error(x->comm, MPI_ERR_COUNT, x->call, "invalid %s %d", what, n);
    return bdl_error(x->comm, MPI_ERR_COUNT, x->call, "invalid %s[%d] = %d", what, k, n);
}

static int check_vec(nctx_t *x, const char *what, int n, const void *a)
{
    if (n > 0 && !a)
        return bdl_error(x->comm, MPI_ERR_ARG, x->call, "%s is NULL", what);
    return MPI_SUCCESS;
}

static int no_in_place(nctx_t *x, const void *sendbuf)
{
    if (sendbuf == MPI_IN_PLACE)
        return bdl_error(x->comm, MPI_ERR_BUFFER, x->call,
                         "MPI_IN_PLACE is not allowed in neighbourhood collectives");
    return MPI_SUCCESS;
}

/* The send phase: block k of count elements of t at buf + off[k] bytes to
 * out-neighbour k.  off NULL: block k is at buf. */
static void send_block(nctx_t *x, int k, const void *buf, MPI_Aint off, int count,
                       const bdl_dt_t *t)
{
    int dst = x->nb.out[k];
    if (dst == MPI_PROC_NULL)
        return;
    bdl_comm_t *c = x->c;
    bdl_send_typed(bdl_comm_ictx(c), c->world[dst], c->rank, send_tag(x, k),
                   (const char *)buf + off, (uint64_t)count, t, 0, NULL);
}

static int recv_block(nctx_t *x, int k, void *buf, MPI_Aint off, int count, const bdl_dt_t *t)
{
    int src = x->nb.in[k];
    if (src == MPI_PROC_NULL)
        return MPI_SUCCESS;
    bdl_comm_t *c = x->c;
    if (x->request) {
        /* Post it as the library's own receive request (as MPI_Irecv would). */
        MPI_Request h = bdl_irecv_post(bdl_comm_ictx(c), src, recv_tag(x, k), (char *)buf + off,
                                       (uint64_t)count, (bdl_dt_t *)t);
        x->reqs[x->nreqs++] = h;
        return MPI_SUCCESS;
    }
    int rc = bdl_recv_typed(bdl_comm_ictx(c), src, recv_tag(x, k), (char *)buf + off,
                            (uint64_t)count, t, MPI_STATUS_IGNORE);
    if (rc)
        return bdl_error(x->comm, rc, x->call,
                         "the message from neighbour %d (rank %d) is longer than receive block %d",
                         k, src, k);
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- allgather */

static int allgather(const char *call, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                     void *recvbuf, int rcount, const int *recvcounts, const int *displs,
                     MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    nctx_t x;
    bdl_dt_t *st, *rt;
    int rc;
    if ((rc = nbr_begin(&x, comm, call, request)))
        return rc;
    int in = x.nb.indeg;
    if ((rc = no_in_place(&x, sendbuf)) || (rc = check_count(&x, "sendcount", -1, sendcount)) ||
        (rc = bdl_dt_check(comm, call, "send", sendtype, &st)) ||
        (rc = bdl_dt_check(comm, call, "receive", recvtype, &rt)))
        return nbr_fail(&x, rc);
    if (!recvcounts) {
        if ((rc = check_count(&x, "recvcount", -1, rcount)))
            return nbr_fail(&x, rc);
    } else {
        if ((rc = check_vec(&x, "recvcounts", in, recvcounts)) ||
            (rc = check_vec(&x, "displs", in, displs)))
            return nbr_fail(&x, rc);
        for (int k = 0; k < in; k++)
            if ((rc = check_count(&x, "recvcounts", k, recvcounts[k])))
                return nbr_fail(&x, rc);
    }
    for (int k = 0; k < x.nb.outdeg; k++)
        send_block(&x, k, sendbuf, 0, sendcount, st);
    bdl_ovw_t o;
    if (bdl_ovw_init(&o)) {
        for (int k = 0; k < in; k++)
            if (x.nb.in[k] != MPI_PROC_NULL)
                bdl_ovw_add(
                    &o,
                    bdl_at(recvbuf, (recvcounts ? displs[k] : (long long)k * rcount) * rt->extent),
                    (uint64_t)(recvcounts ? recvcounts[k] : rcount), rt);
        bdl_ovw_drop(&o);
    }
    for (int k = 0; k < in && !rc; k++) {
        MPI_Aint off = (MPI_Aint)(recvcounts ? displs[k] : (long long)k * rcount) * rt->extent;
        rc = recv_block(&x, k, recvbuf, off, recvcounts ? recvcounts[k] : rcount, rt);
    }
    return nbr_fail(&x, rc);
}

int MPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    BDL_MT_GUARD;
    return allgather("MPI_Neighbor_allgather", sendbuf, sendcount, sendtype, recvbuf, recvcount,
                     NULL, NULL, recvtype, comm, &g_nbr_no_request);
}

int MPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, MPI_Comm comm)
{
    BDL_MT_GUARD;
    return allgather("MPI_Neighbor_allgatherv", sendbuf, sendcount, sendtype, recvbuf, 0,
                     recvcounts, displs, recvtype, comm, &g_nbr_no_request);
}

int MPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request)
{
    BDL_MT_GUARD;
    return allgather("MPI_Ineighbor_allgather", sendbuf, sendcount, sendtype, recvbuf, recvcount,
                     NULL, NULL, recvtype, comm, request);
}

int MPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    return allgather("MPI_Ineighbor_allgatherv", sendbuf, sendcount, sendtype, recvbuf, 0,
                     recvcounts, displs, recvtype, comm, request);
}

/* ---------------------------------------------------------------- alltoall(v, w) */

/* Per-block description of one side: counts, displacements in extents
 * (v) or bytes (w), types (w) or one type. */
typedef struct {
    int count;               /* alltoall: the same for every block */
    const int *counts;       /* v, w */
    const int *displs;       /* v: in extents of the type */
    const MPI_Aint *bdispls; /* w: in bytes */
    MPI_Datatype type;
    const MPI_Datatype *types; /* w */
} side_t;

/* Check one side (n blocks); on success tt[k] is block k's type. */
static int check_side(nctx_t *x, const char *what, const side_t *s, int n, bdl_dt_t **tt)
{
    char name[32];
    int rc;
    if (s->counts) {
        snprintf(name, sizeof name, "%scounts", what);
        if ((rc = check_vec(x, name, n, s->counts)))
            return rc;
        snprintf(name, sizeof name, "%sdispls", what);
        if ((rc = check_vec(x, name, n,
                            s->displs ? (const void *)s->displs : (const void *)s->bdispls)))
            return rc;
        if (s->types &&
            (rc = check_vec(x, what[0] == 's' ? "sendtypes" : "recvtypes", n, s->types)))
            return rc;
    } else {
        snprintf(name, sizeof name, "%scount", what);
        if ((rc = check_count(x, name, -1, s->count)))
            return rc;
    }
    bdl_dt_t *one = NULL;
    if (!s->types &&
        (rc = bdl_dt_check(x->comm, x->call, what[0] == 's' ? "send" : "receive", s->type, &one)))
        return rc;
    for (int k = 0; k < n; k++) {
        if (s->counts) {
            snprintf(name, sizeof name, "%scounts", what);
            if ((rc = check_count(x, name, k, s->counts[k])))
                return rc;
        }
        if (s->types) {
            char w[48];
            snprintf(w, sizeof w, "%s block %d:", what[0] == 's' ? "send" : "receive", k);
            if ((rc = bdl_dt_check(x->comm, x->call, w, s->types[k], &tt[k])))
                return rc;
        } else {
            tt[k] = one;
        }
    }
    return MPI_SUCCESS;
}

static MPI_Aint side_off(const side_t *s, int k, const bdl_dt_t *t)
{
    if (s->bdispls)
        return s->bdispls[k];
    if (s->displs)
        return (MPI_Aint)s->displs[k] * t->extent;
    return (MPI_Aint)k * s->count * t->extent;
}

static int side_count(const side_t *s, int k) { return s->counts ? s->counts[k] : s->count; }

static int alltoall(const char *call, const void *sendbuf, const side_t *snd, void *recvbuf,
                    const side_t *rcv, MPI_Comm comm, MPI_Request *request)
{
    nctx_t x;
    int rc;
    if ((rc = nbr_begin(&x, comm, call, request)))
        return rc;
    int in = x.nb.indeg, out = x.nb.outdeg;
    bdl_dt_t **st = malloc((size_t)(out ? out : 1) * sizeof *st);
    bdl_dt_t **rt = malloc((size_t)(in ? in : 1) * sizeof *rt);
    if (!st || !rt) {
        rc = bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
        goto done;
    }
    if ((rc = no_in_place(&x, sendbuf)) || (rc = check_side(&x, "send", snd, out, st)) ||
        (rc = check_side(&x, "recv", rcv, in, rt)))
        goto done;
    for (int k = 0; k < out; k++)
        send_block(&x, k, sendbuf, side_off(snd, k, st[k]), side_count(snd, k), st[k]);
    bdl_ovw_t o;
    if (bdl_ovw_init(&o)) {
        for (int k = 0; k < in; k++)
            if (x.nb.in[k] != MPI_PROC_NULL)
                bdl_ovw_add(&o, bdl_at(recvbuf, side_off(rcv, k, rt[k])),
                            (uint64_t)side_count(rcv, k), rt[k]);
        bdl_ovw_drop(&o);
    }
    for (int k = 0; k < in && !rc; k++)
        rc = recv_block(&x, k, recvbuf, side_off(rcv, k, rt[k]), side_count(rcv, k), rt[k]);
done:
    free(st);
    free(rt);
    return nbr_fail(&x, rc);
}

int MPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                          int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    BDL_MT_GUARD;
    side_t s = {.count = sendcount, .type = sendtype};
    side_t r = {.count = recvcount, .type = recvtype};
    return alltoall("MPI_Neighbor_alltoall", sendbuf, &s, recvbuf, &r, comm, &g_nbr_no_request);
}

int MPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    BDL_MT_GUARD;
    side_t s = {.counts = sendcounts, .displs = sdispls, .type = sendtype};
    side_t r = {.counts = recvcounts, .displs = rdispls, .type = recvtype};
    return alltoall("MPI_Neighbor_alltoallv", sendbuf, &s, recvbuf, &r, comm, &g_nbr_no_request);
}

int MPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    BDL_MT_GUARD;
    side_t s = {.counts = sendcounts, .bdispls = sdispls, .types = sendtypes};
    side_t r = {.counts = recvcounts, .bdispls = rdispls, .types = recvtypes};
    return alltoall("MPI_Neighbor_alltoallw", sendbuf, &s, recvbuf, &r, comm, &g_nbr_no_request);
}

int MPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Request *request)
{
    BDL_MT_GUARD;
    side_t s = {.count = sendcount, .type = sendtype};
    side_t r = {.count = recvcount, .type = recvtype};
    return alltoall("MPI_Ineighbor_alltoall", sendbuf, &s, recvbuf, &r, comm, request);
}

int MPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request)
{
    BDL_MT_GUARD;
    side_t s = {.counts = sendcounts, .displs = sdispls, .type = sendtype};
    side_t r = {.counts = recvcounts, .displs = rdispls, .type = recvtype};
    return alltoall("MPI_Ineighbor_alltoallv", sendbuf, &s, recvbuf, &r, comm, request);
}

int MPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                            MPI_Request *request)
{
    BDL_MT_GUARD;
    side_t s = {.counts = sendcounts, .bdispls = sdispls, .types = sendtypes};
    side_t r = {.counts = recvcounts, .bdispls = rdispls, .types = recvtypes};
    return alltoall("MPI_Ineighbor_alltoallw", sendbuf, &s, recvbuf, &r, comm, request);
}
