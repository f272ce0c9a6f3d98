/* Collectives on the rank's side, part 1: barrier, broadcast and the
 * reductions.  Each describes the call to the master, PUTs its outgoing
 * pieces through the window and launches its GET plan on the engine
 * (core/nbc.c; the master's side is src/master/coll.c).  Communicators of
 * size one are done locally.  Reductions with user-defined operations run
 * here, as an ordered chain over the communicator's hidden context,
 * because the master cannot call the program's functions. */
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "core.h"
#include "dt.h"
#include "mpi_int.h"
#include "nbc.h"
#include "objects.h"
#include "xfer.h"

/* ---------------------------------------------------------------- barrier, bcast */

static int barrier(const char *call, MPI_Comm comm, MPI_Request *request, int nb_req)
{
    BDL_COLL_GET_COMM(call);
    if (c->inter)
        return request ? bdl_ic_barrier(c, call, request) : bdl_inter_barrier(c, comm);
    if (!request && bdl_lc_eligible(c, 0))
        return bdl_lc_barrier(c, comm, call);
    if (request && bdl_lcn_eligible(c, 0, BD_API_BARRIER))
        return bdl_lcn_barrier(c, comm, call, request);
    int st;
    bd_coll_desc_t d = {.kind = BD_COLL_BARRIER, .api = bdl_coll_api(BD_API_BARRIER, NULL)};
    if (!request && c->size > 1 && bdl_xfer_small(c, &d, NULL, 0, NULL, 0, 0, &st))
        return bdl_nbc_status(comm, call, st);
    bdl_nbc_t nb;
    bdl_nbc_init(&nb, c, call);
    if (c->size > 1)
        bdl_xfer_begin(&nb.xf, c, BD_COLL_BARRIER, 0, 0, 0, 0,
                       bdl_coll_api(BD_API_BARRIER, request));

    return bdl_nbc_launch(&nb, request);
}

int MPI_Barrier(MPI_Comm comm)
{
    BDL_MT_GUARD;
    return barrier("MPI_Barrier", comm, NULL, 0);
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    return barrier("MPI_Ibarrier", comm, request, 1);
}

/* Begin a broadcast of count elements of t at buf from root (size > 1). */
static void bcast_start(bdl_comm_t *c, bdl_nbc_t *nb, void *buf, uint64_t count, bdl_dt_t *t,
                        int root, int api)
{
    bdl_xfer_begin(&nb->xf, c, BD_COLL_BCAST, root, 0, 0, 0, api);
    if (c->rank == root) {
        bdl_put_t p = bdl_put_start(&nb->xf);
        bdl_put_typed(&p, -1, buf, count, t);
        bdl_put_done(&p); /* a nonblocking one's goes with its ARRIVE */
    } else {
        *nb = (bdl_nbc_t){.xf = nb->xf,
                          .comm = nb->comm,
                          .call = nb->call,
                          .size = nb->size,
                          .gkind = BDL_GET_PIECE,
                          .whole = 1,
                          .peer = 0,
                          .buf = buf,
                          .count = count,
                          .t = t};
    }
}

/* Bounded staging of a large blocking broadcast (-coll-stage,
 * docs/design.md "Transient memory of communication"): its part size, or
 * 0 when it is staged whole (small, or too many parts). */
static uint64_t bcast_part(const bdl_comm_t *c, uint64_t bytes)
{
    uint64_t part = bdl_g.hdr->job.coll_stage / 4;
    if (part < BD_BCAST_PART_MIN)
        part = BD_BCAST_PART_MIN;
    if (!bdl_g.hdr->job.coll_stage || c->size < 2 || bytes <= part ||
        (bytes + part - 1) / part > BD_BCAST_PARTS_MAX)
        return 0;
    return part;
}

/* The map of which of a pipelined broadcast's nparts parts were taken. */
static void parts_taken(bdl_nbc_t *nb, uint64_t nparts)
{
    if (!(nb->taken = calloc(nparts, 1)))
        bdl_fatal(MPI_ERR_NO_MEM, "%s: out of memory", nb->call);
}

