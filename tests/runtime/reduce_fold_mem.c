/* An integer reduction does not keep its contributions in the master
 * until the lowest rank's comes (regression test, issue 13 session 25:
 * apps.kmeans.mem2M.araw failed once under load with "its working set
 * cannot fit" while the master held 8 of 9 contributions).  With the
 * argument "double" the data is MPI_DOUBLE, which the master folds in rank
 * order: the waiting contributions go to a spill file when the budget
 * needs their room (session 26: that run failed the same way before).
 *
 * 9 ranks under -mem 2M (reduce_fold_mem in tests/runtime/CMakeLists.txt).
 * Ranks 1..8 reduce 192 KiB of int64 to rank 0 (a non-root returns once
 * it has given its part) and then tell rank 0; rank 0, after all 8 told
 * it, touches 1 MiB of memory and only then reduces.  Holding the 8
 * contributions (1.5 MiB) would leave rank 0's megabyte no room; folded as
 * they come, they take one accumulator.  Every element is checked. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N (24 * 1024) /* elements: 192 KiB */

/* Doubles hold these sums exactly (all under 2^53). */
static int reduce(const int64_t *v, int64_t *sum, int dbl)
{
    if (!dbl)
        return MPI_Reduce(v, sum, N, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    double *dv = malloc(N * sizeof *dv), *ds = sum ? malloc(N * sizeof *ds) : NULL;
    if (!dv || (sum && !ds))
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int i = 0; i < N; i++)
        dv[i] = (double)v[i];
    int rc = MPI_Reduce(dv, ds, N, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    for (int i = 0; sum && i < N; i++)
        sum[i] = (int64_t)ds[i];
    free(dv);
    free(ds);
    return rc;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int dbl = argc > 1 && !strcmp(argv[1], "double");
    int64_t *v = malloc(N * sizeof *v), *sum = rank == 0 ? malloc(N * sizeof *sum) : NULL;
    if (!v || (rank == 0 && !sum))
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int i = 0; i < N; i++)
        v[i] = (int64_t)(rank + 1) * (i + 1);
    int bad = 0;
    if (rank > 0) {
        reduce(v, NULL, dbl);
        int token = rank;
        MPI_Send(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    } else {
        for (int k = 1; k < size; k++) {
            int token;
            MPI_Recv(&token, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        size_t big = 1u << 20;
        char *b = malloc(big);
        if (!b)
            MPI_Abort(MPI_COMM_WORLD, 2);
        memset(b, 1, big);
        long s = 0;
        for (size_t i = 0; i < big; i += 4096)
            s += b[i];
        free(b);
        reduce(v, sum, dbl);
        int64_t f = (int64_t)size * (size + 1) / 2;
        for (int i = 0; i < N; i++)
            if (sum[i] != f * (i + 1))
                bad++;
        if (bad || s != (long)(big / 4096))
            printf("FAIL reduce_fold_mem: %d wrong elements\n", bad);
        else
            printf("PASS reduce_fold_mem\n");
    }
    free(v);
    free(sum);
    MPI_Finalize();
    return bad ? 1 : 0;
}
