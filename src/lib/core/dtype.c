/* Datatypes on the slave side (MPI 3.1 chapter 4).
 *
 * Every datatype handle, predefined or derived, names a descriptor
 * (bdl_dt_t, lib.h).  A descriptor describes one element as a list of runs
 * of equal byte blocks, in type-map order: run i is `cnt` blocks of `len`
 * bytes, the first at `off` bytes from the element's origin, the next ones
 * `stride` bytes apart.  Consecutive blocks are merged while a type is built,
 * so a vector of doubles is one run whatever its count.  Element k of a
 * buffer starts k * extent bytes after the buffer's address.
 *
 * The packed stream of `count` elements is the concatenation of the blocks
 * of every element, in order; it is what travels between ranks (the status
 * byte count is its length), what MPI_Pack produces, and what the master
 * folds for reductions with predefined ops (a stream of basic elements when
 * the type is built from one predefined type).  Pack and unpack work on any
 * byte range of the stream, so large messages move in window-sized pieces.
 *
 * Handles and descriptors are separate: a descriptor is reference counted
 * (one per handle naming it, one per derived type built from it, one per
 * pending receive), so a type freed by the program while a receive or a
 * derived type still uses it stays alive until they are done.  A freed
 * handle is reported as freed until a new type takes it: the most recently
 * freed handle is the next one given out, as MPICH does (some programs and
 * tests keep using a freed handle's number for the type created next). */
#include <limits.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "bd_dtype.h"
#include "core.h"
#include "dt.h"
#include "nbc.h"
#include "request.h"
/* TODO(layers): upward includes, to be removed */
#include "mpi_int.h"
#include "objects.h"

#define NPRE (BDMPI_DATATYPE_PREDEFINED_MAX + 1)

enum { H_UNUSED = 0, H_LIVE, H_FREED };

static bdl_dt_t g_pre[NPRE];
static int g_pre_ready;

static bdl_dt_t **g_obj;     /* handle -> descriptor (derived handles) */
static unsigned char *g_hst; /* handle -> H_* */
static int g_nh;             /* table size */
static int g_next = NPRE;    /* next never-used handle */
static int *g_freed;         /* freed handles, most recent last */
static int g_nfreed, g_freedcap;

static int pre_align(int dt)
{
    typedef struct {
        float v;
        int i;
    } pf;
    typedef struct {
        double v;
        int i;
    } pd;
    typedef struct {
        long v;
        int i;
    } pl;
    typedef struct {
        int v;
        int i;
    } pi;
    typedef struct {
        short v;
        int i;
    } ps;
    typedef struct {
        long double v;
        int i;
    } pld;
    switch (dt) {
    case MPI_WCHAR: return alignof(wchar_t);
    case MPI_SHORT:
    case MPI_UNSIGNED_SHORT: return alignof(short);
    case MPI_INT:
    case MPI_UNSIGNED: return alignof(int);
    case MPI_LONG:
    case MPI_UNSIGNED_LONG: return alignof(long);
    case MPI_LONG_LONG_INT:
    case MPI_UNSIGNED_LONG_LONG: return alignof(long long);
    case MPI_FLOAT: return alignof(float);
    case MPI_DOUBLE: return alignof(double);
    case MPI_LONG_DOUBLE: return alignof(long double);
    case MPI_INT16_T:
    case MPI_UINT16_T: return alignof(int16_t);
    case MPI_INT32_T:
    case MPI_UINT32_T: return alignof(int32_t);
    case MPI_INT64_T:
    case MPI_UINT64_T: return alignof(int64_t);
    case MPI_C_BOOL:
    case MPI_CXX_BOOL: return alignof(bool);
    case MPI_C_FLOAT_COMPLEX:
    case MPI_CXX_FLOAT_COMPLEX: return alignof(float);
    case MPI_C_DOUBLE_COMPLEX:
    case MPI_CXX_DOUBLE_COMPLEX: return alignof(double);
    case MPI_C_LONG_DOUBLE_COMPLEX:
    case MPI_CXX_LONG_DOUBLE_COMPLEX: return alignof(long double);
    case MPI_AINT: return alignof(MPI_Aint);
    case MPI_OFFSET: return alignof(MPI_Offset);
    case MPI_COUNT: return alignof(MPI_Count);
    case MPI_FLOAT_INT: return alignof(pf);
    case MPI_DOUBLE_INT: return alignof(pd);
    case MPI_LONG_INT: return alignof(pl);
    case MPI_2INT: return alignof(pi);
    case MPI_SHORT_INT: return alignof(ps);
    case MPI_LONG_DOUBLE_INT: return alignof(pld);
    case MPI_LOGICAL:
    case MPI_INTEGER:
    case MPI_2INTEGER: return alignof(int);
    case MPI_REAL:
    case MPI_2REAL:
    case MPI_COMPLEX: return alignof(float);
    case MPI_DOUBLE_PRECISION:
    case MPI_2DOUBLE_PRECISION:
    case MPI_DOUBLE_COMPLEX: return alignof(double);
    case MPI_INTEGER2: return alignof(int16_t);
    case MPI_INTEGER4:
    case MPI_REAL4:
    case MPI_COMPLEX8: return alignof(int32_t);
    case MPI_INTEGER8:
    case MPI_REAL8:
    case MPI_COMPLEX16: return alignof(int64_t);
    case MPI_INTEGER16: return alignof(max_align_t);
    case MPI_REAL16:
    case MPI_COMPLEX32: return alignof(long double);
    default: return 1;
    }
}

static void pre_init(void)
{
    if (g_pre_ready)
        return;
    for (int h = 1; h < NPRE; h++) {
        const bd_dtype_info_t *info = bd_dtype_info(h);
        if (!info)
            continue;
        bdl_dt_t *t = &g_pre[h];
        t->predefined = 1;
        t->committed = 1;
        t->refs = 1;
        t->combiner = MPI_COMBINER_NAMED;
        t->psize = info->size;
        t->size = info->size;
        t->extent = (MPI_Aint)(info->extent ? info->extent : info->size);
        t->true_extent = t->extent;
        t->align = pre_align(h);
        t->pre = t->pre1;
        t->pre1[0] = 0;
        t->pre1[1] = info->size;
        snprintf(t->name, sizeof t->name, "%s", info->name);
        if (info->cls == BD_DT_MARKER) {
            /* No data: only a bound, at displacement 0. */
            t->sticky = h == MPI_LB ? BDL_DT_EXPLICIT_LB : BDL_DT_EXPLICIT_UB;
            t->contig = 1;
            t->runs = &t->run1;
            continue;
        }
        t->nelem = 1;
        t->nbasic = info->cls == BD_DT_PAIR ? 2 : 1;
        t->basic = h;
        t->runs = &t->run1;
        t->nruns = 1;
        t->run1 = (bdl_run_t){0, info->size, 1, 0};
        if (info->cls == BD_DT_PAIR && info->ioff != info->vsize) {
            /* The index is apart from the value in a buffer: two blocks. */
            t->runs = t->run2;
            t->nruns = 2;
            t->run2[0] = (bdl_run_t){0, info->vsize, 1, 0};
            t->run2[1] = (bdl_run_t){info->ioff, info->size - info->vsize, 1, 0};
            t->pre = t->pre2;
            t->pre2[0] = 0;
            t->pre2[1] = info->vsize;
            t->pre2[2] = info->size;
        }
        const bdl_run_t *last = &t->runs[t->nruns - 1];
        t->true_extent = last->off + (int64_t)last->len;
        t->contig = t->nruns == 1 && (int64_t)info->size == t->extent;
    }
    g_pre_ready = 1;
}

