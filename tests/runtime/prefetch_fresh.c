/* prefetch_fresh: SGD's call pattern for look-ahead loading (issue 13).
 *
 *   prefetch_fresh WARM_MIB FRESH_MIB ITERS
 *
 * Every rank owns an array of WARM_MIB MiB (managed memory) that each of
 * its turns reads.  A block of FRESH_MIB MiB goes round the ring of ranks
 * once an iteration: a rank allocates a fresh buffer, receives the block
 * into it from its left neighbour (waiting for it), checks it and its
 * array, passes the block on to its right neighbour, joins a Gather and
 * frees the buffer.  The received block is in no rank's warm set (what it
 * held at its last unload), so a look-ahead for the next rank that takes
 * the room it needs is pushed out again at once and read twice (test
 * mem.prefetch_fresh.*, tests/runtime/prefetch_onoff.sh).  Every word is
 * checked.  Prints "PASS prefetch_fresh" on success. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <mpi.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 4) {
        if (rank == 0)
            fprintf(stderr, "usage: prefetch_fresh WARM_MIB FRESH_MIB ITERS\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    size_t nw = (size_t)atoi(argv[1]) * 1048576 / sizeof(uint64_t);
    size_t nf = (size_t)atoi(argv[2]) * 1048576 / sizeof(uint64_t);
    int iters = atoi(argv[3]);
    const int left = (rank + size - 1) % size, right = (rank + 1) % size;
    uint64_t *a = malloc(nw * sizeof *a), *blk = NULL;
    if (!a)
        MPI_Abort(MPI_COMM_WORLD, 3);
    for (size_t i = 0; i < nw; i++)
        a[i] = (uint64_t)rank << 40 | i;
    int bad = 0;
    double x = 0, *xs = rank == 0 ? malloc(size * sizeof *xs) : NULL;
    for (int it = 1; it <= iters; it++) {
        if (!(blk = malloc(nf * sizeof *blk)))
            MPI_Abort(MPI_COMM_WORLD, 3);
        if (it == 1 && rank == 0) { /* the block starts here, having made no hop */
            for (size_t i = 0; i < nf; i++)
                blk[i] = (uint64_t)i << 20;
        } else {
            MPI_Request rq;
            MPI_Irecv(blk, (int)(nf * sizeof *blk), MPI_BYTE, left, 7, MPI_COMM_WORLD, &rq);
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
        }
        uint64_t hops = (uint64_t)(it - 1) * size + rank;
        for (size_t i = 0; i < nf; i++) {
            bad |= blk[i] != ((uint64_t)i << 20) + hops;
            blk[i]++;
        }
        for (size_t i = 0; i < nw; i++) {
            bad |= a[i] != ((uint64_t)rank << 40 | i);
            x += (double)(a[i] & 0xff);
        }
        MPI_Request sq = MPI_REQUEST_NULL;
        if (it < iters || rank < size - 1)
            MPI_Isend(blk, (int)(nf * sizeof *blk), MPI_BYTE, right, 7, MPI_COMM_WORLD, &sq);
        MPI_Gather(&x, 1, MPI_DOUBLE, xs, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        MPI_Wait(&sq, MPI_STATUS_IGNORE);
        free(blk);
    }
    int gbad = 0;
    MPI_Allreduce(&bad, &gbad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (rank == 0)
        printf(gbad ? "FAIL prefetch_fresh: wrong data\n" : "PASS prefetch_fresh\n");
    free(a);
    free(xs);
    MPI_Finalize();
    return gbad;
}
