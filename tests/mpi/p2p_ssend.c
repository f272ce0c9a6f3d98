/*
 * p2p_ssend: synchronous sends.
 *
 *  1. Ring with blocking MPI_Ssend that cannot deadlock: rank 0 sends first
 *     and then receives, every other rank receives first and then sends
 *     (needs >= 2 ranks; with 1 rank this part is skipped because a blocking
 *     Ssend to oneself can never complete).
 *  2. Ring with MPI_Issend + MPI_Recv + MPI_Wait (works at any size,
 *     including 1), sizes 0, 1, 1000 and 65536 bytes.
 *  3. An Issend cannot complete before the matching receive is posted
 *     (MPI-3.1 3.4): rank 0 Issends to rank 1, which only posts the receive
 *     after a "go" message that rank 0 sends after having seen MPI_Test
 *     return false a number of times.  (>= 2 ranks.)
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    static const int sizes[] = {0, 1, 1000, 65536};
    int rank, size, right, left, i, s;
    MPI_Status st;

    mtest_init(&argc, &argv, "p2p_ssend");
    rank = mtest_rank_;
    size = mtest_size_;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;

    /* ---- 1. blocking Ssend ring ---- */
    if (size >= 2) {
        int out[4] = {rank, -rank, rank * 3, 7}, in[4] = {-1, -1, -1, -1};
        if (rank == 0) {
            MPI_Ssend(out, 4, MPI_INT, right, 1, MPI_COMM_WORLD);
            MPI_Recv(in, 4, MPI_INT, left, 1, MPI_COMM_WORLD, &st);
        } else {
            MPI_Recv(in, 4, MPI_INT, left, 1, MPI_COMM_WORLD, &st);
            MPI_Ssend(out, 4, MPI_INT, right, 1, MPI_COMM_WORLD);
        }
        CHECK(in[0] == left && in[1] == -left && in[2] == left * 3 && in[3] == 7,
              "Ssend ring data %d %d %d %d", in[0], in[1], in[2], in[3]);
        CHECK_INT(st.MPI_SOURCE, left, "Ssend ring source");
    }

    /* ---- 2. Issend ring ---- */
    for (s = 0; s < 4; s++) {
        int n = sizes[s];
        unsigned char *sb = malloc((size_t)n + 1), *rb = malloc((size_t)n + 1);
        MPI_Request req;
        int cnt = -1, bad = -1;
        for (i = 0; i < n; i++)
            sb[i] = mtest_byte((unsigned)rank, (size_t)i);
        memset(rb, 0, (size_t)n + 1);
        MPI_Issend(sb, n, MPI_BYTE, right, 2, MPI_COMM_WORLD, &req);
        MPI_Recv(rb, n, MPI_BYTE, left, 2, MPI_COMM_WORLD, &st);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        CHECK(cnt == n, "Issend %d bytes: count %d", n, cnt);
        for (i = 0; i < n; i++)
            if (rb[i] != mtest_byte((unsigned)left, (size_t)i)) {
                bad = i;
                break;
            }
        CHECK(bad < 0, "Issend %d bytes: data differs at %d", n, bad);

        /* Ssend the other way round, receive posted first (Irecv). */
        memset(rb, 0, (size_t)n + 1);
        MPI_Irecv(rb, n, MPI_BYTE, right, 3, MPI_COMM_WORLD, &req);
        if (size >= 2) {
            MPI_Ssend(sb, n, MPI_BYTE, left, 3, MPI_COMM_WORLD);
        } else {
            MPI_Request r2;
            MPI_Issend(sb, n, MPI_BYTE, left, 3, MPI_COMM_WORLD, &r2);
            MPI_Wait(&r2, MPI_STATUS_IGNORE);
        }
        MPI_Wait(&req, &st);
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        CHECK(cnt == n, "Ssend to pre-posted Irecv %d bytes: count %d", n, cnt);
        bad = -1;
        for (i = 0; i < n; i++)
            if (rb[i] != mtest_byte((unsigned)right, (size_t)i)) {
                bad = i;
                break;
            }
        CHECK(bad < 0, "Ssend to pre-posted Irecv %d bytes: differs at %d", n, bad);
        free(sb);
        free(rb);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- 3. Issend does not complete before the receive is posted ---- */
    if (size >= 2) {
        int data = 4242, in = -1, go = 1, flag = 0;
        MPI_Request req;
        if (rank == 0) {
            MPI_Issend(&data, 1, MPI_INT, 1, 10, MPI_COMM_WORLD, &req);
            for (i = 0; i < 50 && !flag; i++) {
                MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
                mtest_spin(0.0002);
            }
            CHECK(!flag, "Issend completed before the matching receive was "
                         "posted");
            MPI_Send(&go, 1, MPI_INT, 1, 11, MPI_COMM_WORLD);
            if (!flag)
                MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(&go, 1, MPI_INT, 0, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Recv(&in, 1, MPI_INT, 0, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK_INT(in, 4242, "Issend data");
        }
    }

    return mtest_finalize();
}
