/* The shared file pointer (MPI 3.1 13.4.4).
 *
 * A file opened by one process keeps it in memory.  Otherwise rank 0
 * creates a small hidden file (".bdmpi-shfp-XXXXXX" next to the data file,
 * or in the job directory when that directory is not writable), every
 * process opens it, and rank 0 unlinks it at once: the open descriptors
 * keep it alive and nothing is left behind, whatever way the job ends.  Its
 * first 8 bytes are the pointer, in etypes of the current view; a process
 * reads and updates it under an exclusive fcntl lock (open file description
 * locks, so the processes of one node and the masters of several nodes on
 * one machine, or on a file system with working fcntl locks, serialize
 * alike).  A process holds the lock only across a pread and a pwrite, never
 * while it waits in MPI, so no rank can stall the others. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io.h"

/* mkostemp in dir; -1 and errno on failure. */
static int make_counter(const char *dir, char *name, size_t cap)
{
    if ((size_t)snprintf(name, cap, "%s/.bdmpi-shfp-XXXXXX", dir) >= cap) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return mkostemp(name, O_CLOEXEC);
}

int bdl_shared_open(bdl_file_t *f, const char *call)
{
    (void)call;
    f->shfd = -1;
    f->shpos = 0;
    if (f->size == 1)
        return MPI_SUCCESS;
    char name[PATH_MAX] = "";
    int err = 0, fd = -1;
    if (f->rank == 0) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s", f->path);
        char *slash = strrchr(dir, '/');
        if (!slash)
            snprintf(dir, sizeof dir, ".");
        else if (slash == dir)
            dir[1] = 0;
        else
            *slash = 0;
        fd = make_counter(dir, name, sizeof name);
        if (fd < 0)
            fd = make_counter(bdl_g.hdr->jobdir, name, sizeof name);
        int64_t zero = 0;
        if (fd < 0 || pwrite(fd, &zero, sizeof zero, 0) != (ssize_t)sizeof zero)
            err = bdl_io_errno_class(errno);
        if (err)
            name[0] = 0;
    }
    int rc = MPI_Bcast(name, sizeof name, MPI_CHAR, 0, f->comm);
    if (rc)
        return rc;
    if (f->rank != 0) {
        if (!name[0])
            err = MPI_ERR_IO;
        else if ((fd = open(name, O_RDWR | O_CLOEXEC)) < 0)
            err = bdl_io_errno_class(errno);
    }
    int all = 0;
    rc = MPI_Allreduce(&err, &all, 1, MPI_INT, MPI_MAX, f->comm);
    if (f->rank == 0 && name[0])
        unlink(name);
    if (rc || all) {
        if (fd >= 0)
            close(fd);
        return rc ? rc : all;
    }
    f->shfd = fd;
    return MPI_SUCCESS;
}

void bdl_shared_close(bdl_file_t *f)
{
    if (f->shfd >= 0)
        close(f->shfd);
    f->shfd = -1;
}

static int lock(int fd, short type)
{
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = 0, .l_len = 8};
    while (fcntl(fd, F_OFD_SETLKW, &fl) < 0)
        if (errno != EINTR)
            return -1;
    return 0;
}

MPI_Offset bdl_shared_fetch_add(bdl_file_t *f, MPI_Offset delta)
{
    if (f->shfd < 0) {
        MPI_Offset v = f->shpos;
        f->shpos += delta;
        return v;
    }
    if (lock(f->shfd, F_WRLCK) < 0)
        return -1;
    int64_t v = 0;
    int ok = pread(f->shfd, &v, sizeof v, 0) == (ssize_t)sizeof v;
    if (ok && delta) {
        int64_t n = v + delta;
        ok = pwrite(f->shfd, &n, sizeof n, 0) == (ssize_t)sizeof n;
    }
    int e = errno;
    lock(f->shfd, F_UNLCK);
    errno = ok ? 0 : e ? e : EIO;
    return ok ? v : -1;
}

