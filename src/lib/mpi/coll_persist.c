/* Persistent collectives (MPI 4.0 6.13): MPI_Barrier_init, MPI_Bcast_init
 * and every other MPI_<coll>_init.
 *
 * Persistent collectives match in the order of their init calls; the
 * ranks may start them in different orders (MPI 4.0 6.13).  So the init
 * call gives the request a hidden communicator of its own, a "shadow" of
 * comm with the same members and a context every rank derives alike from
 * (comm's context, how many persistent inits came before on comm): the
 * init calls are in the same order on every rank, so the n-th one gets the
 * same context everywhere, without any message.  Each rank registers the
 * context with its master (a local call: nothing synchronizes).  Each
 * MPI_Start starts the matching nonblocking collective on the shadow, the
 * request's "inner" one; the starts of one persistent request are in the
 * same order everywhere, as MPI requires, and different requests cannot
 * mix because their contexts differ.  The shadow has a copy of comm's
 * topology (the neighbourhood collectives).  (Intercommunicators run on
 * comm itself: for them starts must be in init order.)
 *
 * The persistent request delegates progress and polling to the inner
 * request and, when its completion is reported, takes its error and
 * status and frees it; the persistent request becomes inactive and can be
 * started again or freed (MPI_Request_free of an active one is an error),
 * which frees the shadow. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "dt.h"
#include "objects.h"
#include "mpi_int.h"
#include "request.h"

enum {
    PC_BARRIER,
    PC_BCAST,
    PC_REDUCE,
    PC_ALLREDUCE,
    PC_SCAN,
    PC_EXSCAN,
    PC_REDUCE_SCATTER,
    PC_REDUCE_SCATTER_BLOCK,
    PC_GATHER,
    PC_GATHERV,
    PC_SCATTER,
    PC_SCATTERV,
    PC_ALLGATHER,
    PC_ALLGATHERV,
    PC_ALLTOALL,
    PC_ALLTOALLV,
    PC_ALLTOALLW,
    PC_NBR_ALLGATHER,
    PC_NBR_ALLGATHERV,
    PC_NBR_ALLTOALL,
    PC_NBR_ALLTOALLV,
    PC_NBR_ALLTOALLW,
};

/* The arguments of the init call, as the nonblocking call takes them.
 * The counts, displacements and types arrays are copies the request owns
 * (copy[]): the program may free or reuse its own once the init call has
 * returned, as MPICH lets it (mpi4py's large-count layer frees the int
 * arrays it made for an init).  The types themselves must stay valid, as
 * must st and rt, which are alias handles (the program may free its types). */
typedef struct pcoll {
    int kind;
    const void *sb;
    void *rb;
    int sc, rc;
    const int *scs, *sds, *rcs, *rds;
    const MPI_Aint *sdw, *rdw; /* MPI_Neighbor_alltoallw's byte displacements */
    const MPI_Datatype *stv, *rtv;
    MPI_Datatype st, rt;
    MPI_Op op;
    int root;
    MPI_Comm comm;      /* what the collectives run on: the shadow, or the program's */
    MPI_Comm shadow;    /* the hidden communicator (MPI_COMM_NULL: none) */
    MPI_Comm user;      /* the program's communicator (its errors) */
    MPI_Request inner;  /* the started nonblocking collective; 0 when inactive */
    void *own[8];       /* arrays the request owns: the _c forms' int copies (0-3) and
                          their MPI_Count and MPI_Aint arrays (4-7) */
    int large;          /* a _c form with a value past INT_MAX: starts run the _c form */
    MPI_Count lsc, lrc; /* its scalar counts then */
    void *copy[8];      /* the copies of the arrays (pinit) */
} pcoll_t;

/* Persistent inits so far per communicator context. */
typedef struct pinit_count {
    int ctx;
    uint64_t n;
} pinit_count_t;

static pinit_count_t *g_counts;
static int g_ncounts;

static uint64_t next_init(int ctx)
{
    for (int i = 0; i < g_ncounts; i++)
        if (g_counts[i].ctx == ctx)
            return g_counts[i].n++;
    pinit_count_t *t = realloc(g_counts, (size_t)(g_ncounts + 1) * sizeof *t);
    if (!t)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory creating a persistent collective");
    g_counts = t;
    g_counts[g_ncounts++] = (pinit_count_t){ctx, 1};
    return 0;
}

/* The shadow of intracommunicator c (size > 1): its handle, or -1 when
 * its member list does not fit the window (the caller then uses c). */
