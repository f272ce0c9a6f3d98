/* Generalized requests (MPI 3.1 12.2).
 *
 * A generalized request is an ordinary request handle (of the kind
 * greq_ops below, in the request table of core/request.c) that the program completes itself with
 * MPI_Grequest_complete, possibly from another thread.  The calls that
 * complete it (Wait, Test and their any/some/all forms) call query_fn to
 * fill the status and then free_fn; MPI_Request_get_status calls query_fn
 * only; MPI_Cancel calls cancel_fn; MPI_Request_free before completion
 * defers free_fn to MPI_Grequest_complete. */
#include <stdlib.h>
#include <time.h>

#include "core.h"
#include "request.h"

struct bdl_greq {
    MPI_Grequest_query_function *query;
    MPI_Grequest_free_function *free_fn;
    MPI_Grequest_cancel_function *cancel;
    void *extra;
    int freed; /* MPI_Request_free came before MPI_Grequest_complete */
};

static const bdl_req_ops_t greq_ops;

int MPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                       MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                       MPI_Request *request)
{
    BDL_MT_GUARD;
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
    int h = bdl_req_new(&greq_ops);
    bdl_request_t *q = &bdl_g.reqs[h];
    q->impl = g;
    bdl_status_empty(&q->status);
    *request = h;
    return MPI_SUCCESS;
}

static int greq_done(const bdl_request_t *q) { return __atomic_load_n(&q->done, __ATOMIC_ACQUIRE); }

static void greq_release(bdl_request_t *q)
{
    free(q->impl);
    q->impl = NULL;
    __atomic_store_n(&q->ops, NULL, __ATOMIC_RELEASE);
}

int MPI_Grequest_complete(MPI_Request request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Grequest_complete";
    BDL_CHECK_INIT(call);
    bdl_request_t *q = bdl_req_lookup(request);
    if (!q || q->ops != &greq_ops)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, call,
                         "request %d is not a generalized request", request);
    if (greq_done(q))
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, call,
                         "generalized request %d is already complete", request);
    struct bdl_greq *g = q->impl;
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

/* Completed by another thread of this rank: poll gently. */
static void greq_pause(void)
{
    /* Under MPI_THREAD_MULTIPLE the thread that will call
     * MPI_Grequest_complete needs the rank's lock (core/mt.c). */
    if (bdl_mt_on) {
        bdl_mt_nap();
        return;
    }
    struct timespec ts = {0, 200000};
    nanosleep(&ts, NULL);
}

static void greq_progress(bdl_request_t *q, int blocking)
{
    if (!blocking)
        return;
    while (!greq_done(q))
        greq_pause();
}

/* query_fn into q->status (and *st). */
static int greq_query(bdl_request_t *q, MPI_Status *st)
{
    struct bdl_greq *g = q->impl;
    MPI_Status s;
    bdl_status_empty(&s);
    int rc = g->query(g->extra, &s);
    q->status = s;
    if (st != MPI_STATUS_IGNORE)
        *st = s;
    return rc;
}

/* Completion: query_fn, then free_fn. */
static void greq_complete(bdl_request_t *q)
{
    struct bdl_greq *g = q->impl;
    int rc = greq_query(q, MPI_STATUS_IGNORE);
    int rc2 = g->free_fn(g->extra);
    free(g);
    q->impl = NULL;
    q->err = rc ? rc : rc2;
}

static int greq_status(bdl_request_t *q, MPI_Request h, MPI_Status *st)
{
    int err = greq_query(q, st);
    if (err)
        return bdl_error(MPI_COMM_WORLD, err, "MPI_Request_get_status",
                         "query_fn of generalized request %d returned error %d", h, err);
    return MPI_SUCCESS;
}

static int greq_cancel(bdl_request_t *q, MPI_Request h)
{
    struct bdl_greq *g = q->impl;
    int err = g->cancel(g->extra, greq_done(q));
    return err ? bdl_error(MPI_COMM_WORLD, err, "MPI_Cancel",
                           "cancel_fn of generalized request %d returned error %d", h, err)
               : MPI_SUCCESS;
}

/* MPI_Request_free before MPI_Grequest_complete defers free_fn to it. */
static int greq_free(bdl_request_t *q, MPI_Request *request)
{
    MPI_Request h = *request;
    *request = MPI_REQUEST_NULL;
    struct bdl_greq *g = q->impl;
    int err = MPI_SUCCESS;
    if (!greq_done(q)) {
        g->freed = 1;
    } else {
        err = g->free_fn(g->extra);
        greq_release(q);
    }
    return err ? bdl_error(MPI_COMM_WORLD, err, "MPI_Request_free",
                           "free_fn of generalized request %d returned error %d", h, err)
               : MPI_SUCCESS;
}

static const bdl_req_ops_t greq_ops = {
    .progress = greq_progress,
    .pause = greq_pause,
    .complete = greq_complete,
    .status = greq_status,
    .cancel = greq_cancel,
    .free = greq_free,
};

/* ---------------------------------------------------------------- statuses */

int MPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Status_set_cancelled");
    if (!status || status == MPI_STATUS_IGNORE)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Status_set_cancelled", "invalid status");
    status->bd_cancelled = flag != 0;
    return MPI_SUCCESS;
}
