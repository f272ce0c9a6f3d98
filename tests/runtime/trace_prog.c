/* The program the timeline tests trace (trace.sh, trace_check.py): each
 * rank holds argv[1] MiB (default 8) of managed memory and, for argv[2]
 * rounds (default 3), rewrites it, passes a token around the ring with
 * MPI_Recv/MPI_Send (every rank but 0 blocks in MPI_Recv), exchanges a
 * message with MPI_Irecv/MPI_Send/MPI_Wait, and meets the others in
 * MPI_Barrier and MPI_Allreduce.  Under a budget smaller than all ranks'
 * memory, ranks are unloaded and loaded again.  Those are all the MPI
 * calls it makes besides MPI_Init, MPI_Comm_rank, MPI_Comm_size and
 * MPI_Finalize, so a blocked slice on its timeline must name one of them. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0, tot = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    uint64_t mib = argc > 1 ? strtoull(argv[1], NULL, 10) : 8;
    int rounds = argc > 2 ? atoi(argv[2]) : 3;
    uint64_t n = mib << 17; /* 8-byte words */
    uint64_t *a = malloc(n * 8);
    if (!a) {
        fprintf(stderr, "rank %d: cannot allocate %llu MiB\n", rank, (unsigned long long)mib);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int r = 0; r < rounds; r++) {
        for (uint64_t i = 0; i < n; i++)
            a[i] = (uint64_t)rank * 1000003u + i + (uint64_t)r;
        int token = 0;
        if (rank == 0) {
            MPI_Send(&token, 1, MPI_INT, right, 1, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            bad += token != size - 1;
        } else {
            MPI_Recv(&token, 1, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            bad += token != rank - 1;
            token = rank;
            MPI_Send(&token, 1, MPI_INT, right, 1, MPI_COMM_WORLD);
        }
        int got = -1;
        MPI_Request req;
        MPI_Irecv(&got, 1, MPI_INT, left, 2, MPI_COMM_WORLD, &req);
        MPI_Send(&rank, 1, MPI_INT, right, 2, MPI_COMM_WORLD);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        bad += got != left;
        for (uint64_t i = 0; i < n; i += 512)
            bad += a[i] != (uint64_t)rank * 1000003u + i + (uint64_t)r;
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Allreduce(&bad, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    }
    if (rank == 0)
        printf("%s trace_prog: %d ranks x %llu MiB, %d rounds\n", tot ? "FAIL" : "PASS", size,
               (unsigned long long)mib, rounds);
    free(a);
    MPI_Finalize();
    return tot ? 1 : 0;
}
