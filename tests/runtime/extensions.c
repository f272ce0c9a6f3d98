/* BDMPI's communicators and Table 2 extensions, for any number of nodes:
 * ranks are numbered node by node (BDMPI_NN nodes of BDMPI_NS ranks, as
 * bdmpiexec exports them) and cyclically in BDMPI_COMM_CWORLD. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

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
            fprintf(stderr, "rank %d: %s gave %d, expected %d\n", rank, #call, v, (want));         \
            bad++;                                                                                 \
        }                                                                                          \
    } while (0)
    int nn = getenv("BDMPI_NN") ? atoi(getenv("BDMPI_NN")) : 1;
    int ns = size / nn, node = rank / ns, local = rank % ns;
    EXPECT(MPI_Comm_size(BDMPI_COMM_NODE, &v), ns);
    EXPECT(MPI_Comm_rank(BDMPI_COMM_NODE, &v), local);
    EXPECT(MPI_Comm_size(BDMPI_COMM_CWORLD, &v), size);
    EXPECT(MPI_Comm_rank(BDMPI_COMM_CWORLD, &v), local * nn + node);
    EXPECT(BDMPI_Comm_nsize(MPI_COMM_WORLD, &v), nn);
    EXPECT(BDMPI_Comm_nrank(MPI_COMM_WORLD, &v), node);
    EXPECT(BDMPI_Comm_lsize(MPI_COMM_WORLD, &v), ns);
    EXPECT(BDMPI_Comm_lrank(MPI_COMM_WORLD, &v), local);
    EXPECT(BDMPI_Comm_rrank(MPI_COMM_WORLD, &v), node * ns);
    /* On a split communicator of the ranks of the same parity (comm rank = rank/2). */
    MPI_Comm odd;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &odd);
    int lsize = 0, lrank = 0, rrank = -1, nodes = 0, nrank = 0;
    for (int nd = 0; nd < nn; nd++) {
        int here = 0;
        for (int r = nd * ns; r < (nd + 1) * ns; r++)
            if (r % 2 == rank % 2)
                here = 1;
        if (here && nd < node)
            nrank++;
        nodes += here;
    }
    for (int r = node * ns; r < (node + 1) * ns; r++) {
        if (r % 2 != rank % 2)
            continue;
        if (rrank < 0)
            rrank = r / 2;
        if (r < rank)
            lrank++;
        lsize++;
    }
    EXPECT(BDMPI_Comm_lsize(odd, &v), lsize);
    EXPECT(BDMPI_Comm_lrank(odd, &v), lrank);
    EXPECT(BDMPI_Comm_rrank(odd, &v), rrank);
    EXPECT(BDMPI_Comm_nsize(odd, &v), nodes);
    EXPECT(BDMPI_Comm_nrank(odd, &v), nrank);
    /* Collectives and messages on the node communicator. */
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, BDMPI_COMM_NODE);
    if (sum != ns * node * ns + ns * (ns - 1) / 2) {
        fprintf(stderr, "rank %d: allreduce on BDMPI_COMM_NODE gave %d\n", rank, sum);
        bad++;
    }
    int crank;
    MPI_Comm_rank(BDMPI_COMM_CWORLD, &crank);
    int right = (crank + 1) % size, left = (crank + size - 1) % size, got = -1;
    MPI_Sendrecv(&crank, 1, MPI_INT, right, 3, &got, 1, MPI_INT, left, 3, BDMPI_COMM_CWORLD,
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
