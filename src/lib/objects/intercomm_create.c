/* Intercommunicators (MPI 3.1 section 6.6): creation, merging, splitting,
 * duplication's completion and the queries.  Their collectives are in
 * mpi/intercomm.c.
 *
 * An intercommunicator is an entry of the communicator table whose rank,
 * size and world list describe the local group and whose rworld lists the
 * remote group.  Point-to-point on it needs nothing from the master: a
 * sender addresses a world rank of the remote group and stamps its local
 * rank, which is exactly the source rank the receiver names.  Its context
 * is derived from the two groups' hidden local communicators (see
 * BDL_CTX_INTER), so both groups agree on it without another round trip.
 *
 * Every intercommunicator also has a hidden intracommunicator of both
 * groups, its union (c->ucomm), registered with the masters by its members
 * under a derived context: the nonblocking collectives run on it as single
 * instances the master progresses, and MPI_Comm_idup splits it.  An
 * intercommunicator made by MPI_Comm_(i)dup takes its contexts from the new
 * union: the union's context | BDL_CTX_INTER for point-to-point, and a
 * derived context for each group's hidden local communicator.
 *
 * The groups exchange what they must know between their leaders on the
 * intercommunicator's internal context; within a group, the control
 * exchanges of core/ctl.c spread it. */
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "dt.h"
#include "objects.h"
#include "request.h"

int bdl_inter_send_to(const bdl_comm_t *c, int remote, int tag, const void *buf, uint64_t count,
                      const bdl_dt_t *t)
{
    return bdl_send_typed(bdl_comm_ictx(c), c->rworld[remote], c->rank, tag, buf, count, t, 0,
                          NULL);
}

int bdl_inter_recv_from(MPI_Comm comm, const char *call, const bdl_comm_t *c, int remote, int tag,
                        void *buf, uint64_t count, const bdl_dt_t *t)
{
    int rc = bdl_recv_typed(bdl_comm_ictx(c), remote, tag, buf, count, t, MPI_STATUS_IGNORE);
    if (rc)
        return bdl_error(comm, rc, call,
                         "%llu bytes from remote rank %d truncated to the %llu-byte receive buffer",
                         (unsigned long long)bdl_p2p_last()->nbytes, remote,
                         (unsigned long long)(count * t->psize));
    return MPI_SUCCESS;
}

/* Tags between the groups on the internal context (the values mpi/intercomm.c
 * leaves to creation). */
enum { T_MERGE = 10, T_SPLIT = 11 };
/* Tags of the control exchanges within a group. */
enum { C_INFO = 16, C_GROUP, C_HIGH, C_PAIRS, C_RCTX };

/* The hidden local communicator, reporting errors as the intercommunicator does. */
static MPI_Comm local_of(const bdl_comm_t *c)
{
    bdl_g.comms[c->local].errh = c->errh;
    return c->local;
}

static int no_mem(MPI_Comm comm, const char *call)
{
    return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
}

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

static int inter_build(MPI_Comm local_comm, int local_leader, const bdl_leaders_t *how, int tag,
                       const char *call, MPI_Comm *newintercomm);

int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                         int remote_leader, int tag, MPI_Comm *newintercomm)
{
    BDL_MT_GUARD;
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
    if (!leader)
        return inter_build(local_comm, local_leader, NULL, tag, call, newintercomm);
    /* Leaders swap {hidden context, group size} and the group's world ranks
     * on peer_comm's internal context, so the exchange never matches (or is
     * matched by) a user message on peer_comm. */
    bdl_comm_t *pc = bdl_comm_get(peer_comm);
    bdl_leaders_t how = {.ctx = pc->ctx | BDL_CTX_INTERNAL | (pc->inter ? 0 : BDL_CTX_INTER),
                         .dst = bdl_comm_peer_world(pc, remote_leader),
                         .stamp = pc->rank,
                         .src = remote_leader};
    return inter_build(local_comm, local_leader, &how, tag, call, newintercomm);
}

int bdl_inter_build(MPI_Comm local_comm, int local_leader, const bdl_leaders_t *how, int tag,
                    const char *call, MPI_Comm *newintercomm)
{
    return inter_build(local_comm, local_leader, how, tag, call, newintercomm);
}

/* The intercommunicator of local_comm's group and the group whose leader
 * the local leader reaches as `how` says (NULL on the other ranks). */
