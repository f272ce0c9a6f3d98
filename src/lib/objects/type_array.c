/* The array datatype constructors (MPI 3.1 4.1.3 subarray, 4.1.4 darray)
 * and their large-count forms (MPI 4.0 5.1.13).  Dimensions are 64-bit
 * inside, so a dimension of more than INT_MAX elements works through the
 * _c forms; the int forms widen their arguments.  Both describe the type
 * to the builder (core/dtype.c) dimension by dimension: the two innermost
 * dimensions are added as one strided group per index of the outer ones
 * (a row at a time, the builder would merge the rows into the same run,
 * but after 2^31 calls for a 2^31-row array). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "dt.h"
#include "objects.h"

#define MAX_DIMS 1024 /* darray's and the _c forms' bound (arrays on the stack) */

/* Bytes of an array of sizes[dim[i]] (slowest to fastest) of elements of
 * extent ext, and each dimension's stride; -1 when it passes INT64_MAX. */
static int strides(int ndims, const int *dim, const MPI_Count *sizes, int64_t ext, int64_t *stride,
                   int64_t *full)
{
    int64_t s = ext < 0 ? -ext : ext;
    for (int i = ndims - 1; i >= 0; i--) {
        stride[i] = ext < 0 ? -s : s;
        if (s && sizes[dim[i]] > INT64_MAX / s)
            return -1;
        s *= sizes[dim[i]];
    }
    *full = ext < 0 ? -s : s;
    return 0;
}

/* ---------------------------------------------------------------- subarray */

/* large: the _c form (its contents are MPI_Counts). */
static int subarray(const char *call, int ndims, const MPI_Count *sizes, const MPI_Count *subsizes,
                    const MPI_Count *starts, int order, MPI_Datatype oldtype, MPI_Datatype *newtype,
                    int large)
{
    bdl_dt_t *o = NULL;
    int rc;
    if (ndims <= 0) /* the callers checked; says so to the compiler */
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "invalid ndims %d", ndims);
    if ((rc = bdl_type_arg(call, "old", oldtype, &o)))
        return rc;
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                         "invalid order %d (MPI_ORDER_C or MPI_ORDER_FORTRAN)", order);
    for (int i = 0; i < ndims; i++) {
        int64_t sz = sizes[i], sub = subsizes[i], st = starts[i];
        if (sz <= 0 || sub <= 0 || sub > sz || st < 0 || st > sz - sub)
            return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                             "dimension %d: size %lld, subsize %lld, start %lld do not describe a "
                             "subarray (need 0 < subsize <= size, 0 <= start <= size - subsize)",
                             i, (long long)sz, (long long)sub, (long long)st);
    }
    BDL_CHECK_OUT(call, newtype);
    /* Dimensions from the slowest to the fastest varying. */
    int *dim = malloc((size_t)ndims * sizeof *dim);
    int64_t *stride = malloc((size_t)ndims * sizeof *stride), full;
    uint64_t *idx = calloc((size_t)ndims, sizeof *idx);
    bdl_dt_builder_t b;
    memset(&b, 0, sizeof b);
    if (!dim || !stride || !idx || bdl_dt_build_init(&b, MPI_COMBINER_SUBARRAY) < 0)
        goto oom;
    for (int i = 0; i < ndims; i++)
        dim[i] = order == MPI_ORDER_C ? i : ndims - 1 - i;
    if (strides(ndims, dim, sizes, o->extent, stride, &full) < 0) {
        bdl_dt_build_abort(&b);
        free(dim);
        free(stride);
        free(idx);
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_COUNT, call,
                         "the array's size in bytes does not fit an MPI_Count");
    }
    uint64_t total = 1;
    for (int i = 0; i < ndims; i++)
        total *= (uint64_t)subsizes[i];
    /* Rows of the innermost dimension, as groups of the next one: one
     * group per index of the dimensions outside those two. */
    int inner = ndims - 1, next = ndims - 2;
    uint64_t k = (uint64_t)subsizes[dim[inner]];
    uint64_t n = next >= 0 ? (uint64_t)subsizes[dim[next]] : 1;
    int64_t nstride = next >= 0 ? stride[next] : 0;
    for (;;) {
        int64_t d = 0;
        for (int i = 0; i < ndims; i++)
            d += (starts[dim[i]] + (int64_t)idx[i]) * stride[i];
        if (bdl_dt_build_add_strided(&b, o, d, k, n, nstride) < 0)
            goto oom;
        int i = next - 1;
        for (; i >= 0; i--) {
            if (++idx[i] < (uint64_t)subsizes[dim[i]])
                break;
            idx[i] = 0;
        }
        if (i < 0)
            break;
    }
    if (bdl_dt_build_sig(&b, o, total) < 0)
        goto oom;
    size_t nints = large ? 2 : (size_t)ndims * 3 + 2;
    int *ints = malloc(nints * sizeof *ints);
    MPI_Count *counts = large ? malloc((size_t)ndims * 3 * sizeof *counts) : NULL;
    if (!ints || (large && !counts)) {
        free(ints);
        goto oom;
    }
    if (large) {
        ints[0] = ndims;
        ints[1] = order;
        for (int i = 0; i < ndims; i++) {
            counts[i] = sizes[i];
            counts[ndims + i] = subsizes[i];
            counts[2 * ndims + i] = starts[i];
        }
    } else {
        ints[0] = ndims;
        for (int i = 0; i < ndims; i++) {
            ints[1 + i] = (int)sizes[i];
            ints[1 + ndims + i] = (int)subsizes[i];
            ints[1 + 2 * ndims + i] = (int)starts[i];
        }
        ints[1 + 3 * ndims] = order;
    }
    rc = large ? bdl_dt_build_contents(&b, 0, NULL, 0, NULL, 1, &o)
               : bdl_dt_build_contents(&b, (int)nints, ints, 0, NULL, 1, &o);
    if (rc == 0 && large)
        rc = bdl_dt_set_counts(b.t, 2, ints, 3 * ndims, counts);
    free(ints);
    free(counts);
    if (rc < 0)
        goto oom;
    free(dim);
    free(stride);
    free(idx);
    /* The subarray's extent is the whole array's (MPI 3.1 4.1.3). */
    bdl_dt_build_explicit(&b, 0, full);
    return bdl_dt_build_publish(&b, call, newtype);
