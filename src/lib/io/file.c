/* File handling (MPI 3.1 13.2) and file error handlers (8.3.3, 13.7).
 *
 * A file handle names an entry of a table (handle h is g_files[h - 1]).
 * Every process of the communicator opens the file with open(2) itself:
 * on one machine and on a shared file system the processes' descriptors
 * see one file, and every data access is a pread/pwrite at an offset
 * (access.c), so no state but the shared file pointer (shared.c) is
 * shared.  The file keeps a private duplicate of the communicator, on
 * which its collectives (open, close, set_size, views, ordered access)
 * never meet the program's traffic.
 *
 * Collective calls agree before acting: one MPI_Allreduce carries every
 * process's local verdict (a bad argument's class) and the arguments that
 * must be equal, so either every process fails with the same class or none
 * does, and none is left waiting in a collective the others skipped. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bd_log.h"
#include "io.h"

static bdl_file_t *g_files;
static int g_nfiles;

bdl_file_t *bdl_file_get(MPI_File fh)
{
    if (fh <= 0 || fh > g_nfiles || !g_files[fh - 1].used)
        return NULL;
    return &g_files[fh - 1];
}

static MPI_File file_handle(const bdl_file_t *f) { return (MPI_File)(f - g_files) + 1; }

int bdl_io_errno_class(int err)
{
    switch (err) {
    case ENOENT:
    case ENOTDIR: return MPI_ERR_NO_SUCH_FILE;
    case EEXIST: return MPI_ERR_FILE_EXISTS;
    case EACCES:
    case EPERM: return MPI_ERR_ACCESS;
    case ENOSPC:
    case EFBIG: return MPI_ERR_NO_SPACE;
    case EDQUOT: return MPI_ERR_QUOTA;
    case EROFS: return MPI_ERR_READ_ONLY;
    case ETXTBSY:
    case EBUSY: return MPI_ERR_FILE_IN_USE;
    case ENAMETOOLONG:
    case EISDIR:
    case ELOOP: return MPI_ERR_BAD_FILE;
    case ENOMEM: return MPI_ERR_NO_MEM;
    case EILSEQ: return MPI_ERR_CONVERSION; /* a conversion function failed (view.c) */
    default: return MPI_ERR_IO;
    }
}

/* ---------------------------------------------------------------- error handlers */

/* File error handlers (MPI_File_create_errhandler) are handles
 * FILE_EH_BASE + i, apart from communicator and window handlers. */
#define FILE_EH_BASE (1 << 25)
static MPI_File_errhandler_function **g_feh;
static int g_nfeh;
/* MPI_FILE_NULL's handler: what MPI_File_open and MPI_File_delete report
 * through, and what a newly opened file starts with (MPI 3.1 13.7). */
static MPI_Errhandler g_null_errh = MPI_ERRORS_RETURN;

static MPI_File_errhandler_function *file_eh_fn(MPI_Errhandler eh)
{
    int i = eh - FILE_EH_BASE;
    return i >= 0 && i < g_nfeh ? g_feh[i] : NULL;
}

int bdl_file_error(MPI_File fh, int code, const char *call, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    bdl_file_t *f = bdl_file_get(fh);
    MPI_Errhandler eh = f ? f->errh : g_null_errh;
    if (!f)
        fh = MPI_FILE_NULL;
    if (eh == MPI_ERRORS_RETURN)
        return code;
    MPI_File_errhandler_function *fn = file_eh_fn(eh);
    if (fn) {
        fn(&fh, &code);
        return code;
    }
    int cls = code;
    if (code > MPI_ERR_LASTCODE)
        MPI_Error_class(code, &cls);
    bdl_fatal(code, "%s: %s [%s]", call, msg, bdl_err_class_name(cls));
}

int MPI_File_create_errhandler(MPI_File_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_create_errhandler";
    BDL_CHECK_INIT(call);
    if (!fn || !errhandler)
        return bdl_file_error(MPI_FILE_NULL, MPI_ERR_ARG, call, "%s is NULL",
                              fn ? "errhandler" : "file_errhandler_fn");
    MPI_File_errhandler_function **n = realloc(g_feh, (size_t)(g_nfeh + 1) * sizeof *n);
    if (!n)
        return bdl_file_error(MPI_FILE_NULL, MPI_ERR_NO_MEM, call, "out of memory");
    g_feh = n;
    g_feh[g_nfeh] = fn;
    *errhandler = FILE_EH_BASE + g_nfeh++;
    return MPI_SUCCESS;
}

