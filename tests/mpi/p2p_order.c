/*
 * p2p_order: the non-overtaking rule (MPI-3.1 3.5).
 *
 *  1. Each rank sends NMSG messages with the same (dest, tag, comm) to its
 *     right neighbour (all Isend first, then blocking receives, then
 *     Waitall); they must be received in send order.
 *  2. Same with varying tags, received with MPI_ANY_TAG: order is still the
 *     send order and each status carries the tag of that message.
 *  3. Every rank sends NPER messages to rank 0, which receives all of them
 *     with MPI_ANY_SOURCE/MPI_ANY_TAG: the sequence from each source must be
 *     increasing.
 *  4. A mixed stream where sizes alternate 8 bytes and 200 KiB (so an eager
 *     protocol and a rendezvous protocol may be used for alternate messages)
 *     is delivered in order, both when the receives are posted before the
 *     messages are sent and when the messages arrive first.  Limited to a
 *     ring of the first min(size, 4) ranks.
 */
#include "mtest.h"

#define NMSG 64
#define NPER 8
#define BIG (200 * 1024)
#define NMIX 8

static unsigned char pat(int src, int msg, size_t i)
{
    return mtest_byte((unsigned)(src * 131 + msg), i);
}

int main(int argc, char **argv)
{
    int rank, size, right, left, i;
    MPI_Status st;

    mtest_init(&argc, &argv, "p2p_order");
    rank = mtest_rank_;
    size = mtest_size_;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;

    /* ---- 1. same tag ---- */
    {
        int out[NMSG], in;
        MPI_Request req[NMSG];
        for (i = 0; i < NMSG; i++) {
            out[i] = rank * 1000 + i;
            MPI_Isend(&out[i], 1, MPI_INT, right, 7, MPI_COMM_WORLD, &req[i]);
        }
        for (i = 0; i < NMSG; i++) {
            MPI_Recv(&in, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &st);
            CHECK(in == left * 1000 + i, "same-tag stream: message %d has %d", i, in);
        }
        MPI_Waitall(NMSG, req, MPI_STATUSES_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- 2. varying tags, ANY_TAG receive ---- */
    {
        int out[NMSG], in;
        MPI_Request req[NMSG];
        for (i = 0; i < NMSG; i++) {
            out[i] = rank * 1000 + i;
            MPI_Isend(&out[i], 1, MPI_INT, right, (i * 5) % 7, MPI_COMM_WORLD, &req[i]);
        }
        for (i = 0; i < NMSG; i++) {
            MPI_Recv(&in, 1, MPI_INT, left, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            CHECK(in == left * 1000 + i, "ANY_TAG stream: message %d has %d", i, in);
            CHECK(st.MPI_TAG == (i * 5) % 7, "ANY_TAG stream: message %d has tag %d want %d", i,
                  st.MPI_TAG, (i * 5) % 7);
        }
        MPI_Waitall(NMSG, req, MPI_STATUSES_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- 3. many sources into rank 0 with ANY_SOURCE ---- */
    {
        int out[NPER];
        MPI_Request req[NPER];
        for (i = 0; i < NPER; i++) {
            out[i] = i;
            MPI_Isend(&out[i], 1, MPI_INT, 0, 100 + (i % 3), MPI_COMM_WORLD, &req[i]);
        }
        if (rank == 0) {
            int *next = calloc((size_t)size, sizeof(int));
            for (int m = 0; m < size * NPER; m++) {
                int in = -1, s;
                MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
                s = st.MPI_SOURCE;
                if (s < 0 || s >= size) {
                    CHECK(0, "bad source %d", s);
                    continue;
                }
                CHECK(in == next[s], "from %d: got seq %d, expected %d", s, in, next[s]);
                CHECK(st.MPI_TAG == 100 + in % 3, "from %d seq %d: tag %d", s, in, st.MPI_TAG);
                next[s] = in + 1;
            }
            for (int s = 0; s < size; s++)
                CHECK(next[s] == NPER, "from %d: only %d messages", s, next[s]);
            free(next);
        }
        MPI_Waitall(NPER, req, MPI_STATUSES_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- 4. mixed small/large stream among the first k ranks ---- */
    {
        int k = size < 4 ? size : 4, me = rank < k;
        int r = (rank + 1) % k, l = (rank + k - 1) % k;
        unsigned char *sb[NMIX], *rb[NMIX];
        MPI_Request sreq[NMIX], rreq[NMIX];
        MPI_Status sts[NMIX];
        int phase;

        for (i = 0; me && i < NMIX; i++) {
            size_t n = (i % 2) ? BIG : 8;
            sb[i] = malloc(n);
            rb[i] = malloc(BIG);
            for (size_t j = 0; j < n; j++)
                sb[i][j] = pat(rank, i, j);
        }
        for (phase = 0; phase < 2; phase++) {
            for (i = 0; me && i < NMIX; i++)
                memset(rb[i], 0, BIG);
            if (phase == 0) {
                /* receives posted first (messages are "expected") */
                for (i = 0; me && i < NMIX; i++)
                    MPI_Irecv(rb[i], BIG, MPI_BYTE, l, 9, MPI_COMM_WORLD, &rreq[i]);
                MPI_Barrier(MPI_COMM_WORLD);
                for (i = 0; me && i < NMIX; i++)
                    MPI_Isend(sb[i], (i % 2) ? BIG : 8, MPI_BYTE, r, 9, MPI_COMM_WORLD, &sreq[i]);
                if (me)
                    MPI_Waitall(NMIX, rreq, sts);
            } else {
                /* messages sent first (they are "unexpected") */
                for (i = 0; me && i < NMIX; i++)
                    MPI_Isend(sb[i], (i % 2) ? BIG : 8, MPI_BYTE, r, 9, MPI_COMM_WORLD, &sreq[i]);
                MPI_Barrier(MPI_COMM_WORLD);
                if (me)
                    mtest_spin(0.01);
                for (i = 0; me && i < NMIX; i++)
                    MPI_Recv(rb[i], BIG, MPI_BYTE, l, MPI_ANY_TAG, MPI_COMM_WORLD, &sts[i]);
            }
            if (!me)
                continue;
            MPI_Waitall(NMIX, sreq, MPI_STATUSES_IGNORE);
            for (i = 0; i < NMIX; i++) {
                int cnt = -1, n = (i % 2) ? BIG : 8;
                long bad = -1;
                MPI_Get_count(&sts[i], MPI_BYTE, &cnt);
                CHECK(cnt == n,
                      "mixed stream phase %d msg %d: count %d want "
                      "%d (out of order?)",
                      phase, i, cnt, n);
                for (int j = 0; j < n; j++)
                    if (rb[i][j] != pat(l, i, (size_t)j)) {
                        bad = j;
                        break;
                    }
                CHECK(bad < 0,
                      "mixed stream phase %d msg %d: data differs at "
                      "byte %ld",
                      phase, i, bad);
            }
        }
        for (i = 0; me && i < NMIX; i++) {
            free(sb[i]);
            free(rb[i]);
        }
    }

    return mtest_finalize();
}