static MPI_Comm make_shadow(const bdl_comm_t *c)
{
    if ((uint64_t)c->size * sizeof(int32_t) > bdl_g.window)
        return -1;
    /* FNV-1a over (context, a marker, the init's number), folded into
     * [-2^30, -1] like MPI_Comm_create_group's: never a context the masters
     * allocate. */
    uint64_t occ = next_init(c->ctx);
    uint32_t key[4] = {(uint32_t)c->ctx, 0x50434f4cu, (uint32_t)occ, (uint32_t)(occ >> 32)};
    uint32_t hsh = 2166136261u;
    for (int i = 0; i < 4; i++)
        for (int b = 0; b < 4; b++) {
            hsh ^= (key[i] >> (8 * b)) & 0xff;
            hsh *= 16777619u;
        }
    int ctx = -(int)(hsh & 0x3fffffffu) - 1;
    int *world = malloc((size_t)c->size * sizeof(int));
    if (!world)
        return -1;
    memcpy(world, c->world, (size_t)c->size * sizeof(int));
    if (bdl_comm_register(ctx, world, c->size) < 0) {
        free(world);
        return -1;
    }
    struct bdl_topo *topo = c->topo ? bdl_topo_dup(c->topo) : NULL;
    int h = (c->topo && !topo) ? -1 : bdl_comm_add(ctx, c->rank, c->size, world, c->errh);
    if (h < 0) {
        free(world);
        bdl_topo_free(topo);
        bd_req_t *r = bdl_req_begin(BD_REQ_COMM_FREE);
        r->ctx = ctx;
        bdl_rpc();
        return -1;
    }
    /* The neighbourhood collectives need the topology. */
    bdl_g.comms[h].topo = topo;
    return h;
}

static const bdl_req_ops_t pcoll_ops;

static bdl_request_t *inner_of(const bdl_request_t *q)
{
    const pcoll_t *p = q->impl;
    return p->inner ? bdl_req_lookup(p->inner) : NULL;
}

static void pcoll_progress(bdl_request_t *q, int blocking)
{
    bdl_request_t *in = inner_of(q);
    if (!in || q->done)
        return;
    if (!in->done)
        in->ops->progress(in, blocking);
    q->done = in->done;
}

/* One poll of the inner requests, kind by kind (all are nonblocking
 * collectives today, but their kind is theirs to know). */
static int pcoll_poll(bdl_request_t **qs, int n, const bdl_req_poll_t *p)
{
    bdl_request_t **v = malloc((size_t)(n ? n : 1) * sizeof *v);
    if (!v)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory polling %d requests", n);
    int ndone = 0, left = n;
    char *seen = calloc((size_t)(n ? n : 1), 1);
    if (!seen)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory polling %d requests", n);
    for (int i = 0; i < n; i++) {
        bdl_request_t *in = inner_of(qs[i]);
        if (!in || in->done) {
            seen[i] = 1;
            left--;
        }
    }
    while (left > 0) {
        const bdl_req_ops_t *kind = NULL;
        int m = 0;
        for (int i = 0; i < n; i++) {
            if (seen[i])
                continue;
            bdl_request_t *in = inner_of(qs[i]);
            if (!kind)
                kind = in->ops;
            if (in->ops == kind) {
                v[m++] = in;
                seen[i] = 1;
                left--;
            }
        }
        if (kind->poll) {
            bdl_req_poll_t pp = *p;
            pp.others = p->others || left > 0;
            kind->poll(v, m, &pp);
        } else {
            for (int i = 0; i < m; i++)
                kind->progress(v[i], 0);
        }
    }
    for (int i = 0; i < n; i++) {
        bdl_request_t *in = inner_of(qs[i]);
        if (!qs[i]->done && in && in->done) {
            qs[i]->done = 1;
            ndone++;
        }
    }
    free(seen);
    free(v);
    return ndone;
}

/* Its completion is reported: take the inner request's result and free it. */
static void pcoll_complete(bdl_request_t *q)
{
    pcoll_t *p = q->impl;
    bdl_request_t *in = inner_of(q);
    if (!in)
        return;
    if (in->ops->complete)
        in->ops->complete(in);
    q->err = in->err;
    q->status = in->status;
    if (in->ops->release)
        in->ops->release(in);
    bdl_req_free_slot(in);
    p->inner = 0;
}

static int pcoll_cancel(bdl_request_t *q, MPI_Request h)
{
    (void)q;
    return bdl_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Cancel",
                     "request %d is a persistent collective, which cannot be cancelled "
                     "(MPI 4.0 6.13)",
                     h);
}

