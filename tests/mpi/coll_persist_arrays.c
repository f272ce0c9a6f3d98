/*
 * coll_persist_arrays: the counts, displacements and types arrays of the
 * persistent v and w collectives, and the neighbourhood v and w
 * collectives in their large-count (_c) forms.
 *
 *  1. Each persistent v/w init (Gatherv, Scatterv, Allgatherv, Alltoallv,
 *     Alltoallw, Reduce_scatter, Neighbor_allgatherv/alltoallv/alltoallw,
 *     and the _c forms of the neighbourhood ones) gets arrays on the heap
 *     that are overwritten and freed as soon as the init call returns (as
 *     mpi4py's large-count layer does; MPICH allows it): every start still
 *     moves the data the arrays said at the init, twice with new data.
 *  2. MPI_Neighbor_allgatherv_c, MPI_Neighbor_alltoallv_c,
 *     MPI_Neighbor_alltoallw_c and their MPI_Ineighbor_ forms on a
 *     periodic 1-D Cartesian communicator (two neighbours; at 3 processes
 *     or more) and a distributed graph (one in-neighbour, one
 *     out-neighbour).
 */
#include "mtest.h"

#define B 3 /* ints per block */

static int np, me;

/* A heap copy of n ints / MPI_Count / MPI_Aint / types, to be spoilt. */
static int *ints(int n, int v0, int step)
{
    int *a = malloc((size_t)(n ? n : 1) * sizeof *a);
    for (int i = 0; i < n; i++)
        a[i] = v0 + i * step;
    return a;
}
static MPI_Count *counts_c(int n, int v)
{
    MPI_Count *a = malloc((size_t)(n ? n : 1) * sizeof *a);
    for (int i = 0; i < n; i++)
        a[i] = v;
    return a;
}
static MPI_Aint *aints(int n, MPI_Aint v0, MPI_Aint step)
{
    MPI_Aint *a = malloc((size_t)(n ? n : 1) * sizeof *a);
    for (int i = 0; i < n; i++)
        a[i] = v0 + i * step;
    return a;
}
static MPI_Datatype *types(int n)
{
    MPI_Datatype *a = malloc((size_t)(n ? n : 1) * sizeof *a);
    for (int i = 0; i < n; i++)
        a[i] = MPI_INT;
    return a;
}
/* Spoil and free what the init was given. */
static void spoil(void *a, size_t bytes)
{
    memset(a, 0x5a, bytes);
    free(a);
}

/* The value of int j of the block rank src sends to its k-th destination
 * in round t. */
static int val(int src, int k, int j, int t) { return 100000 * t + 1000 * src + 10 * k + j; }

static void fill(int *buf, int nblocks, int t)
{
    for (int k = 0; k < nblocks; k++)
        for (int j = 0; j < B; j++)
            buf[k * B + j] = val(me, k, j, t);
}

/* Run request r twice (rounds 1 and 2), refilling sbuf (nsb blocks, the
 * k-th for destination k, or all blocks one: one) and checking rbuf's
 * block k came from from[k] as its block fk[k]. */
static void run(const char *what, MPI_Request *r, int *sbuf, int nsb, int one, int *rbuf, int nrb,
                const int *from, const int *fk)
{
    for (int t = 1; t <= 2; t++) {
        fill(sbuf, nsb, t);
        if (one)
            for (int k = 0; k < nsb; k++)
                for (int j = 0; j < B; j++)
                    sbuf[k * B + j] = val(me, 0, j, t);
        for (int i = 0; i < nrb * B; i++)
            rbuf[i] = -1;
        CHECK_MPI(MPI_Start(r));
        CHECK_MPI(MPI_Wait(r, MPI_STATUS_IGNORE));
        int bad = -1;
        for (int k = 0; k < nrb && bad < 0; k++)
            for (int j = 0; j < B; j++)
                if (rbuf[k * B + j] != val(from[k], one ? 0 : fk[k], j, t)) {
                    bad = k * B + j;
                    break;
                }
        CHECK(bad < 0, "%s round %d: int %d is %d, expected %d", what, t, bad,
              bad < 0 ? 0 : rbuf[bad],
              bad < 0 ? 0 : val(from[bad / B], one ? 0 : fk[bad / B], bad % B, t));
    }
    CHECK_MPI(MPI_Request_free(r));
}

