/* Datatype constructors (MPI 3.1 4.1.2 to 4.1.7): they check their
 * arguments and describe the new type to the datatype engine's builder
 * (core/dtype.c), which merges the runs and gives out the handle. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "dt.h"
#include "objects.h"

static int check_count(const char *call, const char *what, int64_t n)
{
    if (n < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_COUNT, call, "invalid %s %lld (must be >= 0)",
                         what, (long long)n);
    return MPI_SUCCESS;
}

/* An int or a large-count (_c) array: entry i of whichever is given. */
typedef struct arr {
    const int *i;
    const MPI_Count *c;
    const MPI_Aint *a;
} arr_t;

static int64_t at(arr_t x, int64_t k)
{
    return x.i ? (int64_t)x.i[k] : x.c ? (int64_t)x.c[k] : (int64_t)x.a[k];
}

static int present(arr_t x) { return x.i || x.c || x.a; }

static int check_blocks(const char *call, int64_t count, arr_t bl)
{
    if (count > 0 && !present(bl))
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "NULL array of block lengths");
    for (int64_t i = 0; i < count; i++)
        if (at(bl, i) < 0)
            return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                             "invalid block length %lld at index %lld (must be >= 0)",
                             (long long)at(bl, i), (long long)i);
    return MPI_SUCCESS;
}

/* The contents of a type made by a large-count constructor: its ints
 * (ni) and its MPI_Count arguments in order (MPI 4.0 5.1.13). */
static int large_contents(bdl_dt_builder_t *b, int ni, const int *ints, int64_t nc,
                          const MPI_Count *counts, int nd, bdl_dt_t *const *types)
{
    if (nc > INT_MAX || bdl_dt_build_contents(b, 0, NULL, 0, NULL, nd, types) < 0)
        return -1;
    return bdl_dt_set_counts(b->t, ni, ints, (int)nc, counts);
}

/* ---------------------------------------------------------------- constructors */

static int contiguous(const char *call, int64_t count, MPI_Datatype oldtype, MPI_Datatype *newtype,
                      int large)
{
    bdl_dt_t *o = NULL;
    int rc;
    if ((rc = check_count(call, "count", count)) || (rc = bdl_type_arg(call, "old", oldtype, &o)))
        return rc;
    BDL_CHECK_OUT(call, newtype);
    bdl_dt_builder_t b;
    int icount = (int)count;
    MPI_Count ccount = count;
    if (bdl_dt_build_init(&b, MPI_COMBINER_CONTIGUOUS) < 0 ||
        bdl_dt_build_add(&b, o, 0, (uint64_t)count) < 0 ||
        bdl_dt_build_sig(&b, o, (uint64_t)count) < 0 ||
        (large ? large_contents(&b, 0, NULL, 1, &ccount, 1, &o)
               : bdl_dt_build_contents(&b, 1, &icount, 0, NULL, 1, &o)) < 0)
        return bdl_type_nomem(&b, call);
    return bdl_dt_build_publish(&b, call, newtype);
}

int MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    BDL_MT_GUARD;
    return contiguous("MPI_Type_contiguous", count, oldtype, newtype, 0);
}

/* A contiguous type whose count is a large count (MPI 4.0 5.1.13: its
 * envelope is MPI_COMBINER_CONTIGUOUS with the count among the MPI_Counts,
 * which mpi4py's test_datatype expects of an MPI 4.0). */
int MPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    BDL_MT_GUARD;
    return contiguous("MPI_Type_contiguous_c", count, oldtype, newtype, 1);
}

