/*
 * coll_reduce_scatter: MPI_Reduce_scatter_block and MPI_Reduce_scatter.
 *
 *  - Reduce_scatter_block, 3 elements per process, MPI_INT SUM and
 *    MPI_DOUBLE MAX, normal and with MPI_IN_PLACE (sendbuf = MPI_IN_PLACE on
 *    every process: the full input vector is taken from recvbuf and the
 *    process's block of the result is stored at the START of recvbuf);
 *  - Reduce_scatter with irregular recvcounts (k % 3 elements for rank k,
 *    so some processes receive nothing), normal and MPI_IN_PLACE;
 *  - one larger Reduce_scatter_block (64 KiB result per process) when
 *    size <= 8.
 * Only the result block is checked after an in-place call; the rest of
 * recvbuf is undefined.
 */
#include "mtest.h"

#define N 3

static int rank, size;

static int ival(int r, int k, int i) { return r + k * 7 + i * (r % 2 ? 1 : -1); }
static double dval(int r, int k, int i) { return (double)((r * 13 + k * 5 + i) % 17) - 8.5; }
static int vcount(int k) { return k % 3; }

static void block(int inplace)
{
    int *s = malloc(sizeof(int) * (size_t)(N * size));
    int *r = malloc(sizeof(int) * (size_t)(N * size + 1));
    double *ds = malloc(sizeof(double) * (size_t)(N * size));
    double *dr = malloc(sizeof(double) * (size_t)(N * size));
    int i, k;
    const char *ip = inplace ? " IN_PLACE" : "";

    for (k = 0; k < size; k++)
        for (i = 0; i < N; i++) {
            s[k * N + i] = ival(rank, k, i);
            ds[k * N + i] = dval(rank, k, i);
        }
    r[N] = -55;
    if (inplace) {
        memcpy(r, s, sizeof(int) * (size_t)(N * size));
        memcpy(dr, ds, sizeof(double) * (size_t)(N * size));
        MPI_Reduce_scatter_block(MPI_IN_PLACE, r, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Reduce_scatter_block(MPI_IN_PLACE, dr, N, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    } else {
        MPI_Reduce_scatter_block(s, r, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Reduce_scatter_block(ds, dr, N, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        CHECK(r[N] == -55, "Reduce_scatter_block wrote past the block");
    }
    for (i = 0; i < N; i++) {
        long long e = 0;
        double de = -1e300;
        for (int q = 0; q < size; q++) {
            e += ival(q, rank, i);
            if (dval(q, rank, i) > de)
                de = dval(q, rank, i);
        }
        CHECK(r[i] == e, "Reduce_scatter_block%s int SUM [%d] = %d want %lld", ip, i, r[i], e);
        CHECK(dr[i] == de, "Reduce_scatter_block%s double MAX [%d] = %g want %g", ip, i, dr[i], de);
    }
    free(s);
    free(r);
    free(ds);
    free(dr);
}

static void irregular(int inplace)
{
    int *counts = malloc(sizeof(int) * (size_t)size), total = 0;
    int *s, *r, i, k, n = vcount(rank);

    for (k = 0; k < size; k++) {
        counts[k] = vcount(k);
        total += counts[k];
    }
    s = malloc(sizeof(int) * (size_t)(total + 1));
    r = malloc(sizeof(int) * (size_t)(total + 1));
    /* the full vector is the concatenation of every rank's block */
    for (k = 0, i = 0; k < size; k++)
        for (int j = 0; j < counts[k]; j++, i++)
            s[i] = ival(rank, k, j) * 3;
    if (inplace) {
        memcpy(r, s, sizeof(int) * (size_t)total);
        MPI_Reduce_scatter(MPI_IN_PLACE, r, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    } else {
        r[n] = -66;
        MPI_Reduce_scatter(s, r, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK(r[n] == -66, "Reduce_scatter wrote past the block");
    }
    for (i = 0; i < n; i++) {
        long long e = 0;
        for (int q = 0; q < size; q++)
            e += ival(q, rank, i) * 3;
        CHECK(r[i] == e, "Reduce_scatter%s [%d] = %d want %lld", inplace ? " IN_PLACE" : "", i,
              r[i], e);
    }
    free(counts);
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "coll_reduce_scatter");
    rank = mtest_rank_;
    size = mtest_size_;

    block(0);
    block(1);
    irregular(0);
    irregular(1);

    if (size <= 8) {
        const int n = 16384; /* ints per process: 64 KiB */
        int *s = malloc(sizeof(int) * (size_t)n * size), *r = malloc(sizeof(int) * (size_t)n);
        int bad = -1, i;
        for (size_t e = 0; e < (size_t)n * size; e++)
            s[e] = (int)(e % 1000) + rank;
        MPI_Reduce_scatter_block(s, r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        for (i = 0; i < n; i++) {
            size_t e = (size_t)rank * n + (size_t)i;
            if (r[i] != (int)(e % 1000) * size + size * (size - 1) / 2) {
                bad = i;
                break;
            }
        }
        CHECK(bad < 0, "large Reduce_scatter_block wrong at %d", bad);
        free(s);
        free(r);
    }

    return mtest_finalize();
}
