/* Run by netns.sh: ranks of different nodes must live in different network
 * namespaces (their masters were started on different "hosts"), ranks of
 * one node in the same one; then a ring and an allreduce across them. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, lsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    BDMPI_Comm_lsize(MPI_COMM_WORLD, &lsize);
    char ns[64] = "";
    ssize_t n = readlink("/proc/self/ns/net", ns, sizeof ns - 1);
    if (n > 0)
        ns[n] = 0;
    char *all = malloc((size_t)size * 64);
    MPI_Gather(ns, 64, MPI_CHAR, all, 64, MPI_CHAR, 0, MPI_COMM_WORLD);
    int bad = 0;
    if (rank == 0)
        for (int a = 0; a < size; a++)
            for (int b = 0; b < size; b++) {
                int same_node = a / lsize == b / lsize;
                int same_ns = !strcmp(all + a * 64, all + b * 64);
                if (same_node != same_ns) {
                    if (bad++ < 3)
                        fprintf(stderr, "ranks %d and %d: namespaces %s and %s\n", a, b,
                                all + a * 64, all + b * 64);
                }
            }
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    bad += sum != size * (size - 1) / 2;
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s netns_probe: %d ranks\n", bad ? "FAIL" : "PASS", size);
    free(all);
    MPI_Finalize();
    return bad ? 1 : 0;
}
