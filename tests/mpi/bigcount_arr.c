/*
 * bigcount_arr.c - the MPI 4.0 large-count v and w collectives whose count
 * or displacement ARRAYS hold entries past INT_MAX, kept cheap:
 * - displacements past INT_MAX point into a sparse anonymous mapping of a
 *   few GiB of address space of which only the pages used are touched;
 * - counts past INT_MAX are of a type of size 0 (nothing travels, the
 *   calls must still accept and complete them).
 * Some ranks use large entries while others' all fit (a gather's senders,
 * odd ranks in the all-to-alls), so both ways of running a call meet.
 * Blocking and nonblocking: Alltoallv/w, Gatherv, Scatterv, Allgatherv (in
 * place too), Neighbor_alltoallv, Neighbor_allgatherv, Reduce_scatter;
 * persistent Gatherv, Alltoallv and Reduce_scatter.
 */
#include <limits.h>
#include <string.h>
#include <sys/mman.h>

#include "mtest.h"

#define N 24                                          /* bytes per block */
#define FAR ((MPI_Aint)INT_MAX + 4096 * 3 + 5)        /* past INT_MAX, odd */
#define SPAN ((size_t)FAR + (size_t)64 * 1024 * 1024) /* room after FAR */

static unsigned char val(int from, int to, int i)
{
    return (unsigned char)(from * 31 + to * 7 + i);
}

