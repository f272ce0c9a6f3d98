/*
 * type_darray: MPI_Type_create_darray (MPI 3.1 4.1.4).
 *
 * For several global arrays, distributions (block, block with an explicit
 * size, cyclic, cyclic(k), none) and both orders, over the process grid
 * MPI_Dims_create gives for the job's size:
 *  1. every rank's type selects exactly the elements an independent
 *     ownership computation gives it, in array order (packing a global
 *     array whose elements hold their own linear index);
 *  2. MPI_Type_size is (owned elements) x sizeof(int), the extent is the
 *     whole global array, and the pieces of all ranks add up to it;
 *  3. envelope and contents give back the combiner and arguments;
 *  4. communication: every rank sends its piece contiguously and rank 0
 *     receives each piece with that rank's darray type into one global
 *     array, which must then hold every index exactly once;
 *  5. bad arguments (psizes not matching size, a block too small, NONE on
 *     more than one process) are errors.
 */
#include "mtest.h"

static int rank, size;

/* Does process coordinate p (of P) own global index x (of g)? */
static int owns(int x, int g, int distrib, int darg, int P, int p)
{
    if (distrib == MPI_DISTRIBUTE_NONE)
        return 1;
    if (distrib == MPI_DISTRIBUTE_BLOCK) {
        int b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (g + P - 1) / P : darg;
        return x / b == p;
    }
    int k = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    return (x / k) % P == p;
}

/* The linear indices rank r owns, in array order; returns how many. */
static int expected(int r, int nd, const int *gs, const int *dist, const int *darg, const int *ps,
                    int order, int *out)
{
    int coords[3], idx[3] = {0, 0, 0}, total = 1, n = 0, i, k;
    for (i = nd - 1, k = r; i >= 0; i--) {
        coords[i] = k % ps[i];
        k /= ps[i];
    }
    for (i = 0; i < nd; i++)
        total *= gs[i];
    for (int lin = 0; lin < total; lin++) {
        /* idx from the linear position in memory order */
        int rem = lin;
        if (order == MPI_ORDER_C)
            for (i = nd - 1; i >= 0; i--) {
                idx[i] = rem % gs[i];
                rem /= gs[i];
            }
        else
            for (i = 0; i < nd; i++) {
                idx[i] = rem % gs[i];
                rem /= gs[i];
            }
        int mine = 1;
        for (i = 0; i < nd && mine; i++)
            mine = owns(idx[i], gs[i], dist[i], darg[i], ps[i], coords[i]);
        if (mine)
            out[n++] = lin;
    }
    return n;
}

