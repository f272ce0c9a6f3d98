/* The datatype engine (MPI 3.1 chapter 4), bottom room: descriptors, handles,
 * the builder the constructors use and the pack engine.  The MPI_Type_*
 * calls, MPI_Pack and MPI_Get_count/elements are in objects/type_*.c.
 *
 * Every datatype handle, predefined or derived, names a descriptor
 * (bdl_dt_t, dt.h).  A descriptor describes one element as a list of runs
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "bd_dtype.h"
#include "core.h"
#include "dt.h"

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

MPI_Datatype bdl_dt_predefined_handle(const bdl_dt_t *t) { return (MPI_Datatype)(t - g_pre); }

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
    free(t->counts);
    free(t->types);
    free(t);
}

int bdl_dt_handle_new(bdl_dt_t *t)
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

void bdl_dt_handle_free(MPI_Datatype h)
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
    int h = bdl_dt_handle_new(t);
    return h < 0 ? MPI_DATATYPE_NULL : h;
}

void bdl_dt_alias_free(MPI_Datatype h)
{
    bdl_dt_t *t = obj_of(h);
    if (t && !t->predefined)
        bdl_dt_handle_free(h);
}

const char *bdl_dt_bad_why(MPI_Datatype dt)
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
                     bdl_dt_bad_why(dt));
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

int bdl_dt_check_count(MPI_Comm comm, const char *call, const char *what, MPI_Datatype dt,
                       int64_t count, bdl_dt_t **out)
{
    if (dt == MPI_DATATYPE_NULL && count == 0) {
        pre_init();
        *out = &g_pre[MPI_BYTE];
        return MPI_SUCCESS;
    }
    return bdl_dt_check(comm, call, what, dt, out);
}

int bdl_dt_arg(MPI_Comm comm, const char *call, const char *what, MPI_Datatype dt, bdl_dt_t **out)
{
    bdl_dt_t *t = obj_of(dt);
    if (!t)
        return type_error(comm, call, what, dt);
    *out = t;
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- building */

int bdl_dt_build_init(bdl_dt_builder_t *b, int combiner)
{
    memset(b, 0, sizeof *b);
    b->t = calloc(1, sizeof *b->t);
    if (!b->t)
        return -1;
    b->t->combiner = combiner;
    b->t->align = 1;
    return 0;
}

static int push_run(bdl_dt_builder_t *b, int64_t off, uint64_t len, uint64_t cnt, int64_t stride)
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

/* The bounds of k copies of c from d; the sizes of k copies. */
static void add_bounds(bdl_dt_builder_t *b, const bdl_dt_t *c, int64_t d, uint64_t k)
{
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
}

static void add_sizes(bdl_dt_builder_t *b, const bdl_dt_t *c, uint64_t k)
{
    bdl_dt_t *t = b->t;
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
}

/* Append k copies of c, the first at byte displacement d, the next ones
 * one extent of c apart. */
int bdl_dt_build_add(bdl_dt_builder_t *b, const bdl_dt_t *c, int64_t d, uint64_t k)
{
    if (!k)
        return 0;
    add_bounds(b, c, d, k);
    add_sizes(b, c, k);
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

int bdl_dt_build_add_strided(bdl_dt_builder_t *b, const bdl_dt_t *c, int64_t d, uint64_t k,
                             uint64_t n, int64_t stride)
{
    if (!n || !k)
        return 0;
    if (!c->contig || n < 2) {
        for (uint64_t i = 0; i < n; i++)
            if (bdl_dt_build_add(b, c, d + (int64_t)i * stride, k) < 0)
                return -1;
        return 0;
    }
    /* The groups lie on a line: the first and the last bound them all. */
    add_bounds(b, c, d, k);
    add_bounds(b, c, d + (int64_t)(n - 1) * stride, k);
    add_sizes(b, c, k * n);
    if (!c->psize)
        return 0;
    return push_run(b, d + c->runs[0].off, k * c->runs[0].len, n, stride);
}

int bdl_dt_set_counts(bdl_dt_t *t, int ni, const int *ints, int nc, const MPI_Count *counts)
{
    int *iv = malloc((size_t)(ni ? ni : 1) * sizeof *iv);
    MPI_Count *cv = malloc((size_t)(nc ? nc : 1) * sizeof *cv);
    if (!iv || !cv) {
        free(iv);
        free(cv);
        return -1;
    }
    if (ni)
        memcpy(iv, ints, (size_t)ni * sizeof *iv);
    if (nc)
        memcpy(cv, counts, (size_t)nc * sizeof *cv);
    free(t->ints);
    free(t->counts);
    t->ints = iv;
    t->ni = ni;
    t->counts = cv;
    t->nc = nc;
    t->na = 0;
    return 0;
}

/* Set both bounds explicitly (resized, subarray, darray: MPI 3.1 4.1.7). */
void bdl_dt_build_explicit(bdl_dt_builder_t *b, int64_t lb, int64_t ub)
{
    b->lb = lb;
    b->ub = ub;
    b->t->sticky = BDL_DT_EXPLICIT_LB | BDL_DT_EXPLICIT_UB;
    b->any = 1;
}

/* Finish the descriptor: bounds, prefix sums, contiguity. */
static int b_finish(bdl_dt_builder_t *b)
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

void bdl_dt_build_abort(bdl_dt_builder_t *b)
{
    if (b->t)
        obj_destroy(b->t);
    b->t = NULL;
}

/* Record Type_get_contents' arrays; types gain a reference each. */
int bdl_dt_build_contents(bdl_dt_builder_t *b, int ni, const int *ints, int na,
                          const MPI_Aint *aints, int nd, bdl_dt_t *const *types)
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
int bdl_dt_build_sig(bdl_dt_builder_t *b, bdl_dt_t *c, uint64_t reps)
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
int bdl_dt_build_publish(bdl_dt_builder_t *b, const char *call, MPI_Datatype *newtype)
{
    if (b_finish(b) < 0) {
        bdl_dt_build_abort(b);
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "out of memory");
    }
    int h = bdl_dt_handle_new(b->t);
    if (h < 0) {
        bdl_dt_build_abort(b);
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "out of datatype handles");
    }
    *newtype = h;
    return MPI_SUCCESS;
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
