/*
 * coll_barrier: MPI_Barrier.
 *
 *  1. The one observable guarantee of a barrier: no process leaves it before
 *     every process has entered it.  Each rank polls MPI_Iprobe for a while
 *     before the barrier for a message that its left neighbour sends only
 *     after leaving the barrier: the probe must never succeed.  In each
 *     repetition one rank polls 10x longer before entering, so the others
 *     really have to wait for it.
 *  2. Repeated barriers on MPI_COMM_WORLD, MPI_COMM_SELF and a duplicate of
 *     MPI_COMM_WORLD, interleaved with point-to-point traffic.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    int rank, size, right, left, i, rep, flag;
    MPI_Comm dup;

    mtest_init(&argc, &argv, "coll_barrier");
    rank = mtest_rank_;
    size = mtest_size_;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;

    for (rep = 0; rep < 3; rep++) {
        int v = rank + rep, got = -1, early = 0;
        double t0 = MPI_Wtime(), wait = (rank == rep % size) ? 0.02 : 0.002;
        if (size > 64)
            wait /= 4;
        while (MPI_Wtime() - t0 < wait) {
            MPI_Iprobe(left, 50 + rep, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            early += flag;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK(early == 0,
              "rep %d: saw a message sent after the barrier "
              "before entering it",
              rep);
        MPI_Sendrecv(&v, 1, MPI_INT, right, 50 + rep, &got, 1, MPI_INT, left, 50 + rep,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK_INT(got, left + rep, "value after barrier");
    }

    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    for (i = 0; i < 10; i++) {
        int v = i, got = -1;
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_SELF);
        MPI_Barrier(dup);
        MPI_Sendrecv(&v, 1, MPI_INT, right, i, &got, 1, MPI_INT, left, i, dup, MPI_STATUS_IGNORE);
        CHECK_INT(got, i, "sendrecv between barriers");
    }
    MPI_Comm_free(&dup);

    return mtest_finalize();
}
