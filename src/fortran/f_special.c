/* The Fortran routines whose Fortran form the standard defines apart from
 * their C prototype, written by hand (src/fortran/gen_fortran.py binds the
 * others from mpi.h and takes these routines' Fortran interfaces from
 * specials.py).  Each is named as gfortran names an external procedure
 * (lower case, one trailing underscore) and serves mpif.h, the module mpi
 * and, where the arguments are passed alike, the module mpi_f08.
 *
 * Callbacks: a Fortran callback takes every argument by reference, and the
 * values attributes and extra states hold are INTEGER(KIND=MPI_ADDRESS_KIND)
 * (INTEGER for the deprecated MPI-1 calls), where C passes them by value
 * and as pointers.  So the C library gets one of the trampolines below,
 * with a record of the Fortran procedures and extra state as its extra
 * state; the trampoline calls the Fortran procedure and converts back.
 * Records of keyvals and data representations live as long as the process
 * (the library may call them until its end); a generalized request's is
 * freed after its free function ran.
 *
 * Only the public C API is used: src/fortran is a client of libbdmpi. */
#include <ISO_Fortran_binding.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi.h"

/* ---------------------------------------------------------------- errors */

/* Raise code in call as the library does: through the error handler of
 * the object the call is about (kind 'c' communicator, 'w' window, 'f'
 * file), printing msg and ending the job if that handler is
 * MPI_ERRORS_ARE_FATAL or MPI_ERRORS_ABORT.  Returns code when the handler returns. */
int bdmpi_f_raise(int kind, MPI_Fint handle, int code, const char *cls, const char *call,
                  const char *fmt, ...) __attribute__((format(printf, 6, 7)));
int bdmpi_f_raise(int kind, MPI_Fint handle, int code, const char *cls, const char *call,
                  const char *fmt, ...)
{
    MPI_Errhandler eh = MPI_ERRORS_ARE_FATAL;
    int rc;
    if (kind == 'w')
        rc = MPI_Win_get_errhandler(handle, &eh);
    else if (kind == 'f')
        rc = MPI_File_get_errhandler(handle, &eh);
    else
        rc = MPI_Comm_get_errhandler(handle, &eh);
    if (rc != MPI_SUCCESS)
        return rc;
    if (eh == MPI_ERRORS_RETURN)
        return code;
    if (eh != MPI_ERRORS_ARE_FATAL && eh != MPI_ERRORS_ABORT) {
        if (kind == 'w')
            MPI_Win_call_errhandler(handle, code);
        else if (kind == 'f')
            MPI_File_call_errhandler(handle, code);
        else
            MPI_Comm_call_errhandler(handle, code);
        return code;
    }
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "bdmpi: rank %d: %s: %s [%s]\n", rank, call, msg, cls);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
    return code;
}

/* ---------------------------------------------------------------- buffers of mpi_f08 */

/* The address of a choice buffer that MPI keeps using after the call
 * returns (nonblocking, persistent, one-sided, split collective and
 * attached buffers), which mpi_f08 passes as a descriptor (TYPE(*),
 * DIMENSION(..), ASYNCHRONOUS) so that the compiler makes no temporary
 * copy.  A non-contiguous array section cannot be described by an address:
 * MPI_SUBARRAYS_SUPPORTED is .FALSE. and the standard makes such a call
 * erroneous, so it is refused with MPI_ERR_BUFFER rather than left to read
 * or write the wrong memory.  Returns 0 and sets *addr, or sets *ierror and
 * returns 1. */
int bdmpi_f_contig(const CFI_cdesc_t *d, void **addr, int kind, MPI_Fint handle, const char *call,
                   const char *arg, MPI_Fint *ierror);
int bdmpi_f_contig(const CFI_cdesc_t *d, void **addr, int kind, MPI_Fint handle, const char *call,
                   const char *arg, MPI_Fint *ierror)
{
    CFI_index_t want = (CFI_index_t)d->elem_len;
    int contiguous = 1;
    for (int i = 0; i < d->rank; i++) {
        CFI_index_t n = d->dim[i].extent;
        if (n == 0 || n == -1) /* no elements, or assumed size (always contiguous) */
            break;
        if (n > 1 && d->dim[i].sm != want)
            contiguous = 0;
        want *= n;
    }
    *addr = d->base_addr;
    if (contiguous)
        return 0;
    *ierror = bdmpi_f_raise(kind, handle, MPI_ERR_BUFFER, "MPI_ERR_BUFFER", call,
                            "%s is a non-contiguous array section, which MPI uses after the call "
                            "returns (MPI_SUBARRAYS_SUPPORTED is .FALSE.: pass a contiguous array)",
                            arg);
    return 1;
}

/* An address the routine only records or compares (MPI_Get_address): the
 * first element's, whatever the section's layout. */
void *bdmpi_f_addr(const CFI_cdesc_t *d);
void *bdmpi_f_addr(const CFI_cdesc_t *d) { return d->base_addr; }

/* ---------------------------------------------------------------- environment */

void mpi_init_(MPI_Fint *ierror);
void mpi_init_(MPI_Fint *ierror) { *ierror = MPI_Init(NULL, NULL); }

void mpi_init_thread_(const MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierror);
void mpi_init_thread_(const MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierror)
{
    *ierror = MPI_Init_thread(NULL, NULL, *required, provided);
}

void mpi_pcontrol_(const MPI_Fint *level, MPI_Fint *ierror);
void mpi_pcontrol_(const MPI_Fint *level, MPI_Fint *ierror) { *ierror = MPI_Pcontrol(*level); }

/* MPI_INFO_CREATE_ENV has no argc/argv in Fortran (MPI 4.0 11.2.2): the
 * command line is the process's own, from /proc/self/cmdline (without it,
 * the info has no "command" and "argv"). */
void mpi_info_create_env_(MPI_Fint *info, MPI_Fint *ierror);
void mpi_info_create_env_(MPI_Fint *info, MPI_Fint *ierror)
{
    char buf[16384], *argv[256];
    int argc = 0;
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (f) {
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        for (size_t i = 0; i < n && argc < 255; i += strlen(buf + i) + 1)
            argv[argc++] = buf + i;
    }
    argv[argc] = NULL;
    *ierror = MPI_Info_create_env(argc, argc ? argv : NULL, info);
}

/* MPI_F_SYNC_REG does nothing, but out of the compiler's sight: a
 * register copy of buf cannot be kept across it (MPI 4.0 19.1.17). */