oom:
    free(dim);
    free(stride);
    free(idx);
    return bdl_type_nomem(&b, call);
}

int MPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                             const int array_of_starts[], int order, MPI_Datatype oldtype,
                             MPI_Datatype *newtype)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Type_create_subarray";
    if (ndims <= 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "invalid ndims %d (must be > 0)",
                         ndims);
    if (!array_of_sizes || !array_of_subsizes || !array_of_starts)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "NULL array argument");
    MPI_Count *v = malloc((size_t)ndims * 3 * sizeof *v);
    if (!v)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "out of memory");
    for (int i = 0; i < ndims; i++) {
        v[i] = array_of_sizes[i];
        v[ndims + i] = array_of_subsizes[i];
        v[2 * ndims + i] = array_of_starts[i];
    }
    int rc = subarray(call, ndims, v, v + ndims, v + 2 * ndims, order, oldtype, newtype, 0);
    free(v);
    return rc;
}

int MPI_Type_create_subarray_c(int ndims, const MPI_Count array_of_sizes[],
                               const MPI_Count array_of_subsizes[],
                               const MPI_Count array_of_starts[], int order, MPI_Datatype oldtype,
                               MPI_Datatype *newtype)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Type_create_subarray_c";
    if (ndims <= 0 || ndims > MAX_DIMS)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "invalid ndims %d (1..%d)", ndims,
                         MAX_DIMS);
    if (!array_of_sizes || !array_of_subsizes || !array_of_starts)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "NULL array argument");
    return subarray(call, ndims, array_of_sizes, array_of_subsizes, array_of_starts, order, oldtype,
                    newtype, 1);
}

/* ---------------------------------------------------------------- darray */

/* The global indices one process owns in one dimension of a distributed
 * array, as runs [start, start + len) in increasing order (MPI 3.1 4.1.4):
 * p is the process's coordinate among P, g the global size. */
static int darray_runs(int64_t g, int distrib, int darg, int P, int p, int64_t **start,
                       int64_t **len, int64_t *nruns)
{
    int64_t n = 0, cap;
    if (distrib == MPI_DISTRIBUTE_CYCLIC) {
        int64_t k = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
        int64_t nblocks = (g + k - 1) / k;
        cap = nblocks > p ? (nblocks - p + P - 1) / P : 0;
    } else {
        cap = 1;
    }
    *start = malloc((size_t)(cap ? cap : 1) * sizeof **start);
    *len = malloc((size_t)(cap ? cap : 1) * sizeof **len);
    if (!*start || !*len)
        return -1;
    if (distrib == MPI_DISTRIBUTE_NONE) {
        (*start)[n] = 0;
        (*len)[n++] = g;
    } else if (distrib == MPI_DISTRIBUTE_BLOCK) {
        int64_t b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (g + P - 1) / P : darg;
        int64_t s = (int64_t)p * b, e = s + b < g ? s + b : g;
        if (e > s) {
            (*start)[n] = s;
            (*len)[n++] = e - s;
        }
    } else {
        int64_t k = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
        for (int64_t j = p; j * k < g; j += P) {
            int64_t s = j * k, e = s + k < g ? s + k : g;
            (*start)[n] = s;
            (*len)[n++] = e - s;
        }
    }
    *nruns = n;
    return 0;
}