static int pcoll_free(bdl_request_t *q, MPI_Request *h)
{
    pcoll_t *p = q->impl;
    if (!q->inactive)
        return bdl_error(p->user, MPI_ERR_REQUEST, "MPI_Request_free",
                         "request %d is an active persistent collective, which cannot be freed "
                         "until it completes (MPI 4.0 6.13)",
                         *h);
    bdl_dt_alias_free(p->st);
    bdl_dt_alias_free(p->rt);
    if (p->shadow != MPI_COMM_NULL)
        MPI_Comm_free(&p->shadow);
    for (int i = 0; i < 8; i++)
        free(p->own[i]);
    for (int i = 0; i < 8; i++)
        free(p->copy[i]);
    free(p);
    q = bdl_req_lookup(*h);
    q->impl = NULL;
    bdl_req_free_slot(q);
    *h = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

/* A start of a _c init with values past INT_MAX: the nonblocking _c form
 * (mpi/bigcount_arr.c runs it with a type per peer), on the same
 * communicator; own[4..7] are the first side's counts and displacements,
 * then the second's, in the order the init gave them to c_arrays2. */
static int start_large(pcoll_t *p, MPI_Comm c, MPI_Request *r)
{
    const MPI_Count *c1 = p->own[4], *c2 = p->own[6];
    const MPI_Aint *d1 = p->own[5], *d2 = p->own[7];
    switch (p->kind) {
    case PC_REDUCE_SCATTER: return MPI_Ireduce_scatter_c(p->sb, p->rb, c1, p->rt, p->op, c, r);
    case PC_GATHERV:
        return MPI_Igatherv_c(p->sb, p->lsc, p->st, p->rb, c1, d1, p->rt, p->root, c, r);
    case PC_SCATTERV:
        return MPI_Iscatterv_c(p->sb, c1, d1, p->st, p->rb, p->lrc, p->rt, p->root, c, r);
    case PC_ALLGATHERV: return MPI_Iallgatherv_c(p->sb, p->lsc, p->st, p->rb, c1, d1, p->rt, c, r);
    case PC_ALLTOALLV: return MPI_Ialltoallv_c(p->sb, c1, d1, p->st, p->rb, c2, d2, p->rt, c, r);
    case PC_ALLTOALLW: return MPI_Ialltoallw_c(p->sb, c1, d1, p->stv, p->rb, c2, d2, p->rtv, c, r);
    case PC_NBR_ALLGATHERV:
        return MPI_Ineighbor_allgatherv_c(p->sb, p->lsc, p->st, p->rb, c1, d1, p->rt, c, r);
    case PC_NBR_ALLTOALLV:
        return MPI_Ineighbor_alltoallv_c(p->sb, c1, d1, p->st, p->rb, c2, d2, p->rt, c, r);
    default:
        return MPI_Ineighbor_alltoallw_c(p->sb, c1, p->sdw, p->stv, p->rb, c2, p->rdw, p->rtv, c,
                                         r);
    }
}

static int pcoll_start(bdl_request_t *q, MPI_Request h)
{
    pcoll_t *p = q->impl;
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Comm c = p->comm;
    int rc;
    switch (p->large ? -1 : p->kind) {
    case -1: rc = start_large(p, c, &r); break;
    case PC_BARRIER: rc = MPI_Ibarrier(c, &r); break;
    case PC_BCAST: rc = MPI_Ibcast(p->rb, p->rc, p->rt, p->root, c, &r); break;
    case PC_REDUCE: rc = MPI_Ireduce(p->sb, p->rb, p->rc, p->rt, p->op, p->root, c, &r); break;
    case PC_ALLREDUCE: rc = MPI_Iallreduce(p->sb, p->rb, p->rc, p->rt, p->op, c, &r); break;
    case PC_SCAN: rc = MPI_Iscan(p->sb, p->rb, p->rc, p->rt, p->op, c, &r); break;
    case PC_EXSCAN: rc = MPI_Iexscan(p->sb, p->rb, p->rc, p->rt, p->op, c, &r); break;
    case PC_REDUCE_SCATTER:
        rc = MPI_Ireduce_scatter(p->sb, p->rb, p->rcs, p->rt, p->op, c, &r);
        break;
    case PC_REDUCE_SCATTER_BLOCK:
        rc = MPI_Ireduce_scatter_block(p->sb, p->rb, p->rc, p->rt, p->op, c, &r);
        break;
    case PC_GATHER:
        rc = MPI_Igather(p->sb, p->sc, p->st, p->rb, p->rc, p->rt, p->root, c, &r);
        break;
    case PC_GATHERV:
        rc = MPI_Igatherv(p->sb, p->sc, p->st, p->rb, p->rcs, p->rds, p->rt, p->root, c, &r);
        break;
    case PC_SCATTER:
        rc = MPI_Iscatter(p->sb, p->sc, p->st, p->rb, p->rc, p->rt, p->root, c, &r);
        break;
    case PC_SCATTERV:
        rc = MPI_Iscatterv(p->sb, p->scs, p->sds, p->st, p->rb, p->rc, p->rt, p->root, c, &r);
        break;
    case PC_ALLGATHER: rc = MPI_Iallgather(p->sb, p->sc, p->st, p->rb, p->rc, p->rt, c, &r); break;
    case PC_ALLGATHERV:
        rc = MPI_Iallgatherv(p->sb, p->sc, p->st, p->rb, p->rcs, p->rds, p->rt, c, &r);
        break;
    case PC_ALLTOALL: rc = MPI_Ialltoall(p->sb, p->sc, p->st, p->rb, p->rc, p->rt, c, &r); break;
    case PC_ALLTOALLV:
        rc = MPI_Ialltoallv(p->sb, p->scs, p->sds, p->st, p->rb, p->rcs, p->rds, p->rt, c, &r);
        break;
    case PC_ALLTOALLW:
        rc = MPI_Ialltoallw(p->sb, p->scs, p->sds, p->stv, p->rb, p->rcs, p->rds, p->rtv, c, &r);
        break;
    case PC_NBR_ALLGATHER:
        rc = MPI_Ineighbor_allgather(p->sb, p->sc, p->st, p->rb, p->rc, p->rt, c, &r);
        break;
    case PC_NBR_ALLGATHERV:
        rc = MPI_Ineighbor_allgatherv(p->sb, p->sc, p->st, p->rb, p->rcs, p->rds, p->rt, c, &r);
        break;
    case PC_NBR_ALLTOALL:
        rc = MPI_Ineighbor_alltoall(p->sb, p->sc, p->st, p->rb, p->rc, p->rt, c, &r);
        break;
    case PC_NBR_ALLTOALLV:
        rc = MPI_Ineighbor_alltoallv(p->sb, p->scs, p->sds, p->st, p->rb, p->rcs, p->rds, p->rt, c,
                                     &r);
        break;
    default:
        rc = MPI_Ineighbor_alltoallw(p->sb, p->scs, p->sdw, p->stv, p->rb, p->rcs, p->rdw, p->rtv,
                                     c, &r);
        break;
    }
    if (rc)
        return rc;
    q = &bdl_g.reqs[h]; /* the table may have moved */
    p->inner = r;
    q->inactive = 0;
    q->done = 0;
    q->err = 0;
    bdl_status_empty(&q->status);
    bdl_request_t *in = bdl_req_lookup(r);
    if (in && !in->done)
        in->ops->progress(in, 0);
    q->done = in ? in->done : 1;
    return MPI_SUCCESS;
}

static const bdl_req_ops_t pcoll_ops = {
    .progress = pcoll_progress,
    .poll = pcoll_poll,
    .poll_order = 1,
    .complete = pcoll_complete,
    .cancel = pcoll_cancel,
    .free = pcoll_free,
    .start = pcoll_start,
};

/* The lengths of the send and the receive arrays of a's kind of collective
 * on its communicator. */
static void array_lengths(const pcoll_t *a, MPI_Count *ns, MPI_Count *nr)
{
    *ns = *nr = 0;
    switch (a->kind) {
    case PC_GATHERV:
    case PC_ALLGATHERV: *nr = bdl_bc_size(a->comm, 1); break;
    case PC_SCATTERV: *ns = bdl_bc_size(a->comm, 1); break;
    case PC_ALLTOALLV:
    case PC_ALLTOALLW: *ns = *nr = bdl_bc_size(a->comm, 1); break;
    case PC_REDUCE_SCATTER: *nr = bdl_bc_size(a->comm, 0); break;
    case PC_NBR_ALLGATHERV: *nr = bdl_bc_degree(a->comm, 0); break;
    case PC_NBR_ALLTOALLV:
    case PC_NBR_ALLTOALLW:
        *ns = bdl_bc_degree(a->comm, 1);
        *nr = bdl_bc_degree(a->comm, 0);
        break;
    default: break;
    }
}

/* *arr (n elements of size bytes, NULL: not significant) becomes a copy
 * kept in p->copy[slot]; -1 out of memory. */
static int copy_array(pcoll_t *p, int slot, const void **arr, MPI_Count n, size_t size)
{
    if (!*arr || n <= 0)
        return 0;
    void *c = malloc((size_t)n * size);
    if (!c)
        return -1;
    memcpy(c, *arr, (size_t)n * size);
    p->copy[slot] = c;
    *arr = c;
    return 0;
}

static int copy_arrays(pcoll_t *p)
{
    MPI_Count ns, nr;
    array_lengths(p, &ns, &nr);
    return copy_array(p, 0, (const void **)&p->scs, ns, sizeof(int)) ||
           copy_array(p, 1, (const void **)&p->sds, ns, sizeof(int)) ||
           copy_array(p, 2, (const void **)&p->rcs, nr, sizeof(int)) ||
           copy_array(p, 3, (const void **)&p->rds, nr, sizeof(int)) ||
           copy_array(p, 4, (const void **)&p->sdw, ns, sizeof(MPI_Aint)) ||
           copy_array(p, 5, (const void **)&p->rdw, nr, sizeof(MPI_Aint)) ||
           copy_array(p, 6, (const void **)&p->stv, ns, sizeof(MPI_Datatype)) ||
           copy_array(p, 7, (const void **)&p->rtv, nr, sizeof(MPI_Datatype));
}

/* Record the call; p's st and rt are the program's handles (aliased here). */
static int pinit(const char *call, pcoll_t *a, MPI_Info info, MPI_Request *request)
{
    BDL_CHECK_INIT(call);
    int rc = MPI_SUCCESS;
    if (!bdl_comm_get(a->comm))
        rc = bdl_error(MPI_COMM_WORLD, MPI_ERR_COMM, call, "invalid communicator %d", a->comm);
    else if (info != MPI_INFO_NULL && !bdl_info_valid(info))
        rc = bdl_error(a->comm, MPI_ERR_INFO, call, "invalid info %d", info);
    else if (!request)
        rc = bdl_error(a->comm, MPI_ERR_ARG, call, "request is NULL");
    else if (a->sc < 0 || a->rc < 0)
        rc = bdl_error(a->comm, MPI_ERR_COUNT, call, "invalid count %d", a->sc < 0 ? a->sc : a->rc);
    if (rc) {
        for (int i = 0; i < 8; i++)
            free(a->own[i]);
        return rc;
    }
    pcoll_t *p = malloc(sizeof *p);
    if (!p) {
        for (int i = 0; i < 8; i++)
            free(a->own[i]);
        return bdl_error(a->comm, MPI_ERR_NO_MEM, call, "out of memory");
    }
    *p = *a;
    memset(p->copy, 0, sizeof p->copy);
    if (copy_arrays(p)) {
        for (int i = 0; i < 8; i++)
            free(a->own[i]);
        for (int i = 0; i < 8; i++)
            free(p->copy[i]);
        free(p);
        return bdl_error(a->comm, MPI_ERR_NO_MEM, call, "out of memory");
    }
    p->st = bdl_dt_alias(a->st);
    p->rt = bdl_dt_alias(a->rt);
    if ((p->st == MPI_DATATYPE_NULL && a->st != MPI_DATATYPE_NULL) ||
        (p->rt == MPI_DATATYPE_NULL && a->rt != MPI_DATATYPE_NULL)) {
        bdl_dt_alias_free(p->st);
        bdl_dt_alias_free(p->rt);
        for (int i = 0; i < 8; i++)
            free(a->own[i]);
        for (int i = 0; i < 8; i++)
            free(p->copy[i]);
        free(p);
        return bdl_error(a->comm, MPI_ERR_NO_MEM, call, "out of memory");
    }
    p->inner = MPI_REQUEST_NULL;
    p->user = a->comm;
    p->shadow = MPI_COMM_NULL;
    bdl_comm_t *c = bdl_comm_get(a->comm);
    if (!c->inter && c->size > 1) {
        MPI_Comm sh = make_shadow(c);
        if (sh >= 0)
            p->shadow = p->comm = sh;
    }
    int h = bdl_req_new(&pcoll_ops);
    bdl_request_t *q = &bdl_g.reqs[h];
    q->persistent = 1;
    q->inactive = 1;
    q->pcomm = a->comm;
    q->impl = p;
    bdl_status_empty(&q->status);
    *request = h;
    return MPI_SUCCESS;
}

int MPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    BDL_MT_GUARD;
    pcoll_t a = {.kind = PC_BARRIER, .comm = comm};
    return pinit("MPI_Barrier_init", &a, info, request);
}

int MPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                   MPI_Info info, MPI_Request *request)
{
    BDL_MT_GUARD;
    pcoll_t a = {
        .kind = PC_BCAST, .rb = buffer, .rc = count, .rt = datatype, .root = root, .comm = comm};
    return pinit("MPI_Bcast_init", &a, info, request);
}

/* The reductions: the type is rt, the count rc. */
static int red_init(const char *call, int kind, const void *sendbuf, void *recvbuf, int count,
                    MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, MPI_Info info,
                    MPI_Request *request)
{
    pcoll_t a = {.kind = kind,
                 .sb = sendbuf,
                 .rb = recvbuf,
                 .rc = count,
                 .rt = datatype,
                 .op = op,
                 .root = root,
                 .comm = comm};
    return pinit(call, &a, info, request);
}

int MPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    BDL_MT_GUARD;
    return red_init("MPI_Reduce_init", PC_REDUCE, sendbuf, recvbuf, count, datatype, op, root, comm,
                    info, request);
}

int MPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    BDL_MT_GUARD;
    return red_init("MPI_Allreduce_init", PC_ALLREDUCE, sendbuf, recvbuf, count, datatype, op, 0,
                    comm, info, request);
}

int MPI_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    BDL_MT_GUARD;
    return red_init("MPI_Scan_init", PC_SCAN, sendbuf, recvbuf, count, datatype, op, 0, comm, info,
                    request);
}