void mpi_f_sync_reg_(void *buf);
void mpi_f_sync_reg_(void *buf) { __asm__ volatile("" : : "r"(buf) : "memory"); }

/* ---------------------------------------------------------------- statuses */

void mpi_status_f2f08_(const MPI_Fint *f_status, MPI_Fint *f08_status, MPI_Fint *ierror);
void mpi_status_f2f08_(const MPI_Fint *f_status, MPI_Fint *f08_status, MPI_Fint *ierror)
{
    *ierror = MPI_Status_f2f08(f_status, (MPI_F08_status *)f08_status);
}

void mpi_status_f082f_(const MPI_Fint *f08_status, MPI_Fint *f_status, MPI_Fint *ierror);
void mpi_status_f082f_(const MPI_Fint *f08_status, MPI_Fint *f_status, MPI_Fint *ierror)
{
    *ierror = MPI_Status_f082f((const MPI_F08_status *)f08_status, f_status);
}

/* ---------------------------------------------------------------- memory */

/* Fortran gets the address as an INTEGER(KIND=MPI_ADDRESS_KIND) (for a
 * Cray pointer, or TRANSFER to TYPE(C_PTR)) or, from the _CPTR forms and
 * mpi_f08, as a TYPE(C_PTR): both are the address in 8 bytes. */
void mpi_alloc_mem_(const MPI_Aint *size, const MPI_Fint *info, MPI_Aint *baseptr,
                    MPI_Fint *ierror);
void mpi_alloc_mem_(const MPI_Aint *size, const MPI_Fint *info, MPI_Aint *baseptr, MPI_Fint *ierror)
{
    void *p = NULL;
    *ierror = MPI_Alloc_mem(*size, *info, &p);
    if (*ierror == MPI_SUCCESS)
        *baseptr = (MPI_Aint)p;
}

void mpi_alloc_mem_cptr_(const MPI_Aint *size, const MPI_Fint *info, MPI_Aint *baseptr,
                         MPI_Fint *ierror);
void mpi_alloc_mem_cptr_(const MPI_Aint *size, const MPI_Fint *info, MPI_Aint *baseptr,
                         MPI_Fint *ierror)
{
    mpi_alloc_mem_(size, info, baseptr, ierror);
}

void mpi_win_allocate_(const MPI_Aint *size, const MPI_Fint *disp_unit, const MPI_Fint *info,
                       const MPI_Fint *comm, MPI_Aint *baseptr, MPI_Fint *win, MPI_Fint *ierror);
void mpi_win_allocate_(const MPI_Aint *size, const MPI_Fint *disp_unit, const MPI_Fint *info,
                       const MPI_Fint *comm, MPI_Aint *baseptr, MPI_Fint *win, MPI_Fint *ierror)
{
    void *p = NULL;
    *ierror = MPI_Win_allocate(*size, *disp_unit, *info, *comm, &p, win);
    if (*ierror == MPI_SUCCESS)
        *baseptr = (MPI_Aint)p;
}

void mpi_win_allocate_cptr_(const MPI_Aint *size, const MPI_Fint *disp_unit, const MPI_Fint *info,
                            const MPI_Fint *comm, MPI_Aint *baseptr, MPI_Fint *win,
                            MPI_Fint *ierror);
void mpi_win_allocate_cptr_(const MPI_Aint *size, const MPI_Fint *disp_unit, const MPI_Fint *info,
                            const MPI_Fint *comm, MPI_Aint *baseptr, MPI_Fint *win,
                            MPI_Fint *ierror)
{
    mpi_win_allocate_(size, disp_unit, info, comm, baseptr, win, ierror);
}

void mpi_win_allocate_c_(const MPI_Aint *size, const MPI_Aint *disp_unit, const MPI_Fint *info,
                         const MPI_Fint *comm, MPI_Aint *baseptr, MPI_Fint *win, MPI_Fint *ierror);
void mpi_win_allocate_c_(const MPI_Aint *size, const MPI_Aint *disp_unit, const MPI_Fint *info,
                         const MPI_Fint *comm, MPI_Aint *baseptr, MPI_Fint *win, MPI_Fint *ierror)
{
    void *p = NULL;
    *ierror = MPI_Win_allocate_c(*size, *disp_unit, *info, *comm, &p, win);
    if (*ierror == MPI_SUCCESS)
        *baseptr = (MPI_Aint)p;
}

void mpi_win_allocate_shared_(const MPI_Aint *size, const MPI_Fint *disp_unit, const MPI_Fint *info,
                              const MPI_Fint *comm, MPI_Aint *baseptr, MPI_Fint *win,
                              MPI_Fint *ierror);
void mpi_win_allocate_shared_(const MPI_Aint *size, const MPI_Fint *disp_unit, const MPI_Fint *info,
                              const MPI_Fint *comm, MPI_Aint *baseptr, MPI_Fint *win,
                              MPI_Fint *ierror)
{
    void *p = NULL;
    *ierror = MPI_Win_allocate_shared(*size, *disp_unit, *info, *comm, &p, win);
    if (*ierror == MPI_SUCCESS)
        *baseptr = (MPI_Aint)p;
}

void mpi_win_allocate_shared_cptr_(const MPI_Aint *size, const MPI_Fint *disp_unit,
                                   const MPI_Fint *info, const MPI_Fint *comm, MPI_Aint *baseptr,
                                   MPI_Fint *win, MPI_Fint *ierror);
void mpi_win_allocate_shared_cptr_(const MPI_Aint *size, const MPI_Fint *disp_unit,
                                   const MPI_Fint *info, const MPI_Fint *comm, MPI_Aint *baseptr,
                                   MPI_Fint *win, MPI_Fint *ierror)
{
    mpi_win_allocate_shared_(size, disp_unit, info, comm, baseptr, win, ierror);
}

void mpi_win_shared_query_(const MPI_Fint *win, const MPI_Fint *rank, MPI_Aint *size,
                           MPI_Fint *disp_unit, MPI_Aint *baseptr, MPI_Fint *ierror);
void mpi_win_shared_query_(const MPI_Fint *win, const MPI_Fint *rank, MPI_Aint *size,
                           MPI_Fint *disp_unit, MPI_Aint *baseptr, MPI_Fint *ierror)
{
    void *p = NULL;
    *ierror = MPI_Win_shared_query(*win, *rank, size, disp_unit, &p);
    if (*ierror == MPI_SUCCESS)
        *baseptr = (MPI_Aint)p;
}

