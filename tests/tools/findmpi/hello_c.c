/* Prints "hello_c: N ranks, <library version>" from rank 0 after checking
 * that every rank agrees on the size: exit 0 pass, 1 fail. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, sum = 0, len;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_library_version(lib, &len);
    MPI_Allreduce(&size, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("hello_c: %d ranks, %s\n", size, lib);
    MPI_Finalize();
    return sum == size * size ? 0 : 1;
}