/* A sparse region: only the pages written are memory. */
static unsigned char *region(void)
{
    void *p = mmap(NULL, SPAN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static int block_ok(const unsigned char *b, int from, int to)
{
    for (int i = 0; i < N; i++)
        if (b[i] != val(from, to, i))
            return 0;
    return 1;
}

static void fill(unsigned char *b, int from, int to)
{
    for (int i = 0; i < N; i++)
        b[i] = val(from, to, i);
}

/* The reduction of values of size 0. */
static void nothing(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    (void)in, (void)inout, (void)len, (void)dt;
}

static void wait_or(MPI_Request *rq, int nb)
{
    if (nb)
        MPI_Wait(rq, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "bigcount_arr");
    int rank = mtest_rank_, size = mtest_size_;
    unsigned char *far = region(), *near = malloc((size_t)(size < 2 ? 2 : size) * N);
    MPI_Count *cnt = malloc((size_t)size * sizeof *cnt),
              *cnt2 = malloc((size_t)size * sizeof *cnt2);
    MPI_Aint *dsp = malloc((size_t)size * sizeof *dsp), *dsp2 = malloc((size_t)size * sizeof *dsp2);
    MPI_Datatype *ty = malloc((size_t)size * sizeof *ty), *ty2 = malloc((size_t)size * sizeof *ty2);
    if (!far || !near || !cnt || !cnt2 || !dsp || !dsp2 || !ty || !ty2) {
        printf("bigcount_arr: SKIP (no %zu bytes of address space)\n", SPAN);
        MPI_Finalize();
        return 77;
    }
    int bigme = rank % 2 == 0; /* odd ranks' entries all fit */

    for (int nb = 0; nb < 2; nb++) {
        MPI_Request rq = MPI_REQUEST_NULL;
        /* Alltoallv_c: receive block j at FAR + j*N (even ranks) or at j*N. */
        for (int j = 0; j < size; j++) {
            fill(near + j * N, rank, j);
            cnt[j] = N;
            dsp[j] = j * N;
            dsp2[j] = (bigme ? FAR : 0) + j * N;
        }
        unsigned char *tmp = calloc((size_t)size, N);
        unsigned char *rb = bigme ? far : tmp;
        if (nb)
            CHECK_MPI(MPI_Ialltoallv_c(near, cnt, dsp, MPI_BYTE, rb, cnt, dsp2, MPI_BYTE,
                                       MPI_COMM_WORLD, &rq));
        else
            CHECK_MPI(
                MPI_Alltoallv_c(near, cnt, dsp, MPI_BYTE, rb, cnt, dsp2, MPI_BYTE, MPI_COMM_WORLD));
        wait_or(&rq, nb);
        for (int j = 0; j < size; j++)
            CHECK(block_ok(rb + dsp2[j], j, rank), "alltoallv_c nb=%d: block from %d", nb, j);

        /* Alltoallw_c: byte displacements past INT_MAX on the send side. */
        for (int j = 0; j < size; j++) {
            fill(far + FAR + (size_t)j * N, rank, j);
            dsp[j] = FAR + j * N;
            dsp2[j] = j * N;
            ty[j] = ty2[j] = MPI_BYTE;
        }
        memset(tmp, 0, (size_t)size * N);
        if (nb)
            CHECK_MPI(
                MPI_Ialltoallw_c(far, cnt, dsp, ty, tmp, cnt, dsp2, ty2, MPI_COMM_WORLD, &rq));
        else
            CHECK_MPI(MPI_Alltoallw_c(far, cnt, dsp, ty, tmp, cnt, dsp2, ty2, MPI_COMM_WORLD));
        wait_or(&rq, nb);
        for (int j = 0; j < size; j++)
            CHECK(block_ok(tmp + j * N, j, rank), "alltoallw_c nb=%d: block from %d", nb, j);

        /* Gatherv_c to the last rank: its displacements are past INT_MAX. */
        int root = size - 1;
        for (int j = 0; j < size; j++) {
            cnt[j] = N;
            dsp[j] = FAR + (MPI_Aint)(size - 1 - j) * N; /* reversed */
        }
        fill(near, rank, root);
        if (nb)
            CHECK_MPI(MPI_Igatherv_c(near, N, MPI_BYTE, far, cnt, dsp, MPI_BYTE, root,
                                     MPI_COMM_WORLD, &rq));
        else
            CHECK_MPI(
                MPI_Gatherv_c(near, N, MPI_BYTE, far, cnt, dsp, MPI_BYTE, root, MPI_COMM_WORLD));
        wait_or(&rq, nb);
        for (int j = 0; rank == root && j < size; j++)
            CHECK(block_ok(far + dsp[j], j, root), "gatherv_c nb=%d: block from %d", nb, j);

        /* Scatterv_c from rank 0, blocks past INT_MAX. */
        for (int j = 0; rank == 0 && j < size; j++)
            fill(far + dsp[j], 0, j);
        memset(tmp, 0, N);
        if (nb)
            CHECK_MPI(
                MPI_Iscatterv_c(far, cnt, dsp, MPI_BYTE, tmp, N, MPI_BYTE, 0, MPI_COMM_WORLD, &rq));
        else
            CHECK_MPI(MPI_Scatterv_c(far, cnt, dsp, MPI_BYTE, tmp, N, MPI_BYTE, 0, MPI_COMM_WORLD));
        wait_or(&rq, nb);
        CHECK(block_ok(tmp, 0, rank), "scatterv_c nb=%d", nb);

        /* Allgatherv_c: every rank's receive layout is past INT_MAX.
         * (MPICH 4.0.2 puts its own block elsewhere: not checked there.) */
        int mpich = mtest_is_mpich();
        fill(near, rank, 99);
        if (nb)
            CHECK_MPI(
                MPI_Iallgatherv_c(near, N, MPI_BYTE, far, cnt, dsp, MPI_BYTE, MPI_COMM_WORLD, &rq));
        else
            CHECK_MPI(MPI_Allgatherv_c(near, N, MPI_BYTE, far, cnt, dsp, MPI_BYTE, MPI_COMM_WORLD));
        wait_or(&rq, nb);
        for (int j = 0; j < size; j++)
            CHECK(block_ok(far + dsp[j], j, 99) || (mpich && j == rank),
                  "allgatherv_c nb=%d: block from %d", nb, j);
        /* ... and in place. */
        memset(far + FAR, 0, (size_t)size * N);
        fill(far + dsp[rank], rank, 98);
        if (nb)
            CHECK_MPI(MPI_Iallgatherv_c(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, far, cnt, dsp, MPI_BYTE,
                                        MPI_COMM_WORLD, &rq));
        else
            CHECK_MPI(MPI_Allgatherv_c(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, far, cnt, dsp, MPI_BYTE,
                                       MPI_COMM_WORLD));
        wait_or(&rq, nb);
        for (int j = 0; j < size; j++)
            CHECK(block_ok(far + dsp[j], j, 98) || (mpich && j == rank),
                  "allgatherv_c in place nb=%d: block from %d", nb, j);

        /* Counts past INT_MAX of a type of size 0: accepted, nothing moves. */
        MPI_Datatype empty;
        CHECK_MPI(MPI_Type_contiguous(0, MPI_INT, &empty));
        CHECK_MPI(MPI_Type_commit(&empty));
        for (int j = 0; j < size; j++) {
            cnt[j] = (MPI_Count)INT_MAX + 1 + j;
            dsp[j] = 0;
        }
        if (nb)
            CHECK_MPI(
                MPI_Ialltoallv_c(near, cnt, dsp, empty, tmp, cnt, dsp, empty, MPI_COMM_WORLD, &rq));
        else
            CHECK_MPI(MPI_Alltoallv_c(near, cnt, dsp, empty, tmp, cnt, dsp, empty, MPI_COMM_WORLD));
        wait_or(&rq, nb);
        if (nb)
            CHECK_MPI(MPI_Igatherv_c(near, cnt[rank], empty, tmp, cnt, dsp, empty, 0,
                                     MPI_COMM_WORLD, &rq));
        else
            CHECK_MPI(
                MPI_Gatherv_c(near, cnt[rank], empty, tmp, cnt, dsp, empty, 0, MPI_COMM_WORLD));
        wait_or(&rq, nb);
        MPI_Type_free(&empty);
        free(tmp);
    }

    /* Neighbourhood: a periodic ring, both neighbours' blocks past INT_MAX. */
    {
        MPI_Comm ring;
        int dims[1] = {size}, per[1] = {1};
        CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 0, &ring));
        int left = (rank + size - 1) % size, right = (rank + 1) % size;
        MPI_Count c2[2] = {N, N};
        MPI_Aint sd[2] = {0, N}, rd[2] = {FAR / 2, FAR + N}; /* rd[0] fits: mixed */
        fill(near, rank, left);
        fill(near + N, rank, right);
        CHECK_MPI(MPI_Neighbor_alltoallv_c(near, c2, sd, MPI_BYTE, far, c2, rd, MPI_BYTE, ring));
        /* From the left neighbour (its block for its right) and the right. */
        CHECK(block_ok(far + rd[0], left, (left + 1) % size), "neighbor_alltoallv_c from left");
        CHECK(block_ok(far + rd[1], right, (right + size - 1) % size),
              "neighbor_alltoallv_c from right");
        fill(near, rank, 77);
        MPI_Request rq;
        CHECK_MPI(MPI_Ineighbor_allgatherv_c(near, N, MPI_BYTE, far, c2, rd, MPI_BYTE, ring, &rq));
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        CHECK(block_ok(far + rd[0], left, 77) && block_ok(far + rd[1], right, 77),
              "ineighbor_allgatherv_c");
        MPI_Comm_free(&ring);
    }

    /* Reduce_scatter_c with counts past INT_MAX of a type of size 0.  (MPICH
     * 4.0.2 fails it: "Negative count" in MPIC_Send.) */
    if (!mtest_is_mpich()) {
        MPI_Datatype empty;
        CHECK_MPI(MPI_Type_contiguous(0, MPI_INT, &empty));
        CHECK_MPI(MPI_Type_commit(&empty));
        for (int j = 0; j < size; j++)
            cnt[j] = j == 0 ? (MPI_Count)INT_MAX + 9 : 1;
        int a = 1, b = 0;
        MPI_Op op;
        CHECK_MPI(MPI_Op_create_c(nothing, 1, &op));
        CHECK_MPI(MPI_Reduce_scatter_c(&a, &b, cnt, empty, op, MPI_COMM_WORLD));
        CHECK(a == 1 && b == 0, "reduce_scatter_c of nothing changed %d %d", a, b);
        MPI_Request rq;
        CHECK_MPI(MPI_Ireduce_scatter_c(&a, &b, cnt, empty, op, MPI_COMM_WORLD, &rq));
        CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        CHECK_MPI(
            MPI_Reduce_scatter_init_c(&a, &b, cnt, empty, op, MPI_COMM_WORLD, MPI_INFO_NULL, &rq));
        for (int round = 0; round < 2; round++) {
            CHECK_MPI(MPI_Start(&rq));
            CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        }
        MPI_Request_free(&rq);
        CHECK(a == 1 && b == 0, "ireduce_scatter_c of nothing changed %d %d", a, b);
        MPI_Op_free(&op);
        MPI_Type_free(&empty);
    }

    /* Persistent: Gatherv_init_c (the root's displacements past INT_MAX) and
     * Alltoallv_init_c (even ranks' receive displacements), started twice;
     * the arrays are overwritten after the inits, which copied them. */
    {
        int root = size - 1;
        MPI_Aint rbase = bigme ? FAR + (MPI_Aint)size * N : 0;
        for (int j = 0; j < size; j++) {
            cnt[j] = N;
            dsp[j] = FAR + (MPI_Aint)j * N;
            dsp2[j] = rbase + (MPI_Aint)j * N;
            cnt2[j] = j * N; /* send displacements */
        }
        unsigned char *sa = malloc((size_t)size * N), *sg = malloc(N);
        unsigned char *rb = bigme ? far : calloc((size_t)size, N);
        MPI_Aint *sd = malloc((size_t)size * sizeof *sd);
        for (int j = 0; j < size; j++)
            sd[j] = (MPI_Aint)cnt2[j];
        MPI_Request rq[2];
        CHECK_MPI(MPI_Gatherv_init_c(sg, N, MPI_BYTE, far, cnt, dsp, MPI_BYTE, root, MPI_COMM_WORLD,
                                     MPI_INFO_NULL, &rq[0]));
        CHECK_MPI(MPI_Alltoallv_init_c(sa, cnt, sd, MPI_BYTE, rb, cnt, dsp2, MPI_BYTE,
                                       MPI_COMM_WORLD, MPI_INFO_NULL, &rq[1]));
        for (int j = 0; j < size; j++)
            cnt[j] = -1, dsp[j] = dsp2[j] = sd[j] = -1;
        for (int round = 0; round < 2; round++) {
            fill(sg, rank, 50 + round);
            for (int j = 0; j < size; j++)
                fill(sa + j * N, rank, j + 10 * round);
            CHECK_MPI(MPI_Startall(2, rq));
            CHECK_MPI(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
            for (int j = 0; rank == root && j < size; j++)
                CHECK(block_ok(far + FAR + (size_t)j * N, j, 50 + round),
                      "gatherv_init_c round %d: block from %d", round, j);
            for (int j = 0; j < size; j++)
                CHECK(block_ok(rb + rbase + (size_t)j * N, j, rank + 10 * round),
                      "alltoallv_init_c round %d: block from %d", round, j);
        }
        MPI_Request_free(&rq[0]);
        MPI_Request_free(&rq[1]);
        if (!bigme)
            free(rb);
        free(sa);
        free(sg);
        free(sd);
    }

    /* Messages still flow. */
    int v = rank, got = -1;
    MPI_Sendrecv(&v, 1, MPI_INT, (rank + 1) % size, 3, &got, 1, MPI_INT, (rank + size - 1) % size,
                 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(got == (rank + size - 1) % size, "after: got %d", got);
    munmap(far, SPAN);
    free(near);
    free(cnt);
    free(cnt2);
    free(dsp);
    free(dsp2);
    free(ty);
    free(ty2);
    return mtest_finalize();
}
