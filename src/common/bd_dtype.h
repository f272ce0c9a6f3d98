/* Predefined datatypes and reduction operations, shared by the slave
 * library (MPI_Reduce_local, local parts of collectives) and the master
 * (which folds contributions of reductions with predefined ops). */
#ifndef BD_DTYPE_H
#define BD_DTYPE_H

#include <stddef.h>
#include <stdint.h>

enum bd_dtype_class {
    BD_DT_NONE = 0,
    BD_DT_INT, /* C integer (incl. char types, Aint, Offset, Count) */
    BD_DT_FLOAT,
    BD_DT_COMPLEX,
    BD_DT_BOOL,
    BD_DT_BYTE,
    BD_DT_PAIR, /* value-index pairs for MINLOC/MAXLOC */
    BD_DT_PACKED,
    BD_DT_CHARACTER, /* Fortran CHARACTER: no reduction applies */
    BD_DT_MARKER,    /* MPI_LB, MPI_UB: bounds markers without data */
};

typedef struct bd_dtype_info {
    const char *name;
    uint32_t size; /* bytes of data of one element: MPI_Type_size, and the size of its
                        packed form (what messages carry and reductions fold) */
    uint8_t cls;
    uint32_t extent; /* bytes one element occupies in a buffer (0: same as size) */
    uint8_t vsize;   /* pair types: bytes of the value; in the packed form the index
                        follows it at once, in a buffer it is at offset ioff */
    uint8_t ioff;
} bd_dtype_info_t;

/* NULL unless dtype is a predefined datatype handle. */
const bd_dtype_info_t *bd_dtype_info(int dtype);
const char *bd_op_name(int op);
/* 1 when the predefined op applies to the predefined dtype (MPI 3.1 5.9.2). */
int bd_op_valid_for(int op, int dtype);
/* inout[i] = in[i] op inout[i] for count elements in packed form (the same
 * as in a buffer except for pair types, whose index follows the value
 * without padding); op and dtype must be valid for each other (checked by
 * the caller). */
void bd_op_apply(int op, int dtype, const void *in, void *inout, size_t count);

#endif
