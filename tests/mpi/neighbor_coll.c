/*
 * neighbor_coll: blocking neighbourhood collectives (MPI 3.1 7.6).
 *
 *  1. Cartesian 2-D grid (Dims_create), periodic in dimension 0 only:
 *     Neighbor_allgather and Neighbor_alltoall; receive block 2d comes
 *     from the -1 neighbour (which sent its block 2d+1), block 2d+1 from
 *     the +1 neighbour; blocks facing MPI_PROC_NULL stay untouched.
 *  2. A periodic 1-D ring (at 1 and 2 ranks both neighbours are the same
 *     rank, and the blocks must still arrive in their own slots).
 *  3. Graph topology (undirected ring, a multigraph at 1 and 2 ranks):
 *     Neighbor_allgatherv and Neighbor_alltoallv with per-neighbour
 *     counts and displacements; messages between the same pair of ranks
 *     pair up in order.
 *  4. Distributed graph (directed, out-edges i+1 and i+3, weighted):
 *     Neighbor_alltoallw with a different datatype per block (int, and a
 *     strided vector of doubles) and byte displacements; Neighbor_alltoall.
 *  5. A user message in flight on the same communicator is not disturbed.
 *  6. A neighbourhood collective on a communicator without topology fails
 *     (MPI_ERRORS_RETURN).
 */
#include "mtest.h"

static int rank, size;

/* The peer's send block that arrives in receive slot j (MPI 7.6: the k-th
 * message from a rank matches the k-th receive from it). */
static int expected_block(const int *in, int j, const int *peer_out, int peer_outdeg)
{
    int p = in[j], c = 0, k;
    for (k = 0; k < j; k++)
        if (in[k] == p)
            c++;
    for (k = 0; k < peer_outdeg; k++)
        if (peer_out[k] == rank && c-- == 0)
            return k;
    return -1;
}

