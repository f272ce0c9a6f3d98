/*
 * coll_local: reductions give, bit for bit, the fold of the contributions in
 * rank order (acc = v0, then acc = v_r op acc), whichever way the runtime
 * runs them.  Under BDMPI small collectives run in the ranks when every
 * member is on one node and all can run at once (-nr >= size), larger ones
 * through the master: the same sums of doubles chosen so that the order of
 * the additions changes the result are made with 256 elements (in the
 * ranks, one mailbox entry), 1024 (8 KiB: in the ranks, several entries)
 * and 4096 (32 KiB: the master), on MPI_COMM_WORLD and on a split
 * communicator, with MPI_IN_PLACE, a strided derived type, floats (PROD),
 * MINLOC, integers; then Bcast, Barrier, Gather, Allgather, Scatter and
 * Alltoall of small data.  MPICH folds in another order: there only the
 * values are checked, with a tolerance.
 *
 * With the argument "mismatch" (BDMPI only, a runtime test): rank 0 calls
 * MPI_Allreduce where the others call MPI_Barrier; the job must end with a
 * collective-mismatch error.
 */
#include <math.h>

#include "mtest.h"

#define N 256
#define MID 1024
#define BIG 4096

/* Contributions of very different magnitudes, so the order of the sum matters. */
static double val(int r, int i)
{
    unsigned s = (unsigned)(r + 1) * 2654435761u ^ (unsigned)(i + 7) * 40503u;
    double m = (double)(s % 100003) / 1000.0 - 50.0;
    int e = (int)((s >> 8) % 41) - 20;
    return ldexp(m, e);
}

static int g_mpich;

static void check_d(const double *got, const double *want, int n, const char *what)
{
    for (int i = 0; i < n; i++) {
        int ok = g_mpich ? fabs(got[i] - want[i]) <= 1e-9 * (fabs(want[i]) + 1e-300) * 64
                         : !memcmp(&got[i], &want[i], sizeof(double));
        if (!ok) {
            CHECK(0, "%s: element %d is %.17g, the rank-order fold is %.17g", what, i, got[i],
                  want[i]);
            return;
        }
    }
}

/* Sums over the members of comm (world ranks members[]) of val(world rank, i0 + i). */
static void sum_expected(double *want, int n, int i0, const int *members, int size)
{
    for (int i = 0; i < n; i++) {
        double acc = val(members[0], i0 + i);
        for (int r = 1; r < size; r++)
            acc = val(members[r], i0 + i) + acc;
        want[i] = acc;
    }
}

