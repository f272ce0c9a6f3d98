#include "bd_dtype.h"

#include <complex.h>
#include <stdbool.h>
#include <string.h>
#include <wchar.h>

#include "mpi.h"

typedef struct {
    float v;
    int i;
} pair_float_t;
typedef struct {
    double v;
    int i;
} pair_double_t;
typedef struct {
    long v;
    int i;
} pair_long_t;
typedef struct {
    int v;
    int i;
} pair_int_t;
typedef struct {
    short v;
    int i;
} pair_short_t;
typedef struct {
    long double v;
    int i;
} pair_ldouble_t;
typedef struct {
    float v, i;
} pair_real_t;
typedef struct {
    double v, i;
} pair_dprec_t;
__extension__ typedef __int128 bd_int128_t;

#define T(h, sz, c) [h] = {.name = #h, .size = (sz), .cls = (c)}
/* A pair type: value type V, index type I, in-buffer layout struct P. */
#define P(h, P, V, I)                                                                              \
    [h] = {.name = #h,                                                                             \
           .size = sizeof(V) + sizeof(I),                                                          \
           .cls = BD_DT_PAIR,                                                                      \
           .extent = sizeof(P),                                                                    \
           .vsize = sizeof(V),                                                                     \
           .ioff = offsetof(P, i)}

static const bd_dtype_info_t g_types[BDMPI_DATATYPE_PREDEFINED_MAX + 1] = {
    T(MPI_CHAR, sizeof(char), BD_DT_INT),
    T(MPI_SIGNED_CHAR, sizeof(signed char), BD_DT_INT),
    T(MPI_UNSIGNED_CHAR, sizeof(unsigned char), BD_DT_INT),
    T(MPI_BYTE, 1, BD_DT_BYTE),
    T(MPI_WCHAR, sizeof(wchar_t), BD_DT_INT),
    T(MPI_SHORT, sizeof(short), BD_DT_INT),
    T(MPI_UNSIGNED_SHORT, sizeof(unsigned short), BD_DT_INT),
    T(MPI_INT, sizeof(int), BD_DT_INT),
    T(MPI_UNSIGNED, sizeof(unsigned), BD_DT_INT),
    T(MPI_LONG, sizeof(long), BD_DT_INT),
    T(MPI_UNSIGNED_LONG, sizeof(unsigned long), BD_DT_INT),
    T(MPI_LONG_LONG_INT, sizeof(long long), BD_DT_INT),
    T(MPI_UNSIGNED_LONG_LONG, sizeof(unsigned long long), BD_DT_INT),
    T(MPI_FLOAT, sizeof(float), BD_DT_FLOAT),
    T(MPI_DOUBLE, sizeof(double), BD_DT_FLOAT),
    T(MPI_LONG_DOUBLE, sizeof(long double), BD_DT_FLOAT),
    T(MPI_INT8_T, 1, BD_DT_INT),
    T(MPI_INT16_T, 2, BD_DT_INT),
    T(MPI_INT32_T, 4, BD_DT_INT),
    T(MPI_INT64_T, 8, BD_DT_INT),
    T(MPI_UINT8_T, 1, BD_DT_INT),
    T(MPI_UINT16_T, 2, BD_DT_INT),
    T(MPI_UINT32_T, 4, BD_DT_INT),
    T(MPI_UINT64_T, 8, BD_DT_INT),
    T(MPI_C_BOOL, sizeof(bool), BD_DT_BOOL),
    [MPI_C_FLOAT_COMPLEX] = {.name = "MPI_C_COMPLEX",
                             .size = sizeof(float complex),
                             .cls = BD_DT_COMPLEX},
    T(MPI_C_DOUBLE_COMPLEX, sizeof(double complex), BD_DT_COMPLEX),
    T(MPI_C_LONG_DOUBLE_COMPLEX, sizeof(long double complex), BD_DT_COMPLEX),
    T(MPI_AINT, sizeof(MPI_Aint), BD_DT_INT),
    T(MPI_OFFSET, sizeof(MPI_Offset), BD_DT_INT),
    T(MPI_COUNT, sizeof(MPI_Count), BD_DT_INT),
    T(MPI_PACKED, 1, BD_DT_PACKED),
    P(MPI_FLOAT_INT, pair_float_t, float, int),
    P(MPI_DOUBLE_INT, pair_double_t, double, int),
    P(MPI_LONG_INT, pair_long_t, long, int),
    P(MPI_2INT, pair_int_t, int, int),
    P(MPI_SHORT_INT, pair_short_t, short, int),
    P(MPI_LONG_DOUBLE_INT, pair_ldouble_t, long double, int),
    T(MPI_CXX_BOOL, sizeof(bool), BD_DT_BOOL),
    T(MPI_CXX_FLOAT_COMPLEX, sizeof(float complex), BD_DT_COMPLEX),
    T(MPI_CXX_DOUBLE_COMPLEX, sizeof(double complex), BD_DT_COMPLEX),
    T(MPI_CXX_LONG_DOUBLE_COMPLEX, sizeof(long double complex), BD_DT_COMPLEX),
    T(MPI_LB, 0, BD_DT_MARKER),
    T(MPI_UB, 0, BD_DT_MARKER),
    T(MPI_CHARACTER, 1, BD_DT_CHARACTER),
    T(MPI_LOGICAL, sizeof(int), BD_DT_BOOL),
    T(MPI_INTEGER, sizeof(int), BD_DT_INT),
    T(MPI_REAL, sizeof(float), BD_DT_FLOAT),
    T(MPI_DOUBLE_PRECISION, sizeof(double), BD_DT_FLOAT),
    T(MPI_COMPLEX, sizeof(float complex), BD_DT_COMPLEX),
    T(MPI_DOUBLE_COMPLEX, sizeof(double complex), BD_DT_COMPLEX),
    P(MPI_2INTEGER, pair_int_t, int, int),
    P(MPI_2REAL, pair_real_t, float, float),
    P(MPI_2DOUBLE_PRECISION, pair_dprec_t, double, double),
    T(MPI_INTEGER1, 1, BD_DT_INT),
    T(MPI_INTEGER2, 2, BD_DT_INT),
    T(MPI_INTEGER4, 4, BD_DT_INT),
    T(MPI_INTEGER8, 8, BD_DT_INT),
    T(MPI_INTEGER16, 16, BD_DT_INT),
    T(MPI_REAL4, 4, BD_DT_FLOAT),
    T(MPI_REAL8, 8, BD_DT_FLOAT),
    T(MPI_REAL16, sizeof(long double), BD_DT_FLOAT),
    T(MPI_COMPLEX8, sizeof(float complex), BD_DT_COMPLEX),
    T(MPI_COMPLEX16, sizeof(double complex), BD_DT_COMPLEX),
    T(MPI_COMPLEX32, sizeof(long double complex), BD_DT_COMPLEX),
};
#undef T
#undef P

