/* The request table and the completion engine.  A request's kind is its
 * operations table (request.h); this file dispatches through it only, so
 * it knows no kind: point-to-point requests are msg.c's, nonblocking
 * collectives nbc.c's, generalized requests mpi/greq.c's. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "request.h"

/* ---------------------------------------------------------------- the table */

/* The search for a free entry starts at the lowest freed since (a scan
 * from 1 each time was a third of the CPU time of a small send and its
 * receive with 128 requests in flight). */
static void req_freed(int i)
{
    if (i < bdl_g.req_free_from)
        bdl_g.req_free_from = i;
}

int bdl_req_new(const bdl_req_ops_t *ops)
{
    if (bdl_g.ndetached)
        bdl_req_reap_detached();
    int from = bdl_g.req_free_from > 1 ? bdl_g.req_free_from : 1;
    for (int pass = 0; pass < 2; pass++, from = 1)
        for (int i = from; i < bdl_g.nreqs; i++)
            if (!bdl_g.reqs[i].ops) {
                memset(&bdl_g.reqs[i], 0, sizeof bdl_g.reqs[i]);
                bdl_g.reqs[i].ops = ops;
                bdl_g.req_free_from = i + 1;
                return i;
            }
    int n = bdl_g.nreqs ? bdl_g.nreqs * 2 : 64;
    if (bdl_g.nreqs_max && n > bdl_g.nreqs_max) /* MPI_THREAD_MULTIPLE: a table that never moves */
        n = bdl_g.nreqs_max > bdl_g.nreqs ? bdl_g.nreqs_max : 0;
    bdl_request_t *t =
        bdl_g.nreqs_max ? (n ? bdl_g.reqs : NULL) : realloc(bdl_g.reqs, (size_t)n * sizeof *t);
    if (!t)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory allocating a request");
    memset(t + bdl_g.nreqs, 0, (size_t)(n - bdl_g.nreqs) * sizeof *t);
    int h = bdl_g.nreqs ? bdl_g.nreqs : 1;
    bdl_g.reqs = t;
    bdl_g.nreqs = n;
    bdl_g.reqs[h].ops = ops;
    bdl_g.req_free_from = h + 1;
    return h;
}

bdl_request_t *bdl_req_lookup(MPI_Request h)
{
    if (h <= 0 || h >= bdl_g.nreqs || !bdl_g.reqs[h].ops)
        return NULL;
    return &bdl_g.reqs[h];
}

void bdl_req_free_slot(bdl_request_t *q)
{
    q->ops = NULL;
    req_freed((int)(q - bdl_g.reqs));
}

/* Requests the program freed while still pending: they complete (a
 * receive's data lands in its buffer) whenever the library next looks. */
void bdl_req_reap_detached(void)
{
    for (int i = 1; i < bdl_g.nreqs; i++) {
        bdl_request_t *q = &bdl_g.reqs[i];
        if (!q->ops || !q->detached)
            continue;
        q->ops->progress(q, 0);
        if (q->done) {
            q->ops = NULL;
            req_freed(i);
            q->detached = 0;
            bdl_g.ndetached--;
        }
    }
}

int bdl_req_bad(const char *call, MPI_Request h)
{
    return bdl_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, call, "invalid request handle %d", h);
}

/* The message for an error a completed request reports. */
static const char *req_err_msg(int err)
{
    return err == MPI_ERR_TRUNCATE   ? "received message truncated"
           : err == MPIX_ERR_REVOKED ? "the communicator was revoked (MPIX_Comm_revoke)"
                                     : "a generalized request's query_fn or free_fn failed";
}

/* A request with work to do or to report: inactive persistent requests
 * count as null in Wait/Test calls (MPI 3.1 3.9). */
static bdl_request_t *req_live(MPI_Request h)
{
    bdl_request_t *q = bdl_req_lookup(h);
    return q && !q->inactive ? q : NULL;
}

/* MPI_REQUEST_NULL, or a persistent request that is not started: calls
 * that wait or test return at once with an empty status. */
static int req_is_null(MPI_Request h)
{
    return h == MPI_REQUEST_NULL || (bdl_req_lookup(h) && !req_live(h));
}

/* ---------------------------------------------------------------- completion */