static void world_inits(void)
{
    MPI_Comm comm = MPI_COMM_WORLD;
    int *sbuf = malloc((size_t)np * B * sizeof *sbuf);
    int *rbuf = malloc((size_t)np * B * sizeof *rbuf);
    int *from = ints(np, 0, 1), *fk = ints(np, me, 0);
    MPI_Request r;

    int *c = ints(np, B, 0), *d = ints(np, 0, B);
    CHECK_MPI(MPI_Allgatherv_init(sbuf, B, MPI_INT, rbuf, c, d, MPI_INT, comm, MPI_INFO_NULL, &r));
    spoil(c, np * sizeof *c), spoil(d, np * sizeof *d);
    run("Allgatherv_init", &r, sbuf, 1, 1, rbuf, np, from, fk);

    int *sc = ints(np, B, 0), *sd = ints(np, 0, B), *rc = ints(np, B, 0), *rd = ints(np, 0, B);
    CHECK_MPI(
        MPI_Alltoallv_init(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, comm, MPI_INFO_NULL, &r));
    spoil(sc, np * sizeof *sc), spoil(sd, np * sizeof *sd);
    spoil(rc, np * sizeof *rc), spoil(rd, np * sizeof *rd);
    run("Alltoallv_init", &r, sbuf, np, 0, rbuf, np, from, fk);

    sc = ints(np, B, 0), sd = ints(np, 0, B * (int)sizeof(int)), rc = ints(np, B, 0);
    rd = ints(np, 0, B * (int)sizeof(int));
    MPI_Datatype *st = types(np), *rt = types(np);
    CHECK_MPI(MPI_Alltoallw_init(sbuf, sc, sd, st, rbuf, rc, rd, rt, comm, MPI_INFO_NULL, &r));
    spoil(sc, np * sizeof *sc), spoil(sd, np * sizeof *sd), spoil(st, np * sizeof *st);
    spoil(rc, np * sizeof *rc), spoil(rd, np * sizeof *rd), spoil(rt, np * sizeof *rt);
    run("Alltoallw_init", &r, sbuf, np, 0, rbuf, np, from, fk);

    /* Gatherv to the last rank, Scatterv from it. */
    int root = np - 1;
    c = ints(np, B, 0), d = ints(np, 0, B);
    CHECK_MPI(
        MPI_Gatherv_init(sbuf, B, MPI_INT, rbuf, c, d, MPI_INT, root, comm, MPI_INFO_NULL, &r));
    spoil(c, np * sizeof *c), spoil(d, np * sizeof *d);
    run("Gatherv_init", &r, sbuf, 1, 1, rbuf, me == root ? np : 0, from, fk);

    c = ints(np, B, 0), d = ints(np, 0, B);
    CHECK_MPI(
        MPI_Scatterv_init(sbuf, c, d, MPI_INT, rbuf, B, MPI_INT, root, comm, MPI_INFO_NULL, &r));
    spoil(c, np * sizeof *c), spoil(d, np * sizeof *d);
    {
        int rfrom = root, rk = me;
        run("Scatterv_init", &r, sbuf, np, 0, rbuf, 1, &rfrom, &rk);
    }

    /* Reduce_scatter of MPI_MAX: block k of the result is the largest
     * rank's block k. */
    c = ints(np, B, 0);
    CHECK_MPI(MPI_Reduce_scatter_init(sbuf, rbuf, c, MPI_INT, MPI_MAX, comm, MPI_INFO_NULL, &r));
    spoil(c, np * sizeof *c);
    {
        int rfrom = np - 1, rk = me;
        run("Reduce_scatter_init", &r, sbuf, np, 0, rbuf, 1, &rfrom, &rk);
    }
    free(from), free(fk), free(sbuf), free(rbuf);
}

/* The neighbourhood collectives on comm, whose in-neighbour k is from[k]
 * and sends its block fk[k] to this rank. */
