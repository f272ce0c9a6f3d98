/* Small nonblocking collectives in the ranks (coll_local_nb.c): every value
 * of MPI_Iallreduce (0-100 doubles, bit-identical to MPI_Allreduce; ints in
 * place), MPI_Ireduce to a moving root, MPI_Ibcast of a vector type from a
 * moving root, MPI_Ibarrier, MPI_Iallgather, MPI_Igather, MPI_Iscatter and
 * MPI_Ialltoall (in place too), on MPI_COMM_WORLD and on a split
 * communicator, nine instances in flight at once with a blocking
 * MPI_Allreduce among them, completed by MPI_Waitall, by MPI_Wait in
 * reverse order, by MPI_Testall or by MPI_Waitany.  And MPI's progress
 * rule: rank 0 starts an Ibarrier, then receives what rank 1 sends only
 * after its own MPI_Wait on that barrier.
 * usage: coll_local_nb ROUNDS; prints "PASS coll_local_nb ROUNDS". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "complete4.h"

#define MAXN 100
#define MAXP 32

static int g_rank;

static void fail(const char *what, int round, int j)
{
    fprintf(stderr, "rank %d: round %d: %s (element %d)\n", g_rank, round, what, j);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void round_on(MPI_Comm comm, int i)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int n = i % (MAXN + 1), root = i % size, broot = (i + 1) % size;
    double x[MAXN], y[MAXN], yb[MAXN];
    int mx[8], vec[9], want[9];
    long pr = 0, prod_in = (long)(rank % 3) + 1;
    for (int j = 0; j < n; j++)
        x[j] = rank * 1.1 + j * 0.3 + i * 1e-3;
    for (int j = 0; j < 8; j++)
        mx[j] = (rank * 7 + j * 13 + i) % 101;
    for (int j = 0; j < 9; j++)
        vec[j] = rank == broot ? i * 100 + j : -1;
    MPI_Datatype vt;
    MPI_Type_vector(3, 2, 3, MPI_INT, &vt); /* elements 0 1, 3 4, 6 7 */
    MPI_Type_commit(&vt);
    int ag[MAXP * 2], ga[MAXP], sc[MAXP * 3], sr[3], a2a[MAXP], a2b[MAXP];
    int gin = i & 1; /* in place this round: Iallgather, Igather's root, Ialltoall */
    for (int q = 0; q < MAXP * 2; q++)
        ag[q] = -1;
    if (gin)
        ag[2 * rank] = rank * 10 + i, ag[2 * rank + 1] = -rank;
    for (int q = 0; q < size; q++) {
        ga[q] = rank == root && gin && q == root ? q + 1000 * i : -1;
        for (int j = 0; j < 3; j++)
            sc[q * 3 + j] = rank == root ? q * 3 + j + i : -7;
        a2a[q] = rank * 100 + q + i;
        a2b[q] = -1;
    }
    int mine2[2] = {rank * 10 + i, -rank}, gmine = rank + 1000 * i;
    MPI_Request r[9];
    MPI_Iallreduce(x, y, n, MPI_DOUBLE, MPI_SUM, comm, &r[0]);
    MPI_Iallreduce(MPI_IN_PLACE, mx, 8, MPI_INT, MPI_MAX, comm, &r[1]);
    /* a blocking one among them: takes its messages after theirs */
    MPI_Allreduce(x, yb, n, MPI_DOUBLE, MPI_SUM, comm);
    MPI_Ireduce(&prod_in, &pr, 1, MPI_LONG, MPI_PROD, root, comm, &r[2]);
    MPI_Ibcast(vec, 1, vt, broot, comm, &r[3]);
    MPI_Ibarrier(comm, &r[4]);
    MPI_Iallgather(gin ? MPI_IN_PLACE : mine2, 2, MPI_INT, ag, 2, MPI_INT, comm, &r[5]);
    MPI_Igather(gin && rank == root ? MPI_IN_PLACE : &gmine, 1, MPI_INT, ga, 1, MPI_INT, root, comm,
                &r[6]);
    MPI_Iscatter(sc, 3, MPI_INT, sr, 3, MPI_INT, root, comm, &r[7]);
    if (gin)
        MPI_Ialltoall(MPI_IN_PLACE, 1, MPI_INT, a2a, 1, MPI_INT, comm, &r[8]);
    else
        MPI_Ialltoall(a2a, 1, MPI_INT, a2b, 1, MPI_INT, comm, &r[8]);
    complete4(r, 9, i);
    for (int q = 0; q < size; q++) {
        if (ag[2 * q] != q * 10 + i || ag[2 * q + 1] != -q)
            fail("Iallgather", i, q);
        if (rank == root && ga[q] != q + 1000 * i)
            fail("Igather", i, q);
        if ((gin ? a2a : a2b)[q] != q * 100 + rank + i)
            fail("Ialltoall", i, q);
    }
    for (int j = 0; j < 3; j++)
        if (sr[j] != rank * 3 + j + i)
            fail("Iscatter", i, j);
    for (int j = 0; j < n; j++)
        if (memcmp(&y[j], &yb[j], sizeof y[j]))
            fail("Iallreduce differs from Allreduce", i, j);
    for (int j = 0; j < 8; j++) {
        int m = -1;
        for (int q = 0; q < size; q++) {
            int v = (q * 7 + j * 13 + i) % 101;
            m = v > m ? v : m;
        }
        if (mx[j] != m)
            fail("Iallreduce MAX in place", i, j);
    }
    if (rank == root) {
        long p = 1;
        for (int q = 0; q < size; q++)
            p *= (long)(q % 3) + 1;
        if (pr != p)
            fail("Ireduce PROD", i, 0);
    }
    for (int j = 0; j < 9; j++) {
        int inside = j % 3 != 2 && j < 8;
        want[j] = inside || rank == broot ? i * 100 + j : -1;
        if (vec[j] != want[j])
            fail("Ibcast of a vector type", i, j);
    }
    MPI_Type_free(&vt);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 100, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > MAXP) {
        fprintf(stderr, "coll_local_nb: at most %d ranks\n", MAXP);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_rank, &half);
    for (int i = 0; i < rounds; i++) {
        round_on(i % 4 == 3 ? half : MPI_COMM_WORLD, i);
        /* progress: rank 1 sends only after its Wait on the barrier, which
         * needs rank 0 to have called it, not to have waited */
        MPI_Request b;
        int v = 0;
        MPI_Ibarrier(MPI_COMM_WORLD, &b);
        if (g_rank == 0 && size > 1) {
            MPI_Recv(&v, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (v != i)
                fail("the message after the barrier", i, 0);
            MPI_Wait(&b, MPI_STATUS_IGNORE);
        } else {
            MPI_Wait(&b, MPI_STATUS_IGNORE);
            if (g_rank == 1)
                MPI_Send(&i, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
        }
    }
    MPI_Comm_free(&half);
    if (g_rank == 0)
        printf("PASS coll_local_nb %d\n", rounds);
    MPI_Finalize();
    return 0;
}
