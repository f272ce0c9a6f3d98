/* Two ranks take turns, so that each one's data is on storage when it
 * reads it back: rank 0 writes A (argv[1] MiB, default 16) and passes the
 * token; rank 1 writes its A, which needs rank 0's memory under
 * -mem 20M, and passes it back; rank 0 reads the first argv[2] MiB
 * (default 8) of its A in order, one word per 4 KiB page, which needs
 * rank 1's memory; then rank 1 does the same.  Each rank thus reads
 * exactly argv[2] MiB of stored data, and LRLW's read-ahead, when on,
 * loads some beyond it or saves faults (test options.mem_readahead, which
 * compares the --stats counters with -mem-readahead off and on). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0, tot = 0, token = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "readahead: needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 16;
    size_t rd = argc > 2 ? strtoul(argv[2], NULL, 10) : 8;
    size_t n = mib << 17, nr = rd << 17, step = 4096 / 8; /* 8-byte words */
    uint64_t *a = malloc(n * 8);
    if (!a)
        MPI_Abort(MPI_COMM_WORLD, 2);
    int other = 1 - rank;
    for (int phase = 0; phase < 2; phase++) {
        if (rank == 1)
            MPI_Recv(&token, 1, MPI_INT, other, phase, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (phase == 0) {
            for (size_t i = 0; i < n; i++)
                a[i] = ((uint64_t)rank << 56) ^ (i * 0x9E3779B97F4A7C15ull);
        } else {
            for (size_t i = 0; i < nr; i += step)
                if (a[i] != (((uint64_t)rank << 56) ^ (i * 0x9E3779B97F4A7C15ull)) && bad++ < 3)
                    fprintf(stderr, "rank %d: word %zu wrong\n", rank, i);
        }
        if (rank == 0) {
            MPI_Send(&token, 1, MPI_INT, other, phase, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, other, 10 + phase, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Send(&token, 1, MPI_INT, other, 10 + phase, MPI_COMM_WORLD);
        }
    }
    MPI_Allreduce(&bad, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s readahead: 2 ranks x %zu MiB, %zu MiB read back each\n", tot ? "FAIL" : "PASS",
               mib, rd);
    free(a);
    MPI_Finalize();
    return tot ? 1 : 0;
}