void mpi_win_shared_query_cptr_(const MPI_Fint *win, const MPI_Fint *rank, MPI_Aint *size,
                                MPI_Fint *disp_unit, MPI_Aint *baseptr, MPI_Fint *ierror);
void mpi_win_shared_query_cptr_(const MPI_Fint *win, const MPI_Fint *rank, MPI_Aint *size,
                                MPI_Fint *disp_unit, MPI_Aint *baseptr, MPI_Fint *ierror)
{
    mpi_win_shared_query_(win, rank, size, disp_unit, baseptr, ierror);
}

void mpi_win_allocate_shared_c_(const MPI_Aint *size, const MPI_Aint *disp_unit,
                                const MPI_Fint *info, const MPI_Fint *comm, MPI_Aint *baseptr,
                                MPI_Fint *win, MPI_Fint *ierror);
void mpi_win_allocate_shared_c_(const MPI_Aint *size, const MPI_Aint *disp_unit,
                                const MPI_Fint *info, const MPI_Fint *comm, MPI_Aint *baseptr,
                                MPI_Fint *win, MPI_Fint *ierror)
{
    void *p = NULL;
    *ierror = MPI_Win_allocate_shared_c(*size, *disp_unit, *info, *comm, &p, win);
    if (*ierror == MPI_SUCCESS)
        *baseptr = (MPI_Aint)p;
}

void mpi_win_shared_query_c_(const MPI_Fint *win, const MPI_Fint *rank, MPI_Aint *size,
                             MPI_Aint *disp_unit, MPI_Aint *baseptr, MPI_Fint *ierror);
void mpi_win_shared_query_c_(const MPI_Fint *win, const MPI_Fint *rank, MPI_Aint *size,
                             MPI_Aint *disp_unit, MPI_Aint *baseptr, MPI_Fint *ierror)
{
    void *p = NULL;
    *ierror = MPI_Win_shared_query_c(*win, *rank, size, disp_unit, &p);
    if (*ierror == MPI_SUCCESS)
        *baseptr = (MPI_Aint)p;
}

/* mpif.h and the module mpi pass a buffer the address is not written to
 * (Fortran could not use it); mpi_f08 a TYPE(C_PTR) that receives it. */
void mpi_buffer_detach_(void *buffer_addr, MPI_Fint *size, MPI_Fint *ierror);
void mpi_buffer_detach_(void *buffer_addr, MPI_Fint *size, MPI_Fint *ierror)
{
    (void)buffer_addr;
    void *addr;
    *ierror = MPI_Buffer_detach(&addr, size);
}

void mpi_buffer_detach_c_(void *buffer_addr, MPI_Count *size, MPI_Fint *ierror);
void mpi_buffer_detach_c_(void *buffer_addr, MPI_Count *size, MPI_Fint *ierror)
{
    (void)buffer_addr;
    void *addr;
    *ierror = MPI_Buffer_detach_c(&addr, size);
}

void bdmpi_f08_buffer_detach(void **buffer_addr, MPI_Fint *size, MPI_Fint *ierror);
void bdmpi_f08_buffer_detach(void **buffer_addr, MPI_Fint *size, MPI_Fint *ierror)
{
    *ierror = MPI_Buffer_detach(buffer_addr, size);
}

void bdmpi_f08_buffer_detach_c(void **buffer_addr, MPI_Count *size, MPI_Fint *ierror);
void bdmpi_f08_buffer_detach_c(void **buffer_addr, MPI_Count *size, MPI_Fint *ierror)
{
    *ierror = MPI_Buffer_detach_c(buffer_addr, size);
}

/* ---------------------------------------------------------------- attributes */

/* The predefined attributes are pointers to their values in C (to an int,
 * MPI_WIN_SIZE's to an MPI_Aint, MPI_WIN_BASE is the address itself);
 * Fortran gets the values.  Other attributes are stored as the value. */
static int comm_predefined(int keyval)
{
    return keyval == MPI_TAG_UB || keyval == MPI_HOST || keyval == MPI_IO ||
           keyval == MPI_WTIME_IS_GLOBAL || keyval == MPI_UNIVERSE_SIZE || keyval == MPI_APPNUM ||
           keyval == MPI_LASTUSEDCODE;
}

void mpi_comm_get_attr_(const MPI_Fint *comm, const MPI_Fint *keyval, MPI_Aint *attribute_val,
                        MPI_Fint *flag, MPI_Fint *ierror);
void mpi_comm_get_attr_(const MPI_Fint *comm, const MPI_Fint *keyval, MPI_Aint *attribute_val,
                        MPI_Fint *flag, MPI_Fint *ierror)
{
    void *v = NULL;
    int f = 0;
    *ierror = MPI_Comm_get_attr(*comm, *keyval, &v, &f);
    if (*ierror == MPI_SUCCESS && f)
        *attribute_val = comm_predefined(*keyval) ? (MPI_Aint) * (int *)v : (MPI_Aint)v;
    *flag = f != 0;
}

void mpi_type_get_attr_(const MPI_Fint *type, const MPI_Fint *keyval, MPI_Aint *attribute_val,
                        MPI_Fint *flag, MPI_Fint *ierror);
void mpi_type_get_attr_(const MPI_Fint *type, const MPI_Fint *keyval, MPI_Aint *attribute_val,
                        MPI_Fint *flag, MPI_Fint *ierror)
{
    void *v = NULL;
    int f = 0;
    *ierror = MPI_Type_get_attr(*type, *keyval, &v, &f);
    if (*ierror == MPI_SUCCESS && f)
        *attribute_val = (MPI_Aint)v;
    *flag = f != 0;
}

void mpi_win_get_attr_(const MPI_Fint *win, const MPI_Fint *keyval, MPI_Aint *attribute_val,
                       MPI_Fint *flag, MPI_Fint *ierror);
void mpi_win_get_attr_(const MPI_Fint *win, const MPI_Fint *keyval, MPI_Aint *attribute_val,
                       MPI_Fint *flag, MPI_Fint *ierror)
{
    void *v = NULL;
    int f = 0;
    *ierror = MPI_Win_get_attr(*win, *keyval, &v, &f);
    if (*ierror == MPI_SUCCESS && f) {
        if (*keyval == MPI_WIN_SIZE)
            *attribute_val = *(MPI_Aint *)v;
        else if (*keyval == MPI_WIN_DISP_UNIT || *keyval == MPI_WIN_CREATE_FLAVOR ||
                 *keyval == MPI_WIN_MODEL)
            *attribute_val = *(int *)v;
        else
            *attribute_val = (MPI_Aint)v;
    }
    *flag = f != 0;
}