/* Report a completed request and free it. */
static int req_finish(MPI_Request *h, MPI_Status *st)
{
    bdl_request_t *q = &bdl_g.reqs[*h];
    if (q->ops->complete)
        q->ops->complete(q);
    int err = q->err;
    if (st != MPI_STATUS_IGNORE)
        *st = q->status;
    if (q->persistent) {
        q->inactive = 1;
        return err;
    }
    if (q->ops->release)
        q->ops->release(q);
    q->ops = NULL;
    req_freed((int)(q - bdl_g.reqs));
    *h = MPI_REQUEST_NULL;
    return err;
}

/* The calls that complete one request leave the status's MPI_ERROR alone
 * (MPI 3.1 3.2.5: the error is the call's return value). */
static int req_finish1(MPI_Request *h, MPI_Status *st)
{
    int keep = st != MPI_STATUS_IGNORE ? st->MPI_ERROR : 0;
    int err = req_finish(h, st);
    if (st != MPI_STATUS_IGNORE)
        st->MPI_ERROR = keep;
    return err;
}

int bdl_req_wait(const char *call, MPI_Request *request, MPI_Status *status)
{
    if (req_is_null(*request)) {
        bdl_status_empty(status);
        return MPI_SUCCESS;
    }
    bdl_request_t *q = req_live(*request);
    if (!q)
        return bdl_req_bad(call, *request);
    if (bdl_mt_busy()) /* polls, giving the lock up between them (mt.c) */
        while (q->ops->progress(q, 0), !q->done)
            bdl_mt_pause();
    else
        q->ops->progress(q, 1);
    MPI_Comm ec = q->ecomm ? q->ecomm : MPI_COMM_WORLD;
    int err = req_finish1(request, status);
    if (err)
        return bdl_error(bdl_comm_get(ec) ? ec : MPI_COMM_WORLD, err, call, "%s", req_err_msg(err));
    return MPI_SUCCESS;
}

int bdl_req_test(const char *call, MPI_Request *request, int *flag, MPI_Status *status)
{
    if (req_is_null(*request)) {
        *flag = 1;
        bdl_status_empty(status);
        return MPI_SUCCESS;
    }
    bdl_request_t *q = req_live(*request);
    if (!q)
        return bdl_req_bad(call, *request);
    q->ops->progress(q, 0);
    *flag = q->done;
    if (!q->done)
        return MPI_SUCCESS;
    MPI_Comm ec = q->ecomm ? q->ecomm : MPI_COMM_WORLD;
    int err = req_finish1(request, status);
    if (err)
        return bdl_error(bdl_comm_get(ec) ? ec : MPI_COMM_WORLD, err, call, "%s", req_err_msg(err));
    return MPI_SUCCESS;
}

int bdl_req_get_status(const char *call, MPI_Request request, int *flag, MPI_Status *status)
{
    if (req_is_null(request)) {
        *flag = 1;
        bdl_status_empty(status);
        return MPI_SUCCESS;
    }
    bdl_request_t *q = req_live(request);
    if (!q)
        return bdl_req_bad(call, request);
    q->ops->progress(q, 0);
    *flag = q->done;
    if (q->done && q->ops->status)
        return q->ops->status(q, request, status);
    if (q->done && status != MPI_STATUS_IGNORE)
        *status = q->status;
    return MPI_SUCCESS;
}

/* One poll of every pending request in the list, kind by kind in their
 * poll order.  With `block`, wait until at least one has completed.
 * Unless `every`, a request that is already done ends the call at once.
 * Returns how many are done. */
