/*
 * bigcount_array.c - MPI 4.0's MPI_Type_create_subarray_c and
 * MPI_Type_create_darray_c with dimensions of more than INT_MAX elements,
 * kept cheap:
 * - a subarray of 20 bytes of a 4 GiB byte array, sent from and received
 *   into a sparse anonymous mapping (only the pages used are touched);
 * - subarrays and darrays of 2^31 rows and more: their size, bounds and
 *   contents (no data moves: the type must be built without a run per
 *   row);
 * - an array whose size in bytes passes MPI_Count is an error.
 */
#include <limits.h>
#include <string.h>
#include <sys/mman.h>

#include "mtest.h"

#define BIG ((MPI_Count)INT_MAX + 100)

static void bounds(MPI_Datatype t, MPI_Count size, MPI_Count extent, MPI_Count tlb,
                   MPI_Count textent, const char *what)
{
    MPI_Count sz = -1, lb = -1, ext = -1, tl = -1, te = -1;
    CHECK_MPI(MPI_Type_size_c(t, &sz));
    CHECK_MPI(MPI_Type_get_extent_c(t, &lb, &ext));
    CHECK_MPI(MPI_Type_get_true_extent_c(t, &tl, &te));
    CHECK(sz == size, "%s: size %lld, expected %lld", what, (long long)sz, (long long)size);
    CHECK(lb == 0 && ext == extent, "%s: lb %lld extent %lld, expected 0 and %lld", what,
          (long long)lb, (long long)ext, (long long)extent);
    CHECK(tl == tlb && te == textent, "%s: true lb %lld extent %lld, expected %lld and %lld", what,
          (long long)tl, (long long)te, (long long)tlb, (long long)textent);
}

