/*
 * neighbor_nb: nonblocking neighbourhood collectives (MPI 3.1 7.7).
 *
 *  1. A periodic 1-D ring (at 1 and 2 ranks both neighbours are one rank):
 *     Ineighbor_allgather and Ineighbor_alltoall; block 0 comes from the -1
 *     neighbour (what it sent its +1 neighbour), block 1 from the +1 one.
 *  2. A non-periodic 2-D grid: blocks facing MPI_PROC_NULL stay untouched.
 *  3. A directed distributed graph (out-edges to i+1 and i+3, in-edges from
 *     i-1 and i-3; multi-edges at small sizes pair up in order):
 *     Ineighbor_allgatherv, Ineighbor_alltoallv and Ineighbor_alltoallw
 *     (an int and a strided vector type per block, byte displacements).
 *  4. Several outstanding at once with a blocking one in between, completed
 *     by one Waitall; and by Test polling.
 *  5. Progress without the program: rank r starts its Ineighbor_alltoall
 *     only after a message from rank r-1, which rank r-1 sends after
 *     starting its own (an implementation that received in the call would
 *     deadlock).
 *  6. A communicator without topology gives an error (MPI_ERRORS_RETURN).
 */
#include "mtest.h"

static int rank, size;

static int val(int w, int k, int i) { return w * 10000 + k * 100 + i; }

static void ring(void)
{
    MPI_Comm c;
    int dims[1] = {size}, periods[1] = {1};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &c);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    int sb[4], rb[4];
    MPI_Request rq;
    for (int i = 0; i < 2; i++)
        sb[i] = val(rank, 0, i);
    for (int i = 0; i < 4; i++)
        rb[i] = -1;
    CHECK_MPI(MPI_Ineighbor_allgather(sb, 2, MPI_INT, rb, 2, MPI_INT, c, &rq));
    CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < 2; i++) {
        CHECK(rb[i] == val(left, 0, i), "ring allgather block 0 [%d] = %d", i, rb[i]);
        CHECK(rb[2 + i] == val(right, 0, i), "ring allgather block 1 [%d] = %d", i, rb[2 + i]);
    }
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 2; i++)
            sb[2 * k + i] = val(rank, k, i);
    CHECK_MPI(MPI_Ineighbor_alltoall(sb, 2, MPI_INT, rb, 2, MPI_INT, c, &rq));
    CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < 2; i++) {
        CHECK(rb[i] == val(left, 1, i), "ring alltoall block 0 [%d] = %d", i, rb[i]);
        CHECK(rb[2 + i] == val(right, 0, i), "ring alltoall block 1 [%d] = %d", i, rb[2 + i]);
    }
    MPI_Comm_free(&c);
}

static void grid(void)
{
    MPI_Comm c;
    int dims[2] = {0, 0}, periods[2] = {0, 0}, coords[2];
    MPI_Dims_create(size, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c);
    int me;
    MPI_Comm_rank(c, &me);
    MPI_Cart_coords(c, me, 2, coords);
    int sb = me, rb[4] = {-1, -1, -1, -1};
    MPI_Request rq;
    CHECK_MPI(MPI_Ineighbor_allgather(&sb, 1, MPI_INT, rb, 1, MPI_INT, c, &rq));
    CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int d = 0; d < 2; d++) {
        int src, dst;
        MPI_Cart_shift(c, d, 1, &src, &dst);
        CHECK(rb[2 * d] == (src == MPI_PROC_NULL ? -1 : src), "grid dim %d block -1: %d", d,
              rb[2 * d]);
        CHECK(rb[2 * d + 1] == (dst == MPI_PROC_NULL ? -1 : dst), "grid dim %d block +1: %d", d,
              rb[2 * d + 1]);
    }
    MPI_Comm_free(&c);
}

