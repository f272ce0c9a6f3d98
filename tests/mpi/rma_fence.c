/* Active-target RMA with fences: puts and gets between every pair of ranks,
 * derived datatypes on either side, several epochs in a row (each epoch's
 * results are visible after its closing fence and not disturbed by the
 * next one), operations on the rank itself, a large put, MPI_PROC_NULL and
 * zero counts, and MPI_Win_allocate's memory. */
#include "mtest.h"

#define N 16

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "rma_fence");
    int rank = mtest_rank_, size = mtest_size_;

    /* Each rank exposes size blocks of N ints; rank r puts its block into
     * slot r of everyone, then gets slot r of everyone back. */
    int *win_buf = malloc(sizeof(int) * N * size);
    for (int i = 0; i < N * size; i++)
        win_buf[i] = -1;
    MPI_Win win;
    CHECK_MPI(MPI_Win_create(win_buf, (MPI_Aint)(sizeof(int) * N * size), sizeof(int),
                             MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int src[N];
    for (int i = 0; i < N; i++)
        src[i] = rank * 1000 + i;
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    for (int t = 0; t < size; t++)
        CHECK_MPI(MPI_Put(src, N, MPI_INT, t, (MPI_Aint)rank * N, N, MPI_INT, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < N; i++)
            CHECK_INT(win_buf[r * N + i], r * 1000 + i, "put by rank r");

    /* Epoch 2: gets of what rank t holds from rank (rank+1), and puts of
     * new values into another slot: the get sees the state before them
     * only when they target different slots, so read slot t, write slot 0
     * of the next rank only after the fence. */
    int *got = malloc(sizeof(int) * N * size);
    for (int t = 0; t < size; t++)
        CHECK_MPI(MPI_Get(got + t * N, N, MPI_INT, t, (MPI_Aint)t * N, N, MPI_INT, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    for (int t = 0; t < size; t++)
        for (int i = 0; i < N; i++)
            CHECK_INT(got[t * N + i], t * 1000 + i, "get of slot t from rank t");

    /* Epoch 3: derived types.  Origin: every other int of a 2N array
     * (vector); target: the block of rank's slot, reversed by an indexed
     * type.  Then get it back through a contiguous type of 2 ints. */
    MPI_Datatype vec, rev, pair;
    MPI_Type_vector(N, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int bl[N], disp[N];
    for (int i = 0; i < N; i++) {
        bl[i] = 1;
        disp[i] = N - 1 - i;
    }
    MPI_Type_indexed(N, bl, disp, MPI_INT, &rev);
    MPI_Type_commit(&rev);
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    int wide[2 * N];
    for (int i = 0; i < 2 * N; i++)
        wide[i] = i % 2 ? -7 : rank * 100 + i / 2;
    int next = (rank + 1) % size;
    CHECK_MPI(MPI_Put(wide, 1, vec, next, (MPI_Aint)rank * N, 1, rev, win));
    CHECK_MPI(MPI_Type_free(&vec)); /* freed while the operation is pending */
    CHECK_MPI(MPI_Win_fence(0, win));
    int prev = (rank + size - 1) % size;
    for (int i = 0; i < N; i++)
        CHECK_INT(win_buf[prev * N + (N - 1 - i)], prev * 100 + i, "vector put into reversed");
    int back[N];
    memset(back, 0, sizeof back);
    CHECK_MPI(MPI_Get(back, N / 2, pair, next, (MPI_Aint)rank * N, 1, rev, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    for (int i = 0; i < N; i++)
        CHECK_INT(back[i], rank * 100 + i, "get through a reversed target type");

    /* Zero counts and MPI_PROC_NULL are no-ops. */
    CHECK_MPI(MPI_Put(src, 0, MPI_INT, next, 0, 0, MPI_INT, win));
    CHECK_MPI(MPI_Put(src, N, MPI_INT, MPI_PROC_NULL, 0, N, MPI_INT, win));
    CHECK_MPI(MPI_Get(back, N, MPI_INT, MPI_PROC_NULL, 0, N, MPI_INT, win));
    /* Moving no data is fine whatever the types: an empty origin type
     * against a zero count of another type, even for accumulates. */
    MPI_Datatype empty;
    MPI_Type_contiguous(0, MPI_INT, &empty);
    MPI_Type_commit(&empty);
    CHECK_MPI(MPI_Accumulate(src, 1, empty, next, 0, 0, MPI_DOUBLE, MPI_SUM, win));
    CHECK_MPI(MPI_Get_accumulate(src, 2, empty, back, 0, MPI_INT, next, 0, 3, empty, MPI_SUM, win));
    CHECK_MPI(MPI_Put(NULL, 0, MPI_INT, next, 0, 1, empty, win));
    MPI_Type_free(&empty);
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    MPI_Type_free(&rev);
    MPI_Type_free(&pair);
    CHECK_MPI(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "MPI_Win_free sets the handle to MPI_WIN_NULL");

    /* A large put (beyond any message threshold) into MPI_Win_allocate
     * memory, with displacement unit 8. */
    const int big = 1 << 17; /* doubles: 1 MiB */
    double *mem = NULL;
    CHECK_MPI(MPI_Win_allocate((MPI_Aint)big * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    CHECK(mem != NULL, "MPI_Win_allocate returned memory");
    double *data = malloc(sizeof(double) * big);
    for (int i = 0; i < big; i++) {
        data[i] = rank + i * 0.5;
        mem[i] = -1;
    }
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK_MPI(MPI_Put(data + 1, big - 1, MPI_DOUBLE, next, 1, big - 1, MPI_DOUBLE, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    int bad = 0;
    for (int i = 1; i < big && !bad; i++)
        if (mem[i] != prev + i * 0.5) {
            CHECK(0, "large put: element %d is %g, expected %g", i, mem[i], prev + i * 0.5);
            bad = 1;
        }
    CHECK(mem[0] == -1, "large put left element 0 alone (got %g)", mem[0]);
    CHECK_MPI(MPI_Get(data, big, MPI_DOUBLE, prev, 0, big, MPI_DOUBLE, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    bad = 0;
    int pp = (prev + size - 1) % size;
    for (int i = 1; i < big && !bad; i++)
        if (data[i] != pp + i * 0.5) {
            CHECK(0, "large get: element %d is %g, expected %g", i, data[i], pp + i * 0.5);
            bad = 1;
        }
    CHECK_MPI(MPI_Win_free(&win));
    free(data);
    free(win_buf);
    free(got);
    return mtest_finalize();
}