/* ---------------------------------------------------------------- handles */

static bdl_dt_t *obj_of(MPI_Datatype h)
{
    pre_init();
    if (h > 0 && h < NPRE)
        return g_pre[h].predefined ? &g_pre[h] : NULL;
    if (h >= NPRE && h < g_nh && g_hst[h] == H_LIVE)
        return g_obj[h];
    return NULL;
}

bdl_dt_t *bdl_dt_lookup(MPI_Datatype dt) { return obj_of(dt); }

const bdl_dt_t *bdl_dt_byte(void)
{
    pre_init();
    return &g_pre[MPI_BYTE];
}

void bdl_dt_retain(bdl_dt_t *t)
{
    if (t && !t->predefined)
        t->refs++;
}

static void obj_destroy(bdl_dt_t *t);

void bdl_dt_release(bdl_dt_t *t)
{
    if (!t || t->predefined)
        return;
    if (--t->refs == 0)
        obj_destroy(t);
}

static void obj_destroy(bdl_dt_t *t)
{
    for (int i = 0; i < t->nd; i++)
        bdl_dt_release(t->types[i]);
    free(t->runs);
    free(t->pre);
    free(t->sig);
    free(t->ints);
    free(t->aints);
    free(t->types);
    free(t);
}

/* A new handle naming t (which gains a reference); -1 when out of memory. */
static int handle_new(bdl_dt_t *t)
{
    int h;
    if (g_nfreed) {
        h = g_freed[--g_nfreed];
    } else {
        if (g_next == INT_MAX)
            return -1;
        h = g_next;
        if (h >= g_nh) {
            int n = g_nh ? g_nh * 2 : 256;
            bdl_dt_t **o = realloc(g_obj, (size_t)n * sizeof *o);
            if (!o)
                return -1;
            g_obj = o;
            unsigned char *s = realloc(g_hst, (size_t)n);
            if (!s)
                return -1;
            g_hst = s;
            memset(g_obj + g_nh, 0, (size_t)(n - g_nh) * sizeof *o);
            memset(g_hst + g_nh, 0, (size_t)(n - g_nh));
            g_nh = n;
        }
        g_next++;
    }
    g_obj[h] = t;
    g_hst[h] = H_LIVE;
    bdl_dt_retain(t);
    return h;
}

static void handle_free(int h)
{
    bdl_dt_t *t = g_obj[h];
    g_obj[h] = NULL;
    g_hst[h] = H_FREED;
    if (g_nfreed == g_freedcap) {
        int n = g_freedcap ? g_freedcap * 2 : 256;
        int *f = realloc(g_freed, (size_t)n * sizeof *f);
        if (f) {
            g_freed = f;
            g_freedcap = n;
        }
    }
    if (g_nfreed < g_freedcap) /* else the handle is never reused */
        g_freed[g_nfreed++] = h;
    bdl_dt_release(t);
}

MPI_Datatype bdl_dt_alias(MPI_Datatype dt)
{
    bdl_dt_t *t = obj_of(dt);
    if (!t || t->predefined)
        return dt;
    int h = handle_new(t);
    return h < 0 ? MPI_DATATYPE_NULL : h;
}

void bdl_dt_alias_free(MPI_Datatype h)
{
    bdl_dt_t *t = obj_of(h);
    if (t && !t->predefined)
        handle_free(h);
}

/* Why dt is not a usable handle (for messages). */
static const char *bad_why(MPI_Datatype dt)
{
    if (dt == MPI_DATATYPE_NULL)
        return "is MPI_DATATYPE_NULL";
    if (dt >= NPRE && dt < g_nh && g_hst[dt] == H_FREED)
        return "has been freed";
    return "is not a datatype";
}

static int type_error(MPI_Comm comm, const char *call, const char *what, MPI_Datatype dt)
{
    return bdl_error(comm, MPI_ERR_TYPE, call, "%s%sdatatype %d %s", what, *what ? " " : "", dt,
                     bad_why(dt));
}

int bdl_dt_check(MPI_Comm comm, const char *call, const char *what, MPI_Datatype dt, bdl_dt_t **out)
{
    bdl_dt_t *t = obj_of(dt);
    if (!t)
        return type_error(comm, call, what, dt);
    if (!t->committed)
        return bdl_error(comm, MPI_ERR_TYPE, call,
                         "%s%sdatatype %d is not committed (call MPI_Type_commit first)", what,
                         *what ? " " : "", dt);
    *out = t;
    return MPI_SUCCESS;
}

