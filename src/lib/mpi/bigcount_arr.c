/* MPI 4.0 large counts: the v and w collectives whose count or
 * displacement ARRAYS hold entries past INT_MAX.  The generated _c forms
 * (bigcount_coll.c, bigcount_nbc.c) ask bdl_bcw_X first; it answers
 * BDL_BC_THIN when every entry fits an int (the thin layer then converts
 * the arrays and calls the int form).  Otherwise each block that does not
 * fit becomes one element of a type of its own: MPI_Type_contiguous_c of
 * its count, placed at its byte displacement by a one-block hindexed type
 * where the int form's displacements are ints.  The call then runs as the
 * same v collective with a type per peer (coll_gather.c: *_typed), or as
 * the w form where that is the same to the peers (neighbourhood
 * collectives, whose blocks are point-to-point messages).  What travels is
 * the same blocks, so ranks whose entries all fit (a gather's senders, say)
 * take the thin path and still match.  The types are freed when the call
 * returns: nonblocking collectives hold their descriptors.
 *
 * On an intercommunicator the per-peer types go to intercomm.c (blocking:
 * point-to-point between the groups, the v call's tags, so that a peer
 * whose entries all fit pairs with them) or intercomm_nbc.c (nonblocking:
 * the types' blocks in the pieces, as the w forms).
 *
 * MPI_Reduce_scatter_c runs as a reduce to rank 0 and a scatterv
 * (intercommunicators: intercomm.c's, whose sizes are 64-bit);
 * MPI_Ireduce_scatter_c takes MPI_Count counts (coll_reduce.c).  The
 * persistent _init_c forms start the nonblocking _c forms
 * (mpi/coll_persist.c). */
#include <limits.h>
#include <stdlib.h>

#include "coll.h"
#include "core.h"
#include "dt.h"
#include "mpi_int.h"

/* One side of a v or w call as the program gave it. */
typedef struct wv {
    const MPI_Count *counts; /* NULL: count for every peer */
    MPI_Count count;
    const MPI_Aint *displs; /* NULL: every block at the buffer */
    int bytes;              /* displs in bytes (w forms), else in extents */
    MPI_Datatype type;
    const MPI_Datatype *types; /* w forms */
    int n;
} wv_t;

/* The same side as the int forms take it: a type per peer. */
typedef struct wout {
    int *cnt, *idisp;
    MPI_Aint *adisp;
    MPI_Datatype *t;
    MPI_Datatype *made;
    int nmade;
} wout_t;

static int fits(long long v) { return v >= INT_MIN && v <= INT_MAX; }

/* Does some entry of x not fit the int form (aint: its displacements are
 * MPI_Aint already)? */
static int big(const wv_t *x, int aint)
{
    for (int i = 0; i < x->n; i++) {
        if (x->counts && x->counts[i] > INT_MAX)
            return 1;
        if (!aint && x->displs && !fits(x->displs[i]))
            return 1;
    }
    return 0;
}

static void wout_free(wout_t *o)
{
    for (int i = 0; i < o->nmade; i++)
        MPI_Type_free(&o->made[i]);
    free(o->cnt);
    free(o->idisp);
    free(o->adisp);
    free(o->t);
    free(o->made);
    *o = (wout_t){0};
}

