/*
 * type_markers: the bounds markers MPI_LB and MPI_UB (MPI 2.2 4.1.6) and
 * the pair types.
 *
 *  1. MPI_LB and MPI_UB have no data, size 0 and extent 0.
 *  2. In a struct (MPI_Type_struct and MPI_Type_create_struct) the lowest
 *     MPI_LB and the highest MPI_UB set the bounds, whatever the block
 *     length and the other parts; without an MPI_UB the extent of the parts
 *     is rounded up to their alignment; explicit bounds of a part (markers,
 *     resized) are its bounds in the types built on it, so they stay in
 *     effect through contiguous, vector and struct.
 *  3. Messages of marker types: a struct with an MPI_UB used as a stride.
 *  4. Pair types travel as value then index, without padding: a struct of
 *     {double, int, double, int} received as two MPI_DOUBLE_INT gives 4
 *     basic elements (MPI_Get_elements), three of them 3 and an undefined
 *     count; MPI_SHORT_INT lands at its fields; MAXLOC/MINLOC on the pair
 *     types in Allreduce and Reduce_local.
 *  5. An hindexed type whose zero-length blocks lie at huge displacements
 *     has the bounds of its data, and a struct of it works.
 */
#include <limits.h>

#include "mtest.h"

static int rank, size;

static void bounds(MPI_Datatype t, const char *what, long sz, long lb, long ext)
{
    int s;
    MPI_Aint l, e;
    CHECK_MPI(MPI_Type_size(t, &s));
    CHECK_MPI(MPI_Type_get_extent(t, &l, &e));
    CHECK(s == sz && l == lb && e == ext, "%s: size %d lb %ld extent %ld; expected %ld %ld %ld",
          what, s, (long)l, (long)e, sz, lb, ext);
}

static MPI_Datatype make_struct(int n, const int *bl, const MPI_Aint *d, const MPI_Datatype *t)
{
    MPI_Datatype r = MPI_DATATYPE_NULL;
    CHECK_MPI(MPI_Type_create_struct(n, bl, d, t, &r));
    return r;
}

