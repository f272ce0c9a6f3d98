/*
 * op_user: user-defined reduction operations (MPI_Op_create).
 *
 * Non-commutative: 2x2 matrix product with entries modulo 2^16, one matrix
 * packed into a uint64_t (MPI_UINT64_T, so no derived datatype is needed).
 * Matrix multiplication is associative but not commutative, so the result
 * must be exactly M_0 * M_1 * ... * M_{p-1} in rank order.  The user
 * function computes inoutvec[i] = invec[i] * inoutvec[i] (invec is the
 * left operand, MPI-3.1 5.9.5).
 *
 * Commutative: addition modulo 1009 on MPI_INT.
 *
 * Covered: MPI_Reduce (several roots, also MPI_IN_PLACE), MPI_Allreduce
 * (also a 512 KiB vector when size <= 8, which implementations may split
 * into pieces), MPI_Scan, MPI_Exscan, MPI_Reduce_scatter_block,
 * MPI_Reduce_local (user and predefined op), MPI_Op_commutative,
 * MPI_Op_free (handle becomes MPI_OP_NULL), and that the datatype passed
 * to the user function is the one given to the call.
 */
#include "mtest.h"

#define N 7

static int rank, size;
static int bad_dtype, calls;

static uint64_t pack(unsigned a, unsigned b, unsigned c, unsigned d)
{
    return (uint64_t)(a & 0xffff) | (uint64_t)(b & 0xffff) << 16 | (uint64_t)(c & 0xffff) << 32 |
           (uint64_t)(d & 0xffff) << 48;
}

static uint64_t matmul(uint64_t x, uint64_t y)
{
    unsigned a = x & 0xffff, b = (x >> 16) & 0xffff, c = (x >> 32) & 0xffff, d = (x >> 48) & 0xffff;
    unsigned e = y & 0xffff, f = (y >> 16) & 0xffff, g = (y >> 32) & 0xffff, h = (y >> 48) & 0xffff;
    return pack(a * e + b * g, a * f + b * h, c * e + d * g, c * f + d * h);
}

/* the matrix of rank r for element j */
static uint64_t mat(int r, int j)
{
    return pack((unsigned)((r + j) % 5 + 1), (unsigned)((r * 3 + j) % 7),
                (unsigned)((r + 2 * j) % 3), (unsigned)(1 + (r * j) % 2));
}

/* product M_lo * ... * M_hi for element j (identity if hi < lo) */
static uint64_t prodrange(int lo, int hi, int j)
{
    uint64_t m = pack(1, 0, 0, 1);
    for (int r = lo; r <= hi; r++)
        m = matmul(m, mat(r, j));
    return m;
}

static void matmul_fn(void *invec, void *inoutvec, int *len, MPI_Datatype *dtype)
{
    const uint64_t *in = invec;
    uint64_t *io = inoutvec;
    calls++;
    if (*dtype != MPI_UINT64_T)
        bad_dtype++;
    for (int i = 0; i < *len; i++)
        io[i] = matmul(in[i], io[i]);
}

static void addmod_fn(void *invec, void *inoutvec, int *len, MPI_Datatype *dtype)
{
    const int *in = invec;
    int *io = inoutvec;
    calls++;
    if (*dtype != MPI_INT)
        bad_dtype++;
    for (int i = 0; i < *len; i++)
        io[i] = (in[i] + io[i]) % 1009;
}

