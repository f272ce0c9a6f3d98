#include "bd_dtype.h"

#include <complex.h>
#include <stdbool.h>
#include <wchar.h>

#include "mpi.h"

typedef struct { float v; int i; } pair_float_t;
typedef struct { double v; int i; } pair_double_t;
typedef struct { long v; int i; } pair_long_t;
typedef struct { int v; int i; } pair_int_t;
typedef struct { short v; int i; } pair_short_t;
typedef struct { long double v; int i; } pair_ldouble_t;

static const bd_dtype_info_t g_types[BDMPI_DATATYPE_PREDEFINED_MAX + 1] = {
    [MPI_CHAR] = {"MPI_CHAR", sizeof(char), BD_DT_INT},
    [MPI_SIGNED_CHAR] = {"MPI_SIGNED_CHAR", sizeof(signed char), BD_DT_INT},
    [MPI_UNSIGNED_CHAR] = {"MPI_UNSIGNED_CHAR", sizeof(unsigned char), BD_DT_INT},
    [MPI_BYTE] = {"MPI_BYTE", 1, BD_DT_BYTE},
    [MPI_WCHAR] = {"MPI_WCHAR", sizeof(wchar_t), BD_DT_INT},
    [MPI_SHORT] = {"MPI_SHORT", sizeof(short), BD_DT_INT},
    [MPI_UNSIGNED_SHORT] = {"MPI_UNSIGNED_SHORT", sizeof(unsigned short), BD_DT_INT},
    [MPI_INT] = {"MPI_INT", sizeof(int), BD_DT_INT},
    [MPI_UNSIGNED] = {"MPI_UNSIGNED", sizeof(unsigned), BD_DT_INT},
    [MPI_LONG] = {"MPI_LONG", sizeof(long), BD_DT_INT},
    [MPI_UNSIGNED_LONG] = {"MPI_UNSIGNED_LONG", sizeof(unsigned long), BD_DT_INT},
    [MPI_LONG_LONG_INT] = {"MPI_LONG_LONG", sizeof(long long), BD_DT_INT},
    [MPI_UNSIGNED_LONG_LONG] = {"MPI_UNSIGNED_LONG_LONG", sizeof(unsigned long long), BD_DT_INT},
    [MPI_FLOAT] = {"MPI_FLOAT", sizeof(float), BD_DT_FLOAT},
    [MPI_DOUBLE] = {"MPI_DOUBLE", sizeof(double), BD_DT_FLOAT},
    [MPI_LONG_DOUBLE] = {"MPI_LONG_DOUBLE", sizeof(long double), BD_DT_FLOAT},
    [MPI_INT8_T] = {"MPI_INT8_T", 1, BD_DT_INT},
    [MPI_INT16_T] = {"MPI_INT16_T", 2, BD_DT_INT},
    [MPI_INT32_T] = {"MPI_INT32_T", 4, BD_DT_INT},
    [MPI_INT64_T] = {"MPI_INT64_T", 8, BD_DT_INT},
    [MPI_UINT8_T] = {"MPI_UINT8_T", 1, BD_DT_INT},
    [MPI_UINT16_T] = {"MPI_UINT16_T", 2, BD_DT_INT},
    [MPI_UINT32_T] = {"MPI_UINT32_T", 4, BD_DT_INT},
    [MPI_UINT64_T] = {"MPI_UINT64_T", 8, BD_DT_INT},
    [MPI_C_BOOL] = {"MPI_C_BOOL", sizeof(bool), BD_DT_BOOL},
    [MPI_C_FLOAT_COMPLEX] = {"MPI_C_FLOAT_COMPLEX", sizeof(float complex), BD_DT_COMPLEX},
    [MPI_C_DOUBLE_COMPLEX] = {"MPI_C_DOUBLE_COMPLEX", sizeof(double complex), BD_DT_COMPLEX},
    [MPI_C_LONG_DOUBLE_COMPLEX] = {"MPI_C_LONG_DOUBLE_COMPLEX", sizeof(long double complex),
                                   BD_DT_COMPLEX},
    [MPI_AINT] = {"MPI_AINT", sizeof(MPI_Aint), BD_DT_INT},
    [MPI_OFFSET] = {"MPI_OFFSET", sizeof(MPI_Offset), BD_DT_INT},
    [MPI_COUNT] = {"MPI_COUNT", sizeof(MPI_Count), BD_DT_INT},
    [MPI_PACKED] = {"MPI_PACKED", 1, BD_DT_PACKED},
    [MPI_FLOAT_INT] = {"MPI_FLOAT_INT", sizeof(pair_float_t), BD_DT_PAIR,
                         sizeof(float) + sizeof(int)},
    [MPI_DOUBLE_INT] = {"MPI_DOUBLE_INT", sizeof(pair_double_t), BD_DT_PAIR,
                         sizeof(double) + sizeof(int)},
    [MPI_LONG_INT] = {"MPI_LONG_INT", sizeof(pair_long_t), BD_DT_PAIR,
                         sizeof(long) + sizeof(int)},
    [MPI_2INT] = {"MPI_2INT", sizeof(pair_int_t), BD_DT_PAIR,
                         sizeof(int) + sizeof(int)},
    [MPI_SHORT_INT] = {"MPI_SHORT_INT", sizeof(pair_short_t), BD_DT_PAIR,
                         sizeof(short) + sizeof(int)},
    [MPI_LONG_DOUBLE_INT] = {"MPI_LONG_DOUBLE_INT", sizeof(pair_ldouble_t), BD_DT_PAIR,
                         sizeof(long double) + sizeof(int)},
    [MPI_CXX_BOOL] = {"MPI_CXX_BOOL", sizeof(bool), BD_DT_BOOL},
    [MPI_CXX_FLOAT_COMPLEX] = {"MPI_CXX_FLOAT_COMPLEX", sizeof(float complex), BD_DT_COMPLEX},
    [MPI_CXX_DOUBLE_COMPLEX] = {"MPI_CXX_DOUBLE_COMPLEX", sizeof(double complex), BD_DT_COMPLEX},
    [MPI_CXX_LONG_DOUBLE_COMPLEX] = {"MPI_CXX_LONG_DOUBLE_COMPLEX", sizeof(long double complex),
                                     BD_DT_COMPLEX},
};