static int vector(const char *call, int combiner, int64_t count, int64_t blocklength,
                  int64_t stride, int stride_in_elems, MPI_Datatype oldtype, MPI_Datatype *newtype,
                  int large)
{
    bdl_dt_t *o = NULL;
    int rc;
    if ((rc = check_count(call, "count", count)) || (rc = bdl_type_arg(call, "old", oldtype, &o)))
        return rc;
    if (blocklength < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                         "invalid block length %lld (must be >= 0)", (long long)blocklength);
    BDL_CHECK_OUT(call, newtype);
    int64_t bstride = stride_in_elems ? stride * o->extent : stride;
    bdl_dt_builder_t b;
    if (bdl_dt_build_init(&b, combiner) < 0 ||
        bdl_dt_build_add_strided(&b, o, 0, (uint64_t)blocklength, (uint64_t)count, bstride) < 0)
        return bdl_type_nomem(&b, call);
    int ints[3] = {(int)count, (int)blocklength, (int)stride};
    MPI_Count counts[3] = {count, blocklength, stride};
    MPI_Aint astride = (MPI_Aint)stride;
    if (bdl_dt_build_sig(&b, o, (uint64_t)count * (uint64_t)blocklength) < 0 ||
        (large             ? large_contents(&b, 0, NULL, 3, counts, 1, &o)
         : stride_in_elems ? bdl_dt_build_contents(&b, 3, ints, 0, NULL, 1, &o)
                           : bdl_dt_build_contents(&b, 2, ints, 1, &astride, 1, &o)) < 0)
        return bdl_type_nomem(&b, call);
    return bdl_dt_build_publish(&b, call, newtype);
}

int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                    MPI_Datatype *newtype)
{
    BDL_MT_GUARD;
    return vector("MPI_Type_vector", MPI_COMBINER_VECTOR, count, blocklength, stride, 1, oldtype,
                  newtype, 0);
}

int MPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                      MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    BDL_MT_GUARD;
    return vector("MPI_Type_vector_c", MPI_COMBINER_VECTOR, count, blocklength, stride, 1, oldtype,
                  newtype, 1);
}

int MPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                            MPI_Datatype *newtype)
{
    BDL_MT_GUARD;
    return vector("MPI_Type_create_hvector", MPI_COMBINER_HVECTOR, count, blocklength, stride, 0,
                  oldtype, newtype, 0);
}

int MPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                              MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    BDL_MT_GUARD;
    return vector("MPI_Type_create_hvector_c", MPI_COMBINER_HVECTOR, count, blocklength, stride, 0,
                  oldtype, newtype, 1);
}

int MPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                     MPI_Datatype *newtype)
{
    BDL_MT_GUARD;
    return vector("MPI_Type_hvector", MPI_COMBINER_HVECTOR, count, blocklength, stride, 0, oldtype,
                  newtype, 0);
}

/* indexed family.  bl: per-block lengths (none given: all `block`); disp:
 * displacements, in extents of old (elems) or in bytes.  large: the _c
 * form, whose contents are large counts. */
static int indexed(const char *call, int combiner, int64_t count, arr_t bl, int64_t block,
                   arr_t disp, int elems, MPI_Datatype oldtype, MPI_Datatype *newtype, int large)
{
    bdl_dt_t *o = NULL;
    int rc;
    if ((rc = check_count(call, "count", count)) || (rc = bdl_type_arg(call, "old", oldtype, &o)))
        return rc;
    if (present(bl) && (rc = check_blocks(call, count, bl)))
        return rc;
    if (!present(bl) && block < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                         "invalid block length %lld (must be >= 0)", (long long)block);
    if (count > 0 && !present(disp))
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "NULL array of displacements");
    BDL_CHECK_OUT(call, newtype);
    bdl_dt_builder_t b;
    if (bdl_dt_build_init(&b, combiner) < 0)
        return bdl_type_nomem(&b, call);
    uint64_t total = 0;
    for (int64_t i = 0; i < count; i++) {
        int64_t k = present(bl) ? at(bl, i) : block;
        int64_t d = elems ? at(disp, i) * o->extent : at(disp, i);
        if (bdl_dt_build_add(&b, o, d, (uint64_t)k) < 0)
            return bdl_type_nomem(&b, call);
        total += (uint64_t)k;
    }
    if (bdl_dt_build_sig(&b, o, total) < 0)
        return bdl_type_nomem(&b, call);
    /* Type_get_contents layout (MPI 3.1 4.1.13; MPI 4.0 5.1.13 for _c:
     * the same values, every one a large count). */
    int64_t n = 1 + (present(bl) ? count : 1) + (elems || large ? count : 0);
    if (n > INT_MAX)
        return bdl_type_nomem(&b, call);
    MPI_Count *v = malloc((size_t)n * sizeof *v);
    if (!v)
        return bdl_type_nomem(&b, call);
    int64_t p = 0;
    v[p++] = count;
    if (present(bl))
        for (int64_t i = 0; i < count; i++)
            v[p++] = at(bl, i);
    else
        v[p++] = block;
    if (elems || large)
        for (int64_t i = 0; i < count; i++)
            v[p++] = at(disp, i);
    if (large) {
        rc = large_contents(&b, 0, NULL, n, v, 1, &o);
    } else {
        int *ints = malloc((size_t)n * sizeof *ints);
        for (int64_t i = 0; ints && i < n; i++)
            ints[i] = (int)v[i];
        rc = ints ? bdl_dt_build_contents(&b, (int)n, ints, elems ? 0 : (int)count, disp.a, 1, &o)
                  : -1;
        free(ints);
    }
    free(v);
    if (rc < 0)
        return bdl_type_nomem(&b, call);
    return bdl_dt_build_publish(&b, call, newtype);
}

