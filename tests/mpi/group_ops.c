/*
 * group_ops: group constructors and queries (MPI 3.1 section 6.3).
 *
 *  1. MPI_Comm_group(MPI_COMM_WORLD): size and rank; MPI_Group_compare with
 *     itself and a second copy is MPI_IDENT.
 *  2. MPI_Group_incl (reversed order, evens), MPI_Group_excl (evens):
 *     sizes, MPI_Group_rank (MPI_UNDEFINED for non-members), and
 *     MPI_Group_translate_ranks to and from the world group, MPI_PROC_NULL
 *     mapping to MPI_PROC_NULL.
 *  3. MPI_Group_range_incl / range_excl with positive and negative strides
 *     and several triplets, compared (IDENT) with the same lists built by
 *     incl/excl.
 *  4. Union, intersection, difference: every result is checked member by
 *     member (through translate_ranks into the world group) against the
 *     order the standard prescribes.
 *  5. MPI_Group_compare: IDENT / SIMILAR / UNEQUAL.
 *  6. Empty results compare MPI_IDENT to MPI_GROUP_EMPTY, have size 0 and
 *     rank MPI_UNDEFINED.
 *  7. The group of a split communicator: size, rank, translation to world.
 *  8. MPI_Group_free sets MPI_GROUP_NULL; a create/free loop.
 */
#include "mtest.h"

static int rank, size;

/* World ranks of the members of g, in group order (caller frees). */
static int *members(MPI_Group g, int *n)
{
    MPI_Group w;
    int *in, *out, i;
    MPI_Group_size(g, n);
    in = malloc(sizeof(int) * (size_t)(*n + 1));
    out = malloc(sizeof(int) * (size_t)(*n + 1));
    for (i = 0; i < *n; i++)
        in[i] = i;
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    MPI_Group_translate_ranks(g, *n, in, w, out);
    MPI_Group_free(&w);
    free(in);
    return out;
}

/* g must hold exactly the world ranks want[0..n-1] in this order. */
static void expect_members(MPI_Group g, const int *want, int n, const char *what)
{
    int got_n = -1, i, myr = -2, expect_r = MPI_UNDEFINED;
    int *got = members(g, &got_n);
    CHECK(got_n == n, "%s: size %d, expected %d", what, got_n, n);
    for (i = 0; i < n && i < got_n; i++)
        CHECK(got[i] == want[i], "%s: member %d is world rank %d, expected %d", what, i, got[i],
              want[i]);
    for (i = 0; i < n; i++)
        if (want[i] == rank)
            expect_r = i;
    MPI_Group_rank(g, &myr);
    CHECK(myr == expect_r, "%s: Group_rank %d, expected %d", what, myr, expect_r);
    free(got);
}

