/* Nonblocking collectives on intercommunicators. */
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "core.h"
#include "dt.h"
#include "mpi_int.h"
#include "nbc.h"
#include "objects.h"
#include "xfer.h"

/* Nonblocking collectives on an intercommunicator run on its union, the
 * hidden intracommunicator of both groups (c->ucomm), as one instance of a
 * gather-to-all: every rank PUTs at most one piece at the call, and once the
 * instance is complete GETs from the remote group's pieces what it needs.
 * The master progresses the instance after the call like any other
 * nonblocking collective, so nothing waits for the program to call MPI
 * again.  A piece that holds different data for each remote rank (scatter,
 * all-to-all) starts with a table of where each block starts and ends, so a
 * receiver needs no counts but its own.  Reductions fold the remote group's
 * pieces in rank order in the receiving rank.  The blocking collectives
 * stay in intercomm.c (point-to-point between the groups' leaders). */

typedef struct {
    bdl_comm_t *c; /* the intercommunicator */
    bdl_nbc_t nb;
    bdl_put_t p;
} icoll_t;

static void ic_begin(icoll_t *x, bdl_comm_t *c, const char *call, int kind, int api)
{
    bdl_comm_t *u = bdl_comm_get(c->ucomm);
    x->c = c;
    bdl_nbc_init(&x->nb, u, call);
    bdl_xfer_begin(&x->nb.xf, u, kind, 0, 0, 0, 0, api | BD_API_NB);
    x->p = bdl_put_start(&x->nb.xf);
}

/* BDL_GET_BLOCKS or BDL_GET_TBLOCKS over the remote group's ranks. */
static void ic_blocks(icoll_t *x, int gkind, void *buf, int count, const int *counts,
                      const int *displs, bdl_dt_t *t)
{
    bdl_nbc_t *nb = &x->nb;
    nb->gkind = gkind;
    nb->nblk = x->c->rsize;
    nb->pfirst = x->c->roff;
    nb->skip = -1;
    nb->tidx = x->c->rank;
    nb->tn = x->c->size + 1;
    nb->buf = buf;
    nb->count = (uint64_t)count;
    nb->counts = (int *)counts;
    nb->displs = (int *)displs;
    nb->t = t;
}

/* BDL_GET_FOLD of count elements from byte off of every remote rank's piece. */
static void ic_fold(icoll_t *x, void *buf, uint64_t count, uint64_t off, bdl_dt_t *t,
                    MPI_Datatype dt, MPI_Op op, const bdl_user_op_t *u)
{
    bdl_nbc_t *nb = &x->nb;
    nb->gkind = BDL_GET_FOLD;
    nb->first = x->c->roff;
    nb->last = x->c->roff + x->c->rsize - 1;
    nb->off = off;
    nb->buf = buf;
    nb->count = count;
    nb->t = t;
    nb->dt = dt;
    nb->op = op;
    if (u) {
        nb->user = 1;
        nb->uop = *u;
    }
}

/* PUT n blocks as one piece: a table of n + 1 byte offsets (block j is
 * bytes [tab[j], tab[j+1]) of the data after the table), then the blocks. */
static void put_table(bdl_put_t *p, int n, const void *buf, int count, const int *counts,
                      const int *displs, const int *bdispls, const bdl_dt_t *t, bdl_dt_t *const *tv)
{
    uint64_t *tab = malloc((size_t)(n + 1) * sizeof *tab);
    if (!tab)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory in a collective");
    tab[0] = 0;
    for (int j = 0; j < n; j++)
        tab[j + 1] = tab[j] + bdl_vcount(counts, count, j) * (tv ? tv[j] : t)->psize;
    uint64_t head = 8 * (uint64_t)(n + 1), total = head + tab[n];
    bdl_put_part(p, -1, tab, head, bdl_dt_byte(), 0, total);
    for (int j = 0; j < n; j++) {
        const bdl_dt_t *tj = tv ? tv[j] : t;
        const char *b = bdl_at(buf, bdispls ? bdispls[j] : bdl_voff(displs, count, j, tj));
        bdl_put_part(p, -1, b, bdl_vcount(counts, count, j), tj, head + tab[j], total);
    }
    free(tab);
}

