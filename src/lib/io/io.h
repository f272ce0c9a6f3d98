/* libbdmpi, I/O room (MPI 3.1 chapter 13, MPI-IO): file handles, views,
 * data access and shared file pointers, at the level of mpi/ and built on
 * the rooms below it (objects/, core/).  See docs/design.md, "MPI-IO". */
#ifndef BDL_IO_H
#define BDL_IO_H

#include <stdint.h>

#include "core.h"
#include "dt.h"
#include "objects.h"
#include "request.h"

/* Data representations of a view. */
enum { BDL_REP_NATIVE, BDL_REP_EXTERNAL32, BDL_REP_USER };

typedef struct bdl_file {
    int used;
    int fd;
    MPI_Comm comm; /* private duplicate of the communicator it was opened on */
    int rank, size;
    int amode;
    char *path; /* as opened (prefix removed), for DELETE_ON_CLOSE and messages */
    MPI_Errhandler errh;
    MPI_Info info; /* hints given (MPI_INFO_NULL: none) */
    int atomic;

    /* The view (13.3): disp, etype, filetype and data representation.
     * etype_h and ftype_h are hidden handles (bdl_dt_alias) so the program
     * may free its own; esize is an etype's size in the file. */
    MPI_Offset disp;
    MPI_Datatype etype_h, ftype_h;
    bdl_dt_t *etype, *ftype;
    int rep;  /* BDL_REP_* */
    int urep; /* BDL_REP_USER: index of the registered representation */
    uint64_t esize;
    /* The filetype's data in the file is contiguous from disp + fstart:
     * view byte v lies at disp + fstart + v (the default view is). */
    int fcontig;
    int64_t fstart;

    MPI_Offset pos; /* individual file pointer, in etypes */

    /* Shared file pointer (13.4.4): in memory for a one-process file,
     * otherwise an 8-byte counter in a hidden file every process opened
     * (shfd), updated under an fcntl lock (io/shared.c). */
    int shfd;
    MPI_Offset shpos;

    /* A split collective in progress (13.4.5): its kind (BDL_SPLIT_*, 0:
     * none) and result. */
    int split;
    int split_err;
    MPI_Status split_status;
} bdl_file_t;

/* file.c */
bdl_file_t *bdl_file_get(MPI_File fh); /* NULL unless fh is an open file */
/* Report an error through fh's error handler (MPI_FILE_NULL's when fh is
 * not an open file); returns code when the handler returns. */
