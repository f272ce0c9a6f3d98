/* One program that does point-to-point rings and every collective, for the
 * large shapes (bdmpiexec -ns 512 -nr 1).  Sizes stay O(p) per rank. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bad, rank, size;
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            if (bad++ < 5) {                                                                       \
                fprintf(stderr, "rank %d: ", rank);                                                \
                fprintf(stderr, __VA_ARGS__);                                                      \
                fprintf(stderr, "\n");                                                             \
            }                                                                                      \
        }                                                                                          \
    } while (0)

static void max_user(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        if (((int *)in)[i] > ((int *)inout)[i])
            ((int *)inout)[i] = ((int *)in)[i];
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int p = size;

    /* Rings: a small message, and for the first ranks a large (spilled) one. */
    int got = -1;
    MPI_Sendrecv(&rank, 1, MPI_INT, right, 1, &got, 1, MPI_INT, left, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    CHECK(got == left, "small ring got %d", got);
    {
        int n = 100000;
        int *big = malloc(n * sizeof(int)), *in = malloc(n * sizeof(int));
        for (int i = 0; i < n; i++)
            big[i] = rank * 7 + i;
        MPI_Request rq[2];
        MPI_Irecv(in, n, MPI_INT, left, 2, MPI_COMM_WORLD, &rq[0]);
        MPI_Isend(big, n, MPI_INT, right, 2, MPI_COMM_WORLD, &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        for (int i = 0; i < n; i += 997)
            CHECK(in[i] == left * 7 + i, "big ring element %d = %d", i, in[i]);
        free(big);
        free(in);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    int v = -1;
    if (rank == p / 2)
        v = 12345;
    MPI_Bcast(&v, 1, MPI_INT, p / 2, MPI_COMM_WORLD);
    CHECK(v == 12345, "bcast %d", v);

    long s = 0, mine = rank + 1;
    MPI_Reduce(&mine, &s, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        CHECK(s == (long)p * (p + 1) / 2, "reduce %ld", s);
    MPI_Allreduce(&mine, &s, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(s == (long)p * (p + 1) / 2, "allreduce %ld", s);
    MPI_Scan(&mine, &s, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(s == (long)(rank + 1) * (rank + 2) / 2, "scan %ld", s);
    MPI_Exscan(&mine, &s, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank > 0)
        CHECK(s == (long)rank * (rank + 1) / 2, "exscan %ld", s);
    struct {
        double v;
        int i;
    } in = {(double)(rank % 7), rank}, out;
    MPI_Allreduce(&in, &out, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
    CHECK(out.v == (p >= 7 ? 6.0 : p - 1) && out.i == (p >= 7 ? 6 : p - 1), "maxloc %g %d", out.v,
          out.i);
    MPI_Op uop;
    MPI_Op_create(max_user, 1, &uop);
    int um = rank * 3 % p, ur = -1;
    MPI_Allreduce(&um, &ur, 1, MPI_INT, uop, MPI_COMM_WORLD);
    int expect_max = 0;
    for (int r = 0; r < p; r++)
        if (r * 3 % p > expect_max)
            expect_max = r * 3 % p;
    CHECK(ur == expect_max, "user-op allreduce %d, expected %d", ur, expect_max);
    MPI_Op_free(&uop);

    int *all = malloc(p * sizeof(int)), *cnt = malloc(p * sizeof(int)),
        *dsp = malloc(p * sizeof(int));
    int *sb = malloc(p * sizeof(int)), *rb = malloc(p * sizeof(int));
    MPI_Gather(&rank, 1, MPI_INT, all, 1, MPI_INT, p - 1, MPI_COMM_WORLD);
    if (rank == p - 1)
        for (int r = 0; r < p; r++)
            CHECK(all[r] == r, "gather[%d] %d", r, all[r]);
    MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < p; r++)
        CHECK(all[r] == r, "allgather[%d] %d", r, all[r]);
    for (int r = 0; r < p; r++) {
        cnt[r] = 1;
        dsp[r] = p - 1 - r;
    }
    MPI_Allgatherv(&rank, 1, MPI_INT, all, cnt, dsp, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < p; r++)
        CHECK(all[p - 1 - r] == r, "allgatherv[%d] %d", r, all[p - 1 - r]);
    MPI_Gatherv(&rank, 1, MPI_INT, all, cnt, dsp, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0)
        for (int r = 0; r < p; r++)
            CHECK(all[p - 1 - r] == r, "gatherv[%d] %d", r, all[p - 1 - r]);
    for (int r = 0; r < p; r++)
        sb[r] = 1000 * r;
    int one = -1;
    MPI_Scatter(sb, 1, MPI_INT, &one, 1, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK(one == 1000 * rank, "scatter %d", one);
    MPI_Scatterv(sb, cnt, dsp, MPI_INT, &one, 1, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK(one == 1000 * (p - 1 - rank), "scatterv %d", one);
    for (int r = 0; r < p; r++)
        sb[r] = rank * p + r;
    MPI_Alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < p; r++)
        CHECK(rb[r] == r * p + rank, "alltoall[%d] %d", r, rb[r]);
    for (int r = 0; r < p; r++) {
        cnt[r] = 1;
        dsp[r] = r;
    }
    MPI_Alltoallv(sb, cnt, dsp, MPI_INT, rb, cnt, dsp, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < p; r++)
        CHECK(rb[r] == r * p + rank, "alltoallv[%d] %d", r, rb[r]);
    for (int r = 0; r < p; r++)
        sb[r] = r + rank;
    int rs = -1;
    MPI_Reduce_scatter_block(sb, &rs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(rs == p * rank + p * (p - 1) / 2, "reduce_scatter_block %d", rs);

    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    int hs, hr, hsum = 0;
    MPI_Comm_size(half, &hs);
    MPI_Comm_rank(half, &hr);
    MPI_Allreduce(&rank, &hsum, 1, MPI_INT, MPI_SUM, half);
    int expect = 0;
    for (int r = rank % 2; r < p; r += 2)
        expect += r;
    CHECK(hsum == expect, "split allreduce %d, expected %d", hsum, expect);
    CHECK(hr == hs - 1 - rank / 2, "split rank %d of %d", hr, hs);
    MPI_Comm_free(&half);

    int tot = 0;
    MPI_Allreduce(&bad, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s all_ops on %d ranks\n", tot ? "FAIL" : "PASS", p);
    free(all);
    free(cnt);
    free(dsp);
    free(sb);
    free(rb);
    MPI_Finalize();
    return tot ? 1 : 0;
}
