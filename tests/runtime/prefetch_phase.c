/* prefetch_phase: K-means' call pattern for look-ahead loading (issue 13).
 *
 *   prefetch_phase MIB ITERS
 *
 * Every rank owns two arrays of MIB/2 MiB (managed memory) and, per
 * iteration: a small Allreduce (every rank blocks in it), a Broadcast of
 * 640 KiB from rank 0 (answered at once for most ranks: the root has
 * already sent), a pass over both arrays, and a Reduce of 640 KiB to
 * rank 0.  The pass follows a call that did not give up the run slot, so
 * the residency it makes belongs to the Allreduce, the call the rank
 * waited in; a look-ahead load that keyed it to the Broadcast found
 * nothing to load for the Allreduce (test mem.prefetch_phase.*,
 * tests/runtime/prefetch_onoff.sh).  Every word is checked.  Prints
 * "PASS prefetch_phase" on success. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <mpi.h>

#define NB (80 * 1024) /* doubles: 640 KiB */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 3) {
        if (rank == 0)
            fprintf(stderr, "usage: prefetch_phase MIB ITERS\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    size_t n = (size_t)atoi(argv[1]) * 1048576 / 2 / sizeof(uint64_t);
    int iters = atoi(argv[2]);
    uint64_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    double *ct = malloc(NB * sizeof *ct), *sums = malloc(NB * sizeof *sums);
    if (!a || !b || !ct || !sums)
        MPI_Abort(MPI_COMM_WORLD, 3);
    for (size_t i = 0; i < n; i++) {
        a[i] = (uint64_t)rank << 40 | i;
        b[i] = ~a[i];
    }
    for (int k = 0; k < NB; k++)
        ct[k] = rank == 0 ? k : -1;
    int bad = 0;
    long flag = 1, gflag = 0;
    for (int it = 1; it <= iters; it++) {
        MPI_Allreduce(&flag, &gflag, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        bad |= gflag != size;
        MPI_Bcast(ct, NB, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        for (int k = 0; k < NB; k++)
            bad |= ct[k] != (double)k + it - 1;
        uint64_t x = 0;
        for (size_t i = 0; i < n; i++) {
            bad |= a[i] != ((uint64_t)rank << 40 | i) || b[i] != ~a[i];
            x += a[i];
        }
        for (int k = 0; k < NB; k++)
            sums[k] = (double)(x & 0xff) + k;
        MPI_Reduce(rank == 0 ? MPI_IN_PLACE : sums, sums, NB, MPI_DOUBLE, MPI_SUM, 0,
                   MPI_COMM_WORLD);
        if (rank == 0)
            for (int k = 0; k < NB; k++)
                ct[k] = (double)k + it; /* the next broadcast's values */
    }
    int gbad = 0;
    MPI_Allreduce(&bad, &gbad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (rank == 0)
        printf(gbad ? "FAIL prefetch_phase: wrong data\n" : "PASS prefetch_phase\n");
    free(a);
    free(b);
    free(ct);
    free(sums);
    MPI_Finalize();
    return gbad;
}
