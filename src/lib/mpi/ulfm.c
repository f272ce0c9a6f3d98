/* ULFM, the fault-tolerance extensions (MPIX_Comm_revoke, agree, shrink,
 * the failure queries), with the meaning they have in a run without
 * process failures: BDMPI ends the job when a rank dies, so no call here
 * ever sees a failed process.  See docs/design.md, "Fault tolerance (ULFM)".
 *
 *  - Revoke marks the communicator revoked here and sends a notice (an
 *    empty message with tag BDL_TAG_REVOKE on its hidden context) to every
 *    other member, through the mailboxes (and the masters for other nodes).
 *    A member's matching takes the notice whenever it drains its mailbox:
 *    it marks the communicator revoked and fails its pending receives on
 *    it with MPIX_ERR_REVOKED; communication started later fails at the
 *    call.  No member has to call anything collective.
 *  - Agreements run on a hidden communicator of their own (the context
 *    | BD_CTX_DERIVED | BDL_CTX_AGREE, registered by each member when it
 *    first agrees), as a nonblocking all-reduce with MPI_BAND: they match
 *    each other in their own order, never the program's collectives, and
 *    work on a revoked communicator.  MPIX_Comm_agree is the same call
 *    completed at once, so a blocking agreement on one rank matches a
 *    nonblocking one on another. */
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "mpi_int.h"
#include "nbc.h"
#include "request.h"

#define PMPIX_ALIAS(name) __attribute__((alias(#name)))

/* The tag the shrink of an intercommunicator's leaders meet with on the
 * agreements' union (which carries no other point-to-point traffic). */
#define BDL_TAG_SHRINK 0x53484b

static bdl_comm_t *ulfm_comm(MPI_Comm comm, const char *call, int *rc)
{
    BDL_CHECK_INIT(call);
    bdl_comm_t *c = bdl_comm_get(comm);
    *rc = c ? MPI_SUCCESS : bdl_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);
    return c;
}

int MPIX_Comm_revoke(MPI_Comm comm)
{
    BDL_MT_GUARD;
    int rc;
    bdl_comm_t *c = ulfm_comm(comm, "MPIX_Comm_revoke", &rc);
    if (!c)
        return rc;
    /* A member that has seen another's notice revokes it again: its own
     * hidden communicators may not be revoked yet (bdl_comm_revoke_tell). */
    rc = bdl_comm_revoke_tell(comm);
    if (rc)
        return bdl_error(comm, rc, "MPIX_Comm_revoke", "out of memory");
    return MPI_SUCCESS;
}

int MPIX_Comm_is_revoked(MPI_Comm comm, int *flag)
{
    BDL_MT_GUARD;
    int rc;
    bdl_comm_t *c = ulfm_comm(comm, "MPIX_Comm_is_revoked", &rc);
    if (!c)
        return rc;
    if (!flag)
        return bdl_error(comm, MPI_ERR_ARG, "MPIX_Comm_is_revoked", "flag is NULL");
    /* Notices that have arrived count: take them from the mailbox. */
    bdl_p2p_drain();
    c = bdl_comm_get(comm);
    *flag = c->revoked;
    return MPI_SUCCESS;
}

/* The hidden communicator comm's agreements run on (MPI_COMM_SELF when
 * the caller is the only member: nothing to register or match). */
static int agree_comm(MPI_Comm comm, const char *call, MPI_Comm *out)
{
    bdl_comm_t *c = bdl_comm_get(comm);
    if (c->agree) {
        *out = c->agree;
        return MPI_SUCCESS;
    }
    /* An intercommunicator agrees over both groups: its union. */
    const bdl_comm_t *u = c->inter ? bdl_comm_get(c->ucomm) : c;
    if (!u)
        return bdl_error(comm, MPI_ERR_COMM, call, "communicator %d is not complete yet", comm);
    if (u->size == 1) {
        *out = MPI_COMM_SELF;
        return MPI_SUCCESS;
    }
    int n = u->size, rank = u->rank, ctx = c->ctx | BD_CTX_DERIVED | BDL_CTX_AGREE;
    int *w = malloc((size_t)n * sizeof(int));
    if (!w)
        return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
    memcpy(w, u->world, (size_t)n * sizeof(int));
    if (bdl_comm_register(ctx, w, n) < 0) {
        free(w);
        return bdl_error(comm, MPI_ERR_OTHER, call,
                         "a communicator of %d ranks does not fit the window (-window)", n);
    }
    int h = bdl_comm_add(ctx, rank, n, w, MPI_ERRORS_RETURN);
    if (h < 0) {
        free(w);
        return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
    }
    bdl_g.comms[comm].agree = h;
    *out = h;
    return MPI_SUCCESS;
}

