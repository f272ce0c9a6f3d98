/* BDMPI's communicators and Table 2 extensions on one node. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, bad = 0, v, tot;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
#define EXPECT(call, want)                                                                         \
    do {                                                                                           \
        v = -99;                                                                                   \
        call;                                                                                      \
        if (v != (want)) {                                                                         \
            fprintf(stderr, "rank %d: %s gave %d, expected %d\n", rank, #call, v, (want));        \
            bad++;                                                                                 \
        }                                                                                          \
    } while (0)
    EXPECT(MPI_Comm_size(BDMPI_COMM_NODE, &v), size);
    EXPECT(MPI_Comm_rank(BDMPI_COMM_NODE, &v), rank);
    EXPECT(MPI_Comm_size(BDMPI_COMM_CWORLD, &v), size);
    EXPECT(MPI_Comm_rank(BDMPI_COMM_CWORLD, &v), rank);
    EXPECT(BDMPI_Comm_nsize(MPI_COMM_WORLD, &v), 1);
    EXPECT(BDMPI_Comm_nrank(MPI_COMM_WORLD, &v), 0);
    EXPECT(BDMPI_Comm_lsize(MPI_COMM_WORLD, &v), size);
    EXPECT(BDMPI_Comm_lrank(MPI_COMM_WORLD, &v), rank);
    EXPECT(BDMPI_Comm_rrank(MPI_COMM_WORLD, &v), 0);
    /* On a split communicator of the odd ranks. */
    MPI_Comm odd;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &odd);
    int osize = size / 2 + (rank % 2 ? 0 : size % 2);
    EXPECT(BDMPI_Comm_lsize(odd, &v), osize);
    EXPECT(BDMPI_Comm_lrank(odd, &v), rank / 2);
    EXPECT(BDMPI_Comm_rrank(odd, &v), 0);
    EXPECT(BDMPI_Comm_nsize(odd, &v), 1);
    /* Collectives and messages on the node communicator. */
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, BDMPI_COMM_NODE);
    if (sum != size * (size - 1) / 2) {
        fprintf(stderr, "rank %d: allreduce on BDMPI_COMM_NODE gave %d\n", rank, sum);
        bad++;
    }
    int right = (rank + 1) % size, left = (rank + size - 1) % size, got = -1;
    MPI_Sendrecv(&rank, 1, MPI_INT, right, 3, &got, 1, MPI_INT, left, 3, BDMPI_COMM_CWORLD,
                 MPI_STATUS_IGNORE);
    if (got != left) {
        fprintf(stderr, "rank %d: ring on BDMPI_COMM_CWORLD got %d\n", rank, got);
        bad++;
    }
    MPI_Comm_free(&odd);
    MPI_Allreduce(&bad, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s extensions\n", tot ? "FAIL" : "PASS");
    MPI_Finalize();
    return tot ? 1 : 0;
}