/* A rank other than the root: it takes the parts into buf. */
static void parts_reader(bdl_nbc_t *nb, void *buf, uint64_t count, bdl_dt_t *t, uint64_t part,
                         uint64_t nparts)
{
    nb->gkind = BDL_GET_PARTS;
    nb->buf = buf;
    nb->count = count;
    nb->t = t;
    nb->part = part;
    nb->nblk = (int)nparts;
    nb->pfirst = 0;
    nb->skip = -1;
    parts_taken(nb, nparts);
}

/* The broadcast in parts: the root puts them in order, and before a part,
 * when the last answer said the instance is past the bound, waits in
 * COLL_TAKE (nothing is offered to it) until readers have taken enough;
 * every other rank takes the parts as they complete, each whole into its
 * place in the buffer, then GETs what is left once the root has put all. */
static void bcast_pipe(bdl_comm_t *c, bdl_nbc_t *nb, void *buf, uint64_t count, bdl_dt_t *t,
                       int root, uint64_t part, MPI_Request *request)
{
    uint64_t total = count * t->psize, nparts = (total + part - 1) / part;
    bdl_xfer_begin_pipe_parts(&nb->xf, c, BD_COLL_BCAST, root, nparts,
                              bdl_coll_api(BD_API_BCAST, request));
    int over = bdl_resp()->flag;
    if (request) {
        /* Nonblocking (one node): the root puts the parts while the staging
         * has room, the rest as a nonblocking all-to-all does (core/nbc.c);
         * the others take the parts as they complete, in MPI_Test, MPI_Wait
         * or before they wait in any other call. */
        nb->pipe_nb = 1;
        if (c->rank == root) {
            nb->pp = bdl_nbc_pipe_new_form(BDL_PP_PARTS, buf, (int)count, NULL, NULL, t, NULL, 0,
                                           root, part, nparts);
            parts_taken(nb, nparts);
        } else {
            parts_reader(nb, buf, count, t, part, nparts);
            nb->pp =
                bdl_nbc_pipe_new_form(BDL_PP_NONE, NULL, 0, NULL, NULL, NULL, NULL, 0, 0, 0, 0);
        }
        nb->pp->over = over;
        bdl_nbc_pipe_put(nb, 3); /* the request goes on with the rest */
        return;
    }
    if (c->rank == root) {
        bdl_put_t p = bdl_put_start(&nb->xf);
        p.over = over;
        for (uint64_t j = 0; j < nparts; j++) {
            if (p.over) {
                bdl_put_flush(&p);
                p.over = 0;
                bdl_nbc_take(nb, 0);
            }
            uint64_t at = j * part;
            bdl_put_span(&p, (int)j, buf, count, t, at, total - at < part ? total - at : part);
        }
        bdl_put_flush(&p);
        return;
    }
    parts_reader(nb, buf, count, t, part, nparts);
    bdl_nbc_take(nb, 1);
}

static void bcast_typed(bdl_comm_t *c, const char *call, void *buf, uint64_t count, bdl_dt_t *t,
                        int root)
{
    if (c->rank != root)
        bdl_coll_discard(buf, count, t);
    if (bdl_lc_eligible(c, count * t->psize)) {
        bdl_lc_bcast(c, (MPI_Comm)(c - bdl_g.comms), call, BD_API_BCAST, buf, count, t, root);
        return;
    }
    bdl_nbc_t nb;
    bdl_nbc_init(&nb, c, call);
    bcast_start(c, &nb, buf, count, t, root, BD_API_BCAST);
    bdl_nbc_launch(&nb, NULL);
}

