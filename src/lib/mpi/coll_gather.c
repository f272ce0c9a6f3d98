/* Collectives on the rank's side, part 2: the gather, scatter and
 * all-to-all families (see coll_reduce.c for how they run). */
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "core.h"
#include "dt.h"
#include "mpi_int.h"
#include "nbc.h"
#include "objects.h"
#include "xfer.h"

/* This rank's own block of a gather, scatter or all-to-all goes straight
 * from its send buffer to its receive buffer.  A nonblocking call copies it
 * at once (its completion is the engine's).  A blocking call copies it
 * when that moves the fewest bytes if the rank is unloaded while it waits:
 * - before the wait, the copy is stored with the receive buffer and read
 *   back (2 x the block) when the GETs touch that buffer;
 * - after it, the send buffer, unloaded meanwhile, is read back to give the
 *   block: only the block's sbpages under LRLW, but the whole allocation
 *   under the AR strategies (PageRank's Alltoallv at D/M 8.5, 16 ranks:
 *   its send buffers, 16 times their own blocks, 54 MB per iteration, 9%
 *   of what the manager read; docs/performance.md, issue 13 session 14).
 * So before under AR when the send block is managed memory, else after. */
typedef struct own_copy {
    const bdl_dt_t *st, *rt;
    const void *sbuf;
    void *rbuf;
    uint64_t scount, rcount, len;
    int on;
} own_copy_t;

static void own_do(own_copy_t *o)
{
    if (o->on)
        bdl_dt_copy(o->st, o->sbuf, o->scount, o->rt, o->rbuf, o->rcount, o->len);
    o->on = 0;
}

static int own_launch(bdl_nbc_t *nb, MPI_Request *request, own_copy_t *o)
{
    if (request || (o->on && o->len && bdl_lib_mem_loads_whole(o->sbuf)))
        own_do(o);
    int rc = bdl_nbc_launch(nb, request);
    own_do(o);
    return rc;
}

/* Block r of the v side of a gather or scatter, and its type: with
 * per-peer types tv (the large-count calls' entries past INT_MAX,
 * mpi/bigcount_arr.c) displs are in bytes, else in extents of t. */
static char *vblk(const void *buf, const int *displs, int count, int r, const bdl_dt_t *t,
                  bdl_dt_t *const *tv)
{
    return bdl_at(buf, tv ? displs[r] : bdl_voff(displs, count, r, t));
}

static const bdl_dt_t *vtype(const bdl_dt_t *t, bdl_dt_t *const *tv, int r)
{
    return tv ? tv[r] : t;
}

/* The v side's blocks of every rank but skip, as whole pieces of a small
 * collective (bdl_xfer_small) into out; returns how many. */
static int vblocks(bdl_small_blk_t *out, const void *buf, const int *counts, const int *displs,
                   int count, const bdl_dt_t *t, bdl_dt_t *const *tv, int size, int skip)
{
    int n = 0;
    for (int r = 0; r < size; r++)
        if (r != skip)
            out[n++] = (bdl_small_blk_t){.peer = r,
                                         .buf = vblk(buf, displs, count, r, t, tv),
                                         .count = bdl_vcount(counts, count, r),
                                         .t = vtype(t, tv, r),
                                         .whole = 1};
    return n;
}

/* Bounded staging of an allgather whose blocks are larger than a part (a
 * quarter of -coll-stage, at least BD_BCAST_PART_MIN; session 21): how
 * many parts each block goes in, the same at every rank (computed from
 * the receive counts, which MPI makes equal everywhere), or 0 when no
 * block is larger than a part.  The master keeps a state per piece and
 * reader, so the parts of all blocks are kept to 2^26 / size^2; with
 * more, the part grows. */
static uint64_t ag_parts(const bdl_comm_t *c, int count, const int *counts, const bdl_dt_t *t,
                         bdl_dt_t *const *tv, uint64_t *part)
{
    uint64_t maxb = 0, p = bdl_g.hdr->job.coll_stage / 4;
    for (int r = 0; r < c->size; r++) {
        uint64_t b = bdl_vcount(counts, count, r) * vtype(t, tv, r)->psize;
        maxb = b > maxb ? b : maxb;
    }
    if (p < BD_BCAST_PART_MIN)
        p = BD_BCAST_PART_MIN;
    uint64_t cap = ((uint64_t)1 << 26) / ((uint64_t)c->size * (uint64_t)c->size);
    if (cap > BD_BCAST_PARTS_MAX)
        cap = BD_BCAST_PARTS_MAX;
    if (maxb <= p || cap < 2)
        return 0;
    uint64_t n = (maxb + p - 1) / p;
    if (n > cap) {
        n = cap;
        p = (maxb + n - 1) / n;
        n = (maxb + p - 1) / p;
    }
    *part = p;
    return n;
}

/* A rank that takes its one block of a pipelined scatter from the root. */
static void root_block_reader(bdl_nbc_t *nb, int root, void *recvbuf, int recvcount, bdl_dt_t *rt)
{
    nb->gkind = BDL_GET_BLOCKS;
    nb->whole = 1;
    nb->nblk = 1;
    nb->pfirst = root;
    nb->skip = -1;
    nb->buf = recvbuf;
    nb->count = (uint64_t)recvcount;
    nb->t = rt;
    if (!(nb->taken = calloc(1, 1)))
        bdl_fatal(MPI_ERR_NO_MEM, "%s: out of memory", nb->call);
}

/* ---------------------------------------------------------------- gather family */