static const char *const g_op_names[BDMPI_OP_PREDEFINED_MAX + 1] = {
    [MPI_MAX] = "MPI_MAX",         [MPI_MIN] = "MPI_MIN",       [MPI_SUM] = "MPI_SUM",
    [MPI_PROD] = "MPI_PROD",       [MPI_LAND] = "MPI_LAND",     [MPI_BAND] = "MPI_BAND",
    [MPI_LOR] = "MPI_LOR",         [MPI_BOR] = "MPI_BOR",       [MPI_LXOR] = "MPI_LXOR",
    [MPI_BXOR] = "MPI_BXOR",       [MPI_MINLOC] = "MPI_MINLOC", [MPI_MAXLOC] = "MPI_MAXLOC",
    [MPI_REPLACE] = "MPI_REPLACE", [MPI_NO_OP] = "MPI_NO_OP",
};

const bd_dtype_info_t *bd_dtype_info(int dtype)
{
    if (dtype <= 0 || dtype > BDMPI_DATATYPE_PREDEFINED_MAX || !g_types[dtype].name)
        return NULL;
    return &g_types[dtype];
}

const char *bd_op_name(int op)
{
    if (op <= 0 || op > BDMPI_OP_PREDEFINED_MAX)
        return "user-defined op";
    return g_op_names[op];
}

