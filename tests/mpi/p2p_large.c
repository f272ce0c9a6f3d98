/*
 * p2p_large: large messages, which under BDMPI take the single-copy path
 * (the receiver reads the sender's memory) when both ranks run, and spill
 * files otherwise.
 *
 * Each rank exchanges with its ring neighbours:
 *  - MPI_Send/MPI_Recv of 1 MiB with a receive already posted (Irecv first);
 *  - an unexpected 1 MiB message (the receiver only probes for it after a
 *    barrier);
 *  - a window of Isends completed with Waitall, several sizes;
 *  - order: large, small, large on one tag arrive in that order;
 *  - a non-contiguous receive (vector type) of a contiguous large send;
 *  - MPI_Ssend of a large message;
 *  - a receiver that computes without calling MPI while the sender sends.
 * Data carries (sender, index) patterns checked byte for byte.
 */
#include <time.h>

#include "mtest.h"

#define MB (1 << 20)

static int rank, size, right, left;

static void fill(unsigned char *b, size_t n, int who, int k)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(who * 31 + k * 7 + i * 13 + (i >> 12));
}

static int check(const unsigned char *b, size_t n, int who, int k)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != (unsigned char)(who * 31 + k * 7 + i * 13 + (i >> 12)))
            return (int)i;
    return -1;
}

static void busy_ms(int ms)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000.0 + (t.tv_nsec - t0.tv_nsec) / 1e6 < ms);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "p2p_large");
    rank = mtest_rank_;
    size = mtest_size_;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    unsigned char *out = malloc(4 * MB), *in = malloc(4 * MB);
    MPI_Request r[16];
    MPI_Status st;
    int bad, cnt;

    /* Posted receive, blocking send. */
    fill(out, MB, rank, 1);
    memset(in, 0, MB);
    MPI_Irecv(in, MB, MPI_BYTE, left, 1, MPI_COMM_WORLD, &r[0]);
    MPI_Send(out, MB, MPI_BYTE, right, 1, MPI_COMM_WORLD);
    MPI_Wait(&r[0], &st);
    MPI_Get_count(&st, MPI_BYTE, &cnt);
    CHECK(cnt == MB && st.MPI_SOURCE == left, "posted: count %d source %d", cnt, st.MPI_SOURCE);
    CHECK((bad = check(in, MB, left, 1)) < 0, "posted: byte %d differs", bad);

    /* Unexpected: sent before any receive is posted. */
    fill(out, MB, rank, 2);
    MPI_Isend(out, MB, MPI_BYTE, right, 2, MPI_COMM_WORLD, &r[1]);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Probe(left, 2, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_BYTE, &cnt);
    CHECK(cnt == MB, "unexpected: probe count %d", cnt);
    memset(in, 0, MB);
    MPI_Recv(in, MB, MPI_BYTE, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&r[1], MPI_STATUS_IGNORE);
    CHECK((bad = check(in, MB, left, 2)) < 0, "unexpected: byte %d differs", bad);

    /* A window of Isends of several sizes. */
    static const int sizes[4] = {8192, 65536, 1 << 20, 3 << 20};
    MPI_Request s[4];
    unsigned char *outs[4], *ins[4];
    for (int k = 0; k < 4; k++) {
        outs[k] = malloc((size_t)sizes[k]);
        ins[k] = calloc(1, (size_t)sizes[k]);
        fill(outs[k], (size_t)sizes[k], rank, 10 + k);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < 4; k++)
        MPI_Irecv(ins[k], sizes[k], MPI_BYTE, left, 10 + k, MPI_COMM_WORLD, &r[k]);
    for (int k = 0; k < 4; k++)
        MPI_Isend(outs[k], sizes[k], MPI_BYTE, right, 10 + k, MPI_COMM_WORLD, &s[k]);
    MPI_Waitall(4, s, MPI_STATUSES_IGNORE);
    MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
    for (int k = 0; k < 4; k++) {
        CHECK((bad = check(ins[k], (size_t)sizes[k], left, 10 + k)) < 0,
              "window: message %d byte %d differs", k, bad);
        free(outs[k]);
        free(ins[k]);
    }

    /* Order on one tag: large, small, large. */
    {
        unsigned char small[64];
        fill(out, MB, rank, 20);
        fill(small, sizeof small, rank, 21);
        fill(out + MB, MB, rank, 22);
        MPI_Isend(out, MB, MPI_BYTE, right, 5, MPI_COMM_WORLD, &s[0]);
        MPI_Isend(small, sizeof small, MPI_BYTE, right, 5, MPI_COMM_WORLD, &s[1]);
        MPI_Isend(out + MB, MB, MPI_BYTE, right, 5, MPI_COMM_WORLD, &s[2]);
        for (int k = 0; k < 3; k++) {
            memset(in, 0, MB);
            MPI_Recv(in, MB, MPI_BYTE, left, 5, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            int want = k == 1 ? (int)sizeof small : MB;
            CHECK(cnt == want, "order: message %d has %d bytes, want %d", k, cnt, want);
            CHECK((bad = check(in, (size_t)want, left, 20 + k)) < 0,
                  "order: message %d byte %d differs", k, bad);
        }
        MPI_Waitall(3, s, MPI_STATUSES_IGNORE);
    }

    /* Non-contiguous receive: every other int of 2 * 256K ints. */
    {
        MPI_Datatype vec;
        MPI_Type_vector(256 * 1024, 1, 2, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        int *o = (int *)out, *v = (int *)in;
        for (int i = 0; i < 256 * 1024; i++)
            o[i] = rank * 1000003 + i;
        for (int i = 0; i < 512 * 1024; i++)
            v[i] = -1;
        MPI_Irecv(v, 1, vec, left, 6, MPI_COMM_WORLD, &r[0]);
        MPI_Send(o, 256 * 1024, MPI_INT, right, 6, MPI_COMM_WORLD);
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        int errs = 0;
        for (int i = 0; i < 512 * 1024; i++)
            errs += v[i] != (i % 2 ? -1 : left * 1000003 + i / 2);
        CHECK(errs == 0, "vector receive: %d ints wrong", errs);
        MPI_Type_free(&vec);
    }

    /* Synchronous send of a large message. */
    fill(out, 2 * MB, rank, 30);
    MPI_Irecv(in, 2 * MB, MPI_BYTE, left, 7, MPI_COMM_WORLD, &r[0]);
    MPI_Ssend(out, 2 * MB, MPI_BYTE, right, 7, MPI_COMM_WORLD);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    CHECK((bad = check(in, 2 * MB, left, 30)) < 0, "ssend: byte %d differs", bad);

    /* A receiver that computes while the message comes: even ranks send
     * and go on, odd ranks compute 20 ms first. */
    fill(out, MB, rank, 40);
    if (rank % 2)
        busy_ms(20);
    MPI_Sendrecv(out, MB, MPI_BYTE, right, 8, in, MB, MPI_BYTE, left, 8, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    CHECK((bad = check(in, MB, left, 40)) < 0, "late receiver: byte %d differs", bad);

    free(out);
    free(in);
    return mtest_finalize();
}
