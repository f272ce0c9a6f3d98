/* Virtual topologies (MPI 3.1 chapter 7): Cartesian, graph and
 * distributed graph.
 *
 * A topology is local information attached to a communicator
 * (bdl_comm_t.topo).  Cartesian: the dimensions and periodicity of the grid,
 * ranks laid out in row-major order (the last dimension varies fastest).
 * Graph: the whole graph (index and edges, as given to MPI_Graph_create).
 * Distributed graph: only this rank's in- and out-neighbours with their
 * weights.  reorder is ignored (MPI allows it), so a topology communicator
 * keeps the ranks of its parent; creating one, and MPI_Cart_sub, are splits
 * of the parent.  The neighbourhood collectives (neighbor.c) ask
 * bdl_topo_neighbors for the neighbour lists.  MPI_Dist_graph_create, which
 * exchanges edges with collectives, is in mpi/topo_dist.c. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "objects.h"

struct bdl_topo {
    int kind; /* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH */
    /* MPI_CART */
    int ndims;
    int *dims;
    int *periods;
    /* MPI_GRAPH */
    int nnodes, nedges;
    int *index, *edges;
    /* MPI_DIST_GRAPH */
    int indeg, outdeg, weighted;
    int *src, *srcw, *dst, *dstw;
};

static int *dup_ints(const int *a, int n)
{
    int *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    if (p && n > 0)
        memcpy(p, a, (size_t)n * sizeof(int));
    return p;
}

static struct bdl_topo *topo_new(int ndims, const int *dims, const int *periods)
{
    struct bdl_topo *t = calloc(1, sizeof *t);
    size_t n = (size_t)(ndims ? ndims : 1);
    if (!t)
        return NULL;
    t->dims = malloc(n * sizeof(int));
    t->periods = malloc(n * sizeof(int));
    if (!t->dims || !t->periods) {
        bdl_topo_free(t);
        return NULL;
    }
    t->kind = MPI_CART;
    t->ndims = ndims;
    for (int i = 0; i < ndims; i++) {
        t->dims[i] = dims[i];
        t->periods[i] = periods[i] != 0;
    }
    return t;
}

static struct bdl_topo *graph_new(int nnodes, const int *index, const int *edges)
{
    struct bdl_topo *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->kind = MPI_GRAPH;
    t->nnodes = nnodes;
    t->nedges = nnodes ? index[nnodes - 1] : 0;
    t->index = dup_ints(index, nnodes);
    t->edges = dup_ints(edges, t->nedges);
    if (!t->index || !t->edges) {
        bdl_topo_free(t);
        return NULL;
    }
    return t;
}

/* Weights NULL: unweighted (all weights reported as 1). */
static struct bdl_topo *dist_new(int indeg, const int *src, const int *srcw, int outdeg,
                                 const int *dst, const int *dstw, int weighted)
{
    struct bdl_topo *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->kind = MPI_DIST_GRAPH;
    t->indeg = indeg;
    t->outdeg = outdeg;
    t->weighted = weighted;
    t->src = dup_ints(src, indeg);
    t->dst = dup_ints(dst, outdeg);
    t->srcw = malloc((size_t)(indeg > 0 ? indeg : 1) * sizeof(int));
    t->dstw = malloc((size_t)(outdeg > 0 ? outdeg : 1) * sizeof(int));
    if (!t->src || !t->dst || !t->srcw || !t->dstw) {
        bdl_topo_free(t);
        return NULL;
    }
    for (int i = 0; i < indeg; i++)
        t->srcw[i] = srcw ? srcw[i] : 1;
    for (int i = 0; i < outdeg; i++)
        t->dstw[i] = dstw ? dstw[i] : 1;
    return t;
}

struct bdl_topo *bdl_topo_dup(const struct bdl_topo *t)
{
    if (!t)
        return NULL;
    switch (t->kind) {
    case MPI_GRAPH: return graph_new(t->nnodes, t->index, t->edges);
    case MPI_DIST_GRAPH:
        return dist_new(t->indeg, t->src, t->srcw, t->outdeg, t->dst, t->dstw, t->weighted);
    default: return topo_new(t->ndims, t->dims, t->periods);
    }
}

void bdl_topo_free(struct bdl_topo *t)
{
    if (!t)
        return;
    free(t->dims);
    free(t->periods);
    free(t->index);
    free(t->edges);
    free(t->src);
    free(t->srcw);
    free(t->dst);
    free(t->dstw);
    free(t);
}

/* ---------------------------------------------------------------- helpers */

static void rank_to_coords(const struct bdl_topo *t, int rank, int *coords)
{
    for (int i = t->ndims - 1; i >= 0; i--) {
        coords[i] = rank % t->dims[i];
        rank /= t->dims[i];
    }
}

/* Row-major rank of coords (already inside the grid). */
static int coords_to_rank(const struct bdl_topo *t, const int *coords)
{
    int r = 0;
    for (int i = 0; i < t->ndims; i++)
        r = r * t->dims[i] + coords[i];
    return r;
}