static void graph(void)
{
    MPI_Comm c;
    int src[2] = {(rank + size - 1) % size, (rank + 3 * size - 3) % size};
    int dst[2] = {(rank + 1) % size, (rank + 3) % size};
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, MPI_UNWEIGHTED, 2, dst, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &c);
    /* Slot k receives from src[k] the block that src[k] sent as its block k. */
    int sb[16], rb[32], cnt[2], dsp[2], scnt[2], sdsp[2];
    MPI_Request rq;
    /* Ineighbor_allgatherv: each rank sends (rank % 3) + 1 elements */
    int mine = rank % 3 + 1;
    for (int i = 0; i < mine; i++)
        sb[i] = val(rank, 0, i);
    for (int k = 0; k < 2; k++) {
        cnt[k] = src[k] % 3 + 1;
        dsp[k] = 1 + 5 * k;
    }
    for (int i = 0; i < 32; i++)
        rb[i] = -1;
    CHECK_MPI(MPI_Ineighbor_allgatherv(sb, mine, MPI_INT, rb, cnt, dsp, MPI_INT, c, &rq));
    CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < cnt[k]; i++)
            CHECK(rb[dsp[k] + i] == val(src[k], 0, i), "graph allgatherv slot %d [%d] = %d", k, i,
                  rb[dsp[k] + i]);
    CHECK(rb[0] == -1, "graph allgatherv wrote before its first block");
    /* Ineighbor_alltoallv: block k has k + 2 elements */
    for (int k = 0; k < 2; k++) {
        scnt[k] = cnt[k] = k + 2;
        sdsp[k] = 4 * k;
        dsp[k] = 6 * k + 1;
        for (int i = 0; i < k + 2; i++)
            sb[sdsp[k] + i] = val(rank, k, i);
    }
    for (int i = 0; i < 32; i++)
        rb[i] = -1;
    CHECK_MPI(MPI_Ineighbor_alltoallv(sb, scnt, sdsp, MPI_INT, rb, cnt, dsp, MPI_INT, c, &rq));
    CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < k + 2; i++)
            CHECK(rb[dsp[k] + i] == val(src[k], k, i), "graph alltoallv slot %d [%d] = %d", k, i,
                  rb[dsp[k] + i]);
    /* Ineighbor_alltoallw: block 0 three ints, block 1 a vector of three
     * ints with stride 2 received as three contiguous ints. */
    MPI_Datatype vec;
    MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Datatype st[2] = {MPI_INT, vec}, rt[2] = {MPI_INT, MPI_INT};
    MPI_Aint sbd[2] = {0, 4 * (MPI_Aint)sizeof(int)}, rbd[2] = {0, 8 * (MPI_Aint)sizeof(int)};
    int swc[2] = {3, 1}, rwc[2] = {3, 3};
    for (int i = 0; i < 16; i++)
        sb[i] = -2;
    for (int i = 0; i < 3; i++) {
        sb[i] = val(rank, 0, i);
        sb[4 + 2 * i] = val(rank, 1, i);
    }
    for (int i = 0; i < 32; i++)
        rb[i] = -1;
    CHECK_MPI(MPI_Ineighbor_alltoallw(sb, swc, sbd, st, rb, rwc, rbd, rt, c, &rq));
    CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 3; i++)
            CHECK(rb[8 * k + i] == val(src[k], k, i), "graph alltoallw slot %d [%d] = %d", k, i,
                  rb[8 * k + i]);
    MPI_Type_free(&vec);
    MPI_Comm_free(&c);
}

static void overlapped(void)
{
    MPI_Comm c;
    int dims[1] = {size}, periods[1] = {1};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &c);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    for (int round = 0; round < 2; round++) {
        int a[2] = {rank, rank}, b[2], x[2] = {10 * rank, 10 * rank + 1}, y[2], z[2];
        MPI_Request rq[2];
        CHECK_MPI(MPI_Ineighbor_allgather(&a[0], 1, MPI_INT, b, 1, MPI_INT, c, &rq[0]));
        CHECK_MPI(MPI_Ineighbor_alltoall(x, 1, MPI_INT, y, 1, MPI_INT, c, &rq[1]));
        MPI_Neighbor_allgather(&a[1], 1, MPI_INT, z, 1, MPI_INT, c);
        if (round == 0) {
            CHECK_MPI(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        } else {
            int flag = 0;
            while (!flag)
                CHECK_MPI(MPI_Testall(2, rq, &flag, MPI_STATUSES_IGNORE));
        }
        CHECK(b[0] == left && b[1] == right, "overlapped allgather: %d %d", b[0], b[1]);
        CHECK(z[0] == left && z[1] == right, "blocking allgather between: %d %d", z[0], z[1]);
        CHECK(y[0] == 10 * left + 1 && y[1] == 10 * right, "overlapped alltoall: %d %d", y[0],
              y[1]);
    }
    MPI_Comm_free(&c);
}

static void progress(void)
{
    MPI_Comm c;
    int dims[1] = {size}, periods[1] = {1};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &c);
    int tok = 0, x[2] = {rank, rank}, y[2] = {-1, -1};
    MPI_Request rq;
    if (rank > 0)
        MPI_Recv(&tok, 1, MPI_INT, rank - 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK_MPI(MPI_Ineighbor_alltoall(x, 1, MPI_INT, y, 1, MPI_INT, c, &rq));
    if (rank + 1 < size)
        MPI_Send(&tok, 1, MPI_INT, rank + 1, 5, MPI_COMM_WORLD);
    CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(y[0] == (rank + size - 1) % size && y[1] == (rank + 1) % size, "progress: %d %d", y[0],
          y[1]);
    MPI_Comm_free(&c);
}

static void bad_input(void)
{
    int x = 0, y[2];
    MPI_Request rq = MPI_REQUEST_NULL;
    MPI_Comm d;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
    int rc = MPI_Ineighbor_allgather(&x, 1, MPI_INT, y, 1, MPI_INT, d, &rq);
    CHECK(rc != MPI_SUCCESS, "Ineighbor_allgather without topology succeeded");
    if (rc == MPI_SUCCESS)
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Comm_free(&d);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "neighbor_nb");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ring();
    grid();
    graph();
    overlapped();
    progress();
    bad_input();
    return mtest_finalize();
}
