/*
 * type_fortran: the named Fortran datatypes used from C (MPI 3.1 3.2.2,
 * 3.3, 13.5.2, 17.2.5), with the C types of the same layout.
 *
 *  1. Size, extent and name of MPI_CHARACTER, MPI_LOGICAL, MPI_INTEGER,
 *     MPI_REAL, MPI_DOUBLE_PRECISION, MPI_COMPLEX, MPI_DOUBLE_COMPLEX, the
 *     pair types MPI_2INTEGER, MPI_2REAL, MPI_2DOUBLE_PRECISION and the
 *     sized MPI_INTEGER1/2/4/8, MPI_REAL4/8, MPI_COMPLEX8/16.
 *  2. Messages of each around a ring, and in a derived type.
 *  3. Reductions where MPI defines them: SUM/PROD/MAX on the integers and
 *     reals, SUM on the complex types, LAND/LOR/LXOR on MPI_LOGICAL,
 *     BAND/BOR/BXOR on the integers, MINLOC/MAXLOC on the pair types; and
 *     an op MPI does not define for a type (MPI_SUM on MPI_CHARACTER,
 *     MPI_MAX on MPI_COMPLEX) is MPI_ERR_OP.
 *  4. external32 sizes (MPI_Pack_external_size).
 */
#include <complex.h>

#include "mtest.h"

static int rank, size;

static void one_type(MPI_Datatype t, const char *name, int sz, int ext)
{
    int s, len;
    MPI_Aint lb, e;
    char got[MPI_MAX_OBJECT_NAME];
    CHECK(t != MPI_DATATYPE_NULL, "%s is MPI_DATATYPE_NULL", name);
    if (t == MPI_DATATYPE_NULL)
        return;
    CHECK_MPI(MPI_Type_size(t, &s));
    CHECK_MPI(MPI_Type_get_extent(t, &lb, &e));
    CHECK(s == sz && lb == 0 && e == ext, "%s: size %d lb %ld extent %ld, expected %d 0 %d", name,
          s, (long)lb, (long)e, sz, ext);
    CHECK_MPI(MPI_Type_get_name(t, got, &len));
    CHECK(strcmp(got, name) == 0, "name of %s is \"%s\"", name, got);
}