void mpi_comm_set_attr_(const MPI_Fint *comm, const MPI_Fint *keyval, const MPI_Aint *attribute_val,
                        MPI_Fint *ierror);
void mpi_comm_set_attr_(const MPI_Fint *comm, const MPI_Fint *keyval, const MPI_Aint *attribute_val,
                        MPI_Fint *ierror)
{
    *ierror = MPI_Comm_set_attr(*comm, *keyval, (void *)*attribute_val);
}

void mpi_type_set_attr_(const MPI_Fint *type, const MPI_Fint *keyval, const MPI_Aint *attribute_val,
                        MPI_Fint *ierror);
void mpi_type_set_attr_(const MPI_Fint *type, const MPI_Fint *keyval, const MPI_Aint *attribute_val,
                        MPI_Fint *ierror)
{
    *ierror = MPI_Type_set_attr(*type, *keyval, (void *)*attribute_val);
}

void mpi_win_set_attr_(const MPI_Fint *win, const MPI_Fint *keyval, const MPI_Aint *attribute_val,
                       MPI_Fint *ierror);
void mpi_win_set_attr_(const MPI_Fint *win, const MPI_Fint *keyval, const MPI_Aint *attribute_val,
                       MPI_Fint *ierror)
{
    *ierror = MPI_Win_set_attr(*win, *keyval, (void *)*attribute_val);
}

/* The deprecated MPI-1 forms hold INTEGER values. */
void mpi_attr_put_(const MPI_Fint *comm, const MPI_Fint *keyval, const MPI_Fint *attribute_val,
                   MPI_Fint *ierror);
void mpi_attr_put_(const MPI_Fint *comm, const MPI_Fint *keyval, const MPI_Fint *attribute_val,
                   MPI_Fint *ierror)
{
    *ierror = MPI_Attr_put(*comm, *keyval, (void *)(intptr_t)*attribute_val);
}

void mpi_attr_get_(const MPI_Fint *comm, const MPI_Fint *keyval, MPI_Fint *attribute_val,
                   MPI_Fint *flag, MPI_Fint *ierror);
void mpi_attr_get_(const MPI_Fint *comm, const MPI_Fint *keyval, MPI_Fint *attribute_val,
                   MPI_Fint *flag, MPI_Fint *ierror)
{
    void *v = NULL;
    int f = 0;
    *ierror = MPI_Attr_get(*comm, *keyval, &v, &f);
    if (*ierror == MPI_SUCCESS && f)
        *attribute_val = comm_predefined(*keyval) ? *(int *)v : (MPI_Fint)(intptr_t)v;
    *flag = f != 0;
}

/* A Fortran copy or delete function, of MPI_COMM_CREATE_KEYVAL and its
 * type and window forms, or of the MPI-1 MPI_KEYVAL_CREATE (INTEGER
 * values: the *1 members). */
typedef void f_copy_fn(const MPI_Fint *oldobj, const MPI_Fint *keyval, const MPI_Aint *extra_state,
                       const MPI_Aint *val_in, MPI_Aint *val_out, MPI_Fint *flag, MPI_Fint *ierror);
typedef void f_delete_fn(const MPI_Fint *obj, const MPI_Fint *keyval, const MPI_Aint *val,
                         const MPI_Aint *extra_state, MPI_Fint *ierror);
typedef void f_copy1_fn(const MPI_Fint *oldcomm, const MPI_Fint *keyval,
                        const MPI_Fint *extra_state, const MPI_Fint *val_in, MPI_Fint *val_out,
                        MPI_Fint *flag, MPI_Fint *ierror);
typedef void f_delete1_fn(const MPI_Fint *comm, const MPI_Fint *keyval, const MPI_Fint *val,
                          const MPI_Fint *extra_state, MPI_Fint *ierror);
typedef struct {
    f_copy_fn *copy;
    f_delete_fn *del;
    f_copy1_fn *copy1;
    f_delete1_fn *del1;
    MPI_Aint extra;
} f_keyval_t;

/* Handles are int in C, so one trampoline serves communicators, datatypes
 * and windows. */
static int keyval_copy(int oldobj, int keyval, void *extra_state, void *val_in, void *val_out,
                       int *flag)
{
    const f_keyval_t *k = extra_state;
    MPI_Fint o = oldobj, kv = keyval, f = 0, ierror = MPI_SUCCESS;
    if (k->copy1) {
        MPI_Fint e = (MPI_Fint)k->extra, in = (MPI_Fint)(intptr_t)val_in, out = 0;
        k->copy1(&o, &kv, &e, &in, &out, &f, &ierror);
        if (f && ierror == MPI_SUCCESS)
            *(void **)val_out = (void *)(intptr_t)out;
    } else {
        MPI_Aint e = k->extra, in = (MPI_Aint)val_in, out = 0;
        k->copy(&o, &kv, &e, &in, &out, &f, &ierror);
        if (f && ierror == MPI_SUCCESS)
            *(void **)val_out = (void *)out;
    }
    *flag = f != 0 && ierror == MPI_SUCCESS;
    return ierror;
}

static int keyval_delete(int obj, int keyval, void *val, void *extra_state)
{
    const f_keyval_t *k = extra_state;
    MPI_Fint o = obj, kv = keyval, ierror = MPI_SUCCESS;
    if (k->del1) {
        MPI_Fint e = (MPI_Fint)k->extra, v = (MPI_Fint)(intptr_t)val;
        k->del1(&o, &kv, &v, &e, &ierror);
    } else {
        MPI_Aint e = k->extra, v = (MPI_Aint)val;
        k->del(&o, &kv, &v, &e, &ierror);
    }
    return ierror;
}

static f_keyval_t *keyval_record(const char *call, MPI_Fint *ierror)
{
    f_keyval_t *k = calloc(1, sizeof *k);
    if (!k)
        *ierror = bdmpi_f_raise('c', MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_ERR_NO_MEM", call,
                                "out of memory for the Fortran callbacks' record");
    return k;
}

void mpi_comm_create_keyval_(f_copy_fn *copy_fn, f_delete_fn *delete_fn, MPI_Fint *keyval,
                             const MPI_Aint *extra_state, MPI_Fint *ierror);
