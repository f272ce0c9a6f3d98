/*
 * type_reduce: reductions on derived datatypes.
 *
 *  - predefined ops on contiguous and vector types of MPI_DOUBLE / MPI_INT:
 *    Allreduce (also in place), Reduce, Scan, Exscan, Reduce_scatter_block,
 *    Reduce_local; the gaps of vector receive buffers stay untouched.  MPI
 *    3.1 defines predefined ops on such types only for MPI_Accumulate
 *    (11.3.4), not for collective reductions (MPICH rejects them), so this
 *    part is BDMPI's extension and only runs against BDMPI's mpi.h;
 *  - a user op on a struct type: the function is called with the derived
 *    datatype and buffers laid out as that type;
 *  - a non-commutative user op (2x2 matrix product modulo a prime) on a
 *    resized contiguous type, whose order must be rank order.
 */
#include "mtest.h"

static int rank, size;

static double dv(int r, int i) { return (double)(r + 1) * 0.5 + i; }

static void __attribute__((unused)) test_predefined(void)
{
    MPI_Datatype c4, v3;
    MPI_Type_contiguous(4, MPI_DOUBLE, &c4);
    MPI_Type_commit(&c4);
    MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &v3); /* doubles 0,2,4; extent 5 */
    MPI_Type_commit(&v3);
    double sumr = 0.0; /* sum over ranks of (r+1)*0.5 */
    for (int r = 0; r < size; r++)
        sumr += (r + 1) * 0.5;

    double a[12], b[12];
    for (int i = 0; i < 12; i++)
        a[i] = dv(rank, i);
    CHECK_MPI(MPI_Allreduce(a, b, 3, c4, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < 12; i++)
        CHECK(b[i] == sumr + (double)size * i, "allreduce contiguous sum b[%d] = %g", i, b[i]);

    /* Vector, MPI_MAX, to root size-1; gaps of the result stay. */
    double x[10], y[10];
    for (int i = 0; i < 10; i++) {
        x[i] = dv(rank, i);
        y[i] = -1.0;
    }
    int root = size - 1;
    CHECK_MPI(MPI_Reduce(x, y, 2, v3, MPI_MAX, root, MPI_COMM_WORLD));
    if (rank == root)
        for (int i = 0; i < 10; i++) {
            int in = (i % 5) % 2 == 0;
            double want = in ? dv(size - 1, i) : -1.0;
            CHECK(y[i] == want, "reduce vector max y[%d] = %g, expected %g", i, y[i], want);
        }

    /* In place, MPI_MIN over the vector; gaps keep this rank's values. */
    for (int i = 0; i < 10; i++)
        x[i] = dv(rank, i);
    CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, x, 2, v3, MPI_MIN, MPI_COMM_WORLD));
    for (int i = 0; i < 10; i++) {
        int in = (i % 5) % 2 == 0;
        double want = in ? dv(0, i) : dv(rank, i);
        CHECK(x[i] == want, "allreduce in place vector min x[%d] = %g, expected %g", i, x[i], want);
    }

    /* Scan and Exscan on a contiguous of ints. */
    MPI_Datatype i3;
    MPI_Type_contiguous(3, MPI_INT, &i3);
    MPI_Type_commit(&i3);
    int s[6], sc[6], ex[6];
    for (int i = 0; i < 6; i++) {
        s[i] = rank + i;
        ex[i] = -7;
    }
    CHECK_MPI(MPI_Scan(s, sc, 2, i3, MPI_SUM, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Exscan(s, ex, 2, i3, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < 6; i++) {
        int inc = rank * (rank + 1) / 2 + (rank + 1) * i;
        CHECK_INT(sc[i], inc, "scan contiguous");
        if (rank > 0)
            CHECK_INT(ex[i], inc - (rank + i), "exscan contiguous");
    }

    /* Reduce_scatter_block: one vector element per rank. */
    double *sb = malloc(((size_t)size * 5) * sizeof(double));
    double rb[5];
    for (int i = 0; i < size * 5; i++)
        sb[i] = dv(rank, i);
    for (int i = 0; i < 5; i++)
        rb[i] = -1.0;
    CHECK_MPI(MPI_Reduce_scatter_block(sb, rb, 1, v3, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < 5; i++) {
        double want = i % 2 == 0 ? sumr + (double)size * (rank * 5 + i) : -1.0;
        CHECK(rb[i] == want, "reduce_scatter_block vector rb[%d] = %g, expected %g", i, rb[i],
              want);
    }
    free(sb);

    /* Reduce_local. */
    double l1[5] = {1, 2, 3, 4, 5}, l2[5] = {10, 20, 30, 40, 50};
    CHECK_MPI(MPI_Reduce_local(l1, l2, 1, v3, MPI_PROD));
    CHECK(l2[0] == 10 && l2[1] == 20 && l2[2] == 90 && l2[3] == 40 && l2[4] == 250,
          "reduce_local vector prod: %g %g %g %g %g", l2[0], l2[1], l2[2], l2[3], l2[4]);

    MPI_Type_free(&c4);
    MPI_Type_free(&v3);
    MPI_Type_free(&i3);
}

/* ---------------------------------------------------------------- user op, struct */

typedef struct {
    double sum;
    int count;
    double max;
} stat_t;

static MPI_Datatype g_stat_type;
static int g_wrong_type;

static void stat_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    if (*dt != g_stat_type)
        g_wrong_type++;
    MPI_Aint lb, ext;
    MPI_Type_get_extent(*dt, &lb, &ext);
    for (int i = 0; i < *len; i++) {
        const stat_t *a = (const stat_t *)((char *)in + i * ext);
        stat_t *b = (stat_t *)((char *)inout + i * ext);
        b->sum += a->sum;
        b->count += a->count;
        if (a->max > b->max)
            b->max = a->max;
    }
}

static void test_user_struct(void)
{
    static stat_t s;
    MPI_Aint base, d[3];
    MPI_Get_address(&s, &base);
    MPI_Get_address(&s.sum, &d[0]);
    MPI_Get_address(&s.count, &d[1]);
    MPI_Get_address(&s.max, &d[2]);
    for (int i = 0; i < 3; i++)
        d[i] -= base;
    int bl[3] = {1, 1, 1};
    MPI_Datatype ty[3] = {MPI_DOUBLE, MPI_INT, MPI_DOUBLE};
    MPI_Type_create_struct(3, bl, d, ty, &g_stat_type);
    MPI_Type_commit(&g_stat_type);
    MPI_Op op;
    MPI_Op_create(stat_op, 1, &op);

    stat_t in[2], out[2];
    for (int k = 0; k < 2; k++) {
        in[k].sum = rank + k;
        in[k].count = 1;
        in[k].max = (double)((rank * 7 + k) % size);
    }
    double sum0 = size * (size - 1) / 2.0;
    CHECK_MPI(MPI_Allreduce(in, out, 2, g_stat_type, op, MPI_COMM_WORLD));
    for (int k = 0; k < 2; k++) {
        CHECK(out[k].sum == sum0 + k * size, "user struct allreduce sum[%d] = %g", k, out[k].sum);
        CHECK_INT(out[k].count, size, "user struct allreduce count");
        CHECK(out[k].max == size - 1, "user struct allreduce max[%d] = %g", k, out[k].max);
    }
    int root = 1 % size;
    memset(out, 0, sizeof out);
    CHECK_MPI(MPI_Reduce(in, out, 2, g_stat_type, op, root, MPI_COMM_WORLD));
    if (rank == root)
        CHECK(out[1].sum == sum0 + size && out[1].count == size, "user struct reduce");
    CHECK_MPI(MPI_Scan(in, out, 2, g_stat_type, op, MPI_COMM_WORLD));
    CHECK(out[0].sum == rank * (rank + 1) / 2.0 && out[0].count == rank + 1,
          "user struct scan: sum %g count %d", out[0].sum, out[0].count);
    CHECK_INT(g_wrong_type, 0, "user function called with another datatype");
    MPI_Op_free(&op);
    MPI_Type_free(&g_stat_type);
}

/* ---------------------------------------------------------------- non-commutative */

enum { P = 10007 };

/* A 2x2 matrix (4 ints) stored with one int of padding: extent 5 ints. */
static void matmul_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(*dt, &lb, &ext);
    for (int i = 0; i < *len; i++) {
        const int *a = (const int *)((char *)in + i * ext);
        int *b = (int *)((char *)inout + i * ext);
        /* b = a * b */
        int c0 = (a[0] * b[0] + a[1] * b[2]) % P, c1 = (a[0] * b[1] + a[1] * b[3]) % P;
        int c2 = (a[2] * b[0] + a[3] * b[2]) % P, c3 = (a[2] * b[1] + a[3] * b[3]) % P;
        b[0] = c0;
        b[1] = c1;
        b[2] = c2;
        b[3] = c3;
    }
}