static void sizes(void)
{
    one_type(MPI_CHARACTER, "MPI_CHARACTER", 1, 1);
    one_type(MPI_LOGICAL, "MPI_LOGICAL", sizeof(int), sizeof(int));
    one_type(MPI_INTEGER, "MPI_INTEGER", sizeof(int), sizeof(int));
    one_type(MPI_REAL, "MPI_REAL", sizeof(float), sizeof(float));
    one_type(MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", sizeof(double), sizeof(double));
    one_type(MPI_COMPLEX, "MPI_COMPLEX", 2 * sizeof(float), 2 * sizeof(float));
    one_type(MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", 2 * sizeof(double), 2 * sizeof(double));
    one_type(MPI_2INTEGER, "MPI_2INTEGER", 2 * sizeof(int), 2 * sizeof(int));
    one_type(MPI_2REAL, "MPI_2REAL", 2 * sizeof(float), 2 * sizeof(float));
    one_type(MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", 2 * sizeof(double),
             2 * sizeof(double));
    one_type(MPI_INTEGER1, "MPI_INTEGER1", 1, 1);
    one_type(MPI_INTEGER2, "MPI_INTEGER2", 2, 2);
    one_type(MPI_INTEGER4, "MPI_INTEGER4", 4, 4);
    one_type(MPI_INTEGER8, "MPI_INTEGER8", 8, 8);
    one_type(MPI_REAL4, "MPI_REAL4", 4, 4);
    one_type(MPI_REAL8, "MPI_REAL8", 8, 8);
    one_type(MPI_COMPLEX8, "MPI_COMPLEX8", 8, 8);
    one_type(MPI_COMPLEX16, "MPI_COMPLEX16", 16, 16);
    /* The 16-byte kinds are optional (MPI_DATATYPE_NULL when missing). */
    if (MPI_REAL16 != MPI_DATATYPE_NULL)
        one_type(MPI_REAL16, "MPI_REAL16", 16, 16);
    if (MPI_COMPLEX32 != MPI_DATATYPE_NULL)
        one_type(MPI_COMPLEX32, "MPI_COMPLEX32", 32, 32);
    /* A pair is two basic elements (MPICH 4.0 counts whole pairs in
     * MPI_Status_set_elements). */
    if (!mtest_is_mpich()) {
        int n;
        MPI_Count c;
        MPI_Status st;
        CHECK_MPI(MPI_Status_set_elements(&st, MPI_2INTEGER, 4));
        CHECK_MPI(MPI_Get_count(&st, MPI_2INTEGER, &n));
        CHECK_INT(n, 2, "Get_count after setting 4 elements of MPI_2INTEGER");
        CHECK_MPI(MPI_Get_elements_x(&st, MPI_INTEGER, &c));
        CHECK_INT(c, 4, "Get_elements_x of MPI_INTEGER");
    }
}

static void messages(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Status st;
    int n;
    int iv[5], ir[5];
    float rv[4], rr[4];
    double dv[3], dr[3];
    float complex cv[2], cr[2];
    double complex zv[2], zr[2];
    char ch[6], chr[6];
    for (int i = 0; i < 5; i++)
        iv[i] = rank * 10 + i;
    for (int i = 0; i < 4; i++)
        rv[i] = (float)rank + 0.5f * (float)i;
    for (int i = 0; i < 3; i++)
        dv[i] = rank * 1e10 + i;
    for (int i = 0; i < 2; i++) {
        cv[i] = (float)rank + (float)i * I;
        zv[i] = rank * 2.0 - i * 3.0 * I;
    }
    snprintf(ch, sizeof ch, "r%04u", (unsigned)rank % 10000u);
    CHECK_MPI(MPI_Sendrecv(iv, 5, MPI_INTEGER, right, 1, ir, 5, MPI_INTEGER, left, 1,
                           MPI_COMM_WORLD, &st));
    CHECK_MPI(MPI_Get_count(&st, MPI_INTEGER, &n));
    CHECK_INT(n, 5, "count of MPI_INTEGER");
    for (int i = 0; i < 5; i++)
        CHECK_INT(ir[i], left * 10 + i, "MPI_INTEGER");
    CHECK_MPI(
        MPI_Sendrecv(rv, 4, MPI_REAL, right, 2, rr, 4, MPI_REAL4, left, 2, MPI_COMM_WORLD, &st));
    for (int i = 0; i < 4; i++)
        CHECK(rr[i] == (float)left + 0.5f * (float)i, "MPI_REAL %d: %g", i, (double)rr[i]);
    CHECK_MPI(MPI_Sendrecv(dv, 3, MPI_DOUBLE_PRECISION, right, 3, dr, 3, MPI_REAL8, left, 3,
                           MPI_COMM_WORLD, &st));
    for (int i = 0; i < 3; i++)
        CHECK(dr[i] == left * 1e10 + i, "MPI_DOUBLE_PRECISION %d: %g", i, dr[i]);
    CHECK_MPI(MPI_Sendrecv(cv, 2, MPI_COMPLEX, right, 4, cr, 2, MPI_COMPLEX8, left, 4,
                           MPI_COMM_WORLD, &st));
    for (int i = 0; i < 2; i++)
        CHECK(cr[i] == (float)left + (float)i * I, "MPI_COMPLEX %d", i);
    CHECK_MPI(MPI_Sendrecv(zv, 2, MPI_DOUBLE_COMPLEX, right, 5, zr, 2, MPI_COMPLEX16, left, 5,
                           MPI_COMM_WORLD, &st));
    for (int i = 0; i < 2; i++)
        CHECK(zr[i] == left * 2.0 - i * 3.0 * I, "MPI_DOUBLE_COMPLEX %d", i);
    CHECK_MPI(MPI_Sendrecv(ch, 6, MPI_CHARACTER, right, 6, chr, 6, MPI_CHARACTER, left, 6,
                           MPI_COMM_WORLD, &st));
    char want[6];
    snprintf(want, sizeof want, "r%04u", (unsigned)left % 10000u);
    CHECK(strcmp(chr, want) == 0, "MPI_CHARACTER: \"%s\"", chr);
    /* every other MPI_INTEGER8 of an array through a vector */
    long long lv[6], lr[3];
    for (int i = 0; i < 6; i++)
        lv[i] = (long long)rank << 40 | i;
    MPI_Datatype vec;
    CHECK_MPI(MPI_Type_vector(3, 1, 2, MPI_INTEGER8, &vec));
    CHECK_MPI(MPI_Type_commit(&vec));
    CHECK_MPI(
        MPI_Sendrecv(lv, 1, vec, right, 7, lr, 3, MPI_INTEGER8, left, 7, MPI_COMM_WORLD, &st));
    for (int i = 0; i < 3; i++)
        CHECK(lr[i] == ((long long)left << 40 | 2 * i), "vector of MPI_INTEGER8 %d", i);
    MPI_Type_free(&vec);
}

static void reductions(void)
{
    long long n = size, sum = n * (n - 1) / 2;
    int i4[2] = {rank, 1}, o4[2];
    CHECK_MPI(MPI_Allreduce(i4, o4, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD));
    CHECK(o4[0] == sum && o4[1] == size, "SUM MPI_INTEGER: %d %d", o4[0], o4[1]);
    long long i8 = (long long)rank << 33, o8;
    CHECK_MPI(MPI_Allreduce(&i8, &o8, 1, MPI_INTEGER8, MPI_MAX, MPI_COMM_WORLD));
    CHECK(o8 == (n - 1) << 33, "MAX MPI_INTEGER8: %lld", o8);
    short i2 = (short)(1 << (rank % 15)), o2;
    CHECK_MPI(MPI_Allreduce(&i2, &o2, 1, MPI_INTEGER2, MPI_BOR, MPI_COMM_WORLD));
    short w2 = 0;
    for (int r = 0; r < size; r++)
        w2 |= (short)(1 << (r % 15));
    CHECK_INT(o2, w2, "BOR MPI_INTEGER2");
    signed char i1 = (signed char)(rank + 1), o1;
    CHECK_MPI(MPI_Allreduce(&i1, &o1, 1, MPI_INTEGER1, MPI_BXOR, MPI_COMM_WORLD));
    signed char w1 = 0;
    for (int r = 0; r < size; r++)
        w1 ^= (signed char)(r + 1);
    CHECK_INT(o1, w1, "BXOR MPI_INTEGER1");
    float f = (float)rank, fo;
    CHECK_MPI(MPI_Allreduce(&f, &fo, 1, MPI_REAL, MPI_SUM, MPI_COMM_WORLD));
    CHECK(fo == (float)sum, "SUM MPI_REAL: %g", (double)fo);
    double d = rank + 1.0, dp;
    CHECK_MPI(MPI_Allreduce(&d, &dp, 1, MPI_DOUBLE_PRECISION, MPI_PROD, MPI_COMM_WORLD));
    double fact = 1;
    for (int r = 1; r <= size; r++)
        fact *= r;
    CHECK(dp == fact, "PROD MPI_DOUBLE_PRECISION: %g", dp);
    CHECK_MPI(MPI_Allreduce(&d, &dp, 1, MPI_REAL8, MPI_MIN, MPI_COMM_WORLD));
    CHECK(dp == 1.0, "MIN MPI_REAL8: %g", dp);
    float complex c = (float)rank + 1.0f * I, co;
    CHECK_MPI(MPI_Allreduce(&c, &co, 1, MPI_COMPLEX, MPI_SUM, MPI_COMM_WORLD));
    CHECK(co == (float)sum + (float)size * I, "SUM MPI_COMPLEX");
    double complex z = 1.0 * I, zo;
    CHECK_MPI(MPI_Allreduce(&z, &zo, 1, MPI_DOUBLE_COMPLEX, MPI_PROD, MPI_COMM_WORLD));
    double complex zw = 1;
    for (int r = 0; r < size; r++)
        zw *= I;
    CHECK(zo == zw, "PROD MPI_DOUBLE_COMPLEX: %g%+gi", creal(zo), cimag(zo));
    /* Fortran .TRUE. is 1 with gfortran, .FALSE. 0 */
    int l[3] = {1, rank == 0, rank == size - 1}, lo[3];
    CHECK_MPI(MPI_Allreduce(l, lo, 3, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD));
    CHECK(lo[0] && !lo[1] == (size > 1) && !lo[2] == (size > 1), "LAND MPI_LOGICAL: %d %d %d",
          lo[0], lo[1], lo[2]);
    CHECK_MPI(MPI_Allreduce(l, lo, 3, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD));
    CHECK(lo[0] && lo[1] && lo[2], "LOR MPI_LOGICAL: %d %d %d", lo[0], lo[1], lo[2]);
    CHECK_MPI(MPI_Allreduce(l, lo, 1, MPI_LOGICAL, MPI_LXOR, MPI_COMM_WORLD));
    CHECK(!lo[0] == (size % 2 == 0), "LXOR MPI_LOGICAL: %d", lo[0]);

    /* pairs: the value, then the index, of the pair's own type */
    int p2[2] = {rank % 2, rank}, po2[2];
    CHECK_MPI(MPI_Allreduce(p2, po2, 1, MPI_2INTEGER, MPI_MAXLOC, MPI_COMM_WORLD));
    CHECK(po2[0] == (size > 1) && po2[1] == (size > 1), "MAXLOC MPI_2INTEGER: %d %d", po2[0],
          po2[1]);
    float pr[2] = {(float)(size - rank), (float)rank}, por[2];
    CHECK_MPI(MPI_Allreduce(pr, por, 1, MPI_2REAL, MPI_MINLOC, MPI_COMM_WORLD));
    CHECK(por[0] == 1.0f && por[1] == (float)(size - 1), "MINLOC MPI_2REAL: %g %g", (double)por[0],
          (double)por[1]);
    double pd[4] = {5.0, (double)rank, (double)(rank % 3), (double)(size - rank)}, pod[4];
    CHECK_MPI(MPI_Allreduce(pd, pod, 2, MPI_2DOUBLE_PRECISION, MPI_MINLOC, MPI_COMM_WORLD));
    CHECK(pod[0] == 5.0 && pod[1] == 0.0, "MINLOC MPI_2DOUBLE_PRECISION tie: %g %g", pod[0],
          pod[1]);
    double wi = 0;
    for (int r = 0; r < size; r++)
        if (r % 3 == 0)
            wi = size - r; /* the smallest index of the ranks holding the minimum 0 */
    CHECK(pod[2] == 0.0 && pod[3] == wi, "MINLOC MPI_2DOUBLE_PRECISION: %g %g, expected 0 %g",
          pod[2], pod[3], wi);
    double lp[2] = {1.0, 2.0}, lq[2] = {1.0, 7.0};
    CHECK_MPI(MPI_Reduce_local(lp, lq, 1, MPI_2DOUBLE_PRECISION, MPI_MAXLOC));
    CHECK(lq[0] == 1.0 && lq[1] == 2.0, "Reduce_local MAXLOC MPI_2DOUBLE_PRECISION: %g %g", lq[0],
          lq[1]);

    /* ops MPI does not define for the type */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc, cls = -1;
    if (!mtest_is_mpich()) { /* MPICH 4.0 sums characters */
        char cc = 'a', cco;
        rc = MPI_Allreduce(&cc, &cco, 1, MPI_CHARACTER, MPI_SUM, MPI_COMM_WORLD);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_OP, "SUM on MPI_CHARACTER gave %d (class %d), expected MPI_ERR_OP", rc,
              cls);
    }
    rc = MPI_Reduce_local(&c, &co, 1, MPI_COMPLEX, MPI_MAX);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OP, "MAX on MPI_COMPLEX gave %d (class %d), expected MPI_ERR_OP", rc, cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void external32(void)
{
    static const struct {
        MPI_Datatype t;
        const char *name;
        MPI_Aint size;
    } x[] = {
        {MPI_CHARACTER, "MPI_CHARACTER", 1},
        {MPI_LOGICAL, "MPI_LOGICAL", 4},
        {MPI_INTEGER, "MPI_INTEGER", 4},
        {MPI_REAL, "MPI_REAL", 4},
        {MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", 8},
        {MPI_COMPLEX, "MPI_COMPLEX", 8},
        {MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", 16},
        {MPI_INTEGER2, "MPI_INTEGER2", 2},
        {MPI_INTEGER8, "MPI_INTEGER8", 8},
    };
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) {
        MPI_Aint s = -1;
        CHECK_MPI(MPI_Pack_external_size("external32", 3, x[i].t, &s));
        CHECK(s == 3 * x[i].size, "external32 size of 3 %s: %ld", x[i].name, (long)s);
    }
    /* an MPI_INTEGER round trip through external32 is big-endian */
    int v = 0x01020304, back = 0;
    unsigned char buf[4];
    MPI_Aint pos = 0;
    CHECK_MPI(MPI_Pack_external("external32", &v, 1, MPI_INTEGER, buf, 4, &pos));
    CHECK(buf[0] == 1 && buf[3] == 4, "external32 MPI_INTEGER bytes %d %d", buf[0], buf[3]);
    pos = 0;
    CHECK_MPI(MPI_Unpack_external("external32", buf, 4, &pos, &back, 1, MPI_INTEGER));
    CHECK(back == v, "external32 MPI_INTEGER round trip: %x", back);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "type_fortran");
    rank = mtest_rank_;
    size = mtest_size_;
    sizes();
    messages();
    reductions();
    external32();
    return mtest_finalize();
}
