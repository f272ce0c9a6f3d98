/* libbdmpi, bottom room: the datatype engine (descriptors, pack and unpack).
 * It sits below the transport because every transfer packs on the way. */
#ifndef BDL_DT_H
#define BDL_DT_H

#include <stdint.h>

#include "core.h"

/* dtype.c: datatype descriptors.  One element of a type is `nruns` runs of
 * equal blocks in type-map order; its packed stream is those blocks back to
 * back (psize bytes per element), which is what travels between ranks. */
typedef struct bdl_run {
    int64_t off;    /* first block, bytes from the element's origin */
    uint64_t len;   /* bytes per block */
    uint64_t cnt;   /* blocks */
    int64_t stride; /* bytes from one block to the next */
} bdl_run_t;

typedef struct bdl_sig {
    struct bdl_dt *t; /* the type signature is t's, reps times */
    uint64_t reps;
} bdl_sig_t;

typedef struct bdl_dt {
    int predefined;
    int committed;
    int refs; /* handles naming it, types built from it, pending receives */
    int combiner;
    uint64_t psize;  /* packed bytes of one element */
    uint64_t size;   /* MPI_Type_size (the same as psize) */
    uint64_t nelem;  /* predefined elements in one element (what reductions fold) */
    uint64_t nbasic; /* basic elements in one (MPI_Get_elements: a pair type has 2) */
    int basic;       /* the predefined type of all basic elements; 0 none; -1 mixed */
    int align;       /* strictest alignment of the basic elements */
    int sticky;      /* BDL_DT_EXPLICIT_*: bounds set by MPI_LB/MPI_UB markers or
                          resized, subarray, darray; an explicit ub gets no padding */
    int contig;      /* any count of elements is one block of bytes */
    int64_t lb, extent, true_lb, true_extent;
    uint32_t nruns;
    bdl_run_t *runs;
    uint64_t *pre; /* pre[i]: packed bytes before run i; pre[nruns] = psize */
    uint32_t nsig;
    bdl_sig_t *sig;
    int ni, na, nd; /* MPI_Type_get_contents */
    int *ints;
    MPI_Aint *aints;
    int nc;            /* made by a large-count constructor (_c): its MPI_Count */
    MPI_Count *counts; /* arguments, for MPI_Type_get_contents_c (MPI 4.0 5.1.13) */
    struct bdl_dt **types;
    bdl_run_t run1; /* predefined types: their single run */
    uint64_t pre1[2];
    bdl_run_t run2[2]; /* pair types whose index is apart from the value */
    /* A large count's type (mpi/bigcount.c: bdl_bc_fit_dt): bc_reps
     * elements of the program's type bc_user, of extent bc_ext, so that a
     * user operation is called with those, not with this type. */
    uint64_t bc_reps;
    MPI_Datatype bc_user;
    int64_t bc_ext;
    uint64_t pre2[3];
    char name[MPI_MAX_OBJECT_NAME];
} bdl_dt_t;

#define BDL_DT_EXPLICIT_LB 1
#define BDL_DT_EXPLICIT_UB 2

/* The descriptor of a valid (not freed) handle, committed or not; NULL otherwise. */
bdl_dt_t *bdl_dt_lookup(MPI_Datatype dt);
/* Why dt names no descriptor, for messages ("has been freed", ...). */
const char *bdl_dt_bad_why(MPI_Datatype dt);
/* For the datatype calls themselves: dt must be valid, committed or not;
 * otherwise the error is reported on comm (what names the argument). */
int bdl_dt_arg(MPI_Comm comm, const char *call, const char *what, MPI_Datatype dt, bdl_dt_t **out);
/* Handles: a new one naming t (which gains a reference), -1 when out of
 * handles; free a derived type's handle (t loses the reference); the
 * handle of a predefined descriptor. */
int bdl_dt_handle_new(bdl_dt_t *t);
void bdl_dt_handle_free(MPI_Datatype h);
MPI_Datatype bdl_dt_predefined_handle(const bdl_dt_t *t);
const bdl_dt_t *bdl_dt_byte(void);
/* For communication: dt must be valid and committed; otherwise the error is
 * reported on comm (what: "send", "receive" or "") and its code returned. */
int bdl_dt_check(MPI_Comm comm, const char *call, const char *what, MPI_Datatype dt,
                 bdl_dt_t **out);