int bdl_shared_set(bdl_file_t *f, MPI_Offset pos)
{
    if (f->shfd < 0) {
        f->shpos = pos;
        return 0;
    }
    if (lock(f->shfd, F_WRLCK) < 0)
        return -1;
    int64_t v = pos;
    int ok = pwrite(f->shfd, &v, sizeof v, 0) == (ssize_t)sizeof v;
    int e = errno;
    lock(f->shfd, F_UNLCK);
    errno = e;
    return ok ? 0 : -1;
}

/* ---------------------------------------------------------------- the calls */

#define FILE_OR_ERR(call, fh, f)                                                                   \
    BDL_CHECK_INIT(call);                                                                          \
    bdl_file_t *f = bdl_file_get(fh);                                                              \
    if (!f)                                                                                        \
        return bdl_file_error(MPI_FILE_NULL, MPI_ERR_FILE, call, "invalid file handle %d", fh);

int MPI_File_read_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                         MPI_Status *status)
{
    BDL_MT_GUARD;
    return bdl_io_access(fh, "MPI_File_read_shared", 0, BDL_IO_SHARED, 0, buf, count, datatype,
                         status);
}

int MPI_File_write_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                          MPI_Status *status)
{
    BDL_MT_GUARD;
    return bdl_io_access(fh, "MPI_File_write_shared", 1, BDL_IO_SHARED, 0, (void *)buf, count,
                         datatype, status);
}

int MPI_File_iread_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                          MPI_Request *request)
{
    BDL_MT_GUARD;
    return bdl_io_iaccess(fh, "MPI_File_iread_shared", 0, BDL_IO_SHARED, 0, buf, count, datatype,
                          request);
}

int MPI_File_iwrite_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                           MPI_Request *request)
{
    BDL_MT_GUARD;
    return bdl_io_iaccess(fh, "MPI_File_iwrite_shared", 1, BDL_IO_SHARED, 0, (void *)buf, count,
                          datatype, request);
}

int MPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_get_position_shared";
    FILE_OR_ERR(call, fh, f);
    if (!offset)
        return bdl_file_error(fh, MPI_ERR_ARG, call, "offset is NULL");
    MPI_Offset v = bdl_shared_fetch_add(f, 0);
    if (v < 0)
        return bdl_file_error(fh, bdl_io_errno_class(errno), call,
                              "shared file pointer of \"%s\": %s", f->path, strerror(errno));
    *offset = v;
    return MPI_SUCCESS;
}

/* Collective: the same offset and whence everywhere; rank 0 moves the
 * pointer, and nobody returns before it has. */
int MPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_seek_shared";
    FILE_OR_ERR(call, fh, f);
    int err = 0;
    if (f->amode & MPI_MODE_SEQUENTIAL)
        err = MPI_ERR_UNSUPPORTED_OPERATION;
    int all = bdl_io_agree(f->comm, err, offset * 1024 + (whence & 1023));
    if (all)
        return bdl_file_error(fh, all, call, "%s",
                              err ? "the file was opened with MPI_MODE_SEQUENTIAL"
                                  : "offset or whence differ among the processes");
    int res[2] = {0, 0};
    if (f->rank == 0) {
        MPI_Offset cur = bdl_shared_fetch_add(f, 0), to;
        if (cur < 0)
            res[0] = bdl_io_errno_class(errno), res[1] = errno;
        else if ((res[0] = bdl_io_seek_pos(f, fh, call, cur, offset, whence, &to)) == 0 &&
                 bdl_shared_set(f, to) < 0)
            res[0] = bdl_io_errno_class(errno), res[1] = errno;
    }
    if (f->size > 1)
        MPI_Bcast(res, 2, MPI_INT, 0, f->comm);
    if (res[0] && f->rank == 0 && !res[1])
        return res[0]; /* bdl_io_seek_pos reported it */
    if (res[0])
        return bdl_file_error(fh, res[0], call, "seek of the shared file pointer of \"%s\" %s%s",
                              f->path, res[1] ? ": " : "failed on rank 0",
                              res[1] ? strerror(res[1]) : "");
    return MPI_SUCCESS;
}

