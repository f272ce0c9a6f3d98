/*
 * pmpi_wrap: the profiling interface (MPI 3.1 section 14.2).  This program
 * defines its own MPI_Send, MPI_Isend, MPI_Allreduce and MPI_Comm_rank that
 * count their calls and forward to the PMPI_ versions:
 *  - every call the program makes reaches the wrapper once, and the results
 *    are those of the real calls;
 *  - calls the MPI library makes internally do not (MPI_Sendrecv,
 *    MPI_Bcast or MPI_Comm_split must not show up as MPI_Send or
 *    MPI_Allreduce calls);
 *  - PMPI_ functions called directly work.
 */
#include "mtest.h"

static int n_send, n_isend, n_allreduce, n_rank;

int MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    n_send++;
    return PMPI_Send(buf, count, dt, dest, tag, comm);
}

int MPI_Isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    n_isend++;
    return PMPI_Isend(buf, count, dt, dest, tag, comm, req);
}

int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                  MPI_Comm comm)
{
    n_allreduce++;
    return PMPI_Allreduce(sbuf, rbuf, count, dt, op, comm);
}

int MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    n_rank++;
    return PMPI_Comm_rank(comm, rank);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "pmpi_wrap");
    int size = mtest_size_, rank = -1, i;
    /* mtest_init may itself call MPI_Comm_rank: count from here. */
    n_send = n_isend = n_allreduce = n_rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    CHECK(n_rank == 1 && rank == mtest_rank_, "Comm_rank wrapper: %d calls, rank %d", n_rank, rank);

    int right = (rank + 1) % size, left = (rank + size - 1) % size, got = -1;
    MPI_Request rq;
    for (i = 0; i < 3; i++) {
        MPI_Isend(&rank, 1, MPI_INT, right, i, MPI_COMM_WORLD, &rq);
        MPI_Recv(&got, 1, MPI_INT, left, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        CHECK(got == left, "round %d got %d from the left, expected %d", i, got, left);
    }
    MPI_Irecv(&got, 1, MPI_INT, left, 9, MPI_COMM_WORLD, &rq);
    MPI_Send(&rank, 1, MPI_INT, right, 9, MPI_COMM_WORLD);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);

    /* Library-internal work must not reach the wrappers. */
    int x = rank, y = -1, sum = -1;
    MPI_Sendrecv(&x, 1, MPI_INT, right, 5, &y, 1, MPI_INT, left, 5, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &sub);
    MPI_Comm_free(&sub);
    MPI_Reduce(&rank, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);

    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == size * (size - 1) / 2, "Allreduce through the wrapper gave %d", sum);
    PMPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(sum == size - 1, "PMPI_Allreduce called directly gave %d", sum);

    CHECK(n_isend == 3, "MPI_Isend wrapper saw %d calls, expected 3", n_isend);
    CHECK(n_send == 1, "MPI_Send wrapper saw %d calls, expected 1", n_send);
    CHECK(n_allreduce == 1, "MPI_Allreduce wrapper saw %d calls, expected 1", n_allreduce);
    CHECK(n_rank == 1, "MPI_Comm_rank wrapper saw %d calls, expected 1", n_rank);
    return mtest_finalize();
}