int bdl_file_error(MPI_File fh, int code, const char *call, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The error class for a failed system call's errno. */
int bdl_io_errno_class(int err);

/* view.c: set the default view (disp 0, MPI_BYTE, MPI_BYTE, "native"). */
void bdl_view_default(bdl_file_t *f);
void bdl_view_release(bdl_file_t *f);
/* The view's byte position v (bytes of etypes from the view's start) in
 * the file, and the file byte position after which the data of file byte
 * size `bytes` ends, as view bytes (the view bytes that lie before it). */
int64_t bdl_view_file_offset(const bdl_file_t *f, uint64_t v);
/* access.c: the contiguous piece of the file from view byte v on, at most
 * max bytes: its file offset and length. */
void bdl_view_segment(const bdl_file_t *f, uint64_t v, uint64_t max, int64_t *off, uint64_t *len);
uint64_t bdl_view_bytes_below(const bdl_file_t *f, int64_t bytes);

/* view.c: bytes of one element of t in f's data representation. */
uint64_t bdl_view_rep_size(const bdl_file_t *f, const bdl_dt_t *t);
/* Transfer with conversion to or from f's (non-native) representation:
 * see bdl_io_transfer; returns memory bytes or -errno (-EILSEQ: a
 * conversion failed), the file bytes in *fmoved. */
int64_t bdl_view_convert_rw(bdl_file_t *f, int write, uint64_t v, void *buf, uint64_t count,
                            const bdl_dt_t *t, MPI_Datatype dt, uint64_t *fmoved);

/* file.c: the verdict of a collective call over comm: every process passes
 * its own error class (0: none) and a value that must be the same
 * everywhere; returns the largest class, MPI_ERR_NOT_SAME when the values
 * differ (and no process had an error of its own), or an MPI error of the
 * reduction itself. */
int bdl_io_agree(MPI_Comm comm, int err, long long same);

/* access.c: transfer count elements of memtype t (handle dt) at buf to
 * (write) or from the view at etype position pos; *moved gets the memory
 * bytes moved, *fmoved the file bytes.  Returns MPI_SUCCESS or an error
 * class, with *msg naming the failure. */
int bdl_io_transfer(bdl_file_t *f, int write, MPI_Offset pos, void *buf, uint64_t count,
                    const bdl_dt_t *t, MPI_Datatype dt, uint64_t *moved, uint64_t *fmoved,
                    const char **msg);
/* File bytes of count elements of t in f's representation. */
uint64_t bdl_io_file_bytes(const bdl_file_t *f, const bdl_dt_t *t, uint64_t count);
/* n bytes between contiguous memory mem (managed memory prepared piece by
 * piece) and view bytes [v, v + n): the bytes moved (fewer only when a read
 * meets the end of the file), or -errno. */
int64_t bdl_io_view_rw(bdl_file_t *f, int write, uint64_t v, char *mem, uint64_t n);
/* One contiguous piece: len bytes at file offset off to (write) or from
 * mem, in calls of at most 8 MiB, managed memory prepared step by step;
 * the bytes moved (fewer only when a read meets the end of the file), or
 * -errno. */
int64_t bdl_io_piece_rw(bdl_file_t *f, int write, int64_t off, char *mem, uint64_t len);
/* Bounce buffers outside the memory manager (mmap), BDL_IO_BOUNCE bytes
 * at most per transfer. */
#define BDL_IO_BOUNCE ((uint64_t)4 << 20)
void *bdl_io_bounce(uint64_t n);
void bdl_io_unbounce(void *p, uint64_t n);

/* Where an access starts: an explicit offset, the individual or the
 * shared file pointer, or (ordered access) a position the shared file
 * pointer gave already. */
enum { BDL_IO_AT, BDL_IO_INDIV, BDL_IO_SHARED, BDL_IO_ORDERED };
/* The checks every access makes (amode, count, offset, datatype), errors
 * reported on fh for call; *t gets the memory datatype. */
int bdl_io_check(bdl_file_t *f, MPI_File fh, const char *call, int write, int where,
                 MPI_Offset offset, int count, MPI_Datatype dt, bdl_dt_t **t);
/* One blocking access (where: BDL_IO_*; offset for BDL_IO_AT), the whole
 * call: checks, file pointer update, status, errors reported. */
int bdl_io_access(MPI_File fh, const char *call, int write, int where, MPI_Offset offset, void *buf,
                  int count, MPI_Datatype dt, MPI_Status *status);
/* coll.c: a blocking collective access (_all, _at_all, split begin),
 * aggregated in two phases when that pays, else bdl_io_access.  refused:
 * 0, or the error class of an error the caller has reported already (this
 * process then only takes part in the agreement, and returns refused). */
int bdl_io_access_all(MPI_File fh, const char *call, int write, int where, MPI_Offset offset,
                      void *buf, int count, MPI_Datatype dt, MPI_Status *status, int refused);
/* The same as a nonblocking call: done now, its request complete already. */
int bdl_io_iaccess(MPI_File fh, const char *call, int write, int where, MPI_Offset offset,
                   void *buf, int count, MPI_Datatype dt, MPI_Request *request);
/* The view's end of file as an etype position (a partial etype counts);
 * 0 or -errno. */
int bdl_io_eof_pos(bdl_file_t *f, MPI_Offset *pos);
/* The position a seek from cur by offset with whence gives; errors
 * (a bad whence, a negative result) reported on fh. */
int bdl_io_seek_pos(bdl_file_t *f, MPI_File fh, const char *call, MPI_Offset cur, MPI_Offset offset,
                    int whence, MPI_Offset *out);

/* shared.c: the shared file pointer. */
int bdl_shared_open(bdl_file_t *f, const char *call);
void bdl_shared_close(bdl_file_t *f);
/* Add delta etypes to it and return its value before (-1: error, errno set). */
MPI_Offset bdl_shared_fetch_add(bdl_file_t *f, MPI_Offset delta);
int bdl_shared_set(bdl_file_t *f, MPI_Offset pos);

#endif