/* The Cartesian topology of comm, or NULL after reporting the error. */
static struct bdl_topo *get_cart(MPI_Comm comm, const char *call, int *rc)
{
    BDL_CHECK_INIT(call);
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c) {
        *rc = bdl_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);
        return NULL;
    }
    if (!c->topo || c->topo->kind != MPI_CART) {
        *rc = bdl_error(comm, MPI_ERR_TOPOLOGY, call, "communicator %d has no Cartesian topology",
                        comm);
        return NULL;
    }
    return c->topo;
}

/* Topologies live on intracommunicators only (MPI 3.1 7.2). */
static int check_intra(MPI_Comm comm, const bdl_comm_t *c, const char *call)
{
    if (c->inter)
        return bdl_error(comm, MPI_ERR_COMM, call,
                         "communicator %d is an intercommunicator (topologies need an "
                         "intracommunicator)",
                         comm);
    return MPI_SUCCESS;
}

/* Check a grid description; *total gets the number of grid points. */
static int check_grid(MPI_Comm comm, const char *call, int ndims, const int *dims,
                      const int *periods, long long *total)
{
    if (ndims < 0)
        return bdl_error(comm, MPI_ERR_ARG, call, "invalid number of dimensions %d", ndims);
    if (ndims > 0 && (!dims || !periods))
        return bdl_error(comm, MPI_ERR_ARG, call, "NULL dims or periods with ndims = %d", ndims);
    long long p = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0)
            return bdl_error(comm, MPI_ERR_DIMS, call, "dims[%d] = %d (must be > 0)", i, dims[i]);
        p *= dims[i];
        if (p > INT_MAX)
            return bdl_error(comm, MPI_ERR_DIMS, call, "the grid has more than %d points", INT_MAX);
    }
    *total = p;
    return MPI_SUCCESS;
}

/* Split comm into the first `total` ranks (which get the topology) and
 * MPI_COMM_NULL for the others. */
static int make_cart(MPI_Comm comm, int color, int key, int ndims, const int *dims,
                     const int *periods, MPI_Comm *out, const char *call)
{
    MPI_Comm h;
    int rc = bdl_comm_split(comm, color, key, &h, call);
    if (rc)
        return rc;
    if (h != MPI_COMM_NULL) {
        struct bdl_topo *t = topo_new(ndims, dims, periods);
        if (!t) {
            MPI_Comm_free(&h);
            return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
        }
        bdl_g.comms[h].topo = t;
    }
    *out = h;
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- creation */

int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                    int reorder, MPI_Comm *comm_cart)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Cart_create";
    (void)reorder;
    BDL_CHECK_INIT(call);
    bdl_comm_t *c = bdl_comm_get(comm_old);
    if (!c)
        return bdl_error(comm_old, MPI_ERR_COMM, call, "invalid communicator %d", comm_old);
    if (!comm_cart)
        return bdl_error(comm_old, MPI_ERR_ARG, call, "comm_cart is NULL");
    int ie = check_intra(comm_old, c, call);
    if (ie)
        return ie;
    long long total;
    int rc = check_grid(comm_old, call, ndims, dims, periods, &total);
    if (rc)
        return rc;
    if (total > c->size)
        return bdl_error(comm_old, MPI_ERR_ARG, call,
                         "the grid has %lld points but the communicator only %d ranks", total,
                         c->size);
    int me = c->rank;
    return make_cart(comm_old, me < total ? 0 : MPI_UNDEFINED, me, ndims, dims, periods, comm_cart,
                     call);
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Cart_sub";
    int rc = MPI_SUCCESS;
    struct bdl_topo *t = get_cart(comm, call, &rc);
    if (!t)
        return rc;
    if (t->ndims > 0 && !remain_dims)
        return bdl_error(comm, MPI_ERR_ARG, call, "remain_dims is NULL");
    if (!newcomm)
        return bdl_error(comm, MPI_ERR_ARG, call, "newcomm is NULL");
    int nd = t->ndims, n = nd ? nd : 1;
    int *coords = malloc((size_t)n * sizeof(int)), *dims = malloc((size_t)n * sizeof(int));
    int *periods = malloc((size_t)n * sizeof(int));
    if (!coords || !dims || !periods) {
        free(coords);
        free(dims);
        free(periods);
        return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
    }
    int me = bdl_comm_get(comm)->rank;
    rank_to_coords(t, me, coords);
    /* color: position along the dropped dimensions; key: along the kept ones. */
    int color = 0, key = 0, k = 0;
    for (int i = 0; i < nd; i++) {
        if (remain_dims[i]) {
            key = key * t->dims[i] + coords[i];
            dims[k] = t->dims[i];
            periods[k] = t->periods[i];
            k++;
        } else {
            color = color * t->dims[i] + coords[i];
        }
    }
    /* No dimension kept: a zero-dimensional topology, which has one process
     * (MPI 3.1 7.5.1, 7.5.7): rank 0 gets it, as from MPI_Cart_create with
     * ndims 0, and the others MPI_COMM_NULL (as MPICH does). */
    if (k == 0)
        color = me == 0 ? 0 : MPI_UNDEFINED;
    rc = make_cart(comm, color, key, k, dims, periods, newcomm, call);
    free(coords);
    free(dims);
    free(periods);
    return rc;
}

int MPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Cart_map";
    BDL_CHECK_INIT(call);
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c)
        return bdl_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);
    long long total;
    int rc = check_grid(comm, call, ndims, dims, periods, &total);
    if (rc)
        return rc;
    if (total > c->size)
        return bdl_error(comm, MPI_ERR_ARG, call,
                         "the grid has %lld points but the communicator only %d ranks", total,
                         c->size);
    *newrank = c->rank < total ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- queries */

int MPI_Topo_test(MPI_Comm comm, int *status)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Topo_test");
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c)
        return bdl_error(comm, MPI_ERR_COMM, "MPI_Topo_test", "invalid communicator %d", comm);
    *status = c->topo ? c->topo->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int MPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    BDL_MT_GUARD;
    int rc = MPI_SUCCESS;
    struct bdl_topo *t = get_cart(comm, "MPI_Cartdim_get", &rc);
    if (!t)
        return rc;
    *ndims = t->ndims;
    return MPI_SUCCESS;
}

int MPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    BDL_MT_GUARD;
    const char *call = "MPI_Cart_get";
    int rc = MPI_SUCCESS;
    struct bdl_topo *t = get_cart(comm, call, &rc);
    if (!t)
        return rc;
    if (maxdims < t->ndims)
        return bdl_error(comm, MPI_ERR_ARG, call, "maxdims %d is less than the %d dimensions",
                         maxdims, t->ndims);
    int *cc = malloc((size_t)(t->ndims ? t->ndims : 1) * sizeof(int));
    if (!cc)
        return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
    rank_to_coords(t, bdl_comm_get(comm)->rank, cc);
    for (int i = 0; i < t->ndims; i++) {
        if (dims)
            dims[i] = t->dims[i];
        if (periods)
            periods[i] = t->periods[i];
        if (coords)
            coords[i] = cc[i];
    }
    free(cc);
    return MPI_SUCCESS;
}

int MPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    BDL_MT_GUARD;
    const char *call = "MPI_Cart_coords";
    int rc = MPI_SUCCESS;
    struct bdl_topo *t = get_cart(comm, call, &rc);
    if (!t)
        return rc;
    int size = bdl_comm_get(comm)->size;
    if (rank < 0 || rank >= size)
        return bdl_error(comm, MPI_ERR_RANK, call, "invalid rank %d (communicator size %d)", rank,
                         size);
    if (maxdims < t->ndims)
        return bdl_error(comm, MPI_ERR_ARG, call, "maxdims %d is less than the %d dimensions",
                         maxdims, t->ndims);
    if (t->ndims > 0 && !coords)
        return bdl_error(comm, MPI_ERR_ARG, call, "coords is NULL");
    rank_to_coords(t, rank, coords);
    return MPI_SUCCESS;
}

int MPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Cart_rank";
    int rc = MPI_SUCCESS;
    struct bdl_topo *t = get_cart(comm, call, &rc);
    if (!t)
        return rc;
    if (t->ndims > 0 && !coords)
        return bdl_error(comm, MPI_ERR_ARG, call, "coords is NULL");
    int r = 0;
    for (int i = 0; i < t->ndims; i++) {
        int d = t->dims[i], x = coords[i];
        if (t->periods[i])
            x = (int)(((long long)x % d + d) % d);
        else if (x < 0 || x >= d)
            return bdl_error(comm, MPI_ERR_ARG, call,
                             "coords[%d] = %d is outside the non-periodic dimension of size %d", i,
                             x, d);
        r = r * d + x;
    }
    *rank = r;
    return MPI_SUCCESS;
}

int MPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Cart_shift";
    int rc = MPI_SUCCESS;
    struct bdl_topo *t = get_cart(comm, call, &rc);
    if (!t)
        return rc;
    if (direction < 0 || direction >= t->ndims)
        return bdl_error(comm, MPI_ERR_ARG, call, "invalid direction %d (%d dimensions)", direction,
                         t->ndims);
    int *cc = malloc((size_t)t->ndims * sizeof(int));
    if (!cc)
        return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
    rank_to_coords(t, bdl_comm_get(comm)->rank, cc);
    int d = t->dims[direction], x = cc[direction];
    for (int s = -1; s <= 1; s += 2) {
        long long y = (long long)x + (long long)s * disp;
        int out;
        if (t->periods[direction]) {
            cc[direction] = (int)((y % d + d) % d);
            out = coords_to_rank(t, cc);
        } else if (y < 0 || y >= d) {
            out = MPI_PROC_NULL;
        } else {
            cc[direction] = (int)y;
            out = coords_to_rank(t, cc);
        }
        *(s < 0 ? rank_source : rank_dest) = out;
    }
    free(cc);
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- MPI_Dims_create */