static void markers(void)
{
    bounds(MPI_LB, "MPI_LB", 0, 0, 0);
    bounds(MPI_UB, "MPI_UB", 0, 0, 0);
    int one[3] = {1, 1, 1};

    /* {LB at -3, int at 0, UB at 20}, old and new constructor */
    MPI_Aint d1[3] = {-3, 0, 20};
    MPI_Datatype t1[3] = {MPI_LB, MPI_INT, MPI_UB}, a, a_old, c2, v;
    a = make_struct(3, one, d1, t1);
    bounds(a, "struct{LB -3, int 0, UB 20}", 4, -3, 23);
    CHECK_MPI(MPI_Type_struct(3, one, d1, t1, &a_old));
    bounds(a_old, "MPI_Type_struct{LB -3, int 0, UB 20}", 4, -3, 23);
    MPI_Aint lb, ub, ext, tlb, text;
    CHECK_MPI(MPI_Type_lb(a_old, &lb));
    CHECK_MPI(MPI_Type_ub(a_old, &ub));
    CHECK_MPI(MPI_Type_extent(a_old, &ext));
    CHECK(lb == -3 && ub == 20 && ext == 23, "Type_lb/ub/extent %ld %ld %ld", (long)lb, (long)ub,
          (long)ext);
    CHECK_MPI(MPI_Type_get_true_extent(a, &tlb, &text));
    CHECK(tlb == 0 && text == 4, "true extent of the marked struct: %ld %ld", (long)tlb,
          (long)text);
    /* sticky through contiguous and vector */
    CHECK_MPI(MPI_Type_contiguous(2, a, &c2));
    bounds(c2, "contiguous(2) of it", 8, -3, 46);
    CHECK_MPI(MPI_Type_get_true_extent(c2, &tlb, &text));
    CHECK(tlb == 0 && text == 27, "true extent of contiguous(2): %ld %ld", (long)tlb, (long)text);
    CHECK_MPI(MPI_Type_vector(2, 1, 2, a, &v));
    bounds(v, "vector(2, 1, 2) of it", 8, -3, 69);
    /* in a struct, a part's bounds count like any part's */
    {
        int bl[2] = {1, 1};
        MPI_Aint d[2] = {0, 100};
        MPI_Datatype t[2] = {a, MPI_DOUBLE};
        MPI_Datatype s = make_struct(2, bl, d, t);
        bounds(s, "struct{marked 0, double 100}", 12, -3, 112);
        MPI_Type_free(&s);
    }
    MPI_Type_free(&v);
    MPI_Type_free(&c2);
    MPI_Type_free(&a_old);

    /* an MPI_LB above the data, an MPI_UB below it */
    {
        MPI_Aint d[2] = {4, 9};
        MPI_Datatype t[2] = {MPI_INT, MPI_UB};
        MPI_Datatype s = make_struct(2, one, d, t);
        bounds(s, "struct{int 4, UB 9} (no padding)", 4, 4, 5);
        MPI_Type_free(&s);
    }
    {
        MPI_Aint d[1] = {7};
        MPI_Datatype t[1] = {MPI_UB};
        MPI_Datatype s = make_struct(1, one, d, t);
        bounds(s, "struct{UB 7}", 0, 0, 7);
        MPI_Type_free(&s);
    }
    /* an MPI_UB of block length 0 is still a marker */
    {
        int bl[2] = {1, 0};
        MPI_Aint d[2] = {0, 100};
        MPI_Datatype t[2] = {MPI_INT, MPI_UB};
        MPI_Datatype s = make_struct(2, bl, d, t);
        bounds(s, "struct{int 0, UB 100 (block length 0)}", 4, 0, 100);
        MPI_Type_free(&s);
    }
    /* padding is computed on the parts, before an MPI_LB applies */
    {
        MPI_Aint d[3] = {0, 8, 0};
        MPI_Datatype t[3] = {MPI_DOUBLE, MPI_CHAR, MPI_LB};
        MPI_Datatype s = make_struct(3, one, d, t);
        bounds(s, "struct{double 0, char 8, LB 0}", 9, 0, 16);
        MPI_Type_free(&s);
    }
    {
        MPI_Aint d[2] = {0, 2};
        MPI_Datatype t[2] = {MPI_LB, MPI_INT};
        MPI_Datatype s = make_struct(2, one, d, t);
        bounds(s, "struct{LB 0, int 2}", 4, 0, 6);
        MPI_Type_free(&s);
    }
    {
        MPI_Aint d[2] = {-4, 0};
        MPI_Datatype t[2] = {MPI_LB, MPI_INT}, l;
        l = make_struct(2, one, d, t);
        bounds(l, "struct{LB -4, int 0}", 4, -4, 8);
        MPI_Aint d2[2] = {0, -2};
        MPI_Datatype t2[2] = {l, MPI_LB};
        MPI_Datatype s = make_struct(2, one, d2, t2);
        bounds(s, "struct{that 0, LB -2}", 4, -2, 6);
        MPI_Type_free(&s);
        MPI_Aint d3[2] = {0, -10};
        MPI_Datatype t3[2] = {l, MPI_CHAR};
        s = make_struct(2, one, d3, t3);
        bounds(s, "struct{that 0, char -10}", 5, -10, 16);
        MPI_Type_free(&s);
        MPI_Type_free(&l);
    }
    /* explicit upper bounds of every part: no padding; else padding */
    {
        MPI_Datatype r5, s;
        CHECK_MPI(MPI_Type_create_resized(MPI_INT, 0, 5, &r5));
        MPI_Aint d[2] = {0, 0};
        MPI_Datatype t[2] = {r5, MPI_CHAR};
        s = make_struct(1, one, d, t);
        bounds(s, "struct{resized(int, 0, 5)}", 4, 0, 5);
        MPI_Type_free(&s);
        s = make_struct(2, one, d, t);
        bounds(s, "struct{resized(int, 0, 5), char}", 5, 0, 8);
        MPI_Type_free(&s);
        MPI_Type_free(&r5);
    }
    /* contiguous of a marker alone */
    {
        MPI_Datatype m;
        CHECK_MPI(MPI_Type_contiguous(4, MPI_UB, &m));
        bounds(m, "contiguous(4, MPI_UB)", 0, 0, 0);
        MPI_Type_free(&m);
    }
    MPI_Type_free(&a);
}