static int ic_check_root(bdl_comm_t *c, MPI_Comm comm, const char *call, int root)
{
    if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < c->rsize))
        return MPI_SUCCESS;
    return bdl_error(comm, MPI_ERR_ROOT, call,
                     "invalid root %d on an intercommunicator (MPI_ROOT, MPI_PROC_NULL or a rank "
                     "of the remote group of size %d)",
                     root, c->rsize);
}

static int ic_no_in_place(MPI_Comm comm, const char *call, const void *buf)
{
    if (buf == MPI_IN_PLACE)
        return bdl_error(comm, MPI_ERR_BUFFER, call,
                         "MPI_IN_PLACE is not allowed on an intercommunicator");
    return MPI_SUCCESS;
}

int bdl_ic_barrier(bdl_comm_t *c, const char *call, MPI_Request *request)
{
    icoll_t x;
    ic_begin(&x, c, call, BD_COLL_BARRIER, BD_API_BARRIER);
    return bdl_nbc_launch(&x.nb, request);
}

int bdl_ic_bcast(bdl_comm_t *c, MPI_Comm comm, const char *call, void *buf, int count,
                 MPI_Datatype dt, int root, MPI_Request *request)
{
    bdl_dt_t *t = NULL;
    int rc;
    if ((rc = ic_check_root(c, comm, call, root)) ||
        (root != MPI_PROC_NULL && (rc = bdl_coll_check_buf(comm, call, count, dt, &t, ""))))
        return rc;
    icoll_t x;
    ic_begin(&x, c, call, BD_COLL_ALLGATHER, BD_API_BCAST);
    if (root == MPI_ROOT) {
        bdl_put_typed(&x.p, -1, buf, (uint64_t)count, t);
        bdl_put_flush(&x.p);
    } else if (root >= 0) {
        x.nb.gkind = BDL_GET_PIECE;
        x.nb.peer = c->roff + root;
        x.nb.buf = buf;
        x.nb.count = (uint64_t)count;
        x.nb.t = t;
    }
    return bdl_nbc_launch(&x.nb, request);
}

/* Gather(v) (all = 0: the root receives a block from every remote rank) and
 * Allgather(v) (every rank does). */
int bdl_ic_gather(bdl_comm_t *c, MPI_Comm comm, const char *call, int api, const void *sendbuf,
                  int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  const int *recvcounts, const int *displs, MPI_Datatype recvtype,
                  bdl_dt_t *const *tv, int root, int all, MPI_Request *request)
{
    bdl_dt_t *st = NULL, *rt = NULL;
    int rc;
    if (!all && (rc = ic_check_root(c, comm, call, root)))
        return rc;
    int sends = all || root >= 0, recvs = all || root == MPI_ROOT;
    if (sends && ((rc = ic_no_in_place(comm, call, sendbuf)) ||
                  (rc = bdl_coll_check_buf(comm, call, sendcount, sendtype, &st, "send"))))
        return rc;
    if (recvs && ((rc = bdl_coll_check_buf(comm, call, recvcounts ? 0 : recvcount, recvtype, &rt,
                                           "receive")) ||
                  (recvcounts && (rc = bdl_coll_check_counts(comm, call, recvcounts, displs,
                                                             c->rsize, "receive ")))))
        return rc;
    icoll_t x;
    ic_begin(&x, c, call, BD_COLL_ALLGATHER, api);
    if (sends) {
        bdl_put_typed(&x.p, -1, sendbuf, (uint64_t)sendcount, st);
        bdl_put_flush(&x.p);
    }
    if (recvs) {
        ic_blocks(&x, BDL_GET_BLOCKS, recvbuf, recvcount, recvcounts, tv ? NULL : displs, rt);
        x.nb.tv = (bdl_dt_t **)tv; /* bdl_nbc_launch keeps copies */
        x.nb.bdispls = tv ? (int *)displs : NULL;
    }
    return bdl_nbc_launch(&x.nb, request);
}

