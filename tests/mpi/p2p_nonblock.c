/*
 * p2p_nonblock: nonblocking point-to-point completion functions.
 *
 * Ring traffic (receive from the left, send to the right) completed with
 * MPI_Wait, Waitall, Waitany, Waitsome, Test, Testall, Testany, Testsome and
 * MPI_Request_get_status; MPI_REQUEST_NULL handling (Wait/Test on a null
 * request return an empty status, Waitany/Testany on all-null arrays give
 * MPI_UNDEFINED, Waitsome/Testsome give outcount MPI_UNDEFINED); Testall
 * frees nothing unless everything completed; Request_get_status does not
 * free the request; and the order in which posted receives are matched
 * (MPI-3.1 3.5: a message matches the first posted receive it can match).
 */
#include "mtest.h"

#define K 8 /* messages per direction per phase */

static int rank, size, right, left;

/* Post K receives from the left (tag base+i) and K sends to the right.
 * reqs[2*i] is receive i, reqs[2*i+1] is send i. */
static void post(int base, int *in, int *out, MPI_Request *reqs)
{
    for (int i = 0; i < K; i++) {
        in[i] = -1;
        out[i] = rank * 10000 + base + i;
        MPI_Irecv(&in[i], 1, MPI_INT, left, base + i, MPI_COMM_WORLD, &reqs[2 * i]);
    }
    for (int i = 0; i < K; i++)
        MPI_Isend(&out[i], 1, MPI_INT, right, base + i, MPI_COMM_WORLD, &reqs[2 * i + 1]);
}

static void check_in(const char *what, int base, const int *in)
{
    for (int i = 0; i < K; i++)
        CHECK(in[i] == left * 10000 + base + i, "%s: in[%d]=%d want %d", what, i, in[i],
              left * 10000 + base + i);
}

static void check_recv_status(const char *what, int base, int idx, const MPI_Status *st)
{
    int cnt = -1;
    CHECK(st->MPI_SOURCE == left, "%s: req %d status source %d want %d", what, idx, st->MPI_SOURCE,
          left);
    CHECK(st->MPI_TAG == base + idx / 2, "%s: req %d status tag %d want %d", what, idx, st->MPI_TAG,
          base + idx / 2);
    MPI_Get_count(st, MPI_INT, &cnt);
    CHECK(cnt == 1, "%s: req %d count %d", what, idx, cnt);
}

