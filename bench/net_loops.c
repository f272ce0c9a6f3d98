/* net_loops: the two patterns that made multi-node runs crawl before
 * inter-node progress was event-driven (issue 12): many tiny Allreduces in
 * a row, and many communicators duplicated and freed (each one an
 * Allreduce-like agreement among the masters).  Prints "RESULT name count
 * seconds s" like mpi_bench, for bench/net_bench.py.
 *
 *   net_loops [ALLREDUCES [DUP_ROUNDS]]   defaults 10000 and 100 (x 50 dups) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int nred = argc > 1 ? atoi(argv[1]) : 10000;
    int ndup = argc > 2 ? atoi(argv[2]) : 100;
    enum { BATCH = 50 };

    double in = 1.0, out = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < nred; i++)
        MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double t_red = MPI_Wtime() - t0;

    MPI_Comm c[BATCH];
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int i = 0; i < ndup; i++) {
        for (int j = 0; j < BATCH; j++)
            MPI_Comm_dup(MPI_COMM_WORLD, &c[j]);
        for (int j = 0; j < BATCH; j++)
            MPI_Comm_free(&c[j]);
    }
    double t_dup = MPI_Wtime() - t0;
    if (rank == 0) {
        printf("RESULT allreduce_loop %d %.3f s\n", nred, t_red);
        printf("RESULT dup_free_loop %d %.3f s\n", ndup * BATCH, t_dup);
    }
    MPI_Finalize();
    return 0;
}