static int bcast(const char *call, void *buffer, int count, MPI_Datatype datatype, int root,
                 MPI_Comm comm, MPI_Request *request, int nb_req)
{
    BDL_COLL_GET_COMM(call);
    if (c->inter)
        return request ? bdl_ic_bcast(c, comm, call, buffer, count, datatype, root, request)
                       : bdl_inter_bcast(c, comm, buffer, count, datatype, root);
    bdl_dt_t *t = NULL;
    int rc;
    if ((rc = bdl_coll_check_buf(comm, call, count, datatype, &t, "")) ||
        (rc = bdl_coll_check_root(c, comm, call, root)))
        return rc;
    if (c->rank != root)
        bdl_coll_discard(buffer, (uint64_t)count, t);
    if (!request && bdl_lc_eligible(c, (uint64_t)count * t->psize))
        return bdl_lc_bcast(c, comm, call, BD_API_BCAST, buffer, (uint64_t)count, t, root);
    if (request && bdl_lcn_eligible(c, (uint64_t)count * t->psize, BD_API_BCAST))
        return bdl_lcn_bcast(c, comm, call, buffer, (uint64_t)count, t, root, request);
    bdl_nbc_t nb;
    bdl_nbc_init(&nb, c, call);
    uint64_t part =
        request && !bdl_nbc_pipe_eligible(c) ? 0 : bcast_part(c, (uint64_t)count * t->psize);
    if (part) {
        bcast_pipe(c, &nb, buffer, (uint64_t)count, t, root, part, request);
        rc = bdl_nbc_launch(&nb, request);
        if (!request) /* else the request owns it */
            free(nb.taken);
        return rc;
    }
    /* small: one request (BD_REQ_COLL_SMALL); the root's piece is read whole */
    bd_coll_desc_t d = {
        .kind = BD_COLL_BCAST, .root = root, .api = bdl_coll_api(BD_API_BCAST, NULL)};
    int root_here = c->rank == root;
    bdl_small_blk_t blk = {root_here ? -1 : 0, buffer, (uint64_t)count, t, 0, 1};
    if (!request && c->size > 1 && bdl_xfer_small(c, &d, &blk, root_here, &blk, !root_here, 0, &rc))
        return bdl_nbc_status(comm, call, rc);
    if (c->size > 1)
        bcast_start(c, &nb, buffer, (uint64_t)count, t, root, bdl_coll_api(BD_API_BCAST, request));
    return bdl_nbc_launch(&nb, request);
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    BDL_MT_GUARD;
    return bcast("MPI_Bcast", buffer, count, datatype, root, comm, NULL, 0);
}

int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
               MPI_Request *request)
{
    BDL_MT_GUARD;
    return bcast("MPI_Ibcast", buffer, count, datatype, root, comm, request, 1);
}

/* ---------------------------------------------------------------- reductions */

/* Ordered chain for user ops: rank k gets acc(0..k-1) from k-1, folds its
 * own value (acc op v_k, preserving order for non-commutative ops) and
 * passes it on.  prefix (if non-NULL) receives acc(0..k) (Scan) or
 * acc(0..k-1) (exclusive) at each rank; total goes to root (or -1: none). */
static int user_chain(bdl_comm_t *c, const void *in, int count, MPI_Datatype dt, const bdl_dt_t *t,
                      MPI_Op op, bdl_user_op_t *u, void *prefix, int exclusive, void *total,
                      int root)
{
    /* The user function sees buffers laid out as dt, so the accumulators
     * are too; messages carry the packed stream. */
    uint64_t k = (uint64_t)count;
    int ctx = bdl_comm_ictx(c);
    void *acc, *tmp;
    void *acc_mem = bdl_dt_alloc(t, k, &acc), *tmp_mem = bdl_dt_alloc(t, k, &tmp);
    uint64_t n = k * t->psize;
    /* Read in first: in place, it is also prefix or total. */
    bdl_dt_copy(t, in, k, t, acc, k, n);
    if (c->rank > 0) {
        bdl_recv_typed(ctx, c->rank - 1, 1, tmp, k, t, MPI_STATUS_IGNORE);
        if (prefix && exclusive)
            bdl_dt_copy(t, tmp, k, t, prefix, k, n);
        bdl_op_apply(op, u, dt, t, tmp, acc, count); /* acc = acc(0..k-1) op v_k */
    }
    if (prefix && !exclusive)
        bdl_dt_copy(t, acc, k, t, prefix, k, n);
    if (c->rank + 1 < c->size)
        bdl_send_typed(ctx, c->world[c->rank + 1], c->rank, 1, acc, k, t, 0, NULL);
    if (root >= 0) {
        if (c->rank == c->size - 1) {
            if (root == c->rank)
                bdl_dt_copy(t, acc, k, t, total, k, n);
            else
                bdl_send_typed(ctx, c->world[root], c->rank, 2, acc, k, t, 0, NULL);
        } else if (c->rank == root) {
            bdl_recv_typed(ctx, c->size - 1, 2, total, k, t, MPI_STATUS_IGNORE);
        }
    }
    free(acc_mem);
    free(tmp_mem);
    return MPI_SUCCESS;
}