/* MPI 3.1 7.5.2 asks for dimensions "as close to each other as possible":
 * the split of n into k factors whose largest and smallest factors differ
 * least (the spread), and among those the one whose smallest factor is
 * largest, then its next smallest, and so on (5040 in 3-D is 21 x 16 x 15,
 * not 20 x 18 x 14; MPICH gives the same).  The least spread is found by
 * bisection, each step a search for factors in a window [m, m + spread]. */
typedef struct {
    const int *divs; /* the divisors of n, increasing */
    int ndivs;
    long long budget; /* search steps left */
    int *out;         /* the factors found, smallest first (out[0]) */
} dims_search_t;

/* d^j <= n */
static int pow_le(long long d, int j, long long n)
{
    long long p = 1;
    for (int i = 0; i < j; i++) {
        p *= d;
        if (p > n)
            return 0;
    }
    return 1;
}

/* First index of a divisor >= v. */
static int div_at(const dims_search_t *s, int v)
{
    int lo = 0, hi = s->ndivs;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (s->divs[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* j factors of rest in [lo, hi], non-decreasing, into out[0..j-1]; the
 * largest choice first, so the first split found has the largest smallest
 * factor, then the largest next one, ... */
static int dims_fit(dims_search_t *s, int rest, int j, int lo, int hi, int *out)
{
    if (j == 1) {
        out[0] = rest;
        return rest >= lo && rest <= hi;
    }
    for (int i = div_at(s, hi + 1) - 1; i >= 0 && s->budget > 0; i--) {
        int d = s->divs[i];
        s->budget--;
        if (d < lo)
            break;
        if (rest % d || !pow_le(d, j, rest))
            continue;
        /* the other j - 1 factors are at most hi */
        if (pow_le(hi, j - 1, rest / d - 1))
            break;
        out[0] = d;
        if (dims_fit(s, rest / d, j - 1, d, hi, out + 1))
            return 1;
    }
    return 0;
}

/* A split of n into k factors with spread at most spread (into s->out). */
static int dims_within(dims_search_t *s, int n, int k, int spread)
{
    for (int i = s->ndivs - 1; i >= 0 && s->budget > 0; i--) {
        int m = s->divs[i];
        long long hi = (long long)m + spread;
        if (!pow_le(m, k, n))
            continue;
        if (hi < INT_MAX && pow_le(hi, k, n - 1))
            break; /* k factors of at most m + spread are too small */
        s->out[0] = m;
        if (dims_fit(s, n / m, k - 1, m, hi > INT_MAX ? INT_MAX : (int)hi, s->out + 1))
            return 1;
    }
    return 0;
}

static int cmp_desc(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return x > y ? -1 : x < y;
}

static int cmp_asc(const void *a, const void *b) { return cmp_desc(b, a); }

/* Balanced factors of n in non-increasing order; greedy on the prime
 * factors when the exact search would take too long. */
static void balance(int n, int k, int *out)
{
    int primes[32], np = 0, m = n;
    for (int p = 2; (long long)p * p <= m; p++)
        while (m % p == 0) {
            primes[np++] = p;
            m /= p;
        }
    if (m > 1)
        primes[np++] = m;
    for (int i = 0; i < k; i++)
        out[i] = 1;
    if (k <= 1 || n == 1) {
        if (k == 1)
            out[0] = n;
        return;
    }
    /* All divisors of n (at most 1600 for an int). */
    int *divs = malloc(2048 * sizeof(int)), *cur = malloc((size_t)k * sizeof(int));
    int nd = 0;
    if (divs && cur) {
        divs[nd++] = 1;
        for (int i = 0; i < np;) {
            int p = primes[i], e = 0;
            while (i < np && primes[i] == p) {
                i++;
                e++;
            }
            int base = nd;
            long long pw = 1;
            for (int j = 1; j <= e; j++) {
                pw *= p;
                for (int q = 0; q < base && nd < 2048; q++)
                    divs[nd++] = divs[q] * (int)pw;
            }
        }
        qsort(divs, (size_t)nd, sizeof(int), cmp_asc);
        dims_search_t s = {divs, nd, 20000000, cur};
        /* The least spread: n x 1 x ... x 1 has spread n - 1. */
        int lo = 0, hi = n - 1;
        while (lo < hi && s.budget > 0) {
            int mid = lo + (hi - lo) / 2;
            if (dims_within(&s, n, k, mid))
                hi = mid;
            else
                lo = mid + 1;
        }
        int ok = s.budget > 0 && dims_within(&s, n, k, lo) && s.budget > 0;
        if (ok)
            for (int i = 0; i < k; i++)
                out[i] = cur[k - 1 - i];
        free(divs);
        free(cur);
        if (ok)
            return;
    } else {
        free(divs);
        free(cur);
    }
    /* Greedy: largest prime factors first, each to the smallest factor. */
    for (int i = 0; i < k; i++)
        out[i] = 1;
    for (int i = np - 1; i >= 0; i--) {
        int lo = 0;
        for (int j = 1; j < k; j++)
            if (out[j] < out[lo])
                lo = j;
        out[lo] *= primes[i];
    }
    qsort(out, (size_t)k, sizeof(int), cmp_desc);
}

int MPI_Dims_create(int nnodes, int ndims, int dims[])
{
    BDL_MT_GUARD;
    const char *call = "MPI_Dims_create";
    BDL_CHECK_INIT(call);
    if (nnodes <= 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "invalid nnodes %d (must be > 0)",
                         nnodes);
    if (ndims < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "invalid ndims %d", ndims);
    if (ndims > 0 && !dims)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "dims is NULL");
    long long fixed = 1;
    int nfree = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return bdl_error(MPI_COMM_WORLD, MPI_ERR_DIMS, call, "dims[%d] = %d is negative", i,
                             dims[i]);
        if (dims[i] == 0)
            nfree++;
        else
            fixed *= dims[i];
        if (fixed > nnodes)
            break;
    }
    if (nnodes % fixed)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_DIMS, call,
                         "nnodes %d is not a multiple of the product %lld of the given dims",
                         nnodes, fixed);
    if (!nfree) {
        if (fixed != nnodes)
            return bdl_error(MPI_COMM_WORLD, MPI_ERR_DIMS, call,
                             "the given dims multiply to %lld, not nnodes %d", fixed, nnodes);
        return MPI_SUCCESS;
    }
    int *f = malloc((size_t)nfree * sizeof(int));
    if (!f)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "out of memory");
    balance((int)(nnodes / fixed), nfree, f);
    for (int i = 0, k = 0; i < ndims; i++)
        if (dims[i] == 0)
            dims[i] = f[k++];
    free(f);
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- graph topologies */

