/* net_posted MODE N: small messages between nodes (issue 12, session 17).
 *   rate   rank 0 sends N 8-byte messages to the last rank, which answers
 *          once per N/10 (message rate; us per message)
 *   pp     N 8-byte ping-pongs between rank 0 and the last rank (us each)
 *   flood  MPICH's sendflood pattern: rank 0 receives one message from
 *          every rank, then answers each; N rounds (us per round)
 * Prints "RESULT MODE us", and on rank 0 "SWITCHES MODE involuntary
 * voluntary": its context switches per message (rate), round trip (pp) or
 * round (flood) over the run (getrusage): involuntary ones are the rank
 * preempted, by its master woken by the rank's own posted sends among
 * others (issue 12, session 19). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r, p, b[4] = {0};
    const char *mode = argc > 1 ? argv[1] : "rate";
    int n = argc > 2 ? atoi(argv[2]) : 2000, last;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    last = p - 1;
    MPI_Barrier(MPI_COMM_WORLD);
    struct rusage ru0, ru1;
    getrusage(RUSAGE_SELF, &ru0);
    double t = MPI_Wtime();
    if (!strcmp(mode, "rate")) {
        for (int rep = 0; rep < 10; rep++) {
            if (r == 0) {
                for (int i = 0; i < n / 10; i++)
                    MPI_Send(b, 2, MPI_INT, last, 9, MPI_COMM_WORLD);
                MPI_Recv(b, 2, MPI_INT, last, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (r == last) {
                for (int i = 0; i < n / 10; i++)
                    MPI_Recv(b, 2, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(b, 2, MPI_INT, 0, 8, MPI_COMM_WORLD);
            }
        }
    } else if (!strcmp(mode, "pp")) {
        for (int i = 0; i < n; i++) {
            if (r == 0) {
                MPI_Send(b, 2, MPI_INT, last, 9, MPI_COMM_WORLD);
                MPI_Recv(b, 2, MPI_INT, last, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (r == last) {
                MPI_Recv(b, 2, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(b, 2, MPI_INT, 0, 9, MPI_COMM_WORLD);
            }
        }
    } else {
        for (int i = 0; i < n; i++) {
            if (r == 0) {
                for (int j = 1; j < p; j++)
                    MPI_Recv(b, 4, MPI_INT, j, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                for (int j = 1; j < p; j++)
                    MPI_Send(b, 3, MPI_INT, j, 9, MPI_COMM_WORLD);
            } else {
                MPI_Send(b, 3, MPI_INT, 0, 9, MPI_COMM_WORLD);
                MPI_Recv(b, 4, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
        }
    }
    t = MPI_Wtime() - t;
    getrusage(RUSAGE_SELF, &ru1);
    if (r == 0) {
        printf("RESULT %s %.2f\n", mode, t / n * 1e6);
        printf("SWITCHES %s %.3f %.3f\n", mode, (double)(ru1.ru_nivcsw - ru0.ru_nivcsw) / n,
               (double)(ru1.ru_nvcsw - ru0.ru_nvcsw) / n);
    }
    MPI_Finalize();
    return 0;
}