#define IARR(p) ((arr_t){.i = (p)})
#define CARR(p) ((arr_t){.c = (p)})
#define AARR(p) ((arr_t){.a = (p)})
#define NOARR ((arr_t){0})

int MPI_Type_indexed(int count, const int array_of_blocklengths[],
                     const int array_of_displacements[], MPI_Datatype oldtype,
                     MPI_Datatype *newtype)
{
    BDL_MT_GUARD;
    return indexed("MPI_Type_indexed", MPI_COMBINER_INDEXED, count, IARR(array_of_blocklengths), 0,
                   IARR(array_of_displacements), 1, oldtype, newtype, 0);
}

int MPI_Type_indexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                       const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                       MPI_Datatype *newtype)
{
    BDL_MT_GUARD;
    return indexed("MPI_Type_indexed_c", MPI_COMBINER_INDEXED, count, CARR(array_of_blocklengths),
                   0, CARR(array_of_displacements), 1, oldtype, newtype, 1);
}

int MPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                             const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                             MPI_Datatype *newtype)
{
    BDL_MT_GUARD;
    return indexed("MPI_Type_create_hindexed", MPI_COMBINER_HINDEXED, count,
                   IARR(array_of_blocklengths), 0, AARR(array_of_displacements), 0, oldtype,
                   newtype, 0);
}

int MPI_Type_create_hindexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                               const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                               MPI_Datatype *newtype)
{
    BDL_MT_GUARD;
    return indexed("MPI_Type_create_hindexed_c", MPI_COMBINER_HINDEXED, count,
                   CARR(array_of_blocklengths), 0, CARR(array_of_displacements), 0, oldtype,
                   newtype, 1);
}

int MPI_Type_hindexed(int count, const int array_of_blocklengths[],
                      const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
{
    BDL_MT_GUARD;
    return indexed("MPI_Type_hindexed", MPI_COMBINER_HINDEXED, count, IARR(array_of_blocklengths),
                   0, AARR(array_of_displacements), 0, oldtype, newtype, 0);
}

int MPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                  MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    BDL_MT_GUARD;
    return indexed("MPI_Type_create_indexed_block", MPI_COMBINER_INDEXED_BLOCK, count, NOARR,
                   blocklength, IARR(array_of_displacements), 1, oldtype, newtype, 0);
}

int MPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength,
                                    const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                    MPI_Datatype *newtype)
{
    BDL_MT_GUARD;
    return indexed("MPI_Type_create_indexed_block_c", MPI_COMBINER_INDEXED_BLOCK, count, NOARR,
                   blocklength, CARR(array_of_displacements), 1, oldtype, newtype, 1);
}

int MPI_Type_create_hindexed_block(int count, int blocklength,
                                   const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                   MPI_Datatype *newtype)
{
    BDL_MT_GUARD;
    return indexed("MPI_Type_create_hindexed_block", MPI_COMBINER_HINDEXED_BLOCK, count, NOARR,
                   blocklength, AARR(array_of_displacements), 0, oldtype, newtype, 0);
}

int MPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength,
                                     const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                     MPI_Datatype *newtype)
{
    BDL_MT_GUARD;
    return indexed("MPI_Type_create_hindexed_block_c", MPI_COMBINER_HINDEXED_BLOCK, count, NOARR,
                   blocklength, CARR(array_of_displacements), 0, oldtype, newtype, 1);
}