/* Split comm like make_cart, giving the members topology t (consumed). */
static int make_topo(MPI_Comm comm, int color, int key, struct bdl_topo *t, MPI_Comm *out,
                     const char *call)
{
    if (color != MPI_UNDEFINED && !t)
        return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
    MPI_Comm h;
    int rc = bdl_comm_split(comm, color, key, &h, call);
    if (rc) {
        bdl_topo_free(t);
        return rc;
    }
    if (h != MPI_COMM_NULL)
        bdl_g.comms[h].topo = t;
    else
        bdl_topo_free(t);
    *out = h;
    return MPI_SUCCESS;
}

/* Check a graph description (MPI_Graph_create, MPI_Graph_map). */
static int check_graph(MPI_Comm comm, const char *call, int size, int nnodes, const int *index,
                       const int *edges)
{
    if (nnodes < 0)
        return bdl_error(comm, MPI_ERR_ARG, call, "invalid nnodes %d (must be >= 0)", nnodes);
    if (nnodes > size)
        return bdl_error(comm, MPI_ERR_ARG, call,
                         "the graph has %d nodes but the communicator only %d ranks", nnodes, size);
    if (nnodes > 0 && !index)
        return bdl_error(comm, MPI_ERR_ARG, call, "index is NULL with nnodes = %d", nnodes);
    for (int i = 0; i < nnodes; i++) {
        int prev = i ? index[i - 1] : 0;
        if (index[i] < prev)
            return bdl_error(comm, MPI_ERR_ARG, call,
                             "index[%d] = %d is less than %s %d (index must be non-decreasing "
                             "and start at >= 0)",
                             i, index[i], i ? "the previous entry" : "", prev);
    }
    int nedges = nnodes ? index[nnodes - 1] : 0;
    if (nedges > 0 && !edges)
        return bdl_error(comm, MPI_ERR_ARG, call, "edges is NULL with %d edges", nedges);
    for (int i = 0; i < nedges; i++)
        if (edges[i] < 0 || edges[i] >= nnodes)
            return bdl_error(comm, MPI_ERR_ARG, call,
                             "edges[%d] = %d is not a node of the graph (0..%d)", i, edges[i],
                             nnodes - 1);
    return MPI_SUCCESS;
}

int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
                     int reorder, MPI_Comm *comm_graph)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Graph_create";
    (void)reorder;
    BDL_CHECK_INIT(call);
    bdl_comm_t *c = bdl_comm_get(comm_old);
    if (!c)
        return bdl_error(comm_old, MPI_ERR_COMM, call, "invalid communicator %d", comm_old);
    if (!comm_graph)
        return bdl_error(comm_old, MPI_ERR_ARG, call, "comm_graph is NULL");
    int ie = check_intra(comm_old, c, call);
    if (ie)
        return ie;
    int rc = check_graph(comm_old, call, c->size, nnodes, index, edges);
    if (rc)
        return rc;
    int me = c->rank, in = me < nnodes;
    return make_topo(comm_old, in ? 0 : MPI_UNDEFINED, me,
                     in ? graph_new(nnodes, index, edges) : NULL, comm_graph, call);
}

int MPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Graph_map";
    BDL_CHECK_INIT(call);
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c)
        return bdl_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);
    int rc = check_graph(comm, call, c->size, nnodes, index, edges);
    if (rc)
        return rc;
    if (!newrank)
        return bdl_error(comm, MPI_ERR_ARG, call, "newrank is NULL");
    *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* The topology of comm if it is of kind `kind`, or NULL after reporting the error. */
static struct bdl_topo *get_topo(MPI_Comm comm, const char *call, int kind, int *rc)
{
    BDL_CHECK_INIT(call);
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c) {
        *rc = bdl_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);
        return NULL;
    }
    if (!c->topo || c->topo->kind != kind) {
        *rc = bdl_error(comm, MPI_ERR_TOPOLOGY, call, "communicator %d has no %s topology", comm,
                        kind == MPI_GRAPH ? "graph" : "distributed graph");
        return NULL;
    }
    return c->topo;
}

int MPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Graphdims_get";
    int rc = MPI_SUCCESS;
    struct bdl_topo *t = get_topo(comm, call, MPI_GRAPH, &rc);
    if (!t)
        return rc;
    if (!nnodes || !nedges)
        return bdl_error(comm, MPI_ERR_ARG, call, "NULL output argument");
    *nnodes = t->nnodes;
    *nedges = t->nedges;
    return MPI_SUCCESS;
}

int MPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    BDL_MT_GUARD;
    const char *call = "MPI_Graph_get";
    int rc = MPI_SUCCESS;
    struct bdl_topo *t = get_topo(comm, call, MPI_GRAPH, &rc);
    if (!t)
        return rc;
    if (maxindex < 0 || maxedges < 0)
        return bdl_error(comm, MPI_ERR_ARG, call, "invalid maxindex %d or maxedges %d", maxindex,
                         maxedges);
    if ((maxindex > 0 && t->nnodes > 0 && !index) || (maxedges > 0 && t->nedges > 0 && !edges))
        return bdl_error(comm, MPI_ERR_ARG, call, "NULL index or edges");
    for (int i = 0; i < maxindex && i < t->nnodes; i++)
        index[i] = t->index[i];
    for (int i = 0; i < maxedges && i < t->nedges; i++)
        edges[i] = t->edges[i];
    return MPI_SUCCESS;
}

static int graph_rank_arg(MPI_Comm comm, const char *call, const struct bdl_topo *t, int rank)
{
    if (rank < 0 || rank >= t->nnodes)
        return bdl_error(comm, MPI_ERR_RANK, call, "invalid rank %d (the graph has %d nodes)", rank,
                         t->nnodes);
    return MPI_SUCCESS;
}

int MPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Graph_neighbors_count";
    int rc = MPI_SUCCESS;
    struct bdl_topo *t = get_topo(comm, call, MPI_GRAPH, &rc);
    if (!t)
        return rc;
    if ((rc = graph_rank_arg(comm, call, t, rank)))
        return rc;
    if (!nneighbors)
        return bdl_error(comm, MPI_ERR_ARG, call, "nneighbors is NULL");
    *nneighbors = t->index[rank] - (rank ? t->index[rank - 1] : 0);
    return MPI_SUCCESS;
}

int MPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    BDL_MT_GUARD;
    const char *call = "MPI_Graph_neighbors";
    int rc = MPI_SUCCESS;
    struct bdl_topo *t = get_topo(comm, call, MPI_GRAPH, &rc);
    if (!t)
        return rc;
    if ((rc = graph_rank_arg(comm, call, t, rank)))
        return rc;
    if (maxneighbors < 0)
        return bdl_error(comm, MPI_ERR_ARG, call, "invalid maxneighbors %d", maxneighbors);
    int lo = rank ? t->index[rank - 1] : 0, n = t->index[rank] - lo;
    if (maxneighbors > 0 && n > 0 && !neighbors)
        return bdl_error(comm, MPI_ERR_ARG, call, "neighbors is NULL");
    for (int i = 0; i < n && i < maxneighbors; i++)
        neighbors[i] = t->edges[lo + i];
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- distributed graphs */

/* MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are the addresses of these. */
int bdmpi_unweighted_[1], bdmpi_weights_empty_[1];

