/*
 * pin_probe: the CPUs a rank and its master may run on (-pin).
 *   pin_probe N   every rank checks that it may run on exactly N CPUs, the
 *                 same set as its master's (N 1: bound to one CPU);
 *                 exit 0 pass, 1 fail, 77 (skip) when N is 0: the test
 *                 runs where only one CPU is allowed, so -pin changes nothing.
 */
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, want = argc > 1 ? atoi(argv[1]) : -1, bad = 0, total;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (want <= 0) {
        MPI_Finalize();
        return 77;
    }
    cpu_set_t mine, master;
    if (sched_getaffinity(0, sizeof mine, &mine) < 0 ||
        sched_getaffinity(getppid(), sizeof master, &master) < 0) {
        perror("pin_probe: sched_getaffinity");
        bad = 1;
    } else if (CPU_COUNT(&mine) != want || !CPU_EQUAL(&mine, &master)) {
        fprintf(stderr, "pin_probe: rank %d may run on %d CPUs (%s its master's), expected %d\n",
                rank, CPU_COUNT(&mine), CPU_EQUAL(&mine, &master) ? "as" : "unlike", want);
        bad = 1;
    }
    MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s pin_probe %d\n", total ? "FAIL" : "PASS", want);
    MPI_Finalize();
    return total ? 1 : 0;
}