/* Ordered access (13.4.4): the processes' accesses follow each other in
 * rank order from the shared file pointer, which moves past them all.
 * One allgather of the sizes, one update of the pointer by rank 0, one
 * broadcast of where the run starts. */
/* refused: as bdl_io_access_all's (an error reported by the caller). */
static int ordered(MPI_File fh, const char *call, int write, void *buf, int count, MPI_Datatype dt,
                   MPI_Status *status, int refused)
{
    FILE_OR_ERR(call, fh, f);
    bdl_dt_t *t;
    int rc = refused ? refused : bdl_io_check(f, fh, call, write, BDL_IO_ORDERED, 0, count, dt, &t);
    int all = bdl_io_agree(f->comm, rc, 0);
    if (rc)
        return rc;
    if (all)
        return bdl_file_error(fh, all, call, "another process's arguments are wrong");
    long long mine = (long long)(bdl_io_file_bytes(f, t, (uint64_t)count) / f->esize);
    long long *n = malloc((size_t)f->size * sizeof *n);
    if (!n)
        return bdl_file_error(fh, MPI_ERR_NO_MEM, call, "out of memory");
    MPI_Allgather(&mine, 1, MPI_LONG_LONG, n, 1, MPI_LONG_LONG, f->comm);
    long long before = 0, total = 0;
    for (int r = 0; r < f->size; r++) {
        if (r < f->rank)
            before += n[r];
        total += n[r];
    }
    free(n);
    long long base[2] = {0, 0};
    if (f->rank == 0) {
        base[0] = bdl_shared_fetch_add(f, total);
        if (base[0] < 0)
            base[1] = errno ? errno : EIO;
    }
    if (f->size > 1)
        MPI_Bcast(base, 2, MPI_LONG_LONG, 0, f->comm);
    if (base[1])
        return bdl_file_error(fh, bdl_io_errno_class((int)base[1]), call,
                              "shared file pointer of \"%s\": %s", f->path, strerror((int)base[1]));
    return bdl_io_access(fh, call, write, BDL_IO_ORDERED, base[0] + before, buf, count, dt, status);
}

int MPI_File_read_ordered(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                          MPI_Status *status)
{
    BDL_MT_GUARD;
    return ordered(fh, "MPI_File_read_ordered", 0, buf, count, datatype, status, 0);
}

int MPI_File_write_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                           MPI_Status *status)
{
    BDL_MT_GUARD;
    return ordered(fh, "MPI_File_write_ordered", 1, (void *)buf, count, datatype, status, 0);
}

/* ---------------------------------------------------------------- split collectives */

/* A split collective (13.4.5) does its work in begin, which keeps the
 * status for end; one may be in progress per file handle, and end must
 * be the same kind as begin. */
enum {
    SPLIT_READ_AT = 1,
    SPLIT_WRITE_AT,
    SPLIT_READ,
    SPLIT_WRITE,
    SPLIT_READ_ORD,
    SPLIT_WRITE_ORD
};
static const char *const g_split_name[] = {"",
                                           "MPI_File_read_at_all_begin",
                                           "MPI_File_write_at_all_begin",
                                           "MPI_File_read_all_begin",
                                           "MPI_File_write_all_begin",
                                           "MPI_File_read_ordered_begin",
                                           "MPI_File_write_ordered_begin"};