/* Argument lookup for the datatype calls themselves (committed or not). */
static int get_arg(const char *call, const char *what, MPI_Datatype dt, bdl_dt_t **out)
{
    bdl_dt_t *t = obj_of(dt);
    if (!t)
        return type_error(MPI_COMM_WORLD, call, what, dt);
    *out = t;
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- building */

/* Bounds: lb/ub the lowest and highest of the parts' bounds (any: there is
 * a part), tlb/tub the data's. */
typedef struct builder {
    bdl_dt_t *t;
    int any, anydata;
    int64_t lb, ub, tlb, tub;
    uint32_t cap;
} builder_t;

static int b_init(builder_t *b, int combiner)
{
    memset(b, 0, sizeof *b);
    b->t = calloc(1, sizeof *b->t);
    if (!b->t)
        return -1;
    b->t->combiner = combiner;
    b->t->align = 1;
    return 0;
}

static int push_run(builder_t *b, int64_t off, uint64_t len, uint64_t cnt, int64_t stride)
{
    bdl_dt_t *t = b->t;
    if (!len || !cnt)
        return 0;
    if (cnt > 1 && stride == (int64_t)len) {
        len *= cnt;
        cnt = 1;
    }
    if (cnt == 1)
        stride = 0;
    if (t->nruns) {
        bdl_run_t *L = &t->runs[t->nruns - 1];
        if (L->cnt == 1 && cnt == 1 && L->off + (int64_t)L->len == off) {
            L->len += len;
            return 0;
        }
        if (L->len == len) {
            int64_t ls = L->cnt > 1 ? L->stride : (cnt > 1 ? stride : off - L->off);
            if (off == L->off + (int64_t)L->cnt * ls && (cnt == 1 || stride == ls)) {
                L->cnt += cnt;
                L->stride = ls;
                return 0;
            }
        }
    }
    if (t->nruns == b->cap) {
        uint32_t n = b->cap ? b->cap * 2 : 4;
        bdl_run_t *r = realloc(t->runs, (size_t)n * sizeof *r);
        if (!r)
            return -1;
        t->runs = r;
        b->cap = n;
    }
    t->runs[t->nruns++] = (bdl_run_t){off, len, cnt, stride};
    return 0;
}

/* Append k copies of c, the first at byte displacement d, the next ones
 * one extent of c apart. */
static int b_add(builder_t *b, const bdl_dt_t *c, int64_t d, uint64_t k)
{
    bdl_dt_t *t = b->t;
    if (!k)
        return 0;
    int64_t span = (int64_t)(k - 1) * c->extent;
    int64_t lo = d + (span < 0 ? span : 0), hi = d + (span > 0 ? span : 0);
    int64_t lb = lo + c->lb, ub = hi + c->lb + c->extent;
    /* A part's bounds are its explicit ones if it has them (which so stay
     * in effect through every constructor: "sticky"), else its data's. */
    if (!b->any || lb < b->lb)
        b->lb = lb;
    if (!b->any || ub > b->ub)
        b->ub = ub;
    b->any = 1;
    if (c->psize) {
        int64_t tlb = lo + c->true_lb, tub = hi + c->true_lb + c->true_extent;
        if (!b->anydata || tlb < b->tlb)
            b->tlb = tlb;
        if (!b->anydata || tub > b->tub)
            b->tub = tub;
        b->anydata = 1;
    }
    t->size += k * c->size;
    t->psize += k * c->psize;
    t->nelem += k * c->nelem;
    t->nbasic += k * c->nbasic;
    if (c->basic) {
        if (!t->basic)
            t->basic = c->basic;
        else if (t->basic != c->basic)
            t->basic = -1;
    }
    if (c->align > t->align)
        t->align = c->align;
    t->sticky |= c->sticky;
    if (!c->psize)
        return 0;
    if (c->contig)
        return push_run(b, d + c->runs[0].off, k * c->runs[0].len, 1, 0);
    for (uint64_t j = 0; j < k; j++) {
        int64_t base = d + (int64_t)j * c->extent;
        for (uint32_t i = 0; i < c->nruns; i++) {
            const bdl_run_t *r = &c->runs[i];
            if (push_run(b, base + r->off, r->len, r->cnt, r->stride) < 0)
                return -1;
        }
    }
    return 0;
}

/* Set both bounds explicitly (resized, subarray, darray: MPI 3.1 4.1.7). */
static void b_explicit(builder_t *b, int64_t lb, int64_t ub)
{
    b->lb = lb;
    b->ub = ub;
    b->t->sticky = BDL_DT_EXPLICIT_LB | BDL_DT_EXPLICIT_UB;
    b->any = 1;
}

/* Finish the descriptor: bounds, prefix sums, contiguity. */
static int b_finish(builder_t *b)
{
    bdl_dt_t *t = b->t;
    t->lb = b->lb;
    t->extent = b->ub - b->lb;
    t->true_lb = b->tlb;
    t->true_extent = b->tub - b->tlb;
    t->refs = 0;
    t->pre = malloc(((size_t)t->nruns + 1) * sizeof *t->pre);
    if (!t->pre)
        return -1;
    uint64_t s = 0;
    for (uint32_t i = 0; i < t->nruns; i++) {
        t->pre[i] = s;
        s += t->runs[i].len * t->runs[i].cnt;
    }
    t->pre[t->nruns] = s;
    t->contig =
        !t->psize || (t->nruns == 1 && t->runs[0].cnt == 1 && (int64_t)t->runs[0].len == t->extent);
    return 0;
}

static void b_abort(builder_t *b)
{
    if (b->t)
        obj_destroy(b->t);
    b->t = NULL;
}

/* Record Type_get_contents' arrays; types gain a reference each. */
static int b_contents(builder_t *b, int ni, const int *ints, int na, const MPI_Aint *aints, int nd,
                      bdl_dt_t *const *types)
{
    bdl_dt_t *t = b->t;
    t->ints = malloc((size_t)(ni ? ni : 1) * sizeof *t->ints);
    t->aints = malloc((size_t)(na ? na : 1) * sizeof *t->aints);
    t->types = malloc((size_t)(nd ? nd : 1) * sizeof *t->types);
    if (!t->ints || !t->aints || !t->types)
        return -1;
    if (ni)
        memcpy(t->ints, ints, (size_t)ni * sizeof *ints);
    if (na)
        memcpy(t->aints, aints, (size_t)na * sizeof *aints);
    for (int i = 0; i < nd; i++) {
        t->types[i] = types[i];
        bdl_dt_retain(types[i]);
    }
    t->ni = ni;
    t->na = na;
    t->nd = nd;
    return 0;
}

/* The type signature as (child, repetitions) in order (Get_elements). */
static int b_sig(builder_t *b, bdl_dt_t *c, uint64_t reps)
{
    bdl_dt_t *t = b->t;
    if (!reps || !c->psize)
        return 0;
    if (t->nsig && t->sig[t->nsig - 1].t == c) {
        t->sig[t->nsig - 1].reps += reps;
        return 0;
    }
    bdl_sig_t *s = realloc(t->sig, ((size_t)t->nsig + 1) * sizeof *s);
    if (!s)
        return -1;
    t->sig = s;
    t->sig[t->nsig++] = (bdl_sig_t){c, reps};
    return 0;
}

/* Hand the finished type to the program. */
static int b_publish(builder_t *b, const char *call, MPI_Datatype *newtype)
{
    if (b_finish(b) < 0) {
        b_abort(b);
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "out of memory");
    }
    int h = handle_new(b->t);
    if (h < 0) {
        b_abort(b);
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "out of datatype handles");
    }
    *newtype = h;
    return MPI_SUCCESS;
}

static int nomem(builder_t *b, const char *call)
{
    b_abort(b);
    return bdl_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "out of memory building a datatype");
}

#define CHECK_OUT(call, p)                                                                         \
    do {                                                                                           \
        if (!(p))                                                                                  \
            return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "NULL output argument");           \
    } while (0)

static int check_count(const char *call, const char *what, int n)
{
    if (n < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_COUNT, call, "invalid %s %d (must be >= 0)", what,
                         n);
    return MPI_SUCCESS;
}

static int check_blocks(const char *call, int count, const int *bl)
{
    if (count > 0 && !bl)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "NULL array of block lengths");
    for (int i = 0; i < count; i++)
        if (bl[i] < 0)
            return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                             "invalid block length %d at index %d (must be >= 0)", bl[i], i);
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- constructors */

int MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    const char *call = "MPI_Type_contiguous";
    bdl_dt_t *o = NULL;
    int rc;
    if ((rc = check_count(call, "count", count)) || (rc = get_arg(call, "old", oldtype, &o)))
        return rc;
    CHECK_OUT(call, newtype);
    builder_t b;
    if (b_init(&b, MPI_COMBINER_CONTIGUOUS) < 0 || b_add(&b, o, 0, (uint64_t)count) < 0 ||
        b_sig(&b, o, (uint64_t)count) < 0 || b_contents(&b, 1, &count, 0, NULL, 1, &o) < 0)
        return nomem(&b, call);
    return b_publish(&b, call, newtype);
}

static int vector(const char *call, int combiner, int count, int blocklength, MPI_Aint stride,
                  int stride_in_elems, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    bdl_dt_t *o = NULL;
    int rc;
    if ((rc = check_count(call, "count", count)) || (rc = get_arg(call, "old", oldtype, &o)))
        return rc;
    if (blocklength < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                         "invalid block length %d (must be >= 0)", blocklength);
    CHECK_OUT(call, newtype);
    int64_t bstride = stride_in_elems ? (int64_t)stride * o->extent : (int64_t)stride;
    builder_t b;
    if (b_init(&b, combiner) < 0)
        return nomem(&b, call);
    for (int i = 0; i < count; i++)
        if (b_add(&b, o, (int64_t)i * bstride, (uint64_t)blocklength) < 0)
            return nomem(&b, call);
    int ints[3] = {count, blocklength, (int)stride};
    if (b_sig(&b, o, (uint64_t)count * (uint64_t)blocklength) < 0 ||
        (stride_in_elems ? b_contents(&b, 3, ints, 0, NULL, 1, &o)
                         : b_contents(&b, 2, ints, 1, &stride, 1, &o)) < 0)
        return nomem(&b, call);
    return b_publish(&b, call, newtype);
}

