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
 * Then large data (large()): where every member runs at once, BDMPI moves
 * it in the ranks too, each block read once from its sender's memory, and
 * folds reductions as a reduce-scatter of segments: Allreduce, Reduce and
 * Reduce_scatter(_block) of 2 MiB of doubles, bit for bit the rank-order
 * fold, also in place and through a strided type; Bcast of 1 MiB (also
 * strided); Gather, Allgather (in place too), Scatter, Alltoall (in place
 * too) of 256 KiB blocks; the v forms with blocks of 0 bytes, a few bytes
 * and hundreds of KiB; Alltoallw with a strided type; and a
 * non-commutative user op over 1 MiB.
 *
 * With the argument "mismatch" (BDMPI only, a runtime test): rank 0 calls
 * MPI_Allreduce where the others call MPI_Barrier; the job must end with a
 * collective-mismatch error.  "mismatch_large": the same between a large
 * MPI_Allreduce and a large MPI_Bcast.  "mismatch_scan": rank 0 calls
 * MPI_Scan where the others call MPI_Exscan.
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

/* ---------------------------------------------------------------- large data */

#define LD (256 * 1024) /* doubles: 2 MiB */
#define LB (64 * 1024)  /* ints per block: 256 KiB */

/* The int rank src sends rank dst at position i. */
static int pat(int src, int dst, int i)
{
    return (src * 7919 + dst * 131 + i * 3 + 1) & 0x3fffffff;
}

static void check_i(const int *got, int n, int src, int dst, int i0, const char *what, int r)
{
    for (int i = 0; i < n; i++)
        if (got[i] != pat(src, dst, i0 + i)) {
            CHECK(0, "%s: block of rank %d, element %d is %d, expected %d", what, r, i, got[i],
                  pat(src, dst, i0 + i));
            return;
        }
}

