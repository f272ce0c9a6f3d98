/* Prints MPI_UNIVERSE_SIZE and checks it against argv[1]: the value
 * bdmpiexec's -universe-size / -max-spawn should give (tests/runtime,
 * universe.*). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int *u = NULL, flag = 0, rank, bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &u, &flag);
    int want = argc > 1 ? atoi(argv[1]) : -1;
    if (!flag || *u != want) {
        printf("FAIL universe_probe: rank %d: MPI_UNIVERSE_SIZE %d (flag %d), expected %d\n", rank,
               flag ? *u : -1, flag, want);
        bad = 1;
    }
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && !any)
        printf("PASS universe_probe %d\n", want);
    MPI_Finalize();
    return any;
}