/* The runs of the layout: the odometer goes over the dimensions outside
 * the two innermost (run ri[i], offset off[i] in it); for each index there
 * the next-to-innermost dimension's runs, each row of which holds the
 * innermost dimension's runs: one strided run when that is a single run. */
static int darray_add(bdl_dt_builder_t *b, const bdl_dt_t *o, int ndims, const int64_t *stride,
                      int64_t *const *rs, int64_t *const *rl, const int64_t *nr)
{
    int last = ndims - 1, next = ndims - 2;
    int64_t ri[ndims], off[ndims];
    for (int i = 0; i < ndims; i++)
        ri[i] = off[i] = 0;
    for (;;) {
        int64_t base = 0;
        for (int i = 0; i < next; i++)
            base += (rs[i][ri[i]] + off[i]) * stride[i];
        for (int64_t q = 0; q < (next >= 0 ? nr[next] : 1); q++) {
            int64_t rbase = base + (next >= 0 ? rs[next][q] * stride[next] : 0);
            uint64_t rows = next >= 0 ? (uint64_t)rl[next][q] : 1;
            int64_t rstride = next >= 0 ? stride[next] : 0;
            if (nr[last] == 1) {
                if (bdl_dt_build_add_strided(b, o, rbase + rs[last][0] * stride[last],
                                             (uint64_t)rl[last][0], rows, rstride) < 0)
                    return -1;
                continue;
            }
            for (uint64_t r = 0; r < rows; r++)
                for (int64_t j = 0; j < nr[last]; j++)
                    if (bdl_dt_build_add(b, o,
                                         rbase + (int64_t)r * rstride + rs[last][j] * stride[last],
                                         (uint64_t)rl[last][j]) < 0)
                        return -1;
        }
        int i = next - 1;
        for (; i >= 0; i--) {
            if (++off[i] < rl[i][ri[i]])
                break;
            off[i] = 0;
            if (++ri[i] < nr[i])
                break;
            ri[i] = 0;
        }
        if (i < 0)
            return 0;
    }
}