/* The same for a point-to-point buffer of count elements: MPI_DATATYPE_NULL
 * is accepted with count 0 (as MPICH does; a message of no data, received
 * as MPI_BYTE would be, so that a longer one is truncated). */
int bdl_dt_check_count(MPI_Comm comm, const char *call, const char *what, MPI_Datatype dt,
                       int64_t count, bdl_dt_t **out);
void bdl_dt_retain(bdl_dt_t *t);
void bdl_dt_release(bdl_dt_t *t);
/* A hidden second handle naming dt's descriptor (dt itself if predefined or
 * invalid; MPI_DATATYPE_NULL out of memory): a persistent request keeps one
 * so the program may free dt while the request lives (MPI 3.1 4.1.10). */
MPI_Datatype bdl_dt_alias(MPI_Datatype dt);
void bdl_dt_alias_free(MPI_Datatype h);
/* Building a derived type's descriptor (the constructors, objects/type_create.c):
 * init, then parts in type-map order (add: k copies of c, the first at byte
 * displacement d, the next ones one extent of c apart; consecutive blocks
 * merge), the signature (sig: reps of c, for MPI_Get_elements), the
 * arguments MPI_Type_get_contents returns (contents: types gain a reference
 * each) and explicit bounds if any; publish finishes it and hands out the
 * handle (errors reported on MPI_COMM_WORLD for call; the builder is freed
 * then).  A failing step returns -1 (out of memory): abort frees the type.
 * lb/ub are the lowest and highest of the parts' bounds once any is set
 * (any), tlb/tub the data's (anydata). */
typedef struct bdl_dt_builder {
    bdl_dt_t *t;
    int any, anydata;
    int64_t lb, ub, tlb, tub;
    uint32_t cap;
} bdl_dt_builder_t;
int bdl_dt_build_init(bdl_dt_builder_t *b, int combiner);
int bdl_dt_build_add(bdl_dt_builder_t *b, const bdl_dt_t *c, int64_t d, uint64_t k);
/* n groups of k copies of c, group i at d + i * stride (a vector: one run
 * when c is contiguous, whatever n). */
int bdl_dt_build_add_strided(bdl_dt_builder_t *b, const bdl_dt_t *c, int64_t d, uint64_t k,
                             uint64_t n, int64_t stride);
/* A large-count constructor's contents: ni ints and nc MPI_Counts replace
 * the ints and addresses (types stay); -1 out of memory. */
int bdl_dt_set_counts(bdl_dt_t *t, int ni, const int *ints, int nc, const MPI_Count *counts);
int bdl_dt_build_sig(bdl_dt_builder_t *b, bdl_dt_t *c, uint64_t reps);
int bdl_dt_build_contents(bdl_dt_builder_t *b, int ni, const int *ints, int na,
                          const MPI_Aint *aints, int nd, bdl_dt_t *const *types);
void bdl_dt_build_explicit(bdl_dt_builder_t *b, int64_t lb, int64_t ub);
int bdl_dt_build_publish(bdl_dt_builder_t *b, const char *call, MPI_Datatype *newtype);
void bdl_dt_build_abort(bdl_dt_builder_t *b);

/* The packed stream of count elements at buf when it is one block of memory
 * (start of that block), else NULL. */
char *bdl_dt_contig(const bdl_dt_t *t, const void *buf, uint64_t count);
/* Bytes [off, off+len) of the packed stream of count elements at buf. */
void bdl_dt_pack(const bdl_dt_t *t, const void *buf, uint64_t count, uint64_t off, void *out,
                 uint64_t len);
void bdl_dt_unpack(const bdl_dt_t *t, void *buf, uint64_t count, uint64_t off, const void *in,
                   uint64_t len);
/* The first nbytes of the packed stream of (sbuf, scount, st) into (rbuf, rcount, rt). */
void bdl_dt_copy(const bdl_dt_t *st, const void *sbuf, uint64_t scount, const bdl_dt_t *rt,
                 void *rbuf, uint64_t rcount, uint64_t nbytes);
/* Zeroed memory for count elements of t: returns what to free; *base is the
 * buffer address to use with t (it may lie outside the allocation). */
void *bdl_dt_alloc(const bdl_dt_t *t, uint64_t count, void **base);

#endif
