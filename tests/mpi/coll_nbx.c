/*
 * coll_nbx: patterns that need nonblocking collectives to be nonblocking.
 *
 *  - The NBX sparse data exchange: every process sends synchronous messages
 *    (MPI_Issend) to a pseudo-random set of destinations that the receivers
 *    do not know; it then loops receiving whatever arrives (MPI_Iprobe +
 *    MPI_Recv) and, once its own sends have all been received (MPI_Testall),
 *    starts an MPI_Ibarrier, which it keeps testing while still receiving.
 *    When the barrier completes, every message sent to this process has
 *    been received: the counts and contents are checked against what the
 *    senders' rule implies.  Several rounds, with empty, small and large
 *    (64 KiB) messages, on MPI_COMM_WORLD and on a duplicate, the barrier
 *    tested with MPI_Test, MPI_Testany and MPI_Testall in turn.
 *  - An Ibarrier that must not block: rank 0 starts it and then receives
 *    from rank 1, which first completes an MPI_Ssend to rank 0 and only then
 *    starts its Ibarrier (with a blocking barrier this would deadlock).
 *  - MPI_Waitany over a receive and an Ibarrier together.
 */
#include "mtest.h"

#define BIG (64 * 1024)

static int rank, size;

/* Does src send to dst in this round, and how many ints? (-1: no message) */
static int msg_len(int round, int src, int dst)
{
    unsigned h = (unsigned)(round * 7919 + src * 104729 + dst * 1299709);
    h ^= h >> 7;
    h *= 2654435761u;
    h ^= h >> 13;
    if (h % 3 != 0)
        return -1;
    switch ((h >> 4) % 4) {
    case 0: return 0;
    case 1: return 1;
    case 2: return 37;
    default: return (round % 2) ? BIG / (int)sizeof(int) : 100;
    }
}

static int payload(int round, int src, int dst, int i)
{
    return round * 1000003 + src * 10007 + dst * 101 + i;
}

static void nbx(MPI_Comm comm, int round, int test_kind)
{
    int tag = 100 + round, d, i, nsend = 0, expect = 0, got = 0;
    MPI_Request *sreq = malloc(sizeof(MPI_Request) * (size_t)size);
    int **sbuf = malloc(sizeof(int *) * (size_t)size);
    int *from = calloc((size_t)size, sizeof(int));

    for (d = 0; d < size; d++) {
        int n = msg_len(round, rank, d);
        sbuf[d] = NULL;
        if (n < 0)
            continue;
        sbuf[d] = malloc(sizeof(int) * (size_t)(n + 1));
        for (i = 0; i < n; i++)
            sbuf[d][i] = payload(round, rank, d, i);
        CHECK_MPI(MPI_Issend(sbuf[d], n, MPI_INT, d, tag, comm, &sreq[nsend++]));
    }
    for (d = 0; d < size; d++)
        expect += msg_len(round, d, rank) >= 0;

    int *rbuf = malloc(sizeof(int) * (BIG / sizeof(int) + 1));
    MPI_Request barrier = MPI_REQUEST_NULL;
    int started = 0, done = 0;
    while (!done) {
        int flag = 0;
        MPI_Status st;
        CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, tag, comm, &flag, &st));
        if (flag) {
            int n = -1, src = st.MPI_SOURCE;
            MPI_Get_count(&st, MPI_INT, &n);
            CHECK_MPI(MPI_Recv(rbuf, n, MPI_INT, src, tag, comm, MPI_STATUS_IGNORE));
            int want = msg_len(round, src, rank);
            CHECK(n == want, "round %d: message from %d has %d ints, expected %d", round, src, n,
                  want);
            int bad = 0;
            for (i = 0; i < n && n == want; i++)
                bad += rbuf[i] != payload(round, src, rank, i);
            CHECK(!bad, "round %d: %d wrong ints from %d", round, bad, src);
            CHECK(from[src] == 0, "round %d: two messages from %d", round, src);
            from[src]++;
            got++;
        }
        if (!started) {
            int all = 0;
            CHECK_MPI(MPI_Testall(nsend, sreq, &all, MPI_STATUSES_IGNORE));
            if (all) {
                CHECK_MPI(MPI_Ibarrier(comm, &barrier));
                started = 1;
            }
        } else if (test_kind == 0) {
            CHECK_MPI(MPI_Test(&barrier, &done, MPI_STATUS_IGNORE));
        } else if (test_kind == 1) {
            int idx;
            CHECK_MPI(MPI_Testany(1, &barrier, &idx, &done, MPI_STATUS_IGNORE));
            if (done)
                CHECK(idx == 0, "Testany on the barrier gave index %d", idx);
        } else {
            CHECK_MPI(MPI_Testall(1, &barrier, &done, MPI_STATUSES_IGNORE));
        }
    }
    CHECK(barrier == MPI_REQUEST_NULL, "completed Ibarrier request not freed");
    CHECK(got == expect, "round %d: received %d messages, expected %d", round, got, expect);
    /* Nothing of this round may be left. */
    int flag = 1;
    CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, tag, comm, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "round %d: a message is left after the exchange", round);

    for (d = 0; d < size; d++)
        free(sbuf[d]);
    free(sbuf);
    free(sreq);
    free(from);
    free(rbuf);
}

/* Rank 0 is inside its Ibarrier when rank 1's synchronous send must be received. */
static void no_block(void)
{
    MPI_Request b;
    int x = -1, v = 4242, idx;

    if (size < 2)
        return;
    if (rank == 0) {
        CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &b));
        CHECK_MPI(MPI_Recv(&x, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_MPI(MPI_Wait(&b, MPI_STATUS_IGNORE));
        CHECK_INT(x, v, "message received while in an Ibarrier");
    } else if (rank == 1) {
        CHECK_MPI(MPI_Ssend(&v, 1, MPI_INT, 0, 7, MPI_COMM_WORLD));
        CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &b));
        CHECK_MPI(MPI_Wait(&b, MPI_STATUS_IGNORE));
    } else {
        CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &b));
        CHECK_MPI(MPI_Wait(&b, MPI_STATUS_IGNORE));
    }

    /* Waitany over a receive and a barrier: rank 0 gets the message only
     * after every rank has started the barrier. */
    MPI_Request two[2];
    int ndone = 0, seen_recv = 0;
    x = -1;
    if (rank == 0) {
        CHECK_MPI(MPI_Irecv(&x, 1, MPI_INT, 1, 8, MPI_COMM_WORLD, &two[0]));
        CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &two[1]));
        while (ndone < 2) {
            CHECK_MPI(MPI_Waitany(2, two, &idx, MPI_STATUS_IGNORE));
            CHECK(idx == 0 || idx == 1, "Waitany index %d", idx);
            if (idx == 0)
                seen_recv = 1;
            ndone++;
        }
        CHECK(seen_recv && x == v + 1, "Waitany over receive and Ibarrier: x = %d", x);
    } else {
        CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &b));
        if (rank == 1) {
            int y = v + 1;
            CHECK_MPI(MPI_Send(&y, 1, MPI_INT, 0, 8, MPI_COMM_WORLD));
        }
        CHECK_MPI(MPI_Wait(&b, MPI_STATUS_IGNORE));
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "coll_nbx");
    rank = mtest_rank_;
    size = mtest_size_;

    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    for (int round = 0; round < 6; round++)
        nbx(round % 2 ? dup : MPI_COMM_WORLD, round, round % 3);
    MPI_Comm_free(&dup);
    no_block();
    return mtest_finalize();
}
