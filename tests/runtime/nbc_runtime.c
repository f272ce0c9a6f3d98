/* Nonblocking collectives, BDMPI-specific behaviour (each mode must fail
 * with the message the CMake test expects):
 *   wait      rank 0 waits for an Ibarrier the others never start, because
 *             they wait for a message from rank 0: a real deadlock
 *   waitany   the same with rank 0 in MPI_Waitany over an Ibcast from rank 1
 *             and an Ibarrier
 *   badroot   MPI_Ibcast with root == size (errors are fatal): the message
 *             names the rank, the call and the argument
 *   free      MPI_Request_free of an Ibarrier request (MPI 3.1 5.12 forbids it)
 *   mismatch  rank 0 calls MPI_Ibarrier where the others call MPI_Barrier */
#include <mpi.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size, x = 0, idx;
    MPI_Request r[2];
    const char *mode = argc > 1 ? argv[1] : "wait";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (!strcmp(mode, "wait") || !strcmp(mode, "waitany")) {
        if (rank == 0) {
            int n = 0;
            if (!strcmp(mode, "waitany"))
                MPI_Ibcast(&x, 1, MPI_INT, 1, MPI_COMM_WORLD, &r[n++]);
            MPI_Ibarrier(MPI_COMM_WORLD, &r[n++]);
            if (n == 1)
                MPI_Wait(&r[0], MPI_STATUS_IGNORE);
            else
                MPI_Waitany(n, r, &idx, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&x, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else if (!strcmp(mode, "badroot")) {
        MPI_Ibcast(&x, 1, MPI_INT, size, MPI_COMM_WORLD, &r[0]);
    } else if (!strcmp(mode, "free")) {
        MPI_Ibarrier(MPI_COMM_WORLD, &r[0]);
        MPI_Request_free(&r[0]);
    } else if (!strcmp(mode, "mismatch")) {
        if (rank == 0) {
            MPI_Ibarrier(MPI_COMM_WORLD, &r[0]);
            MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        } else {
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    MPI_Finalize();
    return 0;
}