void mpi_comm_create_keyval_(f_copy_fn *copy_fn, f_delete_fn *delete_fn, MPI_Fint *keyval,
                             const MPI_Aint *extra_state, MPI_Fint *ierror)
{
    f_keyval_t *k = keyval_record("MPI_Comm_create_keyval", ierror);
    if (!k)
        return;
    *k = (f_keyval_t){copy_fn, delete_fn, NULL, NULL, *extra_state};
    *ierror = MPI_Comm_create_keyval(keyval_copy, keyval_delete, keyval, k);
    if (*ierror != MPI_SUCCESS)
        free(k);
}

void mpi_type_create_keyval_(f_copy_fn *copy_fn, f_delete_fn *delete_fn, MPI_Fint *keyval,
                             const MPI_Aint *extra_state, MPI_Fint *ierror);
void mpi_type_create_keyval_(f_copy_fn *copy_fn, f_delete_fn *delete_fn, MPI_Fint *keyval,
                             const MPI_Aint *extra_state, MPI_Fint *ierror)
{
    f_keyval_t *k = keyval_record("MPI_Type_create_keyval", ierror);
    if (!k)
        return;
    *k = (f_keyval_t){copy_fn, delete_fn, NULL, NULL, *extra_state};
    *ierror = MPI_Type_create_keyval(keyval_copy, keyval_delete, keyval, k);
    if (*ierror != MPI_SUCCESS)
        free(k);
}

void mpi_win_create_keyval_(f_copy_fn *copy_fn, f_delete_fn *delete_fn, MPI_Fint *keyval,
                            const MPI_Aint *extra_state, MPI_Fint *ierror);
void mpi_win_create_keyval_(f_copy_fn *copy_fn, f_delete_fn *delete_fn, MPI_Fint *keyval,
                            const MPI_Aint *extra_state, MPI_Fint *ierror)
{
    f_keyval_t *k = keyval_record("MPI_Win_create_keyval", ierror);
    if (!k)
        return;
    *k = (f_keyval_t){copy_fn, delete_fn, NULL, NULL, *extra_state};
    *ierror = MPI_Win_create_keyval(keyval_copy, keyval_delete, keyval, k);
    if (*ierror != MPI_SUCCESS)
        free(k);
}

void mpi_keyval_create_(f_copy1_fn *copy_fn, f_delete1_fn *delete_fn, MPI_Fint *keyval,
                        const MPI_Fint *extra_state, MPI_Fint *ierror);
void mpi_keyval_create_(f_copy1_fn *copy_fn, f_delete1_fn *delete_fn, MPI_Fint *keyval,
                        const MPI_Fint *extra_state, MPI_Fint *ierror)
{
    f_keyval_t *k = keyval_record("MPI_Keyval_create", ierror);
    if (!k)
        return;
    *k = (f_keyval_t){NULL, NULL, copy_fn, delete_fn, *extra_state};
    *ierror = MPI_Keyval_create(keyval_copy, keyval_delete, keyval, k);
    if (*ierror != MPI_SUCCESS)
        free(k);
}

/* The predefined copy and delete procedures of Fortran (MPI 4.0 7.7.2):
 * one body for communicators, datatypes and windows. */
void mpi_comm_null_copy_fn_(const MPI_Fint *oldobj, const MPI_Fint *keyval,
                            const MPI_Aint *extra_state, const MPI_Aint *val_in, MPI_Aint *val_out,
                            MPI_Fint *flag, MPI_Fint *ierror);
void mpi_comm_null_copy_fn_(const MPI_Fint *oldobj, const MPI_Fint *keyval,
                            const MPI_Aint *extra_state, const MPI_Aint *val_in, MPI_Aint *val_out,
                            MPI_Fint *flag, MPI_Fint *ierror)
{
    (void)oldobj, (void)keyval, (void)extra_state, (void)val_in, (void)val_out;
    *flag = 0;
    *ierror = MPI_SUCCESS;
}

void mpi_comm_dup_fn_(const MPI_Fint *oldobj, const MPI_Fint *keyval, const MPI_Aint *extra_state,
                      const MPI_Aint *val_in, MPI_Aint *val_out, MPI_Fint *flag, MPI_Fint *ierror);
void mpi_comm_dup_fn_(const MPI_Fint *oldobj, const MPI_Fint *keyval, const MPI_Aint *extra_state,
                      const MPI_Aint *val_in, MPI_Aint *val_out, MPI_Fint *flag, MPI_Fint *ierror)
{
    (void)oldobj, (void)keyval, (void)extra_state;
    *val_out = *val_in;
    *flag = 1;
    *ierror = MPI_SUCCESS;
}

void mpi_comm_null_delete_fn_(const MPI_Fint *obj, const MPI_Fint *keyval, const MPI_Aint *val,
                              const MPI_Aint *extra_state, MPI_Fint *ierror);
void mpi_comm_null_delete_fn_(const MPI_Fint *obj, const MPI_Fint *keyval, const MPI_Aint *val,
                              const MPI_Aint *extra_state, MPI_Fint *ierror)
{
    (void)obj, (void)keyval, (void)val, (void)extra_state;
    *ierror = MPI_SUCCESS;
}

void mpi_type_null_copy_fn_(const MPI_Fint *, const MPI_Fint *, const MPI_Aint *, const MPI_Aint *,
                            MPI_Aint *, MPI_Fint *, MPI_Fint *)
    __attribute__((alias("mpi_comm_null_copy_fn_")));
void mpi_win_null_copy_fn_(const MPI_Fint *, const MPI_Fint *, const MPI_Aint *, const MPI_Aint *,
                           MPI_Aint *, MPI_Fint *, MPI_Fint *)
    __attribute__((alias("mpi_comm_null_copy_fn_")));
void mpi_type_dup_fn_(const MPI_Fint *, const MPI_Fint *, const MPI_Aint *, const MPI_Aint *,
                      MPI_Aint *, MPI_Fint *, MPI_Fint *)
    __attribute__((alias("mpi_comm_dup_fn_")));
void mpi_win_dup_fn_(const MPI_Fint *, const MPI_Fint *, const MPI_Aint *, const MPI_Aint *,
                     MPI_Aint *, MPI_Fint *, MPI_Fint *) __attribute__((alias("mpi_comm_dup_fn_")));
void mpi_type_null_delete_fn_(const MPI_Fint *, const MPI_Fint *, const MPI_Aint *,
                              const MPI_Aint *, MPI_Fint *)
    __attribute__((alias("mpi_comm_null_delete_fn_")));
void mpi_win_null_delete_fn_(const MPI_Fint *, const MPI_Fint *, const MPI_Aint *, const MPI_Aint *,
                             MPI_Fint *) __attribute__((alias("mpi_comm_null_delete_fn_")));