/* fh may be MPI_FILE_NULL (the default handler of files) or an open file. */
#define FILE_OR_NULL(call, fh, f)                                                                  \
    BDL_CHECK_INIT(call);                                                                          \
    bdl_file_t *f = bdl_file_get(fh);                                                              \
    if (!f && fh != MPI_FILE_NULL)                                                                 \
        return bdl_file_error(MPI_FILE_NULL, MPI_ERR_FILE, call, "invalid file handle %d", fh);

#define FILE_OR_ERR(call, fh, f)                                                                   \
    BDL_CHECK_INIT(call);                                                                          \
    bdl_file_t *f = bdl_file_get(fh);                                                              \
    if (!f)                                                                                        \
        return bdl_file_error(MPI_FILE_NULL, MPI_ERR_FILE, call, "invalid file handle %d", fh);

int MPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_set_errhandler";
    FILE_OR_NULL(call, file, f);
    if (errhandler != MPI_ERRORS_ARE_FATAL && errhandler != MPI_ERRORS_RETURN &&
        errhandler != MPI_ERRORS_ABORT && !file_eh_fn(errhandler))
        return bdl_file_error(file, MPI_ERR_ARG, call,
                              "%d is not an error handler for files (made by "
                              "MPI_File_create_errhandler)",
                              errhandler);
    if (f)
        f->errh = errhandler;
    else
        g_null_errh = errhandler;
    return MPI_SUCCESS;
}

int MPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_get_errhandler";
    FILE_OR_NULL(call, file, f);
    if (!errhandler)
        return bdl_file_error(file, MPI_ERR_ARG, call, "errhandler is NULL");
    *errhandler = f ? f->errh : g_null_errh;
    return MPI_SUCCESS;
}

int MPI_File_call_errhandler(MPI_File fh, int errorcode)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_call_errhandler";
    FILE_OR_NULL(call, fh, f);
    (void)f;
    bdl_file_error(fh, errorcode, call, "error %d raised by the program", errorcode);
    return MPI_SUCCESS;
}

MPI_Fint MPI_File_c2f(MPI_File file) { return (MPI_Fint)file; }
MPI_File MPI_File_f2c(MPI_Fint file) { return (MPI_File)file; }

/* ---------------------------------------------------------------- agreement */

int bdl_io_agree(MPI_Comm comm, int err, long long same)
{
    long long v[3] = {err, same, -same}, r[3];
    int rc = MPI_Allreduce(v, r, 3, MPI_LONG_LONG, MPI_MAX, comm);
    if (rc)
        return rc;
    if (r[0])
        return (int)r[0];
    return r[1] != -r[2] ? MPI_ERR_NOT_SAME : MPI_SUCCESS;
}

/* ---------------------------------------------------------------- open and close */

static int file_slot(void)
{
    for (int i = 0; i < g_nfiles; i++)
        if (!g_files[i].used)
            return i;
    int n = g_nfiles ? 2 * g_nfiles : 8;
    bdl_file_t *t = realloc(g_files, (size_t)n * sizeof *t);
    if (!t)
        return -1;
    memset(t + g_nfiles, 0, (size_t)(n - g_nfiles) * sizeof *t);
    g_files = t;
    int i = g_nfiles;
    g_nfiles = n;
    return i;
}

/* The amode's own consistency (MPI 3.1 13.2.1): exactly one of RDONLY,
 * RDWR and WRONLY; no CREATE or EXCL with RDONLY; no SEQUENTIAL with RDWR. */