static int poll_many(int count, MPI_Request reqs[], int block, int every)
{
    if (block && bdl_mt_busy()) { /* another thread may need the lock meanwhile (mt.c) */
        int n;
        while (!(n = poll_many(count, reqs, 0, every)))
            bdl_mt_pause();
        return n;
    }
    if (block) {
        /* Requests completed from outside: poll the whole set until one is. */
        for (int i = 0; i < count; i++) {
            bdl_request_t *q = req_live(reqs[i]);
            if (q && !q->done && q->ops->pause) {
                void (*pause)(void) = q->ops->pause;
                int n;
                while (!(n = poll_many(count, reqs, 0, every)))
                    pause();
                return n;
            }
        }
    }
    enum { MAX_KINDS = 8 };
    const bdl_req_ops_t *kinds[MAX_KINDS];
    int nk = 0, ndone = 0, spins = 0;
    for (int i = 0; i < count; i++) {
        bdl_request_t *q = req_live(reqs[i]);
        if (!q)
            continue;
        if (q->done) {
            ndone++;
            continue;
        }
        if (!q->ops->poll)
            continue;
        int k = 0;
        while (k < nk && kinds[k] != q->ops)
            k++;
        if (k < nk || nk == MAX_KINDS)
            continue;
        /* Insert in poll order. */
        for (k = nk++; k > 0 && kinds[k - 1]->poll_order > q->ops->poll_order; k--)
            kinds[k] = kinds[k - 1];
        kinds[k] = q->ops;
        spins += q->ops->spins;
    }
    if ((ndone && !every) || !nk)
        return ndone;
    if (ndone)
        block = 0;
    bdl_request_t **qs = malloc((size_t)count * sizeof *qs);
    if (!qs)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory polling %d requests", count);
    for (;;) {
        for (int k = 0; k < nk; k++) {
            int n = 0, now = 0;
            for (int i = 0; i < count; i++) {
                bdl_request_t *q = req_live(reqs[i]);
                now += q && q->done;
                if (q && !q->done && q->ops == kinds[k])
                    qs[n++] = q;
            }
            /* A poll of one kind may complete requests of another: a poll of
             * collectives matches the posted receives first (nbc.c).  Those
             * count, and nothing more may block for them (a wait for "the
             * other" receives, or for none, would not end). */
            if (now > ndone) {
                ndone = now;
                if (!every) {
                    free(qs);
                    return ndone;
                }
            }
            if (!n)
                continue;
            bdl_req_poll_t p = {.block = block && !ndone,
                                .others = nk > 1,
                                .spinning = spins - kinds[k]->spins > 0,
                                .later = k + 1 < nk};
            ndone += kinds[k]->poll(qs, n, &p);
            if (ndone && (!every || kinds[k]->poll_ends || k + 1 == nk)) {
                free(qs);
                return ndone;
            }
        }
        if (ndone || !block) {
            free(qs);
            return ndone;
        }
    }
}

/* Report every request of the list (null ones get an empty status); 1 if
 * one of them completed with an error. */
static int finish_all(int count, MPI_Request reqs[], MPI_Status *statuses)
{
    int err = 0;
    for (int i = 0; i < count; i++) {
        MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
        if (reqs[i] == MPI_REQUEST_NULL || !req_live(reqs[i])) {
            bdl_status_empty(st);
            continue;
        }
        if (req_finish(&reqs[i], st))
            err = 1;
    }
    return err;
}

static int in_status(const char *call)
{
    return bdl_error(MPI_COMM_WORLD, MPI_ERR_IN_STATUS, call,
                     "a received message was truncated (see the statuses)");
}

static int check_reqs(const char *call, int count, MPI_Request reqs[])
{
    if (count < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_COUNT, call, "invalid count %d", count);
    for (int i = 0; i < count; i++)
        if (reqs[i] != MPI_REQUEST_NULL && !bdl_req_lookup(reqs[i]))
            return bdl_req_bad(call, reqs[i]);
    return MPI_SUCCESS;
}

int bdl_req_waitall_quiet(int count, MPI_Request reqs[], MPI_Status *st)
{
    for (int i = 0; i < count; i++) {
        bdl_request_t *q = req_live(reqs[i]);
        if (q)
            q->ops->progress(q, 1);
    }
    return finish_all(count, reqs, st);
}

int bdl_req_waitall(const char *call, int count, MPI_Request reqs[], MPI_Status *statuses)
{
    int rc = check_reqs(call, count, reqs);
    if (rc)
        return rc;
    for (int i = 0; i < count; i++) {
        bdl_request_t *q = req_live(reqs[i]);
        if (q)
            q->ops->progress(q, 1);
    }
    return finish_all(count, reqs, statuses) ? in_status(call) : MPI_SUCCESS;
}