static void large_sums(MPI_Comm comm, const char *name, const int *members)
{
    int rank, size, wrank;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    double *in = malloc(sizeof(double) * LD), *out = malloc(sizeof(double) * LD);
    double *want = malloc(sizeof(double) * LD);
    char what[128];
    for (int i = 0; i < LD; i++)
        in[i] = val(wrank, i);
    sum_expected(want, LD, 0, members, size);
    CHECK_MPI(MPI_Allreduce(in, out, LD, MPI_DOUBLE, MPI_SUM, comm));
    snprintf(what, sizeof what, "%s: Allreduce of %d doubles", name, LD);
    check_d(out, want, LD, what);
    /* An odd count (segments of unequal sizes), in place. */
    memcpy(out, in, sizeof(double) * LD);
    CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, out, LD - 3, MPI_DOUBLE, MPI_SUM, comm));
    snprintf(what, sizeof what, "%s: Allreduce in place of %d doubles", name, LD - 3);
    check_d(out, want, LD - 3, what);
    CHECK(out[LD - 1] == in[LD - 1], "%s: Allreduce in place wrote past its count", name);
    /* Reduce to the last rank (not in place: MPICH 4.0 crashes on a large
     * in-place Reduce at a root other than 0). */
    int root = size - 1;
    for (int i = 0; i < LD; i++)
        out[i] = -1.0;
    CHECK_MPI(MPI_Reduce(in, out, LD, MPI_DOUBLE, MPI_SUM, root, comm));
    snprintf(what, sizeof what, "%s: large Reduce at root %d", name, root);
    if (rank == root)
        check_d(out, want, LD, what);
    if (!g_mpich && rank == root) {
        memcpy(out, in, sizeof(double) * LD);
        CHECK_MPI(MPI_Reduce(MPI_IN_PLACE, out, LD, MPI_DOUBLE, MPI_SUM, root, comm));
        snprintf(what, sizeof what, "%s: large Reduce in place at root %d", name, root);
        check_d(out, want, LD, what);
    } else if (!g_mpich) {
        CHECK_MPI(MPI_Reduce(in, NULL, LD, MPI_DOUBLE, MPI_SUM, root, comm));
    }
    /* Reduce_scatter_block, and Reduce_scatter with uneven blocks (one empty). */
    int blk = LD / size;
    CHECK_MPI(MPI_Reduce_scatter_block(in, out, blk, MPI_DOUBLE, MPI_SUM, comm));
    snprintf(what, sizeof what, "%s: Reduce_scatter_block", name);
    check_d(out, want + (size_t)rank * blk, blk, what);
    int *counts = malloc(sizeof(int) * (size_t)size), off = 0, mine = 0;
    for (int r = 0; r < size; r++) {
        counts[r] = r == 1 ? 0 : (LD / size) - 5 * r;
        if (r < rank)
            off += counts[r];
    }
    mine = counts[rank];
    memcpy(out, in, sizeof(double) * LD);
    CHECK_MPI(MPI_Reduce_scatter(MPI_IN_PLACE, out, counts, MPI_DOUBLE, MPI_SUM, comm));
    snprintf(what, sizeof what, "%s: Reduce_scatter in place", name);
    check_d(out, want + off, mine, what);
    free(counts);
    /* A strided type (BDMPI only: MPICH refuses predefined ops on derived types). */
    if (!g_mpich) {
        MPI_Datatype vec;
        MPI_Type_vector(2, 1, 3, MPI_DOUBLE, &vec);
        MPI_Type_commit(&vec);
        MPI_Aint lb, ext;
        MPI_Type_get_extent(vec, &lb, &ext);
        int stride = (int)(ext / (MPI_Aint)sizeof(double)), k = LD / 8, span = k * stride;
        double *vin = malloc(sizeof(double) * (size_t)span),
               *vout = malloc(sizeof(double) * (size_t)span);
        for (int i = 0; i < span; i++)
            vin[i] = vout[i] = -1.0;
        for (int e = 0, j = 0; e < k; e++)
            for (int b = 0; b < 2; b++, j++)
                vin[e * stride + 3 * b] = val(wrank, j);
        CHECK_MPI(MPI_Allreduce(vin, vout, k, vec, MPI_SUM, comm));
        int bad = 0;
        for (int e = 0, j = 0; e < k && !bad; e++)
            for (int b = 0; b < 2; b++, j++) {
                double g = vout[e * stride + 3 * b];
                if (memcmp(&g, &want[j], sizeof g))
                    bad = 1;
                vout[e * stride + 3 * b] = -1.0;
            }
        CHECK(!bad, "%s: large strided Allreduce differs from the rank-order fold", name);
        for (int i = 0; i < span && !bad; i++)
            if (vout[i] != -1.0) {
                CHECK(0, "%s: large strided Allreduce wrote into a gap at %d", name, i);
                break;
            }
        MPI_Type_free(&vec);
        free(vin);
        free(vout);
    }
    free(in);
    free(out);
    free(want);
}

/* A non-commutative op: 2x2 integer matrices multiplied mod 2^31 - 1,
 * inout = in * inout (MPI: the result is v0 * v1 * ... in rank order). */
static void matmul(void *invec, void *inoutvec, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const long long *a = invec;
    long long *b = inoutvec;
    const long long m = 2147483647;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        long long c0 = (a[0] * b[0] + a[1] * b[2]) % m, c1 = (a[0] * b[1] + a[1] * b[3]) % m;
        long long c2 = (a[2] * b[0] + a[3] * b[2]) % m, c3 = (a[2] * b[1] + a[3] * b[3]) % m;
        b[0] = c0;
        b[1] = c1;
        b[2] = c2;
        b[3] = c3;
    }
}

static void mat_of(long long *m, int r, int k)
{
    m[0] = r + 2;
    m[1] = k % 97 + 1;
    m[2] = (r * 5 + k) % 11;
    m[3] = 1;
}

