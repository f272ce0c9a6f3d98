/* cpu_wait ROUNDS MS: every rank, in turn, computes for MS milliseconds of
 * its own CPU time (CLOCK_THREAD_CPUTIME_ID, so a rank that gets only part
 * of a CPU takes longer in wall time, not less work), then all meet in a
 * barrier; ROUNDS times.  Used by cpu_wait.sh to check that the time a
 * running rank waits for a CPU taken by other processes is reported as
 * such (TIME_CPU_WAIT_NS), not as computing. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = argc > 1 ? atoi(argv[1]) : 2;
    double ms = argc > 2 ? atof(argv[2]) : 300;
    volatile double x = 1.0;
    for (int r = 0; r < rounds; r++) {
        double t0 = thread_cpu_s();
        while ((thread_cpu_s() - t0) * 1e3 < ms)
            for (int i = 0; i < 10000; i++)
                x = x * 1.0000001 + 1e-9;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (rank == 0)
        printf("PASS cpu_wait: %d ranks x %d rounds x %.0f ms of CPU (%g)\n", size, rounds, ms,
               (double)x > 0 ? 1.0 : 0.0);
    MPI_Finalize();
    return 0;
}
