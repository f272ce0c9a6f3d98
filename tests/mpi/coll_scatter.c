/*
 * coll_scatter: MPI_Scatter and MPI_Scatterv.
 *
 *  - Scatter of 3 ints per process from roots 0, size-1 and size/2, normal
 *    and with MPI_IN_PLACE as the root's recvbuf (the root's block stays
 *    where it is in sendbuf; sendbuf is not modified); non-roots pass
 *    sendbuf = NULL;
 *  - Scatterv with irregular counts (rank r gets (r + 1) % 4 long longs,
 *    so some get nothing) and displacements that skip over unused elements
 *    and are not in rank order; normal and MPI_IN_PLACE at the root;
 *    non-roots pass NULL sendbuf/sendcounts/displs;
 *  - the element after each received block stays untouched;
 *  - one larger Scatter of 64 KiB per process when size <= 16.
 */
#include "mtest.h"

#define N 3

static int rank, size;

static int sval(int r, int i) { return -(r * 1000 + i * 7 + 1); }
static int vcount(int r) { return (r + 1) % 4; }
static long long vval(int r, int i) { return ((long long)r << 33) + i; }

static void scatter(int root, int inplace)
{
    int *s = NULL, r[N + 1], i, k;

    if (rank == root) {
        s = malloc(sizeof(int) * (size_t)(N * size));
        for (k = 0; k < size; k++)
            for (i = 0; i < N; i++)
                s[k * N + i] = sval(k, i);
    }
    for (i = 0; i < N + 1; i++)
        r[i] = 99;
    if (rank == root && inplace)
        MPI_Scatter(s, N, MPI_INT, MPI_IN_PLACE, N, MPI_INT, root, MPI_COMM_WORLD);
    else
        MPI_Scatter(s, N, MPI_INT, r, N, MPI_INT, root, MPI_COMM_WORLD);
    if (!(rank == root && inplace)) {
        for (i = 0; i < N; i++)
            CHECK(r[i] == sval(rank, i), "Scatter root %d: [%d] = %d want %d", root, i, r[i],
                  sval(rank, i));
        CHECK(r[N] == 99, "Scatter root %d: wrote past the block", root);
    } else {
        for (i = 0; i < N + 1; i++)
            CHECK(r[i] == 99, "Scatter IN_PLACE root wrote to an unrelated "
                              "buffer");
    }
    if (rank == root) {
        int bad = 0;
        for (k = 0; k < size; k++)
            for (i = 0; i < N; i++)
                bad += s[k * N + i] != sval(k, i);
        CHECK(bad == 0, "Scatter root %d%s: sendbuf modified (%d elements)", root,
              inplace ? " IN_PLACE" : "", bad);
    }
    free(s);
}

static void scatterv(int root, int inplace)
{
    int i, k, *counts = NULL, *displs = NULL, n = vcount(rank), total = 0;
    long long *s = NULL, r[5];

    if (rank == root) {
        counts = malloc(sizeof(int) * (size_t)size);
        displs = malloc(sizeof(int) * (size_t)size);
        /* blocks laid out in reverse rank order with gaps */
        total = 2;
        for (k = size - 1; k >= 0; k--) {
            counts[k] = vcount(k);
            displs[k] = total;
            total += counts[k] + k % 2;
        }
        s = malloc(sizeof(long long) * (size_t)total);
        for (i = 0; i < total; i++)
            s[i] = -5;
        for (k = 0; k < size; k++)
            for (i = 0; i < counts[k]; i++)
                s[displs[k] + i] = vval(k, i);
    }
    for (i = 0; i < 5; i++)
        r[i] = 77;
    if (rank == root && inplace)
        MPI_Scatterv(s, counts, displs, MPI_LONG_LONG, MPI_IN_PLACE, n, MPI_LONG_LONG, root,
                     MPI_COMM_WORLD);
    else if (rank == root)
        MPI_Scatterv(s, counts, displs, MPI_LONG_LONG, r, n, MPI_LONG_LONG, root, MPI_COMM_WORLD);
    else
        MPI_Scatterv(NULL, NULL, NULL, MPI_LONG_LONG, r, n, MPI_LONG_LONG, root, MPI_COMM_WORLD);
    if (!(rank == root && inplace)) {
        for (i = 0; i < n; i++)
            CHECK(r[i] == vval(rank, i),
                  "Scatterv root %d: [%d] = %lld want "
                  "%lld",
                  root, i, r[i], vval(rank, i));
        CHECK(r[n] == 77, "Scatterv root %d: wrote past the block", root);
    }
    if (rank == root) {
        for (k = 0; k < size; k++)
            for (i = 0; i < counts[k]; i++)
                CHECK(s[displs[k] + i] == vval(k, i), "Scatterv root %d%s: sendbuf modified", root,
                      inplace ? " IN_PLACE" : "");
    }
    free(s);
    free(counts);
    free(displs);
}

int main(int argc, char **argv)
{
    int roots[3], i;

    mtest_init(&argc, &argv, "coll_scatter");
    rank = mtest_rank_;
    size = mtest_size_;
    roots[0] = 0;
    roots[1] = size - 1;
    roots[2] = size / 2;

    for (i = 0; i < 3; i++) {
        if (i > 0 && (roots[i] == roots[0] || (i == 2 && roots[2] == roots[1])))
            continue;
        scatter(roots[i], 0);
        scatter(roots[i], 1);
        scatterv(roots[i], 0);
        scatterv(roots[i], 1);
    }

    /* 64 KiB per process */
    if (size <= 16) {
        const int n = 65536;
        int root = size / 2, bad = -1;
        unsigned char *s = NULL, *r = malloc((size_t)n);
        if (rank == root) {
            s = malloc((size_t)n * (size_t)size);
            for (int k = 0; k < size; k++)
                for (i = 0; i < n; i++)
                    s[(size_t)k * n + (size_t)i] = mtest_byte((unsigned)(k + 50), (size_t)i);
        }
        MPI_Scatter(s, n, MPI_BYTE, r, n, MPI_BYTE, root, MPI_COMM_WORLD);
        for (i = 0; i < n; i++)
            if (r[i] != mtest_byte((unsigned)(rank + 50), (size_t)i)) {
                bad = i;
                break;
            }
        CHECK(bad < 0, "large Scatter: byte %d differs", bad);
        free(s);
        free(r);
    }

    return mtest_finalize();
}
