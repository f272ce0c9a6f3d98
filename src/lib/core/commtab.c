/* The communicator table (bottom room): a handle indexes bdl_g.comms; each
 * entry knows its context id (shared with the master), the caller's rank
 * and the world rank of every member.  Communicators are made and freed in
 * objects/comm.c. */
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "request.h"

bdl_comm_t *bdl_comm_get(MPI_Comm comm)
{
    if (comm <= 0 || comm >= bdl_g.ncomms || !bdl_g.comms[comm].used || bdl_g.comms[comm].pending)
        return NULL;
    return &bdl_g.comms[comm];
}

int bdl_comm_add(int ctx, int rank, int size, int *world, MPI_Errhandler errh)
{
    int h = 0;
    for (int i = 5; i < bdl_g.ncomms; i++)
        if (!bdl_g.comms[i].used) {
            h = i;
            break;
        }
    if (!h) {
        int n = bdl_g.ncomms ? bdl_g.ncomms * 2 : 16;
        if (bdl_g.ncomms_max && n > bdl_g.ncomms_max) /* MPI_THREAD_MULTIPLE: never moves */
            n = bdl_g.ncomms_max > bdl_g.ncomms ? bdl_g.ncomms_max : 0;
        bdl_comm_t *t = bdl_g.ncomms_max ? (n ? bdl_g.comms : NULL)
                                         : realloc(bdl_g.comms, (size_t)n * sizeof *t);
        if (!t)
            return -1;
        memset(t + bdl_g.ncomms, 0, (size_t)(n - bdl_g.ncomms) * sizeof *t);
        h = bdl_g.ncomms < 5 ? 5 : bdl_g.ncomms;
        bdl_g.comms = t;
        bdl_g.ncomms = n;
    }
    bdl_g.comms[h] = (bdl_comm_t){
        .used = 1, .ctx = ctx, .rank = rank, .size = size, .world = world, .errh = errh};
    return h;
}

int bdl_world_node(int world) { return bd_world_node(bdl_g.hdr, world); }

int bdl_comm_register(int ctx, const int *world, int n)
{
    if ((uint64_t)n * sizeof(int32_t) > bdl_g.window)
        return -1;
    bd_req_t *r = bdl_req_begin(BD_REQ_COMM_REGISTER);
    r->ctx = ctx;
    r->arg[0] = n;
    for (int i = 0; i < n; i++) {
        int32_t w = world[i];
        memcpy(bdl_g.win + (size_t)i * sizeof w, &w, sizeof w);
    }
    bdl_rpc();
    return 0;
}

/* Revoke notices for communicators this rank has not made yet: a dup
 * from a reserved range does not synchronize (objects/comm.c dup_ctx), so
 * another member may make it, and revoke it, first. */
static int *g_early;
static int g_nearly;

int bdl_comm_revoke_ctx(int ctx)
{
    int found = 0, future = 0;
    /* Contexts are never reused, so a notice for a communicator freed
     * meanwhile matches nothing and is dropped; one for a context still
     * reserved for a dup here is kept for it. */
    for (int i = 1; i < bdl_g.ncomms; i++) {
        bdl_comm_t *c = &bdl_g.comms[i];
        if (c->used && !c->pending && c->ctx == ctx) {
            c->revoked = 1;
            found = 1;
        }
        if (c->used && c->dup_left > 0 && ctx >= c->dup_next && ctx - c->dup_next < c->dup_left)
            future = 1;
    }
    if (!found && future) {
        int *t = realloc(g_early, (size_t)(g_nearly + 1) * sizeof *t);
        if (t) {
            g_early = t;
            g_early[g_nearly++] = ctx;
        }
    }
    return found;
}

int bdl_comm_ctx_revoked(int ctx)
{
    for (int i = 1; i < bdl_g.ncomms; i++) {
        bdl_comm_t *c = &bdl_g.comms[i];
        if (c->used && !c->pending && c->ctx == ctx && c->revoked)
            return 1;
    }
    return 0;
}

int bdl_comm_revoked_early(int ctx)
{
    for (int i = 0; i < g_nearly; i++)
        if (g_early[i] == ctx) {
            g_early[i] = g_early[--g_nearly];
            return 1;
        }
    return 0;
}

int bdl_comm_revoked_error(MPI_Comm comm, const char *call)
{
    return bdl_error(comm, MPIX_ERR_REVOKED, call,
                     "communicator %d was revoked (MPIX_Comm_revoke): only MPIX_Comm_agree, "
                     "MPIX_Comm_shrink and MPI_Comm_free work on it",
                     comm);
}

int bdl_comm_revoke_tell(MPI_Comm comm)
{
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c)
        return MPI_SUCCESS;
    if (!c->revoked) {
        c->revoked = 1;
        bdl_p2p_fail_revoked(c->ctx);
        /* Copy what the sends need: a send may drain our mailbox, and a
         * notice or a message completing an idup can grow the table under c. */
        int ictx = bdl_comm_ictx(c), me = c->rank, n = c->size, nr = c->inter ? c->rsize : 0;
        int *to = malloc((size_t)(n + nr) * sizeof(int));
        if (!to)
            return MPI_ERR_NO_MEM;
        memcpy(to, c->world, (size_t)n * sizeof(int));
        if (nr)
            memcpy(to + n, c->rworld, (size_t)nr * sizeof(int));
        for (int r = 0; r < n + nr; r++)
            if (r != me || r >= n) {
                bdl_send_bytes(ictx, to[r], me, BDL_TAG_REVOKE, NULL, 0, 0, NULL);
                bdl_p2p_note_revoke(to[r]);
            }
        free(to);
        /* Ranks of this node already blocked in a collective on it through
         * the master fail it now (the master of another node does the same
         * when it delivers the notice).  After the notices: a rank that
         * enters a collective later finds its notice first. */
        bd_req_t *q = bdl_req_begin(BD_REQ_COMM_REVOKE);
        q->ctx = bdl_comm_get(comm)->ctx;
        bdl_rpc();
        /* the sends may have grown the table */
        if (!(c = bdl_comm_get(comm)))
            return MPI_SUCCESS;
    }
    /* An intercommunicator's collectives run on its hidden communicators
     * (the local group's; the union for nonblocking ones): members waiting
     * there would wait for ever for a partner the revoke stopped.  Every
     * member revokes its own group's, the revoker at once, the others when
     * the notice reaches them (bdl_comm_revoke_spread). */
    if (!c->inter || c->revoke_told)
        return MPI_SUCCESS;
    c->revoke_told = 1;
    MPI_Comm local = c->local, ucomm = c->ucomm;
    int rc = local ? bdl_comm_revoke_tell(local) : MPI_SUCCESS;
    if (!rc && ucomm)
        rc = bdl_comm_revoke_tell(ucomm);
    return rc;
}

void bdl_comm_revoke_spread(void)
{
    static int busy;
    if (busy)
        return;
    busy = 1;
    for (int i = 1; i < bdl_g.ncomms; i++) {
        bdl_comm_t *c = &bdl_g.comms[i];
        if (c->used && !c->pending && c->inter && c->revoked && !c->revoke_told)
            bdl_comm_revoke_tell(i);
    }
    busy = 0;
}
