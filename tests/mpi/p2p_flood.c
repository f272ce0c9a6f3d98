/*
 * p2p_flood: many more small messages in flight to one rank than BDMPI's
 * mailbox ring holds, while the receiver waits elsewhere (a barrier) or
 * computes without calling MPI.  Every message must arrive, and those of
 * one sender in the order sent (MPI 3.1 3.5), also when received with
 * MPI_ANY_SOURCE.  Phase 3 does the same with messages of 3-40 KiB (under
 * BDMPI: inline in the ring up to 1/8 of it when the receiver runs, which
 * the master turns into spill files when it must hold them for a receiver
 * that waits; single copy or spill files above).
 */
#include <time.h>

#include "mtest.h"

#define N 3000 /* messages per sender and phase */

static void busy_ms(int ms)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000.0 + (t.tv_nsec - t0.tv_nsec) / 1e6 < ms);
}

static int len_of(int k) { return 8 + (k * 37) % 1500; }

static void fill(int *b, int n, int who, int k)
{
    for (int i = 0; i < n; i++)
        b[i] = who * 100000 + k + i;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "p2p_flood");
    int rank = mtest_rank_, size = mtest_size_;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int *out = malloc((size_t)N * 400 * sizeof(int));
    int in[400];
    MPI_Request *rq = malloc(N * sizeof *rq);
    MPI_Status st;

    /* Phase 1: to the right neighbour, who is in a barrier meanwhile. */
    for (int k = 0; k < N; k++) {
        int n = len_of(k) / 4;
        fill(out + (size_t)k * 400, n, rank, k);
        MPI_Isend(out + (size_t)k * 400, n, MPI_INT, right, 1, MPI_COMM_WORLD, &rq[k]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int bad = 0;
    for (int k = 0; k < N; k++) {
        int n = len_of(k) / 4, cnt;
        MPI_Recv(in, 400, MPI_INT, left, 1, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_INT, &cnt);
        if (cnt != n || in[0] != left * 100000 + k || in[n - 1] != left * 100000 + k + n - 1)
            bad++;
    }
    CHECK(bad == 0, "phase 1: %d of %d messages wrong or out of order", bad, N);
    MPI_Waitall(N, rq, MPI_STATUSES_IGNORE);

    /* Phase 2: everyone to rank 0, which computes first, then takes them
     * with MPI_ANY_SOURCE; each sender's sequence must come in order. */
    int per = size > 1 ? N / (size - 1) : 0;
    if (rank) {
        for (int k = 0; k < per; k++) {
            fill(out + (size_t)k * 400, 4, rank, k);
            MPI_Isend(out + (size_t)k * 400, 4, MPI_INT, 0, 2, MPI_COMM_WORLD, &rq[k]);
        }
        MPI_Waitall(per, rq, MPI_STATUSES_IGNORE);
    } else {
        busy_ms(30);
        int *next = calloc((size_t)size, sizeof *next);
        bad = 0;
        for (int k = 0; k < per * (size - 1); k++) {
            MPI_Recv(in, 4, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &st);
            int src = st.MPI_SOURCE;
            if (src < 1 || src >= size || in[0] != src * 100000 + next[src])
                bad++;
            else
                next[src]++;
        }
        CHECK(bad == 0, "phase 2: %d messages out of order", bad);
        free(next);
    }
    /* Phase 3: mid-size messages to the right neighbour, in a barrier. */
    enum { N3 = 300, MAXI = 10240 };
    int *big = malloc((size_t)N3 * MAXI * sizeof(int)), *in3 = malloc(MAXI * sizeof(int));
    for (int k = 0; k < N3; k++) {
        int n = 768 + (k * 997) % (MAXI - 768);
        fill(big + (size_t)k * MAXI, n, rank, k);
        MPI_Isend(big + (size_t)k * MAXI, n, MPI_INT, right, 3, MPI_COMM_WORLD, &rq[k]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    bad = 0;
    for (int k = 0; k < N3; k++) {
        int n = 768 + (k * 997) % (MAXI - 768), cnt;
        MPI_Recv(in3, MAXI, MPI_INT, left, 3, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_INT, &cnt);
        int ok = cnt == n;
        for (int i = 0; ok && i < n; i++)
            ok = in3[i] == left * 100000 + k + i;
        bad += !ok;
    }
    CHECK(bad == 0, "phase 3: %d of %d mid-size messages wrong or out of order", bad, N3);
    MPI_Waitall(N3, rq, MPI_STATUSES_IGNORE);
    free(big);
    free(in3);

    free(out);
    free(rq);
    return mtest_finalize();
}