int main(int argc, char **argv)
{
    int in[K], out[K], i, flag, idx;
    MPI_Request reqs[2 * K + 2];
    MPI_Status st, sts[2 * K + 2];

    mtest_init(&argc, &argv, "p2p_nonblock");
    rank = mtest_rank_;
    size = mtest_size_;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;

    /* ---- MPI_Wait, and Wait/Test on MPI_REQUEST_NULL ---- */
    {
        MPI_Request r = MPI_REQUEST_NULL;
        post(100, in, out, reqs);
        for (i = 0; i < 2 * K; i++) {
            MPI_Wait(&reqs[i], &st);
            CHECK(reqs[i] == MPI_REQUEST_NULL, "Wait: request %d not freed", i);
            if (i % 2 == 0)
                check_recv_status("Wait", 100, i, &st);
        }
        check_in("Wait", 100, in);

        st.MPI_SOURCE = 12345;
        MPI_Wait(&r, &st);
        CHECK(mtest_status_is_empty(&st),
              "Wait(MPI_REQUEST_NULL): status not "
              "empty (source %d tag %d)",
              st.MPI_SOURCE, st.MPI_TAG);
        flag = 0;
        st.MPI_SOURCE = 12345;
        MPI_Test(&r, &flag, &st);
        CHECK(flag, "Test(MPI_REQUEST_NULL) gave flag 0");
        CHECK(mtest_status_is_empty(&st), "Test(MPI_REQUEST_NULL): status not "
                                          "empty");
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- MPI_Waitall ---- */
    {
        post(200, in, out, reqs);
        MPI_Waitall(2 * K, reqs, sts);
        for (i = 0; i < 2 * K; i++) {
            CHECK(reqs[i] == MPI_REQUEST_NULL, "Waitall: request %d not freed", i);
            if (i % 2 == 0)
                check_recv_status("Waitall", 200, i, &sts[i]);
        }
        check_in("Waitall", 200, in);
        /* all-null and zero-length arrays complete immediately */
        MPI_Waitall(2 * K, reqs, sts);
        MPI_Waitall(0, reqs, MPI_STATUSES_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- MPI_Waitany with null entries ---- */
    {
        char done[2 * K + 2] = {0};
        /* reqs[0] and reqs[2K+1] are null; post() fills reqs[1..2K] */
        post(300, in, out, reqs + 1);
        reqs[0] = MPI_REQUEST_NULL;
        reqs[2 * K + 1] = MPI_REQUEST_NULL;
        for (i = 0; i < 2 * K; i++) {
            idx = -5;
            MPI_Waitany(2 * K + 2, reqs, &idx, &st);
            CHECK(idx >= 1 && idx <= 2 * K, "Waitany index %d out of range", idx);
            if (idx < 1 || idx > 2 * K)
                continue;
            CHECK(!done[idx], "Waitany returned index %d twice", idx);
            done[idx] = 1;
            CHECK(reqs[idx] == MPI_REQUEST_NULL, "Waitany did not free request %d", idx);
            if ((idx - 1) % 2 == 0)
                check_recv_status("Waitany", 300, idx - 1, &st);
        }
        check_in("Waitany", 300, in);
        idx = -5;
        MPI_Waitany(2 * K + 2, reqs, &idx, &st);
        CHECK(idx == MPI_UNDEFINED, "Waitany on all-null array gave index %d", idx);
        CHECK(mtest_status_is_empty(&st), "Waitany all-null: status not empty");
        idx = -5;
        MPI_Waitany(0, reqs, &idx, MPI_STATUS_IGNORE);
        CHECK(idx == MPI_UNDEFINED, "Waitany with count 0 gave index %d", idx);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- MPI_Waitsome ---- */
    {
        char done[2 * K] = {0};
        int ndone = 0, outcount, idxs[2 * K];
        post(400, in, out, reqs);
        while (ndone < 2 * K) {
            outcount = -5;
            MPI_Waitsome(2 * K, reqs, &outcount, idxs, sts);
            CHECK(outcount >= 1 && outcount <= 2 * K - ndone,
                  "Waitsome outcount %d with %d pending", outcount, 2 * K - ndone);
            if (outcount < 1 || outcount > 2 * K - ndone)
                break;
            for (i = 0; i < outcount; i++) {
                int j = idxs[i];
                CHECK(j >= 0 && j < 2 * K && !done[j], "Waitsome bad or repeated index %d", j);
                if (j < 0 || j >= 2 * K)
                    continue;
                done[j] = 1;
                ndone++;
                CHECK(reqs[j] == MPI_REQUEST_NULL, "Waitsome did not free request %d", j);
                if (j % 2 == 0)
                    check_recv_status("Waitsome", 400, j, &sts[i]);
            }
        }
        check_in("Waitsome", 400, in);
        outcount = -5;
        MPI_Waitsome(2 * K, reqs, &outcount, idxs, sts);
        CHECK(outcount == MPI_UNDEFINED, "Waitsome on all-null gave %d", outcount);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- MPI_Test ---- */
    {
        post(500, in, out, reqs);
        for (i = 0; i < 2 * K; i++) {
            flag = 0;
            while (!flag)
                MPI_Test(&reqs[i], &flag, &st);
            CHECK(reqs[i] == MPI_REQUEST_NULL, "Test: request %d not freed", i);
            if (i % 2 == 0)
                check_recv_status("Test", 500, i, &st);
        }
        check_in("Test", 500, in);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- MPI_Testall: all or nothing ---- */
    {
        post(600, in, out, reqs);
        flag = 0;
        while (!flag) {
            MPI_Testall(2 * K, reqs, &flag, sts);
            if (!flag) {
                int nnull = 0;
                for (i = 0; i < 2 * K; i++)
                    nnull += reqs[i] == MPI_REQUEST_NULL;
                CHECK(nnull == 0,
                      "Testall returned flag 0 but freed %d "
                      "requests",
                      nnull);
                if (nnull)
                    break;
            }
        }
        for (i = 0; i < 2 * K; i++) {
            CHECK(reqs[i] == MPI_REQUEST_NULL, "Testall: request %d not freed", i);
            if (i % 2 == 0)
                check_recv_status("Testall", 600, i, &sts[i]);
        }
        check_in("Testall", 600, in);
        flag = 0;
        MPI_Testall(2 * K, reqs, &flag, sts);
        CHECK(flag, "Testall on all-null array gave flag 0");
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- MPI_Testany ---- */
    {
        char done[2 * K] = {0};
        int ndone = 0;
        post(700, in, out, reqs);
        while (ndone < 2 * K) {
            flag = -1;
            idx = -5;
            MPI_Testany(2 * K, reqs, &idx, &flag, &st);
            if (!flag) {
                CHECK(idx == MPI_UNDEFINED, "Testany flag 0 with index %d", idx);
                continue;
            }
            CHECK(idx >= 0 && idx < 2 * K && !done[idx], "Testany bad or repeated index %d", idx);
            if (idx < 0 || idx >= 2 * K)
                break;
            done[idx] = 1;
            ndone++;
            CHECK(reqs[idx] == MPI_REQUEST_NULL, "Testany did not free request %d", idx);
            if (idx % 2 == 0)
                check_recv_status("Testany", 700, idx, &st);
        }
        check_in("Testany", 700, in);
        flag = 0;
        idx = -5;
        MPI_Testany(2 * K, reqs, &idx, &flag, &st);
        CHECK(flag && idx == MPI_UNDEFINED,
              "Testany on all-null: flag %d index %d (want 1, MPI_UNDEFINED)", flag, idx);
        CHECK(mtest_status_is_empty(&st), "Testany all-null: status not empty");
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- MPI_Testsome ---- */
    {
        char done[2 * K] = {0};
        int ndone = 0, outcount, idxs[2 * K];
        post(800, in, out, reqs);
        while (ndone < 2 * K) {
            outcount = -5;
            MPI_Testsome(2 * K, reqs, &outcount, idxs, sts);
            CHECK(outcount >= 0 && outcount <= 2 * K - ndone,
                  "Testsome outcount %d with %d pending", outcount, 2 * K - ndone);
            if (outcount < 0 || outcount > 2 * K - ndone)
                break;
            for (i = 0; i < outcount; i++) {
                int j = idxs[i];
                CHECK(j >= 0 && j < 2 * K && !done[j], "Testsome bad or repeated index %d", j);
                if (j < 0 || j >= 2 * K)
                    continue;
                done[j] = 1;
                ndone++;
                if (j % 2 == 0)
                    check_recv_status("Testsome", 800, j, &sts[i]);
            }
        }
        check_in("Testsome", 800, in);
        outcount = -5;
        MPI_Testsome(2 * K, reqs, &outcount, idxs, sts);
        CHECK(outcount == MPI_UNDEFINED, "Testsome on all-null gave %d", outcount);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- MPI_Request_get_status does not free the request ---- */
    {
        MPI_Request r = MPI_REQUEST_NULL;
        post(900, in, out, reqs);
        for (i = 0; i < 2 * K; i++) {
            flag = 0;
            while (!flag)
                MPI_Request_get_status(reqs[i], &flag, &st);
            CHECK(reqs[i] != MPI_REQUEST_NULL, "Request_get_status freed request %d", i);
            if (i % 2 == 0)
                check_recv_status("Request_get_status", 900, i, &st);
            /* asking again still says complete */
            flag = 0;
            MPI_Request_get_status(reqs[i], &flag, MPI_STATUS_IGNORE);
            CHECK(flag,
                  "Request_get_status: complete request %d became "
                  "incomplete",
                  i);
            MPI_Wait(&reqs[i], &st);
            CHECK(reqs[i] == MPI_REQUEST_NULL,
                  "Wait after Request_get_status "
                  "did not free request %d",
                  i);
            if (i % 2 == 0)
                check_recv_status("Wait after Request_get_status", 900, i, &st);
        }
        check_in("Request_get_status", 900, in);
        flag = 0;
        MPI_Request_get_status(r, &flag, &st);
        CHECK(flag, "Request_get_status(MPI_REQUEST_NULL) gave flag 0");
        CHECK(mtest_status_is_empty(&st), "Request_get_status(MPI_REQUEST_NULL)"
                                          ": status not empty");
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- posted-receive matching order ---- */
    for (int unexpected = 0; unexpected < 2; unexpected++) {
        int a = -1, b = -1, c = -1, d = -1, o[4];
        MPI_Request rr[4], sr[4];

        /* (1) Irecv A (left, ANY_TAG) then Irecv B (left, tag 5); left sends
         *     two tag-5 messages: A gets the first, B the second.
         * (2) Irecv C (left, tag 7) then Irecv D (left, ANY_TAG); left sends
         *     tag 5 then tag 7: D gets the tag-5 message, C the tag-7 one. */
        o[0] = rank * 10 + 1;
        o[1] = rank * 10 + 2;
        o[2] = rank * 10 + 3;
        o[3] = rank * 10 + 4;
        if (unexpected) {
            MPI_Isend(&o[0], 1, MPI_INT, right, 5, MPI_COMM_WORLD, &sr[0]);
            MPI_Isend(&o[1], 1, MPI_INT, right, 5, MPI_COMM_WORLD, &sr[1]);
            MPI_Barrier(MPI_COMM_WORLD);
        }
        MPI_Irecv(&a, 1, MPI_INT, left, MPI_ANY_TAG, MPI_COMM_WORLD, &rr[0]);
        MPI_Irecv(&b, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &rr[1]);
        if (!unexpected) {
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Isend(&o[0], 1, MPI_INT, right, 5, MPI_COMM_WORLD, &sr[0]);
            MPI_Isend(&o[1], 1, MPI_INT, right, 5, MPI_COMM_WORLD, &sr[1]);
        }
        MPI_Waitall(2, rr, sts);
        MPI_Waitall(2, sr, MPI_STATUSES_IGNORE);
        CHECK(a == left * 10 + 1 && b == left * 10 + 2,
              "(%s) ANY_TAG-then-tag5 receives got a=%d b=%d, want %d %d",
              unexpected ? "unexpected" : "pre-posted", a, b, left * 10 + 1, left * 10 + 2);
        CHECK(sts[0].MPI_TAG == 5, "ANY_TAG receive: tag %d", sts[0].MPI_TAG);
        MPI_Barrier(MPI_COMM_WORLD);

        if (unexpected) {
            MPI_Isend(&o[2], 1, MPI_INT, right, 5, MPI_COMM_WORLD, &sr[2]);
            MPI_Isend(&o[3], 1, MPI_INT, right, 7, MPI_COMM_WORLD, &sr[3]);
            MPI_Barrier(MPI_COMM_WORLD);
        }
        MPI_Irecv(&c, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &rr[2]);
        MPI_Irecv(&d, 1, MPI_INT, left, MPI_ANY_TAG, MPI_COMM_WORLD, &rr[3]);
        if (!unexpected) {
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Isend(&o[2], 1, MPI_INT, right, 5, MPI_COMM_WORLD, &sr[2]);
            MPI_Isend(&o[3], 1, MPI_INT, right, 7, MPI_COMM_WORLD, &sr[3]);
        }
        MPI_Waitall(2, rr + 2, sts + 2);
        MPI_Waitall(2, sr + 2, MPI_STATUSES_IGNORE);
        CHECK(c == left * 10 + 4 && d == left * 10 + 3,
              "(%s) tag7-then-ANY_TAG receives got c=%d d=%d, want %d %d",
              unexpected ? "unexpected" : "pre-posted", c, d, left * 10 + 4, left * 10 + 3);
        CHECK(sts[2].MPI_TAG == 7 && sts[3].MPI_TAG == 5, "tags of c/d: %d %d, want 7 5",
              sts[2].MPI_TAG, sts[3].MPI_TAG);
        MPI_Barrier(MPI_COMM_WORLD);
    }

    return mtest_finalize();
}