static void mat_of(int r, int k, int *m)
{
    m[0] = 1 + r % 5;
    m[1] = (r + k) % 7;
    m[2] = (r * 3 + 1) % 4;
    m[3] = 2;
}

static void test_noncommutative(void)
{
    MPI_Datatype c4, m;
    MPI_Type_contiguous(4, MPI_INT, &c4);
    MPI_Type_create_resized(c4, 0, 5 * sizeof(int), &m);
    MPI_Type_commit(&m);
    MPI_Type_free(&c4);
    MPI_Op op;
    MPI_Op_create(matmul_op, 0, &op);
    int in[10], out[10];
    for (int k = 0; k < 2; k++) {
        mat_of(rank, k, in + 5 * k);
        in[5 * k + 4] = 12345; /* padding */
    }
    for (int i = 0; i < 10; i++)
        out[i] = -1;
    CHECK_MPI(MPI_Allreduce(in, out, 2, m, op, MPI_COMM_WORLD));
    for (int k = 0; k < 2; k++) {
        /* want = M_0 * M_1 * ... * M_{size-1} */
        int w[4];
        mat_of(0, k, w);
        for (int r = 1; r < size; r++) {
            int b[4];
            mat_of(r, k, b);
            int c[4] = {(w[0] * b[0] + w[1] * b[2]) % P, (w[0] * b[1] + w[1] * b[3]) % P,
                        (w[2] * b[0] + w[3] * b[2]) % P, (w[2] * b[1] + w[3] * b[3]) % P};
            memcpy(w, c, sizeof w);
        }
        for (int i = 0; i < 4; i++)
            CHECK_INT(out[5 * k + i], w[i], "non-commutative allreduce in rank order");
        CHECK_INT(out[5 * k + 4], -1, "padding of the result untouched");
    }
    MPI_Op_free(&op);
    MPI_Type_free(&m);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "type_reduce");
    rank = mtest_rank_;
    size = mtest_size_;
#ifdef BDMPI_VERSION_STRING
    test_predefined();
#endif
    test_user_struct();
    test_noncommutative();
    return mtest_finalize();
}
