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
