/*
 * sleep_lend: while one rank sleeps outside MPI for a short while, other
 * ranks exchange messages (the pattern of mpi4py.futures: a worker runs a
 * task that sleeps while the manager and another worker trade small tasks,
 * and the futures tests expect those to finish within 0.25 s).
 *
 * Rank 1 tells rank 0 it is going to sleep, sleeps NAP_MS in nanosleep()
 * (a system call, outside MPI) and then sends rank 0 a second message.
 * Rank 0 receives the first message, makes ROUNDS round trips with rank 2
 * and only then looks for the second one: it must not be there yet.  Under
 * an MPI whose processes all run, the round trips take microseconds.
 * Where only some ranks run at once and a turn changes hands only at MPI
 * calls, rank 1 holds its turn through the sleep, and ranks 0 and 2 can run
 * only once it is lent (bdmpiexec -lend-asleep); a lend that waits longer
 * than the nap (the old default, 200 ms) fails here at -nr 1.
 * Worlds of fewer than 3 ranks have nothing to test and pass.
 */
#include <time.h>

#include "mtest.h"

enum { NAP_MS = 150, ROUNDS = 5, TAG_NAP = 1, TAG_WOKE = 2, TAG_RT = 3 };

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv, "sleep_lend");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size >= 3) {
        int v = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1) {
            MPI_Send(&v, 1, MPI_INT, 0, TAG_NAP, MPI_COMM_WORLD);
            struct timespec ts = {0, NAP_MS * 1000000L};
            while (nanosleep(&ts, &ts) != 0)
                ;
            MPI_Send(&v, 1, MPI_INT, 0, TAG_WOKE, MPI_COMM_WORLD);
        } else if (rank == 2) {
            for (int i = 0; i < ROUNDS; i++) {
                MPI_Recv(&v, 1, MPI_INT, 0, TAG_RT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                v++;
                MPI_Send(&v, 1, MPI_INT, 0, TAG_RT, MPI_COMM_WORLD);
            }
        } else if (rank == 0) {
            int woke = 0;
            MPI_Recv(&v, 1, MPI_INT, 1, TAG_NAP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int i = 0; i < ROUNDS; i++) {
                int w = 2 * i;
                MPI_Send(&w, 1, MPI_INT, 2, TAG_RT, MPI_COMM_WORLD);
                MPI_Recv(&w, 1, MPI_INT, 2, TAG_RT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                CHECK(w == 2 * i + 1, "round trip %d brought back %d, expected %d", i, w,
                      2 * i + 1);
            }
            MPI_Iprobe(1, TAG_WOKE, MPI_COMM_WORLD, &woke, MPI_STATUS_IGNORE);
            CHECK(!woke,
                  "%d round trips with rank 2 took until rank 1 had slept its %d ms outside MPI "
                  "(its turn was not lent while it slept)",
                  ROUNDS, NAP_MS);
            MPI_Recv(&v, 1, MPI_INT, 1, TAG_WOKE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    return mtest_finalize();
}