static int split_begin(MPI_File fh, int kind, MPI_Offset offset, void *buf, int count,
                       MPI_Datatype dt)
{
    const char *call = g_split_name[kind];
    FILE_OR_ERR(call, fh, f);
    /* Refused, this process still takes part in the call's agreement, so
     * that the others do not wait for it. */
    int refused = 0;
    if (f->split)
        refused = bdl_file_error(fh, MPI_ERR_IO, call,
                                 "%s on file %d has not been ended yet (one split collective at "
                                 "a time per file)",
                                 g_split_name[f->split], fh);
    MPI_Status st;
    int rc;
    switch (kind) {
    case SPLIT_READ_AT:
    case SPLIT_WRITE_AT:
        rc = bdl_io_access_all(fh, call, kind == SPLIT_WRITE_AT, BDL_IO_AT, offset, buf, count, dt,
                               &st, refused);
        break;
    case SPLIT_READ:
    case SPLIT_WRITE:
        rc = bdl_io_access_all(fh, call, kind == SPLIT_WRITE, BDL_IO_INDIV, 0, buf, count, dt, &st,
                               refused);
        break;
    default: rc = ordered(fh, call, kind == SPLIT_WRITE_ORD, buf, count, dt, &st, refused); break;
    }
    if (rc)
        return rc;
    f->split = kind;
    f->split_status = st;
    return MPI_SUCCESS;
}

static int split_end(MPI_File fh, int kind, const char *call, MPI_Status *status)
{
    FILE_OR_ERR(call, fh, f);
    if (f->split != kind)
        return bdl_file_error(fh, MPI_ERR_IO, call, "no %s on file %d to end%s%s",
                              g_split_name[kind], fh, f->split ? " (in progress: " : "",
                              f->split ? g_split_name[f->split] : "");
    f->split = 0;
    if (status != MPI_STATUS_IGNORE && status)
        *status = f->split_status;
    return MPI_SUCCESS;
}

int MPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void *buf, int count,
                               MPI_Datatype datatype)
{
    BDL_MT_GUARD;
    return split_begin(fh, SPLIT_READ_AT, offset, buf, count, datatype);
}

int MPI_File_read_at_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
    BDL_MT_GUARD;
    (void)buf;
    return split_end(fh, SPLIT_READ_AT, "MPI_File_read_at_all_end", status);
}

int MPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                                MPI_Datatype datatype)
{
    BDL_MT_GUARD;
    return split_begin(fh, SPLIT_WRITE_AT, offset, (void *)buf, count, datatype);
}

int MPI_File_write_at_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    BDL_MT_GUARD;
    (void)buf;
    return split_end(fh, SPLIT_WRITE_AT, "MPI_File_write_at_all_end", status);
}

int MPI_File_read_all_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype)
{
    BDL_MT_GUARD;
    return split_begin(fh, SPLIT_READ, 0, buf, count, datatype);
}

int MPI_File_read_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
    BDL_MT_GUARD;
    (void)buf;
    return split_end(fh, SPLIT_READ, "MPI_File_read_all_end", status);
}

int MPI_File_write_all_begin(MPI_File fh, const void *buf, int count, MPI_Datatype datatype)
{
    BDL_MT_GUARD;
    return split_begin(fh, SPLIT_WRITE, 0, (void *)buf, count, datatype);
}

int MPI_File_write_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    BDL_MT_GUARD;
    (void)buf;
    return split_end(fh, SPLIT_WRITE, "MPI_File_write_all_end", status);
}

int MPI_File_read_ordered_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype)
{
    BDL_MT_GUARD;
    return split_begin(fh, SPLIT_READ_ORD, 0, buf, count, datatype);
}

int MPI_File_read_ordered_end(MPI_File fh, void *buf, MPI_Status *status)
{
    BDL_MT_GUARD;
    (void)buf;
    return split_end(fh, SPLIT_READ_ORD, "MPI_File_read_ordered_end", status);
}

int MPI_File_write_ordered_begin(MPI_File fh, const void *buf, int count, MPI_Datatype datatype)
{
    BDL_MT_GUARD;
    return split_begin(fh, SPLIT_WRITE_ORD, 0, (void *)buf, count, datatype);
}

int MPI_File_write_ordered_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    BDL_MT_GUARD;
    (void)buf;
    return split_end(fh, SPLIT_WRITE_ORD, "MPI_File_write_ordered_end", status);
}