int main(int argc, char **argv)
{
    MPI_Op mop, aop;
    int i, j, flag;

    mtest_init(&argc, &argv, "op_user");
    rank = mtest_rank_;
    size = mtest_size_;

    MPI_Op_create(matmul_fn, 0, &mop);
    MPI_Op_create(addmod_fn, 1, &aop);

    flag = -1;
    MPI_Op_commutative(mop, &flag);
    CHECK_INT(flag, 0, "MPI_Op_commutative(non-commutative user op)");
    flag = -1;
    MPI_Op_commutative(aop, &flag);
    CHECK_INT(flag, 1, "MPI_Op_commutative(commutative user op)");
    flag = -1;
    MPI_Op_commutative(MPI_SUM, &flag);
    CHECK_INT(flag, 1, "MPI_Op_commutative(MPI_SUM)");

    /* sanity of the test itself: the op really is non-commutative */
    if (size >= 2) {
        int differ = 0;
        for (j = 0; j < N; j++)
            differ += matmul(mat(0, j), mat(1, j)) != matmul(mat(1, j), mat(0, j));
        CHECK(differ > 0, "test matrices commute; test is meaningless");
    }

    /* ---- MPI_Reduce, non-commutative, several roots, IN_PLACE ---- */
    for (int v = 0; v < 4; v++) {
        int root = (v / 2 == 0) ? 0 : size - 1, inplace = v % 2;
        uint64_t s[N], r[N];
        for (j = 0; j < N; j++) {
            s[j] = mat(rank, j);
            r[j] = (rank == root && inplace) ? s[j] : 0;
        }
        MPI_Reduce((rank == root && inplace) ? MPI_IN_PLACE : s, rank == root ? r : NULL, N,
                   MPI_UINT64_T, mop, root, MPI_COMM_WORLD);
        if (rank == root)
            for (j = 0; j < N; j++)
                CHECK(r[j] == prodrange(0, size - 1, j),
                      "Reduce matmul root %d%s [%d] = %#llx want %#llx", root,
                      inplace ? " IN_PLACE" : "", j, (unsigned long long)r[j],
                      (unsigned long long)prodrange(0, size - 1, j));
    }

    /* ---- MPI_Allreduce, non-commutative and commutative ---- */
    {
        uint64_t s[N], r[N];
        int a[N], ar[N];
        for (j = 0; j < N; j++) {
            s[j] = mat(rank, j);
            a[j] = (rank * 37 + j * 11) % 1009;
        }
        MPI_Allreduce(s, r, N, MPI_UINT64_T, mop, MPI_COMM_WORLD);
        MPI_Allreduce(a, ar, N, MPI_INT, aop, MPI_COMM_WORLD);
        for (j = 0; j < N; j++) {
            long long e = 0;
            for (int k = 0; k < size; k++)
                e += (k * 37 + j * 11) % 1009;
            CHECK(r[j] == prodrange(0, size - 1, j), "Allreduce matmul [%d] = %#llx want %#llx", j,
                  (unsigned long long)r[j], (unsigned long long)prodrange(0, size - 1, j));
            CHECK(ar[j] == e % 1009, "Allreduce addmod [%d] = %d want %lld", j, ar[j], e % 1009);
        }
        /* in place */
        for (j = 0; j < N; j++)
            s[j] = mat(rank, j);
        MPI_Allreduce(MPI_IN_PLACE, s, N, MPI_UINT64_T, mop, MPI_COMM_WORLD);
        for (j = 0; j < N; j++)
            CHECK(s[j] == prodrange(0, size - 1, j), "Allreduce IN_PLACE matmul [%d] wrong", j);
    }

    /* ---- MPI_Scan and MPI_Exscan ---- */
    {
        uint64_t s[N], r[N], x[N];
        int a[N], ar[N];
        for (j = 0; j < N; j++) {
            s[j] = mat(rank, j);
            a[j] = (rank * 5 + j) % 1009;
        }
        MPI_Scan(s, r, N, MPI_UINT64_T, mop, MPI_COMM_WORLD);
        MPI_Exscan(s, x, N, MPI_UINT64_T, mop, MPI_COMM_WORLD);
        MPI_Scan(a, ar, N, MPI_INT, aop, MPI_COMM_WORLD);
        for (j = 0; j < N; j++) {
            long long e = 0;
            for (int k = 0; k <= rank; k++)
                e += (k * 5 + j) % 1009;
            CHECK(r[j] == prodrange(0, rank, j), "Scan matmul [%d] = %#llx want %#llx", j,
                  (unsigned long long)r[j], (unsigned long long)prodrange(0, rank, j));
            if (rank > 0)
                CHECK(x[j] == prodrange(0, rank - 1, j), "Exscan matmul [%d] = %#llx want %#llx", j,
                      (unsigned long long)x[j], (unsigned long long)prodrange(0, rank - 1, j));
            CHECK(ar[j] == e % 1009, "Scan addmod [%d] = %d want %lld", j, ar[j], e % 1009);
        }
    }

    /* ---- MPI_Reduce_scatter_block, non-commutative ---- */
    {
        uint64_t *s = malloc(sizeof(uint64_t) * (size_t)(2 * size)), r[2];
        for (int k = 0; k < size; k++)
            for (j = 0; j < 2; j++)
                s[k * 2 + j] = mat(rank, k * 2 + j);
        MPI_Reduce_scatter_block(s, r, 2, MPI_UINT64_T, mop, MPI_COMM_WORLD);
        for (j = 0; j < 2; j++)
            CHECK(r[j] == prodrange(0, size - 1, rank * 2 + j),
                  "Reduce_scatter_block matmul [%d] wrong", j);
        free(s);
    }

    /* ---- MPI_Reduce_local ---- */
    {
        uint64_t in[N], io[N];
        int x[3] = {1, 2, 3}, y[3] = {10, 20, 30};
        for (j = 0; j < N; j++) {
            in[j] = mat(3, j);
            io[j] = mat(4, j);
        }
        MPI_Reduce_local(in, io, N, MPI_UINT64_T, mop);
        for (j = 0; j < N; j++)
            CHECK(io[j] == matmul(mat(3, j), mat(4, j)),
                  "Reduce_local matmul [%d]: operand order wrong", j);
        MPI_Reduce_local(x, y, 3, MPI_INT, MPI_SUM);
        CHECK(y[0] == 11 && y[1] == 22 && y[2] == 33 && x[0] == 1,
              "Reduce_local MPI_SUM gave %d %d %d", y[0], y[1], y[2]);
        MPI_Reduce_local(x, y, 3, MPI_INT, aop);
        CHECK(y[0] == 12 && y[1] == 24 && y[2] == 36, "Reduce_local addmod gave %d %d %d", y[0],
              y[1], y[2]);
    }

    /* ---- a larger vector (may be split into pieces) ---- */
    if (size <= 8) {
        const int n = 65536;
        uint64_t *s = malloc(sizeof(uint64_t) * (size_t)n);
        int bad = -1;
        for (i = 0; i < n; i++)
            s[i] = mat(rank, i);
        MPI_Allreduce(MPI_IN_PLACE, s, n, MPI_UINT64_T, mop, MPI_COMM_WORLD);
        for (i = 0; i < n; i++)
            if (s[i] != prodrange(0, size - 1, i)) {
                bad = i;
                break;
            }
        CHECK(bad < 0, "large Allreduce matmul wrong at element %d", bad);
        free(s);
    }

    CHECK(bad_dtype == 0, "user function got a different datatype %d times", bad_dtype);
    CHECK(calls > 0, "user functions were never called (Reduce_local at "
                     "least must call them)");

    MPI_Op_free(&mop);
    MPI_Op_free(&aop);
    CHECK(mop == MPI_OP_NULL && aop == MPI_OP_NULL,
          "MPI_Op_free did not set the handle to MPI_OP_NULL");

    return mtest_finalize();
}