static int iagree(MPI_Comm comm, int *flag, MPI_Request *request, const char *call)
{
    int rc;
    bdl_comm_t *c = ulfm_comm(comm, call, &rc);
    if (!c)
        return rc;
    if (!flag || !request)
        return bdl_error(comm, MPI_ERR_ARG, call, "%s is NULL", flag ? "request" : "flag");
    MPI_Comm a = MPI_COMM_NULL;
    if ((rc = agree_comm(comm, call, &a)))
        return rc;
    rc = MPI_Iallreduce(MPI_IN_PLACE, flag, 1, MPI_INT, MPI_BAND, a, request);
    if (rc)
        return bdl_error(comm, rc, call, "the agreement's all-reduce failed");
    return MPI_SUCCESS;
}

int MPIX_Comm_iagree(MPI_Comm comm, int *flag, MPI_Request *request)
{
    BDL_MT_GUARD;
    return iagree(comm, flag, request, "MPIX_Comm_iagree");
}

int MPIX_Comm_agree(MPI_Comm comm, int *flag)
{
    BDL_MT_GUARD;
    MPI_Request req;
    int rc = iagree(comm, flag, &req, "MPIX_Comm_agree");
    if (rc)
        return rc;
    rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (rc)
        return bdl_error(comm, rc, "MPIX_Comm_agree", "completing the agreement failed");
    return MPI_SUCCESS;
}

/* Shrink leaves out the failed processes, and there are none: a new
 * communicator of the same group (a split, so no attributes are copied),
 * with comm's error handler.
 *
 * The split runs on the agreements' hidden communicator, not on comm: after
 * a revoke the members disagree on how many collectives comm has had (the
 * one the revoke interrupted was begun on some ranks only), so a split
 * numbered by comm's count would meet another rank's interrupted
 * collective, or an instance of its own, in the master (a "collective
 * mismatch", or a hang).  Agreements and shrinks are called in one order
 * by every member (MPI's rule for collectives), so the hidden
 * communicator's count agrees.  An intercommunicator's agreements run on
 * the union of its groups; its shrink splits that union by group and joins
 * the two halves with MPI_Intercomm_create, whose leaders meet on the
 * union too (inter_shrink).  Nothing of the revoked intercommunicator, nor
 * its hidden local communicators (whose collectives a revoke may have cut
 * short), takes part. */
typedef struct shrink {
    MPI_Comm *out;
    MPI_Errhandler errh;
} shrink_t;

static void ishrink_done(void *arg, int ctx, int rank, int size, int *world)
{
    shrink_t *x = arg;
    int h = bdl_comm_add(ctx, rank, size, world, x->errh);
    if (h < 0)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory completing MPIX_Comm_ishrink");
    *x->out = h;
    free(x);
}

/* The shrink of an intercommunicator (blocking; MPIX_Comm_ishrink's is
 * complete when it returns): on the agreements' union a, each group splits
 * off a new local communicator (colour: whether its leader has the lower
 * world rank, which both groups see alike; key: the local rank, so ranks
 * keep their order), and the leaders meet on a. */
static int inter_shrink(MPI_Comm comm, MPI_Comm a, MPI_Comm *newcomm, const char *call)
{
    bdl_comm_t *c = bdl_comm_get(comm);
    int lead = c->world[0], rlead = c->rworld[0], rank = c->rank;
    MPI_Errhandler errh = c->errh;
    bdl_comm_t *ac = bdl_comm_get(a);
    int ra = -1;
    for (int i = 0; i < ac->size; i++)
        if (ac->world[i] == rlead)
            ra = i;
    if (ra < 0)
        return bdl_error(comm, MPI_ERR_INTERN, call, "the remote leader is not in the union");
    MPI_Comm half = MPI_COMM_NULL;
    int rc = bdl_comm_split(a, lead < rlead ? 0 : 1, rank, &half, call);
    if (rc)
        return bdl_error(comm, rc, call, "the shrink's split failed");
    bdl_g.comms[half].errh = MPI_ERRORS_RETURN;
    rc = MPI_Intercomm_create(half, 0, a, ra, BDL_TAG_SHRINK, newcomm);
    MPI_Comm_free(&half);
    if (rc)
        return bdl_error(comm, rc, call, "joining the shrunk groups failed");
    bdl_g.comms[*newcomm].errh = errh;
    return MPI_SUCCESS;
}