static int gather_common(const char *call, int api, const void *sendbuf, int sendcount,
                         MPI_Datatype sendtype, void *recvbuf, int recvcount,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                         int root, MPI_Comm comm, int all, int vector, MPI_Request *request,
                         int nb_req, bdl_dt_t **tv)
{
    BDL_COLL_GET_COMM(call);
    if (c->inter && request)
        return bdl_ic_gather(c, comm, call, api, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                             vector ? recvcounts : NULL, vector ? displs : NULL, recvtype, tv, root,
                             all, request);
    if (c->inter)
        return all ? bdl_inter_allgather(c, comm, call, sendbuf, sendcount, sendtype, recvbuf,
                                         recvcount, vector ? recvcounts : NULL,
                                         vector ? displs : NULL, recvtype, tv)
                   : bdl_inter_gather(c, comm, call, sendbuf, sendcount, sendtype, recvbuf,
                                      recvcount, vector ? recvcounts : NULL, vector ? displs : NULL,
                                      recvtype, tv, root);
    int rc;
    bdl_dt_t *st = NULL, *rt = NULL;
    int is_root = all || c->rank == root;
    int inplace = sendbuf == MPI_IN_PLACE;
    if (!all && (rc = bdl_coll_check_root(c, comm, call, root)))
        return rc;
    if (!inplace && (rc = bdl_coll_check_buf(comm, call, sendcount, sendtype, &st, "send")))
        return rc;
    if (is_root) {
        if ((rc = bdl_coll_check_buf(comm, call, vector ? 0 : recvcount, recvtype, &rt,
                                     "receive")) ||
            (vector &&
             (rc = bdl_coll_check_counts(comm, call, recvcounts, displs, c->size, "receive "))))
            return rc;
    } else if (inplace) {
        return bdl_error(comm, MPI_ERR_BUFFER, call, "MPI_IN_PLACE is only allowed at the root");
    }
    if (!vector)
        recvcounts = displs = NULL;
    int me = c->rank;
    uint64_t mine = inplace ? 0 : (uint64_t)sendcount * st->psize;
    char *rb = recvbuf;
    for (int r = 0; is_root && !inplace && r < c->size; r++)
        if ((rc = bdl_coll_check_alias(comm, call, sendbuf, (uint64_t)sendcount, st,
                                       vblk(rb, displs, recvcount, r, rt, tv),
                                       bdl_vcount(recvcounts, recvcount, r), vtype(rt, tv, r))))
            return rc;
    if (is_root)
        bdl_coll_discard_blocks(rb, c->size, recvcount, recvcounts, tv ? NULL : displs, rt, tv,
                                tv ? displs : NULL, inplace ? me : -1);
    /* A root whose own block does not fit still takes part (the others
     * cannot know), and reports MPI_ERR_TRUNCATE when the call completes. */
    int own_err = 0;
    own_copy_t own = {0};
    if (is_root && !inplace) {
        uint64_t expect = bdl_vcount(recvcounts, recvcount, me) * vtype(rt, tv, me)->psize;
        own_err = mine > expect;
        own = (own_copy_t){st,
                           vtype(rt, tv, me),
                           sendbuf,
                           vblk(rb, displs, recvcount, me, rt, tv),
                           (uint64_t)sendcount,
                           bdl_vcount(recvcounts, recvcount, me),
                           own_err ? expect : mine,
                           1};
    }
    if (request && !vector && !tv) {
        /* small, nonblocking, every rank on this node: in the ranks */
        const void *ob = inplace ? vblk(rb, displs, recvcount, me, rt, tv) : sendbuf;
        int oc = inplace ? recvcount : sendcount;
        bdl_dt_t *ot = inplace ? rt : st;
        if (bdl_lcn_eligible(c, (uint64_t)oc * ot->psize, all ? BD_API_ALLGATHER : BD_API_GATHER)) {
            own_do(&own);
            bdl_a2a_side_t os = {.buf = ob, .count = oc, .t = ot};
            bdl_a2a_side_t rs = {.buf = rb, .count = recvcount, .t = rt};
            return bdl_lcn_blocks(c, comm, call, all ? BD_API_ALLGATHER : BD_API_GATHER,
                                  all ? 0 : root, &os, &rs, own_err ? MPI_ERR_TRUNCATE : 0,
                                  request);
        }
    }
    if (!request) {
        /* Every rank's block is the same size in a correct program of the
         * regular form: the send block's, or at an in-place root its
         * receive block's. */
        bdl_a2a_side_t os = {.buf = inplace ? vblk(rb, displs, recvcount, me, rt, tv) : sendbuf,
                             .count =
                                 inplace ? (int)bdl_vcount(recvcounts, recvcount, me) : sendcount,
                             .t = inplace ? (bdl_dt_t *)vtype(rt, tv, me) : st};
        bdl_a2a_side_t rs = {.buf = rb,
                             .count = recvcount,
                             .counts = recvcounts,
                             .displs = displs,
                             .t = rt,
                             .tv = tv};
        if (bdl_lc_eligible(c, vector ? UINT64_MAX : (uint64_t)os.count * os.t->psize)) {
            own_do(&own);
            return bdl_lc_blocks(c, comm, call, api, all ? 0 : root, &os, &rs,
                                 own_err ? MPI_ERR_TRUNCATE : 0);
        }
        if (!own_err && c->size > 1 && !bdl_g.hdr->job.coll_stage) {
            /* small: one request (BD_REQ_COLL_SMALL).  In place too: the
             * rank's block is copied into the request before any other
             * block is written. */
            bdl_small_blk_t put = {-1, os.buf, (uint64_t)os.count, os.t, 0, 1};
            bdl_small_blk_t *gb = is_root ? malloc((size_t)c->size * sizeof *gb) : NULL;
            int ng = 0, stt = 0, done = 0;
            if (!is_root || gb) {
                if (is_root)
                    ng = vblocks(gb, rb, recvcounts, displs, recvcount, rt, tv, c->size, me);
                int puts = all || me != root;
                bd_coll_desc_t d = {.kind = all ? BD_COLL_ALLGATHER : BD_COLL_GATHER,
                                    .root = all ? 0 : root,
                                    .api = bdl_coll_api(api, NULL)};
                done = bdl_xfer_small(c, &d, &put, puts, gb, ng, 1, &stt);
                free(gb);
            }
            if (done) {
                own_do(&own);
                return bdl_nbc_status(comm, call, stt);
            }
        }
    }
    bdl_nbc_t nb;
    bdl_nbc_init(&nb, c, call);
    if (own_err)
        nb.err = MPI_ERR_TRUNCATE;
    if (c->size > 1) {
        /* Bounded staging (-coll-stage): a blocking gather puts its piece
         * only while the master's staging of it is under the bound
         * (BEGIN's answer), and its root takes the pieces as they complete
         * (see alltoall_common).  Across nodes too: BEGIN tells the
         * master, which ships the pieces to the root's node as its master
         * gives credit (coll_pipe.c).  An allgather the same way, every
         * rank a root: it takes the others' blocks as they complete, and
         * puts its own only under the bound; each block is given back
         * once every other rank has read it. */
        int pipe = !request && bdl_g.hdr->job.coll_stage;
        /* Nonblocking, its ranks all on this node: the piece is put here
         * under the bound, else in MPI_Test, MPI_Wait or before this rank
         * waits in any other call; the root (every rank of an allgather)
         * takes the pieces as they complete there (core/nbc.c,
         * pipe_progress). */
        int pipe_nb = request && bdl_nbc_pipe_eligible(c);
        /* An allgather's blocks larger than a part go in parts, each a
         * piece of its own (session 21): put in order, taken by every
         * other rank as they complete, each into its place in the packed
         * stream of its block (bdl_get_span, BDL_GET_BPARTS). */
        uint64_t part = 0, nparts = all && (pipe || pipe_nb)
                                        ? ag_parts(c, recvcount, recvcounts, rt, tv, &part)
                                        : 0;
        const void *ob = inplace ? vblk(rb, displs, recvcount, me, rt, tv) : sendbuf;
        uint64_t ocount = inplace ? bdl_vcount(recvcounts, recvcount, me) : (uint64_t)sendcount;
        bdl_dt_t *ot = inplace ? (bdl_dt_t *)vtype(rt, tv, me) : st;
        uint64_t obytes = ocount * ot->psize;
        /* this rank's parts (its block may be shorter than the longest) */
        uint64_t oparts = nparts ? (obytes + part - 1) / part : 0;
        if (oparts > nparts)
            oparts = nparts; /* counts disagree: the last part carries the rest */
        if (nparts)
            bdl_xfer_begin_pipe_parts(&nb.xf, c, BD_COLL_ALLGATHER, 0, nparts,
                                      bdl_coll_api(api, request));
        else if (pipe || pipe_nb)
            bdl_xfer_begin_pipe_root(&nb.xf, c, all ? BD_COLL_ALLGATHER : BD_COLL_GATHER,
                                     all ? 0 : root, bdl_coll_api(api, request));
        else
            bdl_xfer_begin(&nb.xf, c, all ? BD_COLL_ALLGATHER : BD_COLL_GATHER, all ? 0 : root, 0,
                           0, 0, bdl_coll_api(api, request));
        int over = bdl_resp()->flag;
        if (is_root) {
            nb.gkind = BDL_GET_BLOCKS;
            nb.whole = 1;
            nb.buf = rb;
            nb.count = (uint64_t)recvcount;
            nb.counts = (int *)recvcounts;
            nb.t = rt;
            if (tv) {
                nb.tv = tv;
                nb.bdispls = (int *)displs;
            } else {
                nb.displs = (int *)displs;
            }
            if (nparts) {
                nb.gkind = BDL_GET_BPARTS;
                nb.part = part;
                nb.bparts = nparts;
            }
            if ((pipe || pipe_nb) &&
                !(nb.taken = calloc((size_t)c->size * (size_t)(nparts ? nparts : 1), 1)))
                bdl_fatal(MPI_ERR_NO_MEM, "%s: out of memory", call);
        }
        if (pipe_nb) {
            nb.pipe_nb = 1;
            if (!nb.taken && !(nb.taken = calloc((size_t)c->size, 1)))
                bdl_fatal(MPI_ERR_NO_MEM, "%s: out of memory", call);
            if (!all && c->rank == root)
                nb.pp =
                    bdl_nbc_pipe_new_form(BDL_PP_NONE, NULL, 0, NULL, NULL, NULL, NULL, 0, 0, 0, 0);
            else if (nparts)
                nb.pp = bdl_nbc_pipe_new_form(oparts ? BDL_PP_PARTS : BDL_PP_NONE, ob, (int)ocount,
                                              NULL, NULL, ot, NULL, 0, 0, part, oparts);
            else if (inplace)
                nb.pp =
                    bdl_nbc_pipe_new_form(BDL_PP_ONE, vblk(rb, displs, recvcount, me, rt, tv),
                                          (int)bdl_vcount(recvcounts, recvcount, me), NULL, NULL,
                                          (bdl_dt_t *)vtype(rt, tv, me), NULL, 0, 0, 0, 0);
            else
                nb.pp = bdl_nbc_pipe_new_form(BDL_PP_ONE, sendbuf, sendcount, NULL, NULL, st, NULL,
                                              0, 0, 0, 0);
            nb.pp->over = over;
            bdl_nbc_pipe_put(&nb, 3); /* the request goes on with the rest */
            rc = own_launch(&nb, request, &own);
            return rc; /* the request owns nb.taken and nb.pp */
        }
        if (nparts) { /* blocking, in parts: look before each part, as a broadcast's root */
            bdl_put_t p = bdl_put_start(&nb.xf);
            p.over = over;
            for (uint64_t j = 0; j < oparts; j++) {
                if (p.over) {
                    bdl_put_flush(&p);
                    p.over = 0;
                    bdl_nbc_take(&nb, 0);
                }
                uint64_t at = j * part;
                bdl_put_span(&p, (int)j, ob, ocount, ot, at,
                             obytes - at < part || j + 1 == oparts ? obytes - at : part);
            }
            bdl_put_flush(&p);
            bdl_nbc_take(&nb, 1);
            rc = own_launch(&nb, request, &own);
            free(nb.taken);
            return rc;
        }
        if (pipe && (all || c->rank != root) && over)
            bdl_nbc_take(&nb, 0);
        if (all || c->rank != root) {
            bdl_put_t p = bdl_put_start(&nb.xf);
            if (inplace)
                bdl_put_typed(&p, -1, vblk(rb, displs, recvcount, me, rt, tv),
                              bdl_vcount(recvcounts, recvcount, me), vtype(rt, tv, me));
            else
                bdl_put_typed(&p, -1, sendbuf, (uint64_t)sendcount, st);
            bdl_put_done(&p); /* a nonblocking one's goes with its ARRIVE */
        }
        if (is_root && pipe)
            bdl_nbc_take(&nb, 1);
    }
    rc = own_launch(&nb, request, &own);
    free(nb.taken);
    return rc;
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    BDL_MT_GUARD;
    return gather_common("MPI_Gather", BD_API_GATHER, sendbuf, sendcount, sendtype, recvbuf,
                         recvcount, NULL, NULL, recvtype, root, comm, 0, 0, NULL, 0, NULL);
}

