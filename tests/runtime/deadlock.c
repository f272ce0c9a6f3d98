/* A real deadlock: every rank receives from its right neighbour and nobody
 * sends (argv[1] == "recv"), or rank 0 waits in a barrier the others never
 * reach because they wait for rank 0 ("mixed").  The master must say who
 * waits for what and end the job. */
#include <mpi.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size, x = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && !strcmp(argv[1], "mixed") && rank == 0)
        MPI_Barrier(MPI_COMM_WORLD);
    else
        MPI_Recv(&x, 1, MPI_INT, (rank + 1) % size, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