/* Poll the list once; *flag: all of it is complete. */
static void test_all(int count, MPI_Request reqs[], int *flag)
{
    int pending = 0;
    for (int i = 0; i < count; i++) {
        bdl_request_t *q = req_live(reqs[i]);
        if (q && !q->done)
            pending++;
    }
    if (pending)
        poll_many(count, reqs, 0, 1);
    *flag = 1;
    for (int i = 0; i < count; i++) {
        bdl_request_t *q = req_live(reqs[i]);
        if (q && !q->done)
            *flag = 0;
    }
}

void bdl_req_progress_one(MPI_Request h)
{
    bdl_request_t *q = req_live(h);
    if (q)
        q->ops->progress(q, 1);
}

int bdl_req_testall_quiet(int count, MPI_Request reqs[], int *flag, MPI_Status *st)
{
    test_all(count, reqs, flag);
    return *flag ? finish_all(count, reqs, st) : 0;
}

int bdl_req_testall(const char *call, int count, MPI_Request reqs[], int *flag,
                    MPI_Status *statuses)
{
    int rc = check_reqs(call, count, reqs);
    if (rc)
        return rc;
    test_all(count, reqs, flag);
    if (!*flag)
        return MPI_SUCCESS;
    return finish_all(count, reqs, statuses) ? in_status(call) : MPI_SUCCESS;
}

int bdl_req_stamp(void)
{
    static unsigned stamp = 1;
    stamp = stamp >= INT_MAX ? 2 : stamp + 1;
    return (int)stamp;
}

/* The earliest done request (bdl_req_stamp), the first in the array among
 * equals; -1 if none is done. */
static int first_done(int count, MPI_Request reqs[])
{
    int best = -1, when = 0;
    for (int i = 0; i < count; i++) {
        bdl_request_t *q = req_live(reqs[i]);
        if (q && q->done && (best < 0 || q->done < when)) {
            best = i;
            when = q->done;
        }
    }
    return best;
}

static int any_active(int count, MPI_Request reqs[])
{
    for (int i = 0; i < count; i++)
        if (req_live(reqs[i]))
            return 1;
    return 0;
}

int bdl_req_waitany(const char *call, int count, MPI_Request reqs[], int *index, int *flag,
                    MPI_Status *status)
{
    int rc = check_reqs(call, count, reqs);
    if (rc)
        return rc;
    if (!any_active(count, reqs)) {
        *index = MPI_UNDEFINED;
        if (flag)
            *flag = 1;
        bdl_status_empty(status);
        return MPI_SUCCESS;
    }
    poll_many(count, reqs, !flag, 0);
    int i = first_done(count, reqs);
    if (flag)
        *flag = i >= 0;
    if (i < 0) {
        *index = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    *index = i;
    int err = req_finish1(&reqs[i], status);
    if (err)
        return bdl_error(MPI_COMM_WORLD, err, call, "%s", req_err_msg(err));
    return MPI_SUCCESS;
}

int bdl_req_waitsome(const char *call, int incount, MPI_Request reqs[], int *outcount,
                     int indices[], MPI_Status *statuses, int block)
{
    int rc = check_reqs(call, incount, reqs);
    if (rc)
        return rc;
    if (!any_active(incount, reqs)) {
        *outcount = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    poll_many(incount, reqs, block, 1);
    int n = 0, err = 0;
    for (int i = 0; i < incount; i++) {
        bdl_request_t *q = req_live(reqs[i]);
        if (!q || !q->done)
            continue;
        MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[n];
        indices[n++] = i;
        if (req_finish(&reqs[i], st))
            err = 1;
    }
    *outcount = n;
    return err ? in_status(call) : MPI_SUCCESS;
}

/* ---------------------------------------------------------------- cancel, free */

int bdl_req_cancel(const char *call, MPI_Request *request)
{
    bdl_request_t *q = request ? req_live(*request) : NULL;
    if (!q)
        return bdl_req_bad(call, request ? *request : MPI_REQUEST_NULL);
    return q->ops->cancel(q, *request);
}

int bdl_req_release(const char *call, MPI_Request *request)
{
    bdl_request_t *q = request ? bdl_req_lookup(*request) : NULL;
    if (!q)
        return bdl_req_bad(call, request ? *request : MPI_REQUEST_NULL);
    return q->ops->free(q, request);
}