static int darray(const char *call, int size, int rank, int ndims, const MPI_Count *gsizes,
                  const int *distribs, const int *dargs, const int *psizes, int order,
                  MPI_Datatype oldtype, MPI_Datatype *newtype, int large)
{
    bdl_dt_t *o = NULL;
    int rc;
    if ((rc = bdl_type_arg(call, "old", oldtype, &o)))
        return rc;
    if (size <= 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "invalid size %d (must be > 0)", size);
    if (rank < 0 || rank >= size)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "invalid rank %d (size %d)", rank,
                         size);
    if (!distribs || !dargs || !psizes)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "NULL array argument");
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                         "invalid order %d (MPI_ORDER_C or MPI_ORDER_FORTRAN)", order);
    long long nprocs = 1;
    for (int i = 0; i < ndims; i++) {
        int64_t g = gsizes[i];
        int P = psizes[i], dist = distribs[i], darg = dargs[i];
        if (g <= 0 || P <= 0)
            return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                             "dimension %d: gsize %lld and psize %d must be > 0", i, (long long)g,
                             P);
        if (dist != MPI_DISTRIBUTE_BLOCK && dist != MPI_DISTRIBUTE_CYCLIC &&
            dist != MPI_DISTRIBUTE_NONE)
            return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                             "dimension %d: invalid distribution %d (MPI_DISTRIBUTE_BLOCK, "
                             "_CYCLIC or _NONE)",
                             i, dist);
        if (dist == MPI_DISTRIBUTE_NONE && P != 1)
            return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                             "dimension %d: MPI_DISTRIBUTE_NONE needs psize 1, not %d", i, P);
        if (dist != MPI_DISTRIBUTE_NONE && darg != MPI_DISTRIBUTE_DFLT_DARG && darg <= 0)
            return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                             "dimension %d: invalid distribution argument %d", i, darg);
        if (dist == MPI_DISTRIBUTE_BLOCK && darg != MPI_DISTRIBUTE_DFLT_DARG &&
            (int64_t)darg * P < g)
            return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                             "dimension %d: %d blocks of %d cannot hold gsize %lld", i, P, darg,
                             (long long)g);
        nprocs *= P;
        if (nprocs > size)
            break;
    }
    if (nprocs != size)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                         "the process grid (psizes) does not have size = %d processes", size);
    BDL_CHECK_OUT(call, newtype);
    /* This process's coordinates: the process grid is row-major whatever
     * the array's order. */
    int coords[ndims], dim[ndims];
    for (int i = ndims - 1, r = rank; i >= 0; i--) {
        coords[i] = r % psizes[i];
        r /= psizes[i];
    }
    /* Dimensions from the slowest to the fastest varying in memory. */
    int64_t stride[ndims], *rs[ndims], *rl[ndims], nr[ndims], full;
    for (int i = 0; i < ndims; i++)
        dim[i] = order == MPI_ORDER_C ? i : ndims - 1 - i;
    if (strides(ndims, dim, gsizes, o->extent, stride, &full) < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_COUNT, call,
                         "the array's size in bytes does not fit an MPI_Count");
    bdl_dt_builder_t b;
    memset(&b, 0, sizeof b);
    memset(rs, 0, sizeof rs[0] * (size_t)ndims);
    memset(rl, 0, sizeof rl[0] * (size_t)ndims);
    int ok = bdl_dt_build_init(&b, MPI_COMBINER_DARRAY) == 0;
    uint64_t total = 1;
    for (int i = 0; i < ndims && ok; i++) {
        int d = dim[i];
        ok = darray_runs(gsizes[d], distribs[d], dargs[d], psizes[d], coords[d], &rs[i], &rl[i],
                         &nr[i]) == 0;
        uint64_t cnt = 0;
        for (int64_t j = 0; ok && j < nr[i]; j++)
            cnt += (uint64_t)rl[i][j];
        total *= cnt;
    }
    if (ok && total)
        ok = darray_add(&b, o, ndims, stride, rs, rl, nr) == 0;
    for (int i = 0; i < ndims; i++) {
        free(rs[i]);
        free(rl[i]);
    }
    if (!ok || bdl_dt_build_sig(&b, o, total) < 0)
        return bdl_type_nomem(&b, call);
    /* Contents: the int form's, or the _c form's (gsizes as MPI_Counts). */
    int gi = large ? 0 : ndims; /* room for gsizes among the ints */
    int ni = 4 + 3 * ndims + gi;
    int *ints = malloc((size_t)ni * sizeof *ints);
    if (!ints)
        return bdl_type_nomem(&b, call);
    ints[0] = size;
    ints[1] = rank;
    ints[2] = ndims;
    for (int i = 0; i < ndims; i++) {
        if (!large)
            ints[3 + i] = (int)gsizes[i];
        ints[3 + gi + i] = distribs[i];
        ints[3 + gi + ndims + i] = dargs[i];
        ints[3 + gi + 2 * ndims + i] = psizes[i];
    }
    ints[ni - 1] = order;
    rc = large ? bdl_dt_build_contents(&b, 0, NULL, 0, NULL, 1, &o)
               : bdl_dt_build_contents(&b, ni, ints, 0, NULL, 1, &o);
    if (rc == 0 && large)
        rc = bdl_dt_set_counts(b.t, ni, ints, ndims, gsizes);
    free(ints);
    if (rc < 0)
        return bdl_type_nomem(&b, call);
    /* Like a subarray, the extent is the whole global array's. */
    bdl_dt_build_explicit(&b, 0, full);
    return bdl_dt_build_publish(&b, call, newtype);
}

int MPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
                           const int array_of_distribs[], const int array_of_dargs[],
                           const int array_of_psizes[], int order, MPI_Datatype oldtype,
                           MPI_Datatype *newtype)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Type_create_darray";
    if (ndims <= 0 || ndims > MAX_DIMS)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "invalid ndims %d (1..%d)", ndims,
                         MAX_DIMS);
    if (!array_of_gsizes)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "NULL array argument");
    MPI_Count g[MAX_DIMS];
    for (int i = 0; i < ndims; i++)
        g[i] = array_of_gsizes[i];
    return darray(call, size, rank, ndims, g, array_of_distribs, array_of_dargs, array_of_psizes,
                  order, oldtype, newtype, 0);
}

int MPI_Type_create_darray_c(int size, int rank, int ndims, const MPI_Count array_of_gsizes[],
                             const int array_of_distribs[], const int array_of_dargs[],
                             const int array_of_psizes[], int order, MPI_Datatype oldtype,
                             MPI_Datatype *newtype)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Type_create_darray_c";
    if (ndims <= 0 || ndims > MAX_DIMS)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "invalid ndims %d (1..%d)", ndims,
                         MAX_DIMS);
    if (!array_of_gsizes)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "NULL array argument");
    return darray(call, size, rank, ndims, array_of_gsizes, array_of_distribs, array_of_dargs,
                  array_of_psizes, order, oldtype, newtype, 1);
}
