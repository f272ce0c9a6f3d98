/* Ranks whose data together exceed the node's memory budget: each rank
 * holds argv[1] MiB (default 64) in one allocation and another argv[1]/4 MiB
 * in a second one, fills them with a rank-specific pattern, then for
 * argv[2] rounds (default 3) verifies every word, rewrites a part, and
 * passes a token around the ring and through a collective, so every rank
 * blocks and others must run (and their memory must move) in between.  A
 * receive into managed memory checks that discarded receive buffers get
 * their data. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t pat(int rank, uint64_t i, int round)
{
    return ((uint64_t)rank << 48) ^ (i * 0x9E3779B97F4A7C15ull) ^ (uint64_t)round;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0, tot;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    uint64_t mib = argc > 1 ? strtoull(argv[1], NULL, 10) : 64;
    int rounds = argc > 2 ? atoi(argv[2]) : 3;
    uint64_t n = mib << 17, n2 = n / 4; /* 8-byte words */
    uint64_t *a = malloc(n * 8), *b = calloc(n2, 8);
    if (!a || !b) {
        fprintf(stderr, "rank %d: cannot allocate %llu MiB\n", rank, (unsigned long long)mib);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (uint64_t i = 0; i < n; i++)
        a[i] = pat(rank, i, 0);
    for (uint64_t i = 0; i < n2; i++)
        if (b[i]) {
            bad++;
            break;
        }
    for (int r = 1; r <= rounds; r++) {
        /* Check all of a; rewrite one quarter of it (a different one each round). */
        uint64_t q0 = (uint64_t)(r % 4) * (n / 4);
        for (uint64_t i = 0; i < n; i++) {
            int last = (i >= ((uint64_t)((r - 1) % 4) * (n / 4)) &&
                        i < ((uint64_t)((r - 1) % 4) + 1) * (n / 4) && r > 1);
            uint64_t want = pat(rank, i, last ? r - 1 : 0);
            if (r > 2) {
                /* Quarters written in earlier rounds keep their last value. */
                int k = (int)(i / (n / 4));
                int wr = 0;
                for (int rr = 1; rr < r; rr++)
                    if (rr % 4 == k)
                        wr = rr;
                want = pat(rank, i, wr);
            }
            if (a[i] != want) {
                if (bad++ < 3)
                    fprintf(stderr, "rank %d round %d: word %llu is %llx, expected %llx\n", rank, r,
                            (unsigned long long)i, (unsigned long long)a[i],
                            (unsigned long long)want);
            }
        }
        for (uint64_t i = q0; i < q0 + n / 4; i++)
            a[i] = pat(rank, i, r);
        /* Receive the left neighbour's b into our b (managed, discarded first). */
        for (uint64_t i = 0; i < n2; i++)
            b[i] = pat(rank, i, 100 + r);
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        MPI_Sendrecv_replace(b, (int)(n2 < (1u << 20) ? n2 : (1u << 20)), MPI_UINT64_T, right, r,
                             left, r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        uint64_t lim = n2 < (1u << 20) ? n2 : (1u << 20);
        for (uint64_t i = 0; i < lim; i++)
            if (b[i] != pat(left, i, 100 + r)) {
                if (bad++ < 3)
                    fprintf(stderr, "rank %d round %d: received word %llu wrong\n", rank, r,
                            (unsigned long long)i);
                break;
            }
        MPI_Allreduce(&bad, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    }
    MPI_Allreduce(&bad, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s rank_memory: %d ranks x %llu MiB, %d rounds\n", tot ? "FAIL" : "PASS", size,
               (unsigned long long)(mib + mib / 4), rounds);
    free(a);
    free(b);
    MPI_Finalize();
    return tot ? 1 : 0;
}