static int build(const char *call, MPI_Comm comm, const char *what, const wv_t *x, int aint,
                 wout_t *o)
{
    size_t n = (size_t)(x->n > 0 ? x->n : 1);
    *o = (wout_t){0};
    o->cnt = calloc(n, sizeof *o->cnt);
    o->idisp = calloc(n, sizeof *o->idisp);
    o->adisp = calloc(n, sizeof *o->adisp);
    o->t = calloc(n, sizeof *o->t);
    o->made = calloc(n, sizeof *o->made);
    if (!o->cnt || !o->idisp || !o->adisp || !o->t || !o->made) {
        wout_free(o);
        return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
    }
    for (int i = 0; i < x->n; i++) {
        MPI_Count c = x->counts ? x->counts[i] : x->count;
        MPI_Datatype T = x->types ? x->types[i] : x->type;
        MPI_Aint D = x->displs ? x->displs[i] : 0;
        o->t[i] = T;
        if (c < 0) {
            wout_free(o);
            return bdl_error(comm, MPI_ERR_COUNT, call, "invalid %scount %lld for rank %d", what,
                             (long long)c, i);
        }
        if (c == 0)
            continue;
        bdl_dt_t *t = bdl_dt_lookup(T);
        if (!t) {
            wout_free(o);
            return bdl_error(comm, MPI_ERR_TYPE, call, "invalid %stype %d for rank %d", what, T, i);
        }
        if (!x->bytes)
            D *= t->extent;
        if (c <= INT_MAX && (aint || fits(D))) {
            o->cnt[i] = (int)c;
            o->idisp[i] = (int)D;
            o->adisp[i] = D;
            continue;
        }
        /* One element of a type of c elements of T, at D where the int
         * form's displacements cannot say it. */
        MPI_Datatype ct = MPI_DATATYPE_NULL, ht = MPI_DATATYPE_NULL;
        int one = 1, rc = MPI_Type_contiguous_c(c, T, &ct);
        if (rc == MPI_SUCCESS && !aint) {
            rc = MPI_Type_create_hindexed(1, &one, &D, ct, &ht);
            MPI_Type_free(&ct);
            ct = ht;
            D = 0;
        }
        if (rc == MPI_SUCCESS)
            rc = MPI_Type_commit(&ct);
        if (rc) {
            if (ct != MPI_DATATYPE_NULL)
                MPI_Type_free(&ct);
            wout_free(o);
            return bdl_error(comm, rc, call, "cannot make the type of %scount %lld for rank %d",
                             what, (long long)c, i);
        }
        o->made[o->nmade++] = ct;
        o->t[i] = ct;
        o->cnt[i] = 1;
        o->adisp[i] = D;
    }
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- all-to-all */

static int a2a(const char *call, int api, const void *sendbuf, const MPI_Count *sc,
               const MPI_Aint *sd, MPI_Datatype stype, const MPI_Datatype *stypes, void *recvbuf,
               const MPI_Count *rc_, const MPI_Aint *rd, MPI_Datatype rtype,
               const MPI_Datatype *rtypes, MPI_Comm comm, MPI_Request *request)
{
    int n = (int)bdl_bc_size(comm, 1), bytes = stypes || rtypes, rc;
    int inplace = sendbuf == MPI_IN_PLACE;
    wv_t s = {sc, 0, sd, bytes, stype, stypes, n}, r = {rc_, 0, rd, bytes, rtype, rtypes, n};
    if (!(!inplace && big(&s, 0)) && !big(&r, 0))
        return BDL_BC_THIN;
    wout_t so = {0}, ro = {0};
    if ((!inplace && (rc = build(call, comm, "send ", &s, 0, &so))) ||
        (rc = build(call, comm, "receive ", &r, 0, &ro)))
        goto out;
    bdl_a2a_side_t S = {.buf = sendbuf, .counts = so.cnt, .displs = so.idisp, .types = so.t};
    bdl_a2a_side_t R = {.buf = recvbuf, .counts = ro.cnt, .displs = ro.idisp, .types = ro.t};
    rc = bdl_alltoall_typed(call, api, &S, &R, comm, request);
out:
    wout_free(&so);
    wout_free(&ro);
    return rc;
}

int bdl_bcw_Alltoallv(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                      MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                      const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return a2a("MPI_Alltoallv_c", BD_API_ALLTOALLV, sendbuf, sendcounts, sdispls, sendtype, NULL,
               recvbuf, recvcounts, rdispls, recvtype, NULL, comm, NULL);
}

int bdl_bcw_Ialltoallv(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                       MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                       const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                       MPI_Request *request)
{
    return a2a("MPI_Ialltoallv_c", BD_API_ALLTOALLV, sendbuf, sendcounts, sdispls, sendtype, NULL,
               recvbuf, recvcounts, rdispls, recvtype, NULL, comm, request);
}

int bdl_bcw_Alltoallw(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                      const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                      const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    if (!recvtypes || (sendbuf != MPI_IN_PLACE && !sendtypes))
        return BDL_BC_THIN; /* the int form reports it */
    return a2a("MPI_Alltoallw_c", BD_API_ALLTOALLW, sendbuf, sendcounts, sdispls, MPI_DATATYPE_NULL,
               sendtypes, recvbuf, recvcounts, rdispls, MPI_DATATYPE_NULL, recvtypes, comm, NULL);
}

int bdl_bcw_Ialltoallw(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                       const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                       const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                       MPI_Request *request)
{
    if (!recvtypes || (sendbuf != MPI_IN_PLACE && !sendtypes))
        return BDL_BC_THIN;
    return a2a("MPI_Ialltoallw_c", BD_API_ALLTOALLW, sendbuf, sendcounts, sdispls,
               MPI_DATATYPE_NULL, sendtypes, recvbuf, recvcounts, rdispls, MPI_DATATYPE_NULL,
               recvtypes, comm, request);
}

/* ---------------------------------------------------------------- gather, scatter */

static int gatherv(const char *call, const void *sendbuf, MPI_Count sendcount,
                   MPI_Datatype sendtype, void *recvbuf, const MPI_Count *recvcounts,
                   const MPI_Aint *displs, MPI_Datatype recvtype, int root, MPI_Comm comm, int all,
                   MPI_Request *request)
{
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c)
        return BDL_BC_THIN;
    wv_t r = {recvcounts, 0, displs, 0, recvtype, NULL, (int)bdl_bc_size(comm, 1)};
    int here = all || (c->inter ? root == MPI_ROOT : c->rank == root);
    if (!big(&r, 0))
        return BDL_BC_THIN;
    int rc, isc = 0;
    MPI_Datatype w = MPI_DATATYPE_NULL;
    wout_t ro = {0};
    if (sendbuf != MPI_IN_PLACE &&
        (rc = bdl_bc_fit_dt(call, comm, "sendcount", sendcount, &isc, &sendtype, &w)))
        return rc;
    if (!here) /* the arrays are the root's only */
        rc = request
                 ? MPI_Igatherv(sendbuf, isc, sendtype, recvbuf, NULL, NULL, recvtype, root, comm,
                                request)
                 : MPI_Gatherv(sendbuf, isc, sendtype, recvbuf, NULL, NULL, recvtype, root, comm);
    else if (!(rc = build(call, comm, "receive ", &r, 0, &ro)))
        rc = bdl_gatherv_typed(call, sendbuf, isc, sendtype, recvbuf, ro.cnt, ro.idisp, recvtype,
                               ro.t, root, comm, all, request);
    wout_free(&ro);
    bdl_bc_dt_free(&w);
    return rc;
}