int bdl_ic_scatter(bdl_comm_t *c, MPI_Comm comm, const char *call, int api, const void *sendbuf,
                   int sendcount, const int *sendcounts, const int *displs, MPI_Datatype sendtype,
                   bdl_dt_t *const *tv, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                   int root, MPI_Request *request)
{
    bdl_dt_t *st = NULL, *rt = NULL;
    int rc;
    if ((rc = ic_check_root(c, comm, call, root)))
        return rc;
    if (root == MPI_ROOT &&
        ((rc = bdl_coll_check_buf(comm, call, sendcounts ? 0 : sendcount, sendtype, &st, "send")) ||
         (sendcounts &&
          (rc = bdl_coll_check_counts(comm, call, sendcounts, displs, c->rsize, "send ")))))
        return rc;
    if (root >= 0 && ((rc = ic_no_in_place(comm, call, recvbuf)) ||
                      (rc = bdl_coll_check_buf(comm, call, recvcount, recvtype, &rt, "receive"))))
        return rc;
    icoll_t x;
    ic_begin(&x, c, call, BD_COLL_ALLGATHER, api);
    if (root == MPI_ROOT) {
        put_table(&x.p, c->rsize, sendbuf, sendcount, sendcounts, tv ? NULL : displs,
                  tv ? displs : NULL, st, tv);
        bdl_put_flush(&x.p);
    } else if (root >= 0) {
        ic_blocks(&x, BDL_GET_TBLOCKS, recvbuf, recvcount, NULL, NULL, rt);
        x.nb.nblk = 1;
        x.nb.pfirst = c->roff + root;
    }
    return bdl_nbc_launch(&x.nb, request);
}

/* Alltoall(v, w): each rank PUTs a table and a block for every remote rank. */
int bdl_ic_alltoall(bdl_comm_t *c, MPI_Comm comm, const char *call, int api, bdl_a2a_side_t *s,
                    bdl_a2a_side_t *rv, int vector, MPI_Request *request)
{
    int n = c->rsize, rc;
    bdl_dt_t **stv = NULL, **rtv = NULL, *st = NULL, *rt = NULL;
    if ((rc = ic_no_in_place(comm, call, s->buf)))
        return rc;
    if (vector && ((rc = bdl_coll_check_counts(comm, call, s->counts, s->displs, n, "send ")) ||
                   (rc = bdl_coll_check_counts(comm, call, rv->counts, rv->displs, n, "receive "))))
        return rc;
    if (s->types) {
        stv = malloc((size_t)n * sizeof *stv);
        rtv = malloc((size_t)n * sizeof *rtv);
        if (!stv || !rtv)
            bdl_fatal(MPI_ERR_NO_MEM, "%s: out of memory", call);
        for (int j = 0; j < n && !rc; j++)
            if (!(rc = bdl_dt_check(comm, call, "send", s->types[j], &stv[j])))
                rc = bdl_dt_check(comm, call, "receive", rv->types[j], &rtv[j]);
    } else if (!(rc =
                     bdl_coll_check_buf(comm, call, vector ? 0 : s->count, s->type, &st, "send"))) {
        rc = bdl_coll_check_buf(comm, call, vector ? 0 : rv->count, rv->type, &rt, "receive");
    }
    if (!rc) {
        icoll_t x;
        ic_begin(&x, c, call, BD_COLL_ALLGATHER, api);
        const int *sc = vector ? s->counts : NULL, *rc_ = vector ? rv->counts : NULL;
        put_table(&x.p, n, s->buf, s->count, sc, s->types ? NULL : (vector ? s->displs : NULL),
                  s->types ? s->displs : NULL, st, stv);
        bdl_put_flush(&x.p);
        ic_blocks(&x, BDL_GET_TBLOCKS, (void *)rv->buf, rv->count, rc_,
                  rv->types ? NULL : (vector ? rv->displs : NULL), rt);
        if (rv->types) {
            x.nb.tv = rtv;
            x.nb.bdispls = (int *)rv->displs;
        }
        rc = bdl_nbc_launch(&x.nb, request);
    }
    free(stv);
    free(rtv);
    return rc;
}

