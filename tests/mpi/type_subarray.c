/*
 * type_subarray: MPI_Type_create_subarray in C and Fortran order, in 2-D and
 * 3-D, used for halo exchanges around a ring of ranks.
 *
 * Each rank holds an array with a halo of width one around an interior of
 * n[0] x n[1] (x n[2]) values.  For every dimension d it sends the two
 * interior faces orthogonal to d to its right and left neighbours and
 * receives their faces into its own halo faces (both sides of the ring use
 * the same types).  Values encode (rank, interior coordinates), so every
 * halo cell can be checked; cells that are in no face (edges, corners) and
 * the interior must be unchanged.  Finally the interiors are gathered to
 * rank 0 with the interior subarray as the send type.
 */
#include "mtest.h"

static int rank, size, right, left;

enum { MAXD = 3 };

typedef struct {
    int nd;
    int order;      /* MPI_ORDER_C or MPI_ORDER_FORTRAN */
    int full[MAXD]; /* sizes with halo */
    size_t total;
} layout_t;

static size_t lin(const layout_t *L, const int *x)
{
    size_t k = 0;
    if (L->order == MPI_ORDER_C)
        for (int d = 0; d < L->nd; d++)
            k = k * (size_t)L->full[d] + (size_t)x[d];
    else
        for (int d = L->nd - 1; d >= 0; d--)
            k = k * (size_t)L->full[d] + (size_t)x[d];
    return k;
}

static double cell(int r, const int *x, int nd)
{
    double v = r * 1e6;
    for (int d = 0; d < nd; d++)
        v += x[d] * (d == 0 ? 1e4 : d == 1 ? 1e2 : 1.0);
    return v;
}

/* Iterate x over the box [lo, lo+len) of L, in L's memory order. */
static int next(const layout_t *L, int *x, const int *lo, const int *len)
{
    for (int i = 0; i < L->nd; i++) {
        int d = L->order == MPI_ORDER_C ? L->nd - 1 - i : i;
        if (++x[d] < lo[d] + len[d])
            return 1;
        x[d] = lo[d];
    }
    return 0;
}

