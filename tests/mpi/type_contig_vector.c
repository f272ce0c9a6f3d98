/*
 * type_contig_vector: contiguous, vector, hvector (also negative strides),
 * resized and dup datatypes in point-to-point and collectives.
 *
 *  - ring exchanges (MPI_Sendrecv) sending with a derived type and
 *    receiving with another type of the same signature; gaps of the
 *    receive buffer stay untouched; MPI_Get_count in both types;
 *  - a receive posted with a type the program frees before the wait;
 *  - messages larger than any internal buffer, packed non-contiguously;
 *  - a matrix transposed by gathering rows into a resized column type,
 *    and scattered back by columns;
 *  - MPI_Bcast, MPI_Allgather, MPI_Alltoall with vector types.
 */
#include "mtest.h"

static int rank, size, right, left;

static double val(int r, int i) { return r * 100000.0 + i; }

static void test_contiguous(void)
{
    MPI_Datatype t;
    CHECK_MPI(MPI_Type_contiguous(5, MPI_INT, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    int sz;
    MPI_Aint lb, ext;
    MPI_Type_size(t, &sz);
    MPI_Type_get_extent(t, &lb, &ext);
    CHECK_INT(sz, 5 * (int)sizeof(int), "contiguous size");
    CHECK_INT(ext, 5 * (long)sizeof(int), "contiguous extent");
    CHECK_INT(lb, 0, "contiguous lb");

    int out[15], in[15];
    for (int i = 0; i < 15; i++) {
        out[i] = rank * 1000 + i;
        in[i] = -1;
    }
    MPI_Status st;
    CHECK_MPI(MPI_Sendrecv(out, 3, t, right, 1, in, 3, t, left, 1, MPI_COMM_WORLD, &st));
    for (int i = 0; i < 15; i++)
        CHECK_INT(in[i], left * 1000 + i, "contiguous payload");
    int n;
    MPI_Get_count(&st, t, &n);
    CHECK_INT(n, 3, "Get_count(contiguous)");
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK_INT(n, 15, "Get_count(MPI_INT) of a contiguous message");

    /* Send as 15 MPI_INT, receive as 3 contiguous-of-5. */
    memset(in, 0xff, sizeof in);
    CHECK_MPI(MPI_Sendrecv(out, 15, MPI_INT, right, 2, in, 3, t, left, 2, MPI_COMM_WORLD, &st));
    for (int i = 0; i < 15; i++)
        CHECK_INT(in[i], left * 1000 + i, "int -> contiguous payload");
    /* A contiguous of contiguous is still contiguous. */
    MPI_Datatype t2;
    CHECK_MPI(MPI_Type_contiguous(3, t, &t2));
    CHECK_MPI(MPI_Type_commit(&t2));
    MPI_Type_size(t2, &sz);
    CHECK_INT(sz, 15 * (int)sizeof(int), "contiguous(contiguous) size");
    memset(in, 0xff, sizeof in);
    CHECK_MPI(MPI_Sendrecv(out, 1, t2, right, 3, in, 15, MPI_INT, left, 3, MPI_COMM_WORLD, &st));
    for (int i = 0; i < 15; i++)
        CHECK_INT(in[i], left * 1000 + i, "contiguous(contiguous) payload");
    MPI_Type_free(&t2);
    MPI_Type_free(&t);
    CHECK(t == MPI_DATATYPE_NULL, "MPI_Type_free did not set the handle to MPI_DATATYPE_NULL");
}

static void test_vector(void)
{
    /* 4 blocks of 2 doubles, 5 doubles apart: extent 17 doubles. */
    MPI_Datatype v;
    CHECK_MPI(MPI_Type_vector(4, 2, 5, MPI_DOUBLE, &v));
    CHECK_MPI(MPI_Type_commit(&v));
    int sz;
    MPI_Aint lb, ext;
    MPI_Type_size(v, &sz);
    MPI_Type_get_extent(v, &lb, &ext);
    CHECK_INT(sz, 8 * (int)sizeof(double), "vector size");
    CHECK_INT(ext, 17 * (long)sizeof(double), "vector extent");

    enum { N = 2 * 17 };
    double a[N], b[N], c[16];
    for (int i = 0; i < N; i++) {
        a[i] = val(rank, i);
        b[i] = -1.0;
    }
    /* Two elements: the second starts one extent (17 doubles) later. */
    MPI_Status st;
    CHECK_MPI(MPI_Sendrecv(a, 2, v, right, 4, c, 16, MPI_DOUBLE, left, 4, MPI_COMM_WORLD, &st));
    int k = 0;
    for (int e = 0; e < 2; e++)
        for (int blk = 0; blk < 4; blk++)
            for (int j = 0; j < 2; j++, k++)
                CHECK(c[k] == val(left, e * 17 + blk * 5 + j),
                      "vector -> doubles: c[%d] = %g, expected %g", k, c[k],
                      val(left, e * 17 + blk * 5 + j));
    int n;
    MPI_Get_count(&st, MPI_DOUBLE, &n);
    CHECK_INT(n, 16, "Get_count(MPI_DOUBLE) of 2 vectors");

    /* Receive with the same vector type: only the blocks are written. */
    CHECK_MPI(MPI_Sendrecv(a, 2, v, right, 5, b, 2, v, left, 5, MPI_COMM_WORLD, &st));
    for (int i = 0; i < N; i++) {
        int in_block = (i % 17) % 5 < 2; /* blocks at 0,1 5,6 10,11 15,16 */
        double want = in_block ? val(left, i) : -1.0;
        CHECK(b[i] == want, "vector -> vector: b[%d] = %g, expected %g", i, b[i], want);
    }
    MPI_Get_count(&st, v, &n);
    CHECK_INT(n, 2, "Get_count(vector)");
    MPI_Get_elements(&st, v, &n);
    CHECK_INT(n, 16, "Get_elements(vector)");

    /* Vector with blocks merging into one run (stride == blocklength). */
    MPI_Datatype dense;
    CHECK_MPI(MPI_Type_vector(3, 2, 2, MPI_DOUBLE, &dense));
    CHECK_MPI(MPI_Type_commit(&dense));
    MPI_Type_get_extent(dense, &lb, &ext);
    CHECK_INT(ext, 6 * (long)sizeof(double), "dense vector extent");
    memset(c, 0, sizeof c);
    CHECK_MPI(MPI_Sendrecv(a, 2, dense, right, 6, c, 12, MPI_DOUBLE, left, 6, MPI_COMM_WORLD, &st));
    for (int i = 0; i < 12; i++)
        CHECK(c[i] == val(left, i), "dense vector: c[%d] = %g", i, c[i]);
    MPI_Type_free(&dense);
    MPI_Type_free(&v);
}

static void test_hvector_negative(void)
{
    /* 3 blocks of one double, 2 doubles apart going backwards. */
    MPI_Datatype h;
    MPI_Aint stride = -2 * (MPI_Aint)sizeof(double);
    CHECK_MPI(MPI_Type_create_hvector(3, 1, stride, MPI_DOUBLE, &h));
    CHECK_MPI(MPI_Type_commit(&h));
    MPI_Aint lb, ext, tlb, text;
    MPI_Type_get_extent(h, &lb, &ext);
    MPI_Type_get_true_extent(h, &tlb, &text);
    CHECK_INT(lb, -4 * (long)sizeof(double), "negative hvector lb");
    CHECK_INT(ext, 5 * (long)sizeof(double), "negative hvector extent");
    CHECK_INT(tlb, -4 * (long)sizeof(double), "negative hvector true lb");
    CHECK_INT(text, 5 * (long)sizeof(double), "negative hvector true extent");

    double a[16], c[6];
    for (int i = 0; i < 16; i++)
        a[i] = val(rank, i);
    /* Elements start at a+4 and a+9 (one extent later); blocks go backwards. */
    MPI_Status st;
    CHECK_MPI(MPI_Sendrecv(a + 4, 2, h, right, 7, c, 6, MPI_DOUBLE, left, 7, MPI_COMM_WORLD, &st));
    int want[6] = {4, 2, 0, 9, 7, 5};
    for (int i = 0; i < 6; i++)
        CHECK(c[i] == val(left, want[i]), "negative hvector: c[%d] = %g, expected %g", i, c[i],
              val(left, want[i]));
    /* And unpack backwards too. */
    double b[16];
    for (int i = 0; i < 16; i++)
        b[i] = -1.0;
    CHECK_MPI(MPI_Sendrecv(a, 6, MPI_DOUBLE, right, 8, b + 4, 2, h, left, 8, MPI_COMM_WORLD, &st));
    for (int i = 0; i < 6; i++)
        CHECK(b[want[i]] == val(left, i), "negative hvector receive: b[%d] = %g", want[i],
              b[want[i]]);
    CHECK(b[1] == -1.0 && b[3] == -1.0 && b[10] == -1.0, "negative hvector wrote a gap");
    MPI_Type_free(&h);
}

static void test_resized_dup(void)
{
    /* A vector resized so that consecutive elements interleave. */
    MPI_Datatype v, r, d;
    CHECK_MPI(MPI_Type_vector(3, 1, 4, MPI_INT, &v));
    CHECK_MPI(MPI_Type_create_resized(v, 0, sizeof(int), &r));
    CHECK_MPI(MPI_Type_dup(r, &d));
    CHECK_MPI(MPI_Type_commit(&d));
    MPI_Aint lb, ext;
    MPI_Type_get_extent(d, &lb, &ext);
    CHECK_INT(ext, (long)sizeof(int), "resized extent");
    int sz;
    MPI_Type_size(d, &sz);
    CHECK_INT(sz, 3 * (int)sizeof(int), "resized size");
    MPI_Type_free(&v);
    MPI_Type_free(&r); /* d keeps what it needs */

    /* 4 elements of d at a: columns 0..3 of a 3x4 row-major matrix. */
    int a[12], c[12], b[12];
    for (int i = 0; i < 12; i++) {
        a[i] = rank * 100 + i;
        b[i] = -1;
    }
    MPI_Status st;
    CHECK_MPI(MPI_Sendrecv(a, 4, d, right, 9, c, 12, MPI_INT, left, 9, MPI_COMM_WORLD, &st));
    for (int col = 0, k = 0; col < 4; col++)
        for (int row = 0; row < 3; row++, k++)
            CHECK_INT(c[k], left * 100 + row * 4 + col, "resized columns (transpose)");
    CHECK_MPI(MPI_Sendrecv(c, 12, MPI_INT, right, 10, b, 4, d, left, 10, MPI_COMM_WORLD, &st));
    int right2 = (left + size - 1) % size;
    for (int i = 0; i < 12; i++)
        CHECK_INT(b[i], right2 * 100 + i, "resized columns back");
    MPI_Type_free(&d);
}

/* A receive still pending when the program frees its datatype. */
static void test_free_pending(void)
{
    MPI_Datatype v;
    MPI_Type_vector(3, 1, 2, MPI_INT, &v);
    MPI_Type_commit(&v);
    int in[5] = {-1, -1, -1, -1, -1}, out[3] = {rank, rank + 1, rank + 2};
    MPI_Request rq[2];
    CHECK_MPI(MPI_Irecv(in, 1, v, left, 11, MPI_COMM_WORLD, &rq[0]));
    CHECK_MPI(MPI_Type_free(&v));
    CHECK_MPI(MPI_Isend(out, 3, MPI_INT, right, 11, MPI_COMM_WORLD, &rq[1]));
    CHECK_MPI(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    int want[5] = {left, -1, left + 1, -1, left + 2};
    for (int i = 0; i < 5; i++)
        CHECK_INT(in[i], want[i], "receive after MPI_Type_free");
}

/* Larger than any buffer: exercises streaming through the transport. */
static void test_large(void)
{
    enum { M = 60000 }; /* 480 KB packed */
    if (size > 16)
        return;
    double *a = malloc(2 * M * sizeof(double)), *b = malloc(2 * M * sizeof(double));
    for (int i = 0; i < 2 * M; i++) {
        a[i] = val(rank, i);
        b[i] = -1.0;
    }
    MPI_Datatype v;
    MPI_Type_vector(M, 1, 2, MPI_DOUBLE, &v);
    MPI_Type_commit(&v);
    MPI_Status st;
    /* Odd doubles out, even doubles in. */
    CHECK_MPI(MPI_Sendrecv(a + 1, 1, v, right, 12, b, 1, v, left, 12, MPI_COMM_WORLD, &st));
    int bad = 0;
    for (int i = 0; i < 2 * M; i++) {
        double want = i % 2 == 0 ? val(left, i + 1) : -1.0;
        if (b[i] != want && bad++ < 3)
            CHECK(0, "large vector: b[%d] = %g, expected %g", i, b[i], want);
    }
    int n;
    MPI_Get_count(&st, MPI_DOUBLE, &n);
    CHECK_INT(n, M, "large vector count");

    /* Broadcast it too. */
    for (int i = 0; i < 2 * M; i++)
        b[i] = rank == 0 ? val(0, i) : -1.0;
    CHECK_MPI(MPI_Bcast(b + 1, 1, v, 0, MPI_COMM_WORLD));
    bad = 0;
    for (int i = 0; i < 2 * M; i++) {
        double want = (rank == 0 || i % 2 == 1) ? val(0, i) : -1.0;
        if (b[i] != want && bad++ < 3)
            CHECK(0, "large bcast: b[%d] = %g, expected %g", i, b[i], want);
    }
    MPI_Type_free(&v);
    free(a);
    free(b);
}

/* Transpose a size x size matrix: gather rows into columns at the root. */
static void test_collectives_resized(void)
{
    int n = size;
    MPI_Datatype col, col1;
    MPI_Type_vector(n, 1, n, MPI_INT, &col);
    MPI_Type_create_resized(col, 0, sizeof(int), &col1);
    MPI_Type_commit(&col1);
    int *row = malloc((size_t)n * sizeof(int));
    int *m = rank == 0 ? malloc((size_t)n * n * sizeof(int)) : NULL;
    for (int j = 0; j < n; j++)
        row[j] = rank * n + j;
    CHECK_MPI(MPI_Gather(row, n, MPI_INT, m, 1, col1, 0, MPI_COMM_WORLD));
    if (rank == 0)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                if (m[i * n + j] != j * n + i) {
                    CHECK(0, "gathered transpose m[%d][%d] = %d, expected %d", i, j, m[i * n + j],
                          j * n + i);
                    i = j = n;
                }
    /* Scatter the columns of the transpose back: rank r gets column r = its row. */
    for (int j = 0; j < n; j++)
        row[j] = -1;
    CHECK_MPI(MPI_Scatter(m, 1, col1, row, n, MPI_INT, 0, MPI_COMM_WORLD));
    for (int j = 0; j < n; j++)
        if (row[j] != rank * n + j) {
            CHECK(0, "scattered column: row[%d] = %d, expected %d", j, row[j], rank * n + j);
            break;
        }
    free(m);
    free(row);
    MPI_Type_free(&col);
    MPI_Type_free(&col1);
}

static void test_collectives_vector(void)
{
    /* Every other int of a 2*k block. */
    enum { K = 3 };
    MPI_Datatype v;
    MPI_Type_vector(K, 1, 2, MPI_INT, &v);
    MPI_Type_commit(&v);
    MPI_Aint lb, ext;
    MPI_Type_get_extent(v, &lb, &ext); /* (2K-1) ints */

    /* Bcast. */
    int b[2 * K];
    for (int i = 0; i < 2 * K; i++)
        b[i] = rank == 0 ? 7 * i : -1;
    CHECK_MPI(MPI_Bcast(b, 1, v, 0, MPI_COMM_WORLD));
    for (int i = 0; i < 2 * K; i++)
        CHECK_INT(b[i], (i % 2 == 0 || rank == 0) ? 7 * i : -1, "vector bcast");

    /* Allgather: send K contiguous ints, receive one vector per rank into a
     * buffer where rank r's vector starts at r * extent. */
    int mine[K];
    for (int i = 0; i < K; i++)
        mine[i] = rank * 10 + i;
    size_t per = (size_t)ext / sizeof(int);
    size_t total = per * (size_t)size + 1;
    int *all = malloc(total * sizeof(int));
    for (size_t i = 0; i < total; i++)
        all[i] = -1;
    CHECK_MPI(MPI_Allgather(mine, K, MPI_INT, all, 1, v, MPI_COMM_WORLD));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < K; i++)
            if (all[(size_t)r * per + 2 * (size_t)i] != r * 10 + i) {
                CHECK(0, "allgather vector: rank %d item %d = %d", r, i,
                      all[(size_t)r * per + 2 * (size_t)i]);
                r = size;
                break;
            }
    /* Gaps: consecutive vectors overlap in extent (2K-1 ints), so the odd
     * slots inside each element stay -1. */
    for (int r = 0; r < size; r++)
        if (all[(size_t)r * per + 1] != -1) {
            CHECK(0, "allgather vector wrote a gap of rank %d", r);
            break;
        }
    free(all);

    /* Alltoall: to each rank a vector, from each rank K contiguous ints. */
    int *sb = malloc(((size_t)size * per + 1) * sizeof(int));
    int *rb = malloc((size_t)size * K * sizeof(int));
    for (size_t i = 0; i < (size_t)size * per + 1; i++)
        sb[i] = rank * 100000 + (int)i;
    CHECK_MPI(MPI_Alltoall(sb, 1, v, rb, K, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < K; i++) {
            int want = r * 100000 + (int)((size_t)rank * per) + 2 * i;
            if (rb[r * K + i] != want) {
                CHECK(0, "alltoall vector from %d item %d = %d, expected %d", r, i, rb[r * K + i],
                      want);
                r = size;
                break;
            }
        }
    free(sb);
    free(rb);
    MPI_Type_free(&v);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "type_contig_vector");
    rank = mtest_rank_;
    size = mtest_size_;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    test_contiguous();
    test_vector();
    test_hvector_negative();
    test_resized_dup();
    test_free_pending();
    test_large();
    test_collectives_resized();
    test_collectives_vector();
    return mtest_finalize();
}