static void sums(MPI_Comm comm, const char *name)
{
    int rank, size, wrank;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    int *members = malloc(sizeof(int) * (size_t)size);
    MPI_Allgather(&wrank, 1, MPI_INT, members, 1, MPI_INT, comm);
    double *in = malloc(sizeof(double) * BIG), *out = malloc(sizeof(double) * BIG);
    double *want = malloc(sizeof(double) * BIG);
    char what[96];
    for (int i = 0; i < BIG; i++)
        in[i] = val(wrank, i);
    sum_expected(want, BIG, 0, members, size);

    /* Small (in the ranks) and large (the master). */
    CHECK_MPI(MPI_Allreduce(in, out, N, MPI_DOUBLE, MPI_SUM, comm));
    snprintf(what, sizeof what, "%s: Allreduce of %d doubles", name, N);
    check_d(out, want, N, what);
    CHECK_MPI(MPI_Allreduce(in, out, MID, MPI_DOUBLE, MPI_SUM, comm));
    snprintf(what, sizeof what, "%s: Allreduce of %d doubles", name, MID);
    check_d(out, want, MID, what);
    CHECK_MPI(MPI_Allreduce(in, out, BIG, MPI_DOUBLE, MPI_SUM, comm));
    snprintf(what, sizeof what, "%s: Allreduce of %d doubles", name, BIG);
    check_d(out, want, BIG, what);
    /* The second quarter again, small: the same bits as in the large call. */
    CHECK_MPI(MPI_Allreduce(in + N, out, N, MPI_DOUBLE, MPI_SUM, comm));
    snprintf(what, sizeof what, "%s: Allreduce of elements %d..%d", name, N, 2 * N - 1);
    check_d(out, want + N, N, what);

    /* Reduce to the last rank, in place there. */
    int root = size - 1;
    if (rank == root) {
        memcpy(out, in, sizeof(double) * N);
        CHECK_MPI(MPI_Reduce(MPI_IN_PLACE, out, N, MPI_DOUBLE, MPI_SUM, root, comm));
        snprintf(what, sizeof what, "%s: Reduce in place at root %d", name, root);
        check_d(out, want, N, what);
    } else {
        CHECK_MPI(MPI_Reduce(in, NULL, N, MPI_DOUBLE, MPI_SUM, root, comm));
    }
    /* Allreduce in place. */
    memcpy(out, in, sizeof(double) * N);
    CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, out, N, MPI_DOUBLE, MPI_SUM, comm));
    snprintf(what, sizeof what, "%s: Allreduce in place", name);
    check_d(out, want, N, what);

    /* A strided type: 4 doubles 2 apart; 16 of them.  The gaps stay as they
     * were.  (A predefined op on a derived type: BDMPI folds its basic
     * elements; MPICH refuses it.) */
    if (!g_mpich) {
        MPI_Datatype vec;
        MPI_Type_vector(4, 1, 2, MPI_DOUBLE, &vec);
        MPI_Type_commit(&vec);
        MPI_Aint lb, ext;
        MPI_Type_get_extent(vec, &lb, &ext);
        int stride = (int)(ext / (MPI_Aint)sizeof(double)), k = 16, span = k * stride + 1;
        double *vin = malloc(sizeof(double) * (size_t)span),
               *vout = malloc(sizeof(double) * (size_t)span);
        for (int i = 0; i < span; i++) {
            vin[i] = -1.0;
            vout[i] = -2.0;
        }
        for (int e = 0, j = 0; e < k; e++)
            for (int b = 0; b < 4; b++, j++)
                vin[e * stride + 2 * b] = val(wrank, j);
        CHECK_MPI(MPI_Allreduce(vin, vout, k, vec, MPI_SUM, comm));
        for (int e = 0, j = 0; e < k; e++)
            for (int b = 0; b < 4; b++, j++) {
                double g = vout[e * stride + 2 * b];
                CHECK(g_mpich ? fabs(g - want[j]) <= 1e-6 * (fabs(want[j]) + 1e-300)
                              : !memcmp(&g, &want[j], sizeof g),
                      "%s: strided Allreduce element %d is %.17g, expected %.17g", name, j, g,
                      want[j]);
                vout[e * stride + 2 * b] = -2.0;
            }
        for (int i = 0; i < span; i++)
            CHECK(vout[i] == -2.0, "%s: strided Allreduce wrote into a gap at %d", name, i);
        MPI_Type_free(&vec);
        free(vin);
        free(vout);
    }

    /* Floats, PROD: near 1, so that rounding depends on the order. */
    float fin[N], fout[N];
    for (int i = 0; i < N; i++)
        fin[i] = 1.0f + (float)val(wrank, i) * 1e-3f;
    CHECK_MPI(MPI_Allreduce(fin, fout, N, MPI_FLOAT, MPI_PROD, comm));
    for (int i = 0; i < N; i++) {
        float acc = 1.0f + (float)val(members[0], i) * 1e-3f;
        for (int r = 1; r < size; r++)
            acc = (1.0f + (float)val(members[r], i) * 1e-3f) * acc;
        if (g_mpich ? fabsf(fout[i] - acc) > 1e-4f * fabsf(acc) : memcmp(&fout[i], &acc, 4)) {
            CHECK(0, "%s: float PROD element %d is %.9g, expected %.9g", name, i, fout[i], acc);
            break;
        }
    }

    /* MINLOC and integers. */
    struct {
        double v;
        int i;
    } pin = {val(wrank, 3), rank}, pout;
    CHECK_MPI(MPI_Allreduce(&pin, &pout, 1, MPI_DOUBLE_INT, MPI_MINLOC, comm));
    int best = 0;
    for (int r = 1; r < size; r++)
        if (val(members[r], 3) < val(members[best], 3))
            best = r;
    CHECK(pout.i == best && pout.v == val(members[best], 3),
          "%s: MINLOC gave (%g, %d), not rank %d", name, pout.v, pout.i, best);
    int iv[3] = {rank + 1, 1 << rank % 30, -rank}, io[3];
    CHECK_MPI(MPI_Allreduce(iv, io, 1, MPI_INT, MPI_SUM, comm));
    CHECK_INT(io[0], size * (size + 1) / 2, "integer SUM");
    CHECK_MPI(MPI_Reduce(iv + 2, io, 1, MPI_INT, MPI_MIN, 0, comm));
    if (rank == 0)
        CHECK_INT(io[0], -(size - 1), "integer MIN at root 0");
    free(members);
    free(in);
    free(out);
    free(want);
}