/* Ints 8 bytes apart through a struct whose MPI_UB sets the stride. */
static void messages(void)
{
    int one[2] = {1, 1};
    MPI_Aint d[2] = {0, 2 * sizeof(int)};
    MPI_Datatype t[2] = {MPI_INT, MPI_UB}, s;
    s = make_struct(2, one, d, t);
    CHECK_MPI(MPI_Type_commit(&s));
    bounds(s, "struct{int 0, UB 8}", 4, 0, 8);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[6], in[6], packed[3];
    for (int i = 0; i < 6; i++) {
        out[i] = rank * 100 + i;
        in[i] = -1;
    }
    MPI_Status st;
    CHECK_MPI(MPI_Sendrecv(out, 3, s, right, 1, packed, 3, MPI_INT, left, 1, MPI_COMM_WORLD, &st));
    for (int i = 0; i < 3; i++)
        CHECK_INT(packed[i], left * 100 + 2 * i, "strided int received contiguous");
    CHECK_MPI(MPI_Sendrecv(out, 3, MPI_INT, right, 2, in, 3, s, left, 2, MPI_COMM_WORLD, &st));
    for (int i = 0; i < 6; i++)
        CHECK_INT(in[i], i % 2 ? -1 : left * 100 + i / 2, "contiguous int received strided");
    int n;
    CHECK_MPI(MPI_Get_elements(&st, s, &n));
    CHECK_INT(n, 3, "Get_elements of the marked struct");
    CHECK_MPI(MPI_Get_count(&st, s, &n));
    CHECK_INT(n, 3, "Get_count of the marked struct");
    MPI_Type_free(&s);
}

