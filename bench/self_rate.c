/* self_rate: the CPU cost of the small-message path, without the
 * scheduler.  One rank sends W 8-byte messages to itself (MPI_Isend) and
 * receives them (MPI_Irecv posted before the sends: "posted", or after:
 * "unexpected"), then MPI_Waitall, R times; the figure is the thread's CPU
 * time per message (send and receive), the best of 3, so that a busy
 * machine, which delays a process but does not make its instructions
 * dearer, changes it little.  Prints "RESULT self_posted 8 NS ns" and
 * "RESULT self_unexpected 8 NS ns".  bench/self_rate.py compares runtimes.
 *   self_rate [--rounds R] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, rounds = 4000;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (argc > 2 && !strcmp(argv[1], "--rounds"))
        rounds = atoi(argv[2]);
    enum { W = 64 };
    static char out[8], in[W][8];
    static MPI_Request q[2 * W];
    static MPI_Status st[2 * W];
    for (int mode = 0; mode < 2; mode++) {
        double best = 1e30;
        for (int rep = 0; rep < 3; rep++) {
            double t0 = cpu_s();
            for (int i = 0; i < rounds; i++) {
                for (int k = 0; k < W && mode == 0; k++)
                    MPI_Irecv(in[k], 8, MPI_BYTE, me, 4, MPI_COMM_WORLD, &q[k]);
                for (int k = 0; k < W; k++)
                    MPI_Isend(out, 8, MPI_BYTE, me, 4, MPI_COMM_WORLD, &q[W + k]);
                for (int k = 0; k < W && mode == 1; k++)
                    MPI_Irecv(in[k], 8, MPI_BYTE, me, 4, MPI_COMM_WORLD, &q[k]);
                MPI_Waitall(2 * W, q, st);
            }
            double t = (cpu_s() - t0) / ((double)rounds * W) * 1e9;
            if (t < best)
                best = t;
        }
        if (me == 0)
            printf("RESULT self_%s 8 %.1f ns\n", mode ? "unexpected" : "posted", best);
    }
    MPI_Finalize();
    return 0;
}
