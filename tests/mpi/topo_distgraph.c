/*
 * topo_distgraph: distributed graph topologies (MPI 3.1 7.5.4, 7.5.5).
 *
 *  1. MPI_Dist_graph_create_adjacent, weighted (in: i-1, i-2; out: i+1,
 *     i+2 with weights): Topo_test gives MPI_DIST_GRAPH;
 *     Dist_graph_neighbors_count and Dist_graph_neighbors return the lists
 *     and weights in the order given; ranks keep their numbers.
 *  2. The same unweighted (MPI_UNWEIGHTED): weighted flag false.
 *  3. MPI_Dist_graph_create where rank 0 describes every edge
 *     (i -> i+1, i -> i+3, weight 100*i + dest) and, separately, where each
 *     rank describes the edges into it from two sources: every rank's
 *     in- and out-neighbours are the expected multisets with the right
 *     weights; a rank with no edges has degree 0.
 *  4. Comm_dup keeps the topology.
 *  5. Errors (MPI_ERRORS_RETURN): a negative degree, a destination outside
 *     the communicator, Dist_graph_neighbors_count on MPI_COMM_WORLD.
 */
#include "mtest.h"

static int rank, size;

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return x < y ? -1 : x > y;
}

/* Sort (rank, weight) pairs encoded as rank * 100000 + weight. */
static void check_set(const char *what, const int *got, const int *gw, int n, const int *want,
                      const int *ww, int wn)
{
    int a[16], b[16], i;
    CHECK(n == wn, "%s: degree %d, expected %d", what, n, wn);
    if (n != wn || n > 16)
        return;
    for (i = 0; i < n; i++) {
        a[i] = got[i] * 100000 + (gw ? gw[i] : 0);
        b[i] = want[i] * 100000 + (ww ? ww[i] : 0);
    }
    qsort(a, (size_t)n, sizeof(int), cmp_int);
    qsort(b, (size_t)n, sizeof(int), cmp_int);
    for (i = 0; i < n; i++)
        CHECK(a[i] == b[i], "%s: entry %d: got %d/%d, expected %d/%d", what, i, a[i] / 100000,
              a[i] % 100000, b[i] / 100000, b[i] % 100000);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "topo_distgraph");
    rank = mtest_rank_;
    size = mtest_size_;
    int i, k;

    /* 1, 2: adjacent */
    int in[2] = {(rank - 1 + size) % size, (rank - 2 + 2 * size) % size};
    int out[2] = {(rank + 1) % size, (rank + 2) % size};
    int inw[2] = {10 + in[0], 20 + in[1]}, outw[2] = {10 + rank, 20 + rank};
    for (int weighted = 1; weighted >= 0; weighted--) {
        MPI_Comm dg;
        CHECK_MPI(MPI_Dist_graph_create_adjacent(
            MPI_COMM_WORLD, 2, in, weighted ? inw : MPI_UNWEIGHTED, 2, out,
            weighted ? outw : MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg));
        int st = -1, me = -1, id = -1, od = -1, w = -1;
        MPI_Topo_test(dg, &st);
        CHECK_INT(st, MPI_DIST_GRAPH, "Topo_test");
        MPI_Comm_rank(dg, &me);
        CHECK_INT(me, rank, "rank in the distributed graph");
        CHECK_MPI(MPI_Dist_graph_neighbors_count(dg, &id, &od, &w));
        CHECK(id == 2 && od == 2, "degrees %d in %d out", id, od);
        CHECK(!w == !weighted, "weighted flag %d, expected %d", w, weighted);
        int s[2], sw[2], d[2], dw[2];
        if (weighted) {
            CHECK_MPI(MPI_Dist_graph_neighbors(dg, 2, s, sw, 2, d, dw));
            for (k = 0; k < 2; k++) {
                CHECK(s[k] == in[k] && sw[k] == inw[k], "source %d: %d/%d", k, s[k], sw[k]);
                CHECK(d[k] == out[k] && dw[k] == outw[k], "destination %d: %d/%d", k, d[k], dw[k]);
            }
        } else {
            CHECK_MPI(MPI_Dist_graph_neighbors(dg, 2, s, MPI_UNWEIGHTED, 2, d, MPI_UNWEIGHTED));
            for (k = 0; k < 2; k++)
                CHECK(s[k] == in[k] && d[k] == out[k], "unweighted neighbours %d: %d %d", k, s[k],
                      d[k]);
        }
        MPI_Comm dup;
        MPI_Comm_dup(dg, &dup);
        st = -1;
        MPI_Topo_test(dup, &st);
        CHECK_INT(st, MPI_DIST_GRAPH, "Topo_test of a duplicate");
        MPI_Dist_graph_neighbors_count(dup, &id, &od, &w);
        CHECK(id == 2 && od == 2, "duplicate's degrees %d %d", id, od);
        MPI_Comm_free(&dup);
        MPI_Comm_free(&dg);
    }

    /* 3a: rank 0 describes every edge */
    {
        int n = rank == 0 ? size : 0;
        int *src = malloc(sizeof(int) * (size_t)size), *deg = malloc(sizeof(int) * (size_t)size);
        int *dst = malloc(sizeof(int) * 2 * (size_t)size),
            *wt = malloc(sizeof(int) * 2 * (size_t)size);
        for (i = 0; i < size; i++) {
            src[i] = i;
            deg[i] = 2;
            dst[2 * i] = (i + 1) % size;
            dst[2 * i + 1] = (i + 3) % size;
            wt[2 * i] = 100 * i + dst[2 * i];
            wt[2 * i + 1] = 100 * i + dst[2 * i + 1];
        }
        MPI_Comm dg;
        CHECK_MPI(
            MPI_Dist_graph_create(MPI_COMM_WORLD, n, src, deg, dst, wt, MPI_INFO_NULL, 0, &dg));
        int id, od, w, s[4], sw[4], d[4], dw[4];
        MPI_Dist_graph_neighbors_count(dg, &id, &od, &w);
        CHECK(w, "weighted graph reported unweighted");
        if (id <= 4 && od <= 4) {
            MPI_Dist_graph_neighbors(dg, 4, s, sw, 4, d, dw);
            int ws[2] = {(rank - 1 + size) % size, ((rank - 3) % size + size) % size};
            int wsw[2] = {100 * ws[0] + rank, 100 * ws[1] + rank};
            int wd[2] = {(rank + 1) % size, (rank + 3) % size};
            int wdw[2] = {100 * rank + wd[0], 100 * rank + wd[1]};
            check_set("rank 0's graph, in", s, sw, id, ws, wsw, 2);
            check_set("rank 0's graph, out", d, dw, od, wd, wdw, 2);
        } else {
            CHECK(0, "degrees %d %d too large", id, od);
        }
        MPI_Comm_free(&dg);

        /* 3b: each rank describes the edges into it, from i-1 and i-2,
         * unweighted; with 3 or more ranks the last one describes none
         * (MPICH 4.0 crashes on that rank: there, everyone describes) */
        int mysrc[2] = {(rank - 1 + size) % size, (rank - 2 + 2 * size) % size};
        int mydeg[2] = {1, 1}, mydst[2] = {rank, rank};
        int skip_last = size >= 3 && !mtest_is_mpich();
        int nn = skip_last && rank == size - 1 ? 0 : 2;
        CHECK_MPI(MPI_Dist_graph_create(MPI_COMM_WORLD, nn, mysrc, mydeg, mydst, MPI_UNWEIGHTED,
                                        MPI_INFO_NULL, 0, &dg));
        MPI_Dist_graph_neighbors_count(dg, &id, &od, &w);
        CHECK(!w, "unweighted graph reported weighted");
        if (id <= 4 && od <= 4) {
            MPI_Dist_graph_neighbors(dg, 4, s, sw, 4, d, dw);
            int ws[2] = {mysrc[0], mysrc[1]}, nws = nn;
            int wd[2], nwd = 0;
            int last = skip_last ? size - 1 : -1;
            if ((rank + 1) % size != last)
                wd[nwd++] = (rank + 1) % size;
            if ((rank + 2) % size != last)
                wd[nwd++] = (rank + 2) % size;
            check_set("own in-edges, in", s, NULL, id, ws, NULL, nws);
            check_set("own in-edges, out", d, NULL, od, wd, NULL, nwd);
        } else {
            CHECK(0, "degrees %d %d too large", id, od);
        }
        MPI_Comm_free(&dg);
        free(src);
        free(deg);
        free(dst);
        free(wt);
    }

    /* 5: errors */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    {
        MPI_Comm bad;
        int rc, id, od, w;
        int s1[1] = {0}, d1[1] = {size + 5}, deg[1] = {-1};
        rc = MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, -1, s1, MPI_UNWEIGHTED, 0, d1,
                                            MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &bad);
        CHECK(rc != MPI_SUCCESS, "negative indegree accepted");
        /* MPICH 4.0 accepts both of these (no argument check). */
        if (!mtest_is_mpich()) {
            rc = MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, s1, MPI_UNWEIGHTED, 1, d1,
                                                MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &bad);
            CHECK(rc != MPI_SUCCESS, "destination %d outside the communicator accepted", d1[0]);
            rc = MPI_Dist_graph_create(MPI_COMM_WORLD, 1, s1, deg, d1, MPI_UNWEIGHTED,
                                       MPI_INFO_NULL, 0, &bad);
            CHECK(rc != MPI_SUCCESS, "negative degree accepted");
        }
        rc = MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &id, &od, &w);
        CHECK(rc != MPI_SUCCESS, "Dist_graph_neighbors_count on MPI_COMM_WORLD");
    }
    return mtest_finalize();
}