/* The large-count contents hold the MPI_Counts given. */
static void contents(MPI_Datatype t, int combiner, MPI_Count nc, const MPI_Count *want,
                     const char *what)
{
    MPI_Count ni, na, n, nd;
    int comb;
    CHECK_MPI(MPI_Type_get_envelope_c(t, &ni, &na, &n, &nd, &comb));
    CHECK(comb == combiner && n == nc, "%s: combiner %d, %lld counts", what, comb, (long long)n);
    if (comb != combiner || n != nc || ni > 64 || nd != 1)
        return;
    int ints[64];
    MPI_Aint aints[1];
    MPI_Count counts[16];
    MPI_Datatype types[1];
    CHECK_MPI(MPI_Type_get_contents_c(t, ni, na, n, nd, ints, aints, counts, types));
    for (MPI_Count i = 0; i < n; i++)
        CHECK(counts[i] == want[i], "%s: count %lld is %lld, expected %lld", what, (long long)i,
              (long long)counts[i], (long long)want[i]);
    int combt;
    MPI_Count a, b, c, d;
    CHECK_MPI(MPI_Type_get_envelope_c(types[0], &a, &b, &c, &d, &combt));
    if (combt != MPI_COMBINER_NAMED)
        MPI_Type_free(&types[0]);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "bigcount_array");
    int rank = mtest_rank_;
    int mpich = mtest_is_mpich();

    /* 2 rows of BIG bytes; columns [INT_MAX + 50, INT_MAX + 60) of both. */
    {
        size_t span = 2 * (size_t)BIG;
        unsigned char *a = mmap(NULL, span, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (a == MAP_FAILED) {
            printf("%s: SKIP (no %zu bytes of address space)\n", mtest_name_, span);
            MPI_Finalize();
            return 77;
        }
        MPI_Count sizes[2] = {2, BIG}, subs[2] = {2, 10}, starts[2] = {0, BIG - 50};
        MPI_Datatype t;
        CHECK_MPI(MPI_Type_create_subarray_c(2, sizes, subs, starts, MPI_ORDER_C, MPI_BYTE, &t));
        CHECK_MPI(MPI_Type_commit(&t));
        bounds(t, 20, 2 * BIG, BIG - 50, BIG + 10, "subarray_c 2 x BIG");
        MPI_Count want[6] = {2, BIG, 2, 10, 0, BIG - 50};
        contents(t, MPI_COMBINER_SUBARRAY, 6, want, "subarray_c 2 x BIG");
        for (int r = 0; r < 2; r++)
            for (int i = 0; i < 10; i++)
                a[r * BIG + BIG - 50 + i] = (unsigned char)(rank + 10 * r + i + 1);
        unsigned char got[20] = {0};
        CHECK_MPI(
            MPI_Sendrecv(a, 1, t, 0, 7, got, 20, MPI_BYTE, 0, 7, MPI_COMM_SELF, MPI_STATUS_IGNORE));
        for (int k = 0; k < 20; k++)
            CHECK(got[k] == (unsigned char)(rank + 10 * (k / 10) + k % 10 + 1),
                  "subarray_c send: byte %d is %d", k, got[k]);
        /* ... and back into the same places, Fortran order this time. */
        MPI_Count fsizes[2] = {BIG, 2}, fsubs[2] = {10, 2}, fstarts[2] = {BIG - 50, 0};
        MPI_Datatype f;
        CHECK_MPI(
            MPI_Type_create_subarray_c(2, fsizes, fsubs, fstarts, MPI_ORDER_FORTRAN, MPI_BYTE, &f));
        CHECK_MPI(MPI_Type_commit(&f));
        for (int k = 0; k < 20; k++)
            got[k] = (unsigned char)(200 + k);
        CHECK_MPI(
            MPI_Sendrecv(got, 20, MPI_BYTE, 0, 8, a, 1, f, 0, 8, MPI_COMM_SELF, MPI_STATUS_IGNORE));
        for (int r = 0; r < 2; r++)
            for (int i = 0; i < 10; i++)
                CHECK(a[r * BIG + BIG - 50 + i] == (unsigned char)(200 + 10 * r + i),
                      "subarray_c receive: row %d byte %d", r, i);
        CHECK(a[BIG - 51] == 0 && a[BIG - 40] == 0, "subarray_c receive wrote outside");
        MPI_Type_free(&f);
        MPI_Type_free(&t);
        munmap(a, span);
    }

    /* BIG + 3 rows of 2 bytes, column 1 of rows [1, BIG + 1]: BIG + 1
     * blocks of one byte. */
    {
        MPI_Count sizes[2] = {BIG + 3, 2}, subs[2] = {BIG + 1, 1}, starts[2] = {1, 1};
        MPI_Datatype t;
        CHECK_MPI(MPI_Type_create_subarray_c(2, sizes, subs, starts, MPI_ORDER_C, MPI_BYTE, &t));
        CHECK_MPI(MPI_Type_commit(&t));
        bounds(t, BIG + 1, 2 * (BIG + 3), 3, 2 * BIG + 1, "subarray_c of BIG + 1 rows");
        MPI_Type_free(&t);
        /* Three dimensions, the outer two of 2 and BIG + 1 rows, of ints. */
        MPI_Count s3[3] = {2, BIG + 1, 3}, sub3[3] = {1, BIG, 2}, st3[3] = {1, 1, 0};
        CHECK_MPI(MPI_Type_create_subarray_c(3, s3, sub3, st3, MPI_ORDER_C, MPI_INT, &t));
        CHECK_MPI(MPI_Type_commit(&t));
        MPI_Count rowb = 3 * (MPI_Count)sizeof(int), plane = (BIG + 1) * rowb;
        bounds(t, BIG * 2 * (MPI_Count)sizeof(int), 2 * plane, plane + rowb,
               (BIG - 1) * rowb + 2 * (MPI_Count)sizeof(int), "subarray_c 3-d");
        MPI_Type_free(&t);
    }

    /* Darrays over 2 processes of BIG + 10 rows. */
    {
        MPI_Count gs[2] = {BIG + 10, 4}, half = (BIG + 10 + 1) / 2;
        int dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_NONE};
        int darg[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, ps[2] = {2, 1};
        MPI_Datatype t;
        /* Rows [half, BIG + 10) of process 1: one block of bytes. */
        CHECK_MPI(MPI_Type_create_darray_c(2, 1, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_BYTE, &t));
        CHECK_MPI(MPI_Type_commit(&t));
        bounds(t, (BIG + 10 - half) * 4, (BIG + 10) * 4, half * 4, (BIG + 10 - half) * 4,
               "darray_c block rows");
        contents(t, MPI_COMBINER_DARRAY, 2, gs, "darray_c block rows");
        MPI_Type_free(&t);
        /* Columns [2, 4) of every row for process 1: BIG + 10 blocks. */
        int dist2[2] = {MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_BLOCK}, ps2[2] = {1, 2};
        CHECK_MPI(
            MPI_Type_create_darray_c(2, 1, 2, gs, dist2, darg, ps2, MPI_ORDER_C, MPI_BYTE, &t));
        CHECK_MPI(MPI_Type_commit(&t));
        bounds(t, (BIG + 10) * 2, (BIG + 10) * 4, 2, (BIG + 9) * 4 + 2, "darray_c block columns");
        MPI_Type_free(&t);
        /* One dimension, cyclic by blocks of INT_MAX / 2 + 1. */
        MPI_Count g1[1] = {BIG};
        int d1[1] = {MPI_DISTRIBUTE_CYCLIC}, a1[1] = {INT_MAX / 2 + 1}, p1[1] = {2};
        CHECK_MPI(MPI_Type_create_darray_c(2, 0, 1, g1, d1, a1, p1, MPI_ORDER_C, MPI_BYTE, &t));
        CHECK_MPI(MPI_Type_commit(&t));
        /* Blocks 0 and 2 of [0, k), [k, 2k), [2k, BIG): BIG - k bytes. */
        MPI_Count k = INT_MAX / 2 + 1;
        bounds(t, BIG - k, BIG, 0, BIG, "darray_c cyclic");
        MPI_Type_free(&t);
    }

    /* An array of more bytes than MPI_Count holds is an error. */
    {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Count sizes[2] = {(MPI_Count)1 << 40, (MPI_Count)1 << 40}, subs[2] = {1, 1},
                  starts[2] = {0, 0};
        MPI_Datatype t = MPI_DATATYPE_NULL;
        int rc = MPI_Type_create_subarray_c(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t);
        CHECK(rc != MPI_SUCCESS || mpich, "subarray_c of 2^82 bytes succeeded");
        if (rc == MPI_SUCCESS)
            MPI_Type_free(&t);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    }
    return mtest_finalize();
}