int MPI_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    BDL_MT_GUARD;
    return red_init("MPI_Exscan_init", PC_EXSCAN, sendbuf, recvbuf, count, datatype, op, 0, comm,
                    info, request);
}

int MPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount,
                                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                  MPI_Request *request)
{
    BDL_MT_GUARD;
    return red_init("MPI_Reduce_scatter_block_init", PC_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf,
                    recvcount, datatype, op, 0, comm, info, request);
}

int MPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[],
                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                            MPI_Request *request)
{
    BDL_MT_GUARD;
    pcoll_t a = {.kind = PC_REDUCE_SCATTER,
                 .sb = sendbuf,
                 .rb = recvbuf,
                 .rcs = recvcounts,
                 .rt = datatype,
                 .op = op,
                 .comm = comm};
    return pinit("MPI_Reduce_scatter_init", &a, info, request);
}

/* The data movers with one count and type on each side. */
static int move_init(const char *call, int kind, const void *sendbuf, int sendcount,
                     MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                     int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    pcoll_t a = {.kind = kind,
                 .sb = sendbuf,
                 .sc = sendcount,
                 .st = sendtype,
                 .rb = recvbuf,
                 .rc = recvcount,
                 .rt = recvtype,
                 .root = root,
                 .comm = comm};
    return pinit(call, &a, info, request);
}

int MPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                    MPI_Request *request)
{
    BDL_MT_GUARD;
    return move_init("MPI_Gather_init", PC_GATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                     recvtype, root, comm, info, request);
}

int MPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                     MPI_Request *request)
{
    BDL_MT_GUARD;
    return move_init("MPI_Scatter_init", PC_SCATTER, sendbuf, sendcount, sendtype, recvbuf,
                     recvcount, recvtype, root, comm, info, request);
}

int MPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request)
{
    BDL_MT_GUARD;
    return move_init("MPI_Allgather_init", PC_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf,
                     recvcount, recvtype, 0, comm, info, request);
}

int MPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                      MPI_Request *request)
{
    BDL_MT_GUARD;
    return move_init("MPI_Alltoall_init", PC_ALLTOALL, sendbuf, sendcount, sendtype, recvbuf,
                     recvcount, recvtype, 0, comm, info, request);
}

int MPI_Neighbor_allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Info info, MPI_Request *request)
{
    BDL_MT_GUARD;
    return move_init("MPI_Neighbor_allgather_init", PC_NBR_ALLGATHER, sendbuf, sendcount, sendtype,
                     recvbuf, recvcount, recvtype, 0, comm, info, request);
}

int MPI_Neighbor_alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                               MPI_Info info, MPI_Request *request)
{
    BDL_MT_GUARD;
    return move_init("MPI_Neighbor_alltoall_init", PC_NBR_ALLTOALL, sendbuf, sendcount, sendtype,
                     recvbuf, recvcount, recvtype, 0, comm, info, request);
}

int MPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                     MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    BDL_MT_GUARD;
    pcoll_t a = {.kind = PC_GATHERV,
                 .sb = sendbuf,
                 .sc = sendcount,
                 .st = sendtype,
                 .rb = recvbuf,
                 .rcs = recvcounts,
                 .rds = displs,
                 .rt = recvtype,
                 .root = root,
                 .comm = comm};
    return pinit("MPI_Gatherv_init", &a, info, request);
}

int MPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[],
                      MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                      int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    BDL_MT_GUARD;
    pcoll_t a = {.kind = PC_SCATTERV,
                 .sb = sendbuf,
                 .scs = sendcounts,
                 .sds = displs,
                 .st = sendtype,
                 .rb = recvbuf,
                 .rc = recvcount,
                 .rt = recvtype,
                 .root = root,
                 .comm = comm};
    return pinit("MPI_Scatterv_init", &a, info, request);
}

static int gatherv_init(const char *call, int kind, const void *sendbuf, int sendcount,
                        MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                        const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request)
{
    pcoll_t a = {.kind = kind,
                 .sb = sendbuf,
                 .sc = sendcount,
                 .st = sendtype,
                 .rb = recvbuf,
                 .rcs = recvcounts,
                 .rds = displs,
                 .rt = recvtype,
                 .comm = comm};
    return pinit(call, &a, info, request);
}

int MPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                        MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    BDL_MT_GUARD;
    return gatherv_init("MPI_Allgatherv_init", PC_ALLGATHERV, sendbuf, sendcount, sendtype, recvbuf,
                        recvcounts, displs, recvtype, comm, info, request);
}

int MPI_Neighbor_allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, const int recvcounts[], const int displs[],
                                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                 MPI_Request *request)
{
    BDL_MT_GUARD;
    return gatherv_init("MPI_Neighbor_allgatherv_init", PC_NBR_ALLGATHERV, sendbuf, sendcount,
                        sendtype, recvbuf, recvcounts, displs, recvtype, comm, info, request);
}

static int alltoallv_init(const char *call, int kind, const void *sendbuf, const int sendcounts[],
                          const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                          const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                          MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    pcoll_t a = {.kind = kind,
                 .sb = sendbuf,
                 .scs = sendcounts,
                 .sds = sdispls,
                 .st = sendtype,
                 .rb = recvbuf,
                 .rcs = recvcounts,
                 .rds = rdispls,
                 .rt = recvtype,
                 .comm = comm};
    return pinit(call, &a, info, request);
}

int MPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                       MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                       const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request)
{
    BDL_MT_GUARD;
    return alltoallv_init("MPI_Alltoallv_init", PC_ALLTOALLV, sendbuf, sendcounts, sdispls,
                          sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, info, request);
}

int MPI_Neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Info info, MPI_Request *request)
{
    BDL_MT_GUARD;
    return alltoallv_init("MPI_Neighbor_alltoallv_init", PC_NBR_ALLTOALLV, sendbuf, sendcounts,
                          sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, info,
                          request);
}

/* The w forms: the types in the arrays must stay valid while the request
 * lives (the arrays are copied). */
int MPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                       const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                       const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                       MPI_Info info, MPI_Request *request)
{
    BDL_MT_GUARD;
    pcoll_t a = {.kind = PC_ALLTOALLW,
                 .sb = sendbuf,
                 .scs = sendcounts,
                 .sds = sdispls,
                 .stv = sendtypes,
                 .rb = recvbuf,
                 .rcs = recvcounts,
                 .rds = rdispls,
                 .rtv = recvtypes,
                 .comm = comm};
    return pinit("MPI_Alltoallw_init", &a, info, request);
}

