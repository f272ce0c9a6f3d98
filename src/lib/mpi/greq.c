/* Generalized requests (MPI 3.1 12.2).
 *
 * A generalized request is an ordinary request handle (kind BDL_RQ_GREQ in
 * the request table of p2p.c) that the program completes itself with
 * MPI_Grequest_complete, possibly from another thread.  The calls that
 * complete it (Wait, Test and their any/some/all forms) call query_fn to
 * fill the status and then free_fn; MPI_Request_get_status calls query_fn
 * only; MPI_Cancel calls cancel_fn; MPI_Request_free before completion
 * defers free_fn to MPI_Grequest_complete. */
#include <stdlib.h>
#include <time.h>

#include "core.h"
#include "dt.h"
#include "mpi_int.h"
#include "nbc.h"
#include "objects.h"
#include "request.h"

struct bdl_greq {
    MPI_Grequest_query_function *query;
    MPI_Grequest_free_function *free_fn;
    MPI_Grequest_cancel_function *cancel;
    void *extra;
    int freed; /* MPI_Request_free came before MPI_Grequest_complete */
};

int MPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                       MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                       MPI_Request *request)
{
    const char *call = "MPI_Grequest_start";
    BDL_CHECK_INIT(call);
    if (!request)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "request is NULL");
    if (!query_fn || !free_fn || !cancel_fn)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                         "NULL callback (query_fn, free_fn and cancel_fn are all required)");
    struct bdl_greq *g = malloc(sizeof *g);
    if (!g)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "out of memory");
    *g = (struct bdl_greq){query_fn, free_fn, cancel_fn, extra_state, 0};
    int h = bdl_req_new(BDL_RQ_GREQ);
    bdl_request_t *q = &bdl_g.reqs[h];
    q->greq = g;
    bdl_status_empty(&q->status);
    *request = h;
    return MPI_SUCCESS;
}

static int greq_done(const bdl_request_t *q) { return __atomic_load_n(&q->done, __ATOMIC_ACQUIRE); }

static void greq_release(bdl_request_t *q)
{
    free(q->greq);
    q->greq = NULL;
    __atomic_store_n(&q->kind, BDL_RQ_FREE, __ATOMIC_RELEASE);
}

int MPI_Grequest_complete(MPI_Request request)
{
    const char *call = "MPI_Grequest_complete";
    BDL_CHECK_INIT(call);
    bdl_request_t *q = bdl_req_lookup(request);
    if (!q || q->kind != BDL_RQ_GREQ)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, call,
                         "request %d is not a generalized request", request);
    if (greq_done(q))
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, call,
                         "generalized request %d is already complete", request);
    struct bdl_greq *g = q->greq;
    if (g->freed) {
        int rc = g->free_fn(g->extra);
        greq_release(q);
        return rc ? bdl_error(MPI_COMM_WORLD, rc, call,
                              "free_fn of generalized request %d "
                              "returned error %d",
                              request, rc)
                  : MPI_SUCCESS;
    }
    __atomic_store_n(&q->done, 1, __ATOMIC_RELEASE);
    return MPI_SUCCESS;
}

void bdl_greq_wait(bdl_request_t *q)
{
    /* Completed by another thread of this rank: poll gently. */
    while (!greq_done(q)) {
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
}

void bdl_greq_pause(void)
{
    struct timespec ts = {0, 200000};
    nanosleep(&ts, NULL);
}

int bdl_greq_query(bdl_request_t *q, MPI_Status *st)
{
    struct bdl_greq *g = q->greq;
    MPI_Status s;
    bdl_status_empty(&s);
    int rc = g->query(g->extra, &s);
    q->status = s;
    if (st != MPI_STATUS_IGNORE)
        *st = s;
    return rc;
}

int bdl_greq_finish(bdl_request_t *q)
{
    struct bdl_greq *g = q->greq;
    int rc = bdl_greq_query(q, MPI_STATUS_IGNORE);
    int rc2 = g->free_fn(g->extra);
    free(g);
    q->greq = NULL;
    return rc ? rc : rc2;
}

int bdl_greq_cancel(bdl_request_t *q)
{
    struct bdl_greq *g = q->greq;
    return g->cancel(g->extra, greq_done(q));
}

int bdl_greq_free(bdl_request_t *q)
{
    struct bdl_greq *g = q->greq;
    if (!greq_done(q)) {
        g->freed = 1;
        return MPI_SUCCESS;
    }
    int rc = g->free_fn(g->extra);
    greq_release(q);
    return rc;
}

/* ---------------------------------------------------------------- statuses */

int MPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    BDL_CHECK_INIT("MPI_Status_set_cancelled");
    if (!status || status == MPI_STATUS_IGNORE)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Status_set_cancelled", "invalid status");
    status->bd_cancelled = flag != 0;
    return MPI_SUCCESS;
}
