/*
 * comm_create: communicators made from groups (MPI 3.1 section 6.4.2).
 *
 *  1. MPI_Comm_create over MPI_COMM_WORLD with the even ranks in
 *     descending order: members get a communicator whose rank order is the
 *     group's order, the others MPI_COMM_NULL; Allreduce, Bcast, Allgather
 *     and a point-to-point ring on it; MPI_Comm_group of it compares
 *     MPI_IDENT to the group.  The whole world group gives a communicator
 *     congruent to MPI_COMM_WORLD; the empty group gives MPI_COMM_NULL
 *     everywhere.  Comm_create on a split communicator.  One call in which
 *     the evens and the odds pass different, disjoint groups (MPI 2.2).
 *  2. MPI_Comm_create_group called only by the members: evens and odds
 *     concurrently with the same tag, each group in descending order;
 *     collectives and point-to-point on the results, interleaved with
 *     collectives on MPI_COMM_WORLD; two creations in a row on the same
 *     group and tag give two independent communicators; a group of one.
 *  3. MPI_Comm_split_type(MPI_COMM_TYPE_SHARED): the result holds ranks
 *     whose processor name is ours, ordered by key, and the results
 *     partition MPI_COMM_WORLD; MPI_UNDEFINED gives MPI_COMM_NULL.
 *  4. MPI_Comm_idup (completed with MPI_Wait), MPI_Comm_test_inter.
 */
#include "mtest.h"

static int rank, size;

/* Collectives and a ring on c, whose rank i is world rank want[i]. */
static void exercise(MPI_Comm c, const int *want, int n, const char *what)
{
    int cs = -1, cr = -1, i, sum = 0, exp = 0, b, in = -1;
    int *all = malloc(sizeof(int) * (size_t)(n + 1));
    MPI_Status st;
    MPI_Comm_size(c, &cs);
    MPI_Comm_rank(c, &cr);
    CHECK(cs == n, "%s: size %d, expected %d", what, cs, n);
    if (cs != n) {
        free(all);
        return;
    }
    CHECK(cr >= 0 && cr < n && want[cr] == rank, "%s: rank %d is not where world rank %d belongs",
          what, cr, rank);
    MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, c);
    for (i = 0; i < n; i++)
        CHECK(all[i] == want[i], "%s: rank %d is world rank %d, expected %d", what, i, all[i],
              want[i]);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c);
    for (i = 0; i < n; i++)
        exp += want[i];
    CHECK(sum == exp, "%s: Allreduce %d, expected %d", what, sum, exp);
    b = rank;
    MPI_Bcast(&b, 1, MPI_INT, n - 1, c);
    CHECK(b == want[n - 1], "%s: Bcast from the last rank gave %d", what, b);
    MPI_Sendrecv(&rank, 1, MPI_INT, (cr + 1) % n, 4, &in, 1, MPI_INT, (cr + n - 1) % n, 4, c, &st);
    CHECK(in == want[(cr + n - 1) % n] && st.MPI_SOURCE == (cr + n - 1) % n,
          "%s: ring got %d from %d", what, in, st.MPI_SOURCE);
    MPI_Barrier(c);
    free(all);
}