static const char *amode_problem(int amode)
{
    const int known = MPI_MODE_CREATE | MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR |
                      MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN | MPI_MODE_EXCL |
                      MPI_MODE_APPEND | MPI_MODE_SEQUENTIAL;
    if (amode & ~known)
        return "has bits that are no MPI_MODE_* constant";
    int n = !!(amode & MPI_MODE_RDONLY) + !!(amode & MPI_MODE_RDWR) + !!(amode & MPI_MODE_WRONLY);
    if (n != 1)
        return "must have exactly one of MPI_MODE_RDONLY, MPI_MODE_RDWR and MPI_MODE_WRONLY";
    if ((amode & MPI_MODE_RDONLY) && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
        return "combines MPI_MODE_RDONLY with MPI_MODE_CREATE or MPI_MODE_EXCL";
    if ((amode & MPI_MODE_RDWR) && (amode & MPI_MODE_SEQUENTIAL))
        return "combines MPI_MODE_RDWR with MPI_MODE_SEQUENTIAL";
    return NULL;
}

/* ROMIO-style names may carry a file system prefix ("ufs:/path"); the
 * file is the same file to BDMPI. */
static const char *strip_prefix(const char *name)
{
    static const char *const pfx[] = {
        "ufs:", "nfs:", "lustre:", "gpfs:", "pvfs2:", "xfs:", "panfs:", "daos:", "testfs:"};
    for (size_t i = 0; i < sizeof pfx / sizeof *pfx; i++)
        if (!strncmp(name, pfx[i], strlen(pfx[i])))
            return name + strlen(pfx[i]);
    return name;
}

int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_open";
    BDL_CHECK_INIT(call);
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c)
        return bdl_file_error(MPI_FILE_NULL, MPI_ERR_COMM, call, "invalid communicator %d", comm);
    if (c->inter)
        return bdl_file_error(MPI_FILE_NULL, MPI_ERR_COMM, call,
                              "communicator %d is an intercommunicator", comm);
    if (!fh)
        return bdl_file_error(MPI_FILE_NULL, MPI_ERR_ARG, call, "fh is NULL");
    *fh = MPI_FILE_NULL;

    /* Local checks first, then one agreement: the class of the first
     * problem, and the amode, which must be the same everywhere. */
    int err = 0;
    char why[256] = "";
    const char *p;
    if (!filename || !*filename) {
        err = MPI_ERR_BAD_FILE;
        snprintf(why, sizeof why, "filename is %s", filename ? "empty" : "NULL");
    } else if ((p = amode_problem(amode))) {
        err = MPI_ERR_AMODE;
        snprintf(why, sizeof why, "amode %#x %s", amode, p);
    } else if (!bdl_info_valid(info)) {
        err = MPI_ERR_INFO;
        snprintf(why, sizeof why, "invalid info %d", info);
    }
    MPI_Comm dup;
    int rc = MPI_Comm_dup(comm, &dup);
    if (rc)
        return bdl_file_error(MPI_FILE_NULL, rc, call, "cannot duplicate communicator %d", comm);
    int all = bdl_io_agree(dup, err, amode);
    if (all) {
        MPI_Comm_free(&dup);
        if (!err && all == MPI_ERR_NOT_SAME)
            snprintf(why, sizeof why, "amode %#x differs among the processes", amode);
        else if (!err)
            snprintf(why, sizeof why, "another process's arguments are wrong (%s)",
                     bdl_err_class_name(all));
        return bdl_file_error(MPI_FILE_NULL, err ? err : all, call, "%s", why);
    }

    /* Rank 0 opens first, creating the file if asked (and failing on
     * EXCL); the others open the file it made, so EXCL is one test. */
    const char *path = strip_prefix(filename);
    int flags = O_CLOEXEC;
    flags |= amode & MPI_MODE_RDONLY ? O_RDONLY : amode & MPI_MODE_WRONLY ? O_WRONLY : O_RDWR;
    int cflags = (amode & MPI_MODE_CREATE ? O_CREAT : 0) | (amode & MPI_MODE_EXCL ? O_EXCL : 0);
    int rank, size;
    MPI_Comm_rank(dup, &rank);
    MPI_Comm_size(dup, &size);
    int fd = -1, res[2] = {0, 0}; /* class, errno */
    if (rank == 0) {
        fd = BD_FAULT_SYS(BD_FAULT_IO_OPEN) ?: open(path, flags | cflags, 0666);
        if (fd < 0)
            res[0] = bdl_io_errno_class(errno), res[1] = errno;
    }
    if (size > 1)
        MPI_Bcast(res, 2, MPI_INT, 0, dup);
    if (!res[0] && rank != 0) {
        fd = BD_FAULT_SYS(BD_FAULT_IO_OPEN) ?: open(path, flags, 0666);
        if (fd < 0)
            res[0] = bdl_io_errno_class(errno), res[1] = errno;
    }
    if (!res[0] && fd >= 0) {
        struct stat st;
        if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
            res[0] = MPI_ERR_BAD_FILE, res[1] = EISDIR;
    }
    int mine = res[0];
    if (size > 1 && (all = bdl_io_agree(dup, res[0], 0)) && !res[0])
        res[0] = all, res[1] = 0;
    if (res[0]) {
        if (fd >= 0)
            close(fd);
        MPI_Comm_free(&dup);
        return bdl_file_error(MPI_FILE_NULL, res[0], call, "cannot open \"%s\": %s", path,
                              mine || rank == 0 ? strerror(res[1])
                                                : "another process could not open it");
    }

    int i = file_slot();
    char *pathcopy = strdup(path);
    MPI_Info hints = MPI_INFO_NULL;
    if (info != MPI_INFO_NULL)
        MPI_Info_dup(info, &hints);
    if (i < 0 || !pathcopy) {
        free(pathcopy);
        close(fd);
        MPI_Comm_free(&dup);
        return bdl_file_error(MPI_FILE_NULL, MPI_ERR_NO_MEM, call, "out of memory");
    }
    bdl_file_t *f = &g_files[i];
    *f = (bdl_file_t){.used = 1,
                      .fd = fd,
                      .comm = dup,
                      .rank = rank,
                      .size = size,
                      .amode = amode,
                      .path = pathcopy,
                      .errh = g_null_errh,
                      .info = hints,
                      .shfd = -1};
    bdl_view_default(f);
    if ((rc = bdl_shared_open(f, call))) {
        close(fd);
        MPI_Comm_free(&f->comm);
        if (hints != MPI_INFO_NULL)
            MPI_Info_free(&hints);
        bdl_view_release(f);
        free(f->path);
        f->used = 0;
        return bdl_file_error(MPI_FILE_NULL, rc, call,
                              "cannot set up the shared file pointer of \"%s\"", path);
    }
    /* MPI_MODE_APPEND: both file pointers start at the end of the file. */
    if (amode & MPI_MODE_APPEND) {
        struct stat st;
        if (fstat(fd, &st) == 0) {
            f->pos = st.st_size;
            if (rank == 0)
                bdl_shared_set(f, st.st_size);
            if (size > 1)
                MPI_Barrier(dup);
        }
    }
    *fh = file_handle(f);
    return MPI_SUCCESS;
}

