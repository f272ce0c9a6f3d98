/*
 * p2p_sendrecv: MPI_Sendrecv and MPI_Sendrecv_replace at sizes around and
 * far above the eager limit (under BDMPI 4 KiB by default: below it a
 * message is copied into the receiver's mailbox, above it the receiver
 * reads it from the sender's memory or a spill file).  BDMPI posts the
 * receive before it sends, so these check that nothing is lost, duplicated
 * or delivered out of order by that:
 *  - pairs (0-1, 2-3, ...; an odd last rank exchanges with itself);
 *  - a ring shift (send right, receive from the left), also with
 *    MPI_ANY_SOURCE and MPI_ANY_TAG, checking the status;
 *  - self-exchange (dest = source = this rank);
 *  - order: of two earlier Isends of the peer on one tag, the Sendrecv
 *    receives the first;
 *  - a message already waiting (sent before a barrier) is received;
 *  - a receive buffer larger than the message, and a send to or receive
 *    from MPI_PROC_NULL;
 *  - Sendrecv_replace in pairs and in the ring, contiguous and with a
 *    strided (vector) type, whose elements between the strides must stay.
 * Data carries (sender, round, index) patterns checked byte for byte.
 */
#include "mtest.h"

static int rank, size;

static unsigned char pat(int who, int k, size_t i)
{
    return (unsigned char)(who * 37 + k * 11 + i * 7 + (i >> 10));
}

static void fill(unsigned char *b, size_t n, int who, int k)
{
    for (size_t i = 0; i < n; i++)
        b[i] = pat(who, k, i);
}

/* Index of the first byte that differs, or -1. */
static long check(const unsigned char *b, size_t n, int who, int k)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != pat(who, k, i))
            return (long)i;
    return -1;
}

static const size_t sizes[] = {0,    1,    100,   4000,      4064,          4095,
                               4096, 4097, 16384, 65536 + 3, (1 << 20) + 5, 3 << 20};
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])
#define MAXN ((size_t)3 << 20)

static unsigned char *out, *in;

static void pairs(int k)
{
    int peer = (rank ^ 1) < size ? rank ^ 1 : rank;
    for (int s = 0; s < NSIZES; s++) {
        size_t n = sizes[s];
        MPI_Status st;
        int cnt;
        fill(out, n, rank, k + s);
        memset(in, 0xee, n + 16);
        MPI_Sendrecv(out, (int)n, MPI_BYTE, peer, 10 + s, in, (int)n + 16, MPI_BYTE, peer, 10 + s,
                     MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        CHECK(cnt == (int)n && st.MPI_SOURCE == peer && st.MPI_TAG == 10 + s,
              "pairs %zu B: count %d source %d tag %d", n, cnt, st.MPI_SOURCE, st.MPI_TAG);
        long bad = check(in, n, peer, k + s);
        CHECK(bad < 0, "pairs %zu B: byte %ld differs", n, bad);
        CHECK(in[n] == 0xee, "pairs %zu B: byte past the message overwritten", n);
    }
}

static void ring(int any, int k)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int s = 0; s < NSIZES; s++) {
        size_t n = sizes[s];
        MPI_Status st;
        int cnt;
        fill(out, n, rank, k + s);
        memset(in, 0, n);
        MPI_Sendrecv(out, (int)n, MPI_BYTE, right, 30 + s, in, (int)n, MPI_BYTE,
                     any ? MPI_ANY_SOURCE : left, any ? MPI_ANY_TAG : 30 + s, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        CHECK(cnt == (int)n && st.MPI_SOURCE == left && st.MPI_TAG == 30 + s,
              "ring%s %zu B: count %d source %d tag %d", any ? " (any)" : "", n, cnt, st.MPI_SOURCE,
              st.MPI_TAG);
        long bad = check(in, n, left, k + s);
        CHECK(bad < 0, "ring%s %zu B: byte %ld differs", any ? " (any)" : "", n, bad);
        /* Only the left neighbour sends to us, in order: even with
         * MPI_ANY_TAG its next message cannot be taken first. */
    }
}