int bdl_bcw_Gatherv(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                    int root, MPI_Comm comm)
{
    return gatherv("MPI_Gatherv_c", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                   recvtype, root, comm, 0, NULL);
}

int bdl_bcw_Igatherv(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                     int root, MPI_Comm comm, MPI_Request *request)
{
    return gatherv("MPI_Igatherv_c", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                   recvtype, root, comm, 0, request);
}

int bdl_bcw_Allgatherv(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                       void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                       MPI_Datatype recvtype, MPI_Comm comm)
{
    return gatherv("MPI_Allgatherv_c", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                   recvtype, 0, comm, 1, NULL);
}

int bdl_bcw_Iallgatherv(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return gatherv("MPI_Iallgatherv_c", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                   recvtype, 0, comm, 1, request);
}

static int scatterv(const char *call, const void *sendbuf, const MPI_Count *sendcounts,
                    const MPI_Aint *displs, MPI_Datatype sendtype, void *recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                    MPI_Request *request)
{
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c)
        return BDL_BC_THIN;
    wv_t s = {sendcounts, 0, displs, 0, sendtype, NULL, (int)bdl_bc_size(comm, 1)};
    int here = c->inter ? root == MPI_ROOT : c->rank == root;
    if (!big(&s, 0))
        return BDL_BC_THIN;
    int rc, irc = 0;
    MPI_Datatype w = MPI_DATATYPE_NULL;
    wout_t so = {0};
    if (recvbuf != MPI_IN_PLACE &&
        (rc = bdl_bc_fit_dt(call, comm, "recvcount", recvcount, &irc, &recvtype, &w)))
        return rc;
    if (!here) /* the arrays are the root's only */
        rc = request
                 ? MPI_Iscatterv(sendbuf, NULL, NULL, sendtype, recvbuf, irc, recvtype, root, comm,
                                 request)
                 : MPI_Scatterv(sendbuf, NULL, NULL, sendtype, recvbuf, irc, recvtype, root, comm);
    else if (!(rc = build(call, comm, "send ", &s, 0, &so)))
        rc = bdl_scatterv_typed(call, sendbuf, so.cnt, so.idisp, sendtype, so.t, recvbuf, irc,
                                recvtype, root, comm, request);
    wout_free(&so);
    bdl_bc_dt_free(&w);
    return rc;
}

int bdl_bcw_Scatterv(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                     MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                     MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return scatterv("MPI_Scatterv_c", sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                    recvtype, root, comm, NULL);
}