/* Check n ranks (what: "sources", ...) and their weights. */
static int check_adj(MPI_Comm comm, const char *call, int size, const char *what, int n,
                     const int *ranks, const char *wname, const int *w)
{
    if (n > 0 && !ranks)
        return bdl_error(comm, MPI_ERR_ARG, call, "%s is NULL with degree %d", what, n);
    if (n > 0 && !w)
        return bdl_error(comm, MPI_ERR_ARG, call,
                         "%s is NULL with degree %d (MPI_UNWEIGHTED for no weights)", wname, n);
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= size)
            return bdl_error(comm, MPI_ERR_RANK, call,
                             "%s[%d] = %d is not a rank of the communicator (size %d)", what, i,
                             ranks[i], size);
        if (w != MPI_UNWEIGHTED && w != MPI_WEIGHTS_EMPTY && w[i] < 0)
            return bdl_error(comm, MPI_ERR_ARG, call, "%s[%d] = %d is negative", wname, i, w[i]);
    }
    return MPI_SUCCESS;
}

static int check_info(MPI_Comm comm, const char *call, MPI_Info info)
{
    int nkeys;
    if (info == MPI_INFO_NULL)
        return MPI_SUCCESS;
    /* MPI_Info_get_nkeys validates the handle (and reports a bad one). */
    return MPI_Info_get_nkeys(info, &nkeys) == MPI_SUCCESS
               ? MPI_SUCCESS
               : bdl_error(comm, MPI_ERR_INFO, call, "invalid info object %d", info);
}

static const int *weights_of(const int *w)
{
    return w == MPI_UNWEIGHTED || w == MPI_WEIGHTS_EMPTY ? NULL : w;
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                   const int sourceweights[], int outdegree,
                                   const int destinations[], const int destweights[], MPI_Info info,
                                   int reorder, MPI_Comm *comm_dist_graph)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Dist_graph_create_adjacent";
    (void)reorder;
    BDL_CHECK_INIT(call);
    bdl_comm_t *c = bdl_comm_get(comm_old);
    if (!c)
        return bdl_error(comm_old, MPI_ERR_COMM, call, "invalid communicator %d", comm_old);
    if (!comm_dist_graph)
        return bdl_error(comm_old, MPI_ERR_ARG, call, "comm_dist_graph is NULL");
    int ie = check_intra(comm_old, c, call);
    if (ie)
        return ie;
    if (indegree < 0 || outdegree < 0)
        return bdl_error(comm_old, MPI_ERR_ARG, call,
                         "invalid indegree %d or outdegree %d (must be >= 0)", indegree, outdegree);
    int rc;
    if ((rc = check_adj(comm_old, call, c->size, "sources", indegree, sources, "sourceweights",
                        sourceweights)) ||
        (rc = check_adj(comm_old, call, c->size, "destinations", outdegree, destinations,
                        "destweights", destweights)) ||
        (rc = check_info(comm_old, call, info)))
        return rc;
    int weighted = sourceweights != MPI_UNWEIGHTED && destweights != MPI_UNWEIGHTED;
    struct bdl_topo *t = dist_new(indegree, sources, weights_of(sourceweights), outdegree,
                                  destinations, weights_of(destweights), weighted);
    return make_topo(comm_old, 0, c->rank, t, comm_dist_graph, call);
}

/* MPI_Dist_graph_create (mpi/topo_dist.c, which exchanges the edges): its
 * argument checks, in the standard's order; *c and *nedges for the rest. */
int bdl_topo_dist_args(MPI_Comm comm_old, const char *call, int n, const int sources[],
                       const int degrees[], const int destinations[], const int weights[],
                       MPI_Info info, MPI_Comm *comm_dist_graph, bdl_comm_t **cp, int *nedges_out)
{
    BDL_CHECK_INIT(call);
    bdl_comm_t *c = bdl_comm_get(comm_old);
    if (!c)
        return bdl_error(comm_old, MPI_ERR_COMM, call, "invalid communicator %d", comm_old);
    if (!comm_dist_graph)
        return bdl_error(comm_old, MPI_ERR_ARG, call, "comm_dist_graph is NULL");
    int ie = check_intra(comm_old, c, call);
    if (ie)
        return ie;
    if (n < 0)
        return bdl_error(comm_old, MPI_ERR_ARG, call, "invalid n %d (must be >= 0)", n);
    if (n > 0 && (!sources || !degrees))
        return bdl_error(comm_old, MPI_ERR_ARG, call, "NULL sources or degrees with n = %d", n);
    int size = c->size, rc;
    long long nedges = 0;
    for (int i = 0; i < n; i++) {
        if (sources[i] < 0 || sources[i] >= size)
            return bdl_error(comm_old, MPI_ERR_RANK, call,
                             "sources[%d] = %d is not a rank of the communicator (size %d)", i,
                             sources[i], size);
        if (degrees[i] < 0)
            return bdl_error(comm_old, MPI_ERR_ARG, call, "degrees[%d] = %d is negative", i,
                             degrees[i]);
        nedges += degrees[i];
    }
    if (nedges > INT_MAX / 6)
        return bdl_error(comm_old, MPI_ERR_ARG, call, "too many edges (%lld)", nedges);
    if ((rc = check_adj(comm_old, call, size, "destinations", (int)nedges, destinations, "weights",
                        weights)) ||
        (rc = check_info(comm_old, call, info)))
        return rc;
    *cp = c;
    *nedges_out = (int)nedges;
    return MPI_SUCCESS;
}