/* The MPI-1 predefined procedures, on INTEGER values. */
void mpi_null_copy_fn_(const MPI_Fint *oldcomm, const MPI_Fint *keyval, const MPI_Fint *extra_state,
                       const MPI_Fint *val_in, MPI_Fint *val_out, MPI_Fint *flag, MPI_Fint *ierror);
void mpi_null_copy_fn_(const MPI_Fint *oldcomm, const MPI_Fint *keyval, const MPI_Fint *extra_state,
                       const MPI_Fint *val_in, MPI_Fint *val_out, MPI_Fint *flag, MPI_Fint *ierror)
{
    (void)oldcomm, (void)keyval, (void)extra_state, (void)val_in, (void)val_out;
    *flag = 0;
    *ierror = MPI_SUCCESS;
}

void mpi_dup_fn_(const MPI_Fint *oldcomm, const MPI_Fint *keyval, const MPI_Fint *extra_state,
                 const MPI_Fint *val_in, MPI_Fint *val_out, MPI_Fint *flag, MPI_Fint *ierror);
void mpi_dup_fn_(const MPI_Fint *oldcomm, const MPI_Fint *keyval, const MPI_Fint *extra_state,
                 const MPI_Fint *val_in, MPI_Fint *val_out, MPI_Fint *flag, MPI_Fint *ierror)
{
    (void)oldcomm, (void)keyval, (void)extra_state;
    *val_out = *val_in;
    *flag = 1;
    *ierror = MPI_SUCCESS;
}

void mpi_null_delete_fn_(const MPI_Fint *comm, const MPI_Fint *keyval, const MPI_Fint *val,
                         const MPI_Fint *extra_state, MPI_Fint *ierror);
void mpi_null_delete_fn_(const MPI_Fint *comm, const MPI_Fint *keyval, const MPI_Fint *val,
                         const MPI_Fint *extra_state, MPI_Fint *ierror)
{
    (void)comm, (void)keyval, (void)val, (void)extra_state;
    *ierror = MPI_SUCCESS;
}

/* ---------------------------------------------------------------- generalized requests */

typedef void f_query_fn(const MPI_Aint *extra_state, MPI_Fint *status, MPI_Fint *ierror);
typedef void f_free_fn(const MPI_Aint *extra_state, MPI_Fint *ierror);
typedef void f_cancel_fn(const MPI_Aint *extra_state, const MPI_Fint *complete, MPI_Fint *ierror);
typedef struct {
    f_query_fn *query;
    f_free_fn *free_fn;
    f_cancel_fn *cancel;
    MPI_Aint extra;
} f_greq_t;

/* A Fortran status (and mpi_f08's TYPE(MPI_Status)) is a C status's bytes. */
static int greq_query(void *extra_state, MPI_Status *status)
{
    const f_greq_t *g = extra_state;
    MPI_Aint e = g->extra;
    MPI_Fint ierror = MPI_SUCCESS;
    g->query(&e, (MPI_Fint *)status, &ierror);
    return ierror;
}

static int greq_free(void *extra_state)
{
    f_greq_t *g = extra_state;
    MPI_Aint e = g->extra;
    MPI_Fint ierror = MPI_SUCCESS;
    g->free_fn(&e, &ierror);
    free(g);
    return ierror;
}

static int greq_cancel(void *extra_state, int complete)
{
    const f_greq_t *g = extra_state;
    MPI_Aint e = g->extra;
    MPI_Fint c = complete != 0, ierror = MPI_SUCCESS;
    g->cancel(&e, &c, &ierror);
    return ierror;
}

void mpi_grequest_start_(f_query_fn *query_fn, f_free_fn *free_fn, f_cancel_fn *cancel_fn,
                         const MPI_Aint *extra_state, MPI_Fint *request, MPI_Fint *ierror);
void mpi_grequest_start_(f_query_fn *query_fn, f_free_fn *free_fn, f_cancel_fn *cancel_fn,
                         const MPI_Aint *extra_state, MPI_Fint *request, MPI_Fint *ierror)
{
    f_greq_t *g = malloc(sizeof *g);
    if (!g) {
        *ierror =
            bdmpi_f_raise('c', MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_ERR_NO_MEM",
                          "MPI_Grequest_start", "out of memory for the Fortran callbacks' record");
        return;
    }
    *g = (f_greq_t){query_fn, free_fn, cancel_fn, *extra_state};
    *ierror = MPI_Grequest_start(query_fn ? greq_query : NULL, free_fn ? greq_free : NULL,
                                 cancel_fn ? greq_cancel : NULL, g, request);
    if (*ierror != MPI_SUCCESS)
        free(g);
}

/* ---------------------------------------------------------------- data representations */

typedef void f_conversion_fn(void *userbuf, const MPI_Fint *datatype, const MPI_Fint *count,
                             void *filebuf, const MPI_Offset *position, const MPI_Aint *extra_state,
                             MPI_Fint *ierror);
typedef void f_extent_fn(const MPI_Fint *datatype, MPI_Aint *extent, const MPI_Aint *extra_state,
                         MPI_Fint *ierror);
typedef struct {
    f_conversion_fn *read_fn, *write_fn;
    f_extent_fn *extent_fn;
    MPI_Aint extra;
} f_datarep_t;

/* MPI_CONVERSION_FN_NULL of Fortran: a procedure that stands for "no
 * conversion" and is never called (it is replaced by the C NULL). */
void mpi_conversion_fn_null_(void *userbuf, const MPI_Fint *datatype, const MPI_Fint *count,
                             void *filebuf, const MPI_Offset *position, const MPI_Aint *extra_state,
                             MPI_Fint *ierror);
void mpi_conversion_fn_null_(void *userbuf, const MPI_Fint *datatype, const MPI_Fint *count,
                             void *filebuf, const MPI_Offset *position, const MPI_Aint *extra_state,
                             MPI_Fint *ierror)
{
    (void)userbuf, (void)datatype, (void)count, (void)filebuf, (void)position, (void)extra_state;
    *ierror = MPI_ERR_CONVERSION;
}

static int datarep_read(void *userbuf, MPI_Datatype datatype, int count, void *filebuf,
                        MPI_Offset position, void *extra_state)
{
    const f_datarep_t *r = extra_state;
    MPI_Fint t = datatype, n = count, ierror = MPI_SUCCESS;
    MPI_Aint e = r->extra;
    r->read_fn(userbuf, &t, &n, filebuf, &position, &e, &ierror);
    return ierror;
}

