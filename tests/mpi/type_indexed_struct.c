/*
 * type_indexed_struct: indexed, hindexed, indexed_block, hindexed_block and
 * struct datatypes, struct types of absolute addresses used with MPI_BOTTOM,
 * and types nested in one another, in point-to-point and collectives.
 *
 * Every exchange goes around a ring with MPI_Sendrecv; the receive side uses
 * either contiguous basic elements (to check the order of the type map) or
 * the same type over a buffer full of sentinels (to check that gaps stay
 * untouched).
 */
#include "mtest.h"

static int rank, size, right, left;

static MPI_Status st;

static void test_indexed(void)
{
    /* Blocks out of order, one empty: type map a5 a6 a0 a1 a2 a9. */
    int bl[4] = {2, 0, 3, 1}, dp[4] = {5, 1, 0, 9};
    MPI_Datatype t;
    CHECK_MPI(MPI_Type_indexed(4, bl, dp, MPI_INT, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    int sz;
    MPI_Aint lb, ext;
    MPI_Type_size(t, &sz);
    MPI_Type_get_extent(t, &lb, &ext);
    CHECK_INT(sz, 6 * (int)sizeof(int), "indexed size");
    CHECK_INT(lb, 0, "indexed lb");
    CHECK_INT(ext, 10 * (long)sizeof(int), "indexed extent");

    int a[20], c[12], b[20];
    for (int i = 0; i < 20; i++) {
        a[i] = rank * 100 + i;
        b[i] = -1;
    }
    CHECK_MPI(MPI_Sendrecv(a, 2, t, right, 1, c, 12, MPI_INT, left, 1, MPI_COMM_WORLD, &st));
    int order[6] = {5, 6, 0, 1, 2, 9};
    for (int e = 0; e < 2; e++)
        for (int i = 0; i < 6; i++)
            CHECK_INT(c[e * 6 + i], left * 100 + e * 10 + order[i], "indexed type map order");
    CHECK_MPI(MPI_Sendrecv(a, 2, t, right, 2, b, 2, t, left, 2, MPI_COMM_WORLD, &st));
    for (int i = 0; i < 20; i++) {
        int k = i % 10;
        int in = k == 0 || k == 1 || k == 2 || k == 5 || k == 6 || k == 9;
        CHECK_INT(b[i], in ? left * 100 + i : -1, "indexed -> indexed");
    }
    int n;
    MPI_Get_count(&st, t, &n);
    CHECK_INT(n, 2, "Get_count(indexed)");
    MPI_Get_elements(&st, t, &n);
    CHECK_INT(n, 12, "Get_elements(indexed)");
    MPI_Type_free(&t);
}

static void test_hindexed(void)
{
    /* Doubles at bytes 0, 24 and a pair at 8: type map d0 d3 d1 d2. */
    int bl[3] = {1, 1, 2};
    MPI_Aint dp[3] = {0, 3 * sizeof(double), sizeof(double)};
    MPI_Datatype t;
    CHECK_MPI(MPI_Type_create_hindexed(3, bl, dp, MPI_DOUBLE, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    CHECK_INT(ext, 4 * (long)sizeof(double), "hindexed extent");
    double a[8], c[8];
    for (int i = 0; i < 8; i++)
        a[i] = rank + i / 10.0;
    CHECK_MPI(MPI_Sendrecv(a, 2, t, right, 3, c, 8, MPI_DOUBLE, left, 3, MPI_COMM_WORLD, &st));
    int order[4] = {0, 3, 1, 2};
    for (int e = 0; e < 2; e++)
        for (int i = 0; i < 4; i++)
            CHECK(c[e * 4 + i] == left + (e * 4 + order[i]) / 10.0, "hindexed order: c[%d] = %g",
                  e * 4 + i, c[e * 4 + i]);
    MPI_Type_free(&t);
}

static void test_indexed_block(void)
{
    int dp[3] = {4, 0, 7};
    MPI_Datatype t, h;
    CHECK_MPI(MPI_Type_create_indexed_block(3, 2, dp, MPI_INT, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    CHECK_INT(ext, 9 * (long)sizeof(int), "indexed_block extent");
    int a[9], c[6];
    for (int i = 0; i < 9; i++)
        a[i] = rank * 10 + i;
    CHECK_MPI(MPI_Sendrecv(a, 1, t, right, 4, c, 6, MPI_INT, left, 4, MPI_COMM_WORLD, &st));
    int order[6] = {4, 5, 0, 1, 7, 8};
    for (int i = 0; i < 6; i++)
        CHECK_INT(c[i], left * 10 + order[i], "indexed_block order");

    MPI_Aint hd[2] = {2 * sizeof(double), 0};
    CHECK_MPI(MPI_Type_create_hindexed_block(2, 1, hd, MPI_DOUBLE, &h));
    CHECK_MPI(MPI_Type_commit(&h));
    MPI_Type_get_extent(h, &lb, &ext);
    CHECK_INT(ext, 3 * (long)sizeof(double), "hindexed_block extent");
    double d[3] = {rank + 0.5, -7.0, rank + 0.25}, e[2];
    CHECK_MPI(MPI_Sendrecv(d, 1, h, right, 5, e, 2, MPI_DOUBLE, left, 5, MPI_COMM_WORLD, &st));
    CHECK(e[0] == left + 0.25 && e[1] == left + 0.5, "hindexed_block: got %g %g", e[0], e[1]);
    MPI_Type_free(&t);
    MPI_Type_free(&h);
}

typedef struct {
    int id;
    double x[3];
    char tag;
} particle_t;

static MPI_Datatype particle_type(void)
{
    static particle_t p;
    MPI_Aint base, d[3];
    MPI_Get_address(&p, &base);
    MPI_Get_address(&p.id, &d[0]);
    MPI_Get_address(&p.x[0], &d[1]);
    MPI_Get_address(&p.tag, &d[2]);
    for (int i = 0; i < 3; i++)
        d[i] = MPI_Aint_diff(d[i], base);
    int bl[3] = {1, 3, 1};
    MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, t;
    CHECK_MPI(MPI_Type_create_struct(3, bl, d, ty, &t));
    return t;
}

static void fill_particle(particle_t *p, int r, int i)
{
    memset(p, 0, sizeof *p);
    p->id = r * 1000 + i;
    for (int k = 0; k < 3; k++)
        p->x[k] = r + i * 0.5 + k * 0.125;
    p->tag = (char)('a' + (r + i) % 26);
}

static int same_particle(const particle_t *a, const particle_t *b)
{
    return a->id == b->id && a->x[0] == b->x[0] && a->x[1] == b->x[1] && a->x[2] == b->x[2] &&
           a->tag == b->tag;
}

static void test_struct(void)
{
    MPI_Datatype t = particle_type();
    CHECK_MPI(MPI_Type_commit(&t));
    int sz;
    MPI_Aint lb, ext;
    MPI_Type_size(t, &sz);
    MPI_Type_get_extent(t, &lb, &ext);
    CHECK_INT(sz, (int)(sizeof(int) + 3 * sizeof(double) + 1), "struct size");
    /* The extent is padded to the alignment of double: sizeof the C struct. */
    CHECK_INT(ext, (long)sizeof(particle_t), "struct extent");
    enum { N = 4 };
    particle_t a[N], b[N], want;
    for (int i = 0; i < N; i++) {
        fill_particle(&a[i], rank, i);
        memset(&b[i], 0, sizeof b[i]);
    }
    CHECK_MPI(MPI_Sendrecv(a, N, t, right, 6, b, N, t, left, 6, MPI_COMM_WORLD, &st));
    for (int i = 0; i < N; i++) {
        fill_particle(&want, left, i);
        CHECK(same_particle(&b[i], &want), "struct particle %d: id %d tag %c", i, b[i].id,
              b[i].tag);
    }
    int n;
    MPI_Get_elements(&st, t, &n);
    CHECK_INT(n, 5 * N, "Get_elements(struct)");

    /* Allgather one particle per rank. */
    particle_t *all = calloc((size_t)size, sizeof *all);
    CHECK_MPI(MPI_Allgather(&a[1], 1, t, all, 1, t, MPI_COMM_WORLD));
    for (int r = 0; r < size; r++) {
        fill_particle(&want, r, 1);
        if (!same_particle(&all[r], &want)) {
            CHECK(0, "allgather particle of rank %d: id %d", r, all[r].id);
            break;
        }
    }
    free(all);
    MPI_Type_free(&t);
}

/* A struct of absolute addresses: three unrelated variables, MPI_BOTTOM. */
static void test_bottom(void)
{
    int i1 = rank, i2 = -1;
    double d1[2] = {rank * 2.0, rank * 3.0}, d2[2] = {0, 0};
    char c1[3] = {'x', 'y', (char)('0' + rank % 10)}, c2[3] = {0, 0, 0};
    MPI_Aint a1[3], a2[3];
    MPI_Get_address(&i1, &a1[0]);
    MPI_Get_address(d1, &a1[1]);
    MPI_Get_address(c1, &a1[2]);
    MPI_Get_address(c2, &a2[0]); /* receive variables, in another memory order */
    MPI_Get_address(&i2, &a2[1]);
    MPI_Get_address(d2, &a2[2]);
    int bl1[3] = {1, 2, 3};
    MPI_Datatype ty1[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    MPI_Datatype s, r, rr;
    CHECK_MPI(MPI_Type_create_struct(3, bl1, a1, ty1, &s));
    CHECK_MPI(MPI_Type_commit(&s));
    /* Same signature: int, 2 doubles, 3 chars; receive with a struct whose
     * blocks are listed so that the type map follows the signature. */
    int blr[3] = {1, 2, 3};
    MPI_Aint ar[3] = {a2[1], a2[2], a2[0]};
    MPI_Datatype tyr[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    CHECK_MPI(MPI_Type_create_struct(3, blr, ar, tyr, &r));
    CHECK_MPI(MPI_Type_commit(&r));
    CHECK_MPI(
        MPI_Sendrecv(MPI_BOTTOM, 1, s, right, 7, MPI_BOTTOM, 1, r, left, 7, MPI_COMM_WORLD, &st));
    CHECK_INT(i2, left, "MPI_BOTTOM int");
    CHECK(d2[0] == left * 2.0 && d2[1] == left * 3.0, "MPI_BOTTOM doubles %g %g", d2[0], d2[1]);
    CHECK(c2[0] == 'x' && c2[1] == 'y' && c2[2] == (char)('0' + left % 10),
          "MPI_BOTTOM chars %c%c%c", c2[0], c2[1], c2[2]);

    /* A dup of the absolute type broadcast from rank 0. */
    CHECK_MPI(MPI_Type_dup(r, &rr));
    i2 = -1;
    d2[0] = d2[1] = 0;
    memset(c2, 0, sizeof c2);
    if (rank == 0) {
        i2 = 42;
        d2[0] = 1.5;
        d2[1] = 2.5;
        memcpy(c2, "abc", 3);
    }
    CHECK_MPI(MPI_Bcast(MPI_BOTTOM, 1, rr, 0, MPI_COMM_WORLD));
    CHECK(i2 == 42 && d2[0] == 1.5 && d2[1] == 2.5 && memcmp(c2, "abc", 3) == 0,
          "MPI_BOTTOM bcast: %d %g %g", i2, d2[0], d2[1]);
    MPI_Type_free(&s);
    MPI_Type_free(&r);
    MPI_Type_free(&rr);
}

/* Types built from derived types. */
static void test_nested(void)
{
    MPI_Datatype p = particle_type(), pv, piv, mix;
    CHECK_MPI(MPI_Type_commit(&p));
    /* 3 blocks of 2 particles, 4 particles apart. */
    CHECK_MPI(MPI_Type_vector(3, 2, 4, p, &pv));
    CHECK_MPI(MPI_Type_commit(&pv));
    MPI_Aint lb, ext;
    MPI_Type_get_extent(pv, &lb, &ext);
    CHECK_INT(ext, 10 * (long)sizeof(particle_t), "vector of struct extent");
    particle_t a[10], b[6], want;
    for (int i = 0; i < 10; i++)
        fill_particle(&a[i], rank, i);
    memset(b, 0, sizeof b);
    CHECK_MPI(MPI_Sendrecv(a, 1, pv, right, 8, b, 6, p, left, 8, MPI_COMM_WORLD, &st));
    int idx[6] = {0, 1, 4, 5, 8, 9};
    for (int i = 0; i < 6; i++) {
        fill_particle(&want, left, idx[i]);
        CHECK(same_particle(&b[i], &want), "vector of struct item %d: id %d", i, b[i].id);
    }
    int n;
    MPI_Get_elements(&st, pv, &n);
    CHECK_INT(n, 30, "Get_elements(vector of struct)");
    MPI_Get_count(&st, pv, &n);
    CHECK_INT(n, 1, "Get_count(vector of struct)");

    /* Indexed over that vector: elements 1 then 0 of a 2-element array. */
    int bl[2] = {1, 1}, dp[2] = {1, 0};
    CHECK_MPI(MPI_Type_indexed(2, bl, dp, pv, &piv));
    CHECK_MPI(MPI_Type_commit(&piv));
    particle_t big[20], out[12];
    for (int i = 0; i < 20; i++)
        fill_particle(&big[i], rank, i);
    memset(out, 0, sizeof out);
    CHECK_MPI(MPI_Sendrecv(big, 1, piv, right, 9, out, 12, p, left, 9, MPI_COMM_WORLD, &st));
    for (int i = 0; i < 12; i++) {
        int src = (i < 6 ? 10 : 0) + idx[i % 6];
        fill_particle(&want, left, src);
        CHECK(same_particle(&out[i], &want), "indexed of vector item %d: id %d, expected %d", i,
              out[i].id, want.id);
    }

    /* A struct mixing a vector of ints and a resized double. */
    MPI_Datatype iv, dr;
    MPI_Type_vector(2, 1, 3, MPI_INT, &iv);                          /* ints 0 and 3 */
    MPI_Type_create_resized(MPI_DOUBLE, 0, 2 * sizeof(double), &dr); /* every other double */
    static struct {
        int i[4];
        double d[6];
    } sa, sb;
    MPI_Aint base, d[2];
    MPI_Get_address(&sa, &base);
    MPI_Get_address(&sa.i, &d[0]);
    MPI_Get_address(&sa.d, &d[1]);
    d[0] -= base;
    d[1] -= base;
    int bl2[2] = {1, 3};
    MPI_Datatype ty[2] = {iv, dr};
    CHECK_MPI(MPI_Type_create_struct(2, bl2, d, ty, &mix));
    CHECK_MPI(MPI_Type_commit(&mix));
    MPI_Type_free(&iv);
    MPI_Type_free(&dr);
    for (int k = 0; k < 4; k++)
        sa.i[k] = rank * 10 + k;
    for (int k = 0; k < 6; k++)
        sa.d[k] = rank + k * 0.25;
    memset(&sb, 0, sizeof sb);
    CHECK_MPI(MPI_Sendrecv(&sa, 1, mix, right, 10, &sb, 1, mix, left, 10, MPI_COMM_WORLD, &st));
    CHECK(sb.i[0] == left * 10 && sb.i[3] == left * 10 + 3 && sb.i[1] == 0 && sb.i[2] == 0,
          "mixed struct ints %d %d %d %d", sb.i[0], sb.i[1], sb.i[2], sb.i[3]);
    for (int k = 0; k < 6; k++) {
        double w = k % 2 == 0 ? left + k * 0.25 : 0.0;
        CHECK(sb.d[k] == w, "mixed struct d[%d] = %g, expected %g", k, sb.d[k], w);
    }
    MPI_Get_elements(&st, mix, &n);
    CHECK_INT(n, 5, "Get_elements(mixed struct)");

    /* Gatherv of the mixed type into an array of such structs at root. */
    int *cnts = malloc((size_t)size * sizeof(int)), *dsp = malloc((size_t)size * sizeof(int));
    MPI_Aint mlb, mext;
    MPI_Type_get_extent(mix, &mlb, &mext);
    CHECK(mext >= (MPI_Aint)(4 * sizeof(int)), "mixed struct extent %ld", (long)mext);
    for (int r = 0; r < size; r++) {
        cnts[r] = 1;
        dsp[r] = size - 1 - r; /* reversed */
    }
    char *gath = rank == 0 ? calloc((size_t)size, (size_t)mext) : NULL;
    CHECK_MPI(MPI_Gatherv(&sa, 1, mix, gath, cnts, dsp, mix, 0, MPI_COMM_WORLD));
    if (rank == 0)
        for (int r = 0; r < size; r++) {
            const char *e = gath + (size_t)(size - 1 - r) * (size_t)mext;
            int i0, i3;
            double d0, d4;
            memcpy(&i0, e + d[0], sizeof i0);
            memcpy(&i3, e + d[0] + 3 * sizeof(int), sizeof i3);
            memcpy(&d0, e + d[1], sizeof d0);
            memcpy(&d4, e + d[1] + 4 * sizeof(double), sizeof d4);
            if (i0 != r * 10 || i3 != r * 10 + 3 || d0 != r || d4 != r + 1.0) {
                CHECK(0, "gatherv mixed struct of rank %d: %d %d %g %g", r, i0, i3, d0, d4);
                break;
            }
        }
    free(gath);
    free(cnts);
    free(dsp);
    MPI_Type_free(&mix);
    MPI_Type_free(&piv);
    MPI_Type_free(&pv);
    MPI_Type_free(&p);
}

/* Many small odd-sized records (3 chars and a double: 11 bytes each)
 * sent, broadcast and gathered in amounts larger than any internal buffer,
 * so that the pieces the data moves in split records and blocks. */
typedef struct {
    char c[3];
    double d;
} odd_t;

static void test_large_odd(void)
{
    enum { M = 40000 };
    if (size > 16)
        return;
    static odd_t a[M], b[M];
    MPI_Aint base, dp[2];
    MPI_Get_address(&a[0], &base);
    MPI_Get_address(&a[0].c, &dp[0]);
    MPI_Get_address(&a[0].d, &dp[1]);
    dp[0] -= base;
    dp[1] -= base;
    int bl[2] = {3, 1};
    MPI_Datatype ty[2] = {MPI_CHAR, MPI_DOUBLE}, t;
    CHECK_MPI(MPI_Type_create_struct(2, bl, dp, ty, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    for (int i = 0; i < M; i++) {
        a[i].c[0] = (char)(rank + i);
        a[i].c[1] = (char)(i >> 8);
        a[i].c[2] = (char)(i * 7);
        a[i].d = rank * 1e6 + i;
    }
    memset(b, 0, sizeof b);
    CHECK_MPI(MPI_Sendrecv(a, M, t, right, 11, b, M, t, left, 11, MPI_COMM_WORLD, &st));
    int bad = 0;
    for (int i = 0; i < M && bad < 3; i++)
        if (b[i].c[0] != (char)(left + i) || b[i].c[1] != (char)(i >> 8) ||
            b[i].c[2] != (char)(i * 7) || b[i].d != left * 1e6 + i) {
            CHECK(0, "large odd records: record %d differs", i);
            bad++;
        }
    int n;
    MPI_Get_elements(&st, t, &n);
    CHECK_INT(n, 4 * M, "Get_elements of large odd records");

    /* Broadcast from the last rank. */
    memcpy(b, a, sizeof b);
    CHECK_MPI(MPI_Bcast(b, M, t, size - 1, MPI_COMM_WORLD));
    bad = 0;
    for (int i = 0; i < M && bad < 3; i++)
        if (b[i].c[0] != (char)(size - 1 + i) || b[i].d != (size - 1) * 1e6 + i) {
            CHECK(0, "broadcast odd records: record %d differs", i);
            bad++;
        }

    /* Gather k records of each rank at rank 0 (over 6 KB each: above
     * BDMPI's spill threshold).  MPICH 4.0.2's binomial gather reports
     * truncation when a rank forwards more than about 32 KB of such
     * records, so the total stays at 55 KB. */
    int k = 5000 / size;
    memset(b, 0, sizeof b);
    CHECK_MPI(MPI_Gather(a, k, t, b, k, t, 0, MPI_COMM_WORLD));
    if (rank == 0)
        for (int r = 0, bad2 = 0; r < size && bad2 < 3; r++)
            for (int i = 0; i < k; i++)
                if (b[r * k + i].c[0] != (char)(r + i) || b[r * k + i].d != r * 1e6 + i) {
                    CHECK(0, "gathered odd records of rank %d: record %d differs", r, i);
                    bad2++;
                    break;
                }
    MPI_Type_free(&t);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "type_indexed_struct");
    rank = mtest_rank_;
    size = mtest_size_;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    test_indexed();
    test_hindexed();
    test_indexed_block();
    test_struct();
    test_bottom();
    test_nested();
    test_large_odd();
    return mtest_finalize();
}