static void pairs(void)
{
    struct dint {
        double a;
        int b;
        double c;
        int d;
    } foo = {1.5, 7, 2.5, 9};
    struct {
        double v;
        int i;
    } bar[2];
    int bl[4] = {1, 1, 1, 1};
    MPI_Aint d[4] = {offsetof(struct dint, a), offsetof(struct dint, b), offsetof(struct dint, c),
                     offsetof(struct dint, d)};
    MPI_Datatype t[4] = {MPI_DOUBLE, MPI_INT, MPI_DOUBLE, MPI_INT}, st4, st3;
    st4 = make_struct(4, bl, d, t);
    st3 = make_struct(3, bl, d, t);
    CHECK_MPI(MPI_Type_commit(&st4));
    CHECK_MPI(MPI_Type_commit(&st3));
    MPI_Status s;
    int n;
    memset(bar, 0, sizeof bar);
    CHECK_MPI(MPI_Sendrecv(&foo, 1, st4, 0, 3, bar, 2, MPI_DOUBLE_INT, 0, 3, MPI_COMM_SELF, &s));
    CHECK(bar[0].v == 1.5 && bar[0].i == 7 && bar[1].v == 2.5 && bar[1].i == 9,
          "struct received as MPI_DOUBLE_INT: %g %d %g %d", bar[0].v, bar[0].i, bar[1].v, bar[1].i);
    CHECK_MPI(MPI_Get_elements(&s, MPI_DOUBLE_INT, &n));
    CHECK_INT(n, 4, "Get_elements of 2 MPI_DOUBLE_INT");
    CHECK_MPI(MPI_Get_count(&s, MPI_DOUBLE_INT, &n));
    CHECK_INT(n, 2, "Get_count of 2 MPI_DOUBLE_INT");
    CHECK_MPI(MPI_Sendrecv(&foo, 1, st3, 0, 4, bar, 2, MPI_DOUBLE_INT, 0, 4, MPI_COMM_SELF, &s));
    CHECK_MPI(MPI_Get_elements(&s, MPI_DOUBLE_INT, &n));
    CHECK_INT(n, 3, "Get_elements of 1.5 MPI_DOUBLE_INT");
    CHECK_MPI(MPI_Get_count(&s, MPI_DOUBLE_INT, &n));
    CHECK_INT(n, MPI_UNDEFINED, "Get_count of 1.5 MPI_DOUBLE_INT");
    /* MPICH 4.0 takes the count of MPI_Status_set_elements as whole pairs. */
    if (!mtest_is_mpich()) {
        CHECK_MPI(MPI_Status_set_elements(&s, MPI_DOUBLE_INT, 3));
        CHECK_MPI(MPI_Get_elements(&s, MPI_DOUBLE_INT, &n));
        CHECK_INT(n, 3, "Get_elements after Status_set_elements(3)");
    }
    MPI_Type_free(&st4);
    MPI_Type_free(&st3);

    int sz;
    MPI_Aint lb, ext;
    CHECK_MPI(MPI_Type_size(MPI_SHORT_INT, &sz));
    CHECK_INT(sz, sizeof(short) + sizeof(int), "size of MPI_SHORT_INT");
    struct {
        short v;
        int i;
    } si[3], so[3];
    CHECK_MPI(MPI_Type_get_extent(MPI_SHORT_INT, &lb, &ext));
    CHECK_INT(ext, sizeof si[0], "extent of MPI_SHORT_INT");
    for (int k = 0; k < 3; k++) {
        so[k].v = (short)(rank + k);
        so[k].i = 10 * rank + k;
    }
    memset(si, 0, sizeof si);
    CHECK_MPI(MPI_Sendrecv(so, 3, MPI_SHORT_INT, (rank + 1) % size, 5, si, 3, MPI_SHORT_INT,
                           (rank + size - 1) % size, 5, MPI_COMM_WORLD, &s));
    int left = (rank + size - 1) % size;
    for (int k = 0; k < 3; k++)
        CHECK(si[k].v == left + k && si[k].i == 10 * left + k, "MPI_SHORT_INT %d: %d %d", k,
              si[k].v, si[k].i);
    CHECK_MPI(MPI_Get_elements(&s, MPI_SHORT_INT, &n));
    CHECK_INT(n, 6, "Get_elements of 3 MPI_SHORT_INT");

    /* MAXLOC / MINLOC with values that tie on some ranks. */
    struct {
        double v;
        int i;
    } dv[2], dr[2];
    dv[0].v = rank % 3;
    dv[0].i = rank;
    dv[1].v = -(double)(rank % 2);
    dv[1].i = rank;
    CHECK_MPI(MPI_Allreduce(dv, dr, 2, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD));
    double mx = size >= 3 ? 2 : size - 1;
    CHECK(dr[0].v == mx && dr[0].i == (int)mx, "MAXLOC DOUBLE_INT [0]: %g at %d", dr[0].v, dr[0].i);
    CHECK(dr[1].v == 0 && dr[1].i == 0, "MAXLOC DOUBLE_INT [1]: %g at %d", dr[1].v, dr[1].i);
    CHECK_MPI(MPI_Allreduce(dv, dr, 2, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD));
    CHECK(dr[0].v == 0 && dr[0].i == 0, "MINLOC DOUBLE_INT [0]: %g at %d", dr[0].v, dr[0].i);
    double mn = size > 1 ? -1 : 0;
    CHECK(dr[1].v == mn && dr[1].i == (size > 1 ? 1 : 0), "MINLOC DOUBLE_INT [1]: %g at %d",
          dr[1].v, dr[1].i);
    struct {
        short v;
        int i;
    } sv = {(short)(rank % 4), rank}, sr;
    CHECK_MPI(MPI_Allreduce(&sv, &sr, 1, MPI_SHORT_INT, MPI_MAXLOC, MPI_COMM_WORLD));
    int smax = size >= 4 ? 3 : size - 1;
    CHECK(sr.v == smax && sr.i == smax, "MAXLOC SHORT_INT: %d at %d", sr.v, sr.i);
    struct {
        long double v;
        int i;
    } lv = {(long double)(size - rank), rank}, lr;
    CHECK_MPI(MPI_Allreduce(&lv, &lr, 1, MPI_LONG_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD));
    CHECK(lr.v == 1 && lr.i == size - 1, "MINLOC LONG_DOUBLE_INT: %Lg at %d", lr.v, lr.i);
    /* Reduce_local on the pair types, value and index in the buffer's layout */
    struct {
        double v;
        int i;
    } in[2] = {{3.0, 4}, {1.0, 2}}, io[2] = {{3.0, 1}, {2.0, 5}};
    CHECK_MPI(MPI_Reduce_local(in, io, 2, MPI_DOUBLE_INT, MPI_MINLOC));
    CHECK(io[0].v == 3.0 && io[0].i == 1 && io[1].v == 1.0 && io[1].i == 2,
          "Reduce_local MINLOC DOUBLE_INT: %g %d %g %d", io[0].v, io[0].i, io[1].v, io[1].i);
    struct {
        short v;
        int i;
    } a2 = {5, 9}, b2 = {5, 3};
    CHECK_MPI(MPI_Reduce_local(&a2, &b2, 1, MPI_SHORT_INT, MPI_MAXLOC));
    CHECK(b2.v == 5 && b2.i == 3, "Reduce_local MAXLOC SHORT_INT: %d %d", b2.v, b2.i);
}