static MPI_Datatype box(const layout_t *L, const int *lo, const int *len)
{
    MPI_Datatype t;
    CHECK_MPI(MPI_Type_create_subarray(L->nd, L->full, len, lo, L->order, MPI_DOUBLE, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    return t;
}

static void run(int nd, const int *n, int order, const char *what)
{
    layout_t L = {nd, order, {0}, 1};
    for (int d = 0; d < nd; d++) {
        L.full[d] = n[d] + 2;
        L.total *= (size_t)L.full[d];
    }
    double *a = malloc(L.total * sizeof(double));
    for (size_t i = 0; i < L.total; i++)
        a[i] = -1.0;
    int x[MAXD], one[MAXD], in[MAXD];
    for (int d = 0; d < nd; d++) {
        one[d] = 1;
        in[d] = n[d];
    }
    memcpy(x, one, sizeof x);
    do
        a[lin(&L, x)] = cell(rank, x, nd);
    while (next(&L, x, one, in));

    /* The interior type has the whole array's extent. */
    MPI_Datatype interior = box(&L, one, in);
    MPI_Aint lb, ext;
    MPI_Type_get_extent(interior, &lb, &ext);
    CHECK_INT(lb, 0, "subarray lb");
    CHECK_INT(ext, (long)(L.total * sizeof(double)), "subarray extent");
    int sz;
    MPI_Type_size(interior, &sz);
    long isz = (long)sizeof(double);
    for (int d = 0; d < nd; d++)
        isz *= n[d];
    CHECK_INT(sz, isz, "subarray size");

    for (int d = 0; d < nd; d++) {
        int lo_send[MAXD], lo_recv[MAXD], len[MAXD];
        memcpy(len, in, sizeof len);
        len[d] = 1;
        /* Face at the high end goes right, arrives at the low halo of the right. */
        memcpy(lo_send, one, sizeof lo_send);
        lo_send[d] = n[d];
        memcpy(lo_recv, one, sizeof lo_recv);
        lo_recv[d] = 0;
        MPI_Datatype s1 = box(&L, lo_send, len), r1 = box(&L, lo_recv, len);
        lo_send[d] = 1;
        lo_recv[d] = n[d] + 1;
        MPI_Datatype s2 = box(&L, lo_send, len), r2 = box(&L, lo_recv, len);
        MPI_Request rq[4];
        CHECK_MPI(MPI_Irecv(a, 1, r1, left, 10 + d, MPI_COMM_WORLD, &rq[0]));
        CHECK_MPI(MPI_Irecv(a, 1, r2, right, 20 + d, MPI_COMM_WORLD, &rq[1]));
        CHECK_MPI(MPI_Isend(a, 1, s1, right, 10 + d, MPI_COMM_WORLD, &rq[2]));
        CHECK_MPI(MPI_Isend(a, 1, s2, left, 20 + d, MPI_COMM_WORLD, &rq[3]));
        CHECK_MPI(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
        MPI_Type_free(&s1);
        MPI_Type_free(&s2);
        MPI_Type_free(&r1);
        MPI_Type_free(&r2);
    }

    /* Check every cell. */
    int zero[MAXD] = {0, 0, 0}, bad = 0;
    memset(x, 0, sizeof x);
    do {
        int nhalo = 0, hd = -1;
        for (int d = 0; d < nd; d++)
            if (x[d] == 0 || x[d] == n[d] + 1) {
                nhalo++;
                hd = d;
            }
        double want;
        if (nhalo == 0) {
            want = cell(rank, x, nd);
        } else if (nhalo == 1) {
            int y[MAXD];
            memcpy(y, x, sizeof y);
            int from = x[hd] == 0 ? left : right;
            y[hd] = x[hd] == 0 ? n[hd] : 1;
            want = cell(from, y, nd);
        } else {
            want = -1.0;
        }
        double got = a[lin(&L, x)];
        if (got != want && bad++ < 5)
            CHECK(0, "%s: cell (%d,%d,%d) = %.0f, expected %.0f", what, x[0], nd > 1 ? x[1] : 0,
                  nd > 2 ? x[2] : 0, got, want);
    } while (next(&L, x, zero, L.full));

    /* Gather the interiors, packed, at rank 0. */
    int ni = (int)(isz / (long)sizeof(double));
    double *g = rank == 0 ? malloc((size_t)size * (size_t)ni * sizeof(double)) : NULL;
    CHECK_MPI(MPI_Gather(a, 1, interior, g, ni, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    if (rank == 0) {
        bad = 0;
        for (int r = 0; r < size && !bad; r++) {
            int k = 0;
            memcpy(x, one, sizeof x);
            do {
                /* The packed order is the array order of the interior. */
                double want = cell(r, x, nd);
                if (g[(size_t)r * ni + (size_t)k] != want && bad++ < 3)
                    CHECK(0, "%s: gathered interior of rank %d item %d = %.0f, expected %.0f", what,
                          r, k, g[(size_t)r * ni + (size_t)k], want);
                k++;
            } while (next(&L, x, one, in));
        }
    }
    free(g);
    MPI_Type_free(&interior);
    free(a);
}

/* Packed order of a Fortran subarray is Fortran order: check with a 2x3 box. */
static void fortran_order(void)
{
    int sizes[2] = {3, 4}, sub[2] = {2, 3}, start[2] = {1, 1};
    MPI_Datatype t;
    CHECK_MPI(MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_FORTRAN, MPI_INT, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    int a[12], packed[6], pos = 0;
    for (int i = 0; i < 12; i++)
        a[i] = i; /* a(i,j) at i + 3j */
    CHECK_MPI(MPI_Pack(a, 1, t, packed, sizeof packed, &pos, MPI_COMM_WORLD));
    int want[6] = {4, 5, 7, 8, 10, 11};
    for (int i = 0; i < 6; i++)
        CHECK_INT(packed[i], want[i], "Fortran subarray packed order");
    MPI_Type_free(&t);
    CHECK_MPI(MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, MPI_INT, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    pos = 0;
    CHECK_MPI(MPI_Pack(a, 1, t, packed, sizeof packed, &pos, MPI_COMM_WORLD));
    int wantc[6] = {5, 6, 7, 9, 10, 11}; /* a[i][j] at 4i + j */
    for (int i = 0; i < 6; i++)
        CHECK_INT(packed[i], wantc[i], "C subarray packed order");
    MPI_Type_free(&t);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "type_subarray");
    rank = mtest_rank_;
    size = mtest_size_;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    fortran_order();
    int n2[2] = {5, 7}, n3[3] = {4, 3, 5};
    run(2, n2, MPI_ORDER_C, "2-D C");
    run(2, n2, MPI_ORDER_FORTRAN, "2-D Fortran");
    run(3, n3, MPI_ORDER_C, "3-D C");
    run(3, n3, MPI_ORDER_FORTRAN, "3-D Fortran");
    return mtest_finalize();
}