int bdl_topo_dist_attach(MPI_Comm comm_old, const char *call, int indeg, const int *src,
                         const int *srcw, int outdeg, const int *dst, const int *dstw, int weighted,
                         MPI_Comm *comm_dist_graph)
{
    struct bdl_topo *t = dist_new(indeg, src, srcw, outdeg, dst, dstw, weighted);
    return make_topo(comm_old, 0, bdl_comm_get(comm_old)->rank, t, comm_dist_graph, call);
}

int MPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Dist_graph_neighbors_count";
    int rc = MPI_SUCCESS;
    struct bdl_topo *t = get_topo(comm, call, MPI_DIST_GRAPH, &rc);
    if (!t)
        return rc;
    if (!indegree || !outdegree || !weighted)
        return bdl_error(comm, MPI_ERR_ARG, call, "NULL output argument");
    *indegree = t->indeg;
    *outdegree = t->outdeg;
    *weighted = t->weighted;
    return MPI_SUCCESS;
}

int MPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                             int maxoutdegree, int destinations[], int destweights[])
{
    BDL_MT_GUARD;
    const char *call = "MPI_Dist_graph_neighbors";
    int rc = MPI_SUCCESS;
    struct bdl_topo *t = get_topo(comm, call, MPI_DIST_GRAPH, &rc);
    if (!t)
        return rc;
    if (maxindegree < t->indeg || maxoutdegree < t->outdeg)
        return bdl_error(comm, MPI_ERR_ARG, call,
                         "maxindegree %d or maxoutdegree %d is less than the degree (%d in, %d "
                         "out)",
                         maxindegree, maxoutdegree, t->indeg, t->outdeg);
    if ((t->indeg && !sources) || (t->outdeg && !destinations))
        return bdl_error(comm, MPI_ERR_ARG, call, "NULL sources or destinations");
    int wi = t->weighted && sourceweights && sourceweights != MPI_UNWEIGHTED &&
             sourceweights != MPI_WEIGHTS_EMPTY;
    int wo = t->weighted && destweights && destweights != MPI_UNWEIGHTED &&
             destweights != MPI_WEIGHTS_EMPTY;
    for (int i = 0; i < t->indeg; i++) {
        sources[i] = t->src[i];
        if (wi)
            sourceweights[i] = t->srcw[i];
    }
    for (int i = 0; i < t->outdeg; i++) {
        destinations[i] = t->dst[i];
        if (wo)
            destweights[i] = t->dstw[i];
    }
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- neighbour lists */

int bdl_topo_neighbors(const bdl_comm_t *c, bdl_nbrs_t *nb)
{
    const struct bdl_topo *t = c->topo;
    memset(nb, 0, sizeof *nb);
    if (!t)
        return -1;
    switch (t->kind) {
    case MPI_CART: {
        int n = 2 * t->ndims;
        nb->cart = 1;
        nb->indeg = nb->outdeg = n;
        nb->in = malloc((size_t)(n ? n : 1) * sizeof(int));
        nb->out = malloc((size_t)(n ? n : 1) * sizeof(int));
        int *cc = malloc((size_t)(t->ndims ? t->ndims : 1) * sizeof(int));
        if (!nb->in || !nb->out || !cc) {
            free(cc);
            bdl_nbrs_free(nb);
            return -1;
        }
        rank_to_coords(t, c->rank, cc);
        for (int d = 0; d < t->ndims; d++) {
            int x = cc[d], dim = t->dims[d];
            for (int s = 0; s < 2; s++) {
                int y = x + (s ? 1 : -1), r;
                if (t->periods[d])
                    y = (y % dim + dim) % dim;
                if (y < 0 || y >= dim) {
                    r = MPI_PROC_NULL;
                } else {
                    cc[d] = y;
                    r = coords_to_rank(t, cc);
                    cc[d] = x;
                }
                nb->in[2 * d + s] = nb->out[2 * d + s] = r;
            }
        }
        free(cc);
        return 0;
    }
    case MPI_GRAPH: {
        int lo = c->rank ? t->index[c->rank - 1] : 0, n = t->index[c->rank] - lo;
        nb->indeg = nb->outdeg = n;
        nb->in = dup_ints(t->edges + lo, n);
        nb->out = dup_ints(t->edges + lo, n);
        break;
    }
    default:
        nb->indeg = t->indeg;
        nb->outdeg = t->outdeg;
        nb->in = dup_ints(t->src, t->indeg);
        nb->out = dup_ints(t->dst, t->outdeg);
        break;
    }
    if (!nb->in || !nb->out) {
        bdl_nbrs_free(nb);
        return -1;
    }
    return 0;
}

void bdl_nbrs_free(bdl_nbrs_t *nb)
{
    free(nb->in);
    free(nb->out);
    nb->in = nb->out = NULL;
}
