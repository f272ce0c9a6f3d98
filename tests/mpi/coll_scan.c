/*
 * coll_scan: MPI_Scan (inclusive prefix) and MPI_Exscan (exclusive prefix).
 *
 *  - MPI_INT SUM, MPI_LONG_LONG MAX, MPI_INT PROD (small factors),
 *    MPI_DOUBLE SUM (exact values), MPI_2INT MINLOC, counts 0, 1 and 9;
 *  - MPI_IN_PLACE for both (input taken from recvbuf);
 *  - Exscan: the receive buffer of rank 0 is undefined and is NOT checked;
 *    rank 1 receives rank 0's input unchanged.
 */
#include "mtest.h"

#define C 9

static int rank, size;

static int ival(int r, int j) { return r * 2 - j + (r % 3 == 1 ? 100 : 0); }
static long long lval(int r, int j)
{
    return ((long long)((r * 5 + j) % 11) - 5) * (1LL << 40) + r;
}
static int pval(int r, int j) { return (r + j) % 5 == 0 ? 2 : ((r + j) % 7 == 3 ? -1 : 1); }

static void run(int exclusive, int inplace)
{
    const char *nm = exclusive ? "Exscan" : "Scan";
    const char *ip = inplace ? " IN_PLACE" : "";
    int upto = exclusive ? rank - 1 : rank; /* last rank included */
    int check = !(exclusive && rank == 0);
    int j;

    /* MPI_INT SUM */
    {
        int s[C], r[C];
        for (j = 0; j < C; j++) {
            s[j] = ival(rank, j);
            r[j] = inplace ? s[j] : -77;
        }
        if (exclusive)
            MPI_Exscan(inplace ? MPI_IN_PLACE : s, r, C, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        else
            MPI_Scan(inplace ? MPI_IN_PLACE : s, r, C, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        for (j = 0; j < C && check; j++) {
            long long e = 0;
            for (int k = 0; k <= upto; k++)
                e += ival(k, j);
            CHECK(r[j] == e, "%s%s int SUM [%d] = %d want %lld", nm, ip, j, r[j], e);
        }
    }

    /* MPI_LONG_LONG MAX */
    {
        long long s[C], r[C];
        for (j = 0; j < C; j++) {
            s[j] = lval(rank, j);
            r[j] = inplace ? s[j] : -77;
        }
        if (exclusive)
            MPI_Exscan(inplace ? MPI_IN_PLACE : s, r, C, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
        else
            MPI_Scan(inplace ? MPI_IN_PLACE : s, r, C, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
        for (j = 0; j < C && check; j++) {
            long long e = lval(0, j);
            for (int k = 1; k <= upto; k++)
                if (lval(k, j) > e)
                    e = lval(k, j);
            CHECK(r[j] == e, "%s%s long long MAX [%d] = %lld want %lld", nm, ip, j, r[j], e);
        }
    }

    /* MPI_INT PROD: factors 2 and -1; only ranks < 20 contribute factors
     * other than 1, so the product cannot overflow at any size. */
    {
        int s[C], r[C];
        for (j = 0; j < C; j++) {
            s[j] = rank < 20 ? pval(rank, j) : 1;
            r[j] = inplace ? s[j] : -77;
        }
        if (exclusive)
            MPI_Exscan(inplace ? MPI_IN_PLACE : s, r, C, MPI_INT, MPI_PROD, MPI_COMM_WORLD);
        else
            MPI_Scan(inplace ? MPI_IN_PLACE : s, r, C, MPI_INT, MPI_PROD, MPI_COMM_WORLD);
        for (j = 0; j < C && check; j++) {
            long long e = 1;
            for (int k = 0; k <= upto; k++)
                e *= k < 20 ? pval(k, j) : 1;
            CHECK(r[j] == e, "%s%s int PROD [%d] = %d want %lld", nm, ip, j, r[j], e);
        }
    }

    /* MPI_DOUBLE SUM, exactly representable */
    {
        double s[C], r[C];
        for (j = 0; j < C; j++) {
            s[j] = rank * 0.5 - j * 0.25;
            r[j] = inplace ? s[j] : -77.0;
        }
        if (exclusive)
            MPI_Exscan(inplace ? MPI_IN_PLACE : s, r, C, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        else
            MPI_Scan(inplace ? MPI_IN_PLACE : s, r, C, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        for (j = 0; j < C && check; j++) {
            double e = 0.0;
            for (int k = 0; k <= upto; k++)
                e += k * 0.5 - j * 0.25;
            CHECK(r[j] == e, "%s%s double SUM [%d] = %g want %g", nm, ip, j, r[j], e);
        }
    }

    /* MPI_2INT MINLOC with ties */
    {
        struct {
            int v, i;
        } s[C], r[C];
        for (j = 0; j < C; j++) {
            s[j].v = (rank + j) % 3;
            s[j].i = 1000 - rank;
            r[j] = s[j];
            if (!inplace)
                r[j].v = r[j].i = -77;
        }
        if (exclusive)
            MPI_Exscan(inplace ? MPI_IN_PLACE : (void *)s, r, C, MPI_2INT, MPI_MINLOC,
                       MPI_COMM_WORLD);
        else
            MPI_Scan(inplace ? MPI_IN_PLACE : (void *)s, r, C, MPI_2INT, MPI_MINLOC,
                     MPI_COMM_WORLD);
        for (j = 0; j < C && check; j++) {
            int ev = 1 << 30, ei = 1 << 30;
            for (int k = 0; k <= upto; k++) {
                int v = (k + j) % 3, ix = 1000 - k;
                if (v < ev || (v == ev && ix < ei)) {
                    ev = v;
                    ei = ix;
                }
            }
            CHECK(r[j].v == ev && r[j].i == ei, "%s%s 2INT MINLOC [%d] = (%d,%d) want (%d,%d)", nm,
                  ip, j, r[j].v, r[j].i, ev, ei);
        }
    }

    /* count 0 */
    {
        int s = 1, r = 2;
        if (exclusive)
            MPI_Exscan(&s, &r, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        else
            MPI_Scan(&s, &r, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK(r == 2, "%s count 0 modified recvbuf", nm);
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "coll_scan");
    rank = mtest_rank_;
    size = mtest_size_;

    run(0, 0);
    run(0, 1);
    run(1, 0);
    run(1, 1);

    /* Exscan at rank 1 is exactly rank 0's input */
    {
        int s[2] = {rank + 40, -rank}, r[2] = {0, 0};
        MPI_Exscan(s, r, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (rank == 1)
            CHECK(r[0] == 40 && r[1] == 0, "Exscan at rank 1: %d %d", r[0], r[1]);
    }

    return mtest_finalize();
}
