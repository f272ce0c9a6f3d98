/* Predefined datatypes and reduction operations, shared by the slave
 * library (MPI_Reduce_local, local parts of collectives) and the master
 * (which folds contributions of reductions with predefined ops). */
#ifndef BD_DTYPE_H
#define BD_DTYPE_H

#include <stddef.h>
#include <stdint.h>

enum bd_dtype_class {
    BD_DT_NONE = 0,
    BD_DT_INT,      /* C integer (incl. char types, Aint, Offset, Count) */
    BD_DT_FLOAT,
    BD_DT_COMPLEX,
    BD_DT_BOOL,
    BD_DT_BYTE,
    BD_DT_PAIR,     /* value-index pairs for MINLOC/MAXLOC */
    BD_DT_PACKED,
};

typedef struct bd_dtype_info {
    const char *name;
    uint32_t size;   /* extent: bytes one element occupies in a buffer */
    uint8_t cls;
    uint32_t tsize;  /* MPI_Type_size: bytes of data, without padding (0: same as size) */
} bd_dtype_info_t;

/* NULL unless dtype is a predefined datatype handle. */
const bd_dtype_info_t *bd_dtype_info(int dtype);
const char *bd_op_name(int op);
/* 1 when the predefined op applies to the predefined dtype (MPI 3.1 5.9.2). */
int bd_op_valid_for(int op, int dtype);
/* inout[i] = in[i] op inout[i] for count elements; op and dtype must be
 * valid for each other (checked by the caller). */
void bd_op_apply(int op, int dtype, const void *in, void *inout, size_t count);

#endif
