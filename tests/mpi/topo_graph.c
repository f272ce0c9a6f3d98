/*
 * topo_graph: graph topologies (MPI 3.1 7.5.3, 7.5.5).
 *
 *  1. MPI_Graph_create of a ring with chords over all ranks: MPI_Topo_test
 *     gives MPI_GRAPH; Graphdims_get, Graph_get, Graph_neighbors_count and Graph_neighbors for every rank
 *     give back what was passed; the communicator has the parent's ranks
 *     (reorder false) and works for point-to-point with the neighbours.
 *  2. MPI_Comm_dup keeps the graph.
 *  3. A graph with fewer nodes than ranks: the others get MPI_COMM_NULL;
 *     MPI_Graph_map agrees.  A graph with 0 nodes: everyone gets
 *     MPI_COMM_NULL.
 *  4. Errors (MPI_ERRORS_RETURN): an edge to a node outside the graph,
 *     negative nnodes, more nodes than ranks, Graph_neighbors of a rank
 *     outside the graph, graph calls on a Cartesian communicator and on
 *     MPI_COMM_WORLD.
 */
#include "mtest.h"

static int rank, size;

/* node i: i-1, i+1 (ring), and i+size/2 when size >= 4 */
static void build(int n, int *index, int *edges, int *nedges)
{
    int e = 0, i;
    for (i = 0; i < n; i++) {
        if (n > 1) {
            edges[e++] = (i + n - 1) % n;
            edges[e++] = (i + 1) % n;
        }
        if (n >= 4)
            edges[e++] = (i + n / 2) % n;
        index[i] = e;
    }
    *nedges = e;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "topo_graph");
    rank = mtest_rank_;
    size = mtest_size_;
    int *index = malloc(sizeof(int) * (size_t)(size + 1));
    int *edges = malloc(sizeof(int) * 3 * (size_t)(size + 1));
    int *gi = malloc(sizeof(int) * (size_t)size), *ge = malloc(sizeof(int) * 3 * (size_t)size);
    int nedges, i, k;
    build(size, index, edges, &nedges);

    MPI_Comm g;
    CHECK_MPI(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g));
    int status = -1, nn = -1, ne = -1, me = -1;
    MPI_Topo_test(g, &status);
    CHECK_INT(status, MPI_GRAPH, "Topo_test");
    MPI_Comm_rank(g, &me);
    CHECK_INT(me, rank, "rank in the graph communicator");
    MPI_Graphdims_get(g, &nn, &ne);
    CHECK_INT(nn, size, "Graphdims_get nnodes");
    CHECK_INT(ne, nedges, "Graphdims_get nedges");
    CHECK_MPI(MPI_Graph_get(g, size, nedges, gi, ge));
    for (i = 0; i < size; i++)
        CHECK(gi[i] == index[i], "Graph_get index[%d] = %d, expected %d", i, gi[i], index[i]);
    for (i = 0; i < nedges; i++)
        CHECK(ge[i] == edges[i], "Graph_get edges[%d] = %d, expected %d", i, ge[i], edges[i]);
    for (i = 0; i < size; i++) {
        int cnt = -1, lo = i ? index[i - 1] : 0, nb[3] = {-1, -1, -1};
        CHECK_MPI(MPI_Graph_neighbors_count(g, i, &cnt));
        CHECK_INT(cnt, index[i] - lo, "Graph_neighbors_count");
        CHECK_MPI(MPI_Graph_neighbors(g, i, 3, nb));
        for (k = 0; k < cnt && k < 3; k++)
            CHECK(nb[k] == edges[lo + k], "Graph_neighbors(%d)[%d] = %d, expected %d", i, k, nb[k],
                  edges[lo + k]);
    }
    /* exchange with the neighbours (the graph is symmetric) */
    {
        int cnt, nb[3], got[3], r;
        MPI_Request rq[6];
        MPI_Graph_neighbors_count(g, rank, &cnt);
        MPI_Graph_neighbors(g, rank, 3, nb);
        for (k = 0; k < cnt; k++)
            MPI_Irecv(&got[k], 1, MPI_INT, nb[k], 5, g, &rq[k]);
        for (k = 0; k < cnt; k++)
            MPI_Isend(&rank, 1, MPI_INT, nb[k], 5, g, &rq[cnt + k]);
        MPI_Waitall(2 * cnt, rq, MPI_STATUSES_IGNORE);
        for (k = 0; k < cnt; k++) {
            r = got[k];
            CHECK(r == nb[k], "message from neighbour %d carried %d", nb[k], r);
        }
    }

    MPI_Comm d;
    MPI_Comm_dup(g, &d);
    status = -1;
    MPI_Topo_test(d, &status);
    CHECK_INT(status, MPI_GRAPH, "Topo_test of a duplicate");
    MPI_Graphdims_get(d, &nn, &ne);
    CHECK(nn == size && ne == nedges, "duplicate's graph: %d nodes %d edges", nn, ne);
    MPI_Comm_free(&d);
    MPI_Comm_free(&g);

    /* fewer nodes than ranks */
    int n2 = size > 1 ? size - 1 : 1, ne2, newrank = -2;
    build(n2, index, edges, &ne2);
    CHECK_MPI(MPI_Graph_map(MPI_COMM_WORLD, n2, index, edges, &newrank));
    CHECK_INT(newrank, rank < n2 ? rank : MPI_UNDEFINED, "Graph_map");
    CHECK_MPI(MPI_Graph_create(MPI_COMM_WORLD, n2, index, edges, 0, &g));
    if (rank < n2) {
        CHECK(g != MPI_COMM_NULL, "rank %d < %d nodes got MPI_COMM_NULL", rank, n2);
        if (g != MPI_COMM_NULL) {
            MPI_Graphdims_get(g, &nn, &ne);
            CHECK(nn == n2 && ne == ne2, "smaller graph: %d nodes %d edges", nn, ne);
            MPI_Comm_free(&g);
        }
    } else {
        CHECK(g == MPI_COMM_NULL, "rank %d >= %d nodes got a communicator", rank, n2);
    }
    CHECK_MPI(MPI_Graph_create(MPI_COMM_WORLD, 0, index, edges, 0, &g));
    CHECK(g == MPI_COMM_NULL, "a graph of 0 nodes gave a communicator");

    /* errors */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    {
        int bi[2] = {1, 2}, be[2] = {1, size + 3}, rc, cls;
        MPI_Comm bad = MPI_COMM_NULL;
        /* MPICH 4.0 accepts both of these (no argument check). */
        if (!mtest_is_mpich()) {
            rc = MPI_Graph_create(MPI_COMM_WORLD, size >= 2 ? 2 : 1, bi, be, 0, &bad);
            CHECK(rc != MPI_SUCCESS, "an edge outside the graph was accepted");
            rc = MPI_Graph_create(MPI_COMM_WORLD, -1, bi, be, 0, &bad);
            CHECK(rc != MPI_SUCCESS, "negative nnodes was accepted");
            MPI_Error_class(rc, &cls);
            CHECK(cls == MPI_ERR_ARG, "negative nnodes: class %d, expected MPI_ERR_ARG", cls);
        }
        be[1] = 0;
        rc = MPI_Graph_create(MPI_COMM_WORLD, size + 1, index, edges, 0, &bad);
        CHECK(rc != MPI_SUCCESS, "more nodes than ranks was accepted");
        int c2[1] = {size}, p2[1] = {0}, cnt;
        MPI_Comm cart;
        MPI_Cart_create(MPI_COMM_WORLD, 1, c2, p2, 0, &cart);
        rc = MPI_Graph_neighbors_count(cart, 0, &cnt);
        CHECK(rc != MPI_SUCCESS, "Graph_neighbors_count on a Cartesian communicator");
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_TOPOLOGY, "class %d, expected MPI_ERR_TOPOLOGY", cls);
        MPI_Comm_free(&cart);
        rc = MPI_Graphdims_get(MPI_COMM_WORLD, &nn, &ne);
        CHECK(rc != MPI_SUCCESS, "Graphdims_get on MPI_COMM_WORLD");
        build(size, index, edges, &nedges);
        MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g);
        MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
        rc = MPI_Graph_neighbors_count(g, size, &cnt);
        CHECK(rc != MPI_SUCCESS, "Graph_neighbors_count of rank %d (outside)", size);
        MPI_Comm_free(&g);
    }
    free(index);
    free(edges);
    free(gi);
    free(ge);
    return mtest_finalize();
}