static void neighbours(const char *name, MPI_Comm comm, int in, int out, const int *from,
                       const int *fk)
{
    char what[96];
    int *sbuf = malloc((size_t)(out + 1) * B * sizeof *sbuf);
    int *rbuf = malloc((size_t)(in + 1) * B * sizeof *rbuf);
    int *zero = ints(in, 0, 0);
    MPI_Request r;

    /* Persistent, int arrays and _c arrays, all spoilt after the init. */
    int *c = ints(in, B, 0), *d = ints(in, 0, B);
    CHECK_MPI(MPI_Neighbor_allgatherv_init(sbuf, B, MPI_INT, rbuf, c, d, MPI_INT, comm,
                                           MPI_INFO_NULL, &r));
    spoil(c, in * sizeof *c), spoil(d, in * sizeof *d);
    snprintf(what, sizeof what, "%s Neighbor_allgatherv_init", name);
    run(what, &r, sbuf, 1, 1, rbuf, in, from, zero);

    MPI_Count *cc = counts_c(in, B);
    MPI_Aint *ad = aints(in, 0, B);
    CHECK_MPI(MPI_Neighbor_allgatherv_init_c(sbuf, B, MPI_INT, rbuf, cc, ad, MPI_INT, comm,
                                             MPI_INFO_NULL, &r));
    spoil(cc, in * sizeof *cc), spoil(ad, in * sizeof *ad);
    snprintf(what, sizeof what, "%s Neighbor_allgatherv_init_c", name);
    run(what, &r, sbuf, 1, 1, rbuf, in, from, zero);

    int *sc = ints(out, B, 0), *sd = ints(out, 0, B), *rc = ints(in, B, 0), *rd = ints(in, 0, B);
    CHECK_MPI(MPI_Neighbor_alltoallv_init(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, comm,
                                          MPI_INFO_NULL, &r));
    spoil(sc, out * sizeof *sc), spoil(sd, out * sizeof *sd);
    spoil(rc, in * sizeof *rc), spoil(rd, in * sizeof *rd);
    snprintf(what, sizeof what, "%s Neighbor_alltoallv_init", name);
    run(what, &r, sbuf, out, 0, rbuf, in, from, fk);

    MPI_Count *scc = counts_c(out, B), *rcc = counts_c(in, B);
    MPI_Aint *sda = aints(out, 0, B), *rda = aints(in, 0, B);
    CHECK_MPI(MPI_Neighbor_alltoallv_init_c(sbuf, scc, sda, MPI_INT, rbuf, rcc, rda, MPI_INT, comm,
                                            MPI_INFO_NULL, &r));
    spoil(scc, out * sizeof *scc), spoil(sda, out * sizeof *sda);
    spoil(rcc, in * sizeof *rcc), spoil(rda, in * sizeof *rda);
    snprintf(what, sizeof what, "%s Neighbor_alltoallv_init_c", name);
    run(what, &r, sbuf, out, 0, rbuf, in, from, fk);

    MPI_Aint bs = B * (MPI_Aint)sizeof(int);
    sc = ints(out, B, 0), rc = ints(in, B, 0);
    sda = aints(out, 0, bs), rda = aints(in, 0, bs);
    MPI_Datatype *st = types(out), *rt = types(in);
    CHECK_MPI(
        MPI_Neighbor_alltoallw_init(sbuf, sc, sda, st, rbuf, rc, rda, rt, comm, MPI_INFO_NULL, &r));
    spoil(sc, out * sizeof *sc), spoil(sda, out * sizeof *sda), spoil(st, out * sizeof *st);
    spoil(rc, in * sizeof *rc), spoil(rda, in * sizeof *rda), spoil(rt, in * sizeof *rt);
    snprintf(what, sizeof what, "%s Neighbor_alltoallw_init", name);
    run(what, &r, sbuf, out, 0, rbuf, in, from, fk);

    scc = counts_c(out, B), rcc = counts_c(in, B);
    sda = aints(out, 0, bs), rda = aints(in, 0, bs);
    st = types(out), rt = types(in);
    CHECK_MPI(MPI_Neighbor_alltoallw_init_c(sbuf, scc, sda, st, rbuf, rcc, rda, rt, comm,
                                            MPI_INFO_NULL, &r));
    spoil(scc, out * sizeof *scc), spoil(sda, out * sizeof *sda), spoil(st, out * sizeof *st);
    spoil(rcc, in * sizeof *rcc), spoil(rda, in * sizeof *rda), spoil(rt, in * sizeof *rt);
    snprintf(what, sizeof what, "%s Neighbor_alltoallw_init_c", name);
    run(what, &r, sbuf, out, 0, rbuf, in, from, fk);

    /* Blocking and nonblocking _c forms (round 3 and 4). */
    cc = counts_c(in, B), ad = aints(in, 0, B);
    scc = counts_c(out, B), rcc = counts_c(in, B);
    sda = aints(out, 0, B), rda = aints(in, 0, B);
    MPI_Aint *sdw = aints(out, 0, bs), *rdw = aints(in, 0, bs);
    st = types(out), rt = types(in);
    for (int form = 0; form < 6; form++) {
        int t = 3 + form % 2, one = form < 2;
        fill(sbuf, out, t);
        if (one)
            for (int j = 0; j < B; j++)
                sbuf[j] = val(me, 0, j, t);
        for (int i = 0; i < in * B; i++)
            rbuf[i] = -1;
        MPI_Request q = MPI_REQUEST_NULL;
        switch (form) {
        case 0:
            CHECK_MPI(MPI_Neighbor_allgatherv_c(sbuf, B, MPI_INT, rbuf, cc, ad, MPI_INT, comm));
            break;
        case 1:
            CHECK_MPI(
                MPI_Ineighbor_allgatherv_c(sbuf, B, MPI_INT, rbuf, cc, ad, MPI_INT, comm, &q));
            break;
        case 2:
            CHECK_MPI(
                MPI_Neighbor_alltoallv_c(sbuf, scc, sda, MPI_INT, rbuf, rcc, rda, MPI_INT, comm));
            break;
        case 3:
            CHECK_MPI(MPI_Ineighbor_alltoallv_c(sbuf, scc, sda, MPI_INT, rbuf, rcc, rda, MPI_INT,
                                                comm, &q));
            break;
        case 4:
            CHECK_MPI(MPI_Neighbor_alltoallw_c(sbuf, scc, sdw, st, rbuf, rcc, rdw, rt, comm));
            break;
        default:
            CHECK_MPI(MPI_Ineighbor_alltoallw_c(sbuf, scc, sdw, st, rbuf, rcc, rdw, rt, comm, &q));
            break;
        }
        CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
        int bad = -1;
        for (int k = 0; k < in && bad < 0; k++)
            for (int j = 0; j < B; j++)
                if (rbuf[k * B + j] != val(from[k], one ? 0 : fk[k], j, t)) {
                    bad = k * B + j;
                    break;
                }
        CHECK(bad < 0, "%s large-count form %d: int %d is %d", name, form, bad,
              bad < 0 ? 0 : rbuf[bad]);
    }
    free(cc), free(ad), free(scc), free(rcc), free(sda), free(rda), free(sdw), free(rdw);
    free(st), free(rt), free(zero), free(sbuf), free(rbuf);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "coll_persist_arrays");
    np = mtest_size_, me = mtest_rank_;
    int left = (me + np - 1) % np, right = (me + 1) % np;

    world_inits();

    /* Periodic ring: neighbour 0 is the left one, which sends this rank
     * its block 1 (to its right); neighbour 1 the right one (its block 0).
     * (At 1 or 2 processes both neighbours are one rank, whose two
     * messages MPICH matches in order rather than by direction: there
     * the ring is left out.) */
    MPI_Comm cart, graph;
    int dims[1] = {np}, periods[1] = {1};
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart));
    int cfrom[2] = {left, right}, cfk[2] = {1, 0};
    if (np >= 3)
        neighbours("cart", cart, 2, 2, cfrom, cfk);
    CHECK_MPI(MPI_Comm_free(&cart));

    CHECK_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, MPI_UNWEIGHTED, 1, &right,
                                             MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph));
    int gk = 0;
    neighbours("dist graph", graph, 1, 1, &left, &gk);
    CHECK_MPI(MPI_Comm_free(&graph));
    return mtest_finalize();
}
