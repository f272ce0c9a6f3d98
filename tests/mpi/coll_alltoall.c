/*
 * coll_alltoall: MPI_Alltoall and MPI_Alltoallv.
 *
 *  - Alltoall of 2 ints per pair (O(size) elements per process), normal and
 *    with MPI_IN_PLACE (data taken from and replaced in recvbuf);
 *  - Alltoall of 0 elements;
 *  - Alltoallv with irregular counts, (i + 2j) % 3 ints from i to j (so
 *    many pairs exchange nothing), send blocks in reverse order and receive
 *    blocks with gaps that must stay untouched;
 *  - Alltoallv where every count is zero;
 *  - Alltoallv with MPI_IN_PLACE (symmetric counts (i + j) % 3, as the
 *    in-place form requires);
 *  - one larger Alltoall of 16 KiB per pair when size <= 8.
 */
#include "mtest.h"

#define N 2

static int rank, size;

static int val(int from, int to, int i) { return from * 100000 + to * 10 + i; }
static int c_irr(int from, int to) { return (from + 2 * to) % 3; }
static int c_sym(int a, int b) { return (a + b) % 3; }

static void alltoall(int inplace)
{
    int *s = malloc(sizeof(int) * (size_t)(N * size));
    int *r = malloc(sizeof(int) * (size_t)(N * size + 1));
    int i, k, bad = 0;

    for (k = 0; k < size; k++)
        for (i = 0; i < N; i++)
            s[k * N + i] = val(rank, k, i);
    r[N * size] = -3;
    if (inplace) {
        memcpy(r, s, sizeof(int) * (size_t)(N * size));
        MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, N, MPI_INT, MPI_COMM_WORLD);
    } else {
        for (i = 0; i < N * size; i++)
            r[i] = -1;
        MPI_Alltoall(s, N, MPI_INT, r, N, MPI_INT, MPI_COMM_WORLD);
    }
    for (k = 0; k < size; k++)
        for (i = 0; i < N; i++)
            if (r[k * N + i] != val(k, rank, i) && bad++ < 3)
                CHECK(0, "Alltoall%s: from %d [%d] = %d want %d", inplace ? " IN_PLACE" : "", k, i,
                      r[k * N + i], val(k, rank, i));
    CHECK(bad == 0, "Alltoall%s: %d wrong elements", inplace ? " IN_PLACE" : "", bad);
    CHECK(r[N * size] == -3, "Alltoall: wrote past the end");
    free(s);
    free(r);
}

static void alltoallv(int zero)
{
    int *sc = malloc(sizeof(int) * (size_t)size), *sd = malloc(sizeof(int) * (size_t)size);
    int *rc = malloc(sizeof(int) * (size_t)size), *rd = malloc(sizeof(int) * (size_t)size);
    int *s, *r, k, i, stot = 0, rtot = 1;
    char *used;

    for (k = size - 1; k >= 0; k--) { /* send blocks in reverse order */
        sc[k] = zero ? 0 : c_irr(rank, k);
        sd[k] = stot;
        stot += sc[k];
    }
    for (k = 0; k < size; k++) { /* receive blocks with gaps */
        rc[k] = zero ? 0 : c_irr(k, rank);
        rd[k] = rtot;
        rtot += rc[k] + (k % 2);
    }
    s = malloc(sizeof(int) * (size_t)(stot + 1));
    r = malloc(sizeof(int) * (size_t)rtot);
    used = calloc((size_t)rtot, 1);
    for (k = 0; k < size; k++)
        for (i = 0; i < sc[k]; i++)
            s[sd[k] + i] = val(rank, k, i);
    for (i = 0; i < rtot; i++)
        r[i] = -9;
    MPI_Alltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, MPI_COMM_WORLD);
    for (k = 0; k < size; k++)
        for (i = 0; i < rc[k]; i++) {
            used[rd[k] + i] = 1;
            CHECK(r[rd[k] + i] == val(k, rank, i), "Alltoallv: from %d [%d] = %d want %d", k, i,
                  r[rd[k] + i], val(k, rank, i));
        }
    for (i = 0; i < rtot; i++)
        if (!used[i] && r[i] != -9) {
            CHECK(0, "Alltoallv%s: gap element %d written", zero ? " (zero)" : "", i);
            break;
        }
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(s);
    free(r);
    free(used);
}

static void alltoallv_inplace(void)
{
    int *rc = malloc(sizeof(int) * (size_t)size), *rd = malloc(sizeof(int) * (size_t)size);
    int *r, k, i, tot = 0;

    for (k = 0; k < size; k++) {
        rc[k] = c_sym(rank, k);
        rd[k] = tot;
        tot += rc[k] + 1;
    }
    r = malloc(sizeof(int) * (size_t)(tot + 1));
    for (i = 0; i < tot; i++)
        r[i] = -4;
    for (k = 0; k < size; k++)
        for (i = 0; i < rc[k]; i++)
            r[rd[k] + i] = val(rank, k, i);
    MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, r, rc, rd, MPI_INT, MPI_COMM_WORLD);
    for (k = 0; k < size; k++) {
        for (i = 0; i < rc[k]; i++)
            CHECK(r[rd[k] + i] == val(k, rank, i), "Alltoallv IN_PLACE: from %d [%d] = %d want %d",
                  k, i, r[rd[k] + i], val(k, rank, i));
        CHECK(r[rd[k] + rc[k]] == -4,
              "Alltoallv IN_PLACE: gap after block %d "
              "written",
              k);
    }
    free(rc);
    free(rd);
    free(r);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "coll_alltoall");
    rank = mtest_rank_;
    size = mtest_size_;

    alltoall(0);
    alltoall(1);
    {
        int a = 1, b = 2;
        MPI_Alltoall(&a, 0, MPI_INT, &b, 0, MPI_INT, MPI_COMM_WORLD);
        CHECK_INT(b, 2, "zero-element Alltoall modified recvbuf");
    }
    alltoallv(0);
    alltoallv(1);
    alltoallv_inplace();

    if (size <= 8) {
        const int n = 16384;
        int bad = -1, i, k;
        unsigned char *s = malloc((size_t)n * size), *r = malloc((size_t)n * size);
        for (k = 0; k < size; k++)
            for (i = 0; i < n; i++)
                s[(size_t)k * n + (size_t)i] = mtest_byte((unsigned)(rank * 64 + k), (size_t)i);
        MPI_Alltoall(s, n, MPI_BYTE, r, n, MPI_BYTE, MPI_COMM_WORLD);
        for (k = 0; k < size && bad < 0; k++)
            for (i = 0; i < n; i++)
                if (r[(size_t)k * n + (size_t)i] !=
                    mtest_byte((unsigned)(k * 64 + rank), (size_t)i)) {
                    bad = k;
                    break;
                }
        CHECK(bad < 0, "large Alltoall: block from %d differs", bad);
        free(s);
        free(r);
    }

    return mtest_finalize();
}
