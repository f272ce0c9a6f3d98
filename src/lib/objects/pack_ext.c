/* Portable packing (MPI 3.1 4.3, 13.5.2): MPI_Pack_external,
 * MPI_Unpack_external, MPI_Pack_external_size with the "external32"
 * representation, and MPI_Type_match_size.
 *
 * external32 is big-endian, IEEE floating point (long double as the 16-byte
 * binary128), with the sizes of MPI 3.1 Table 13.2: C long and wchar_t take
 * 4 and 2 bytes whatever their native size.  A buffer is first packed into
 * the native packed stream (core/dtype.c) and then converted element by element,
 * following the type signature; unpacking does the reverse. */
#include <float.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "dt.h"
#include "nbc.h"
#include "objects.h"
#include "request.h"

enum { K_NONE, K_SINT, K_UINT, K_FLOAT, K_LDOUBLE, K_INT128 };

/* One basic component: native bytes, external32 bytes, kind. */
typedef struct {
    uint8_t n, x, kind;
} comp_t;

/* The components of a predefined type (a pair type has two: value, int). */
static int components(int h, comp_t c[2])
{
    switch (h) {
    case MPI_CHAR:
    case MPI_SIGNED_CHAR:
    case MPI_INT8_T:
    case MPI_INTEGER1: c[0] = (comp_t){1, 1, K_SINT}; return 1;
    case MPI_UNSIGNED_CHAR:
    case MPI_BYTE:
    case MPI_UINT8_T:
    case MPI_PACKED:
    case MPI_C_BOOL:
    case MPI_CXX_BOOL:
    case MPI_CHARACTER: c[0] = (comp_t){1, 1, K_UINT}; return 1;
    case MPI_WCHAR: c[0] = (comp_t){sizeof(wchar_t), 2, K_UINT}; return 1;
    case MPI_SHORT:
    case MPI_INT16_T:
    case MPI_INTEGER2: c[0] = (comp_t){2, 2, K_SINT}; return 1;
    case MPI_UNSIGNED_SHORT:
    case MPI_UINT16_T: c[0] = (comp_t){2, 2, K_UINT}; return 1;
    case MPI_INT:
    case MPI_INT32_T:
    case MPI_INTEGER:
    case MPI_INTEGER4:
    case MPI_LOGICAL: c[0] = (comp_t){4, 4, K_SINT}; return 1;
    case MPI_UNSIGNED:
    case MPI_UINT32_T: c[0] = (comp_t){4, 4, K_UINT}; return 1;
    case MPI_LONG: c[0] = (comp_t){sizeof(long), 4, K_SINT}; return 1;
    case MPI_UNSIGNED_LONG: c[0] = (comp_t){sizeof(long), 4, K_UINT}; return 1;
    case MPI_LONG_LONG_INT:
    case MPI_INT64_T:
    case MPI_AINT:
    case MPI_OFFSET:
    case MPI_COUNT:
    case MPI_INTEGER8: c[0] = (comp_t){8, 8, K_SINT}; return 1;
    case MPI_UNSIGNED_LONG_LONG:
    case MPI_UINT64_T: c[0] = (comp_t){8, 8, K_UINT}; return 1;
    case MPI_INTEGER16: c[0] = (comp_t){16, 16, K_INT128}; return 1;
    case MPI_FLOAT:
    case MPI_REAL:
    case MPI_REAL4: c[0] = (comp_t){4, 4, K_FLOAT}; return 1;
    case MPI_C_FLOAT_COMPLEX:
    case MPI_CXX_FLOAT_COMPLEX:
    case MPI_COMPLEX:
    case MPI_COMPLEX8: c[0] = (comp_t){4, 4, K_FLOAT}; return -2;
    case MPI_DOUBLE:
    case MPI_DOUBLE_PRECISION:
    case MPI_REAL8: c[0] = (comp_t){8, 8, K_FLOAT}; return 1;
    case MPI_C_DOUBLE_COMPLEX:
    case MPI_CXX_DOUBLE_COMPLEX:
    case MPI_DOUBLE_COMPLEX:
    case MPI_COMPLEX16: c[0] = (comp_t){8, 8, K_FLOAT}; return -2;
    case MPI_LONG_DOUBLE:
    case MPI_REAL16: c[0] = (comp_t){sizeof(long double), 16, K_LDOUBLE}; return 1;
    case MPI_C_LONG_DOUBLE_COMPLEX:
    case MPI_CXX_LONG_DOUBLE_COMPLEX:
    case MPI_COMPLEX32: c[0] = (comp_t){sizeof(long double), 16, K_LDOUBLE}; return -2;
    case MPI_FLOAT_INT: c[0] = (comp_t){4, 4, K_FLOAT}; break;
    case MPI_DOUBLE_INT: c[0] = (comp_t){8, 8, K_FLOAT}; break;
    case MPI_LONG_INT: c[0] = (comp_t){sizeof(long), 4, K_SINT}; break;
    case MPI_2INT:
    case MPI_2INTEGER: c[0] = (comp_t){4, 4, K_SINT}; break;
    case MPI_SHORT_INT: c[0] = (comp_t){2, 2, K_SINT}; break;
    case MPI_LONG_DOUBLE_INT: c[0] = (comp_t){sizeof(long double), 16, K_LDOUBLE}; break;
    case MPI_2REAL:
    case MPI_2DOUBLE_PRECISION:
        c[0] = c[1] = h == MPI_2REAL ? (comp_t){4, 4, K_FLOAT} : (comp_t){8, 8, K_FLOAT};
        return 2;
    default: return 0;
    }
    c[1] = (comp_t){4, 4, K_SINT}; /* the int of a pair */
    return 2;
}