int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    return gather_common("MPI_Igather", BD_API_GATHER, sendbuf, sendcount, sendtype, recvbuf,
                         recvcount, NULL, NULL, recvtype, root, comm, 0, 0, request, 1, NULL);
}

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm)
{
    BDL_MT_GUARD;
    return gather_common("MPI_Gatherv", BD_API_GATHERV, sendbuf, sendcount, sendtype, recvbuf, 0,
                         recvcounts, displs, recvtype, root, comm, 0, 1, NULL, 0, NULL);
}

int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    return gather_common("MPI_Igatherv", BD_API_GATHERV, sendbuf, sendcount, sendtype, recvbuf, 0,
                         recvcounts, displs, recvtype, root, comm, 0, 1, request, 1, NULL);
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    BDL_MT_GUARD;
    return gather_common("MPI_Allgather", BD_API_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf,
                         recvcount, NULL, NULL, recvtype, 0, comm, 1, 0, NULL, 0, NULL);
}

int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    return gather_common("MPI_Iallgather", BD_API_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf,
                         recvcount, NULL, NULL, recvtype, 0, comm, 1, 0, request, 1, NULL);
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    BDL_MT_GUARD;
    return gather_common("MPI_Allgatherv", BD_API_ALLGATHERV, sendbuf, sendcount, sendtype, recvbuf,
                         0, recvcounts, displs, recvtype, 0, comm, 1, 1, NULL, 0, NULL);
}