static void large_user(MPI_Comm comm, const char *name, const int *members)
{
    int size, wrank;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    int k = 32 * 1024; /* 32 bytes each: 1 MiB */
    MPI_Datatype mt;
    MPI_Type_contiguous(4, MPI_LONG_LONG, &mt);
    MPI_Type_commit(&mt);
    MPI_Op op;
    MPI_Op_create(matmul, 0, &op);
    long long *in = malloc(32 * (size_t)k), *out = malloc(32 * (size_t)k);
    for (int i = 0; i < k; i++)
        mat_of(in + 4 * i, wrank, i);
    CHECK_MPI(MPI_Allreduce(in, out, k, mt, op, comm));
    int bad = -1;
    for (int i = 0; i < k && bad < 0; i++) {
        long long acc[4], v[4];
        mat_of(acc, members[size - 1], i);
        for (int r = size - 2; r >= 0; r--) {
            int one = 1;
            mat_of(v, members[r], i);
            matmul(v, acc, &one, NULL);
        }
        if (memcmp(acc, out + 4 * i, sizeof acc))
            bad = i;
    }
    CHECK(bad < 0, "%s: non-commutative user-op Allreduce of 1 MiB: element %d is wrong", name,
          bad);
    MPI_Op_free(&op);
    MPI_Type_free(&mt);
    free(in);
    free(out);
}

static void large_moves(MPI_Comm comm, const char *name)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int root = size > 1 ? 1 : 0;
    char what[128];
    size_t nb = (size_t)LB * (size_t)size;
    int *sb = malloc(sizeof(int) * nb), *rb = malloc(sizeof(int) * nb);
    /* Bcast of 1 MiB, contiguous and strided (every other int of 2 MiB). */
    int nbc = 256 * 1024;
    int *bb = malloc(sizeof(int) * 2 * (size_t)nbc);
    for (int i = 0; i < nbc; i++)
        bb[i] = rank == root ? pat(root, 0, i) : -1;
    CHECK_MPI(MPI_Bcast(bb, nbc, MPI_INT, root, comm));
    snprintf(what, sizeof what, "%s: Bcast of 1 MiB", name);
    check_i(bb, nbc, root, 0, 0, what, root);
    MPI_Datatype every2;
    MPI_Type_vector(nbc, 1, 2, MPI_INT, &every2);
    MPI_Type_commit(&every2);
    for (int i = 0; i < 2 * nbc; i++)
        bb[i] = rank == root && i % 2 == 0 ? pat(root, 1, i / 2) : -1;
    CHECK_MPI(MPI_Bcast(bb, 1, every2, root, comm));
    for (int i = 0; i < 2 * nbc; i++)
        if (bb[i] != (i % 2 ? -1 : pat(root, 1, i / 2))) {
            CHECK(0, "%s: strided Bcast: int %d is %d", name, i, bb[i]);
            break;
        }
    MPI_Type_free(&every2);
    free(bb);
    /* Gather and Allgather of 256 KiB blocks; Allgather in place. */
    for (int i = 0; i < LB; i++)
        sb[i] = pat(rank, 0, i);
    for (size_t i = 0; i < nb; i++)
        rb[i] = -1;
    CHECK_MPI(MPI_Gather(sb, LB, MPI_INT, rb, LB, MPI_INT, root, comm));
    snprintf(what, sizeof what, "%s: large Gather", name);
    for (int r = 0; rank == root && r < size; r++)
        check_i(rb + (size_t)r * LB, LB, r, 0, 0, what, r);
    CHECK_MPI(MPI_Allgather(sb, LB, MPI_INT, rb, LB, MPI_INT, comm));
    snprintf(what, sizeof what, "%s: large Allgather", name);
    for (int r = 0; r < size; r++)
        check_i(rb + (size_t)r * LB, LB, r, 0, 0, what, r);
    for (size_t i = 0; i < nb; i++)
        rb[i] = i / LB == (size_t)rank ? pat(rank, 0, (int)(i % LB)) : -1;
    CHECK_MPI(MPI_Allgather(MPI_IN_PLACE, 0, MPI_INT, rb, LB, MPI_INT, comm));
    snprintf(what, sizeof what, "%s: large Allgather in place", name);
    for (int r = 0; r < size; r++)
        check_i(rb + (size_t)r * LB, LB, r, 0, 0, what, r);
    /* Scatter and Alltoall: block r for rank r; Alltoall in place. */
    for (int r = 0; r < size; r++)
        for (int i = 0; i < LB; i++)
            sb[(size_t)r * LB + i] = pat(rank, r, i);
    CHECK_MPI(MPI_Scatter(sb, LB, MPI_INT, rb, LB, MPI_INT, root, comm));
    snprintf(what, sizeof what, "%s: large Scatter", name);
    check_i(rb, LB, root, rank, 0, what, root);
    CHECK_MPI(MPI_Alltoall(sb, LB, MPI_INT, rb, LB, MPI_INT, comm));
    snprintf(what, sizeof what, "%s: large Alltoall", name);
    for (int r = 0; r < size; r++)
        check_i(rb + (size_t)r * LB, LB, r, rank, 0, what, r);
    memcpy(rb, sb, sizeof(int) * nb);
    CHECK_MPI(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_INT, rb, LB, MPI_INT, comm));
    snprintf(what, sizeof what, "%s: large Alltoall in place", name);
    for (int r = 0; r < size; r++)
        check_i(rb + (size_t)r * LB, LB, r, rank, 0, what, r);
        /* v forms: rank r's block to d is cnt(r, d) ints: 0, a few, or large. */