/* external32 bytes of one element of predefined type h. */
static uint64_t ext_size_pre(int h)
{
    comp_t c[2];
    int n = components(h, c);
    if (n == 1)
        return c[0].x;
    if (n == -2) /* complex: two of the component */
        return 2u * c[0].x;
    if (n == 2)
        return c[0].x + c[1].x;
    return 0;
}

static uint64_t ext_size(const bdl_dt_t *t)
{
    if (t->basic > 0)
        return t->nelem * ext_size_pre(t->basic);
    uint64_t s = 0;
    for (uint32_t i = 0; i < t->nsig; i++)
        s += t->sig[i].reps * ext_size(t->sig[i].t);
    return s;
}

/* ---------------------------------------------------------------- scalar conversions */

static void put_be(unsigned char *p, uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--, v >>= 8)
        p[i] = (unsigned char)v;
}

static uint64_t get_be(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

static uint64_t get_native(const unsigned char *p, int n)
{
    uint64_t v = 0;
    memcpy(&v, p, (size_t)n); /* little-endian hosts: the low n bytes */
    return v;
}

static void put_native(unsigned char *p, uint64_t v, int n) { memcpy(p, &v, (size_t)n); }

/* Native long double <-> IEEE binary128 (hi, lo 64-bit halves). */
static void ld_to_quad(const unsigned char *p, uint64_t *hi, uint64_t *lo)
{
#if LDBL_MANT_DIG == 64
    uint64_t mant;
    uint16_t se;
    memcpy(&mant, p, 8);
    memcpy(&se, p + 8, 2);
    uint64_t m63 = mant & 0x7fffffffffffffffULL;
    *hi = (uint64_t)se << 48 | m63 >> 15;
    *lo = m63 << 49;
#elif LDBL_MANT_DIG == 113
    memcpy(lo, p, 8);
    memcpy(hi, p + 8, 8);
#else
    long double v;
    memcpy(&v, p, sizeof v);
    double d = (double)v;
    uint64_t b;
    memcpy(&b, &d, 8);
    uint64_t sign = b >> 63, e = b >> 52 & 0x7ff, f = b & 0xfffffffffffffULL;
    uint64_t qe = e == 0 ? 0 : e == 0x7ff ? 0x7fff : e - 1023 + 16383;
    *hi = sign << 63 | qe << 48 | f >> 4;
    *lo = f << 60;
#endif
}

static void quad_to_ld(uint64_t hi, uint64_t lo, unsigned char *p)
{
#if LDBL_MANT_DIG == 64
    uint16_t se = (uint16_t)(hi >> 48);
    uint64_t m63 = (hi & 0xffffffffffffULL) << 15 | lo >> 49;
    uint64_t mant = ((se & 0x7fff) != 0 ? 1ULL << 63 : 0) | m63;
    memset(p, 0, sizeof(long double));
    memcpy(p, &mant, 8);
    memcpy(p + 8, &se, 2);
#elif LDBL_MANT_DIG == 113
    memcpy(p, &lo, 8);
    memcpy(p + 8, &hi, 8);
#else
    uint64_t sign = hi >> 63, qe = hi >> 48 & 0x7fff, f = (hi & 0xffffffffffffULL) << 4 | lo >> 60;
    uint64_t e;
    if (qe == 0)
        e = 0, f = 0;
    else if (qe == 0x7fff)
        e = 0x7ff;
    else if ((int64_t)qe - 16383 + 1023 >= 0x7ff)
        e = 0x7ff, f = 0;
    else if ((int64_t)qe - 16383 + 1023 <= 0)
        e = 0, f = 0;
    else
        e = qe - 16383 + 1023;
    uint64_t b = sign << 63 | e << 52 | f;
    double d;
    memcpy(&d, &b, 8);
    long double v = d;
    memcpy(p, &v, sizeof v);
#endif
}

/* Convert one component: native bytes at nat <-> external32 bytes at ext. */
static void conv(const comp_t *c, unsigned char *nat, unsigned char *ext, int to_ext)
{
    if (c->kind == K_INT128) { /* little-endian native: reverse the bytes */
        unsigned char *from = to_ext ? nat : ext, *to = to_ext ? ext : nat;
        for (int i = 0; i < 16; i++)
            to[i] = from[15 - i];
        return;
    }
    if (c->kind == K_LDOUBLE) {
        uint64_t hi, lo;
        if (to_ext) {
            ld_to_quad(nat, &hi, &lo);
            put_be(ext, hi, 8);
            put_be(ext + 8, lo, 8);
        } else {
            quad_to_ld(get_be(ext, 8), get_be(ext + 8, 8), nat);
        }
        return;
    }
    if (to_ext) {
        put_be(ext, get_native(nat, c->n), c->x);
        return;
    }
    uint64_t v = get_be(ext, c->x);
    if (c->kind == K_SINT && c->x < 8 && c->n > c->x && (v >> (8 * c->x - 1) & 1))
        v |= ~0ULL << (8 * c->x); /* sign-extend a narrower external integer */
    put_native(nat, v, c->n);
}

/* Convert count elements of predefined type h between the native stream at
 * *nat and the external stream at *ext, advancing both. */
static void conv_pre(int h, uint64_t count, unsigned char **nat, unsigned char **ext, int to_ext)
{
    comp_t c[2];
    int n = components(h, c);
    uint64_t psize = bdl_dt_lookup(h)->psize;
    for (uint64_t k = 0; k < count; k++) {
        unsigned char *p = *nat, *x = *ext;
        if (n == 1) {
            conv(&c[0], p, x, to_ext);
            x += c[0].x;
        } else if (n == -2) {
            conv(&c[0], p, x, to_ext);
            conv(&c[0], p + psize / 2, x + c[0].x, to_ext);
            x += 2u * c[0].x;
        } else if (n == 2) {
            /* in the packed stream the index of a pair follows the value */
            conv(&c[0], p, x, to_ext);
            conv(&c[1], p + c[0].n, x + c[0].x, to_ext);
            x += c[0].x + c[1].x;
        }
        *nat = p + psize;
        *ext = x;
    }
}

static void conv_type(const bdl_dt_t *t, uint64_t count, unsigned char **nat, unsigned char **ext,
                      int to_ext)
{
    if (t->basic > 0) {
        conv_pre(t->basic, count * t->nelem, nat, ext, to_ext);
        return;
    }
    for (uint64_t k = 0; k < count; k++)
        for (uint32_t i = 0; i < t->nsig; i++)
            conv_type(t->sig[i].t, t->sig[i].reps, nat, ext, to_ext);
}

uint64_t bdl_dt_ext_size(const bdl_dt_t *t) { return ext_size(t); }

void bdl_dt_ext_convert(const bdl_dt_t *t, uint64_t count, void *nat, void *ext, int to_ext)
{
    unsigned char *n = nat, *e = ext;
    conv_type(t, count, &n, &e, to_ext);
}

/* ---------------------------------------------------------------- the calls */

static int check_rep(const char *call, const char *datarep)
{
    if (!datarep || strcmp(datarep, "external32"))
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                         "unsupported data representation \"%s\" (only \"external32\")",
                         datarep ? datarep : "(null)");
    return MPI_SUCCESS;
}