int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    return gather_common("MPI_Iallgatherv", BD_API_ALLGATHERV, sendbuf, sendcount, sendtype,
                         recvbuf, 0, recvcounts, displs, recvtype, 0, comm, 1, 1, request, 1, NULL);
}

static int scatter_common(const char *call, int api, const void *sendbuf, int sendcount,
                          const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                          MPI_Comm comm, int vector, MPI_Request *request, int nb_req,
                          bdl_dt_t **tv)
{
    BDL_COLL_GET_COMM(call);
    if (c->inter && request)
        return bdl_ic_scatter(c, comm, call, api, sendbuf, sendcount, vector ? sendcounts : NULL,
                              vector ? displs : NULL, sendtype, tv, recvbuf, recvcount, recvtype,
                              root, request);
    if (c->inter)
        return bdl_inter_scatter(c, comm, call, sendbuf, sendcount, vector ? sendcounts : NULL,
                                 vector ? displs : NULL, sendtype, tv, recvbuf, recvcount, recvtype,
                                 root);
    int rc;
    bdl_dt_t *st = NULL, *rt = NULL;
    int is_root = c->rank == root;
    int inplace = recvbuf == MPI_IN_PLACE;
    if ((rc = bdl_coll_check_root(c, comm, call, root)))
        return rc;
    if (is_root &&
        ((rc = bdl_coll_check_buf(comm, call, vector ? 0 : sendcount, sendtype, &st, "send")) ||
         (vector &&
          (rc = bdl_coll_check_counts(comm, call, sendcounts, displs, c->size, "send ")))))
        return rc;
    if (!is_root && inplace)
        return bdl_error(comm, MPI_ERR_BUFFER, call, "MPI_IN_PLACE is only allowed at the root");
    if (!inplace && (rc = bdl_coll_check_buf(comm, call, recvcount, recvtype, &rt, "receive")))
        return rc;
    if (!vector)
        sendcounts = displs = NULL;
    uint64_t cap = inplace ? 0 : (uint64_t)recvcount * rt->psize;
    const char *sb = sendbuf;
    for (int r = 0; is_root && !inplace && r < c->size; r++)
        if ((rc = bdl_coll_check_alias(comm, call, vblk(sb, displs, sendcount, r, st, tv),
                                       bdl_vcount(sendcounts, sendcount, r), vtype(st, tv, r),
                                       recvbuf, (uint64_t)recvcount, rt)))
            return rc;
    if (!inplace)
        bdl_coll_discard(recvbuf, (uint64_t)recvcount, rt);
    int own_err = 0;
    own_copy_t own = {0};
    if (is_root && !inplace) {
        uint64_t n = bdl_vcount(sendcounts, sendcount, root) * vtype(st, tv, root)->psize;
        own_err = n > cap;
        own = (own_copy_t){vtype(st, tv, root),
                           rt,
                           vblk(sb, displs, sendcount, root, st, tv),
                           recvbuf,
                           bdl_vcount(sendcounts, sendcount, root),
                           (uint64_t)recvcount,
                           own_err ? cap : n,
                           1};
    }
    /* The block size every rank knows: the root's send block, the others'
     * receive block. */
    if (!request && bdl_lc_eligible(c, vector    ? UINT64_MAX
                                       : is_root ? (uint64_t)sendcount * st->psize
                                                 : cap)) {
        own_do(&own);
        bdl_a2a_side_t ss = {.buf = sendbuf,
                             .count = sendcount,
                             .counts = sendcounts,
                             .displs = displs,
                             .t = st,
                             .tv = tv};
        bdl_a2a_side_t rs = {.buf = recvbuf, .count = recvcount, .t = rt};
        return bdl_lc_blocks(c, comm, call, api, root, &ss, &rs, own_err ? MPI_ERR_TRUNCATE : 0);
    }
    if (request && !vector && !tv &&
        bdl_lcn_eligible(c, is_root ? (uint64_t)sendcount * st->psize : cap, BD_API_SCATTER)) {
        /* small, nonblocking, every rank on this node: in the ranks */
        own_do(&own);
        bdl_a2a_side_t ss = {.buf = sendbuf, .count = sendcount, .t = st};
        bdl_a2a_side_t rs = {.buf = recvbuf, .count = recvcount, .t = rt};
        return bdl_lcn_blocks(c, comm, call, BD_API_SCATTER, root, &ss, &rs,
                              own_err ? MPI_ERR_TRUNCATE : 0, request);
    }
    if (!request && !own_err && c->size > 1 && !bdl_g.hdr->job.coll_stage) {
        /* small: one request (BD_REQ_COLL_SMALL); in place, the root takes
         * nothing */
        bdl_small_blk_t *pb = is_root ? malloc((size_t)c->size * sizeof *pb) : NULL;
        bdl_small_blk_t get = {root, recvbuf, (uint64_t)recvcount, rt, 0, 1};
        int np = 0, st2 = 0, done = 0;
        if (!is_root || pb) {
            if (is_root)
                np = vblocks(pb, sb, sendcounts, displs, sendcount, st, tv, c->size, root);
            bd_coll_desc_t d = {
                .kind = BD_COLL_SCATTER, .root = root, .api = bdl_coll_api(api, NULL)};
            done = bdl_xfer_small(c, &d, pb, np, &get, is_root ? 0 : 1, 1, &st2);
            free(pb);
        }
        if (done) {
            own_do(&own);
            return bdl_nbc_status(comm, call, st2);
        }
    }
    bdl_nbc_t nb;
    bdl_nbc_init(&nb, c, call);
    if (own_err)
        nb.err = MPI_ERR_TRUNCATE;
    if (c->size > 1) {
        /* Bounded staging (-coll-stage): a blocking scatter is a gather
         * backwards.  The root puts a piece only while the master's
         * staging is under the bound (its last answer, BEGIN's for the
         * first), else it waits in COLL_TAKE, where nothing is offered to
         * it, until a reader has taken enough (or, across nodes, the
         * readers' masters have given credit back); every other rank takes
         * its piece as soon as it is complete. */
        int pipe = !request && bdl_g.hdr->job.coll_stage;
        /* Nonblocking on one node: the root puts the pieces in rank order
         * while the staging has room, the rest as a nonblocking all-to-all
         * does (core/nbc.c); the others take theirs as it completes. */
        int pipe_nb = request && bdl_nbc_pipe_eligible(c);
        if (pipe || pipe_nb)
            bdl_xfer_begin_pipe_root(&nb.xf, c, BD_COLL_SCATTER, root, bdl_coll_api(api, request));
        else
            bdl_xfer_begin(&nb.xf, c, BD_COLL_SCATTER, root, 0, 0, 0, bdl_coll_api(api, request));
        int over = bdl_resp()->flag;
        if (pipe_nb) {
            nb.pipe_nb = 1;
            if (is_root) {
                nb.pp = bdl_nbc_pipe_new_form(BDL_PP_SCATTER, sendbuf, sendcount, sendcounts,
                                              displs, st, tv, c->size, root, 0, 0);
                if (!(nb.taken = calloc(1, 1)))
                    bdl_fatal(MPI_ERR_NO_MEM, "%s: out of memory", call);
            } else {
                root_block_reader(&nb, root, recvbuf, recvcount, rt);
                nb.pp =
                    bdl_nbc_pipe_new_form(BDL_PP_NONE, NULL, 0, NULL, NULL, NULL, NULL, 0, 0, 0, 0);
            }
            nb.pp->over = over;
            bdl_nbc_pipe_put(&nb, 3);              /* the request goes on with the rest */
            return own_launch(&nb, request, &own); /* the request owns nb.taken and nb.pp */
        }
        if (is_root) {
            bdl_put_t p = bdl_put_start(&nb.xf);
            p.over = over;
            for (int r = 0; r < c->size; r++) {
                if (r == root)
                    continue;
                if (pipe && p.over) {
                    bdl_put_flush(&p);
                    p.over = 0;
                    bdl_nbc_take(&nb, 0);
                }
                bdl_put_typed(&p, r, vblk(sb, displs, sendcount, r, st, tv),
                              bdl_vcount(sendcounts, sendcount, r), vtype(st, tv, r));
            }
            bdl_put_done(&p); /* a nonblocking one's goes with its ARRIVE */
        } else if (pipe) {    /* one block, from the root */
            root_block_reader(&nb, root, recvbuf, recvcount, rt);
            bdl_nbc_take(&nb, 1);
        } else if (cap) {
            nb.gkind = BDL_GET_PIECE;
            nb.whole = 1;
            nb.peer = root;
            nb.buf = recvbuf;
            nb.count = (uint64_t)recvcount;
            nb.t = rt;
        }
    }
    int rc2 = own_launch(&nb, request, &own);
    free(nb.taken);
    return rc2;
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    BDL_MT_GUARD;
    return scatter_common("MPI_Scatter", BD_API_SCATTER, sendbuf, sendcount, NULL, NULL, sendtype,
                          recvbuf, recvcount, recvtype, root, comm, 0, NULL, 0, NULL);
}