/* Predefined op: the master folds the packed basic elements in rank order
 * (kind REDUCE/ALLREDUCE/SCAN/EXSCAN/REDSCAT); when want, outcount elements
 * of the result, from packed byte out_off on, are unpacked into out.  A
 * blocking one that fits in the window is one request and is done when
 * this returns (nb->done, nb->err). */
static void master_fold(bdl_comm_t *c, bdl_nbc_t *nb, int kind, int api, const void *in,
                        uint64_t count, void *out, uint64_t outcount, uint64_t out_off, bdl_dt_t *t,
                        MPI_Op op, int root, int want)
{
    /* blocking and small: one request (BD_REQ_COLL_SMALL), done here */
    int st;
    bd_coll_desc_t d = {.kind = kind,
                        .root = root,
                        .dtype = t->basic,
                        .op = op,
                        .count = count * t->nelem,
                        .api = api};
    bdl_small_blk_t put = {-1, in, count, t, 0, 0}, get = {-1, out, outcount, t, out_off, 0};
    if (!(api & BD_API_NB) && bdl_xfer_small(c, &d, &put, 1, &get, want ? 1 : 0, 0, &st)) {
        nb->done = 1;
        nb->err = st;
        return;
    }
    bdl_xfer_begin(&nb->xf, c, kind, root, t->basic, op, count * t->nelem, api);
    bdl_put_t p = bdl_put_start(&nb->xf);
    bdl_put_typed(&p, -1, in, count, t);
    bdl_put_done(&p); /* a nonblocking one's goes with its ARRIVE */
    if (want && outcount * t->psize != 0) {
        nb->gkind = BDL_GET_PIECE;
        nb->peer = -1;
        nb->off = out_off;
        nb->buf = out;
        nb->count = outcount;
        nb->t = t;
    }
}

/* A nonblocking reduction with a user op cannot run the chain (that needs
 * the ranks in between), so every rank PUTs its whole input at once, pieces
 * as in a gather (kind GATHER, ALLGATHER or, for reduce-scatter, ALLTOALL
 * with the input's blocks), and a receiving rank folds the pieces it needs
 * in rank order when the collective completes. */
static void user_fold_start(bdl_comm_t *c, bdl_nbc_t *nb, int kind, int root, int api,
                            const void *in, uint64_t count, bdl_dt_t *t, MPI_Datatype dt, MPI_Op op,
                            const bdl_user_op_t *u)
{
    bdl_xfer_begin(&nb->xf, c, kind, root, 0, 0, 0, api);
    bdl_put_t p = bdl_put_start(&nb->xf);
    bdl_put_typed(&p, -1, in, count, t);
    bdl_put_done(&p); /* a nonblocking one's goes with its ARRIVE */
    nb->t = t;
    nb->count = count;
    nb->op = op;
    nb->uop = *u;
    nb->user = 1;
    nb->dt = dt;
}

