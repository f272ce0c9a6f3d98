/*
 * p2p_self: messages a process sends to itself.
 *
 * On MPI_COMM_WORLD (dest = own rank) and on MPI_COMM_SELF (dest = 0):
 * Isend then Recv then Wait; Irecv then (blocking) Send then Wait (legal
 * because the receive is already posted); Sendrecv with oneself; several
 * messages to oneself arrive in order; MPI_ANY_SOURCE on MPI_COMM_SELF gives
 * source 0; sizes 0, 10 and 100000 bytes.  Messages on the two
 * communicators do not mix.
 */
#include "mtest.h"

static void self_tests(MPI_Comm comm, const char *cname)
{
    static const int sizes[] = {0, 10, 100000};
    int me, s, i;
    MPI_Status st;

    MPI_Comm_rank(comm, &me);
    for (s = 0; s < 3; s++) {
        int n = sizes[s], cnt = -1, bad = -1;
        unsigned char *sb = malloc((size_t)n + 1), *rb = malloc((size_t)n + 1);
        MPI_Request req;

        for (i = 0; i < n; i++)
            sb[i] = mtest_byte((unsigned)(s + 11), (size_t)i);

        /* Isend, Recv, Wait */
        memset(rb, 0, (size_t)n + 1);
        MPI_Isend(sb, n, MPI_BYTE, me, 1, comm, &req);
        MPI_Recv(rb, n + 1, MPI_BYTE, me, 1, comm, &st);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        CHECK(cnt == n && st.MPI_SOURCE == me && st.MPI_TAG == 1,
              "%s Isend/Recv %d: count %d source %d tag %d", cname, n, cnt, st.MPI_SOURCE,
              st.MPI_TAG);
        for (i = 0; i < n; i++)
            if (rb[i] != sb[i]) {
                bad = i;
                break;
            }
        CHECK(bad < 0, "%s Isend/Recv %d: differs at %d", cname, n, bad);

        /* Irecv, Send, Wait */
        memset(rb, 0, (size_t)n + 1);
        MPI_Irecv(rb, n, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &req);
        MPI_Send(sb, n, MPI_BYTE, me, 2, comm);
        MPI_Wait(&req, &st);
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        CHECK(cnt == n && st.MPI_SOURCE == me && st.MPI_TAG == 2,
              "%s Irecv/Send %d: count %d source %d tag %d", cname, n, cnt, st.MPI_SOURCE,
              st.MPI_TAG);
        bad = -1;
        for (i = 0; i < n; i++)
            if (rb[i] != sb[i]) {
                bad = i;
                break;
            }
        CHECK(bad < 0, "%s Irecv/Send %d: differs at %d", cname, n, bad);

        /* Sendrecv with oneself */
        memset(rb, 0, (size_t)n + 1);
        MPI_Sendrecv(sb, n, MPI_BYTE, me, 3, rb, n, MPI_BYTE, me, 3, comm, &st);
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        CHECK(cnt == n && st.MPI_SOURCE == me, "%s Sendrecv %d: count %d source %d", cname, n, cnt,
              st.MPI_SOURCE);
        CHECK(n == 0 || memcmp(rb, sb, (size_t)n) == 0, "%s Sendrecv %d: data differs", cname, n);
        free(sb);
        free(rb);
    }

    /* several messages to self keep their order */
    {
        int v[10], got;
        MPI_Request req[10];
        for (i = 0; i < 10; i++) {
            v[i] = i * i;
            MPI_Isend(&v[i], 1, MPI_INT, me, 4, comm, &req[i]);
        }
        for (i = 0; i < 10; i++) {
            MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 4, comm, &st);
            CHECK(got == i * i, "%s self stream %d: got %d", cname, i, got);
        }
        MPI_Waitall(10, req, MPI_STATUSES_IGNORE);
    }
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Status st;

    mtest_init(&argc, &argv, "p2p_self");
    rank = mtest_rank_;

    self_tests(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    self_tests(MPI_COMM_SELF, "MPI_COMM_SELF");

    /* The same (source, tag) on WORLD and SELF are different channels. */
    {
        int a = 1, b = 2, got_w = -1, got_s = -1;
        MPI_Request r[2];
        MPI_Isend(&a, 1, MPI_INT, 0, 9, MPI_COMM_SELF, &r[0]);
        MPI_Isend(&b, 1, MPI_INT, rank, 9, MPI_COMM_WORLD, &r[1]);
        MPI_Recv(&got_w, 1, MPI_INT, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &st);
        CHECK_INT(st.MPI_SOURCE, rank, "WORLD receive source");
        MPI_Recv(&got_s, 1, MPI_INT, MPI_ANY_SOURCE, 9, MPI_COMM_SELF, &st);
        CHECK_INT(st.MPI_SOURCE, 0, "SELF receive source");
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        CHECK(got_w == 2 && got_s == 1, "WORLD/SELF messages mixed up: world got %d, self got %d",
              got_w, got_s);
    }

    return mtest_finalize();
}