int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request)
{
    BDL_MT_GUARD;
    return scatter_common("MPI_Iscatter", BD_API_SCATTER, sendbuf, sendcount, NULL, NULL, sendtype,
                          recvbuf, recvcount, recvtype, root, comm, 0, request, 1, NULL);
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm)
{
    BDL_MT_GUARD;
    return scatter_common("MPI_Scatterv", BD_API_SCATTERV, sendbuf, 0, sendcounts, displs, sendtype,
                          recvbuf, recvcount, recvtype, root, comm, 1, NULL, 0, NULL);
}

int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    return scatter_common("MPI_Iscatterv", BD_API_SCATTERV, sendbuf, 0, sendcounts, displs,
                          sendtype, recvbuf, recvcount, recvtype, root, comm, 1, request, 1, NULL);
}

static int a2a_check(bdl_comm_t *c, MPI_Comm comm, const char *call, bdl_a2a_side_t *x,
                     const char *what, int vector)
{
    int rc;
    if (vector && (rc = bdl_coll_check_counts(comm, call, x->counts, x->displs, c->size, what)))
        return rc;
    if (!x->types)
        return bdl_coll_check_buf(comm, call, vector ? 0 : x->count, x->type, &x->t,
                                  what[0] == 's' ? "send" : "receive");
    x->tv = malloc((size_t)c->size * sizeof *x->tv);
    if (!x->tv)
        bdl_fatal(MPI_ERR_NO_MEM, "%s: out of memory", call);
    for (int r = 0; r < c->size; r++)
        if ((rc = bdl_dt_check(comm, call, what[0] == 's' ? "send" : "receive", x->types[r],
                               &x->tv[r])))
            return rc;
    return MPI_SUCCESS;
}