int MPI_File_close(MPI_File *fh)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_close";
    BDL_CHECK_INIT(call);
    if (!fh)
        return bdl_file_error(MPI_FILE_NULL, MPI_ERR_ARG, call, "fh is NULL");
    bdl_file_t *f = bdl_file_get(*fh);
    if (!f)
        return bdl_file_error(MPI_FILE_NULL, MPI_ERR_FILE, call, "invalid file handle %d", *fh);
    int err = close(f->fd) < 0 ? errno : 0;
    bdl_shared_close(f);
    /* Every process has closed before the file goes (DELETE_ON_CLOSE). */
    if (f->size > 1)
        MPI_Barrier(f->comm);
    if ((f->amode & MPI_MODE_DELETE_ON_CLOSE) && f->rank == 0 && unlink(f->path) < 0 && !err)
        err = errno;
    MPI_Comm_free(&f->comm);
    if (f->info != MPI_INFO_NULL)
        MPI_Info_free(&f->info);
    bdl_view_release(f);
    MPI_File h = *fh;
    char path[256];
    snprintf(path, sizeof path, "%s", f->path);
    free(f->path);
    f->used = 0;
    *fh = MPI_FILE_NULL;
    if (err)
        return bdl_file_error(MPI_FILE_NULL, bdl_io_errno_class(err), call,
                              "closing file %d (\"%s\"): %s", h, path, strerror(err));
    return MPI_SUCCESS;
}

int MPI_File_delete(const char *filename, MPI_Info info)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_delete";
    BDL_CHECK_INIT(call);
    if (!filename || !*filename)
        return bdl_file_error(MPI_FILE_NULL, MPI_ERR_BAD_FILE, call, "filename is %s",
                              filename ? "empty" : "NULL");
    if (!bdl_info_valid(info))
        return bdl_file_error(MPI_FILE_NULL, MPI_ERR_INFO, call, "invalid info %d", info);
    const char *path = strip_prefix(filename);
    if (unlink(path) < 0)
        return bdl_file_error(MPI_FILE_NULL, bdl_io_errno_class(errno), call,
                              "cannot delete \"%s\": %s", path, strerror(errno));
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- size */

/* set_size (grow: 0) and preallocate (1): collective, the same size
 * everywhere; rank 0 changes the file and the others learn the outcome. */