int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                    MPI_Datatype *newtype)
{
    return vector("MPI_Type_vector", MPI_COMBINER_VECTOR, count, blocklength, stride, 1, oldtype,
                  newtype);
}

int MPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                            MPI_Datatype *newtype)
{
    return vector("MPI_Type_create_hvector", MPI_COMBINER_HVECTOR, count, blocklength, stride, 0,
                  oldtype, newtype);
}

int MPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                     MPI_Datatype *newtype)
{
    return vector("MPI_Type_hvector", MPI_COMBINER_HVECTOR, count, blocklength, stride, 0, oldtype,
                  newtype);
}

/* indexed family.  bl: per-block lengths (NULL: all `block`); idisp: int
 * displacements in extents of old, or adisp: byte displacements. */
static int indexed(const char *call, int combiner, int count, const int *bl, int block,
                   const int *idisp, const MPI_Aint *adisp, MPI_Datatype oldtype,
                   MPI_Datatype *newtype)
{
    bdl_dt_t *o = NULL;
    int rc;
    if ((rc = check_count(call, "count", count)) || (rc = get_arg(call, "old", oldtype, &o)))
        return rc;
    if (bl && (rc = check_blocks(call, count, bl)))
        return rc;
    if (!bl && block < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                         "invalid block length %d (must be >= 0)", block);
    if (count > 0 && !idisp && !adisp)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "NULL array of displacements");
    CHECK_OUT(call, newtype);
    builder_t b;
    if (b_init(&b, combiner) < 0)
        return nomem(&b, call);
    uint64_t total = 0;
    for (int i = 0; i < count; i++) {
        int k = bl ? bl[i] : block;
        int64_t d = idisp ? (int64_t)idisp[i] * o->extent : (int64_t)adisp[i];
        if (b_add(&b, o, d, (uint64_t)k) < 0)
            return nomem(&b, call);
        total += (uint64_t)k;
    }
    if (b_sig(&b, o, total) < 0)
        return nomem(&b, call);
    /* Type_get_contents layout (MPI 3.1 4.1.13). */
    int ni = 1 + (bl ? count : 1) + (idisp ? count : 0);
    int *ints = malloc((size_t)ni * sizeof *ints);
    if (!ints)
        return nomem(&b, call);
    int p = 0;
    ints[p++] = count;
    if (bl)
        for (int i = 0; i < count; i++)
            ints[p++] = bl[i];
    else
        ints[p++] = block;
    if (idisp)
        for (int i = 0; i < count; i++)
            ints[p++] = idisp[i];
    rc = b_contents(&b, ni, ints, idisp ? 0 : count, adisp, 1, &o);
    free(ints);
    if (rc < 0)
        return nomem(&b, call);
    return b_publish(&b, call, newtype);
}

int MPI_Type_indexed(int count, const int array_of_blocklengths[],
                     const int array_of_displacements[], MPI_Datatype oldtype,
                     MPI_Datatype *newtype)
{
    return indexed("MPI_Type_indexed", MPI_COMBINER_INDEXED, count, array_of_blocklengths, 0,
                   array_of_displacements, NULL, oldtype, newtype);
}

int MPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                             const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                             MPI_Datatype *newtype)
{
    return indexed("MPI_Type_create_hindexed", MPI_COMBINER_HINDEXED, count, array_of_blocklengths,
                   0, NULL, array_of_displacements, oldtype, newtype);
}

int MPI_Type_hindexed(int count, const int array_of_blocklengths[],
                      const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
{
    return indexed("MPI_Type_hindexed", MPI_COMBINER_HINDEXED, count, array_of_blocklengths, 0,
                   NULL, array_of_displacements, oldtype, newtype);
}

int MPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                  MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return indexed("MPI_Type_create_indexed_block", MPI_COMBINER_INDEXED_BLOCK, count, NULL,
                   blocklength, array_of_displacements, NULL, oldtype, newtype);
}

int MPI_Type_create_hindexed_block(int count, int blocklength,
                                   const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                   MPI_Datatype *newtype)
{
    return indexed("MPI_Type_create_hindexed_block", MPI_COMBINER_HINDEXED_BLOCK, count, NULL,
                   blocklength, NULL, array_of_displacements, oldtype, newtype);
}

static int type_struct(const char *call, int count, const int bl[], const MPI_Aint disp[],
                       const MPI_Datatype types[], MPI_Datatype *newtype)
{
    int rc;
    if ((rc = check_count(call, "count", count)) || (rc = check_blocks(call, count, bl)))
        return rc;
    if (count > 0 && (!disp || !types))
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                         "NULL array of displacements or datatypes");
    CHECK_OUT(call, newtype);
    bdl_dt_t **objs = malloc((size_t)(count ? count : 1) * sizeof *objs);
    if (!objs)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "out of memory");
    for (int i = 0; i < count; i++) {
        objs[i] = obj_of(types[i]);
        if (!objs[i]) {
            free(objs);
            return bdl_error(MPI_COMM_WORLD, MPI_ERR_TYPE, call, "datatype %d at index %d %s",
                             types[i], i, bad_why(types[i]));
        }
    }
    builder_t b;
    if (b_init(&b, MPI_COMBINER_STRUCT) < 0)
        goto oom;
    /* MPI_LB and MPI_UB entries set the bounds: the lowest MPI_LB and the
     * highest MPI_UB win over every other part's (MPI 2.2 4.1.6), whatever
     * their block length.  loose: a part without an explicit upper bound. */
    int has_lb = 0, has_ub = 0, loose = 0;
    int64_t mlb = 0, mub = 0;
    for (int i = 0; i < count; i++) {
        if (types[i] == MPI_LB || types[i] == MPI_UB) {
            int64_t d = (int64_t)disp[i];
            if (types[i] == MPI_LB && (!has_lb || d < mlb))
                mlb = d, has_lb = 1;
            if (types[i] == MPI_UB && (!has_ub || d > mub))
                mub = d, has_ub = 1;
            continue;
        }
        if (bl[i] > 0 && !(objs[i]->sticky & BDL_DT_EXPLICIT_UB))
            loose = 1;
        if (b_add(&b, objs[i], (int64_t)disp[i], (uint64_t)bl[i]) < 0 ||
            b_sig(&b, objs[i], (uint64_t)bl[i]) < 0)
            goto oom;
    }
    int *ints = malloc(((size_t)count + 1) * sizeof *ints);
    if (!ints)
        goto oom;
    ints[0] = count;
    if (count)
        memcpy(ints + 1, bl, (size_t)count * sizeof *bl);
    rc = b_contents(&b, count + 1, ints, count, disp, count, objs);
    free(ints);
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
    return b_publish(&b, call, newtype);
oom:
    free(objs);
    return nomem(&b, call);
}

int MPI_Type_create_struct(int count, const int array_of_blocklengths[],
                           const MPI_Aint array_of_displacements[],
                           const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    return type_struct("MPI_Type_create_struct", count, array_of_blocklengths,
                       array_of_displacements, array_of_types, newtype);
}

int MPI_Type_struct(int count, const int array_of_blocklengths[],
                    const MPI_Aint array_of_displacements[], const MPI_Datatype array_of_types[],
                    MPI_Datatype *newtype)
{
    return type_struct("MPI_Type_struct", count, array_of_blocklengths, array_of_displacements,
                       array_of_types, newtype);
}

int MPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                             const int array_of_starts[], int order, MPI_Datatype oldtype,
                             MPI_Datatype *newtype)
{
    const char *call = "MPI_Type_create_subarray";
    bdl_dt_t *o = NULL;
    int rc;
    if ((rc = get_arg(call, "old", oldtype, &o)))
        return rc;
    if (ndims <= 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "invalid ndims %d (must be > 0)",
                         ndims);
    if (!array_of_sizes || !array_of_subsizes || !array_of_starts)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "NULL array argument");
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                         "invalid order %d (MPI_ORDER_C or MPI_ORDER_FORTRAN)", order);
    for (int i = 0; i < ndims; i++) {
        int sz = array_of_sizes[i], sub = array_of_subsizes[i], st = array_of_starts[i];
        if (sz <= 0 || sub <= 0 || sub > sz || st < 0 || st > sz - sub)
            return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                             "dimension %d: size %d, subsize %d, start %d do not describe a "
                             "subarray (need 0 < subsize <= size, 0 <= start <= size - subsize)",
                             i, sz, sub, st);
    }
    CHECK_OUT(call, newtype);
    /* Dimensions from the slowest to the fastest varying. */
    int *dim = malloc((size_t)ndims * sizeof *dim);
    int64_t *stride = malloc((size_t)ndims * sizeof *stride);
    uint64_t *idx = calloc((size_t)ndims, sizeof *idx);
    builder_t b;
    memset(&b, 0, sizeof b);
    if (!dim || !stride || !idx || b_init(&b, MPI_COMBINER_SUBARRAY) < 0)
        goto oom;
    for (int i = 0; i < ndims; i++)
        dim[i] = order == MPI_ORDER_C ? i : ndims - 1 - i;
    int64_t s = o->extent;
    for (int i = ndims - 1; i >= 0; i--) {
        stride[i] = s;
        s *= array_of_sizes[dim[i]];
    }
    int64_t full = s;
    uint64_t total = 1;
    for (int i = 0; i < ndims; i++)
        total *= (uint64_t)array_of_subsizes[i];
    int inner = dim[ndims - 1];
    uint64_t rows = total / (uint64_t)array_of_subsizes[inner];
    for (uint64_t r = 0; r < rows; r++) {
        int64_t d = 0;
        for (int i = 0; i < ndims; i++)
            d += (int64_t)(array_of_starts[dim[i]] + (int64_t)idx[i]) * stride[i];
        if (b_add(&b, o, d, (uint64_t)array_of_subsizes[inner]) < 0)
            goto oom;
        for (int i = ndims - 2; i >= 0; i--) {
            if (++idx[i] < (uint64_t)array_of_subsizes[dim[i]])
                break;
            idx[i] = 0;
        }
    }
    if (b_sig(&b, o, total) < 0)
        goto oom;
    int *ints = malloc(((size_t)ndims * 3 + 2) * sizeof *ints);
    if (!ints)
        goto oom;
    ints[0] = ndims;
    for (int i = 0; i < ndims; i++) {
        ints[1 + i] = array_of_sizes[i];
        ints[1 + ndims + i] = array_of_subsizes[i];
        ints[1 + 2 * ndims + i] = array_of_starts[i];
    }
    ints[1 + 3 * ndims] = order;
    rc = b_contents(&b, 3 * ndims + 2, ints, 0, NULL, 1, &o);
    free(ints);
    if (rc < 0)
        goto oom;
    free(dim);
    free(stride);
    free(idx);
    /* The subarray's extent is the whole array's (MPI 3.1 4.1.3). */
    b_explicit(&b, 0, full);
    return b_publish(&b, call, newtype);
oom:
    free(dim);
    free(stride);
    free(idx);
    return nomem(&b, call);
}

/* The global indices one process owns in one dimension of a distributed
 * array, as runs [start, start + len) in increasing order (MPI 3.1 4.1.4):
 * p is the process's coordinate among P, g the global size. */
static int darray_runs(int g, int distrib, int darg, int P, int p, int64_t **start, int64_t **len,
                       int64_t *nruns)
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
        int64_t b = darg == MPI_DISTRIBUTE_DFLT_DARG ? ((int64_t)g + P - 1) / P : darg;
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

int MPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
                           const int array_of_distribs[], const int array_of_dargs[],
                           const int array_of_psizes[], int order, MPI_Datatype oldtype,
                           MPI_Datatype *newtype)
{
    const char *call = "MPI_Type_create_darray";
    bdl_dt_t *o = NULL;
    int rc;
    if ((rc = get_arg(call, "old", oldtype, &o)))
        return rc;
    if (size <= 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "invalid size %d (must be > 0)", size);
    if (rank < 0 || rank >= size)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "invalid rank %d (size %d)", rank,
                         size);
    if (ndims <= 0 || ndims > 1024)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "invalid ndims %d (1..1024)", ndims);
    if (!array_of_gsizes || !array_of_distribs || !array_of_dargs || !array_of_psizes)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "NULL array argument");
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                         "invalid order %d (MPI_ORDER_C or MPI_ORDER_FORTRAN)", order);
    long long nprocs = 1;
    for (int i = 0; i < ndims; i++) {
        int g = array_of_gsizes[i], P = array_of_psizes[i], dist = array_of_distribs[i];
        int darg = array_of_dargs[i];
        if (g <= 0 || P <= 0)
            return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                             "dimension %d: gsize %d and psize %d must be > 0", i, g, P);
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
            (long long)darg * P < g)
            return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                             "dimension %d: %d blocks of %d cannot hold gsize %d", i, P, darg, g);
        nprocs *= P;
        if (nprocs > size)
            break;
    }
    if (nprocs != size)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                         "the process grid (psizes) does not have size = %d processes", size);
    CHECK_OUT(call, newtype);
    /* This process's coordinates: the process grid is row-major whatever
     * the array's order. */
    int coords[ndims];
    for (int i = ndims - 1, r = rank; i >= 0; i--) {
        coords[i] = r % array_of_psizes[i];
        r /= array_of_psizes[i];
    }
    /* Dimensions from the slowest to the fastest varying in memory. */
    int dim[ndims];
    int64_t stride[ndims], *rs[ndims], *rl[ndims], nr[ndims], ri[ndims], off[ndims];
    builder_t b;
    memset(&b, 0, sizeof b);
    memset(rs, 0, sizeof rs);
    memset(rl, 0, sizeof rl);
    int ok = b_init(&b, MPI_COMBINER_DARRAY) == 0;
    for (int i = 0; i < ndims; i++)
        dim[i] = order == MPI_ORDER_C ? i : ndims - 1 - i;
    int64_t sz = o->extent;
    for (int i = ndims - 1; i >= 0; i--) {
        stride[i] = sz;
        sz *= array_of_gsizes[dim[i]];
    }
    int64_t full = sz;
    uint64_t total = 1;
    for (int i = 0; i < ndims && ok; i++) {
        int d = dim[i];
        ok = darray_runs(array_of_gsizes[d], array_of_distribs[d], array_of_dargs[d],
                         array_of_psizes[d], coords[d], &rs[i], &rl[i], &nr[i]) == 0;
        uint64_t cnt = 0;
        for (int64_t j = 0; ok && j < nr[i]; j++)
            cnt += (uint64_t)rl[i][j];
        total *= cnt;
    }
    /* Odometer over the outer dimensions' indices (run ri[i], offset
     * off[i] in it); the innermost dimension adds its runs as blocks. */
    if (ok && total) {
        for (int i = 0; i < ndims; i++)
            ri[i] = off[i] = 0;
        int last = ndims - 1;
        for (;;) {
            int64_t base = 0;
            for (int i = 0; i < last; i++)
                base += (rs[i][ri[i]] + off[i]) * stride[i];
            for (int64_t j = 0; ok && j < nr[last]; j++)
                ok = b_add(&b, o, base + rs[last][j] * stride[last], (uint64_t)rl[last][j]) == 0;
            int i = last - 1;
            for (; i >= 0; i--) {
                if (++off[i] < rl[i][ri[i]])
                    break;
                off[i] = 0;
                if (++ri[i] < nr[i])
                    break;
                ri[i] = 0;
            }
            if (i < 0 || !ok)
                break;
        }
    }
    for (int i = 0; i < ndims; i++) {
        free(rs[i]);
        free(rl[i]);
    }
    if (!ok || b_sig(&b, o, total) < 0)
        return nomem(&b, call);
    int *ints = malloc(((size_t)ndims * 4 + 4) * sizeof *ints);
    if (!ints)
        return nomem(&b, call);
    ints[0] = size;
    ints[1] = rank;
    ints[2] = ndims;
    for (int i = 0; i < ndims; i++) {
        ints[3 + i] = array_of_gsizes[i];
        ints[3 + ndims + i] = array_of_distribs[i];
        ints[3 + 2 * ndims + i] = array_of_dargs[i];
        ints[3 + 3 * ndims + i] = array_of_psizes[i];
    }
    ints[3 + 4 * ndims] = order;
    rc = b_contents(&b, 4 * ndims + 4, ints, 0, NULL, 1, &o);
    free(ints);
    if (rc < 0)
        return nomem(&b, call);
    /* Like a subarray, the extent is the whole global array's. */
    b_explicit(&b, 0, full);
    return b_publish(&b, call, newtype);
}

int MPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                            MPI_Datatype *newtype)
{
    const char *call = "MPI_Type_create_resized";
    bdl_dt_t *o = NULL;
    int rc;
    if ((rc = get_arg(call, "old", oldtype, &o)))
        return rc;
    CHECK_OUT(call, newtype);
    builder_t b;
    MPI_Aint a[2] = {lb, extent};
    if (b_init(&b, MPI_COMBINER_RESIZED) < 0 || b_add(&b, o, 0, 1) < 0 || b_sig(&b, o, 1) < 0 ||
        b_contents(&b, 0, NULL, 2, a, 1, &o) < 0)
        return nomem(&b, call);
    b_explicit(&b, lb, lb + extent);
    return b_publish(&b, call, newtype);
}

int MPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    const char *call = "MPI_Type_dup";
    bdl_dt_t *o = NULL;
    int rc;
    if ((rc = get_arg(call, "old", oldtype, &o)))
        return rc;
    CHECK_OUT(call, newtype);
    builder_t b;
    if (b_init(&b, MPI_COMBINER_DUP) < 0 || b_add(&b, o, 0, 1) < 0 || b_sig(&b, o, 1) < 0 ||
        b_contents(&b, 0, NULL, 0, NULL, 1, &o) < 0)
        return nomem(&b, call);
    b.t->committed = o->committed;
    if ((rc = b_publish(&b, call, newtype)))
        return rc;
    /* Attributes go through their copy callbacks (typeattr.c). */
    if ((rc = bdl_type_attr_copy_all(oldtype, *newtype, call))) {
        bdl_type_attr_drop(*newtype);
        handle_free(*newtype);
        *newtype = MPI_DATATYPE_NULL;
        return rc;
    }
    return MPI_SUCCESS;
}

int MPI_Type_commit(MPI_Datatype *datatype)
{
    bdl_dt_t *t = NULL;
    int rc;
    if (!datatype)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Type_commit", "NULL datatype pointer");
    if ((rc = get_arg("MPI_Type_commit", "", *datatype, &t)))
        return rc;
    t->committed = 1;
    return MPI_SUCCESS;
}

int MPI_Type_free(MPI_Datatype *datatype)
{
    const char *call = "MPI_Type_free";
    bdl_dt_t *t = NULL;
    int rc;
    if (!datatype)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "NULL datatype pointer");
    if ((rc = get_arg(call, "", *datatype, &t)))
        return rc;
    if (t->predefined)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_TYPE, call,
                         "datatype %d (%s) is predefined and cannot be freed", *datatype, t->name);
    /* Attributes go through their delete callbacks first (typeattr.c). */
    if ((rc = bdl_type_attr_delete_all(*datatype, call)))
        return rc;
    handle_free(*datatype);
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- queries */

int MPI_Type_size(MPI_Datatype datatype, int *size)
{
    bdl_dt_t *t = NULL;
    int rc;
    if ((rc = get_arg("MPI_Type_size", "", datatype, &t)))
        return rc;
    CHECK_OUT("MPI_Type_size", size);
    *size = t->size > INT_MAX ? MPI_UNDEFINED : (int)t->size;
    return MPI_SUCCESS;
}

int MPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
    bdl_dt_t *t = NULL;
    int rc;
    if ((rc = get_arg("MPI_Type_size_x", "", datatype, &t)))
        return rc;
    CHECK_OUT("MPI_Type_size_x", size);
    *size = (MPI_Count)t->size;
    return MPI_SUCCESS;
}

int MPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    bdl_dt_t *t = NULL;
    int rc;
    if ((rc = get_arg("MPI_Type_get_extent", "", datatype, &t)))
        return rc;
    CHECK_OUT("MPI_Type_get_extent", lb && extent);
    *lb = t->lb;
    *extent = t->extent;
    return MPI_SUCCESS;
}

int MPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    MPI_Aint l, e;
    int rc = MPI_Type_get_extent(datatype, &l, &e);
    if (rc)
        return rc;
    CHECK_OUT("MPI_Type_get_extent_x", lb && extent);
    *lb = l;
    *extent = e;
    return MPI_SUCCESS;
}

int MPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent)
{
    bdl_dt_t *t = NULL;
    int rc;
    if ((rc = get_arg("MPI_Type_get_true_extent", "", datatype, &t)))
        return rc;
    CHECK_OUT("MPI_Type_get_true_extent", true_lb && true_extent);
    *true_lb = t->true_lb;
    *true_extent = t->true_extent;
    return MPI_SUCCESS;
}

int MPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent)
{
    MPI_Aint l, e;
    int rc = MPI_Type_get_true_extent(datatype, &l, &e);
    if (rc)
        return rc;
    CHECK_OUT("MPI_Type_get_true_extent_x", true_lb && true_extent);
    *true_lb = l;
    *true_extent = e;
    return MPI_SUCCESS;
}

int MPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent)
{
    MPI_Aint lb;
    return MPI_Type_get_extent(datatype, &lb, extent);
}

int MPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement)
{
    MPI_Aint ext;
    return MPI_Type_get_extent(datatype, displacement, &ext);
}

int MPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement)
{
    MPI_Aint lb, ext;
    int rc = MPI_Type_get_extent(datatype, &lb, &ext);
    if (rc == MPI_SUCCESS)
        *displacement = lb + ext;
    return rc;
}

int MPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses,
                          int *num_datatypes, int *combiner)
{
    bdl_dt_t *t = NULL;
    int rc;
    if ((rc = get_arg("MPI_Type_get_envelope", "", datatype, &t)))
        return rc;
    CHECK_OUT("MPI_Type_get_envelope", num_integers && num_addresses && num_datatypes && combiner);
    *num_integers = t->ni;
    *num_addresses = t->na;
    *num_datatypes = t->nd;
    *combiner = t->combiner;
    return MPI_SUCCESS;
}

int MPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                          int max_datatypes, int array_of_integers[], MPI_Aint array_of_addresses[],
                          MPI_Datatype array_of_datatypes[])
{
    const char *call = "MPI_Type_get_contents";
    bdl_dt_t *t = NULL;
    int rc;
    if ((rc = get_arg(call, "", datatype, &t)))
        return rc;
    if (t->predefined)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                         "datatype %d (%s) is predefined: it has no contents", datatype, t->name);
    if (max_integers < t->ni || max_addresses < t->na || max_datatypes < t->nd)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                         "arrays too small: need %d integers, %d addresses, %d datatypes", t->ni,
                         t->na, t->nd);
    if (t->ni)
        memcpy(array_of_integers, t->ints, (size_t)t->ni * sizeof *t->ints);
    if (t->na)
        memcpy(array_of_addresses, t->aints, (size_t)t->na * sizeof *t->aints);
    /* Derived types come back as new handles the program frees (4.1.13). */
    for (int i = 0; i < t->nd; i++) {
        bdl_dt_t *c = t->types[i];
        if (c->predefined) {
            array_of_datatypes[i] = (MPI_Datatype)(c - g_pre);
        } else {
            int h = handle_new(c);
            if (h < 0) {
                while (i-- > 0)
                    if (!t->types[i]->predefined)
                        handle_free(array_of_datatypes[i]);
                return bdl_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "out of datatype handles");
            }
            array_of_datatypes[i] = h;
        }
    }
    return MPI_SUCCESS;
}

int MPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
    bdl_dt_t *t = NULL;
    int rc;
    if ((rc = get_arg("MPI_Type_get_name", "", datatype, &t)))
        return rc;
    CHECK_OUT("MPI_Type_get_name", type_name && resultlen);
    snprintf(type_name, MPI_MAX_OBJECT_NAME, "%s", t->name);
    *resultlen = (int)strlen(type_name);
    return MPI_SUCCESS;
}

int MPI_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
    bdl_dt_t *t = NULL;
    int rc;
    if ((rc = get_arg("MPI_Type_set_name", "", datatype, &t)))
        return rc;
    CHECK_OUT("MPI_Type_set_name", type_name);
    snprintf(t->name, sizeof t->name, "%s", type_name);
    return MPI_SUCCESS;
}

int MPI_Get_address(const void *location, MPI_Aint *address)
{
    CHECK_OUT("MPI_Get_address", address);
    *address = (MPI_Aint)(intptr_t)location;
    return MPI_SUCCESS;
}

int MPI_Address(void *location, MPI_Aint *address) { return MPI_Get_address(location, address); }

MPI_Aint MPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}

MPI_Aint MPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}

/* ---------------------------------------------------------------- elements */

/* Basic elements wholly inside the first `bytes` of the packed stream of t;
 * *partial is set when the prefix ends inside a basic element. */
static uint64_t elems_in(const bdl_dt_t *t, uint64_t bytes, int *partial)
{
    if (!t->psize)
        return 0;
    uint64_t n = bytes / t->psize * t->nbasic, rem = bytes % t->psize;
    if (!rem)
        return n;
    if (t->predefined) {
        /* A pair's value is a whole basic element by itself. */
        const bd_dtype_info_t *info = bd_dtype_info(t->basic);
        if (info && info->cls == BD_DT_PAIR && rem >= info->vsize) {
            n++;
            rem -= info->vsize;
        }
        if (rem)
            *partial = 1;
        return n;
    }
    for (uint32_t i = 0; i < t->nsig && rem; i++) {
        const bdl_sig_t *s = &t->sig[i];
        uint64_t sb = s->reps * s->t->psize;
        if (rem >= sb) {
            n += s->reps * s->t->nbasic;
            rem -= sb;
            continue;
        }
        return n + elems_in(s->t, rem, partial);
    }
    return n;
}

/* Packed bytes of the first e basic elements of a stream of t. */
static uint64_t bytes_of(const bdl_dt_t *t, uint64_t e)
{
    if (!t->nbasic)
        return 0;
    uint64_t b = e / t->nbasic * t->psize, rem = e % t->nbasic;
    if (t->predefined && rem) /* the value of a pair */
        return b + bd_dtype_info(t->basic)->vsize;
    for (uint32_t i = 0; i < t->nsig && rem; i++) {
        const bdl_sig_t *s = &t->sig[i];
        uint64_t se = s->reps * s->t->nbasic;
        if (rem >= se) {
            b += s->reps * s->t->psize;
            rem -= se;
            continue;
        }
        return b + bytes_of(s->t, rem);
    }
    return b;
}

static int status_arg(const char *call, const MPI_Status *status)
{
    if (!status || status == MPI_STATUS_IGNORE)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "invalid status argument");
    return MPI_SUCCESS;
}

static int get_count(const char *call, const MPI_Status *status, MPI_Datatype datatype,
                     MPI_Count *count)
{
    bdl_dt_t *t = NULL;
    int rc;
    if ((rc = status_arg(call, status)) || (rc = get_arg(call, "", datatype, &t)))
        return rc;
    long long n = status->bd_nbytes;
    if (!t->psize)
        *count = n ? MPI_UNDEFINED : 0;
    else
        *count = (uint64_t)n % t->psize ? MPI_UNDEFINED : (MPI_Count)((uint64_t)n / t->psize);
    return MPI_SUCCESS;
}

int MPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    MPI_Count n;
    int rc = get_count("MPI_Get_count", status, datatype, &n);
    if (rc)
        return rc;
    *count = n > INT_MAX ? MPI_UNDEFINED : (int)n;
    return MPI_SUCCESS;
}

static int get_elements(const char *call, const MPI_Status *status, MPI_Datatype datatype,
                        MPI_Count *count)
{
    bdl_dt_t *t = NULL;
    int rc;
    if ((rc = status_arg(call, status)) || (rc = get_arg(call, "", datatype, &t)))
        return rc;
    int partial = 0;
    uint64_t n = elems_in(t, (uint64_t)status->bd_nbytes, &partial);
    if (!t->psize && status->bd_nbytes)
        partial = 1;
    *count = partial ? MPI_UNDEFINED : (MPI_Count)n;
    return MPI_SUCCESS;
}

int MPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    MPI_Count n;
    int rc = get_elements("MPI_Get_elements", status, datatype, &n);
    if (rc)
        return rc;
    *count = n > INT_MAX ? MPI_UNDEFINED : (int)n;
    return MPI_SUCCESS;
}

int MPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    return get_elements("MPI_Get_elements_x", status, datatype, count);
}

static int set_elements(const char *call, MPI_Status *status, MPI_Datatype datatype,
                        MPI_Count count)
{
    bdl_dt_t *t = NULL;
    int rc;
    if ((rc = status_arg(call, status)) || (rc = get_arg(call, "", datatype, &t)))
        return rc;
    if (count < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_COUNT, call, "invalid count %lld", count);
    status->bd_nbytes = (long long)bytes_of(t, (uint64_t)count);
    return MPI_SUCCESS;
}

int MPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count)
{
    return set_elements("MPI_Status_set_elements", status, datatype, count);
}

int MPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    return set_elements("MPI_Status_set_elements_x", status, datatype, count);
}

/* ---------------------------------------------------------------- pack engine */

static inline char *addr(const void *buf, int64_t off)
{
    return (char *)((intptr_t)buf + (intptr_t)off);
}