int bd_op_valid_for(int op, int dtype)
{
    const bd_dtype_info_t *t = bd_dtype_info(dtype);
    if (!t)
        return 0;
    switch (op) {
    case MPI_MAX:
    case MPI_MIN: return t->cls == BD_DT_INT || t->cls == BD_DT_FLOAT;
    case MPI_SUM:
    case MPI_PROD: return t->cls == BD_DT_INT || t->cls == BD_DT_FLOAT || t->cls == BD_DT_COMPLEX;
    case MPI_LAND:
    case MPI_LOR:
    case MPI_LXOR:
        /* Floating types too: the standard lists only integers and logicals,
         * but MPICH (and programs written for it, such as its own oplxor
         * test) takes reals as truth values, nonzero being true. */
        return t->cls == BD_DT_INT || t->cls == BD_DT_BOOL || t->cls == BD_DT_FLOAT;
    case MPI_BAND:
    case MPI_BOR:
    case MPI_BXOR: return t->cls == BD_DT_INT || t->cls == BD_DT_BYTE;
    case MPI_MINLOC:
    case MPI_MAXLOC: return t->cls == BD_DT_PAIR;
    default: return 0;
    }
}

#define LOOP(T, EXPR)                                                                              \
    do {                                                                                           \
        const T *a = (const T *)in;                                                                \
        T *b = (T *)inout;                                                                         \
        for (size_t i = 0; i < count; i++)                                                         \
            b[i] = (T)(EXPR);                                                                      \
    } while (0)

/* a[i] is the incoming operand, b[i] the accumulated one. */
#define ARITH(T)                                                                                   \
    switch (op) {                                                                                  \
    case MPI_MAX: LOOP(T, a[i] > b[i] ? a[i] : b[i]); return;                                      \
    case MPI_MIN: LOOP(T, a[i] < b[i] ? a[i] : b[i]); return;                                      \
    case MPI_SUM: LOOP(T, a[i] + b[i]); return;                                                    \
    case MPI_PROD: LOOP(T, a[i] * b[i]); return;                                                   \
    }
#define LOGIC(T)                                                                                   \
    switch (op) {                                                                                  \
    case MPI_LAND: LOOP(T, (a[i] != 0) && (b[i] != 0)); return;                                    \
    case MPI_LOR: LOOP(T, (a[i] != 0) || (b[i] != 0)); return;                                     \
    case MPI_LXOR: LOOP(T, (a[i] != 0) != (b[i] != 0)); return;                                    \
    }
#define BITS(T)                                                                                    \
    switch (op) {                                                                                  \
    case MPI_BAND: LOOP(T, a[i] & b[i]); return;                                                   \
    case MPI_BOR: LOOP(T, a[i] | b[i]); return;                                                    \
    case MPI_BXOR: LOOP(T, a[i] ^ b[i]); return;                                                   \
    }
#define INTEGER(T) ARITH(T) LOGIC(T) BITS(T) return;
#define REALS(T) ARITH(T) LOGIC(T) return;
#define CPLX(T)                                                                                    \
    switch (op) {                                                                                  \
    case MPI_SUM: LOOP(T, a[i] + b[i]); return;                                                    \
    case MPI_PROD: LOOP(T, a[i] * b[i]); return;                                                   \
    }                                                                                              \
    return;
/* Pairs in packed form: the index right after the value. */
#define PAIR(V, I)                                                                                 \
    do {                                                                                           \
        const size_t st = sizeof(V) + sizeof(I);                                                   \
        for (size_t k = 0; k < count; k++) {                                                       \
            const char *pa = (const char *)in + k * st;                                            \
            char *pb = (char *)inout + k * st;                                                     \
            V av, bv;                                                                              \
            I ai, bi;                                                                              \
            memcpy(&av, pa, sizeof av);                                                            \
            memcpy(&ai, pa + sizeof(V), sizeof ai);                                                \
            memcpy(&bv, pb, sizeof bv);                                                            \
            memcpy(&bi, pb + sizeof(V), sizeof bi);                                                \
            int better = op == MPI_MINLOC ? av < bv : av > bv;                                     \
            if (better || (av == bv && ai < bi)) {                                                 \
                if (better)                                                                        \
                    memcpy(pb, &av, sizeof av);                                                    \
                memcpy(pb + sizeof(V), &ai, sizeof ai);                                            \
            }                                                                                      \
        }                                                                                          \
        return;                                                                                    \
    } while (0)