static const bdl_dt_t *a2a_type(const bdl_a2a_side_t *x, int r) { return x->tv ? x->tv[r] : x->t; }

static char *a2a_block(const bdl_a2a_side_t *x, int r)
{
    return bdl_at(x->buf, x->tv ? x->displs[r] : bdl_voff(x->displs, x->count, r, x->t));
}

static int alltoall_common(const char *call, int api, bdl_a2a_side_t *s, bdl_a2a_side_t *rv,
                           int vector, MPI_Comm comm, MPI_Request *request, int nb_req)
{
    BDL_COLL_GET_COMM(call);
    if (c->inter && request)
        return bdl_ic_alltoall(c, comm, call, api, s, rv, vector, request);
    if (c->inter && rv->types)
        return bdl_inter_alltoallw(c, comm, call, s->buf, s->counts, s->displs, s->types,
                                   (void *)rv->buf, rv->counts, rv->displs, rv->types,
                                   api != BD_API_ALLTOALLW);
    if (c->inter)
        return bdl_inter_alltoall(c, comm, call, s->buf, s->count, vector ? s->counts : NULL,
                                  vector ? s->displs : NULL, s->type, (void *)rv->buf, rv->count,
                                  vector ? rv->counts : NULL, vector ? rv->displs : NULL, rv->type);
    int rc;
    int inplace = s->buf == MPI_IN_PLACE;
    if (!vector)
        s->counts = s->displs = rv->counts = rv->displs = NULL;
    if ((rc = a2a_check(c, comm, call, rv, "receive ", vector)))
        goto out;
    if (inplace) {
        *s = *rv;
        s->tv = NULL;
        if (rv->tv) {
            s->tv = malloc((size_t)c->size * sizeof *s->tv);
            if (!s->tv)
                bdl_fatal(MPI_ERR_NO_MEM, "%s: out of memory", call);
            memcpy(s->tv, rv->tv, (size_t)c->size * sizeof *s->tv);
        }
    } else if ((rc = a2a_check(c, comm, call, s, "send ", vector))) {
        goto out;
    }
    int me = c->rank;
    for (int a = 0; !inplace && a < c->size; a++)
        for (int b = 0; b < c->size; b++)
            if ((rc = bdl_coll_check_alias(comm, call, a2a_block(s, a),
                                           bdl_vcount(s->counts, s->count, a), a2a_type(s, a),
                                           a2a_block(rv, b), bdl_vcount(rv->counts, rv->count, b),
                                           a2a_type(rv, b))))
                goto out;
    uint64_t own = bdl_vcount(s->counts, s->count, me) * a2a_type(s, me)->psize;
    uint64_t room = bdl_vcount(rv->counts, rv->count, me) * a2a_type(rv, me)->psize;
    int own_err = own > room;
    if (!inplace)
        bdl_coll_discard_blocks((void *)rv->buf, c->size, rv->count, rv->counts,
                                rv->tv ? NULL : rv->displs, rv->t, rv->tv,
                                rv->tv ? rv->displs : NULL, -1);
    own_copy_t oc = {0};
    if (!inplace)
        oc = (own_copy_t){a2a_type(s, me),
                          a2a_type(rv, me),
                          a2a_block(s, me),
                          a2a_block(rv, me),
                          bdl_vcount(s->counts, s->count, me),
                          bdl_vcount(rv->counts, rv->count, me),
                          own_err ? room : own,
                          1};
    if (!request && bdl_lc_eligible(c, vector ? UINT64_MAX : own)) {
        own_do(&oc);
        rc = bdl_lc_blocks(c, comm, call, api, 0, s, rv, own_err ? MPI_ERR_TRUNCATE : 0);
        goto out;
    }
    if (request && !vector && !s->tv && !rv->tv && bdl_lcn_eligible(c, own, BD_API_ALLTOALL)) {
        /* small, nonblocking, every rank on this node: in the ranks */
        own_do(&oc);
        rc = bdl_lcn_blocks(c, comm, call, BD_API_ALLTOALL, 0, s, rv,
                            own_err ? MPI_ERR_TRUNCATE : 0, request);
        goto out;
    }
    if (!request && !own_err && c->size > 1 && !bdl_g.hdr->job.coll_stage) {
        /* small: one request (BD_REQ_COLL_SMALL).  In place too: what goes
         * out is copied into the request before anything comes in. */
        bdl_small_blk_t *pb = malloc(2 * (size_t)c->size * sizeof *pb), *gb = NULL;
        int np = 0, st = 0, done = 0;
        if (pb) {
            gb = pb + c->size;
            for (int r = 0; r < c->size; r++)
                if (r != me) {
                    pb[np] = (bdl_small_blk_t){.peer = r,
                                               .buf = a2a_block(s, r),
                                               .count = bdl_vcount(s->counts, s->count, r),
                                               .t = a2a_type(s, r),
                                               .whole = 1};
                    gb[np++] = (bdl_small_blk_t){.peer = r,
                                                 .buf = a2a_block(rv, r),
                                                 .count = bdl_vcount(rv->counts, rv->count, r),
                                                 .t = a2a_type(rv, r),
                                                 .whole = 1};
                }
            bd_coll_desc_t d = {.kind = BD_COLL_ALLTOALL, .api = bdl_coll_api(api, NULL)};
            done = bdl_xfer_small(c, &d, pb, np, gb, np, 1, &st);
            free(pb);
        }
        if (done) {
            own_do(&oc);
            rc = bdl_nbc_status(comm, call, st);
            goto out;
        }
    }
    bdl_nbc_t nb;
    bdl_nbc_init(&nb, c, call);
    if (own_err)
        nb.err = MPI_ERR_TRUNCATE;
    if (c->size > 1) {
        /* Bounded staging (-coll-stage, docs/design.md "Transient memory of
         * communication"): a blocking all-to-all, not in place, takes the
         * pieces sent to it while it puts its own, before each piece while
         * the master's last answer (BEGIN's for the first) said the
         * instance is past the bound; each rank starts with the piece for
         * the next rank, so the pieces of the ranks that run first go to
         * different receivers.  Across nodes too: BEGIN tells the master,
         * which then ships pieces for other nodes as their masters make
         * room (coll_pipe.c).  In place (on one node or several): a piece
         * from q is offered only once this rank's block for q, which it
         * overwrites, is PUT, and the master may ask for that block next
         * (across nodes q's piece leaves q's node only then). */
        int pipe = !request && bdl_g.hdr->job.coll_stage;
        /* Nonblocking: the pieces are put here while the staging has
         * room, the rest in MPI_Test and MPI_Wait, or before this rank
         * waits in any other call (core/nbc.c, pipe_progress and
         * bdl_nbc_pipe_settle).  In place as the blocking one: each block
         * whole, and the master may ask for one out of order
         * (bdl_nbc_pipe_put). */
        int pipe_nb = request && bdl_g.hdr->job.coll_stage;
        if (pipe || pipe_nb)
            bdl_xfer_begin_pipe(&nb.xf, c, BD_COLL_ALLTOALL, bdl_coll_api(api, request), inplace);
        else
            bdl_xfer_begin(&nb.xf, c, BD_COLL_ALLTOALL, 0, 0, 0, 0, bdl_coll_api(api, request));
        int over = bdl_resp()->flag; /* BEGIN's answer: the instance is past the bound */
        if ((pipe || pipe_nb) && !(nb.taken = calloc((size_t)c->size, 1)))
            bdl_fatal(MPI_ERR_NO_MEM, "%s: out of memory", call);
        nb.gkind = BDL_GET_BLOCKS;
        nb.whole = 1;
        nb.buf = (void *)rv->buf;
        nb.count = (uint64_t)rv->count;
        nb.counts = (int *)rv->counts;
        nb.t = rv->t;
        if (rv->tv) {
            nb.tv = rv->tv;
            nb.bdispls = (int *)rv->displs;
        } else {
            nb.displs = (int *)rv->displs;
        }
        if (pipe_nb) {
            nb.pipe_nb = 1;
            nb.pp = bdl_nbc_pipe_new(s->buf, s->count, s->counts, s->displs, s->t, s->tv, c->size);
            nb.pp->over = over;
            if (inplace && !(nb.pp->put = calloc((size_t)c->size, 1)))
                bdl_fatal(MPI_ERR_NO_MEM, "%s: out of memory", call);
            bdl_nbc_pipe_put(&nb, 3); /* the request goes on with the rest */
            goto launch;
        }
        bdl_put_t p = bdl_put_start(&nb.xf);
        p.over = over;
        /* The own block of a send buffer out of memory goes by reference
         * too and comes back with the GETs: copying it would load the
         * whole buffer under AR (see own_copy_t). */
        if (oc.on && own == room && !pipe && bdl_put_ref(&p, me, oc.sbuf, oc.scount, oc.st)) {
            oc.on = 0;
            nb.skip = -1;
        }
        char *put = pipe && inplace ? calloc((size_t)c->size, 1) : NULL; /* blocks PUT */
        if (pipe && inplace && !put)
            bdl_fatal(MPI_ERR_NO_MEM, "%s: out of memory", call);
        for (int k = 0; k < c->size; k++) {
            int r = pipe ? (me + 1 + k) % c->size : k;
            if (r == me || (put && put[r]))
                continue;
            if (pipe && p.over) { /* before a piece: take before putting more */
                bdl_put_flush(&p);
                p.over = 0;
                int q = bdl_nbc_take(&nb, 0);
                if (put && q >= 0 && q < c->size && q != me && !put[q]) {
                    bdl_put_typed(&p, q, a2a_block(s, q), bdl_vcount(s->counts, s->count, q),
                                  a2a_type(s, q));
                    bdl_put_flush(&p); /* complete: its piece may be offered now */
                    put[q] = 1;
                    k--; /* r is still to put */
                    continue;
                }
            }
            bdl_put_typed(&p, r, a2a_block(s, r), bdl_vcount(s->counts, s->count, r),
                          a2a_type(s, r));
            if (put) { /* complete before the next take may offer r's piece */
                bdl_put_flush(&p);
                put[r] = 1;
            }
        }
        bdl_put_done(&p); /* a nonblocking one's goes with its ARRIVE (the discard
                             below is the memory manager's alone) */
        free(put);
        if (pipe)
            bdl_nbc_take(&nb, 1);
        /* What this rank sends is with the master now; pipelined, blocks
         * taken early already hold what was received */
        if (inplace && !pipe)
            bdl_coll_discard_blocks((void *)rv->buf, c->size, rv->count, rv->counts,
                                    rv->tv ? NULL : rv->displs, rv->t, rv->tv,
                                    rv->tv ? rv->displs : NULL, me);
    }
launch:
    rc = own_launch(&nb, request, &oc);
    if (!nb.pipe_nb) /* else the request owns it (and nb.pp) */
        free(nb.taken);
out:
    free(s->tv);
    free(rv->tv);
    return rc;
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    BDL_MT_GUARD;
    bdl_a2a_side_t s = {.buf = sendbuf, .count = sendcount, .type = sendtype};
    bdl_a2a_side_t r = {.buf = recvbuf, .count = recvcount, .type = recvtype};
    return alltoall_common("MPI_Alltoall", BD_API_ALLTOALL, &s, &r, 0, comm, NULL, 0);
}

