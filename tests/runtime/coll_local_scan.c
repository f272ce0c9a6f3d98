/* Scans and user-op reductions in the ranks (coll_local.c, coll_local_nb.c):
 * MPI_Scan and MPI_Exscan of 0-40 doubles (bit for bit the left fold in
 * rank order, which every rank recomputes) and of ints in place (Exscan
 * leaves rank 0's buffer alone); a non-commutative user op (composition of
 * affine maps on a struct type with a hole, so that the ranks' packed
 * messages are unpacked for the function) through MPI_Scan, MPI_Exscan,
 * MPI_Reduce to a moving root and MPI_Allreduce; and their nonblocking
 * forms, MPI_Iscan, MPI_Iexscan, MPI_Ireduce and MPI_Iallreduce, seven in
 * flight at once with a blocking MPI_Scan among them, completed by
 * MPI_Waitall, by MPI_Wait in reverse order, by MPI_Testall or by
 * MPI_Waitany; on MPI_COMM_WORLD and on a split communicator.
 * usage: coll_local_scan ROUNDS; prints "PASS coll_local_scan ROUNDS". */
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "complete4.h"

#define MAXN 40

static int g_rank;

static void fail(const char *what, int round, int j)
{
    fprintf(stderr, "rank %d: round %d: %s (element %d)\n", g_rank, round, what, j);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* x -> a * x + b; "f op g" is f then g: (g.a * f.a, g.a * f.b + g.b). */
typedef struct {
    uint64_t a;
    int64_t hole; /* not in the type: never sent */
    uint64_t b;
} affine_t;

static void compose(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const affine_t *f = in;
    affine_t *g = inout;
    for (int i = 0; i < *len; i++) {
        uint64_t a = g[i].a * f[i].a, b = g[i].a * f[i].b + g[i].b;
        g[i].a = a;
        g[i].b = b;
    }
}

static affine_t aff_of(int rank, int i, int j)
{
    return (affine_t){(uint64_t)(2 * rank + 3 + j), -1, (uint64_t)rank * 7 + (uint64_t)(i + j)};
}

static double dbl_of(int rank, int i, int j) { return rank * 1.1 + j * 0.37 + i * 1e-3 + 1e-9; }

/* The left fold over ranks lo..hi of element j. */
static double dbl_fold(int hi, int i, int j)
{
    double acc = dbl_of(0, i, j);
    for (int r = 1; r <= hi; r++)
        acc = dbl_of(r, i, j) + acc;
    return acc;
}

static affine_t aff_fold(int hi, int i, int j)
{
    affine_t acc = aff_of(0, i, j);
    for (int r = 1; r <= hi; r++) {
        affine_t v = aff_of(r, i, j);
        int one = 1;
        compose(&acc, &v, &one, NULL);
        acc = v;
    }
    return acc;
}

static void check_dbl(const double *got, int hi, int i, int n, const char *what)
{
    for (int j = 0; j < n; j++) {
        double want = dbl_fold(hi, i, j);
        if (memcmp(&got[j], &want, sizeof want))
            fail(what, i, j);
    }
}

static void check_aff(const affine_t *got, int hi, int i, int n, const char *what)
{
    for (int j = 0; j < n; j++) {
        affine_t want = aff_fold(hi, i, j);
        if (got[j].a != want.a || got[j].b != want.b)
            fail(what, i, j);
        if (got[j].hole != 77)
            fail("the hole of the type was written", i, j);
    }
}

static void round_on(MPI_Comm comm, MPI_Datatype aff_t, MPI_Op op, int i)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int n = i % (MAXN + 1), na = 1 + i % 5, root = i % size;
    double x[MAXN], y[MAXN], ye[MAXN], ny[MAXN], nye[MAXN];
    affine_t ax[5], ay[5], aye[5], ar[5], aa[5], nay[5], naye[5], nar[5], naa[5];
    for (int j = 0; j < n; j++)
        x[j] = dbl_of(rank, i, j);
    for (int j = 0; j < 5; j++) {
        ax[j] = aff_of(rank, i, j);
        ay[j] = aye[j] = ar[j] = aa[j] = (affine_t){0, 77, 0};
        nay[j] = naye[j] = nar[j] = naa[j] = (affine_t){0, 77, 0};
    }
    for (int j = 0; j < MAXN; j++)
        ye[j] = nye[j] = -5.0;

    /* blocking */
    MPI_Scan(x, y, n, MPI_DOUBLE, MPI_SUM, comm);
    check_dbl(y, rank, i, n, "MPI_Scan of doubles");
    MPI_Exscan(x, ye, n, MPI_DOUBLE, MPI_SUM, comm);
    if (rank > 0)
        check_dbl(ye, rank - 1, i, n, "MPI_Exscan of doubles");
    else
        for (int j = 0; j < n; j++)
            if (ye[j] != -5.0)
                fail("MPI_Exscan wrote rank 0's buffer", i, j);
    int v[3] = {rank + i, 2 * rank, i % 7}, ve[3] = {rank + i, 2 * rank, i % 7};
    MPI_Scan(MPI_IN_PLACE, v, 3, MPI_INT, MPI_MAX, comm);
    if (v[0] != rank + i || v[1] != 2 * rank || v[2] != i % 7)
        fail("MPI_Scan in place", i, 0);
    MPI_Exscan(MPI_IN_PLACE, ve, 3, MPI_INT, MPI_SUM, comm);
    if (rank > 0 && (ve[0] != rank * (rank - 1) / 2 + rank * i || ve[1] != rank * (rank - 1) ||
                     ve[2] != rank * (i % 7)))
        fail("MPI_Exscan in place", i, 0);
    if (rank == 0 && (ve[0] != i || ve[1] != 0))
        fail("MPI_Exscan in place wrote rank 0's buffer", i, 0);
    MPI_Scan(ax, ay, na, aff_t, op, comm);
    check_aff(ay, rank, i, na, "MPI_Scan with a user op");
    MPI_Exscan(ax, aye, na, aff_t, op, comm);
    if (rank > 0)
        check_aff(aye, rank - 1, i, na, "MPI_Exscan with a user op");
    MPI_Reduce(ax, ar, na, aff_t, op, root, comm);
    if (rank == root)
        check_aff(ar, size - 1, i, na, "MPI_Reduce with a user op");
    MPI_Allreduce(ax, aa, na, aff_t, op, comm);
    check_aff(aa, size - 1, i, na, "MPI_Allreduce with a user op");

    /* nonblocking, seven in flight, a blocking scan among them */
    MPI_Request r[7];
    for (int j = 0; j < 5; j++) {
        ay[j] = (affine_t){0, 77, 0};
        ar[j] = (affine_t){0, 77, 0};
    }
    for (int j = 0; j < MAXN; j++)
        nye[j] = -5.0;
    MPI_Iscan(x, ny, n, MPI_DOUBLE, MPI_SUM, comm, &r[0]);
    MPI_Iexscan(x, nye, n, MPI_DOUBLE, MPI_SUM, comm, &r[1]);
    MPI_Iscan(ax, nay, na, aff_t, op, comm, &r[2]);
    MPI_Iexscan(ax, naye, na, aff_t, op, comm, &r[3]);
    MPI_Scan(ax, ay, na, aff_t, op, comm);
    MPI_Ireduce(ax, nar, na, aff_t, op, root, comm, &r[4]);
    MPI_Iallreduce(ax, naa, na, aff_t, op, comm, &r[5]);
    MPI_Iallreduce(MPI_IN_PLACE, v, 3, MPI_INT, MPI_MIN, comm, &r[6]);
    complete4(r, 7, i);
    check_dbl(ny, rank, i, n, "MPI_Iscan of doubles");
    if (rank > 0)
        check_dbl(nye, rank - 1, i, n, "MPI_Iexscan of doubles");
    else
        for (int j = 0; j < n; j++)
            if (nye[j] != -5.0)
                fail("MPI_Iexscan wrote rank 0's buffer", i, j);
    check_aff(nay, rank, i, na, "MPI_Iscan with a user op");
    if (rank > 0)
        check_aff(naye, rank - 1, i, na, "MPI_Iexscan with a user op");
    check_aff(ay, rank, i, na, "MPI_Scan among nonblocking ones");
    if (rank == root)
        check_aff(nar, size - 1, i, na, "MPI_Ireduce with a user op");
    check_aff(naa, size - 1, i, na, "MPI_Iallreduce with a user op");
    if (v[0] != i || v[1] != 0 || v[2] != i % 7)
        fail("MPI_Iallreduce in place", i, 0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size, rounds = argc > 1 ? atoi(argv[1]) : 20;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {offsetof(affine_t, a), offsetof(affine_t, b)};
    MPI_Datatype types[2] = {MPI_UINT64_T, MPI_UINT64_T}, st, aff_t;
    MPI_Type_create_struct(2, bl, disp, types, &st);
    MPI_Type_create_resized(st, 0, sizeof(affine_t), &aff_t);
    MPI_Type_commit(&aff_t);
    MPI_Type_free(&st);
    MPI_Op op;
    MPI_Op_create(compose, 0, &op);
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, size - g_rank, &half);
    for (int i = 0; i < rounds; i++)
        round_on(i % 3 == 2 ? half : MPI_COMM_WORLD, aff_t, op, i);
    MPI_Comm_free(&half);
    MPI_Op_free(&op);
    MPI_Type_free(&aff_t);
    if (g_rank == 0)
        printf("PASS coll_local_scan %d\n", rounds);
    MPI_Finalize();
    return 0;
}