static void self(int k)
{
    for (int s = 0; s < NSIZES; s++) {
        size_t n = sizes[s];
        MPI_Status st;
        int cnt;
        fill(out, n, rank, k + s);
        memset(in, 0, n);
        MPI_Sendrecv(out, (int)n, MPI_BYTE, rank, 50, in, (int)n, MPI_BYTE, rank, 50,
                     MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        CHECK(cnt == (int)n && st.MPI_SOURCE == rank, "self %zu B: count %d source %d", n, cnt,
              st.MPI_SOURCE);
        long bad = check(in, n, rank, k + s);
        CHECK(bad < 0, "self %zu B: byte %ld differs", n, bad);
        /* Replace with itself: the message must be the old contents. */
        fill(in, n, rank, k + s + 1);
        MPI_Sendrecv_replace(in, (int)n, MPI_BYTE, rank, 51, rank, 51, MPI_COMM_WORLD, &st);
        bad = check(in, n, rank, k + s + 1);
        CHECK(bad < 0, "self replace %zu B: byte %ld differs", n, bad);
    }
}

/* The left neighbour's two Isends (rounds k, k+1) on one tag precede its
 * Sendrecv (round k+2, another tag): our Sendrecv on the first tag must
 * receive round k, a Recv then round k+1.  (The third message has a
 * receive posted first: MPICH's large sends wait for their receive.) */
static void order(int k)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    unsigned char *o[2] = {malloc(MAXN), malloc(MAXN)}, *i3 = malloc(MAXN);
    for (int s = 0; s < NSIZES; s++) {
        size_t n = sizes[s];
        MPI_Request rq[3];
        fill(o[0], n, rank, k + s);
        fill(o[1], n, rank, k + s + 1);
        fill(out, n, rank, k + s + 2);
        MPI_Irecv(i3, (int)n, MPI_BYTE, left, 61, MPI_COMM_WORLD, &rq[2]);
        MPI_Isend(o[0], (int)n, MPI_BYTE, right, 60, MPI_COMM_WORLD, &rq[0]);
        MPI_Isend(o[1], (int)n, MPI_BYTE, right, 60, MPI_COMM_WORLD, &rq[1]);
        if (s & 1) /* odd sizes: the earlier messages are surely here already */
            MPI_Barrier(MPI_COMM_WORLD);
        MPI_Sendrecv(out, (int)n, MPI_BYTE, right, 61, in, (int)n, MPI_BYTE, left, 60,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(in + MAXN, (int)n, MPI_BYTE, left, 60, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Waitall(3, rq, MPI_STATUSES_IGNORE);
        long bad = check(in, n, left, k + s);
        CHECK(bad < 0, "order %zu B: Sendrecv got the wrong message (byte %ld)", n, bad);
        bad = check(in + MAXN, n, left, k + s + 1);
        CHECK(bad < 0, "order %zu B: Recv got the wrong message (byte %ld)", n, bad);
        bad = check(i3, n, left, k + s + 2);
        CHECK(bad < 0, "order %zu B: the Sendrecv's message differs (byte %ld)", n, bad);
    }
    free(o[0]);
    free(o[1]);
    free(i3);
}

/* A send or a receive to MPI_PROC_NULL: the other half goes through a
 * request (MPICH's large sends wait for their receive). */
static void proc_null(int k)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    size_t n = sizes[NSIZES - 2];
    MPI_Status st;
    MPI_Request rq;
    int cnt;
    fill(out, n, rank, k);
    memset(in, 0, n);
    MPI_Irecv(in, (int)n, MPI_BYTE, left, 70, MPI_COMM_WORLD, &rq);
    MPI_Sendrecv(out, (int)n, MPI_BYTE, right, 70, in + n, (int)n, MPI_BYTE, MPI_PROC_NULL, 70,
                 MPI_COMM_WORLD, &st);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "proc_null: source %d", st.MPI_SOURCE);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    long bad = check(in, n, left, k);
    CHECK(bad < 0, "proc_null (send): byte %ld differs", bad);
    fill(out, n, rank, k + 1);
    memset(in, 0, n);
    MPI_Isend(out, (int)n, MPI_BYTE, right, 71, MPI_COMM_WORLD, &rq);
    MPI_Sendrecv(out, 0, MPI_BYTE, MPI_PROC_NULL, 71, in, (int)n, MPI_BYTE, left, 71,
                 MPI_COMM_WORLD, &st);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Get_count(&st, MPI_BYTE, &cnt);
    CHECK(cnt == (int)n && st.MPI_SOURCE == left, "proc_null: count %d source %d", cnt,
          st.MPI_SOURCE);
    bad = check(in, n, left, k + 1);
    CHECK(bad < 0, "proc_null (receive): byte %ld differs", bad);
}

static void replace(int ringwise, int k)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int peer = (rank ^ 1) < size ? rank ^ 1 : rank;
    int dst = ringwise ? right : peer, src = ringwise ? left : peer;
    for (int s = 0; s < NSIZES; s++) {
        size_t n = sizes[s];
        MPI_Status st;
        int cnt;
        fill(in, n, rank, k + s);
        MPI_Sendrecv_replace(in, (int)n, MPI_BYTE, dst, 80 + s, src, 80 + s, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        CHECK(cnt == (int)n && st.MPI_SOURCE == src, "replace%s %zu B: count %d source %d",
              ringwise ? " (ring)" : "", n, cnt, st.MPI_SOURCE);
        long bad = check(in, n, src, k + s);
        CHECK(bad < 0, "replace%s %zu B: byte %ld differs", ringwise ? " (ring)" : "", n, bad);
    }
}

/* Every other 4-byte int of a vector: the gaps keep their values. */
static void replace_vector(int k)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    const int counts[] = {1, 1024, 1025, 300000};
    MPI_Datatype vec;
    MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &vec);
    MPI_Type_commit(&vec);
    int *b = (int *)in;
    for (int c = 0; c < 4; c++) {
        int m = counts[c];
        for (int i = 0; i < 2 * m; i++)
            b[i] = i & 1 ? -1 - i : rank * 1000003 + k * 7 + i;
        MPI_Sendrecv_replace(b, m, vec, right, 90 + c, left, 90 + c, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
        int bad = -1;
        for (int i = 0; i < 2 * m && bad < 0; i++)
            if (b[i] != (i & 1 ? -1 - i : left * 1000003 + k * 7 + i))
                bad = i;
        CHECK(bad < 0, "replace vector of %d ints: int %d differs", m, bad);
    }
    MPI_Type_free(&vec);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "p2p_sendrecv");
    rank = mtest_rank_;
    size = mtest_size_;
    out = malloc(MAXN + 16);
    in = malloc(2 * MAXN + 16);
    for (int round = 0; round < 2; round++) {
        int k = round * 100;
        pairs(k);
        ring(0, k + 1);
        ring(1, k + 2);
        self(k + 3);
        order(k + 5);
        proc_null(k + 6);
        replace(0, k + 7);
        replace(1, k + 8);
        replace_vector(k + 9);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(out);
    free(in);
    return mtest_finalize();
}
