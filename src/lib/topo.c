/* Cartesian topologies (MPI 3.1 chapter 7).
 *
 * A topology is local information attached to a communicator
 * (bd_comm_t.topo): the dimensions and periodicity of the grid.  Ranks are
 * laid out in row-major order (the last dimension varies fastest); reorder
 * is ignored, so a Cartesian communicator keeps the ranks of its parent.
 * Creating one, and MPI_Cart_sub, are splits of the parent. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "lib.h"

struct bd_topo {
    int kind; /* MPI_CART */
    int ndims;
    int *dims;
    int *periods;
};

static struct bd_topo *topo_new(int ndims, const int *dims, const int *periods)
{
    struct bd_topo *t = calloc(1, sizeof *t);
    size_t n = (size_t)(ndims ? ndims : 1);
    if (!t)
        return NULL;
    t->dims = malloc(n * sizeof(int));
    t->periods = malloc(n * sizeof(int));
    if (!t->dims || !t->periods) {
        bd_topo_free(t);
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

struct bd_topo *bd_topo_dup(const struct bd_topo *t)
{
    return t ? topo_new(t->ndims, t->dims, t->periods) : NULL;
}

void bd_topo_free(struct bd_topo *t)
{
    if (!t)
        return;
    free(t->dims);
    free(t->periods);
    free(t);
}

/* ---------------------------------------------------------------- helpers */

static void rank_to_coords(const struct bd_topo *t, int rank, int *coords)
{
    for (int i = t->ndims - 1; i >= 0; i--) {
        coords[i] = rank % t->dims[i];
        rank /= t->dims[i];
    }
}

/* Row-major rank of coords (already inside the grid). */
static int coords_to_rank(const struct bd_topo *t, const int *coords)
{
    int r = 0;
    for (int i = 0; i < t->ndims; i++)
        r = r * t->dims[i] + coords[i];
    return r;
}

/* The Cartesian topology of comm, or NULL after reporting the error. */
static struct bd_topo *get_cart(MPI_Comm comm, const char *call, int *rc)
{
    BD_CHECK_INIT(call);
    bd_comm_t *c = bd_comm_get(comm);
    if (!c) {
        *rc = bd_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);
        return NULL;
    }
    if (!c->topo || c->topo->kind != MPI_CART) {
        *rc = bd_error(comm, MPI_ERR_TOPOLOGY, call,
                       "communicator %d has no Cartesian topology", comm);
        return NULL;
    }
    return c->topo;
}

/* Check a grid description; *total gets the number of grid points. */
static int check_grid(MPI_Comm comm, const char *call, int ndims, const int *dims,
                      const int *periods, long long *total)
{
    if (ndims < 0)
        return bd_error(comm, MPI_ERR_ARG, call, "invalid number of dimensions %d", ndims);
    if (ndims > 0 && (!dims || !periods))
        return bd_error(comm, MPI_ERR_ARG, call, "NULL dims or periods with ndims = %d", ndims);
    long long p = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0)
            return bd_error(comm, MPI_ERR_DIMS, call, "dims[%d] = %d (must be > 0)", i, dims[i]);
        p *= dims[i];
        if (p > INT_MAX)
            return bd_error(comm, MPI_ERR_DIMS, call, "the grid has more than %d points",
                            INT_MAX);
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
    int rc = bd_comm_split(comm, color, key, &h, call);
    if (rc)
        return rc;
    if (h != MPI_COMM_NULL) {
        struct bd_topo *t = topo_new(ndims, dims, periods);
        if (!t) {
            MPI_Comm_free(&h);
            return bd_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
        }
        g_bd.comms[h].topo = t;
    }
    *out = h;
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- creation */

int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                    int reorder, MPI_Comm *comm_cart)
{
    const char *call = "MPI_Cart_create";
    (void)reorder;
    BD_CHECK_INIT(call);
    bd_comm_t *c = bd_comm_get(comm_old);
    if (!c)
        return bd_error(comm_old, MPI_ERR_COMM, call, "invalid communicator %d", comm_old);
    if (!comm_cart)
        return bd_error(comm_old, MPI_ERR_ARG, call, "comm_cart is NULL");
    long long total;
    int rc = check_grid(comm_old, call, ndims, dims, periods, &total);
    if (rc)
        return rc;
    if (total > c->size)
        return bd_error(comm_old, MPI_ERR_ARG, call,
                        "the grid has %lld points but the communicator only %d ranks", total,
                        c->size);
    int me = c->rank;
    return make_cart(comm_old, me < total ? 0 : MPI_UNDEFINED, me, ndims, dims, periods,
                     comm_cart, call);
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    const char *call = "MPI_Cart_sub";
    int rc = MPI_SUCCESS;
    struct bd_topo *t = get_cart(comm, call, &rc);
    if (!t)
        return rc;
    if (t->ndims > 0 && !remain_dims)
        return bd_error(comm, MPI_ERR_ARG, call, "remain_dims is NULL");
    if (!newcomm)
        return bd_error(comm, MPI_ERR_ARG, call, "newcomm is NULL");
    int nd = t->ndims, n = nd ? nd : 1;
    int *coords = malloc((size_t)n * sizeof(int)), *dims = malloc((size_t)n * sizeof(int));
    int *periods = malloc((size_t)n * sizeof(int));
    if (!coords || !dims || !periods) {
        free(coords);
        free(dims);
        free(periods);
        return bd_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
    }
    int me = bd_comm_get(comm)->rank;
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
    rc = make_cart(comm, color, key, k, dims, periods, newcomm, call);
    free(coords);
    free(dims);
    free(periods);
    return rc;
}

int MPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
    const char *call = "MPI_Cart_map";
    BD_CHECK_INIT(call);
    bd_comm_t *c = bd_comm_get(comm);
    if (!c)
        return bd_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);
    long long total;
    int rc = check_grid(comm, call, ndims, dims, periods, &total);
    if (rc)
        return rc;
    if (total > c->size)
        return bd_error(comm, MPI_ERR_ARG, call,
                        "the grid has %lld points but the communicator only %d ranks", total,
                        c->size);
    *newrank = c->rank < total ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- queries */

int MPI_Topo_test(MPI_Comm comm, int *status)
{
    BD_CHECK_INIT("MPI_Topo_test");
    bd_comm_t *c = bd_comm_get(comm);
    if (!c)
        return bd_error(comm, MPI_ERR_COMM, "MPI_Topo_test", "invalid communicator %d", comm);
    *status = c->topo ? c->topo->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int MPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    int rc = MPI_SUCCESS;
    struct bd_topo *t = get_cart(comm, "MPI_Cartdim_get", &rc);
    if (!t)
        return rc;
    *ndims = t->ndims;
    return MPI_SUCCESS;
}

int MPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    const char *call = "MPI_Cart_get";
    int rc = MPI_SUCCESS;
    struct bd_topo *t = get_cart(comm, call, &rc);
    if (!t)
        return rc;
    if (maxdims < t->ndims)
        return bd_error(comm, MPI_ERR_ARG, call, "maxdims %d is less than the %d dimensions",
                        maxdims, t->ndims);
    int *cc = malloc((size_t)(t->ndims ? t->ndims : 1) * sizeof(int));
    if (!cc)
        return bd_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
    rank_to_coords(t, bd_comm_get(comm)->rank, cc);
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
    const char *call = "MPI_Cart_coords";
    int rc = MPI_SUCCESS;
    struct bd_topo *t = get_cart(comm, call, &rc);
    if (!t)
        return rc;
    int size = bd_comm_get(comm)->size;
    if (rank < 0 || rank >= size)
        return bd_error(comm, MPI_ERR_RANK, call, "invalid rank %d (communicator size %d)", rank,
                        size);
    if (maxdims < t->ndims)
        return bd_error(comm, MPI_ERR_ARG, call, "maxdims %d is less than the %d dimensions",
                        maxdims, t->ndims);
    if (t->ndims > 0 && !coords)
        return bd_error(comm, MPI_ERR_ARG, call, "coords is NULL");
    rank_to_coords(t, rank, coords);
    return MPI_SUCCESS;
}

int MPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    const char *call = "MPI_Cart_rank";
    int rc = MPI_SUCCESS;
    struct bd_topo *t = get_cart(comm, call, &rc);
    if (!t)
        return rc;
    if (t->ndims > 0 && !coords)
        return bd_error(comm, MPI_ERR_ARG, call, "coords is NULL");
    int r = 0;
    for (int i = 0; i < t->ndims; i++) {
        int d = t->dims[i], x = coords[i];
        if (t->periods[i])
            x = (int)(((long long)x % d + d) % d);
        else if (x < 0 || x >= d)
            return bd_error(comm, MPI_ERR_ARG, call,
                            "coords[%d] = %d is outside the non-periodic dimension of size %d",
                            i, x, d);
        r = r * d + x;
    }
    *rank = r;
    return MPI_SUCCESS;
}

int MPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    const char *call = "MPI_Cart_shift";
    int rc = MPI_SUCCESS;
    struct bd_topo *t = get_cart(comm, call, &rc);
    if (!t)
        return rc;
    if (direction < 0 || direction >= t->ndims)
        return bd_error(comm, MPI_ERR_ARG, call, "invalid direction %d (%d dimensions)",
                        direction, t->ndims);
    int *cc = malloc((size_t)t->ndims * sizeof(int));
    if (!cc)
        return bd_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
    rank_to_coords(t, bd_comm_get(comm)->rank, cc);
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

/* Search non-increasing factorizations of n into k factors for the one
 * whose largest and smallest factors are closest.  divs: the divisors of the
 * number being split, in decreasing order. */
typedef struct {
    int k;
    int *cur, *best;
    int best_spread;
    const int *divs;
    int ndivs;
    long long budget; /* search steps left */
} dims_search_t;

static int memcmp_dims(const int *a, const int *b, int k)
{
    for (int i = 0; i < k; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

static void dims_dfs(dims_search_t *s, int depth, int n, int cap)
{
    if (depth == s->k - 1) {
        if (n > cap)
            return;
        s->cur[depth] = n;
        int spread = s->cur[0] - n;
        /* ties: the lexicographically smallest, i.e. the more even split */
        if (spread < s->best_spread ||
            (spread == s->best_spread &&
             memcmp_dims(s->cur, s->best, s->k) < 0)) {
            s->best_spread = spread;
            memcpy(s->best, s->cur, (size_t)s->k * sizeof(int));
        }
        return;
    }
    int left = s->k - depth;
    for (int i = 0; i < s->ndivs && s->budget > 0; i++) {
        int d = s->divs[i];
        s->budget--;
        if (d > cap || d > n || n % d)
            continue;
        /* d is the largest of the remaining factors: d^left >= n. */
        long long p = 1;
        for (int j = 0; j < left && p < n; j++)
            p *= d;
        if (p < n)
            break;
        if (depth > 0 && s->cur[0] - d > s->best_spread)
            continue;
        s->cur[depth] = d;
        dims_dfs(s, depth + 1, n / d, d);
    }
}

static int cmp_desc(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return x > y ? -1 : x < y;
}

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
    if (k == 0 || n == 1)
        return;
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
        qsort(divs, (size_t)nd, sizeof(int), cmp_desc);
        dims_search_t s = {k, cur, out, INT_MAX, divs, nd, 4000000};
        dims_dfs(&s, 0, n, n);
        int ok = s.best_spread != INT_MAX && s.budget > 0;
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
    const char *call = "MPI_Dims_create";
    BD_CHECK_INIT(call);
    if (nnodes <= 0)
        return bd_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "invalid nnodes %d (must be > 0)",
                        nnodes);
    if (ndims < 0)
        return bd_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "invalid ndims %d", ndims);
    if (ndims > 0 && !dims)
        return bd_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "dims is NULL");
    long long fixed = 1;
    int nfree = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return bd_error(MPI_COMM_WORLD, MPI_ERR_DIMS, call, "dims[%d] = %d is negative", i,
                            dims[i]);
        if (dims[i] == 0)
            nfree++;
        else
            fixed *= dims[i];
        if (fixed > nnodes)
            break;
    }
    if (nnodes % fixed)
        return bd_error(MPI_COMM_WORLD, MPI_ERR_DIMS, call,
                        "nnodes %d is not a multiple of the product %lld of the given dims",
                        nnodes, fixed);
    if (!nfree) {
        if (fixed != nnodes)
            return bd_error(MPI_COMM_WORLD, MPI_ERR_DIMS, call,
                            "the given dims multiply to %lld, not nnodes %d", fixed, nnodes);
        return MPI_SUCCESS;
    }
    int *f = malloc((size_t)nfree * sizeof(int));
    if (!f)
        return bd_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "out of memory");
    balance((int)(nnodes / fixed), nfree, f);
    for (int i = 0, k = 0; i < ndims; i++)
        if (dims[i] == 0)
            dims[i] = f[k++];
    free(f);
    return MPI_SUCCESS;
}