char *bdl_dt_contig(const bdl_dt_t *t, const void *buf, uint64_t count)
{
    if (!t->psize)
        return (char *)buf;
    if (t->nruns == 1 && t->runs[0].cnt == 1 && (count <= 1 || t->contig))
        return addr(buf, t->runs[0].off);
    return NULL;
}

/* Move bytes [off, off+len) of the packed stream of count elements of t
 * at buf from (to_stream) or to (!to_stream) stream. */
static void xfer(const bdl_dt_t *t, const void *buf, uint64_t count, uint64_t off, char *stream,
                 uint64_t len, int to_stream)
{
    if (!len)
        return;
    char *c = bdl_dt_contig(t, buf, count);
    if (c) {
        if (to_stream)
            memcpy(stream, c + off, len);
        else
            memcpy(c + off, stream, len);
        return;
    }
    uint64_t e = off / t->psize, r = off % t->psize;
    uint32_t lo = 0, hi = t->nruns - 1; /* last run with pre <= r */
    while (lo < hi) {
        uint32_t mid = (lo + hi + 1) / 2;
        if (t->pre[mid] <= r)
            lo = mid;
        else
            hi = mid - 1;
    }
    uint32_t i = lo;
    uint64_t within = r - t->pre[i];
    uint64_t b = within / t->runs[i].len, bo = within % t->runs[i].len;
    while (len) {
        const bdl_run_t *R = &t->runs[i];
        int64_t base = (int64_t)e * t->extent + R->off;
        for (; b < R->cnt && len; b++) {
            uint64_t n = R->len - bo;
            if (n > len)
                n = len;
            char *p = addr(buf, base + (int64_t)b * R->stride + (int64_t)bo);
            if (to_stream)
                memcpy(stream, p, n);
            else
                memcpy(p, stream, n);
            stream += n;
            len -= n;
            bo = 0;
        }
        if (b == R->cnt) {
            b = 0;
            if (++i == t->nruns) {
                i = 0;
                e++;
            }
        }
    }
}

void bdl_dt_pack(const bdl_dt_t *t, const void *buf, uint64_t count, uint64_t off, void *out,
                 uint64_t len)
{
    xfer(t, buf, count, off, out, len, 1);
}

void bdl_dt_unpack(const bdl_dt_t *t, void *buf, uint64_t count, uint64_t off, const void *in,
                   uint64_t len)
{
    xfer(t, buf, count, off, (char *)in, len, 0);
}

void bdl_dt_copy(const bdl_dt_t *st, const void *sbuf, uint64_t scount, const bdl_dt_t *rt,
                 void *rbuf, uint64_t rcount, uint64_t nbytes)
{
    if (!nbytes)
        return;
    char *s = bdl_dt_contig(st, sbuf, scount), *r = bdl_dt_contig(rt, rbuf, rcount);
    if (s && r) {
        memmove(r, s, nbytes);
        return;
    }
    if (s) {
        bdl_dt_unpack(rt, rbuf, rcount, 0, s, nbytes);
        return;
    }
    if (r) {
        bdl_dt_pack(st, sbuf, scount, 0, r, nbytes);
        return;
    }
    char tmp[16384];
    for (uint64_t off = 0; off < nbytes;) {
        uint64_t n = nbytes - off < sizeof tmp ? nbytes - off : sizeof tmp;
        bdl_dt_pack(st, sbuf, scount, off, tmp, n);
        bdl_dt_unpack(rt, rbuf, rcount, off, tmp, n);
        off += n;
    }
}

void *bdl_dt_alloc(const bdl_dt_t *t, uint64_t count, void **base)
{
    int64_t span = count ? (int64_t)(count - 1) * t->extent : 0;
    int64_t lo = t->true_lb + (span < 0 ? span : 0);
    int64_t hi = t->true_lb + t->true_extent + (span > 0 ? span : 0);
    uint64_t n = hi > lo ? (uint64_t)(hi - lo) : 0;
    void *mem = calloc(1, n + 1);
    if (!mem)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory allocating %llu bytes for %llu elements",
                  (unsigned long long)n, (unsigned long long)count);
    *base = addr(mem, -lo);
    return mem;
}

/* ---------------------------------------------------------------- MPI_Pack */

static int pack_args(const char *call, int count, MPI_Datatype dt, int size, const int *position,
                     MPI_Comm comm, bdl_dt_t **t)
{
    int rc;
    if (!bdl_comm_get(comm))
        return bdl_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);
    if (count < 0)
        return bdl_error(comm, MPI_ERR_COUNT, call, "invalid count %d", count);
    if (size < 0)
        return bdl_error(comm, MPI_ERR_ARG, call, "invalid buffer size %d", size);
    if (!position || *position < 0)
        return bdl_error(comm, MPI_ERR_ARG, call, "invalid position %d", position ? *position : 0);
    if ((rc = bdl_dt_check(comm, call, "", dt, t)))
        return rc;
    return MPI_SUCCESS;
}

int MPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize,
             int *position, MPI_Comm comm)
{
    BDL_CHECK_INIT("MPI_Pack");
    bdl_dt_t *t = NULL;
    int rc = pack_args("MPI_Pack", incount, datatype, outsize, position, comm, &t);
    if (rc)
        return rc;
    uint64_t n = (uint64_t)incount * t->psize;
    if ((uint64_t)*position + n > (uint64_t)outsize)
        return bdl_error(comm, MPI_ERR_TRUNCATE, "MPI_Pack",
                         "%llu packed bytes do not fit at position %d of a %d-byte buffer",
                         (unsigned long long)n, *position, outsize);
    bdl_dt_pack(t, inbuf, (uint64_t)incount, 0, addr(outbuf, *position), n);
    *position += (int)n;
    return MPI_SUCCESS;
}

int MPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
               MPI_Datatype datatype, MPI_Comm comm)
{
    BDL_CHECK_INIT("MPI_Unpack");
    bdl_dt_t *t = NULL;
    int rc = pack_args("MPI_Unpack", outcount, datatype, insize, position, comm, &t);
    if (rc)
        return rc;
    uint64_t n = (uint64_t)outcount * t->psize;
    if ((uint64_t)*position + n > (uint64_t)insize)
        return bdl_error(comm, MPI_ERR_TRUNCATE, "MPI_Unpack",
                         "%d elements need %llu packed bytes but only %lld remain after position "
                         "%d of the %d-byte buffer",
                         outcount, (unsigned long long)n, (long long)insize - *position, *position,
                         insize);
    bdl_dt_unpack(t, outbuf, (uint64_t)outcount, 0, addr(inbuf, *position), n);
    *position += (int)n;
    return MPI_SUCCESS;
}

int MPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    BDL_CHECK_INIT("MPI_Pack_size");
    bdl_dt_t *t = NULL;
    if (!bdl_comm_get(comm))
        return bdl_error(comm, MPI_ERR_COMM, "MPI_Pack_size", "invalid communicator %d", comm);
    if (incount < 0)
        return bdl_error(comm, MPI_ERR_COUNT, "MPI_Pack_size", "invalid count %d", incount);
    if (!(t = obj_of(datatype)))
        return type_error(comm, "MPI_Pack_size", "", datatype);
    CHECK_OUT("MPI_Pack_size", size);
    uint64_t n = (uint64_t)incount * t->psize;
    if (n > INT_MAX)
        return bdl_error(comm, MPI_ERR_COUNT, "MPI_Pack_size",
                         "%d elements pack into %llu bytes, more than an int can count", incount,
                         (unsigned long long)n);
    *size = (int)n;
    return MPI_SUCCESS;
}