int MPI_Neighbor_alltoallw_init(const void *sendbuf, const int sendcounts[],
                                const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                                const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                                MPI_Request *request)
{
    BDL_MT_GUARD;
    pcoll_t a = {.kind = PC_NBR_ALLTOALLW,
                 .sb = sendbuf,
                 .scs = sendcounts,
                 .sdw = sdispls,
                 .stv = sendtypes,
                 .rb = recvbuf,
                 .rcs = recvcounts,
                 .rdw = rdispls,
                 .rtv = recvtypes,
                 .comm = comm};
    return pinit("MPI_Neighbor_alltoallw_init", &a, info, request);
}

/* ---------------------------------------------------------------- large counts */

/* The _c forms of the v and w inits: the counts and displacements become
 * int arrays the request owns (bigcount.c says why ints).  The request
 * keeps the MPI_Count and MPI_Aint arrays too; when a value does not fit
 * an int, it is large and each start runs the nonblocking _c form. */
static int keep(const void *a, MPI_Count n, size_t size, void **out)
{
    *out = NULL;
    if (!a || n <= 0)
        return 0;
    if (!(*out = malloc((size_t)n * size)))
        return -1;
    memcpy(*out, a, (size_t)n * size);
    return 0;
}

static int fits_all(const MPI_Count *c, const MPI_Aint *d, MPI_Count n)
{
    for (MPI_Count i = 0; i < n; i++)
        if ((c && (c[i] > INT_MAX || c[i] < INT_MIN)) || (d && (d[i] > INT_MAX || d[i] < INT_MIN)))
            return 0;
    return 1;
}

static int c_arrays2(const char *call, MPI_Comm comm, MPI_Count n, const MPI_Count *c1,
                     const MPI_Aint *d1, MPI_Count n2, const MPI_Count *c2, const MPI_Aint *d2,
                     pcoll_t *a)
{
    int *v[4] = {NULL, NULL, NULL, NULL};
    int rc = MPI_SUCCESS;
    if (keep(c1, n, sizeof *c1, &a->own[4]) || keep(d1, n, sizeof *d1, &a->own[5]) ||
        keep(c2, n2, sizeof *c2, &a->own[6]) || keep(d2, n2, sizeof *d2, &a->own[7]))
        rc = bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
    else if (!fits_all(c1, d1, n) || !fits_all(c2, d2, n2))
        a->large = 1;
    else if (!(rc = bdl_bc_ints(call, comm, "counts", c1, n, &v[0])) &&
             !(rc = bdl_bc_aints(call, comm, "displacements", d1, n, &v[1])) &&
             !(rc = bdl_bc_ints(call, comm, "counts", c2, n2, &v[2])))
        rc = bdl_bc_aints(call, comm, "displacements", d2, n2, &v[3]);
    if (rc) {
        for (int i = 0; i < 4; i++)
            free(v[i]);
        for (int i = 4; i < 8; i++)
            free(a->own[i]);
        return rc;
    }
    for (int i = 0; i < 4; i++)
        a->own[i] = v[i];
    return MPI_SUCCESS;
}

/* A scalar count of a v init's _c form: past INT_MAX, the request is large. */
static int c_scalar(MPI_Count v, int *i, MPI_Count *l, pcoll_t *a)
{
    *l = v;
    if (v > INT_MAX)
        a->large = 1;
    else
        *i = v < INT_MIN ? -1 : (int)v;
    return MPI_SUCCESS;
}

/* The same with arrays of one length (c2, d2 the receive side). */
static int c_arrays(const char *call, MPI_Comm comm, MPI_Count n, const MPI_Count *c1,
                    const MPI_Aint *d1, const MPI_Count *c2, const MPI_Aint *d2, pcoll_t *a)
{
    return c_arrays2(call, comm, n, c1, d1, n, c2, d2, a);
}

int MPI_Gatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                       void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                       MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Gatherv_init_c";
    pcoll_t a = {.kind = PC_GATHERV,
                 .sb = sendbuf,
                 .st = sendtype,
                 .rb = recvbuf,
                 .rt = recvtype,
                 .root = root,
                 .comm = comm};
    int rc;
    if ((rc = c_scalar(sendcount, &a.sc, &a.lsc, &a)) ||
        (rc = c_arrays(call, comm, bdl_bc_size(comm, 1), recvcounts, displs, NULL, NULL, &a)))
        return rc;
    a.rcs = a.own[0];
    a.rds = a.own[1];
    return pinit(call, &a, info, request);
}

int MPI_Scatterv_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                        MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                        MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Scatterv_init_c";
    pcoll_t a = {.kind = PC_SCATTERV,
                 .sb = sendbuf,
                 .st = sendtype,
                 .rb = recvbuf,
                 .rt = recvtype,
                 .root = root,
                 .comm = comm};
    int rc;
    if ((rc = c_scalar(recvcount, &a.rc, &a.lrc, &a)) ||
        (rc = c_arrays(call, comm, bdl_bc_size(comm, 1), sendcounts, displs, NULL, NULL, &a)))
        return rc;
    a.scs = a.own[0];
    a.sds = a.own[1];
    return pinit(call, &a, info, request);
}