static int shrink(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request, const char *call)
{
    int rc;
    bdl_comm_t *c = ulfm_comm(comm, call, &rc);
    if (!c)
        return rc;
    if (!newcomm)
        return bdl_error(comm, MPI_ERR_ARG, call, "newcomm is NULL");
    MPI_Comm a = MPI_COMM_NULL;
    if ((rc = agree_comm(comm, call, &a)))
        return rc;
    if (bdl_g.comms[comm].inter) {
        if ((rc = inter_shrink(comm, a, newcomm, call)))
            return rc;
        if (request)
            *request = bdl_nbc_completed();
        return MPI_SUCCESS;
    }
    MPI_Errhandler errh = bdl_g.comms[comm].errh;
    if (!request) {
        if ((rc = bdl_comm_split(a, 0, bdl_g.comms[a].rank, newcomm, call)))
            return bdl_error(comm, rc, call, "the shrink's split failed");
        bdl_g.comms[*newcomm].errh = errh;
        return MPI_SUCCESS;
    }
    bdl_comm_t *ac = bdl_comm_get(a);
    if (ac->size == 1) {
        bdl_req_begin(BD_REQ_CTX_ALLOC);
        bdl_rpc();
        int ctx = (int)bdl_resp()->arg[0];
        int *w = malloc(sizeof(int));
        if (!w)
            return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
        w[0] = bdl_comm_get(a)->world[0];
        int h = bdl_comm_add(ctx, 0, 1, w, errh);
        if (h < 0) {
            free(w);
            return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
        }
        *newcomm = h;
        *request = bdl_nbc_completed();
        return MPI_SUCCESS;
    }
    shrink_t *x = malloc(sizeof *x);
    if (!x)
        return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
    x->out = newcomm;
    x->errh = errh;
    rc = bdl_nbc_split(ac, 0, ac->rank, BD_API_COMM_DUP, ishrink_done, x, request);
    if (rc)
        return bdl_error(comm, rc, call, "the shrink's split failed");
    return MPI_SUCCESS;
}

int MPIX_Comm_shrink(MPI_Comm comm, MPI_Comm *newcomm)
{
    BDL_MT_GUARD;
    return shrink(comm, newcomm, NULL, "MPIX_Comm_shrink");
}

int MPIX_Comm_ishrink(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    BDL_MT_GUARD;
    if (!request)
        return bdl_error(comm, MPI_ERR_ARG, "MPIX_Comm_ishrink", "request is NULL");
    return shrink(comm, newcomm, request, "MPIX_Comm_ishrink");
}

int MPIX_Comm_failure_ack(MPI_Comm comm)
{
    BDL_MT_GUARD;
    int rc;
    bdl_comm_t *c = ulfm_comm(comm, "MPIX_Comm_failure_ack", &rc);
    return c ? MPI_SUCCESS : rc;
}

static int empty_group(MPI_Comm comm, MPI_Group *grp, const char *call)
{
    int rc;
    bdl_comm_t *c = ulfm_comm(comm, call, &rc);
    if (!c)
        return rc;
    if (!grp)
        return bdl_error(comm, MPI_ERR_ARG, call, "failedgrp is NULL");
    *grp = MPI_GROUP_EMPTY;
    return MPI_SUCCESS;
}

int MPIX_Comm_failure_get_acked(MPI_Comm comm, MPI_Group *failedgrp)
{
    BDL_MT_GUARD;
    return empty_group(comm, failedgrp, "MPIX_Comm_failure_get_acked");
}

int MPIX_Comm_get_failed(MPI_Comm comm, MPI_Group *failedgrp)
{
    BDL_MT_GUARD;
    return empty_group(comm, failedgrp, "MPIX_Comm_get_failed");
}

int MPIX_Comm_ack_failed(MPI_Comm comm, int num_to_ack, int *num_acked)
{
    BDL_MT_GUARD;
    const char *call = "MPIX_Comm_ack_failed";
    int rc;
    bdl_comm_t *c = ulfm_comm(comm, call, &rc);
    if (!c)
        return rc;
    if (num_to_ack < 0)
        return bdl_error(comm, MPI_ERR_ARG, call, "invalid num_to_ack %d (must be >= 0)",
                         num_to_ack);
    if (!num_acked)
        return bdl_error(comm, MPI_ERR_ARG, call, "num_acked is NULL");
    *num_acked = 0;
    return MPI_SUCCESS;
}

/* The profiling names (MPI 3.1 14.2 applied to the extensions). */
int PMPIX_Comm_revoke(MPI_Comm comm) PMPIX_ALIAS(MPIX_Comm_revoke);
int PMPIX_Comm_is_revoked(MPI_Comm comm, int *flag) PMPIX_ALIAS(MPIX_Comm_is_revoked);
int PMPIX_Comm_agree(MPI_Comm comm, int *flag) PMPIX_ALIAS(MPIX_Comm_agree);
int PMPIX_Comm_iagree(MPI_Comm comm, int *flag, MPI_Request *request) PMPIX_ALIAS(MPIX_Comm_iagree);
int PMPIX_Comm_shrink(MPI_Comm comm, MPI_Comm *newcomm) PMPIX_ALIAS(MPIX_Comm_shrink);
int PMPIX_Comm_ishrink(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
    PMPIX_ALIAS(MPIX_Comm_ishrink);
int PMPIX_Comm_failure_ack(MPI_Comm comm) PMPIX_ALIAS(MPIX_Comm_failure_ack);
int PMPIX_Comm_failure_get_acked(MPI_Comm comm, MPI_Group *failedgrp)
    PMPIX_ALIAS(MPIX_Comm_failure_get_acked);
int PMPIX_Comm_get_failed(MPI_Comm comm, MPI_Group *failedgrp) PMPIX_ALIAS(MPIX_Comm_get_failed);
int PMPIX_Comm_ack_failed(MPI_Comm comm, int num_to_ack, int *num_acked)
    PMPIX_ALIAS(MPIX_Comm_ack_failed);