static const char *const g_op_names[BDMPI_OP_PREDEFINED_MAX + 1] = {
    [MPI_MAX] = "MPI_MAX",   [MPI_MIN] = "MPI_MIN",       [MPI_SUM] = "MPI_SUM",
    [MPI_PROD] = "MPI_PROD", [MPI_LAND] = "MPI_LAND",     [MPI_BAND] = "MPI_BAND",
    [MPI_LOR] = "MPI_LOR",   [MPI_BOR] = "MPI_BOR",       [MPI_LXOR] = "MPI_LXOR",
    [MPI_BXOR] = "MPI_BXOR", [MPI_MINLOC] = "MPI_MINLOC", [MPI_MAXLOC] = "MPI_MAXLOC",
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
    case MPI_MIN:
        return t->cls == BD_DT_INT || t->cls == BD_DT_FLOAT;
    case MPI_SUM:
    case MPI_PROD:
        return t->cls == BD_DT_INT || t->cls == BD_DT_FLOAT || t->cls == BD_DT_COMPLEX;
    case MPI_LAND:
    case MPI_LOR:
    case MPI_LXOR:
        return t->cls == BD_DT_INT || t->cls == BD_DT_BOOL;
    case MPI_BAND:
    case MPI_BOR:
    case MPI_BXOR:
        return t->cls == BD_DT_INT || t->cls == BD_DT_BYTE;
    case MPI_MINLOC:
    case MPI_MAXLOC:
        return t->cls == BD_DT_PAIR;
    default:
        return 0;
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
#define CPLX(T)                                                                                    \
    switch (op) {                                                                                  \
    case MPI_SUM: LOOP(T, a[i] + b[i]); return;                                                    \
    case MPI_PROD: LOOP(T, a[i] * b[i]); return;                                                   \
    }                                                                                              \
    return;
#define PAIR(T)                                                                                    \
    do {                                                                                           \
        const T *a = (const T *)in;                                                                \
        T *b = (T *)inout;                                                                         \
        for (size_t i = 0; i < count; i++) {                                                       \
            int better = op == MPI_MINLOC ? a[i].v < b[i].v : a[i].v > b[i].v;                     \
            if (better)                                                                            \
                b[i] = a[i];                                                                       \
            else if (a[i].v == b[i].v && a[i].i < b[i].i)                                          \
                b[i].i = a[i].i;                                                                   \
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
    case MPI_FLOAT: ARITH(float) return;
    case MPI_DOUBLE: ARITH(double) return;
    case MPI_LONG_DOUBLE: ARITH(long double) return;
    case MPI_C_FLOAT_COMPLEX:
    case MPI_CXX_FLOAT_COMPLEX: CPLX(float complex)
    case MPI_C_DOUBLE_COMPLEX:
    case MPI_CXX_DOUBLE_COMPLEX: CPLX(double complex)
    case MPI_C_LONG_DOUBLE_COMPLEX:
    case MPI_CXX_LONG_DOUBLE_COMPLEX: CPLX(long double complex)
    case MPI_FLOAT_INT: PAIR(pair_float_t);
    case MPI_DOUBLE_INT: PAIR(pair_double_t);
    case MPI_LONG_INT: PAIR(pair_long_t);
    case MPI_2INT: PAIR(pair_int_t);
    case MPI_SHORT_INT: PAIR(pair_short_t);
    case MPI_LONG_DOUBLE_INT: PAIR(pair_ldouble_t);
    default: return;
    }
}