static int inter_build(MPI_Comm local_comm, int local_leader, const bdl_leaders_t *how, int tag,
                       const char *call, MPI_Comm *newintercomm)
{
    bdl_comm_t *lc = bdl_comm_get(local_comm);
    int leader = lc->rank == local_leader;
    MPI_Errhandler errh = lc->errh;
    MPI_Comm hidden;
    int rc = bdl_comm_split(local_comm, 0, lc->rank, &hidden, call);
    if (rc)
        return rc;
    bdl_g.comms[hidden].errh = errh;
    int32_t info[2] = {0, 0};
    int *rw = NULL;
    if (leader) {
        bdl_comm_t *h = &bdl_g.comms[hidden];
        int pctx = how->ctx, dst = how->dst;
        int32_t mine[2] = {h->ctx, h->size};
        bdl_send_bytes(pctx, dst, how->stamp, tag, mine, sizeof mine, 0, NULL);
        bdl_send_bytes(pctx, dst, how->stamp, tag, h->world, (uint64_t)h->size * sizeof(int), 0,
                       NULL);
        MPI_Status st;
        rc = bdl_recv_bytes(pctx, how->src, tag, info, sizeof info, &st);
        if (rc || st.bd_nbytes != sizeof info || info[1] <= 0) {
            hidden_free(hidden);
            return bdl_error(local_comm, MPI_ERR_INTERN, call,
                             "unexpected message from the remote leader (tag %d reused?)", tag);
        }
        rw = malloc((size_t)info[1] * sizeof(int));
        if (!rw)
            bdl_fatal(MPI_ERR_NO_MEM, "%s: out of memory", call);
        rc = bdl_recv_bytes(pctx, how->src, tag, rw, (uint64_t)info[1] * sizeof(int), &st);
        if (rc || st.bd_nbytes != (long long)info[1] * (long long)sizeof(int))
            bdl_fatal(MPI_ERR_INTERN, "%s: the remote leader sent a malformed group", call);
    }
    if ((rc = bdl_ctl_bcast(&bdl_g.comms[hidden], C_INFO, info, sizeof info, local_leader)))
        return rc;
    if (!leader && !(rw = malloc((size_t)info[1] * sizeof(int))))
        bdl_fatal(MPI_ERR_NO_MEM, "%s: out of memory", call);
    if ((rc = bdl_ctl_bcast(&bdl_g.comms[hidden], C_GROUP, rw, (uint64_t)info[1] * sizeof(int),
                            local_leader)))
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
    BDL_MT_GUARD;
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
        bdl_inter_send_to(c, 0, T_MERGE, &mine, sizeof mine, bdl_dt_byte());
        if ((rc = bdl_inter_recv_from(intercomm, call, c, 0, T_MERGE, &theirs, sizeof theirs,
                                      bdl_dt_byte())))
            return rc;
    }
    if ((rc = bdl_ctl_bcast(&bdl_g.comms[local_of(c)], C_HIGH, &theirs, sizeof theirs, 0)))
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
    int rc = bdl_ctl_gather(&bdl_g.comms[local_of(c)], C_PAIRS, ck, sizeof ck, lck, 0);
    c = bdl_comm_get(comm);
    if (!rc && c->rank == 0) {
        bdl_inter_send_to(c, 0, T_SPLIT, lck, (uint64_t)c->size * 8, bdl_dt_byte());
        rc = bdl_inter_recv_from(comm, call, c, 0, T_SPLIT, rck, (uint64_t)c->rsize * 8,
                                 bdl_dt_byte());
    }
    if (!rc)
        rc = bdl_ctl_bcast(&bdl_g.comms[local_of(c)], C_PAIRS, rck,
                           (uint64_t)c->rsize * 2 * sizeof(int32_t), 0);
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
            bdl_inter_send_to(c, rfirst, T_SPLIT, &mine, sizeof mine, bdl_dt_byte());
            if ((rc = bdl_inter_recv_from(comm, call, c, rfirst, T_SPLIT, &rctx, sizeof rctx,
                                          bdl_dt_byte()))) {
                free(rw);
                free(all);
                hidden_free(hidden);
                return rc;
            }
        }
        if (m && (rc = bdl_ctl_bcast(&bdl_g.comms[hidden], C_RCTX, &rctx, sizeof rctx, 0))) {
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
    BDL_MT_GUARD;
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
    BDL_MT_GUARD;
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