int main(int argc, char **argv)
{
    MPI_Group world, g;
    MPI_Comm c;
    int i, n, res, *list;

    mtest_init(&argc, &argv, "comm_create");
    rank = mtest_rank_;
    size = mtest_size_;
    list = malloc(sizeof(int) * (size_t)size + 4);
    MPI_Comm_group(MPI_COMM_WORLD, &world);

    /* ---- 1. MPI_Comm_create ---- */
    n = 0;
    for (i = size - 1; i >= 0; i--)
        if (i % 2 == 0)
            list[n++] = i;
    MPI_Group_incl(world, n, (int *)list, &g);
    {
        /* list holds world ranks = world group ranks */
        MPI_Comm_create(MPI_COMM_WORLD, g, &c);
        if (rank % 2) {
            CHECK(c == MPI_COMM_NULL, "non-member got a communicator from Comm_create");
        } else {
            CHECK(c != MPI_COMM_NULL, "member got MPI_COMM_NULL from Comm_create");
            if (c != MPI_COMM_NULL) {
                MPI_Group cg;
                exercise(c, list, n, "Comm_create(evens descending)");
                MPI_Comm_group(c, &cg);
                MPI_Group_compare(cg, g, &res);
                CHECK_INT(res, MPI_IDENT, "group of the created communicator");
                MPI_Group_free(&cg);
                MPI_Comm_free(&c);
            }
        }
    }
    MPI_Group_free(&g);

    /* Disjoint groups in one call (MPI 2.2): the evens pass the evens in
     * descending order, the odds the odds in ascending order. */
    n = 0;
    for (i = 0; i < size; i++) {
        int w = rank % 2 ? i : size - 1 - i;
        if (w % 2 == rank % 2)
            list[n++] = w;
    }
    MPI_Group_incl(world, n, (int *)list, &g);
    MPI_Comm_create(MPI_COMM_WORLD, g, &c);
    CHECK(c != MPI_COMM_NULL, "Comm_create(disjoint groups) gave MPI_COMM_NULL");
    if (c != MPI_COMM_NULL) {
        exercise(c, list, n, "Comm_create(evens descending, odds ascending)");
        MPI_Comm_free(&c);
    }
    MPI_Group_free(&g);

    MPI_Comm_create(MPI_COMM_WORLD, world, &c);
    CHECK(c != MPI_COMM_NULL, "Comm_create(world group) gave MPI_COMM_NULL");
    if (c != MPI_COMM_NULL) {
        MPI_Comm_compare(c, MPI_COMM_WORLD, &res);
        CHECK_INT(res, MPI_CONGRUENT, "compare(Comm_create(world group), WORLD)");
        MPI_Comm_free(&c);
    }
    MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, &c);
    CHECK(c == MPI_COMM_NULL, "Comm_create(MPI_GROUP_EMPTY) did not give MPI_COMM_NULL");

    {
        /* on a split communicator: its upper half, in its order */
        MPI_Comm half;
        MPI_Group hg, top;
        int hs, hr, k = 0;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        MPI_Comm_size(half, &hs);
        MPI_Comm_rank(half, &hr);
        MPI_Comm_group(half, &hg);
        for (i = hs / 2; i < hs; i++)
            list[k++] = i;
        MPI_Group_incl(hg, k, list, &top);
        MPI_Comm_create(half, top, &c);
        if (hr >= hs / 2) {
            int *want = malloc(sizeof(int) * (size_t)k + 4);
            for (i = 0; i < k; i++)
                want[i] = rank % 2 + 2 * (hs / 2 + i);
            CHECK(c != MPI_COMM_NULL, "Comm_create on a split: member got MPI_COMM_NULL");
            if (c != MPI_COMM_NULL) {
                exercise(c, want, k, "Comm_create on a split communicator");
                MPI_Comm_free(&c);
            }
            free(want);
        } else {
            CHECK(c == MPI_COMM_NULL, "Comm_create on a split: non-member got a communicator");
        }
        MPI_Group_free(&top);
        MPI_Group_free(&hg);
        MPI_Comm_free(&half);
    }

    /* ---- 2. MPI_Comm_create_group ---- */
    {
        int parity = rank % 2, k = 0, it;
        MPI_Comm c2;
        for (i = size - 1; i >= 0; i--)
            if (i % 2 == parity)
                list[k++] = i;
        MPI_Group_incl(world, k, list, &g);
        MPI_Comm_create_group(MPI_COMM_WORLD, g, 7, &c);
        CHECK(c != MPI_COMM_NULL, "Comm_create_group gave MPI_COMM_NULL to a member");
        MPI_Barrier(MPI_COMM_WORLD);
        if (c != MPI_COMM_NULL)
            exercise(c, list, k, parity ? "Comm_create_group(odds)" : "Comm_create_group(evens)");
        /* the same group and tag again: a second, independent communicator */
        MPI_Comm_create_group(MPI_COMM_WORLD, g, 7, &c2);
        CHECK(c2 != MPI_COMM_NULL && c2 != c, "second Comm_create_group gave %d (first %d)",
              (int)c2, (int)c);
        if (c != MPI_COMM_NULL && c2 != MPI_COMM_NULL) {
            int cr, a = -1, b2 = -1;
            MPI_Request r[2];
            MPI_Comm_compare(c, c2, &res);
            CHECK_INT(res, MPI_CONGRUENT, "compare of two create_group results");
            MPI_Comm_rank(c, &cr);
            /* same (source, tag) on both: each message stays on its own */
            MPI_Irecv(&b2, 1, MPI_INT, (cr + k - 1) % k, 1, c2, &r[0]);
            MPI_Irecv(&a, 1, MPI_INT, (cr + k - 1) % k, 1, c, &r[1]);
            i = rank + 100;
            MPI_Send(&i, 1, MPI_INT, (cr + 1) % k, 1, c);
            i = rank + 200;
            MPI_Send(&i, 1, MPI_INT, (cr + 1) % k, 1, c2);
            MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
            CHECK(a == list[(cr + k - 1) % k] + 100 && b2 == list[(cr + k - 1) % k] + 200,
                  "messages crossed between two create_group communicators: %d %d", a, b2);
            for (it = 0; it < 3; it++) {
                int s1 = 0, s2 = 0, one = 1, w = 0;
                MPI_Allreduce(&one, &s1, 1, MPI_INT, MPI_SUM, c2);
                MPI_Allreduce(&one, &w, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
                MPI_Allreduce(&one, &s2, 1, MPI_INT, MPI_SUM, c);
                CHECK(s1 == k && s2 == k && w == size, "interleaved allreduce %d %d %d", s1, s2, w);
            }
            {
                MPI_Comm d;
                MPI_Comm_dup(c2, &d);
                exercise(d, list, k, "dup of a create_group communicator");
                MPI_Comm_free(&d);
            }
        }
        if (c2 != MPI_COMM_NULL)
            MPI_Comm_free(&c2);
        if (c != MPI_COMM_NULL)
            MPI_Comm_free(&c);
        MPI_Group_free(&g);

        /* a group of one */
        MPI_Group_incl(world, 1, &rank, &g);
        MPI_Comm_create_group(MPI_COMM_WORLD, g, 3, &c);
        CHECK(c != MPI_COMM_NULL, "Comm_create_group of myself gave MPI_COMM_NULL");
        if (c != MPI_COMM_NULL) {
            exercise(c, &rank, 1, "Comm_create_group(self)");
            MPI_Comm_free(&c);
        }
        MPI_Group_free(&g);

        /* ranks 0..size/2 only, called by them while the others do something else */
        k = size / 2 + 1;
        for (i = 0; i < k; i++)
            list[i] = i;
        if (rank < k) {
            MPI_Group_incl(world, k, list, &g);
            MPI_Comm_create_group(MPI_COMM_WORLD, g, 0, &c);
            if (c != MPI_COMM_NULL) {
                exercise(c, list, k, "Comm_create_group(lower half)");
                MPI_Comm_free(&c);
            }
            MPI_Group_free(&g);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }

    /* ---- 3. MPI_Comm_split_type ---- */
    {
        char name[MPI_MAX_PROCESSOR_NAME], *names;
        int len, k = 0;
        memset(name, 0, sizeof name);
        MPI_Get_processor_name(name, &len);
        names = malloc((size_t)size * MPI_MAX_PROCESSOR_NAME);
        MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME,
                      MPI_CHAR, MPI_COMM_WORLD);
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, -rank, MPI_INFO_NULL, &c);
        CHECK(c != MPI_COMM_NULL, "split_type SHARED gave MPI_COMM_NULL");
        if (c != MPI_COMM_NULL) {
            /* Its members (which may be fewer than the ranks of this host, when an
             * implementation runs several nodes on one host) are on this host,
             * in descending world order (key -rank), and the communicators
             * partition the world. */
            MPI_Group cg;
            int *in = malloc(sizeof(int) * (size_t)size), cr, lead, total = 0;
            MPI_Comm_group(c, &cg);
            MPI_Group_size(cg, &k);
            for (i = 0; i < k; i++)
                in[i] = i;
            MPI_Group_translate_ranks(cg, k, in, world, list);
            for (i = 0; i < k; i++) {
                CHECK(!strcmp(names + (size_t)list[i] * MPI_MAX_PROCESSOR_NAME, name),
                      "split_type SHARED: member %d (world rank %d) is on another host", i,
                      list[i]);
                CHECK(i == 0 || list[i] < list[i - 1], "split_type SHARED: not ordered by key");
            }
            exercise(c, list, k, "split_type(SHARED, key -rank)");
            MPI_Comm_rank(c, &cr);
            lead = cr == 0 ? k : 0;
            MPI_Allreduce(&lead, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            CHECK_INT(total, size, "split_type SHARED: sizes of the communicators");
            MPI_Group_free(&cg);
            free(in);
            MPI_Comm_free(&c);
        }
        free(names);
        MPI_Comm_split_type(MPI_COMM_WORLD, rank % 2 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0,
                            MPI_INFO_NULL, &c);
        if (rank % 2)
            CHECK(c == MPI_COMM_NULL, "split_type MPI_UNDEFINED did not give MPI_COMM_NULL");
        else if (c == MPI_COMM_NULL)
            CHECK(0, "split_type SHARED (evens) gave MPI_COMM_NULL");
        else
            MPI_Comm_free(&c);
    }

    /* ---- 4. idup, test_inter ---- */
    {
        MPI_Request r;
        int flag = -1;
        MPI_Comm_idup(MPI_COMM_WORLD, &c, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        CHECK(r == MPI_REQUEST_NULL, "Wait did not free the idup request");
        for (i = 0; i < size; i++)
            list[i] = i;
        exercise(c, list, size, "Comm_idup(WORLD)");
        MPI_Comm_compare(c, MPI_COMM_WORLD, &res);
        CHECK_INT(res, MPI_CONGRUENT, "compare(idup, WORLD)");
        MPI_Comm_test_inter(c, &flag);
        CHECK_INT(flag, 0, "Comm_test_inter of an intracommunicator");
        MPI_Comm_free(&c);
    }

    MPI_Group_free(&world);
    free(list);
    return mtest_finalize();
}