static int datarep_write(void *userbuf, MPI_Datatype datatype, int count, void *filebuf,
                         MPI_Offset position, void *extra_state)
{
    const f_datarep_t *r = extra_state;
    MPI_Fint t = datatype, n = count, ierror = MPI_SUCCESS;
    MPI_Aint e = r->extra;
    r->write_fn(userbuf, &t, &n, filebuf, &position, &e, &ierror);
    return ierror;
}

static int datarep_extent(MPI_Datatype datatype, MPI_Aint *extent, void *extra_state)
{
    const f_datarep_t *r = extra_state;
    MPI_Fint t = datatype, ierror = MPI_SUCCESS;
    MPI_Aint e = r->extra;
    r->extent_fn(&t, extent, &e, &ierror);
    return ierror;
}

void mpi_register_datarep_(const char *datarep, f_conversion_fn *read_fn, f_conversion_fn *write_fn,
                           f_extent_fn *extent_fn, const MPI_Aint *extra_state, MPI_Fint *ierror,
                           size_t datarep_len);
void mpi_register_datarep_(const char *datarep, f_conversion_fn *read_fn, f_conversion_fn *write_fn,
                           f_extent_fn *extent_fn, const MPI_Aint *extra_state, MPI_Fint *ierror,
                           size_t datarep_len)
{
    const char *call = "MPI_Register_datarep";
    while (datarep_len > 0 && datarep[datarep_len - 1] == ' ')
        datarep_len--;
    char *name = malloc(datarep_len + 1);
    f_datarep_t *r = malloc(sizeof *r);
    if (!name || !r) {
        free(name);
        free(r);
        *ierror = bdmpi_f_raise('f', MPI_FILE_NULL, MPI_ERR_NO_MEM, "MPI_ERR_NO_MEM", call,
                                "out of memory for the Fortran callbacks' record");
        return;
    }
    memcpy(name, datarep, datarep_len);
    name[datarep_len] = 0;
    if (read_fn == mpi_conversion_fn_null_)
        read_fn = NULL;
    if (write_fn == mpi_conversion_fn_null_)
        write_fn = NULL;
    *r = (f_datarep_t){read_fn, write_fn, extent_fn, *extra_state};
    *ierror = MPI_Register_datarep(name, read_fn ? datarep_read : MPI_CONVERSION_FN_NULL,
                                   write_fn ? datarep_write : MPI_CONVERSION_FN_NULL,
                                   extent_fn ? datarep_extent : NULL, r);
    free(name);
    if (*ierror != MPI_SUCCESS)
        free(r);
}

/* The large-count form: conversion functions with an MPI_Count count. */
typedef void f_conversion_fn_c(void *userbuf, const MPI_Fint *datatype, const MPI_Count *count,
                               void *filebuf, const MPI_Offset *position,
                               const MPI_Aint *extra_state, MPI_Fint *ierror);
typedef struct {
    f_conversion_fn_c *read_fn, *write_fn;
    f_extent_fn *extent_fn;
    MPI_Aint extra;
} f_datarep_c_t;

void mpi_conversion_fn_null_c_(void *userbuf, const MPI_Fint *datatype, const MPI_Count *count,
                               void *filebuf, const MPI_Offset *position,
                               const MPI_Aint *extra_state, MPI_Fint *ierror);
void mpi_conversion_fn_null_c_(void *userbuf, const MPI_Fint *datatype, const MPI_Count *count,
                               void *filebuf, const MPI_Offset *position,
                               const MPI_Aint *extra_state, MPI_Fint *ierror)
{
    (void)userbuf, (void)datatype, (void)count, (void)filebuf, (void)position, (void)extra_state;
    *ierror = MPI_ERR_CONVERSION;
}

static int datarep_read_c(void *userbuf, MPI_Datatype datatype, MPI_Count count, void *filebuf,
                          MPI_Offset position, void *extra_state)
{
    const f_datarep_c_t *r = extra_state;
    MPI_Fint t = datatype, ierror = MPI_SUCCESS;
    MPI_Aint e = r->extra;
    r->read_fn(userbuf, &t, &count, filebuf, &position, &e, &ierror);
    return ierror;
}

static int datarep_write_c(void *userbuf, MPI_Datatype datatype, MPI_Count count, void *filebuf,
                           MPI_Offset position, void *extra_state)
{
    const f_datarep_c_t *r = extra_state;
    MPI_Fint t = datatype, ierror = MPI_SUCCESS;
    MPI_Aint e = r->extra;
    r->write_fn(userbuf, &t, &count, filebuf, &position, &e, &ierror);
    return ierror;
}

static int datarep_extent_c(MPI_Datatype datatype, MPI_Aint *extent, void *extra_state)
{
    const f_datarep_c_t *r = extra_state;
    MPI_Fint t = datatype, ierror = MPI_SUCCESS;
    MPI_Aint e = r->extra;
    r->extent_fn(&t, extent, &e, &ierror);
    return ierror;
}

void mpi_register_datarep_c_(const char *datarep, f_conversion_fn_c *read_fn,
                             f_conversion_fn_c *write_fn, f_extent_fn *extent_fn,
                             const MPI_Aint *extra_state, MPI_Fint *ierror, size_t datarep_len);
void mpi_register_datarep_c_(const char *datarep, f_conversion_fn_c *read_fn,
                             f_conversion_fn_c *write_fn, f_extent_fn *extent_fn,
                             const MPI_Aint *extra_state, MPI_Fint *ierror, size_t datarep_len)
{
    const char *call = "MPI_Register_datarep_c";
    while (datarep_len > 0 && datarep[datarep_len - 1] == ' ')
        datarep_len--;
    char *name = malloc(datarep_len + 1);
    f_datarep_c_t *r = malloc(sizeof *r);
    if (!name || !r) {
        free(name);
        free(r);
        *ierror = bdmpi_f_raise('f', MPI_FILE_NULL, MPI_ERR_NO_MEM, "MPI_ERR_NO_MEM", call,
                                "out of memory for the Fortran callbacks' record");
        return;
    }
    memcpy(name, datarep, datarep_len);
    name[datarep_len] = 0;
    if (read_fn == mpi_conversion_fn_null_c_)
        read_fn = NULL;
    if (write_fn == mpi_conversion_fn_null_c_)
        write_fn = NULL;
    *r = (f_datarep_c_t){read_fn, write_fn, extent_fn, *extra_state};
    *ierror = MPI_Register_datarep_c(name, read_fn ? datarep_read_c : MPI_CONVERSION_FN_NULL_C,
                                     write_fn ? datarep_write_c : MPI_CONVERSION_FN_NULL_C,
                                     extent_fn ? datarep_extent_c : NULL, r);
    free(name);
    if (*ierror != MPI_SUCCESS)
        free(r);
}