int main(int argc, char **argv)
{
    MPI_Group world, world2, rev, evens, odds, g, h;
    int i, n, res, *list, *list2;

    mtest_init(&argc, &argv, "group_ops");
    rank = mtest_rank_;
    size = mtest_size_;
    list = malloc(sizeof(int) * (size_t)size * 2 + 8);
    list2 = malloc(sizeof(int) * (size_t)size * 2 + 8);

    /* ---- 1. world group ---- */
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_size(world, &n);
    CHECK_INT(n, size, "world group size");
    MPI_Group_rank(world, &i);
    CHECK_INT(i, rank, "world group rank");
    MPI_Comm_group(MPI_COMM_WORLD, &world2);
    MPI_Group_compare(world, world2, &res);
    CHECK_INT(res, MPI_IDENT, "compare(world group, another world group)");
    MPI_Group_compare(world, world, &res);
    CHECK_INT(res, MPI_IDENT, "compare(world group, itself)");
    MPI_Group_free(&world2);
    CHECK(world2 == MPI_GROUP_NULL, "Group_free did not set MPI_GROUP_NULL");

    /* ---- 2. incl / excl / translate ---- */
    for (i = 0; i < size; i++)
        list[i] = size - 1 - i;
    MPI_Group_incl(world, size, list, &rev);
    expect_members(rev, list, size, "incl reversed");
    MPI_Group_compare(world, rev, &res);
    CHECK(res == (size == 1 ? MPI_IDENT : MPI_SIMILAR), "compare(world, reversed) = %d", res);
    {
        int in[3], out[3];
        in[0] = 0;
        in[1] = MPI_PROC_NULL;
        in[2] = size - 1;
        MPI_Group_translate_ranks(rev, 3, in, world, out);
        CHECK(out[0] == size - 1 && out[1] == MPI_PROC_NULL && out[2] == 0,
              "translate rev->world gave %d %d %d", out[0], out[1], out[2]);
    }

    n = 0;
    for (i = 0; i < size; i += 2)
        list[n++] = i;
    MPI_Group_incl(world, n, list, &evens);
    expect_members(evens, list, n, "incl evens");
    MPI_Group_excl(world, n, list, &odds);
    {
        int k = 0;
        for (i = 1; i < size; i += 2)
            list2[k++] = i;
        if (k)
            expect_members(odds, list2, k, "excl evens");
        else {
            MPI_Group_compare(odds, MPI_GROUP_EMPTY, &res);
            CHECK_INT(res, MPI_IDENT, "excl of everything is MPI_GROUP_EMPTY");
        }
    }
    {
        /* world -> evens: odd ranks are not members */
        int *in = malloc(sizeof(int) * (size_t)size), *out = malloc(sizeof(int) * (size_t)size);
        for (i = 0; i < size; i++)
            in[i] = i;
        MPI_Group_translate_ranks(world, size, in, evens, out);
        for (i = 0; i < size; i++)
            CHECK(out[i] == (i % 2 ? MPI_UNDEFINED : i / 2), "translate world %d -> evens: %d", i,
                  out[i]);
        free(in);
        free(out);
    }

    /* ---- 3. ranges ---- */
    {
        int r1[1][3], r3[3][3];
        r1[0][0] = 0;
        r1[0][1] = size - 1;
        r1[0][2] = 2;
        MPI_Group_range_incl(world, 1, r1, &g);
        MPI_Group_compare(g, evens, &res);
        CHECK_INT(res, MPI_IDENT, "range_incl (0, size-1, 2) vs incl evens");
        MPI_Group_free(&g);
        MPI_Group_range_excl(world, 1, r1, &g);
        MPI_Group_compare(g, odds, &res);
        CHECK_INT(res, MPI_IDENT, "range_excl (0, size-1, 2) vs excl evens");
        MPI_Group_free(&g);

        r1[0][0] = size - 1;
        r1[0][1] = 0;
        r1[0][2] = -1;
        MPI_Group_range_incl(world, 1, r1, &g);
        MPI_Group_compare(g, rev, &res);
        CHECK_INT(res, MPI_IDENT, "range_incl (size-1, 0, -1) vs reversed");
        MPI_Group_free(&g);

        /* several triplets: last rank, then evens below it descending, then 1 */
        if (size >= 4) {
            int k = 0, top = (size - 2) - (size - 2) % 2;
            r3[0][0] = size - 1;
            r3[0][1] = size - 1;
            r3[0][2] = 1;
            r3[1][0] = top; /* largest even rank below size - 1 */
            r3[1][1] = 0;
            r3[1][2] = -2;
            r3[2][0] = 1;
            r3[2][1] = 1;
            r3[2][2] = 5;
            list[k++] = size - 1;
            for (i = r3[1][0]; i >= 0; i -= 2)
                list[k++] = i;
            list[k++] = 1;
            MPI_Group_range_incl(world, 3, r3, &g);
            expect_members(g, list, k, "range_incl with three triplets");
            MPI_Group_free(&g);
            /* excluding those leaves the other ranks in world order */
            {
                int m = 0, j;
                for (i = 0; i < size; i++) {
                    int in_list = 0;
                    for (j = 0; j < k; j++)
                        if (list[j] == i)
                            in_list = 1;
                    if (!in_list)
                        list2[m++] = i;
                }
                MPI_Group_range_excl(world, 3, r3, &g);
                if (m)
                    expect_members(g, list2, m, "range_excl with three triplets");
                MPI_Group_free(&g);
            }
        }
    }

    /* ---- 4. set operations ---- */
    {
        /* union(rev, evens) = rev (evens add nothing) */
        MPI_Group_union(rev, evens, &g);
        MPI_Group_compare(g, rev, &res);
        CHECK_INT(res, MPI_IDENT, "union(rev, evens) is rev");
        MPI_Group_free(&g);

        /* union(evens, rev) = evens, then the odd ranks in descending order */
        {
            int k = 0;
            for (i = 0; i < size; i += 2)
                list[k++] = i;
            for (i = size - 1; i >= 0; i--)
                if (i % 2)
                    list[k++] = i;
            MPI_Group_union(evens, rev, &g);
            expect_members(g, list, k, "union(evens, rev)");
            MPI_Group_free(&g);
        }
        /* intersection(rev, evens) = evens in descending order */
        {
            int k = 0;
            for (i = size - 1; i >= 0; i--)
                if (i % 2 == 0)
                    list[k++] = i;
            MPI_Group_intersection(rev, evens, &g);
            expect_members(g, list, k, "intersection(rev, evens)");
            MPI_Group_free(&g);
        }
        /* difference(rev, evens) = odds descending */
        {
            int k = 0;
            for (i = size - 1; i >= 0; i--)
                if (i % 2)
                    list[k++] = i;
            MPI_Group_difference(rev, evens, &g);
            if (k)
                expect_members(g, list, k, "difference(rev, evens)");
            else {
                MPI_Group_compare(g, MPI_GROUP_EMPTY, &res);
                CHECK_INT(res, MPI_IDENT, "difference(rev, evens) for 1 rank is empty");
            }
            MPI_Group_free(&g);
        }
        /* union(evens, odds) is SIMILAR to world (IDENT when size <= 2) */
        MPI_Group_union(evens, odds, &g);
        MPI_Group_compare(g, world, &res);
        CHECK(res == (size <= 2 ? MPI_IDENT : MPI_SIMILAR), "compare(evens+odds, world) = %d", res);
        MPI_Group_free(&g);
        /* intersection(evens, odds) is empty */
        MPI_Group_intersection(evens, odds, &g);
        MPI_Group_size(g, &n);
        CHECK_INT(n, 0, "intersection(evens, odds) size");
        MPI_Group_compare(g, MPI_GROUP_EMPTY, &res);
        CHECK_INT(res, MPI_IDENT, "compare(evens&odds, MPI_GROUP_EMPTY)");
        MPI_Group_rank(g, &i);
        CHECK_INT(i, MPI_UNDEFINED, "rank in an empty group");
        MPI_Group_free(&g);
        /* difference(world, world) is empty */
        MPI_Group_difference(world, world, &g);
        MPI_Group_size(g, &n);
        CHECK_INT(n, 0, "difference(world, world) size");
        MPI_Group_free(&g);
        /* unions with the empty group */
        MPI_Group_union(MPI_GROUP_EMPTY, world, &g);
        MPI_Group_compare(g, world, &res);
        CHECK_INT(res, MPI_IDENT, "union(empty, world)");
        MPI_Group_free(&g);
    }

    /* ---- 5. compare: UNEQUAL ---- */
    if (size >= 2) {
        MPI_Group_compare(evens, world, &res);
        CHECK_INT(res, MPI_UNEQUAL, "compare(evens, world)");
        /* same size, different members */
        if (size >= 4) {
            int a[2] = {0, 1}, b[2] = {0, 2};
            MPI_Group_incl(world, 2, a, &g);
            MPI_Group_incl(world, 2, b, &h);
            MPI_Group_compare(g, h, &res);
            CHECK_INT(res, MPI_UNEQUAL, "compare({0,1}, {0,2})");
            MPI_Group_free(&g);
            MPI_Group_free(&h);
        }
    }

    /* ---- 6. empty incl ---- */
    MPI_Group_incl(world, 0, list, &g);
    MPI_Group_compare(g, MPI_GROUP_EMPTY, &res);
    CHECK_INT(res, MPI_IDENT, "incl of no ranks vs MPI_GROUP_EMPTY");
    MPI_Group_size(MPI_GROUP_EMPTY, &n);
    CHECK_INT(n, 0, "MPI_GROUP_EMPTY size");
    MPI_Group_free(&g);

    /* ---- 7. group of a split communicator ---- */
    {
        MPI_Comm c;
        MPI_Group cg;
        int cs, cr, k = 0;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 3, -rank, &c);
        MPI_Comm_size(c, &cs);
        MPI_Comm_rank(c, &cr);
        MPI_Comm_group(c, &cg);
        MPI_Group_size(cg, &n);
        CHECK_INT(n, cs, "split group size");
        MPI_Group_rank(cg, &i);
        CHECK_INT(i, cr, "split group rank");
        for (i = size - 1; i >= 0; i--)
            if (i % 3 == rank % 3)
                list[k++] = i;
        expect_members(cg, list, k, "group of split(rank%3, -rank)");
        MPI_Group_free(&cg);
        MPI_Comm_free(&c);
    }

    /* ---- 8. free / loop ---- */
    for (i = 0; i < 50; i++) {
        MPI_Group a, b;
        MPI_Group_incl(world, 1, &rank, &a);
        MPI_Group_union(a, evens, &b);
        MPI_Group_free(&a);
        MPI_Group_free(&b);
        CHECK(a == MPI_GROUP_NULL && b == MPI_GROUP_NULL, "Group_free did not set NULL");
    }

    MPI_Group_free(&rev);
    MPI_Group_free(&evens);
    MPI_Group_free(&odds);
    MPI_Group_free(&world);
    free(list);
    free(list2);
    return mtest_finalize();
}