void bd_op_apply(int op, int dtype, const void *in, void *inout, size_t count)
{
    switch (dtype) {
    case MPI_CHAR: INTEGER(char)
    case MPI_SIGNED_CHAR: INTEGER(signed char)
    case MPI_UNSIGNED_CHAR: INTEGER(unsigned char)
    case MPI_WCHAR: INTEGER(wchar_t)
    case MPI_SHORT: INTEGER(short)
    case MPI_UNSIGNED_SHORT: INTEGER(unsigned short)
    case MPI_INT: INTEGER(int)
    case MPI_UNSIGNED: INTEGER(unsigned)
    case MPI_LONG: INTEGER(long)
    case MPI_UNSIGNED_LONG: INTEGER(unsigned long)
    case MPI_LONG_LONG_INT: INTEGER(long long)
    case MPI_UNSIGNED_LONG_LONG: INTEGER(unsigned long long)
    case MPI_INT8_T: INTEGER(int8_t)
    case MPI_INT16_T: INTEGER(int16_t)
    case MPI_INT32_T: INTEGER(int32_t)
    case MPI_INT64_T: INTEGER(int64_t)
    case MPI_UINT8_T: INTEGER(uint8_t)
    case MPI_UINT16_T: INTEGER(uint16_t)
    case MPI_UINT32_T: INTEGER(uint32_t)
    case MPI_UINT64_T: INTEGER(uint64_t)
    case MPI_AINT: INTEGER(MPI_Aint)
    case MPI_OFFSET: INTEGER(MPI_Offset)
    case MPI_COUNT: INTEGER(MPI_Count)
    case MPI_BYTE: BITS(unsigned char) return;
    case MPI_C_BOOL:
    case MPI_CXX_BOOL: LOGIC(bool) return;
    case MPI_FLOAT: REALS(float)
    case MPI_DOUBLE: REALS(double)
    case MPI_LONG_DOUBLE: REALS(long double)
    case MPI_C_FLOAT_COMPLEX:
    case MPI_CXX_FLOAT_COMPLEX: CPLX(float complex)
    case MPI_C_DOUBLE_COMPLEX:
    case MPI_CXX_DOUBLE_COMPLEX: CPLX(double complex)
    case MPI_C_LONG_DOUBLE_COMPLEX:
    case MPI_CXX_LONG_DOUBLE_COMPLEX: CPLX(long double complex)
    case MPI_FLOAT_INT: PAIR(float, int);
    case MPI_DOUBLE_INT: PAIR(double, int);
    case MPI_LONG_INT: PAIR(long, int);
    case MPI_2INT:
    case MPI_2INTEGER: PAIR(int, int);
    case MPI_SHORT_INT: PAIR(short, int);
    case MPI_LONG_DOUBLE_INT: PAIR(long double, int);
    case MPI_2REAL: PAIR(float, float);
    case MPI_2DOUBLE_PRECISION: PAIR(double, double);
    case MPI_LOGICAL: LOGIC(int) return;
    case MPI_INTEGER:
    case MPI_INTEGER4: INTEGER(int32_t)
    case MPI_INTEGER1: INTEGER(int8_t)
    case MPI_INTEGER2: INTEGER(int16_t)
    case MPI_INTEGER8: INTEGER(int64_t)
    case MPI_INTEGER16: INTEGER(bd_int128_t)
    case MPI_REAL:
    case MPI_REAL4: REALS(float)
    case MPI_DOUBLE_PRECISION:
    case MPI_REAL8: REALS(double)
    case MPI_REAL16: REALS(long double)
    case MPI_COMPLEX:
    case MPI_COMPLEX8: CPLX(float complex)
    case MPI_DOUBLE_COMPLEX:
    case MPI_COMPLEX16: CPLX(double complex)
    case MPI_COMPLEX32: CPLX(long double complex)
    default: return;
    }
}