/* Data movement of small blocks. */
static void moves(MPI_Comm comm, const char *name)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int root = size > 1 ? 1 : 0;
    int b[8];
    for (int i = 0; i < 8; i++)
        b[i] = rank == root ? 100 + i : -1;
    CHECK_MPI(MPI_Bcast(b, 8, MPI_INT, root, comm));
    for (int i = 0; i < 8; i++)
        CHECK(b[i] == 100 + i, "%s: Bcast element %d is %d", name, i, b[i]);
    CHECK_MPI(MPI_Barrier(comm));
    int mine[2] = {rank, 10 * rank}, *all = malloc(sizeof(int) * 2 * (size_t)size);
    int *sb = malloc(sizeof(int) * 2 * (size_t)size);
    for (int i = 0; i < 2 * size; i++)
        all[i] = -1;
    CHECK_MPI(MPI_Gather(mine, 2, MPI_INT, all, 2, MPI_INT, root, comm));
    for (int r = 0; rank == root && r < size; r++)
        CHECK(all[2 * r] == r && all[2 * r + 1] == 10 * r, "%s: Gather block %d is %d %d", name, r,
              all[2 * r], all[2 * r + 1]);
    for (int i = 0; i < 2 * size; i++)
        all[i] = -1;
    CHECK_MPI(MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, comm));
    for (int r = 0; r < size; r++)
        CHECK(all[2 * r] == r && all[2 * r + 1] == 10 * r, "%s: Allgather block %d is %d %d", name,
              r, all[2 * r], all[2 * r + 1]);
    for (int r = 0; r < size; r++) {
        sb[2 * r] = 1000 * rank + r;
        sb[2 * r + 1] = -r;
    }
    int got[2] = {-1, -1};
    CHECK_MPI(MPI_Scatter(sb, 2, MPI_INT, got, 2, MPI_INT, root, comm));
    CHECK(got[0] == 1000 * root + rank && got[1] == -rank, "%s: Scatter gave %d %d", name, got[0],
          got[1]);
    CHECK_MPI(MPI_Alltoall(sb, 2, MPI_INT, all, 2, MPI_INT, comm));
    for (int r = 0; r < size; r++)
        CHECK(all[2 * r] == 1000 * r + rank && all[2 * r + 1] == -rank,
              "%s: Alltoall block from %d is %d %d", name, r, all[2 * r], all[2 * r + 1]);
    free(all);
    free(sb);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "coll_local");
    g_mpich = mtest_is_mpich();
    int rank = mtest_rank_;
    if (argc > 1 && !strcmp(argv[1], "mismatch")) {
        double x = 1, y;
        if (rank == 0)
            MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        else
            MPI_Barrier(MPI_COMM_WORLD);
        fprintf(stderr, "rank %d: the mismatched collective returned\n", rank);
        return mtest_finalize();
    }
    sums(MPI_COMM_WORLD, "world");
    moves(MPI_COMM_WORLD, "world");
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    sums(half, "split");
    moves(half, "split");
    MPI_Comm_free(&half);
    return mtest_finalize();
}