int bdl_bcw_Iscatterv(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                      MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                      MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    return scatterv("MPI_Iscatterv_c", sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                    recvtype, root, comm, request);
}

/* ---------------------------------------------------------------- reduce_scatter */

static int redscat_big(const MPI_Count *recvcounts, MPI_Comm comm, MPI_Count *total)
{
    int n = (int)bdl_bc_size(comm, 0), any = 0;
    *total = 0;
    for (int i = 0; recvcounts && i < n; i++) {
        any |= recvcounts[i] > INT_MAX;
        *total += recvcounts[i] > 0 ? recvcounts[i] : 0;
    }
    return any;
}

/* Every rank has every count, so all take this path alike: the whole
 * vector is reduced to rank 0, which scatters it (a temporary of the whole
 * vector at rank 0; this path is for entries past INT_MAX only). */
int bdl_bcw_Reduce_scatter(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    const char *call = "MPI_Reduce_scatter_c";
    MPI_Count total;
    if (!redscat_big(recvcounts, comm, &total))
        return BDL_BC_THIN;
    int rc, me, n = (int)bdl_bc_size(comm, 0);
    bdl_comm_t *c = bdl_comm_get(comm);
    if (c && c->inter) /* point-to-point underneath, 64-bit (intercomm.c) */
        return bdl_inter_reduce_scatter(c, comm, call, sendbuf, recvbuf, NULL, recvcounts, -1,
                                        datatype, op);
    for (int i = 0; i < n; i++)
        if (recvcounts[i] < 0)
            return bdl_error(comm, MPI_ERR_COUNT, call, "invalid receive count %lld for rank %d",
                             (long long)recvcounts[i], i);
    bdl_dt_t *t = bdl_dt_lookup(datatype);
    if (!t)
        return bdl_error(comm, MPI_ERR_TYPE, call, "invalid datatype %d", datatype);
    MPI_Comm_rank(comm, &me);
    const void *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    char *tmp = NULL, *base = NULL;
    MPI_Aint *displs = malloc((size_t)n * sizeof *displs);
    if (!displs)
        return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
    for (int i = 0; i < n; i++)
        displs[i] = i ? displs[i - 1] + (MPI_Aint)recvcounts[i - 1] : 0;
    if (me == 0) {
        tmp = bdl_dt_alloc(t, (uint64_t)total, (void **)&base);
        if (!tmp) {
            free(displs);
            return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory for %lld elements",
                             (long long)total);
        }
    }
    rc = MPI_Reduce_c(in, base, total, datatype, op, 0, comm);
    if (rc == MPI_SUCCESS)
        rc = MPI_Scatterv_c(base, recvcounts, displs, datatype, recvbuf, recvcounts[me], datatype,
                            0, comm);
    free(tmp);
    free(displs);
    return rc;
}

/* The nonblocking form takes the counts as they are (coll_reduce.c: its
 * sizes are 64-bit; every rank has the counts, so all take this path). */
int bdl_bcw_Ireduce_scatter(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    const char *call = "MPI_Ireduce_scatter_c";
    MPI_Count total;
    if (!redscat_big(recvcounts, comm, &total))
        return BDL_BC_THIN;
    return bdl_ireduce_scatter_c(call, sendbuf, recvbuf, recvcounts, datatype, op, comm, request);
}

/* ---------------------------------------------------------------- neighbourhood */

/* Every neighbourhood collective is point-to-point blocks (neighbor.c), so
 * the w form with MPI_Aint byte displacements sends and receives the same
 * messages as the v forms. */
static int nbr(const char *call, const void *sendbuf, const wv_t *s, void *recvbuf, const wv_t *r,
               MPI_Comm comm, MPI_Request *request)
{
    if (!big(s, s->bytes) && !big(r, r->bytes))
        return BDL_BC_THIN;
    wout_t so = {0}, ro = {0};
    int rc;
    if (!(rc = build(call, comm, "send ", s, 1, &so)) &&
        !(rc = build(call, comm, "receive ", r, 1, &ro)))
        rc = request ? MPI_Ineighbor_alltoallw(sendbuf, so.cnt, so.adisp, so.t, recvbuf, ro.cnt,
                                               ro.adisp, ro.t, comm, request)
                     : MPI_Neighbor_alltoallw(sendbuf, so.cnt, so.adisp, so.t, recvbuf, ro.cnt,
                                              ro.adisp, ro.t, comm);
    wout_free(&so);
    wout_free(&ro);
    return rc;
}