int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    bdl_a2a_side_t s = {.buf = sendbuf, .count = sendcount, .type = sendtype};
    bdl_a2a_side_t r = {.buf = recvbuf, .count = recvcount, .type = recvtype};
    return alltoall_common("MPI_Ialltoall", BD_API_ALLTOALL, &s, &r, 0, comm, request, 1);
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm)
{
    BDL_MT_GUARD;
    bdl_a2a_side_t s = {.buf = sendbuf, .counts = sendcounts, .displs = sdispls, .type = sendtype};
    bdl_a2a_side_t r = {.buf = recvbuf, .counts = recvcounts, .displs = rdispls, .type = recvtype};
    return alltoall_common("MPI_Alltoallv", BD_API_ALLTOALLV, &s, &r, 1, comm, NULL, 0);
}

int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    BDL_MT_GUARD;
    bdl_a2a_side_t s = {.buf = sendbuf, .counts = sendcounts, .displs = sdispls, .type = sendtype};
    bdl_a2a_side_t r = {.buf = recvbuf, .counts = recvcounts, .displs = rdispls, .type = recvtype};
    return alltoall_common("MPI_Ialltoallv", BD_API_ALLTOALLV, &s, &r, 1, comm, request, 1);
}

int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                  const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    BDL_MT_GUARD;
    bdl_a2a_side_t s = {
        .buf = sendbuf, .counts = sendcounts, .displs = sdispls, .types = sendtypes};
    bdl_a2a_side_t r = {
        .buf = recvbuf, .counts = recvcounts, .displs = rdispls, .types = recvtypes};
    if (sendbuf != MPI_IN_PLACE && !sendtypes)
        return bdl_error(comm, MPI_ERR_ARG, "MPI_Alltoallw", "NULL send types");
    if (!recvtypes)
        return bdl_error(comm, MPI_ERR_ARG, "MPI_Alltoallw", "NULL receive types");
    return alltoall_common("MPI_Alltoallw", BD_API_ALLTOALLW, &s, &r, 1, comm, NULL, 0);
}