#define CNT(r, d) (((r) + (d)) % 3 == 0 ? 0 : ((r) + (d)) % 3 == 1 ? 5 + (r) : LB - 7 * (d))
    int *sc = malloc(sizeof(int) * (size_t)size), *sd = malloc(sizeof(int) * (size_t)size);
    int *rc = malloc(sizeof(int) * (size_t)size), *rd = malloc(sizeof(int) * (size_t)size);
    for (int r = 0, so = 0, ro = 0; r < size; r++) {
        sc[r] = CNT(rank, r);
        sd[r] = so;
        so += sc[r] + 3;
        rc[r] = CNT(r, rank);
        rd[r] = ro;
        ro += rc[r] + 2;
    }
    for (int r = 0; r < size; r++)
        for (int i = 0; i < sc[r]; i++)
            sb[sd[r] + i] = pat(rank, r, i);
    for (size_t i = 0; i < nb; i++)
        rb[i] = -1;
    CHECK_MPI(MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, comm));
    snprintf(what, sizeof what, "%s: Alltoallv", name);
    for (int r = 0; r < size; r++) {
        check_i(rb + rd[r], rc[r], r, rank, 0, what, r);
        CHECK(rb[rd[r] + rc[r]] == -1, "%s: Alltoallv wrote past block %d", name, r);
    }
    /* Gatherv, Scatterv, Allgatherv: rank r's block is CNT(r, root) ints. */
    for (int r = 0, o = 0; r < size; r++) {
        rc[r] = CNT(r, root);
        rd[r] = o;
        o += rc[r] + 1;
    }
    for (int i = 0; i < rc[rank]; i++)
        sb[i] = pat(rank, root, i);
    for (size_t i = 0; i < nb; i++)
        rb[i] = -1;
    CHECK_MPI(MPI_Gatherv(sb, rc[rank], MPI_INT, rb, rc, rd, MPI_INT, root, comm));
    snprintf(what, sizeof what, "%s: Gatherv", name);
    for (int r = 0; rank == root && r < size; r++)
        check_i(rb + rd[r], rc[r], r, root, 0, what, r);
    CHECK_MPI(MPI_Allgatherv(sb, rc[rank], MPI_INT, rb, rc, rd, MPI_INT, comm));
    snprintf(what, sizeof what, "%s: Allgatherv", name);
    for (int r = 0; r < size; r++)
        check_i(rb + rd[r], rc[r], r, root, 0, what, r);
    if (rank == root)
        for (int r = 0; r < size; r++)
            for (int i = 0; i < rc[r]; i++)
                sb[rd[r] + i] = pat(root, r, i + 11);
    int *got = malloc(sizeof(int) * (size_t)LB);
    CHECK_MPI(MPI_Scatterv(sb, rc, rd, MPI_INT, got, rc[rank], MPI_INT, root, comm));
    snprintf(what, sizeof what, "%s: Scatterv", name);
    check_i(got, rc[rank], root, rank, 11, what, root);
    /* Alltoallw: each block sent as its ints, received through a type that
     * puts them 2 apart. */
    MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * (size_t)size),
                 *rt = malloc(sizeof(MPI_Datatype) * (size_t)size), spread;
    MPI_Type_vector(LB / 4, 1, 2, MPI_INT, &spread);
    MPI_Type_commit(&spread);
    for (int r = 0; r < size; r++) {
        st[r] = MPI_INT;
        rt[r] = spread;
        sc[r] = LB / 4;
        sd[r] = (int)(sizeof(int) * (size_t)r * LB);
        rc[r] = 1;
        rd[r] = (int)(sizeof(int) * (size_t)r * (LB / 2));
    }
    for (int r = 0; r < size; r++)
        for (int i = 0; i < LB; i++)
            sb[(size_t)r * LB + i] = pat(rank, r, i);
    for (size_t i = 0; i < nb; i++)
        rb[i] = -1;
    CHECK_MPI(MPI_Alltoallw(sb, sc, sd, st, rb, rc, rd, rt, comm));
    for (int r = 0; r < size; r++) {
        int bad = -1;
        for (int i = 0; i < LB / 2 && bad < 0; i++) {
            int g = rb[(size_t)r * (LB / 2) + i];
            if (g != (i % 2 ? -1 : pat(r, rank, i / 2)))
                bad = i;
        }
        CHECK(bad < 0, "%s: Alltoallw block from %d: int %d is wrong", name, r, bad);
    }
    MPI_Type_free(&spread);
    free(st);
    free(rt);
    free(got);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(sb);
    free(rb);
}

