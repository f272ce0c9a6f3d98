/* outside_mem OUTSIDE_KIB MANAGED_MIB ROUNDS: every rank holds OUTSIDE_KIB
 * of its own memory in 16 KiB allocations (under -mem-threshold, so outside
 * the memory manager) and one managed allocation of MANAGED_MIB, writes the
 * managed one in every round and meets the others in a barrier, where it
 * blocks and can be unloaded.  Checks every byte at the end.  Used with
 * budget.sh by the tests mem.budget.outside.*: the job stays within -mem + 16
 * MiB + 512 KiB a rank only if the master counts the memory outside the
 * manager in the budget (src/master/unmanaged.c). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PIECE (16 * 1024)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    size_t outside = (size_t)(argc > 1 ? atol(argv[1]) : 2048) * 1024;
    size_t managed = (size_t)(argc > 2 ? atol(argv[2]) : 4) << 20;
    int rounds = argc > 3 ? atoi(argv[3]) : 4;
    size_t n = outside / PIECE;
    unsigned char **own = malloc(n * sizeof *own);
    unsigned char *big = malloc(managed);
    if (!own || !big) {
        fprintf(stderr, "rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (size_t i = 0; i < n; i++) {
        if (!(own[i] = malloc(PIECE))) {
            fprintf(stderr, "rank %d: out of memory\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        memset(own[i], (int)(i + (size_t)rank) & 0xff, PIECE);
    }
    for (int r = 0; r < rounds; r++) {
        memset(big, (rank + r) & 0xff, managed);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    int bad = 0;
    for (size_t i = 0; i < n && !bad; i++)
        for (size_t k = 0; k < PIECE; k += 512)
            bad |= own[i][k] != ((i + (size_t)rank) & 0xff);
    for (size_t k = 0; k < managed && !bad; k += 4096)
        bad |= big[k] != ((rank + rounds - 1) & 0xff);
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (rank == 0)
        printf(any ? "FAIL outside_mem: wrong data\n" : "PASS outside_mem\n");
    MPI_Finalize();
    return any;
}