int MPI_Allgatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                          void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                          MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Allgatherv_init_c";
    pcoll_t a = {.kind = PC_ALLGATHERV,
                 .sb = sendbuf,
                 .st = sendtype,
                 .rb = recvbuf,
                 .rt = recvtype,
                 .comm = comm};
    int rc;
    if ((rc = c_scalar(sendcount, &a.sc, &a.lsc, &a)) ||
        (rc = c_arrays(call, comm, bdl_bc_size(comm, 1), recvcounts, displs, NULL, NULL, &a)))
        return rc;
    a.rcs = a.own[0];
    a.rds = a.own[1];
    return pinit(call, &a, info, request);
}

int MPI_Alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                         const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                         const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                         MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Alltoallv_init_c";
    pcoll_t a = {.kind = PC_ALLTOALLV,
                 .sb = sendbuf,
                 .st = sendtype,
                 .rb = recvbuf,
                 .rt = recvtype,
                 .comm = comm};
    int rc =
        c_arrays(call, comm, bdl_bc_size(comm, 1), sendcounts, sdispls, recvcounts, rdispls, &a);
    if (rc)
        return rc;
    a.scs = a.own[0];
    a.sds = a.own[1];
    a.rcs = a.own[2];
    a.rds = a.own[3];
    return pinit(call, &a, info, request);
}

int MPI_Alltoallw_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                         const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
                         const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                         const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                         MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Alltoallw_init_c";
    pcoll_t a = {.kind = PC_ALLTOALLW,
                 .sb = sendbuf,
                 .stv = sendtypes,
                 .rb = recvbuf,
                 .rtv = recvtypes,
                 .comm = comm};
    int rc =
        c_arrays(call, comm, bdl_bc_size(comm, 1), sendcounts, sdispls, recvcounts, rdispls, &a);
    if (rc)
        return rc;
    a.scs = a.own[0];
    a.sds = a.own[1];
    a.rcs = a.own[2];
    a.rds = a.own[3];
    return pinit(call, &a, info, request);
}

int MPI_Reduce_scatter_init_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                              MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Reduce_scatter_init_c";
    pcoll_t a = {.kind = PC_REDUCE_SCATTER,
                 .sb = sendbuf,
                 .rb = recvbuf,
                 .rt = datatype,
                 .op = op,
                 .comm = comm};
    int rc = c_arrays(call, comm, bdl_bc_size(comm, 0), recvcounts, NULL, NULL, NULL, &a);
    if (rc)
        return rc;
    a.rcs = a.own[0];
    return pinit(call, &a, info, request);
}

/* The neighbourhood forms: one entry per neighbour (bigcount.c), the
 * send arrays out-degree long, the receive arrays in-degree long. */
int MPI_Neighbor_allgatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, const MPI_Count recvcounts[],
                                   const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                   MPI_Info info, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Neighbor_allgatherv_init_c";
    pcoll_t a = {.kind = PC_NBR_ALLGATHERV,
                 .sb = sendbuf,
                 .st = sendtype,
                 .rb = recvbuf,
                 .rt = recvtype,
                 .comm = comm};
    int rc;
    if ((rc = c_scalar(sendcount, &a.sc, &a.lsc, &a)) ||
        (rc = c_arrays(call, comm, bdl_bc_degree(comm, 0), recvcounts, displs, NULL, NULL, &a)))
        return rc;
    a.rcs = a.own[0];
    a.rds = a.own[1];
    return pinit(call, &a, info, request);
}

int MPI_Neighbor_alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                                  const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                  const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                  MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Neighbor_alltoallv_init_c";
    pcoll_t a = {.kind = PC_NBR_ALLTOALLV,
                 .sb = sendbuf,
                 .st = sendtype,
                 .rb = recvbuf,
                 .rt = recvtype,
                 .comm = comm};
    int rc = c_arrays2(call, comm, bdl_bc_degree(comm, 1), sendcounts, sdispls,
                       bdl_bc_degree(comm, 0), recvcounts, rdispls, &a);
    if (rc)
        return rc;
    a.scs = a.own[0];
    a.sds = a.own[1];
    a.rcs = a.own[2];
    a.rds = a.own[3];
    return pinit(call, &a, info, request);
}

/* The displacements of the w form are MPI_Aint already: the program's. */
int MPI_Neighbor_alltoallw_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                                  const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                  void *recvbuf, const MPI_Count recvcounts[],
                                  const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                  MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Neighbor_alltoallw_init_c";
    pcoll_t a = {.kind = PC_NBR_ALLTOALLW,
                 .sb = sendbuf,
                 .sdw = sdispls,
                 .stv = sendtypes,
                 .rb = recvbuf,
                 .rdw = rdispls,
                 .rtv = recvtypes,
                 .comm = comm};
    int rc = c_arrays2(call, comm, bdl_bc_degree(comm, 1), sendcounts, NULL, bdl_bc_degree(comm, 0),
                       recvcounts, NULL, &a);
    if (rc)
        return rc;
    a.scs = a.own[0];
    a.rcs = a.own[2];
    return pinit(call, &a, info, request);
}
