/*
 * comm_ops: communicator management.
 *
 *  1. MPI_Comm_dup: same size/rank, MPI_Comm_compare gives MPI_CONGRUENT
 *     (and MPI_IDENT for a handle with itself); separate matching context:
 *     a message sent on the duplicate first is NOT received by a receive on
 *     MPI_COMM_WORLD with the same source and tag, and an
 *     Iprobe(ANY_SOURCE, ANY_TAG) on MPI_COMM_WORLD does not see a message
 *     that has arrived on the duplicate.
 *  2. MPI_Comm_split with colors rank % 3, MPI_UNDEFINED for rank % 5 == 4
 *     (those get MPI_COMM_NULL) and key -rank (reverses the order); the new
 *     rank order is verified with Allgather; Allreduce, Bcast, Barrier and a
 *     point-to-point ring on the new communicators.
 *  3. Ties in the key are broken by the rank in the old communicator.
 *  4. MPI_Comm_compare: IDENT, CONGRUENT (dup; split with key = rank),
 *     SIMILAR (split reversing the order, size >= 2), UNEQUAL (different
 *     groups), also with MPI_COMM_SELF.
 *  5. Two disjoint communicators (the two halves of MPI_COMM_WORLD) running
 *     collectives and point-to-point traffic with the same tags at the same
 *     time, and alternating collectives on two overlapping communicators.
 *  6. Several duplicates alive at once each carry their own message with
 *     the same (source, tag); a dup/free loop (context ids are reused).
 *  7. MPI_Comm_free sets the handle to MPI_COMM_NULL.
 */
#include "mtest.h"

static int rank, size, right, left;

static void split_checks(void)
{
    int color = (rank % 5 == 4) ? MPI_UNDEFINED : rank % 3;
    MPI_Comm c;
    int nsize = -1, nrank = -1, i, k;

    MPI_Comm_split(MPI_COMM_WORLD, color, -rank, &c);
    if (color == MPI_UNDEFINED) {
        CHECK(c == MPI_COMM_NULL, "MPI_UNDEFINED color did not give "
                                  "MPI_COMM_NULL");
        return;
    }
    CHECK(c != MPI_COMM_NULL, "split gave MPI_COMM_NULL for color %d", color);
    if (c == MPI_COMM_NULL)
        return;
    {
        /* members in the new order: descending world rank */
        int *members = malloc(sizeof(int) * (size_t)size), n = 0, me = -1;
        int *got = malloc(sizeof(int) * (size_t)size);
        int res = -1, sum = 0, expsum = 0, b;
        for (k = size - 1; k >= 0; k--)
            if (k % 5 != 4 && k % 3 == color) {
                if (k == rank)
                    me = n;
                members[n++] = k;
            }
        MPI_Comm_size(c, &nsize);
        MPI_Comm_rank(c, &nrank);
        CHECK_INT(nsize, n, "split size");
        CHECK_INT(nrank, me, "split rank (key = -rank reverses the order)");
        if (nsize != n) {
            free(members);
            free(got);
            MPI_Comm_free(&c);
            return;
        }
        MPI_Allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, c);
        for (i = 0; i < n; i++)
            CHECK(got[i] == members[i],
                  "split rank %d is world rank %d, want "
                  "%d",
                  i, got[i], members[i]);

        /* collectives on the split communicator */
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c);
        for (i = 0; i < n; i++)
            expsum += members[i];
        CHECK_INT(sum, expsum, "Allreduce on split communicator");
        b = rank;
        MPI_Bcast(&b, 1, MPI_INT, n - 1, c);
        CHECK_INT(b, members[n - 1], "Bcast from last rank of split");
        MPI_Barrier(c);

        /* point-to-point ring in local ranks */
        {
            int lr = (nrank + 1) % n, ll = (nrank + n - 1) % n, in = -1;
            MPI_Status st;
            MPI_Sendrecv(&rank, 1, MPI_INT, lr, 3, &in, 1, MPI_INT, MPI_ANY_SOURCE, 3, c, &st);
            CHECK_INT(in, members[ll], "ring on split: value");
            CHECK_INT(st.MPI_SOURCE, ll,
                      "ring on split: status source is a "
                      "local rank");
        }

        /* compare with WORLD */
        MPI_Comm_compare(c, MPI_COMM_WORLD, &res);
        CHECK(res == (n == size ? MPI_CONGRUENT : MPI_UNEQUAL), "compare(split, WORLD) = %d", res);
        MPI_Comm_compare(c, c, &res);
        CHECK(res == MPI_IDENT, "compare(split, itself) = %d", res);

        /* a dup of the split communicator is congruent to it */
        {
            MPI_Comm d;
            MPI_Comm_dup(c, &d);
            MPI_Comm_compare(c, d, &res);
            CHECK(res == MPI_CONGRUENT, "compare(split, dup(split)) = %d", res);
            MPI_Comm_free(&d);
        }
        free(members);
        free(got);
    }
    MPI_Comm_free(&c);
    CHECK(c == MPI_COMM_NULL, "Comm_free did not set MPI_COMM_NULL");
}