static void one_case(int nd, const int *gs, const int *dist, const int *darg, int order)
{
    int ps[3] = {0, 0, 0}, i, total = 1;
    /* dimensions distributed NONE get one process */
    int nfree = 0;
    for (i = 0; i < nd; i++) {
        if (dist[i] == MPI_DISTRIBUTE_NONE)
            ps[i] = 1;
        else
            nfree++;
        total *= gs[i];
    }
    if (!nfree)
        return;
    MPI_Dims_create(size, nd, ps);
    /* explicit block sizes must cover the dimension */
    for (i = 0; i < nd; i++)
        if (dist[i] == MPI_DISTRIBUTE_BLOCK && darg[i] != MPI_DISTRIBUTE_DFLT_DARG &&
            darg[i] * ps[i] < gs[i])
            return;
    int *glob = malloc(sizeof(int) * (size_t)total), *want = malloc(sizeof(int) * (size_t)total);
    int *got = malloc(sizeof(int) * (size_t)total);
    for (i = 0; i < total; i++)
        glob[i] = i;
    MPI_Datatype t;
    CHECK_MPI(MPI_Type_create_darray(size, rank, nd, gs, dist, darg, ps, order, MPI_INT, &t));
    MPI_Type_commit(&t);
    int n = expected(rank, nd, gs, dist, darg, ps, order, want);
    int tsize = -1;
    MPI_Aint lb = -1, ext = -1;
    MPI_Type_size(t, &tsize);
    MPI_Type_get_extent(t, &lb, &ext);
    CHECK(tsize == n * (int)sizeof(int), "case %dD order %d: size %d, expected %d", nd, order,
          tsize, n * (int)sizeof(int));
    CHECK(lb == 0 && ext == (MPI_Aint)total * (MPI_Aint)sizeof(int),
          "case %dD order %d: lb %ld extent %ld", nd, order, (long)lb, (long)ext);
    int psz = 0, pos = 0;
    MPI_Pack_size(1, t, MPI_COMM_WORLD, &psz);
    char *pk = malloc((size_t)psz + 1);
    MPI_Pack(glob, 1, t, pk, psz, &pos, MPI_COMM_WORLD);
    CHECK_INT(pos, n * (int)sizeof(int), "packed bytes");
    memcpy(got, pk, (size_t)n * sizeof(int));
    int bad = 0;
    for (i = 0; i < n && bad < 3; i++)
        if (got[i] != want[i]) {
            CHECK(0, "case %dD order %d dist %d,%d: element %d is index %d, expected %d", nd, order,
                  dist[0], dist[1], i, got[i], want[i]);
            bad++;
        }
    int sum = 0;
    MPI_Allreduce(&n, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK_INT(sum, total, "elements over all ranks");

    /* envelope and contents */
    int ni, na, ndt, comb;
    MPI_Type_get_envelope(t, &ni, &na, &ndt, &comb);
    CHECK_INT(comb, MPI_COMBINER_DARRAY, "combiner");
    CHECK(ni == 4 * nd + 4 && na == 0 && ndt == 1, "envelope %d %d %d", ni, na, ndt);
    if (ni == 4 * nd + 4 && ndt == 1) {
        int ints[16];
        MPI_Aint ai[1];
        MPI_Datatype dts[1];
        MPI_Type_get_contents(t, ni, na, ndt, ints, ai, dts);
        CHECK(ints[0] == size && ints[1] == rank && ints[2] == nd && ints[3 + 4 * nd] == order,
              "contents: size %d rank %d ndims %d order %d", ints[0], ints[1], ints[2],
              ints[3 + 4 * nd]);
        for (i = 0; i < nd; i++)
            CHECK(ints[3 + i] == gs[i] && ints[3 + nd + i] == dist[i] &&
                      ints[3 + 2 * nd + i] == darg[i] && ints[3 + 3 * nd + i] == ps[i],
                  "contents of dimension %d", i);
        CHECK(dts[0] == MPI_INT, "contents type %d", (int)dts[0]);
    }

    /* rank 0 assembles the global array from everyone's pieces */
    if (rank == 0) {
        int *asm_ = malloc(sizeof(int) * (size_t)total);
        for (i = 0; i < total; i++)
            asm_[i] = -1;
        MPI_Request *rq = malloc(sizeof(MPI_Request) * (size_t)size);
        MPI_Datatype *rt = malloc(sizeof(MPI_Datatype) * (size_t)size);
        for (int r = 0; r < size; r++) {
            MPI_Type_create_darray(size, r, nd, gs, dist, darg, ps, order, MPI_INT, &rt[r]);
            MPI_Type_commit(&rt[r]);
            MPI_Irecv(asm_, 1, rt[r], r, 7, MPI_COMM_WORLD, &rq[r]);
        }
        MPI_Send(got, n, MPI_INT, 0, 7, MPI_COMM_WORLD);
        MPI_Waitall(size, rq, MPI_STATUSES_IGNORE);
        bad = 0;
        for (i = 0; i < total && bad < 3; i++)
            if (asm_[i] != i) {
                CHECK(0, "assembled element %d = %d", i, asm_[i]);
                bad++;
            }
        for (int r = 0; r < size; r++)
            MPI_Type_free(&rt[r]);
        free(rq);
        free(rt);
        free(asm_);
    } else {
        MPI_Send(got, n, MPI_INT, 0, 7, MPI_COMM_WORLD);
    }
    MPI_Type_free(&t);
    free(pk);
    free(glob);
    free(want);
    free(got);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "type_darray");
    rank = mtest_rank_;
    size = mtest_size_;
    const int B = MPI_DISTRIBUTE_BLOCK, C = MPI_DISTRIBUTE_CYCLIC, N = MPI_DISTRIBUTE_NONE;
    const int D = MPI_DISTRIBUTE_DFLT_DARG;
    int orders[2] = {MPI_ORDER_C, MPI_ORDER_FORTRAN};
    for (int o = 0; o < 2; o++) {
        int g2[2] = {7, 5}, g3[3] = {4, 3, 5};
        int d1[2] = {B, B}, a1[2] = {D, D};
        int d2[2] = {C, B}, a2[2] = {D, D};
        int d3[2] = {C, C}, a3[2] = {2, 3};
        int d4[2] = {B, N}, a4[2] = {4, D};
        int d5[2] = {N, C}, a5[2] = {D, 2};
        int d6[3] = {B, C, C}, a6[3] = {D, D, 2};
        int d7[2] = {B, B}, a7[2] = {7, 5};
        one_case(2, g2, d1, a1, orders[o]);
        one_case(2, g2, d2, a2, orders[o]);
        one_case(2, g2, d3, a3, orders[o]);
        one_case(2, g2, d4, a4, orders[o]);
        one_case(2, g2, d5, a5, orders[o]);
        one_case(3, g3, d6, a6, orders[o]);
        one_case(2, g2, d7, a7, orders[o]);
        int g1[1] = {23}, dd[1] = {C}, ad[1] = {3};
        one_case(1, g1, dd, ad, orders[o]);
        dd[0] = B;
        ad[0] = D;
        one_case(1, g1, dd, ad, orders[o]);
    }

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    {
        int gs[2] = {8, 8}, dist[2] = {B, B}, darg[2] = {D, D}, ps[2] = {size + 1, 1}, rc;
        MPI_Datatype t;
        /* MPICH 4.0 divides by zero on this one */
        if (!mtest_is_mpich()) {
            rc =
                MPI_Type_create_darray(size, rank, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t);
            CHECK(rc != MPI_SUCCESS, "psizes whose product is not size accepted");
        }
        ps[0] = size;
        darg[0] = 1;
        if (size * 1 < 8) {
            rc =
                MPI_Type_create_darray(size, rank, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t);
            CHECK(rc != MPI_SUCCESS, "blocks of 1 over %d processes for 8 elements accepted", size);
        }
        if (size > 1 && !mtest_is_mpich()) { /* MPICH 4.0 accepts it */
            dist[0] = N;
            darg[0] = D;
            rc =
                MPI_Type_create_darray(size, rank, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t);
            CHECK(rc != MPI_SUCCESS, "MPI_DISTRIBUTE_NONE over %d processes accepted", size);
        }
    }
    return mtest_finalize();
}
