/*
 * coll_gather: MPI_Gather and MPI_Gatherv.
 *
 *  - Gather of 3 ints per process to roots 0, size-1 and size/2, normal and
 *    with MPI_IN_PLACE at the root (the root's own block is already in
 *    place in recvbuf and must be preserved); non-roots pass recvbuf = NULL;
 *  - Gather of 0 elements;
 *  - Gatherv with irregular counts (rank r sends r % 4 doubles, so some
 *    send nothing) and displacements with gaps between the blocks; the gaps
 *    must stay untouched; normal and MPI_IN_PLACE at the root; non-roots
 *    pass NULL recvcounts/displs;
 *  - one larger Gather of 64 KiB per process when size <= 16.
 */
#include "mtest.h"

#define N 3

static int rank, size;

static int gval(int r, int i) { return r * 1000 + i * 7 + 1; }
static int vcount(int r) { return r % 4; }
static double vval(int r, int i) { return r + i * 0.125; }

static void gather(int root, int inplace)
{
    int *s = malloc(sizeof(int) * N), *r = NULL, i, k;

    for (i = 0; i < N; i++)
        s[i] = gval(rank, i);
    if (rank == root) {
        r = malloc(sizeof(int) * (size_t)(N * size + 1));
        for (i = 0; i < N * size + 1; i++)
            r[i] = -1;
        if (inplace)
            for (i = 0; i < N; i++)
                r[root * N + i] = gval(root, i);
    }
    if (rank == root && inplace)
        MPI_Gather(MPI_IN_PLACE, N, MPI_INT, r, N, MPI_INT, root, MPI_COMM_WORLD);
    else
        MPI_Gather(s, N, MPI_INT, r, N, MPI_INT, root, MPI_COMM_WORLD);
    if (rank == root) {
        int bad = 0;
        for (k = 0; k < size; k++)
            for (i = 0; i < N; i++)
                if (r[k * N + i] != gval(k, i) && bad++ < 3)
                    CHECK(0, "Gather root %d%s: block %d [%d] = %d want %d", root,
                          inplace ? " IN_PLACE" : "", k, i, r[k * N + i], gval(k, i));
        CHECK(bad == 0, "Gather root %d%s: %d wrong elements", root, inplace ? " IN_PLACE" : "",
              bad);
        CHECK(r[N * size] == -1, "Gather root %d: wrote past the end", root);
    }
    free(s);
    free(r);
}

static void gatherv(int root, int inplace)
{
    int i, k, total, *counts = NULL, *displs = NULL, n = vcount(rank);
    double *s = malloc(sizeof(double) * 4), *r = NULL;
    char *expect_set = NULL;

    for (i = 0; i < n; i++)
        s[i] = vval(rank, i);
    if (rank == root) {
        counts = malloc(sizeof(int) * (size_t)size);
        displs = malloc(sizeof(int) * (size_t)size);
        total = 1;
        for (k = 0; k < size; k++) {
            counts[k] = vcount(k);
            displs[k] = total; /* gap of >= 1 before every block */
            total += counts[k] + 1 + k % 3;
        }
        r = malloc(sizeof(double) * (size_t)total);
        expect_set = calloc((size_t)total, 1);
        for (i = 0; i < total; i++)
            r[i] = -1.0;
        if (inplace)
            for (i = 0; i < n; i++)
                r[displs[root] + i] = vval(root, i);
        MPI_Gatherv(inplace ? MPI_IN_PLACE : s, n, MPI_DOUBLE, r, counts, displs, MPI_DOUBLE, root,
                    MPI_COMM_WORLD);
        for (k = 0; k < size; k++)
            for (i = 0; i < counts[k]; i++) {
                expect_set[displs[k] + i] = 1;
                CHECK(r[displs[k] + i] == vval(k, i),
                      "Gatherv root %d%s: from %d [%d] = %g want %g", root,
                      inplace ? " IN_PLACE" : "", k, i, r[displs[k] + i], vval(k, i));
            }
        for (i = 0; i < total; i++)
            if (!expect_set[i] && r[i] != -1.0) {
                CHECK(0, "Gatherv root %d: gap element %d was written (%g)", root, i, r[i]);
                break;
            }
    } else {
        MPI_Gatherv(s, n, MPI_DOUBLE, NULL, NULL, NULL, MPI_DOUBLE, root, MPI_COMM_WORLD);
    }
    free(s);
    free(r);
    free(counts);
    free(displs);
    free(expect_set);
}

int main(int argc, char **argv)
{
    int roots[3], i;

    mtest_init(&argc, &argv, "coll_gather");
    rank = mtest_rank_;
    size = mtest_size_;
    roots[0] = 0;
    roots[1] = size - 1;
    roots[2] = size / 2;

    for (i = 0; i < 3; i++) {
        if (i > 0 && (roots[i] == roots[0] || (i == 2 && roots[2] == roots[1])))
            continue;
        gather(roots[i], 0);
        gather(roots[i], 1);
        gatherv(roots[i], 0);
        gatherv(roots[i], 1);
    }

    /* zero elements */
    {
        int dummy = 3, out = 4;
        MPI_Gather(&dummy, 0, MPI_INT, rank == 0 ? &out : NULL, 0, MPI_INT, 0, MPI_COMM_WORLD);
        if (rank == 0)
            CHECK_INT(out, 4, "zero-element Gather modified recvbuf");
    }

    /* 64 KiB per process */
    if (size <= 16) {
        const int n = 65536;
        int root = size - 1, bad = -1;
        unsigned char *s = malloc((size_t)n), *r = NULL;
        for (i = 0; i < n; i++)
            s[i] = mtest_byte((unsigned)rank, (size_t)i);
        if (rank == root)
            r = malloc((size_t)n * (size_t)size);
        MPI_Gather(s, n, MPI_BYTE, r, n, MPI_BYTE, root, MPI_COMM_WORLD);
        if (rank == root) {
            for (int k = 0; k < size && bad < 0; k++)
                for (i = 0; i < n; i++)
                    if (r[(size_t)k * n + (size_t)i] != mtest_byte((unsigned)k, (size_t)i)) {
                        bad = k;
                        break;
                    }
            CHECK(bad < 0, "large Gather: block from %d differs", bad);
        }
        free(s);
        free(r);
    }

    return mtest_finalize();
}
