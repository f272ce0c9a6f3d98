/* send_delay: how late a small send reaches its receiver when the sender
 * goes on computing (issue 12: -master-slice).  Rank 0 sends rank 1 the
 * time of the send (CLOCK_MONOTONIC, one clock for every process of the
 * machine, so the ranks must share one: bdmpiexec -nn 2 on one machine, or
 * one node), then computes for COMPUTE_US, N times; rank 1 waits in
 * MPI_Recv and records arrival minus send time.
 *
 *   bdmpiexec -nn 2 -ns 1 -nr 1 send_delay [N [COMPUTE_US]]
 *
 * Prints "RESULT send_delay p10|p50|p90|max VALUE us". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int n = argc > 1 ? atoi(argv[1]) : 300;
    double compute = argc > 2 ? atof(argv[2]) : 2000;
    if (size < 2 || n < 1) {
        if (rank == 0)
            fprintf(stderr, "send_delay: needs 2 ranks and N >= 1\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    double *delay = malloc((size_t)n * sizeof *delay);
    if (!delay)
        MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < n; i++) {
        if (rank == 0) {
            double t = now_us();
            MPI_Send(&t, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
            volatile double x = 0;
            for (double end = now_us() + compute; now_us() < end;)
                x += 1;
        } else if (rank == 1) {
            double t;
            MPI_Recv(&t, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            delay[i] = now_us() - t;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        qsort(delay, (size_t)n, sizeof *delay, cmp);
        printf("RESULT send_delay p10 %.1f us\nRESULT send_delay p50 %.1f us\n"
               "RESULT send_delay p90 %.1f us\nRESULT send_delay max %.1f us\n",
               delay[n / 10], delay[n / 2], delay[n * 9 / 10], delay[n - 1]);
        fflush(stdout);
    }
    free(delay);
    MPI_Finalize();
    return 0;
}