static int nbr_v(const char *call, const void *sendbuf, const MPI_Count *sc, const MPI_Aint *sd,
                 MPI_Datatype stype, const MPI_Datatype *stypes, void *recvbuf, const MPI_Count *rc,
                 const MPI_Aint *rd, MPI_Datatype rtype, const MPI_Datatype *rtypes, MPI_Comm comm,
                 MPI_Request *request)
{
    int bytes = stypes != NULL;
    wv_t s = {sc, 0, sd, bytes, stype, stypes, (int)bdl_bc_degree(comm, 1)};
    wv_t r = {rc, 0, rd, bytes, rtype, rtypes, (int)bdl_bc_degree(comm, 0)};
    if (!sc || !rc || !sd || !rd || (bytes && !rtypes))
        return BDL_BC_THIN; /* the int form reports it */
    return nbr(call, sendbuf, &s, recvbuf, &r, comm, request);
}

static int nbr_allgatherv(const char *call, const void *sendbuf, MPI_Count sendcount,
                          MPI_Datatype sendtype, void *recvbuf, const MPI_Count *recvcounts,
                          const MPI_Aint *displs, MPI_Datatype recvtype, MPI_Comm comm,
                          MPI_Request *request)
{
    wv_t s = {NULL, sendcount, NULL, 1, sendtype, NULL, (int)bdl_bc_degree(comm, 1)};
    wv_t r = {recvcounts, 0, displs, 0, recvtype, NULL, (int)bdl_bc_degree(comm, 0)};
    if (!recvcounts || !displs || sendbuf == MPI_IN_PLACE)
        return BDL_BC_THIN; /* the int form reports it */
    return nbr(call, sendbuf, &s, recvbuf, &r, comm, request);
}

int bdl_bcw_Neighbor_allgatherv(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                void *recvbuf, const MPI_Count recvcounts[],
                                const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return nbr_allgatherv("MPI_Neighbor_allgatherv_c", sendbuf, sendcount, sendtype, recvbuf,
                          recvcounts, displs, recvtype, comm, NULL);
}

int bdl_bcw_Ineighbor_allgatherv(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, const MPI_Count recvcounts[],
                                 const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                 MPI_Request *request)
{
    return nbr_allgatherv("MPI_Ineighbor_allgatherv_c", sendbuf, sendcount, sendtype, recvbuf,
                          recvcounts, displs, recvtype, comm, request);
}

int bdl_bcw_Neighbor_alltoallv(const void *sendbuf, const MPI_Count sendcounts[],
                               const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                               const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                               MPI_Datatype recvtype, MPI_Comm comm)
{
    return nbr_v("MPI_Neighbor_alltoallv_c", sendbuf, sendcounts, sdispls, sendtype, NULL, recvbuf,
                 recvcounts, rdispls, recvtype, NULL, comm, NULL);
}

int bdl_bcw_Ineighbor_alltoallv(const void *sendbuf, const MPI_Count sendcounts[],
                                const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return nbr_v("MPI_Ineighbor_alltoallv_c", sendbuf, sendcounts, sdispls, sendtype, NULL, recvbuf,
                 recvcounts, rdispls, recvtype, NULL, comm, request);
}

int bdl_bcw_Neighbor_alltoallw(const void *sendbuf, const MPI_Count sendcounts[],
                               const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                               void *recvbuf, const MPI_Count recvcounts[],
                               const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                               MPI_Comm comm)
{
    if (!sendtypes)
        return BDL_BC_THIN;
    return nbr_v("MPI_Neighbor_alltoallw_c", sendbuf, sendcounts, sdispls, MPI_DATATYPE_NULL,
                 sendtypes, recvbuf, recvcounts, rdispls, MPI_DATATYPE_NULL, recvtypes, comm, NULL);
}

int bdl_bcw_Ineighbor_alltoallw(const void *sendbuf, const MPI_Count sendcounts[],
                                const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                void *recvbuf, const MPI_Count recvcounts[],
                                const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                MPI_Comm comm, MPI_Request *request)
{
    if (!sendtypes)
        return BDL_BC_THIN;
    return nbr_v("MPI_Ineighbor_alltoallw_c", sendbuf, sendcounts, sdispls, MPI_DATATYPE_NULL,
                 sendtypes, recvbuf, recvcounts, rdispls, MPI_DATATYPE_NULL, recvtypes, comm,
                 request);
}
