/* remote_return MIB: the remote-memory tier's give-back (remote.sh return).
 * Two nodes.  First only node 0's ranks fill MIB MiB each (more than node
 * 0's budget, so what they unload goes to node 1, whose ranks hold nothing
 * yet); then node 1's ranks fill MIB MiB each, which node 1's budget can
 * only hold if it gives node 0's data back; then every rank checks every
 * word of its data.  Prints "PASS remote_return". */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t pat(int rank, uint64_t i)
{
    return ((uint64_t)rank << 40) ^ (i * 0x9E3779B97F4A7C15ull);
}

static uint64_t *fill(int rank, uint64_t n)
{
    uint64_t *a = malloc(n * 8);
    if (!a) {
        fprintf(stderr, "rank %d: malloc failed\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (uint64_t i = 0; i < n; i++)
        a[i] = pat(rank, i);
    return a;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0, tot = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    uint64_t n = (argc > 1 ? strtoull(argv[1], NULL, 10) : 4) << 17; /* 8-byte words */
    int node1 = rank >= size / 2;                                    /* -nn 2: ranks by node */
    uint64_t *a = NULL;
    if (!node1)
        a = fill(rank, n);
    MPI_Barrier(MPI_COMM_WORLD);
    if (node1)
        a = fill(rank, n);
    MPI_Barrier(MPI_COMM_WORLD);
    for (uint64_t i = 0; i < n; i++)
        bad += a[i] != pat(rank, i);
    if (bad)
        fprintf(stderr, "rank %d: %d words wrong\n", rank, bad);
    MPI_Reduce(&bad, &tot, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    free(a);
    if (rank == 0)
        printf(tot ? "FAIL remote_return: %d words wrong\n" : "PASS remote_return: %d ranks\n",
               tot ? tot : size);
    MPI_Finalize();
    return tot != 0;
}