static void large(MPI_Comm comm, const char *name)
{
    int size, wrank;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    int *members = malloc(sizeof(int) * (size_t)size);
    MPI_Allgather(&wrank, 1, MPI_INT, members, 1, MPI_INT, comm);
    large_sums(comm, name, members);
    large_user(comm, name, members);
    large_moves(comm, name);
    free(members);
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
    if (argc > 1 && !strcmp(argv[1], "mismatch_scan")) {
        int x = 1, y = 0;
        if (rank == 0)
            MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        else
            MPI_Exscan(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        fprintf(stderr, "rank %d: the mismatched collective returned\n", rank);
        return mtest_finalize();
    }
    if (argc > 1 && !strcmp(argv[1], "mismatch_large")) {
        /* The same with large data: a 2 MiB Allreduce against a 1 MiB Bcast. */
        double *x = calloc(LD, sizeof(double)), *y = calloc(LD, sizeof(double));
        if (rank == 0)
            MPI_Allreduce(x, y, LD, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        else
            MPI_Bcast(x, LD / 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        fprintf(stderr, "rank %d: the mismatched collective returned\n", rank);
        free(x);
        free(y);
        return mtest_finalize();
    }
    sums(MPI_COMM_WORLD, "world");
    moves(MPI_COMM_WORLD, "world");
    large(MPI_COMM_WORLD, "world");
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    sums(half, "split");
    moves(half, "split");
    large(half, "split");
    MPI_Comm_free(&half);
    return mtest_finalize();
}