static int reduce_common(const char *call, const void *sendbuf, void *recvbuf, int count,
                         MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm, int all,
                         MPI_Request *request, int nb_req)
{
    BDL_COLL_GET_COMM(call);
    if (c->inter && request)
        return bdl_ic_reduce(c, comm, call, sendbuf, recvbuf, count, dt, op, root, all, request);
    if (c->inter)
        return all ? bdl_inter_allreduce(c, comm, sendbuf, recvbuf, count, dt, op)
                   : bdl_inter_reduce(c, comm, sendbuf, recvbuf, count, dt, op, root);
    int rc;
    bdl_dt_t *t = NULL;
    bdl_user_op_t *u;
    if ((rc = bdl_coll_check_buf(comm, call, count, dt, &t, "")) ||
        (rc = bdl_op_check(comm, call, op, dt, t, &u)))
        return rc;
    if (!all && (rc = bdl_coll_check_root(c, comm, call, root)))
        return rc;
    int receives = all || c->rank == root;
    uint64_t k = (uint64_t)count;
    if (sendbuf == MPI_IN_PLACE && !receives)
        return bdl_error(comm, MPI_ERR_BUFFER, call, "MPI_IN_PLACE is only allowed at the root");
    /* NULL is MPI_BOTTOM: an error only where a predefined type would read
     * from it (a count of 0 reads nothing). */
    const void *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    if (!in && k && t->predefined)
        return bdl_error(comm, MPI_ERR_BUFFER, call, "NULL %s buffer with count %d",
                         sendbuf == MPI_IN_PLACE ? "receive" : "send", count);
    if (receives && (rc = bdl_coll_check_alias(comm, call, sendbuf, k, t, recvbuf, k, t)))
        return rc;
    if (receives && sendbuf != MPI_IN_PLACE)
        bdl_coll_discard(recvbuf, k, t);
    bdl_fold_op_t o = {op, u, dt};
    if (!request && (!u || k * t->psize <= BDL_LC_MAX) && bdl_lc_eligible(c, k * t->psize))
        return bdl_lc_reduce(c, comm, call, in, recvbuf, k, t, &o, root, all);
    if (request && bdl_lcn_eligible(c, k * t->psize, all && !u ? BD_API_ALLREDUCE : BD_API_REDUCE))
        return bdl_lcn_reduce(c, comm, call, in, recvbuf, k, t, &o, root, all, request);
    int api = bdl_coll_api(all ? BD_API_ALLREDUCE : BD_API_REDUCE, request);
    bdl_nbc_t nb;
    bdl_nbc_init(&nb, c, call);
    if (c->size == 1) {
        if (in != recvbuf)
            bdl_dt_copy(t, in, k, t, recvbuf, k, k * t->psize);
    } else if (u && !request) {
        /* The chain reads in before it writes the total, so in place is fine. */
        int r0 = all ? 0 : root;
        user_chain(c, in, count, dt, t, op, u, NULL, 0, receives ? recvbuf : NULL, r0);
        if (all)
            bcast_typed(c, call, recvbuf, k, t, 0);
        return MPI_SUCCESS;
    } else if (u) {
        user_fold_start(c, &nb, all ? BD_COLL_ALLGATHER : BD_COLL_GATHER, all ? 0 : root, api, in,
                        k, t, dt, op, u);
        if (receives) {
            nb.gkind = BDL_GET_FOLD;
            nb.first = 0;
            nb.last = c->size - 1;
            nb.buf = recvbuf;
        }
    } else {
        /* The master has all of in before it answers with the result: in place is fine. */
        master_fold(c, &nb, all ? BD_COLL_ALLREDUCE : BD_COLL_REDUCE, api, in, k, recvbuf, k, 0, t,
                    op, all ? 0 : root, receives);
    }
    return bdl_nbc_launch(&nb, request);
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm)
{
    BDL_MT_GUARD;
    return reduce_common("MPI_Reduce", sendbuf, recvbuf, count, datatype, op, root, comm, 0, NULL,
                         0);
}

int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    return reduce_common("MPI_Ireduce", sendbuf, recvbuf, count, datatype, op, root, comm, 0,
                         request, 1);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm)
{
    BDL_MT_GUARD;
    return reduce_common("MPI_Allreduce", sendbuf, recvbuf, count, datatype, op, 0, comm, 1, NULL,
                         0);
}

int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    return reduce_common("MPI_Iallreduce", sendbuf, recvbuf, count, datatype, op, 0, comm, 1,
                         request, 1);
}