/* ---------------------------------------------------------------- dynamic processes */

/* The sentinels of the spawn calls: common blocks recognised by address
 * (of the size Fortran declares them, gfortran's alignment). */
char bdmpi_argv_null_[1] __attribute__((aligned(16)));
char bdmpi_argvs_null_[1] __attribute__((aligned(16)));
MPI_Fint bdmpi_errcodes_ignore_[1] __attribute__((aligned(16)));

/* A Fortran string of len bytes without its trailing blanks, as a C string
 * (NULL when out of memory). */
static char *f_cstr(const char *s, size_t len)
{
    while (len > 0 && s[len - 1] == ' ')
        len--;
    char *c = malloc(len + 1);
    if (c) {
        memcpy(c, s, len);
        c[len] = 0;
    }
    return c;
}

static void free_argv(char **argv)
{
    for (int i = 0; argv && argv[i]; i++)
        free(argv[i]);
    free(argv);
}

/* The C argv of a Fortran one: the elements (each len bytes, every
 * stride-th element of the array) up to the first blank one (MPI 4.0
 * 11.8.2).  *err is set when out of memory. */
static char **f_argv(const char *a, size_t len, size_t stride, int *err)
{
    int n = 0;
    for (;;) {
        const char *e = a + (size_t)n * stride * len;
        size_t k = 0;
        while (k < len && e[k] == ' ')
            k++;
        if (k == len)
            break;
        n++;
    }
    char **argv = calloc((size_t)n + 1, sizeof *argv);
    for (int i = 0; argv && i < n; i++)
        if (!(argv[i] = f_cstr(a + (size_t)i * stride * len, len))) {
            free_argv(argv);
            argv = NULL;
        }
    *err = !argv;
    return argv;
}

/* Only the root's command and argv are significant: the others may pass
 * anything, so they are read at the root only. */
void mpi_comm_spawn_(const char *command, const char *argv, const MPI_Fint *maxprocs,
                     const MPI_Fint *info, const MPI_Fint *root, const MPI_Fint *comm,
                     MPI_Fint *intercomm, MPI_Fint *array_of_errcodes, MPI_Fint *ierror,
                     size_t command_len, size_t argv_len);
void mpi_comm_spawn_(const char *command, const char *argv, const MPI_Fint *maxprocs,
                     const MPI_Fint *info, const MPI_Fint *root, const MPI_Fint *comm,
                     MPI_Fint *intercomm, MPI_Fint *array_of_errcodes, MPI_Fint *ierror,
                     size_t command_len, size_t argv_len)
{
    int rank = -1, err = 0;
    MPI_Comm_rank(*comm, &rank);
    char *cmd = NULL, **cargv = NULL;
    if (rank == *root) {
        cmd = f_cstr(command, command_len);
        if (argv != bdmpi_argv_null_)
            cargv = f_argv(argv, argv_len, 1, &err);
        if (!cmd || err) {
            free(cmd);
            free_argv(cargv);
            *ierror = bdmpi_f_raise('c', *comm, MPI_ERR_NO_MEM, "MPI_ERR_NO_MEM", "MPI_Comm_spawn",
                                    "out of memory for the command line");
            return;
        }
    }
    int *codes =
        array_of_errcodes == bdmpi_errcodes_ignore_ ? MPI_ERRCODES_IGNORE : array_of_errcodes;
    *ierror = MPI_Comm_spawn(cmd ? cmd : "", cargv ? cargv : MPI_ARGV_NULL, *maxprocs, *info, *root,
                             *comm, intercomm, codes);
    free(cmd);
    free_argv(cargv);
}

/* array_of_argv is CHARACTER*(*) ARRAY_OF_ARGV(COUNT, *): command i's
 * arguments are row i, every count-th element from the i-th. */
void mpi_comm_spawn_multiple_(const MPI_Fint *count, const char *array_of_commands,
                              const char *array_of_argv, const MPI_Fint *array_of_maxprocs,
                              const MPI_Fint *array_of_info, const MPI_Fint *root,
                              const MPI_Fint *comm, MPI_Fint *intercomm,
                              MPI_Fint *array_of_errcodes, MPI_Fint *ierror, size_t commands_len,
                              size_t argv_len);
void mpi_comm_spawn_multiple_(const MPI_Fint *count, const char *array_of_commands,
                              const char *array_of_argv, const MPI_Fint *array_of_maxprocs,
                              const MPI_Fint *array_of_info, const MPI_Fint *root,
                              const MPI_Fint *comm, MPI_Fint *intercomm,
                              MPI_Fint *array_of_errcodes, MPI_Fint *ierror, size_t commands_len,
                              size_t argv_len)
{
    int rank = -1, n = *count > 0 ? *count : 0, err = 0;
    MPI_Comm_rank(*comm, &rank);
    char **cmds = NULL, ***argvs = NULL;
    if (rank == *root && n > 0) {
        cmds = calloc((size_t)n, sizeof *cmds);
        err = !cmds;
        if (!err && array_of_argv != bdmpi_argvs_null_) {
            argvs = calloc((size_t)n, sizeof *argvs);
            err = !argvs;
        }
        for (int i = 0; i < n && !err; i++) {
            err = !(cmds[i] = f_cstr(array_of_commands + (size_t)i * commands_len, commands_len));
            if (!err && argvs)
                argvs[i] = f_argv(array_of_argv + (size_t)i * argv_len, argv_len, (size_t)n, &err);
        }
    }
    if (!err) {
        int *codes =
            array_of_errcodes == bdmpi_errcodes_ignore_ ? MPI_ERRCODES_IGNORE : array_of_errcodes;
        *ierror =
            MPI_Comm_spawn_multiple(*count, cmds, argvs ? argvs : MPI_ARGVS_NULL, array_of_maxprocs,
                                    array_of_info, *root, *comm, intercomm, codes);
    } else {
        *ierror = bdmpi_f_raise('c', *comm, MPI_ERR_NO_MEM, "MPI_ERR_NO_MEM",
                                "MPI_Comm_spawn_multiple", "out of memory for the command lines");
    }
    for (int i = 0; i < n && cmds; i++)
        free(cmds[i]);
    for (int i = 0; i < n && argvs; i++)
        free_argv(argvs[i]);
    free(cmds);
    free(argvs);
}