/* Reduce (all = 0: the root receives the reduction of the remote group's
 * data) and Allreduce (every rank does). */
int bdl_ic_reduce(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *sendbuf,
                  void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root, int all,
                  MPI_Request *request)
{
    bdl_dt_t *t = NULL;
    bdl_user_op_t *u = NULL;
    int rc;
    if (!all && (rc = ic_check_root(c, comm, call, root)))
        return rc;
    if (!all && root == MPI_PROC_NULL) {
        icoll_t x;
        ic_begin(&x, c, call, BD_COLL_ALLGATHER, all ? BD_API_ALLREDUCE : BD_API_REDUCE);
        return bdl_nbc_launch(&x.nb, request);
    }
    int sends = all || root >= 0, recvs = all || root == MPI_ROOT;
    if ((sends && (rc = ic_no_in_place(comm, call, sendbuf))) ||
        (rc = bdl_coll_check_buf(comm, call, count, dt, &t, "")) ||
        (rc = bdl_op_check(comm, call, op, dt, t, &u)))
        return rc;
    icoll_t x;
    ic_begin(&x, c, call, BD_COLL_ALLGATHER, all ? BD_API_ALLREDUCE : BD_API_REDUCE);
    if (sends) {
        bdl_put_typed(&x.p, -1, sendbuf, (uint64_t)count, t);
        bdl_put_flush(&x.p);
    }
    if (recvs)
        ic_fold(&x, recvbuf, (uint64_t)count, 0, t, dt, op, u);
    return bdl_nbc_launch(&x.nb, request);
}

/* Reduce_scatter(_block): each group gets the reduction of the other
 * group's vectors, scattered by its own counts. */
int bdl_ic_redscat(bdl_comm_t *c, MPI_Comm comm, const char *call, int api, const void *sendbuf,
                   void *recvbuf, const int *counts, const MPI_Count *lcounts, int block,
                   MPI_Datatype dt, MPI_Op op, MPI_Request *request)
{
    bdl_dt_t *t = NULL;
    bdl_user_op_t *u = NULL;
    int rc;
    if (block < 0 && !counts && !lcounts)
        return bdl_error(comm, MPI_ERR_ARG, call, "NULL recvcounts");
    if ((rc = ic_no_in_place(comm, call, sendbuf)) ||
        (rc = bdl_coll_check_buf(comm, call, block >= 0 ? block : 0, dt, &t, "")) ||
        (rc = bdl_op_check(comm, call, op, dt, t, &u)))
        return rc;
    uint64_t total = 0, myoff = 0, mine = 0;
    for (int r = 0; lcounts && r < c->size; r++) {
        if (lcounts[r] < 0)
            return bdl_error(comm, MPI_ERR_COUNT, call, "invalid count %lld for rank %d",
                             (long long)lcounts[r], r);
        myoff += r < c->rank ? (uint64_t)lcounts[r] : 0;
        total += (uint64_t)lcounts[r];
    }
    if (lcounts)
        mine = (uint64_t)lcounts[c->rank];
    else if ((rc = bdl_coll_redscat_sizes(c, comm, call, counts, block, &total, &myoff, &mine)))
        return rc;
    icoll_t x;
    ic_begin(&x, c, call, BD_COLL_ALLGATHER, api);
    bdl_put_typed(&x.p, -1, sendbuf, total, t);
    bdl_put_flush(&x.p);
    ic_fold(&x, recvbuf, mine, myoff * t->psize, t, dt, op, u);
    return bdl_nbc_launch(&x.nb, request);
}