static int resize(MPI_File fh, MPI_Offset size, int prealloc, const char *call)
{
    FILE_OR_ERR(call, fh, f);
    int err = 0;
    const char *why = "";
    if (size < 0)
        err = MPI_ERR_ARG, why = "size is negative";
    else if (f->amode & MPI_MODE_SEQUENTIAL)
        err = MPI_ERR_UNSUPPORTED_OPERATION, why = "the file was opened with MPI_MODE_SEQUENTIAL";
    else if (f->amode & MPI_MODE_RDONLY)
        err = MPI_ERR_READ_ONLY, why = "the file was opened with MPI_MODE_RDONLY";
    int all = bdl_io_agree(f->comm, err, size);
    if (all)
        return bdl_file_error(fh, err ? err : all, call, "size %lld: %s", (long long)size,
                              err ? why : "the processes' arguments differ or are wrong");
    int res[2] = {0, 0};
    if (f->rank == 0) {
        int rc = 0;
        if (prealloc) {
            struct stat st;
            if (fstat(f->fd, &st) < 0)
                rc = errno;
            else if (size > st.st_size)
                rc = BD_FAULT_HIT(BD_FAULT_IO_RESIZE) ?: posix_fallocate(f->fd, 0, size);
        } else if ((BD_FAULT_SYS(BD_FAULT_IO_RESIZE) ?: ftruncate(f->fd, size)) < 0) {
            rc = errno;
        }
        if (rc)
            res[0] = bdl_io_errno_class(rc), res[1] = rc;
    }
    if (f->size > 1)
        MPI_Bcast(res, 2, MPI_INT, 0, f->comm);
    if (res[0])
        return bdl_file_error(fh, res[0], call, "size %lld of \"%s\": %s", (long long)size, f->path,
                              strerror(res[1]));
    return MPI_SUCCESS;
}

int MPI_File_set_size(MPI_File fh, MPI_Offset size)
{
    BDL_MT_GUARD;
    return resize(fh, size, 0, "MPI_File_set_size");
}

int MPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
    BDL_MT_GUARD;
    return resize(fh, size, 1, "MPI_File_preallocate");
}

int MPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_get_size";
    FILE_OR_ERR(call, fh, f);
    if (!size)
        return bdl_file_error(fh, MPI_ERR_ARG, call, "size is NULL");
    struct stat st;
    if (fstat(f->fd, &st) < 0)
        return bdl_file_error(fh, bdl_io_errno_class(errno), call, "fstat of \"%s\": %s", f->path,
                              strerror(errno));
    *size = st.st_size;
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- queries, info */

int MPI_File_get_amode(MPI_File fh, int *amode)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_get_amode";
    FILE_OR_ERR(call, fh, f);
    if (!amode)
        return bdl_file_error(fh, MPI_ERR_ARG, call, "amode is NULL");
    *amode = f->amode;
    return MPI_SUCCESS;
}

int MPI_File_get_group(MPI_File fh, MPI_Group *group)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_get_group";
    FILE_OR_ERR(call, fh, f);
    if (!group)
        return bdl_file_error(fh, MPI_ERR_ARG, call, "group is NULL");
    return MPI_Comm_group(f->comm, group);
}

/* Hints change nothing in BDMPI: they are kept and given back. */
int MPI_File_set_info(MPI_File fh, MPI_Info info)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_set_info";
    FILE_OR_ERR(call, fh, f);
    if (!bdl_info_valid(info))
        return bdl_file_error(fh, MPI_ERR_INFO, call, "invalid info %d", info);
    if (info == MPI_INFO_NULL)
        return MPI_SUCCESS;
    MPI_Info n;
    if (MPI_Info_dup(info, &n))
        return bdl_file_error(fh, MPI_ERR_NO_MEM, call, "out of memory");
    if (f->info != MPI_INFO_NULL)
        MPI_Info_free(&f->info);
    f->info = n;
    return MPI_SUCCESS;
}

int MPI_File_get_info(MPI_File fh, MPI_Info *info_used)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_get_info";
    FILE_OR_ERR(call, fh, f);
    if (!info_used)
        return bdl_file_error(fh, MPI_ERR_ARG, call, "info_used is NULL");
    int rc =
        f->info != MPI_INFO_NULL ? MPI_Info_dup(f->info, info_used) : MPI_Info_create(info_used);
    if (rc)
        return bdl_file_error(fh, MPI_ERR_NO_MEM, call, "out of memory");
    return MPI_SUCCESS;
}