static int type_struct(const char *call, int64_t count, arr_t bl, arr_t disp,
                       const MPI_Datatype types[], MPI_Datatype *newtype, int large)
{
    int rc;
    if ((rc = check_count(call, "count", count)) || (rc = check_blocks(call, count, bl)))
        return rc;
    if (count > 0 && (!present(disp) || !types))
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                         "NULL array of displacements or datatypes");
    BDL_CHECK_OUT(call, newtype);
    if (count > INT_MAX) /* the contents' datatypes */
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_COUNT, call, "count %lld is more than INT_MAX",
                         (long long)count);
    bdl_dt_t **objs = malloc((size_t)(count ? count : 1) * sizeof *objs);
    if (!objs)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "out of memory");
    for (int i = 0; i < count; i++) {
        objs[i] = bdl_dt_lookup(types[i]);
        if (!objs[i]) {
            free(objs);
            return bdl_error(MPI_COMM_WORLD, MPI_ERR_TYPE, call, "datatype %d at index %d %s",
                             types[i], i, bdl_dt_bad_why(types[i]));
        }
    }
    bdl_dt_builder_t b;
    if (bdl_dt_build_init(&b, MPI_COMBINER_STRUCT) < 0)
        goto oom;
    /* MPI_LB and MPI_UB entries set the bounds: the lowest MPI_LB and the
     * highest MPI_UB win over every other part's (MPI 2.2 4.1.6), whatever
     * their block length.  loose: a part without an explicit upper bound. */
    int has_lb = 0, has_ub = 0, loose = 0;
    int64_t mlb = 0, mub = 0;
    for (int i = 0; i < count; i++) {
        if (types[i] == MPI_LB || types[i] == MPI_UB) {
            int64_t d = at(disp, i);
            if (types[i] == MPI_LB && (!has_lb || d < mlb))
                mlb = d, has_lb = 1;
            if (types[i] == MPI_UB && (!has_ub || d > mub))
                mub = d, has_ub = 1;
            continue;
        }
        if (at(bl, i) > 0 && !(objs[i]->sticky & BDL_DT_EXPLICIT_UB))
            loose = 1;
        if (bdl_dt_build_add(&b, objs[i], at(disp, i), (uint64_t)at(bl, i)) < 0 ||
            bdl_dt_build_sig(&b, objs[i], (uint64_t)at(bl, i)) < 0)
            goto oom;
    }
    if (large) {
        MPI_Count *v = malloc(((size_t)count * 2 + 1) * sizeof *v);
        if (!v)
            goto oom;
        v[0] = count;
        for (int i = 0; i < count; i++) {
            v[1 + i] = at(bl, i);
            v[1 + count + i] = at(disp, i);
        }
        rc = large_contents(&b, 0, NULL, 2 * count + 1, v, (int)count, objs);
        free(v);
    } else {
        int *ints = malloc(((size_t)count + 1) * sizeof *ints);
        if (!ints)
            goto oom;
        ints[0] = (int)count;
        for (int i = 0; i < count; i++)
            ints[1 + i] = (int)at(bl, i);
        rc = bdl_dt_build_contents(&b, (int)count + 1, ints, (int)count, disp.a, (int)count, objs);
        free(ints);
    }
    if (rc < 0)
        goto oom;
    free(objs);
    if (!b.any)
        b.lb = b.ub = 0;
    /* Unless the upper bound is explicit (an MPI_UB, or every part's) the
     * extent of the parts is rounded up to the strictest alignment of the
     * basic types (MPI 3.1 4.1.6, "epsilon"); then an MPI_LB applies. */
    if (has_ub) {
        b.ub = mub;
    } else if (loose) {
        b.t->sticky &= ~BDL_DT_EXPLICIT_UB;
        int64_t ext = b.ub - b.lb, r = b.t->align > 1 ? ext % b.t->align : 0;
        if (r < 0)
            r += b.t->align;
        if (r)
            b.ub += b.t->align - r;
    }
    if (has_lb)
        b.lb = mlb;
    b.any = 1;
    b.t->sticky |= (has_lb ? BDL_DT_EXPLICIT_LB : 0) | (has_ub ? BDL_DT_EXPLICIT_UB : 0);
    return bdl_dt_build_publish(&b, call, newtype);
