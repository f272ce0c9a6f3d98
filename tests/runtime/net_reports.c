/* net_reports N: N ping-pongs of one int between world rank 0 and the last
 * rank, each checked, then "PASS net_reports N".  Run at -nn 2 with --stats
 * by net_reports.sh, which counts the masters' deadlock-detection reports:
 * a rank waiting for an answer from another node must not cost a report
 * to node 0 per wait (issue 12, session 16). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, n = argc > 1 ? atoi(argv[1]) : 1000, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int last = size - 1;
    for (int i = 0; i < n && size > 1; i++) {
        int v = i;
        if (rank == 0) {
            MPI_Send(&v, 1, MPI_INT, last, 7, MPI_COMM_WORLD);
            MPI_Recv(&v, 1, MPI_INT, last, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            bad += v != i + 1;
        } else if (rank == last) {
            MPI_Recv(&v, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            bad += v != i;
            v++;
            MPI_Send(&v, 1, MPI_INT, 0, 8, MPI_COMM_WORLD);
        }
    }
    int all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (all)
            printf("FAIL net_reports: %d wrong values\n", all);
        else
            printf("PASS net_reports %d\n", n);
    }
    MPI_Finalize();
    return all != 0;
}