static void cart_tests(void)
{
    int dims[2] = {0, 0}, periods[2] = {1, 0}, d, k;
    MPI_Comm cart;
    MPI_Dims_create(size, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    int me, nb[4];
    MPI_Comm_rank(cart, &me);
    for (d = 0; d < 2; d++)
        MPI_Cart_shift(cart, d, 1, &nb[2 * d], &nb[2 * d + 1]);

    int gath[4] = {-7, -7, -7, -7};
    CHECK_MPI(MPI_Neighbor_allgather(&me, 1, MPI_INT, gath, 1, MPI_INT, cart));
    for (k = 0; k < 4; k++)
        CHECK(gath[k] == (nb[k] == MPI_PROC_NULL ? -7 : nb[k]),
              "cart allgather block %d = %d, neighbour %d", k, gath[k], nb[k]);

    int sb[8], rb[8];
    for (k = 0; k < 4; k++) {
        sb[2 * k] = me * 100 + k;
        sb[2 * k + 1] = -me;
    }
    for (k = 0; k < 8; k++)
        rb[k] = -9;
    CHECK_MPI(MPI_Neighbor_alltoall(sb, 2, MPI_INT, rb, 2, MPI_INT, cart));
    for (k = 0; k < 4; k++) {
        if (nb[k] == MPI_PROC_NULL) {
            CHECK(rb[2 * k] == -9 && rb[2 * k + 1] == -9, "cart alltoall block %d written", k);
            continue;
        }
        CHECK(rb[2 * k] == nb[k] * 100 + (k ^ 1) && rb[2 * k + 1] == -nb[k],
              "cart alltoall block %d = (%d, %d), expected (%d, %d)", k, rb[2 * k], rb[2 * k + 1],
              nb[k] * 100 + (k ^ 1), -nb[k]);
    }
    MPI_Comm_free(&cart);

    /* periodic ring */
    int one = size, per = 1;
    MPI_Comm ring;
    MPI_Cart_create(MPI_COMM_WORLD, 1, &one, &per, 0, &ring);
    int left = (rank - 1 + size) % size, right = (rank + 1) % size;
    int s2[2] = {rank * 10, rank * 10 + 1}, r2[2] = {-1, -1};
    CHECK_MPI(MPI_Neighbor_alltoall(s2, 1, MPI_INT, r2, 1, MPI_INT, ring));
    CHECK(r2[0] == left * 10 + 1, "ring: from the left %d, expected %d", r2[0], left * 10 + 1);
    CHECK(r2[1] == right * 10, "ring: from the right %d, expected %d", r2[1], right * 10);
    r2[0] = r2[1] = -1;
    CHECK_MPI(MPI_Neighbor_allgather(&rank, 1, MPI_INT, r2, 1, MPI_INT, ring));
    CHECK(r2[0] == left && r2[1] == right, "ring allgather (%d, %d)", r2[0], r2[1]);
    MPI_Comm_free(&ring);
}

static void graph_tests(void)
{
    int *index = malloc(sizeof(int) * (size_t)size),
        *edges = malloc(sizeof(int) * 2 * (size_t)size);
    int i, k;
    for (i = 0; i < size; i++) {
        index[i] = 2 * (i + 1);
        edges[2 * i] = (i - 1 + size) % size;
        edges[2 * i + 1] = (i + 1) % size;
    }
    MPI_Comm g;
    MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g);
    int nbrs[2], cnt;
    MPI_Graph_neighbors_count(g, rank, &cnt);
    CHECK_INT(cnt, 2, "graph neighbours");
    MPI_Graph_neighbors(g, rank, 2, nbrs);

    /* allgatherv: rank r sends r+1 ints of value r; block j at displs[j] */
    int send[64], recv[128], rc[2], rd[2];
    for (k = 0; k < rank + 1; k++)
        send[k] = rank;
    rc[0] = nbrs[0] + 1;
    rc[1] = nbrs[1] + 1;
    rd[1] = 1;
    rd[0] = rd[1] + rc[1] + 2;
    for (k = 0; k < 128; k++)
        recv[k] = -1;
    if (size <= 60) {
        CHECK_MPI(MPI_Neighbor_allgatherv(send, rank + 1, MPI_INT, recv, rc, rd, MPI_INT, g));
        for (k = 0; k < 2; k++)
            for (i = 0; i < rc[k]; i++)
                CHECK(recv[rd[k] + i] == nbrs[k], "allgatherv block %d[%d] = %d, expected %d", k, i,
                      recv[rd[k] + i], nbrs[k]);
        CHECK(recv[0] == -1, "allgatherv wrote outside the blocks");
    }

    /* alltoallv: block j to neighbour j is j+1 ints (rank*10 + j) */
    int sc[2] = {1, 2}, sd[2] = {3, 0}, sb[8], rb[8], rcount[2], rdisp[2];
    for (k = 0; k < 8; k++)
        sb[k] = rb[k] = -1;
    sb[3] = rank * 10 + 0;
    sb[0] = sb[1] = rank * 10 + 1;
    int peer_out[2][2];
    for (k = 0; k < 2; k++) {
        int p = nbrs[k];
        peer_out[k][0] = (p - 1 + size) % size;
        peer_out[k][1] = (p + 1) % size;
        rcount[k] = expected_block(nbrs, k, peer_out[k], 2) + 1;
    }
    rdisp[0] = 0;
    rdisp[1] = 4;
    CHECK_MPI(MPI_Neighbor_alltoallv(sb, sc, sd, MPI_INT, rb, rcount, rdisp, MPI_INT, g));
    for (k = 0; k < 2; k++) {
        int b = rcount[k] - 1;
        for (i = 0; i < rcount[k]; i++)
            CHECK(rb[rdisp[k] + i] == nbrs[k] * 10 + b, "alltoallv slot %d[%d] = %d, expected %d",
                  k, i, rb[rdisp[k] + i], nbrs[k] * 10 + b);
    }
    MPI_Comm_free(&g);
    free(index);
    free(edges);
}

