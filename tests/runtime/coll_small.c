/* coll_small [ROUNDS]: small blocking collectives through the master, each
 * one request (BD_REQ_COLL_SMALL, session 27), checked against values every
 * rank computes itself:
 *   - MPI_Allreduce of 0, 1, 3 and 100 doubles (MPI_SUM; integers held in
 *     doubles, so any order of addition gives the same bits), in place too;
 *   - MPI_Reduce of ints (MPI_MAX) to a root that moves every round;
 *   - MPI_Bcast of a strided vector type from a root that moves (the
 *     elements between the strides must stay as they were);
 *   - MPI_Scan and MPI_Exscan of ints (MPI_SUM), MPI_Reduce_scatter_block
 *     of two ints a rank;
 *   - MPI_Allgather of two ints a rank, MPI_Gather of one to a moving
 *     root, MPI_Scatter of one from it, MPI_Alltoallv with counts 0-2 that differ by pair;
 *     every other round MPI_Allgather, MPI_Gather, MPI_Scatter and an
 *     MPI_Alltoall in place (session 28: one request too);
 *   - MPI_Barrier;
 *   - every 10th round an MPI_Allreduce with a receive posted: rank 0
 *     posts a receive from the last rank, which sends it with MPI_Ssend
 *     before it enters the Allreduce, so rank 0 must match it while it
 *     waits in the Allreduce (MPI's progress rule; without it both wait
 *     for ever); the others receive, after the Allreduce, a message the
 *     rank after them sent after it.
 * Run by coll_small.sh with --stats, which checks the requests per
 * collective.  Prints "PASS coll_small" and exits 0, else names what
 * differed and exits 1. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_rank, g_bad;

static void expect(int ok, const char *what, int round)
{
    if (!ok && g_bad++ < 10)
        fprintf(stderr, "rank %d: round %d: %s wrong\n", g_rank, round, what);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = argc > 1 ? atoi(argv[1]) : 200;
    double in[100], out[100];
    int vec[3 * 16];
    MPI_Datatype strided;
    MPI_Type_vector(16, 1, 3, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    for (int r = 0; r < rounds; r++) {
        static const int counts[] = {0, 1, 3, 100};
        int n = counts[r % 4];
        for (int i = 0; i < n; i++)
            in[i] = (double)(g_rank + 1) * (i + 1) + r;
        for (int i = 0; i < 100; i++)
            out[i] = -1.0;
        MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        int ok = 1;
        for (int i = 0; i < n; i++)
            ok &= out[i] == (double)size * (size + 1) / 2 * (i + 1) + (double)r * size;
        ok &= n == 100 || out[n] == -1.0;
        expect(ok, "MPI_Allreduce", r);

        MPI_Allreduce(MPI_IN_PLACE, in, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        ok = 1;
        for (int i = 0; i < n; i++)
            ok &= in[i] == (double)size * (size + 1) / 2 * (i + 1) + (double)r * size;
        expect(ok, "MPI_Allreduce in place", r);

        int root = r % size, mine[2] = {g_rank * 7 + r, -g_rank}, got[2] = {-5, -5};
        MPI_Reduce(mine, got, 2, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD);
        if (g_rank == root)
            expect(got[0] == (size - 1) * 7 + r && got[1] == 0, "MPI_Reduce", r);
        else
            expect(got[0] == -5 && got[1] == -5, "MPI_Reduce (not the root)", r);

        for (int i = 0; i < 3 * 16; i++)
            vec[i] = g_rank == root ? i * 10 + r : -1;
        MPI_Bcast(vec, 1, strided, root, MPI_COMM_WORLD);
        ok = 1;
        for (int i = 0; i < 3 * 16; i++)
            ok &= vec[i] == (i % 3 == 0 || g_rank == root ? i * 10 + r : -1);
        expect(ok, "MPI_Bcast (vector type)", r);

        int one = g_rank + 1 + r, pre = -7, expre = -7;
        MPI_Scan(&one, &pre, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        expect(pre == (g_rank + 1) * (g_rank + 2) / 2 + (g_rank + 1) * r, "MPI_Scan", r);
        MPI_Exscan(&one, &expre, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (g_rank > 0)
            expect(expre == g_rank * (g_rank + 1) / 2 + g_rank * r, "MPI_Exscan", r);
        int rsin[2 * 64], rsout[2] = {-1, -1};
        if (size <= 64) {
            for (int j = 0; j < 2 * size; j++)
                rsin[j] = g_rank + j + r;
            MPI_Reduce_scatter_block(rsin, rsout, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            for (int j = 0; j < 2; j++)
                expect(rsout[j] == size * (size - 1) / 2 + size * (2 * g_rank + j + r),
                       "MPI_Reduce_scatter_block", r);
        }

        if (size <= 64) {
            int ag_in[2] = {g_rank * 10 + r, g_rank * 10 + r + 1}, ag[2 * 64];
            MPI_Allgather(ag_in, 2, MPI_INT, ag, 2, MPI_INT, MPI_COMM_WORLD);
            ok = 1;
            for (int q = 0; q < size; q++)
                ok &= ag[2 * q] == q * 10 + r && ag[2 * q + 1] == q * 10 + r + 1;
            expect(ok, "MPI_Allgather", r);
            int g_in = g_rank * 3 + r, g_out[64];
            for (int q = 0; q < size; q++)
                g_out[q] = -1;
            MPI_Gather(&g_in, 1, MPI_INT, g_out, 1, MPI_INT, root, MPI_COMM_WORLD);
            ok = 1;
            for (int q = 0; q < size; q++)
                ok &= g_out[q] == (g_rank == root ? q * 3 + r : -1);
            expect(ok, "MPI_Gather", r);
            int sc_out = -1;
            for (int q = 0; q < size; q++)
                g_out[q] = q * 7 + r;
            MPI_Scatter(g_out, 1, MPI_INT, &sc_out, 1, MPI_INT, root, MPI_COMM_WORLD);
            expect(sc_out == g_rank * 7 + r, "MPI_Scatter", r);
            /* rank a sends rank b (a + b + r) % 3 ints, a * 100 + b * 10 + k */
            int sc[64], sd[64], rc[64], rd[64], sbuf[3 * 64], rbuf[3 * 64], ns = 0, nr = 0;
            for (int q = 0; q < size; q++) {
                sc[q] = (g_rank + q + r) % 3;
                sd[q] = ns;
                for (int k = 0; k < sc[q]; k++)
                    sbuf[ns++] = g_rank * 100 + q * 10 + k;
                rc[q] = (q + g_rank + r) % 3;
                rd[q] = nr;
                nr += rc[q];
            }
            for (int k = 0; k < nr; k++)
                rbuf[k] = -1;
            MPI_Alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, MPI_COMM_WORLD);
            ok = 1;
            for (int q = 0; q < size; q++)
                for (int k = 0; k < rc[q]; k++)
                    ok &= rbuf[rd[q] + k] == q * 100 + g_rank * 10 + k;
            expect(ok, "MPI_Alltoallv", r);
            if (r % 2) {
                for (int q = 0; q < 2 * size; q++)
                    ag[q] = q / 2 == g_rank ? ag_in[q % 2] : -1;
                MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ag, 2, MPI_INT, MPI_COMM_WORLD);
                ok = 1;
                for (int q = 0; q < size; q++)
                    ok &= ag[2 * q] == q * 10 + r && ag[2 * q + 1] == q * 10 + r + 1;
                expect(ok, "MPI_Allgather in place", r);
                for (int q = 0; q < size; q++)
                    g_out[q] = g_rank == root && q == root ? g_in : -1;
                MPI_Gather(g_rank == root ? MPI_IN_PLACE : &g_in, 1, MPI_INT, g_out, 1, MPI_INT,
                           root, MPI_COMM_WORLD);
                ok = 1;
                for (int q = 0; q < size; q++)
                    ok &= g_out[q] == (g_rank == root ? q * 3 + r : -1);
                expect(ok, "MPI_Gather in place", r);
                for (int q = 0; q < size; q++)
                    g_out[q] = q * 7 + r;
                sc_out = -1;
                MPI_Scatter(g_out, 1, MPI_INT, g_rank == root ? MPI_IN_PLACE : &sc_out, 1, MPI_INT,
                            root, MPI_COMM_WORLD);
                expect(g_rank == root ? g_out[root] == root * 7 + r : sc_out == g_rank * 7 + r,
                       "MPI_Scatter in place", r);
                for (int q = 0; q < size; q++)
                    rbuf[q] = g_rank * 100 + q + r;
                MPI_Alltoall(MPI_IN_PLACE, 1, MPI_INT, rbuf, 1, MPI_INT, MPI_COMM_WORLD);
                ok = 1;
                for (int q = 0; q < size; q++)
                    ok &= rbuf[q] == q * 100 + g_rank + r;
                expect(ok, "MPI_Alltoall in place", r);
            }
        }

        MPI_Barrier(MPI_COMM_WORLD);

        if (r % 10 == 0 && size > 2) {
            /* rank 0 receives from the last rank, which sends before the
             * Allreduce; rank k (0 < k < last) from rank k + 1, after it */
            int last = size - 1, msg = -1, v = g_rank * 1000 + r;
            int from = g_rank == 0 ? last : g_rank + 1;
            MPI_Request q;
            if (g_rank != last)
                MPI_Irecv(&msg, 1, MPI_INT, from, 9, MPI_COMM_WORLD, &q);
            if (g_rank == last)
                MPI_Ssend(&v, 1, MPI_INT, 0, 9, MPI_COMM_WORLD);
            double one = 1.0, all = 0.0;
            MPI_Allreduce(&one, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            expect(all == (double)size, "MPI_Allreduce with a receive posted", r);
            if (g_rank >= 2)
                MPI_Send(&v, 1, MPI_INT, g_rank - 1, 9, MPI_COMM_WORLD);
            if (g_rank != last) {
                MPI_Wait(&q, MPI_STATUS_IGNORE);
                expect(msg == from * 1000 + r, "the message received around the MPI_Allreduce", r);
            }
        }
    }
    MPI_Type_free(&strided);
    int tot = 0;
    MPI_Allreduce(&g_bad, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf(tot ? "FAIL coll_small: %d wrong\n" : "PASS coll_small %d rounds\n",
               tot ? tot : rounds);
    MPI_Finalize();
    return tot != 0;
}
