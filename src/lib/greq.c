/* Generalized requests (MPI 3.1 12.2).
 *
 * A generalized request is an ordinary request handle (kind BD_RQ_GREQ in
 * the request table of p2p.c) that the program completes itself with
 * MPI_Grequest_complete, possibly from another thread.  The calls that
 * complete it (Wait, Test and their any/some/all forms) call query_fn to
 * fill the status and then free_fn; MPI_Request_get_status calls query_fn
 * only; MPI_Cancel calls cancel_fn; MPI_Request_free before completion
 * defers free_fn to MPI_Grequest_complete. */
#include <stdlib.h>
#include <time.h>

#include "lib.h"

struct bd_greq {
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
    BD_CHECK_INIT(call);
    if (!request)
        return bd_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "request is NULL");
    if (!query_fn || !free_fn || !cancel_fn)
        return bd_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                        "NULL callback (query_fn, free_fn and cancel_fn are all required)");
    struct bd_greq *g = malloc(sizeof *g);
    if (!g)
        return bd_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "out of memory");
    *g = (struct bd_greq){query_fn, free_fn, cancel_fn, extra_state, 0};
    int h = bd_req_new(BD_RQ_GREQ);
    bd_request_t *q = &g_bd.reqs[h];
    q->greq = g;
    bd_status_empty(&q->status);
    *request = h;
    return MPI_SUCCESS;
}

static int greq_done(const bd_request_t *q) { return __atomic_load_n(&q->done, __ATOMIC_ACQUIRE); }

static void greq_release(bd_request_t *q)
{
    free(q->greq);
    q->greq = NULL;
    __atomic_store_n(&q->kind, BD_RQ_FREE, __ATOMIC_RELEASE);
}

int MPI_Grequest_complete(MPI_Request request)
{
    const char *call = "MPI_Grequest_complete";
    BD_CHECK_INIT(call);
    bd_request_t *q = bd_req_lookup(request);
    if (!q || q->kind != BD_RQ_GREQ)
        return bd_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, call,
                        "request %d is not a generalized request", request);
    if (greq_done(q))
        return bd_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, call,
                        "generalized request %d is already complete", request);
    struct bd_greq *g = q->greq;
    if (g->freed) {
        int rc = g->free_fn(g->extra);
        greq_release(q);
        return rc ? bd_error(MPI_COMM_WORLD, rc, call, "free_fn of generalized request %d "
                             "returned error %d", request, rc)
                  : MPI_SUCCESS;
    }
    __atomic_store_n(&q->done, 1, __ATOMIC_RELEASE);
    return MPI_SUCCESS;
}

void bd_greq_wait(bd_request_t *q)
{
    /* Completed by another thread of this rank: poll gently. */
    while (!greq_done(q)) {
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
}

void bd_greq_pause(void)
{
    struct timespec ts = {0, 200000};
    nanosleep(&ts, NULL);
}

int bd_greq_query(bd_request_t *q, MPI_Status *st)
{
    struct bd_greq *g = q->greq;
    MPI_Status s;
    bd_status_empty(&s);
    int rc = g->query(g->extra, &s);
    q->status = s;
    if (st != MPI_STATUS_IGNORE)
        *st = s;
    return rc;
}

int bd_greq_finish(bd_request_t *q)
{
    struct bd_greq *g = q->greq;
    int rc = bd_greq_query(q, MPI_STATUS_IGNORE);
    int rc2 = g->free_fn(g->extra);
    free(g);
    q->greq = NULL;
    return rc ? rc : rc2;
}

int bd_greq_cancel(bd_request_t *q)
{
    struct bd_greq *g = q->greq;
    return g->cancel(g->extra, greq_done(q));
}

int bd_greq_free(bd_request_t *q)
{
    struct bd_greq *g = q->greq;
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
    BD_CHECK_INIT("MPI_Status_set_cancelled");
    if (!status || status == MPI_STATUS_IGNORE)
        return bd_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Status_set_cancelled",
                        "invalid status");
    status->bd_cancelled = flag != 0;
    return MPI_SUCCESS;
}
