/*
 * grequest: generalized requests (MPI 3.1 12.2) and status helpers.
 *
 *  1. Grequest_start, Test before completion (flag false, no callback),
 *     Grequest_complete, Request_get_status (query_fn only), Wait: query_fn
 *     fills the status (source, tag, count via Status_set_elements) and
 *     free_fn runs once, after query_fn; the handle becomes
 *     MPI_REQUEST_NULL.
 *  2. Test after completion completes it the same way.
 *  3. MPI_Cancel calls cancel_fn with complete = false before completion;
 *     query_fn marks the status cancelled (Status_set_cancelled) and
 *     Test_cancelled reports it.
 *  4. MPI_Request_free before completion: free_fn runs at
 *     Grequest_complete, query_fn never.
 *  5. Waitall over generalized and point-to-point requests together;
 *     Waitany and Waitsome pick the completed generalized request.
 *  6. An error returned by query_fn is returned by MPI_Wait
 *     (MPI_ERRORS_RETURN).
 */
#include "mtest.h"

typedef struct {
    int id;
    int nquery, nfree, ncancel, cancel_complete;
    int order; /* 1 once free ran after a query */
    int query_rc;
    int cancelled;
} gstate_t;

static int query_fn(void *extra, MPI_Status *st)
{
    gstate_t *g = extra;
    g->nquery++;
    st->MPI_SOURCE = 100 + g->id;
    st->MPI_TAG = 200 + g->id;
    MPI_Status_set_elements(st, MPI_INT, g->id + 1);
    MPI_Status_set_cancelled(st, g->cancelled);
    return g->query_rc;
}

static int free_fn(void *extra)
{
    gstate_t *g = extra;
    g->nfree++;
    g->order = g->nquery > 0;
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete)
{
    gstate_t *g = extra;
    g->ncancel++;
    g->cancel_complete = complete;
    g->cancelled = !complete;
    return MPI_SUCCESS;
}

static void check_status(const MPI_Status *st, int id)
{
    int n = -1;
    MPI_Get_count(st, MPI_INT, &n);
    CHECK(st->MPI_SOURCE == 100 + id && st->MPI_TAG == 200 + id && n == id + 1,
          "status of request %d: source %d tag %d count %d", id, st->MPI_SOURCE, st->MPI_TAG, n);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "grequest");
    int rank = mtest_rank_, flag;
    MPI_Request rq;
    MPI_Status st;

    /* 1. */
    gstate_t g1 = {1, 0, 0, 0, 0, 0, MPI_SUCCESS, 0};
    CHECK_MPI(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g1, &rq));
    flag = 1;
    CHECK_MPI(MPI_Test(&rq, &flag, &st));
    CHECK(!flag, "Test completed an incomplete generalized request");
    CHECK(g1.nquery == 0 && g1.nfree == 0, "callbacks before completion");
    CHECK_MPI(MPI_Grequest_complete(rq));
    flag = 0;
    CHECK_MPI(MPI_Request_get_status(rq, &flag, &st));
    CHECK(flag, "Request_get_status after completion: flag false");
    check_status(&st, 1);
    CHECK(g1.nquery == 1 && g1.nfree == 0, "get_status: %d queries %d frees", g1.nquery, g1.nfree);
    CHECK_MPI(MPI_Wait(&rq, &st));
    check_status(&st, 1);
    CHECK(g1.nquery == 2 && g1.nfree == 1 && g1.order, "Wait: %d queries %d frees", g1.nquery,
          g1.nfree);
    CHECK(rq == MPI_REQUEST_NULL, "request not MPI_REQUEST_NULL after Wait");

    /* 2. */
    gstate_t g2 = {2, 0, 0, 0, 0, 0, MPI_SUCCESS, 0};
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g2, &rq);
    MPI_Grequest_complete(rq);
    flag = 0;
    CHECK_MPI(MPI_Test(&rq, &flag, &st));
    CHECK(flag && rq == MPI_REQUEST_NULL, "Test after completion");
    check_status(&st, 2);
    CHECK(g2.nquery == 1 && g2.nfree == 1, "Test: %d queries %d frees", g2.nquery, g2.nfree);

    /* 3. */
    gstate_t g3 = {3, 0, 0, 0, 0, 0, MPI_SUCCESS, 0};
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g3, &rq);
    CHECK_MPI(MPI_Cancel(&rq));
    CHECK(g3.ncancel == 1 && g3.cancel_complete == 0, "cancel_fn: %d calls, complete %d",
          g3.ncancel, g3.cancel_complete);
    MPI_Grequest_complete(rq);
    MPI_Wait(&rq, &st);
    flag = 0;
    MPI_Test_cancelled(&st, &flag);
    CHECK(flag, "Test_cancelled false after query_fn set it");

    /* 4. (MPICH 4.0 runs free_fn at MPI_Request_free, before completion) */
    if (!mtest_is_mpich()) {
        gstate_t g4 = {4, 0, 0, 0, 0, 0, MPI_SUCCESS, 0};
        MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g4, &rq);
        MPI_Request keep = rq;
        CHECK_MPI(MPI_Request_free(&rq));
        CHECK(rq == MPI_REQUEST_NULL && g4.nfree == 0, "Request_free of an incomplete request");
        CHECK_MPI(MPI_Grequest_complete(keep));
        CHECK(g4.nfree == 1 && g4.nquery == 0, "after complete: %d frees %d queries", g4.nfree,
              g4.nquery);
    }

    /* 5. */
    {
        gstate_t g5 = {5, 0, 0, 0, 0, 0, MPI_SUCCESS, 0}, g6 = {6, 0, 0, 0, 0, 0, MPI_SUCCESS, 0};
        MPI_Request r[3];
        MPI_Status sts[3];
        int x = rank + 1, y = -1, idx = -1, cnt, ids[3];
        MPI_Irecv(&y, 1, MPI_INT, rank, 9, MPI_COMM_WORLD, &r[0]);
        MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g5, &r[1]);
        MPI_Send(&x, 1, MPI_INT, rank, 9, MPI_COMM_WORLD);
        MPI_Grequest_complete(r[1]);
        CHECK_MPI(MPI_Waitall(2, r, sts));
        CHECK(y == rank + 1, "Waitall: received %d", y);
        check_status(&sts[1], 5);
        CHECK(g5.nfree == 1, "Waitall: %d frees", g5.nfree);

        MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g5, &r[0]);
        MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g6, &r[1]);
        MPI_Grequest_complete(r[1]);
        CHECK_MPI(MPI_Waitany(2, r, &idx, &st));
        CHECK(idx == 1, "Waitany index %d, expected 1", idx);
        check_status(&st, 6);
        MPI_Grequest_complete(r[0]);
        CHECK_MPI(MPI_Waitsome(2, r, &cnt, ids, sts));
        CHECK(cnt == 1 && ids[0] == 0, "Waitsome: %d done, first %d", cnt, ids[0]);
        check_status(&sts[0], 5);
        CHECK(g5.nfree == 2 && g6.nfree == 1, "frees %d %d", g5.nfree, g6.nfree);
    }

    /* 6. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    {
        gstate_t g7 = {7, 0, 0, 0, 0, 0, MPI_ERR_OTHER, 0};
        MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g7, &rq);
        MPI_Grequest_complete(rq);
        int rc = MPI_Wait(&rq, &st);
        CHECK(rc != MPI_SUCCESS, "Wait ignored query_fn's error");
    }
    return mtest_finalize();
}