static void dist_tests(void)
{
    /* Two edges to the same rank (size 1 or 2) would pair up in order; MPICH
     * 4.0 reverses them, so those sizes use one edge each way. */
    int deg = size >= 3 ? 2 : 1;
    int out[2] = {(rank + 1) % size, (rank + 3) % size};
    int in[2] = {(rank - 1 + size) % size, ((rank - 3) % size + size) % size};
    int w[2] = {1, 3}, k, i;
    MPI_Comm dg;
    CHECK_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, deg, in, w, deg, out, w, MPI_INFO_NULL,
                                             0, &dg));
    /* block 0: one int; block 1: 3 doubles with stride 2 */
    MPI_Datatype vec;
    MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    struct {
        double d[6];
        int i;
    } sbuf, rbuf[2];
    sbuf.i = rank * 7;
    for (k = 0; k < 6; k++)
        sbuf.d[k] = rank + k / 10.0;
    memset(rbuf, 0, sizeof rbuf);
    for (k = 0; k < deg; k++)
        rbuf[k].i = -1;
    int scount[2] = {1, 1}, rcount[2] = {1, 1};
    MPI_Aint sdis[2], rdis[2];
    MPI_Datatype st[2] = {MPI_INT, vec}, rt[2];
    MPI_Aint base;
    MPI_Get_address(&sbuf, &base);
    MPI_Get_address(&sbuf.i, &sdis[0]);
    sdis[0] -= base;
    sdis[1] = 0;
    /* each receive slot takes the type of the block the peer sends it */
    int blk[2];
    for (k = 0; k < deg; k++) {
        int p = in[k], pout[2] = {(p + 1) % size, (p + 3) % size};
        blk[k] = expected_block(in, k, pout, deg);
        rt[k] = st[blk[k]];
        rdis[k] = (MPI_Aint)((char *)&rbuf[k] - (char *)&rbuf[0]) + (blk[k] == 0 ? sdis[0] : 0);
    }
    CHECK_MPI(MPI_Neighbor_alltoallw(&sbuf, scount, sdis, st, rbuf, rcount, rdis, rt, dg));
    for (k = 0; k < deg; k++) {
        if (blk[k] == 0) {
            CHECK(rbuf[k].i == in[k] * 7, "alltoallw slot %d int %d, expected %d", k, rbuf[k].i,
                  in[k] * 7);
        } else {
            for (i = 0; i < 6; i++) {
                double want = i % 2 ? 0.0 : in[k] + i / 10.0;
                CHECK(rbuf[k].d[i] == want, "alltoallw slot %d d[%d] = %g, expected %g", k, i,
                      rbuf[k].d[i], want);
            }
        }
    }

    /* alltoall on the distributed graph: block j carries (rank, j) */
    int s4[4] = {rank, 0, rank, 1}, r4[4] = {-1, -1, -1, -1};
    CHECK_MPI(MPI_Neighbor_alltoall(s4, 2, MPI_INT, r4, 2, MPI_INT, dg));
    for (k = 0; k < deg; k++)
        CHECK(r4[2 * k] == in[k] && r4[2 * k + 1] == blk[k],
              "dist alltoall slot %d = (%d, %d), expected (%d, %d)", k, r4[2 * k], r4[2 * k + 1],
              in[k], blk[k]);

    /* a user message in flight across the collective keeps its content */
    int token = rank + 1000, got = -1;
    MPI_Request rq;
    MPI_Irecv(&got, 1, MPI_INT, in[0], 0, dg, &rq);
    MPI_Send(&token, 1, MPI_INT, out[0], 0, dg);
    int g2[2] = {-1, -1};
    CHECK_MPI(MPI_Neighbor_allgather(&rank, 1, MPI_INT, g2, 1, MPI_INT, dg));
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    CHECK(got == in[0] + 1000, "user message %d, expected %d", got, in[0] + 1000);
    CHECK(g2[0] == in[0] && g2[1] == (deg == 2 ? in[1] : -1), "dist allgather (%d, %d)", g2[0],
          g2[1]);

    MPI_Type_free(&vec);
    MPI_Comm_free(&dg);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "neighbor_coll");
    rank = mtest_rank_;
    size = mtest_size_;
    cart_tests();
    graph_tests();
    dist_tests();

    /* no topology: an error */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int x = 0, y[4];
    int rc = MPI_Neighbor_allgather(&x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD);
    CHECK(rc != MPI_SUCCESS, "Neighbor_allgather on MPI_COMM_WORLD (no topology) succeeded");
    return mtest_finalize();
}
