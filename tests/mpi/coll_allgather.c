/*
 * coll_allgather: MPI_Allgather and MPI_Allgatherv.
 *
 *  - Allgather of 2 ints per process, normal and with MPI_IN_PLACE (every
 *    process's own block is already at its place in recvbuf; sendcount and
 *    sendtype are ignored);
 *  - Allgather of 0 elements;
 *  - Allgatherv with irregular counts (rank r contributes r % 3 shorts, so
 *    some contribute nothing) and displacements with gaps that must stay
 *    untouched, normal and with MPI_IN_PLACE;
 *  - one larger Allgather of 64 KiB per process when size <= 8.
 */
#include "mtest.h"

#define N 2

static int rank, size;

static int aval(int r, int i) { return r * 31 + i - 5; }
static int vcount(int r) { return r % 3; }
static short vval(int r, int i) { return (short)((r * 5 + i) % 30000 - 15000); }

static void allgather(int inplace)
{
    int *s = malloc(sizeof(int) * N);
    int *r = malloc(sizeof(int) * (size_t)(N * size + 1));
    int i, k, bad = 0;

    for (i = 0; i < N; i++)
        s[i] = aval(rank, i);
    for (i = 0; i < N * size + 1; i++)
        r[i] = -1;
    if (inplace) {
        for (i = 0; i < N; i++)
            r[rank * N + i] = aval(rank, i);
        MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, N, MPI_INT, MPI_COMM_WORLD);
    } else {
        MPI_Allgather(s, N, MPI_INT, r, N, MPI_INT, MPI_COMM_WORLD);
    }
    for (k = 0; k < size; k++)
        for (i = 0; i < N; i++)
            if (r[k * N + i] != aval(k, i) && bad++ < 3)
                CHECK(0, "Allgather%s: block %d [%d] = %d want %d", inplace ? " IN_PLACE" : "", k,
                      i, r[k * N + i], aval(k, i));
    CHECK(bad == 0, "Allgather%s: %d wrong elements", inplace ? " IN_PLACE" : "", bad);
    CHECK(r[N * size] == -1, "Allgather: wrote past the end");
    free(s);
    free(r);
}

static void allgatherv(int inplace)
{
    int *counts = malloc(sizeof(int) * (size_t)size);
    int *displs = malloc(sizeof(int) * (size_t)size);
    int i, k, total = 0, n = vcount(rank);
    short s[3], *r;
    char *used;

    for (k = 0; k < size; k++) {
        counts[k] = vcount(k);
        displs[k] = total + (k % 2); /* a gap before odd ranks' blocks */
        total = displs[k] + counts[k];
    }
    total += 1;
    r = malloc(sizeof(short) * (size_t)total);
    used = calloc((size_t)total, 1);
    for (i = 0; i < total; i++)
        r[i] = 12345;
    for (i = 0; i < n; i++)
        s[i] = vval(rank, i);
    if (inplace) {
        for (i = 0; i < n; i++)
            r[displs[rank] + i] = vval(rank, i);
        MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, counts, displs, MPI_SHORT,
                       MPI_COMM_WORLD);
    } else {
        MPI_Allgatherv(s, n, MPI_SHORT, r, counts, displs, MPI_SHORT, MPI_COMM_WORLD);
    }
    for (k = 0; k < size; k++)
        for (i = 0; i < counts[k]; i++) {
            used[displs[k] + i] = 1;
            CHECK(r[displs[k] + i] == vval(k, i), "Allgatherv%s: from %d [%d] = %d want %d",
                  inplace ? " IN_PLACE" : "", k, i, r[displs[k] + i], vval(k, i));
        }
    for (i = 0; i < total; i++)
        if (!used[i] && r[i] != 12345) {
            CHECK(0, "Allgatherv%s: gap element %d was written", inplace ? " IN_PLACE" : "", i);
            break;
        }
    free(counts);
    free(displs);
    free(r);
    free(used);
}

int main(int argc, char **argv)
{
    int i;

    mtest_init(&argc, &argv, "coll_allgather");
    rank = mtest_rank_;
    size = mtest_size_;

    allgather(0);
    allgather(1);
    allgatherv(0);
    allgatherv(1);

    {
        int dummy = 1, out = 2;
        MPI_Allgather(&dummy, 0, MPI_INT, &out, 0, MPI_INT, MPI_COMM_WORLD);
        CHECK_INT(out, 2, "zero-element Allgather modified recvbuf");
    }

    if (size <= 8) {
        const int n = 65536;
        int bad = -1;
        unsigned char *s = malloc((size_t)n), *r = malloc((size_t)n * size);
        for (i = 0; i < n; i++)
            s[i] = mtest_byte((unsigned)(rank + 7), (size_t)i);
        MPI_Allgather(s, n, MPI_BYTE, r, n, MPI_BYTE, MPI_COMM_WORLD);
        for (int k = 0; k < size && bad < 0; k++)
            for (i = 0; i < n; i++)
                if (r[(size_t)k * n + (size_t)i] != mtest_byte((unsigned)(k + 7), (size_t)i)) {
                    bad = k;
                    break;
                }
        CHECK(bad < 0, "large Allgather: block from %d differs", bad);
        free(s);
        free(r);
    }

    return mtest_finalize();
}