static int scan_common(const char *call, const void *sendbuf, void *recvbuf, int count,
                       MPI_Datatype dt, MPI_Op op, MPI_Comm comm, int exclusive,
                       MPI_Request *request, int nb_req)
{
    BDL_COLL_GET_COMM(call);
    if (c->inter)
        return bdl_error(comm, MPI_ERR_COMM, call, "not defined on intercommunicator %d", comm);
    int rc;
    bdl_dt_t *t = NULL;
    bdl_user_op_t *u;
    if ((rc = bdl_coll_check_buf(comm, call, count, dt, &t, "")) ||
        (rc = bdl_op_check(comm, call, op, dt, t, &u)))
        return rc;
    uint64_t k = (uint64_t)count;
    const void *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    if ((rc = bdl_coll_check_alias(comm, call, sendbuf, k, t, recvbuf, k, t)))
        return rc;
    if (sendbuf != MPI_IN_PLACE && !(exclusive && c->rank == 0))
        bdl_coll_discard(recvbuf, k, t);
    bdl_fold_op_t o = {op, u, dt};
    if (!request && bdl_lc_scan_eligible(c, k * t->psize))
        return bdl_lc_scan(c, comm, call, in, recvbuf, k, t, &o, exclusive);
    if (request && bdl_lcn_eligible(c, k * t->psize, exclusive ? BD_API_EXSCAN : BD_API_SCAN))
        return bdl_lcn_scan(c, comm, call, in, recvbuf, k, t, &o, exclusive, request);
    int api = bdl_coll_api(exclusive ? BD_API_EXSCAN : BD_API_SCAN, request);
    bdl_nbc_t nb;
    bdl_nbc_init(&nb, c, call);
    if (c->size == 1) {
        if (!exclusive && in != recvbuf)
            bdl_dt_copy(t, in, k, t, recvbuf, k, k * t->psize);
    } else if (u && !request) {
        user_chain(c, in, count, dt, t, op, u, (exclusive && c->rank == 0) ? NULL : recvbuf,
                   exclusive, NULL, -1);
        return MPI_SUCCESS;
    } else if (u) {
        user_fold_start(c, &nb, BD_COLL_ALLGATHER, 0, api, in, k, t, dt, op, u);
        if (!(exclusive && c->rank == 0)) {
            nb.gkind = BDL_GET_FOLD;
            nb.first = 0;
            nb.last = exclusive ? c->rank - 1 : c->rank;
            nb.buf = recvbuf;
        }
    } else {
        master_fold(c, &nb, exclusive ? BD_COLL_EXSCAN : BD_COLL_SCAN, api, in, k, recvbuf, k, 0, t,
                    op, 0, !(exclusive && c->rank == 0));
    }
    return bdl_nbc_launch(&nb, request);
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm)
{
    BDL_MT_GUARD;
    return scan_common("MPI_Scan", sendbuf, recvbuf, count, datatype, op, comm, 0, NULL, 0);
}

int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    return scan_common("MPI_Iscan", sendbuf, recvbuf, count, datatype, op, comm, 0, request, 1);
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm)
{
    BDL_MT_GUARD;
    return scan_common("MPI_Exscan", sendbuf, recvbuf, count, datatype, op, comm, 1, NULL, 0);
}

int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    return scan_common("MPI_Iexscan", sendbuf, recvbuf, count, datatype, op, comm, 1, request, 1);
}

/* counts, or lcounts (MPI_Ireduce_scatter_c with a count past INT_MAX,
 * nonblocking only), or block for every rank. */