/* Zero-length blocks at huge displacements add nothing. */
static void zero_blocks(void)
{
    int len[3] = {0, 4, 0};
    MPI_Aint d[3] = {(MPI_Aint)(INTPTR_MAX / 2), 2 * sizeof(int), (MPI_Aint)(INTPTR_MAX / 2)};
    MPI_Datatype h, s;
    CHECK_MPI(MPI_Type_create_hindexed(3, len, d, MPI_INT, &h));
    CHECK_MPI(MPI_Type_commit(&h));
    bounds(h, "hindexed with zero-length blocks far away", 16, 8, 16);
    int bl[2] = {1, 1};
    MPI_Aint sd[2] = {0, 8 * sizeof(int)};
    MPI_Datatype st[2] = {h, MPI_INT};
    s = make_struct(2, bl, sd, st);
    CHECK_MPI(MPI_Type_commit(&s));
    bounds(s, "struct of it and an int", 20, 8, 28);
    int buf[10], pk[5], pos = 0, psz;
    for (int i = 0; i < 10; i++)
        buf[i] = i + 1;
    CHECK_MPI(MPI_Pack_size(1, s, MPI_COMM_SELF, &psz));
    CHECK_INT(psz, 20, "Pack_size of the struct");
    CHECK_MPI(MPI_Pack(buf, 1, s, pk, (int)sizeof pk, &pos, MPI_COMM_SELF));
    CHECK_INT(pos, 20, "packed bytes");
    memset(buf, 0, sizeof buf);
    pos = 0;
    CHECK_MPI(MPI_Unpack(pk, (int)sizeof pk, &pos, buf, 1, s, MPI_COMM_SELF));
    for (int i = 0; i < 10; i++)
        CHECK_INT(buf[i], (i >= 2 && i < 6) || i == 8 ? i + 1 : 0, "unpacked int");
    MPI_Type_free(&s);
    MPI_Type_free(&h);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "type_markers");
    rank = mtest_rank_;
    size = mtest_size_;
    markers();
    messages();
    pairs();
    zero_blocks();
    return mtest_finalize();
}
