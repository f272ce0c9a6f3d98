/* Accumulates: MPI_Accumulate with predefined operations (SUM on ints and
 * doubles, MAXLOC on MPI_2INT, REPLACE, a derived target type) under
 * fences; MPI_Get_accumulate, MPI_Fetch_and_op (also MPI_NO_OP) and
 * MPI_Compare_and_swap as atomic counters and a lock word under
 * passive-target locks, whose results must be consistent: every rank's
 * fetch sees a distinct value, and exactly one compare-and-swap wins. */
#include "mtest.h"

#define N 8

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "rma_accumulate");
    int rank = mtest_rank_, size = mtest_size_;

    int ibuf[N];
    double dbuf[N];
    struct {
        int v, i;
    } loc[2];
    struct {
        int i[N];
        double d[N];
        long fetch;
        long cas;
        int loc[4];
    } *w = NULL;
    MPI_Win win;
    CHECK_MPI(MPI_Win_allocate(sizeof *w, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w, &win));
    for (int k = 0; k < N; k++) {
        w->i[k] = 0;
        w->d[k] = 0.5;
    }
    w->fetch = 0;
    w->cas = -1;
    w->loc[0] = w->loc[2] = -1000;
    w->loc[1] = w->loc[3] = -1;
    MPI_Aint off_i = 0, off_d = (char *)w->d - (char *)w, off_f = (char *)&w->fetch - (char *)w,
             off_c = (char *)&w->cas - (char *)w, off_l = (char *)w->loc - (char *)w;

    /* Fence epoch: everyone adds into rank 0, and a MAXLOC race. */
    for (int k = 0; k < N; k++) {
        ibuf[k] = rank + k;
        dbuf[k] = 0.25 * (rank + 1);
    }
    loc[0].v = rank % 3;
    loc[0].i = rank;
    loc[1].v = -rank;
    loc[1].i = rank;
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK_MPI(MPI_Accumulate(ibuf, N, MPI_INT, 0, off_i, N, MPI_INT, MPI_SUM, win));
    CHECK_MPI(MPI_Accumulate(dbuf, N, MPI_DOUBLE, 0, off_d, N, MPI_DOUBLE, MPI_SUM, win));
    CHECK_MPI(MPI_Accumulate(loc, 2, MPI_2INT, 0, off_l, 2, MPI_2INT, MPI_MAXLOC, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    if (rank == 0) {
        long s = (long)size * (size - 1) / 2;
        for (int k = 0; k < N; k++) {
            CHECK_INT(w->i[k], s + (long)size * k, "sum of ints");
            double e = 0.5 + 0.25 * size * (size + 1) / 2.0;
            CHECK(w->d[k] == e, "sum of doubles: %g, expected %g", w->d[k], e);
        }
        int best = size > 2 ? 2 : size - 1, bi = 2;
        if (size <= 2)
            bi = size - 1;
        CHECK(w->loc[0] == best && w->loc[1] == bi, "maxloc (%d,%d), expected (%d,%d)", w->loc[0],
              w->loc[1], best, bi);
        CHECK(w->loc[2] == 0 && w->loc[3] == 0, "maxloc of -rank: (%d,%d), expected (0,0)",
              w->loc[2], w->loc[3]);
    }

    /* REPLACE through a derived target type (every other int), then a
     * strided SUM: rank 0's ints become 7 at even and odd places alike. */
    MPI_Datatype every2;
    MPI_Type_vector(N / 2, 1, 2, MPI_INT, &every2);
    MPI_Type_commit(&every2);
    int sevens[N / 2] = {7, 7, 7, 7};
    if (rank == size - 1) {
        CHECK_MPI(MPI_Accumulate(sevens, N / 2, MPI_INT, 0, off_i, 1, every2, MPI_REPLACE, win));
        CHECK_MPI(MPI_Accumulate(sevens, N / 2, MPI_INT, 0, off_i + (MPI_Aint)sizeof(int), 1,
                                 every2, MPI_REPLACE, win));
    }
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    if (rank == 0)
        for (int k = 0; k < N; k++)
            CHECK_INT(w->i[k], 7, "replace through a vector type");
    MPI_Type_free(&every2);

    /* Passive target: a shared counter.  Each rank fetches-and-adds 1 ten
     * times; the fetched values over all ranks are exactly 0..10*size-1. */
    const int reps = 10;
    long *seen = calloc((size_t)reps * size, sizeof(long));
    long one = 1, old = -5;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < reps; k++) {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        CHECK_MPI(MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, off_f, MPI_SUM, win));
        CHECK_MPI(MPI_Win_unlock(0, win));
        seen[k] = old;
    }
    long *all = malloc(sizeof(long) * reps * size);
    MPI_Allgather(seen, reps, MPI_LONG, all, reps, MPI_LONG, MPI_COMM_WORLD);
    char *hit = calloc((size_t)reps * size, 1);
    for (int k = 0; k < reps * size; k++) {
        CHECK(all[k] >= 0 && all[k] < reps * size, "fetched value %ld out of range", all[k]);
        if (all[k] >= 0 && all[k] < reps * size) {
            CHECK(!hit[all[k]], "value %ld fetched twice", all[k]);
            hit[all[k]] = 1;
        }
    }
    /* MPI_NO_OP reads the final count. */
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    CHECK_MPI(MPI_Fetch_and_op(NULL, &old, MPI_LONG, 0, off_f, MPI_NO_OP, win));
    CHECK_MPI(MPI_Win_unlock(0, win));
    CHECK_INT(old, (long)reps * size, "counter after all fetch-and-adds");

    /* Compare-and-swap: everyone tries to claim the word (-1 -> rank);
     * exactly one succeeds and all agree on who. */
    long mine = rank, expect = -1, res = -7;
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    CHECK_MPI(MPI_Compare_and_swap(&mine, &expect, &res, MPI_LONG, 0, off_c, win));
    CHECK_MPI(MPI_Win_unlock(0, win));
    int won = res == -1, nwon = 0;
    MPI_Allreduce(&won, &nwon, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK_INT(nwon, 1, "ranks that won the compare-and-swap");
    long owner = -2;
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    CHECK_MPI(MPI_Get(&owner, 1, MPI_LONG, 0, off_c, 1, MPI_LONG, win));
    CHECK_MPI(MPI_Win_unlock(0, win));
    if (!won)
        CHECK(res == owner, "a loser saw the winner %ld, the word holds %ld", res, owner);

    /* Get_accumulate with a derived result type: add rank+1 to the doubles
     * and receive the previous values reversed. */
    double add[N], prevd[N];
    for (int k = 0; k < N; k++)
        add[k] = 1.0;
    MPI_Datatype revd;
    int bl[N], dp[N];
    for (int k = 0; k < N; k++) {
        bl[k] = 1;
        dp[k] = N - 1 - k;
    }
    MPI_Type_indexed(N, bl, dp, MPI_DOUBLE, &revd);
    MPI_Type_commit(&revd);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    CHECK_MPI(MPI_Get_accumulate(add, N, MPI_DOUBLE, prevd, 1, revd, 0, off_d, N, MPI_DOUBLE,
                                 MPI_SUM, win));
    CHECK_MPI(MPI_Win_unlock(0, win));
    /* All elements are equal at every step, so order does not matter. */
    for (int k = 1; k < N; k++)
        CHECK(prevd[k] == prevd[0], "previous values are all equal");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        double e = 0.5 + 0.25 * size * (size + 1) / 2.0 + size;
        for (int k = 0; k < N; k++)
            CHECK(w->d[k] == e, "after get_accumulate: %g, expected %g", w->d[k], e);
        CHECK_MPI(MPI_Win_unlock(0, win));
    }
    MPI_Type_free(&revd);
    CHECK_MPI(MPI_Win_free(&win));
    free(seen);
    free(all);
    free(hit);
    return mtest_finalize();
}