int main(int argc, char **argv)
{
    MPI_Comm dup;
    MPI_Status st;
    int res, i;

    mtest_init(&argc, &argv, "comm_ops");
    rank = mtest_rank_;
    size = mtest_size_;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;

    /* ---- 1. dup ---- */
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    {
        int ds = -1, dr = -1;
        MPI_Comm_size(dup, &ds);
        MPI_Comm_rank(dup, &dr);
        CHECK(ds == size && dr == rank, "dup size/rank %d/%d", ds, dr);
        MPI_Comm_compare(MPI_COMM_WORLD, dup, &res);
        CHECK(res == MPI_CONGRUENT, "compare(WORLD, dup) = %d", res);
        MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &res);
        CHECK(res == MPI_IDENT, "compare(WORLD, WORLD) = %d", res);
        MPI_Comm_compare(dup, dup, &res);
        CHECK(res == MPI_IDENT, "compare(dup, dup) = %d", res);
    }
    {
        int a = rank + 1000, b = rank + 2000, ga = -1, gb = -1;
        MPI_Request r[2];
        MPI_Isend(&a, 1, MPI_INT, right, 5, dup, &r[0]);
        MPI_Isend(&b, 1, MPI_INT, right, 5, MPI_COMM_WORLD, &r[1]);
        MPI_Recv(&gb, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &st);
        MPI_Recv(&ga, 1, MPI_INT, left, 5, dup, &st);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        CHECK(gb == left + 2000, "WORLD receive got %d (the dup's message?)", gb);
        CHECK(ga == left + 1000, "dup receive got %d", ga);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    {
        int a = rank, g = -1, flag = -1;
        MPI_Request r;
        MPI_Isend(&a, 1, MPI_INT, right, 6, dup, &r);
        MPI_Probe(left, 6, dup, &st); /* it has arrived on dup */
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        CHECK(flag == 0, "Iprobe on WORLD saw a message sent on the dup");
        MPI_Recv(&g, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &st);
        CHECK(g == left && st.MPI_TAG == 6, "dup ANY receive got %d tag %d", g, st.MPI_TAG);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- 2. split with UNDEFINED and reversed keys ---- */
    split_checks();

    /* ---- 3./4. key ties, CONGRUENT / SIMILAR, SELF ---- */
    {
        MPI_Comm c1, c2, c3;
        int r1 = -1, r2 = -1;
        MPI_Comm_split(MPI_COMM_WORLD, 7, rank / 2, &c1); /* ties */
        MPI_Comm_rank(c1, &r1);
        CHECK_INT(r1, rank, "key ties broken by old rank");
        MPI_Comm_compare(c1, MPI_COMM_WORLD, &res);
        CHECK(res == MPI_CONGRUENT, "compare(split same order, WORLD) = %d", res);

        MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &c2); /* reversed */
        MPI_Comm_rank(c2, &r2);
        CHECK_INT(r2, size - 1 - rank, "reversed split rank");
        MPI_Comm_compare(c2, MPI_COMM_WORLD, &res);
        CHECK(res == (size >= 2 ? MPI_SIMILAR : MPI_CONGRUENT),
              "compare(reversed split, WORLD) = %d", res);

        MPI_Comm_split(MPI_COMM_SELF, 0, 0, &c3);
        MPI_Comm_compare(c3, MPI_COMM_SELF, &res);
        CHECK(res == MPI_CONGRUENT, "compare(split(SELF), SELF) = %d", res);
        MPI_Comm_compare(MPI_COMM_SELF, MPI_COMM_WORLD, &res);
        CHECK(res == (size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL), "compare(SELF, WORLD) = %d", res);
        if (size >= 2) {
            MPI_Comm c4;
            MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &c4);
            MPI_Comm_compare(c4, c1, &res);
            CHECK(res == MPI_UNEQUAL, "compare(parity split, WORLD copy) = %d", res);
            MPI_Comm_free(&c4);
        }
        MPI_Comm_free(&c1);
        MPI_Comm_free(&c2);
        MPI_Comm_free(&c3);
        CHECK(c1 == MPI_COMM_NULL && c2 == MPI_COMM_NULL && c3 == MPI_COMM_NULL,
              "Comm_free did not set MPI_COMM_NULL");
    }

    /* ---- 5. concurrent collectives on disjoint communicators ---- */
    {
        int half = rank < size / 2 ? 0 : 1, hs, hr, it;
        MPI_Comm h, par;
        MPI_Comm_split(MPI_COMM_WORLD, half, rank, &h);
        MPI_Comm_size(h, &hs);
        MPI_Comm_rank(h, &hr);
        CHECK_INT(hs, half ? size - size / 2 : size / 2, "half size");
        for (it = 0; it < 2; it++) {
            int base = half ? size / 2 : 0, v = rank * (it + 1), s = 0, b, e = 0;
            int in = -1, *all = malloc(sizeof(int) * (size_t)hs);
            for (i = 0; i < hs; i++)
                e += (base + i) * (it + 1);
            MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, h);
            CHECK(s == e, "half %d iter %d: allreduce %d want %d", half, it, s, e);
            b = rank;
            MPI_Bcast(&b, 1, MPI_INT, it % hs, h);
            CHECK(b == base + it % hs, "half %d iter %d: bcast %d", half, it, b);
            MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, h);
            for (i = 0; i < hs; i++)
                CHECK(all[i] == base + i, "half %d: allgather[%d] = %d", half, i, all[i]);
            /* same tag in both halves at the same time */
            MPI_Sendrecv(&rank, 1, MPI_INT, (hr + 1) % hs, 9, &in, 1, MPI_INT, (hr + hs - 1) % hs,
                         9, h, MPI_STATUS_IGNORE);
            CHECK(in == base + (hr + hs - 1) % hs, "half %d ring got %d", half, in);
            free(all);
        }

        /* alternate between two overlapping communicators */
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &par);
        for (it = 0; it < 2; it++) {
            int v = 1, a = 0, bsum = 0, ps;
            MPI_Comm_size(par, &ps);
            MPI_Allreduce(&v, &a, 1, MPI_INT, MPI_SUM, h);
            MPI_Allreduce(&v, &bsum, 1, MPI_INT, MPI_SUM, par);
            CHECK(a == hs && bsum == ps, "overlapping comms: %d/%d %d/%d", a, hs, bsum, ps);
        }
        MPI_Comm_free(&par);
        MPI_Comm_free(&h);
    }

    /* ---- 6. several dups alive, same (source, tag) on each ---- */
    {
        enum { ND = 4 };
        MPI_Comm d[ND];
        MPI_Request r[ND];
        int out[ND], in[ND];
        for (i = 0; i < ND; i++)
            MPI_Comm_dup(i % 2 ? dup : MPI_COMM_WORLD, &d[i]);
        for (i = 0; i < ND; i++) {
            out[i] = rank * 10 + i;
            MPI_Isend(&out[i], 1, MPI_INT, right, 1, d[i], &r[i]);
        }
        for (i = ND - 1; i >= 0; i--) {
            in[i] = -1;
            MPI_Recv(&in[i], 1, MPI_INT, left, 1, d[i], MPI_STATUS_IGNORE);
            CHECK(in[i] == left * 10 + i, "dup %d received %d", i, in[i]);
        }
        MPI_Waitall(ND, r, MPI_STATUSES_IGNORE);
        for (i = 0; i < ND; i++)
            MPI_Comm_free(&d[i]);
    }
    for (i = 0; i < 12; i++) {
        MPI_Comm d;
        MPI_Comm_dup(dup, &d);
        if (i % 4 == 3) {
            int v = 1, s = 0;
            MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, d);
            CHECK_INT(s, size, "allreduce on a recycled dup");
        }
        MPI_Comm_free(&d);
        CHECK(d == MPI_COMM_NULL, "Comm_free did not set MPI_COMM_NULL");
    }

    MPI_Comm_free(&dup);
    CHECK(dup == MPI_COMM_NULL, "Comm_free(dup) did not set MPI_COMM_NULL");

    return mtest_finalize();
}