static int check_args(const char *call, const char *datarep, int count, MPI_Datatype dt,
                      bdl_dt_t **t)
{
    BDL_CHECK_INIT(call);
    int rc;
    if ((rc = check_rep(call, datarep)))
        return rc;
    if (count < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_COUNT, call, "invalid count %d", count);
    return bdl_dt_check(MPI_COMM_WORLD, call, "", dt, t);
}

int MPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype, MPI_Aint *size)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Pack_external_size";
    bdl_dt_t *t;
    int rc = check_args(call, datarep, incount, datatype, &t);
    if (rc)
        return rc;
    if (!size)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "size is NULL");
    *size = (MPI_Aint)((uint64_t)incount * ext_size(t));
    return MPI_SUCCESS;
}

int MPI_Pack_external(const char datarep[], const void *inbuf, int incount, MPI_Datatype datatype,
                      void *outbuf, MPI_Aint outsize, MPI_Aint *position)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Pack_external";
    bdl_dt_t *t;
    int rc = check_args(call, datarep, incount, datatype, &t);
    if (rc)
        return rc;
    if (!position || *position < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "invalid position");
    uint64_t need = (uint64_t)incount * ext_size(t);
    if (outsize < *position || (uint64_t)(outsize - *position) < need)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_TRUNCATE, call,
                         "%llu bytes do not fit in the %lld left of the output buffer",
                         (unsigned long long)need, (long long)(outsize - *position));
    if (need && !outbuf)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_BUFFER, call, "outbuf is NULL");
    uint64_t n = (uint64_t)incount * t->psize;
    unsigned char *tmp = malloc(n ? n : 1);
    if (!tmp)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "out of memory");
    bdl_dt_pack(t, inbuf, (uint64_t)incount, 0, tmp, n);
    unsigned char *nat = tmp, *ext = (unsigned char *)outbuf + *position;
    conv_type(t, (uint64_t)incount, &nat, &ext, 1);
    free(tmp);
    *position += (MPI_Aint)need;
    return MPI_SUCCESS;
}

int MPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize,
                        MPI_Aint *position, void *outbuf, int outcount, MPI_Datatype datatype)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Unpack_external";
    bdl_dt_t *t;
    int rc = check_args(call, datarep, outcount, datatype, &t);
    if (rc)
        return rc;
    if (!position || *position < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "invalid position");
    uint64_t need = (uint64_t)outcount * ext_size(t);
    if (insize < *position || (uint64_t)(insize - *position) < need)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_TRUNCATE, call,
                         "%llu bytes wanted but only %lld left in the input buffer",
                         (unsigned long long)need, (long long)(insize - *position));
    if (need && !inbuf)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_BUFFER, call, "inbuf is NULL");
    uint64_t n = (uint64_t)outcount * t->psize;
    unsigned char *tmp = calloc(1, n ? n : 1);
    if (!tmp)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "out of memory");
    unsigned char *nat = tmp, *ext = (unsigned char *)inbuf + *position;
    conv_type(t, (uint64_t)outcount, &nat, &ext, 0);
    bdl_dt_unpack(t, outbuf, (uint64_t)outcount, 0, tmp, n);
    free(tmp);
    *position += (MPI_Aint)need;
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- MPI_Type_match_size */

int MPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Type_match_size";
    BDL_CHECK_INIT(call);
    if (!datatype)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "datatype is NULL");
    static const MPI_Datatype reals[] = {MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE};
    /* (MPI_INTEGER16, __int128, is the only predefined integer of 16 bytes.) */
    static const MPI_Datatype ints[] = {MPI_SIGNED_CHAR, MPI_SHORT,     MPI_INT,
                                        MPI_LONG,        MPI_LONG_LONG, MPI_INTEGER16};
    static const MPI_Datatype cplx[] = {MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX,
                                        MPI_C_LONG_DOUBLE_COMPLEX};
    const MPI_Datatype *list;
    int n;
    const char *cls;
    switch (typeclass) {
    case MPI_TYPECLASS_REAL: list = reals, n = 3, cls = "MPI_TYPECLASS_REAL"; break;
    case MPI_TYPECLASS_INTEGER: list = ints, n = 6, cls = "MPI_TYPECLASS_INTEGER"; break;
    case MPI_TYPECLASS_COMPLEX: list = cplx, n = 3, cls = "MPI_TYPECLASS_COMPLEX"; break;
    default: return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "invalid typeclass %d", typeclass);
    }
    for (int i = 0; i < n; i++) {
        int sz;
        MPI_Type_size(list[i], &sz);
        if (sz == size) {
            *datatype = list[i];
            return MPI_SUCCESS;
        }
    }
    return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "no %s type of %d bytes", cls, size);
}