int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                   MPI_Request *request)
{
    BDL_MT_GUARD;
    bdl_a2a_side_t s = {
        .buf = sendbuf, .counts = sendcounts, .displs = sdispls, .types = sendtypes};
    bdl_a2a_side_t r = {
        .buf = recvbuf, .counts = recvcounts, .displs = rdispls, .types = recvtypes};
    if (sendbuf != MPI_IN_PLACE && !sendtypes)
        return bdl_error(comm, MPI_ERR_ARG, "MPI_Ialltoallw", "NULL send types");
    if (!recvtypes)
        return bdl_error(comm, MPI_ERR_ARG, "MPI_Ialltoallw", "NULL receive types");
    return alltoall_common("MPI_Ialltoallw", BD_API_ALLTOALLW, &s, &r, 1, comm, request, 1);
}

/* ---------------------------------------------------------------- per-peer types */

/* The v forms with a type per peer on the v side (displacements in bytes):
 * the large-count calls whose entries do not fit an int describe each such
 * block as one element of a type of their own (mpi/bigcount_arr.c).  The
 * call is still the v form to the master and the other ranks, which may
 * use the plain form: what travels is the same blocks.  types[] matters
 * where the v side does (the root, or every rank): one per rank, of the
 * remote group on an intercommunicator. */
static int peer_types(MPI_Comm comm, const char *call, const MPI_Datatype *types, int on,
                      bdl_dt_t ***tv)
{
    *tv = NULL;
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!on || !c || !types)
        return MPI_SUCCESS;
    int n = c->inter ? c->rsize : c->size;
    bdl_dt_t **v = malloc((size_t)(n ? n : 1) * sizeof *v);
    if (!v)
        return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
    for (int r = 0; r < n; r++) {
        int rc = bdl_dt_check(comm, call, "", types[r], &v[r]);
        if (rc) {
            free(v);
            return rc;
        }
    }
    *tv = v;
    return MPI_SUCCESS;
}

int bdl_gatherv_typed(const char *call, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                      void *recvbuf, const int recvcounts[], const int bdispls[],
                      MPI_Datatype recvtype, const MPI_Datatype recvtypes[], int root,
                      MPI_Comm comm, int all, MPI_Request *request)
{
    bdl_comm_t *c = bdl_comm_get(comm);
    bdl_dt_t **tv = NULL;
    int here = c && (all || (c->inter ? root == MPI_ROOT : c->rank == root));
    int rc = peer_types(comm, call, recvtypes, here, &tv);
    if (rc == MPI_SUCCESS)
        rc = gather_common(call, all ? BD_API_ALLGATHERV : BD_API_GATHERV, sendbuf, sendcount,
                           sendtype, recvbuf, 0, recvcounts, bdispls, recvtype, root, comm, all, 1,
                           request, request != NULL, tv);
    free(tv);
    return rc;
}

int bdl_scatterv_typed(const char *call, const void *sendbuf, const int sendcounts[],
                       const int bdispls[], MPI_Datatype sendtype, const MPI_Datatype sendtypes[],
                       void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                       MPI_Request *request)
{
    bdl_comm_t *c = bdl_comm_get(comm);
    bdl_dt_t **tv = NULL;
    int here = c && (c->inter ? root == MPI_ROOT : c->rank == root);
    int rc = peer_types(comm, call, sendtypes, here, &tv);
    if (rc == MPI_SUCCESS)
        rc = scatter_common(call, BD_API_SCATTERV, sendbuf, 0, sendcounts, bdispls, sendtype,
                            recvbuf, recvcount, recvtype, root, comm, 1, request, request != NULL,
                            tv);
    free(tv);
    return rc;
}

int bdl_alltoall_typed(const char *call, int api, bdl_a2a_side_t *s, bdl_a2a_side_t *rv,
                       MPI_Comm comm, MPI_Request *request)
{
    return alltoall_common(call, api, s, rv, 1, comm, request, request != NULL);
}