oom:
    free(objs);
    return bdl_type_nomem(&b, call);
}

int MPI_Type_create_struct(int count, const int array_of_blocklengths[],
                           const MPI_Aint array_of_displacements[],
                           const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    BDL_MT_GUARD;
    return type_struct("MPI_Type_create_struct", count, IARR(array_of_blocklengths),
                       AARR(array_of_displacements), array_of_types, newtype, 0);
}

int MPI_Type_create_struct_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                             const MPI_Count array_of_displacements[],
                             const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    BDL_MT_GUARD;
    return type_struct("MPI_Type_create_struct_c", count, CARR(array_of_blocklengths),
                       CARR(array_of_displacements), array_of_types, newtype, 1);
}

int MPI_Type_struct(int count, const int array_of_blocklengths[],
                    const MPI_Aint array_of_displacements[], const MPI_Datatype array_of_types[],
                    MPI_Datatype *newtype)
{
    BDL_MT_GUARD;
    return type_struct("MPI_Type_struct", count, IARR(array_of_blocklengths),
                       AARR(array_of_displacements), array_of_types, newtype, 0);
}

int MPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                            MPI_Datatype *newtype)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Type_create_resized";
    bdl_dt_t *o = NULL;
    int rc;
    if ((rc = bdl_type_arg(call, "old", oldtype, &o)))
        return rc;
    BDL_CHECK_OUT(call, newtype);
    bdl_dt_builder_t b;
    MPI_Aint a[2] = {lb, extent};
    if (bdl_dt_build_init(&b, MPI_COMBINER_RESIZED) < 0 || bdl_dt_build_add(&b, o, 0, 1) < 0 ||
        bdl_dt_build_sig(&b, o, 1) < 0 || bdl_dt_build_contents(&b, 0, NULL, 2, a, 1, &o) < 0)
        return bdl_type_nomem(&b, call);
    bdl_dt_build_explicit(&b, lb, lb + extent);
    return bdl_dt_build_publish(&b, call, newtype);
}

/* ---------------------------------------------------------------- Fortran 90 parameterized types */

/* MPI_Type_create_f90_{integer,real,complex} (MPI 3.1 17.1.9): the MPI type
 * of the gfortran kind that SELECTED_INT_KIND(r) or SELECTED_REAL_KIND(p, r)
 * picks, among the kinds MPI has types for (INTEGER 1/2/4/8/16, REAL 4/8/16).
 * The result is predefined for the program (it cannot be freed) but keeps
 * its combiner and (p, r) for MPI_Type_get_envelope/get_contents, so it is
 * a type of one element of the sized type, cached per (kind, p, r): the
 * same arguments give the same handle. */
enum { F90_CACHE = 64 };
static struct {
    int combiner, p, r;
    MPI_Datatype h;
} g_f90[F90_CACHE];
static int g_nf90;

static int f90_type(const char *call, int combiner, int p, int r, MPI_Datatype base,
                    MPI_Datatype *newtype)
{
    BDL_CHECK_OUT(call, newtype);
    for (int i = 0; i < g_nf90; i++)
        if (g_f90[i].combiner == combiner && g_f90[i].p == p && g_f90[i].r == r) {
            *newtype = g_f90[i].h;
            return MPI_SUCCESS;
        }
    bdl_dt_t *o = bdl_dt_lookup(base);
    int ints[2] = {p, r}, ni = combiner == MPI_COMBINER_F90_INTEGER ? 1 : 2;
    if (ni == 1)
        ints[0] = r;
    bdl_dt_builder_t b;
    if (bdl_dt_build_init(&b, combiner) < 0 || bdl_dt_build_add(&b, o, 0, 1) < 0 ||
        bdl_dt_build_sig(&b, o, 1) < 0 || bdl_dt_build_contents(&b, ni, ints, 0, NULL, 0, NULL) < 0)
        return bdl_type_nomem(&b, call);
    int rc = bdl_dt_build_publish(&b, call, newtype);
    if (rc)
        return rc;
    bdl_dt_t *t = bdl_dt_lookup(*newtype);
    t->committed = 1; /* predefined types need no commit */
    snprintf(t->name, sizeof t->name, "%s", o->name);
    if (g_nf90 < F90_CACHE)
        g_f90[g_nf90++] = (__typeof__(g_f90[0])){combiner, p, r, *newtype};
    return MPI_SUCCESS;
}

int MPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Type_create_f90_integer";
    BDL_CHECK_INIT(call);
    /* decimal exponent ranges of INTEGER(KIND=1, 2, 4, 8, 16) */
    static const int range[] = {2, 4, 9, 18, 38};
    static const MPI_Datatype type[] = {MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4, MPI_INTEGER8,
                                        MPI_INTEGER16};
    if (r == MPI_UNDEFINED)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                         "r is MPI_UNDEFINED (a range is needed)");
    for (int i = 0; i < 5; i++)
        if (r <= range[i])
            return f90_type(call, MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, r, type[i], newtype);
    return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                     "no integer kind has a decimal range of %d (at most 38)", r);
}

/* The real kind of precision p and range r (MPI_UNDEFINED: any): 0 kind 4,
 * 1 kind 8, 2 kind 16; -1 none, with why. */
static int real_kind(int p, int r, const char **why)
{
    static const int prec[] = {6, 15, 33}, range[] = {37, 307, 4931};
    int pp = p == MPI_UNDEFINED ? 0 : p, rr = r == MPI_UNDEFINED ? 0 : r;
    *why = NULL;
    if (p == MPI_UNDEFINED && r == MPI_UNDEFINED) {
        *why = "p and r are both MPI_UNDEFINED";
        return -1;
    }
    for (int i = 0; i < 3; i++)
        if (pp <= prec[i] && rr <= range[i]) {
            /* gfortran's SELECTED_REAL_KIND picks its 10-byte kind here, of
             * which MPI has no type: refuse rather than name another */
            if (i == 2 && pp <= 18 && rr <= 4931 && (pp > 15 || rr > 307)) {
                *why = "gfortran selects REAL(KIND=10), for which MPI has no datatype";
                return -1;
            }
            return i;
        }
    *why = "no real kind has that precision and range (at most 33 digits, 4931)";
    return -1;
}

int MPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Type_create_f90_real";
    BDL_CHECK_INIT(call);
    static const MPI_Datatype type[] = {MPI_REAL4, MPI_REAL8, MPI_REAL16};
    const char *why;
    int k = real_kind(p, r, &why);
    if (k < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "p %d, r %d: %s", p, r, why);
    return f90_type(call, MPI_COMBINER_F90_REAL, p, r, type[k], newtype);
}

int MPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Type_create_f90_complex";
    BDL_CHECK_INIT(call);
    static const MPI_Datatype type[] = {MPI_COMPLEX8, MPI_COMPLEX16, MPI_COMPLEX32};
    const char *why;
    int k = real_kind(p, r, &why);
    if (k < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "p %d, r %d: %s", p, r, why);
    return f90_type(call, MPI_COMBINER_F90_COMPLEX, p, r, type[k], newtype);
}

/* ---------------------------------------------------------------- large-count forms */

/* MPI_Type_create_resized_c: the int form, and the new type's contents
 * become the large-count layout (MPI 4.0 5.1.13).  Subarray and darray
 * are in type_array.c. */
static int relabel(const char *call, MPI_Datatype *newtype, int ni, const int *ints, int nc,
                   const MPI_Count *counts)
{
    bdl_dt_t *t = bdl_dt_lookup(*newtype);
    if (t && bdl_dt_set_counts(t, ni, ints, nc, counts) == 0)
        return MPI_SUCCESS;
    MPI_Type_free(newtype);
    return bdl_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "out of memory");
}

int MPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent,
                              MPI_Datatype *newtype)
{
    BDL_MT_GUARD;
    int rc = MPI_Type_create_resized(oldtype, (MPI_Aint)lb, (MPI_Aint)extent, newtype);
    if (rc)
        return rc;
    MPI_Count c[2] = {lb, extent};
    return relabel("MPI_Type_create_resized_c", newtype, 0, NULL, 2, c);
}