static int redscat(const char *call, const void *sendbuf, void *recvbuf, const int counts[],
                   const MPI_Count lcounts[], int block, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                   MPI_Request *request, int nb_req)
{
    BDL_COLL_GET_COMM(call);
    if (c->inter && request)
        return bdl_ic_redscat(c, comm, call,
                              block >= 0 ? BD_API_REDUCE_SCATTER_BLOCK : BD_API_REDUCE_SCATTER,
                              sendbuf, recvbuf, counts, lcounts, block, dt, op, request);
    if (c->inter)
        return bdl_inter_reduce_scatter(c, comm, call, sendbuf, recvbuf, counts, lcounts, block, dt,
                                        op);
    int rc;
    bdl_dt_t *t = NULL;
    bdl_user_op_t *u;
    if (block < 0 && !counts && !lcounts)
        return bdl_error(comm, MPI_ERR_ARG, call, "NULL recvcounts");
    if ((rc = bdl_coll_check_buf(comm, call, block >= 0 ? block : 0, dt, &t, "")) ||
        (rc = bdl_op_check(comm, call, op, dt, t, &u)))
        return rc;
    uint64_t total = 0, myoff = 0, mine = 0;
    for (int r = 0; lcounts && r < c->size; r++) {
        if (lcounts[r] < 0)
            return bdl_error(comm, MPI_ERR_COUNT, call, "invalid count %lld for rank %d",
                             (long long)lcounts[r], r);
        myoff += r < c->rank ? (uint64_t)lcounts[r] : 0;
        total += (uint64_t)lcounts[r];
        mine = r == c->rank ? (uint64_t)lcounts[r] : mine;
    }
    if (!lcounts &&
        (rc = bdl_coll_redscat_sizes(c, comm, call, counts, block, &total, &myoff, &mine)))
        return rc;
    const void *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    if ((rc = bdl_coll_check_alias(comm, call, sendbuf, total, t, recvbuf, mine, t)))
        return rc;
    if (sendbuf != MPI_IN_PLACE)
        bdl_coll_discard(recvbuf, mine, t);
    int api =
        bdl_coll_api(block >= 0 ? BD_API_REDUCE_SCATTER_BLOCK : BD_API_REDUCE_SCATTER, request);
    if (!lcounts && !u && !request && c->size > 1 && t->nelem && t->psize % t->nelem == 0 &&
        bdl_lc_eligible(c, UINT64_MAX))
        return bdl_lc_redscat(c, comm, call, api, in, recvbuf, counts, block, t, op);
    bdl_nbc_t nb;
    bdl_nbc_init(&nb, c, call);
    if (c->size == 1) {
        if (in != recvbuf)
            bdl_dt_copy(t, in, total, t, recvbuf, total, total * t->psize);
    } else if (u && !request) {
        /* Fold to rank 0 along the ordered chain (which reads in first, so
         * in place is fine), then scatter the pieces. */
        void *full = NULL, *full_mem = c->rank == 0 ? bdl_dt_alloc(t, total, &full) : NULL;
        user_chain(c, in, (int)total, dt, t, op, u, NULL, 0, full, 0);
        int *cnt = malloc((size_t)c->size * sizeof(int)),
            *dsp = malloc((size_t)c->size * sizeof(int));
        if (!cnt || !dsp)
            bdl_fatal(MPI_ERR_NO_MEM, "out of memory");
        int off = 0;
        for (int r = 0; r < c->size; r++) {
            cnt[r] = block >= 0 ? block : counts[r];
            dsp[r] = off;
            off += cnt[r];
        }
        MPI_Scatterv(full, cnt, dsp, dt, recvbuf, (int)mine, dt, 0, comm);
        free(cnt);
        free(dsp);
        free(full_mem);
        return MPI_SUCCESS;
    } else if (u) {
        /* Every rank sends each rank its block; each folds the blocks it gets. */
        bdl_xfer_begin(&nb.xf, c, BD_COLL_ALLTOALL, 0, 0, 0, 0, api);
        bdl_put_t p = bdl_put_start(&nb.xf);
        uint64_t off = 0;
        for (int r = 0; r < c->size; r++) {
            uint64_t k = (uint64_t)(block >= 0 ? block : counts ? counts[r] : lcounts[r]);
            bdl_put_typed(&p, r, bdl_at(in, (int64_t)off * t->extent), k, t);
            off += k;
        }
        bdl_put_flush(&p);
        nb.gkind = BDL_GET_FOLD;
        nb.first = 0;
        nb.last = c->size - 1;
        nb.buf = recvbuf;
        nb.t = t;
        nb.count = mine;
        nb.op = op;
        nb.uop = *u;
        nb.user = 1;
        nb.dt = dt;
    } else {
        /* The master has all of in before it answers: in place is fine. */
        master_fold(c, &nb, BD_COLL_REDSCAT, api, in, total, recvbuf, mine, myoff * t->psize, t, op,
                    0, 1);
    }
    return bdl_nbc_launch(&nb, request);
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    BDL_MT_GUARD;
    if (recvcount < 0)
        return bdl_error(comm, MPI_ERR_COUNT, "MPI_Reduce_scatter_block", "invalid count %d",
                         recvcount);
    return redscat("MPI_Reduce_scatter_block", sendbuf, recvbuf, NULL, NULL, recvcount, datatype,
                   op, comm, NULL, 0);
}

int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    if (recvcount < 0)
        return bdl_error(comm, MPI_ERR_COUNT, "MPI_Ireduce_scatter_block", "invalid count %d",
                         recvcount);
    return redscat("MPI_Ireduce_scatter_block", sendbuf, recvbuf, NULL, NULL, recvcount, datatype,
                   op, comm, request, 1);
}

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    BDL_MT_GUARD;
    return redscat("MPI_Reduce_scatter", sendbuf, recvbuf, recvcounts, NULL, -1, datatype, op, comm,
                   NULL, 0);
}

int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    return redscat("MPI_Ireduce_scatter", sendbuf, recvbuf, recvcounts, NULL, -1, datatype, op,
                   comm, request, 1);
}

int bdl_ireduce_scatter_c(const char *call, const void *sendbuf, void *recvbuf,
                          const MPI_Count recvcounts[], MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                          MPI_Request *request)
{
    return redscat(call, sendbuf, recvbuf, NULL, recvcounts, -1, dt, op, comm, request, 1);
}
