/* Data access (MPI 3.1 13.4): explicit offsets, individual file pointers,
 * their collective and nonblocking forms, seek, sync and atomicity.
 *
 * Every access is the same transfer (bdl_io_transfer): the memory side is
 * count elements of a datatype, the file side the view's data stream from
 * an etype position on.  The file side is cut into contiguous file
 * segments (runs of the filetype, merged when they touch) and each goes to
 * the kernel with pread/pwrite.  Memory that is contiguous goes to the
 * kernel directly; other memory passes through an unmanaged bounce buffer,
 * packed and unpacked by the datatype engine.  Reads through a
 * noncontiguous view are sieved: pieces close together in the file are
 * read with one pread of the span they cover (sieve_read).
 *
 * Managed memory: before the kernel reads or fills a piece of it, the piece
 * is made resident at once (bdl_lib_mem_prepare, one bulk load and one
 * grant), in steps of at most IO_STEP bytes, so a large read neither faults
 * the buffer in page by page nor asks the budget for all of it first; the
 * calls go to the kernel directly (syscall), past the C library wrappers
 * that would prepare the same piece again.
 *
 * Nonblocking calls do the transfer before they return and hand back a
 * request that is already complete (the data has moved, so any Wait/Test
 * completes it).  Blocking collective calls of many small interleaved
 * pieces are aggregated in two phases (coll.c); the others need no
 * coordination, because every process's part is independent of the
 * others'.  Independent writes through noncontiguous views cost one system
 * call per contiguous piece. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bd_iowatch.h"
#include "io.h"

#define IO_STEP ((uint64_t)8 << 20) /* largest piece prepared and moved at once */

void bdl_view_segment(const bdl_file_t *f, uint64_t v, uint64_t max, int64_t *off, uint64_t *len)
{
    if (f->fcontig) {
        *off = f->disp + f->fstart + (int64_t)v;
        *len = max;
        return;
    }
    *len = 0;
    while (*len < max) {
        int64_t o = bdl_view_file_offset(f, v + *len);
        /* bytes left in the block holding view byte v + *len */
        const bdl_dt_t *t = f->ftype;
        uint64_t r = (v + *len) % t->size;
        uint32_t lo = 0, hi = t->nruns - 1;
        while (lo < hi) {
            uint32_t mid = (lo + hi + 1) / 2;
            if (t->pre[mid] <= r)
                lo = mid;
            else
                hi = mid - 1;
        }
        uint64_t in = (r - t->pre[lo]) % t->runs[lo].len;
        uint64_t n = t->runs[lo].len - in;
        if (n > max - *len)
            n = max - *len;
        if (*len == 0)
            *off = o;
        else if (o != *off + (int64_t)*len)
            return;
        *len += n;
    }
}

int64_t bdl_view_file_offset(const bdl_file_t *f, uint64_t v)
{
    if (f->fcontig)
        return f->disp + f->fstart + (int64_t)v;
    const bdl_dt_t *t = f->ftype;
    uint64_t tile = v / t->size, r = v % t->size;
    uint32_t lo = 0, hi = t->nruns - 1;
    while (lo < hi) {
        uint32_t mid = (lo + hi + 1) / 2;
        if (t->pre[mid] <= r)
            lo = mid;
        else
            hi = mid - 1;
    }
    const bdl_run_t *ru = &t->runs[lo];
    uint64_t rr = r - t->pre[lo];
    return f->disp + (int64_t)tile * t->extent + ru->off + (int64_t)(rr / ru->len) * ru->stride +
           (int64_t)(rr % ru->len);
}

uint64_t bdl_view_bytes_below(const bdl_file_t *f, int64_t bytes)
{
    if (f->fcontig) {
        int64_t s = f->disp + f->fstart;
        return bytes > s ? (uint64_t)(bytes - s) : 0;
    }
    const bdl_dt_t *t = f->ftype;
    int64_t ext = t->extent;
    /* tiles whose data lies wholly below bytes, then the ones cut by it */
    int64_t end = bytes - f->disp - (t->true_lb + t->true_extent);
    int64_t full = end < 0 ? 0 : end / ext + 1;
    uint64_t n = (uint64_t)full * t->size;
    for (int64_t i = full;; i++) {
        int64_t base = f->disp + i * ext;
        if (base + t->true_lb >= bytes)
            break;
        for (uint32_t k = 0; k < t->nruns; k++) {
            const bdl_run_t *ru = &t->runs[k];
            for (uint64_t b = 0; b < ru->cnt; b++) {
                int64_t s = base + ru->off + (int64_t)b * ru->stride;
                if (s < bytes)
                    n += (uint64_t)(bytes - s) < ru->len ? (uint64_t)(bytes - s) : ru->len;
            }
        }
    }
    return n;
}

static ssize_t sys_prw(int write, int fd, void *p, size_t n, int64_t off)
{
    return write ? BD_IO_SYS(BD_FAULT_IO_WRITE, syscall(SYS_pwrite64, fd, p, n, (off_t)off))
                 : BD_IO_SYS(BD_FAULT_IO_READ, syscall(SYS_pread64, fd, p, n, (off_t)off));
}

/* One contiguous piece: len bytes at file offset off to (write) or from
 * mem, managed memory prepared step by step; the bytes moved (fewer only
 * when a read meets the end of the file), or -errno. */
int64_t bdl_io_piece_rw(bdl_file_t *f, int write, int64_t off, char *mem, uint64_t len)
{
    for (uint64_t s = 0; s < len;) {
        uint64_t k = len - s < IO_STEP ? len - s : IO_STEP;
        bdl_lib_mem_prepare(mem + s, k, !write);
        ssize_t r = sys_prw(write, f->fd, mem + s, k, off + (int64_t)s);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -errno;
        if (r == 0)
            return write ? -EIO : (int64_t)s; /* end of file */
        s += (uint64_t)r;
    }
    return (int64_t)len;
}

/* Data sieving, for reads through a noncontiguous view: the pieces from
 * view byte v on that lie within BDL_IO_BOUNCE bytes of the first one's
 * start are read with one pread of the span they cover, when there are
 * several and they fill at least an eighth of it, and copied out; *data
 * gets the view bytes they hold.  Returns the view bytes delivered (fewer
 * than *data at the end of the file), 0 when sieving does not pay here
 * (*data 0), or -errno.  Writes are never sieved: that would need a
 * read-modify-write under a lock. */
static int64_t sieve_read(bdl_file_t *f, uint64_t v, char *mem, uint64_t n, char **bounce,
                          uint64_t *data)
{
    int64_t first, end;
    uint64_t len;
    bdl_view_segment(f, v, n, &first, &len);
    *data = len;
    end = first + (int64_t)len;
    int pieces = 1;
    while (*data < n) {
        int64_t o;
        uint64_t l;
        bdl_view_segment(f, v + *data, n - *data, &o, &l);
        if (o < end || o - first >= (int64_t)BDL_IO_BOUNCE)
            break;
        if (o + (int64_t)l - first > (int64_t)BDL_IO_BOUNCE)
            l = BDL_IO_BOUNCE - (uint64_t)(o - first);
        *data += l;
        end = o + (int64_t)l;
        pieces++;
    }
    if (pieces == 1 || *data * 8 < (uint64_t)(end - first)) {
        *data = 0;
        return 0;
    }
    if (!*bounce && !(*bounce = bdl_io_bounce(BDL_IO_BOUNCE)))
        return -ENOMEM;
    int64_t got = bdl_io_piece_rw(f, 0, first, *bounce, (uint64_t)(end - first));
    if (got < 0)
        return got;
    bdl_lib_mem_prepare(mem, *data, 1); /* one bulk load before the copies */
    uint64_t k = 0;
    while (k < *data) {
        int64_t o;
        uint64_t l;
        bdl_view_segment(f, v + k, *data - k, &o, &l);
        if (o - first >= got)
            break;
        uint64_t avail = (uint64_t)(got - (o - first));
        if (avail > l)
            avail = l;
        memcpy(mem + k, *bounce + (o - first), avail);
        k += avail;
        if (avail < l)
            break;
    }
    return (int64_t)k;
}

int64_t bdl_io_view_rw(bdl_file_t *f, int write, uint64_t v, char *mem, uint64_t n)
{
    uint64_t done = 0;
    char *bounce = NULL;
    int64_t ret = 0;
    while (done < n) {
        if (!write && !f->fcontig) {
            uint64_t data;
            int64_t r = sieve_read(f, v + done, mem + done, n - done, &bounce, &data);
            if (r < 0) {
                ret = r;
                break;
            }
            done += (uint64_t)r;
            if (data && (uint64_t)r < data)
                break; /* end of file */
            if (data)
                continue;
        }
        int64_t off;
        uint64_t len;
        bdl_view_segment(f, v + done, n - done, &off, &len);
        int64_t r = bdl_io_piece_rw(f, write, off, mem + done, len);
        if (r < 0) {
            ret = r;
            break;
        }
        done += (uint64_t)r;
        if ((uint64_t)r < len)
            break;
    }
    bdl_io_unbounce(bounce, BDL_IO_BOUNCE);
    return ret < 0 ? ret : (int64_t)done;
}

/* Atomic mode: the file bytes an access spans are locked for its duration
 * (fcntl locks on open file descriptions: processes of other nodes on the
 * same file system see them too). */
static int range_lock(bdl_file_t *f, short type, uint64_t v, uint64_t n)
{
    if (!f->atomic || !n)
        return 0;
    int64_t first = bdl_view_file_offset(f, v), last = bdl_view_file_offset(f, v + n - 1);
    struct flock fl = {
        .l_type = type, .l_whence = SEEK_SET, .l_start = first, .l_len = last - first + 1};
    while (fcntl(f->fd, F_OFD_SETLKW, &fl) < 0)
        if (errno != EINTR)
            return -errno;
    return 0;
}

void *bdl_io_bounce(uint64_t n)
{
    void *p = mmap(NULL, n ? n : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void bdl_io_unbounce(void *p, uint64_t n)
{
    if (p)
        munmap(p, n ? n : 1);
}

uint64_t bdl_io_file_bytes(const bdl_file_t *f, const bdl_dt_t *t, uint64_t count)
{
    return count * bdl_view_rep_size(f, t);
}

int bdl_io_transfer(bdl_file_t *f, int write, MPI_Offset pos, void *buf, uint64_t count,
                    const bdl_dt_t *t, MPI_Datatype dt, uint64_t *moved, uint64_t *fmoved,
                    const char **msg)
{
    *moved = *fmoved = 0;
    uint64_t v = (uint64_t)pos * f->esize;
    uint64_t nfile = bdl_io_file_bytes(f, t, count);
    if (!nfile)
        return MPI_SUCCESS;
    if (f->atomic && count && t->size) {
        /* Nothing may ask the master for memory while the range lock is
         * held: a process waiting for the lock runs outside MPI and cannot
         * unload to make room, so a grant could wait for it forever.  The
         * buffer's whole span is made resident first. */
        int64_t lo = t->true_lb + (t->extent < 0 ? (int64_t)(count - 1) * t->extent : 0);
        uint64_t span = (uint64_t)t->true_extent + (count - 1) * (uint64_t)llabs(t->extent);
        bdl_lib_mem_prepare((char *)buf + lo, span, !write);
    }
    int rc = range_lock(f, write ? F_WRLCK : F_RDLCK, v, nfile);
    if (rc < 0) {
        *msg = strerror(-rc);
        return bdl_io_errno_class(-rc);
    }
    int64_t got;
    char *contig = bdl_dt_contig(t, buf, count);
    uint64_t fgot = 0;
    if (f->rep != BDL_REP_NATIVE) {
        got = bdl_view_convert_rw(f, write, v, buf, count, t, dt, &fgot);
    } else if (contig) {
        got = bdl_io_view_rw(f, write, v, contig, nfile);
    } else {
        /* noncontiguous memory: through a bounce buffer outside the
         * memory manager, packed and unpacked by the datatype engine */
        uint64_t cap = nfile < BDL_IO_BOUNCE ? nfile : BDL_IO_BOUNCE;
        char *b = bdl_io_bounce(cap);
        got = b ? 0 : -ENOMEM;
        for (uint64_t p = 0; b && p < nfile;) {
            uint64_t k = nfile - p < cap ? nfile - p : cap;
            if (write)
                bdl_dt_pack(t, buf, count, p, b, k);
            int64_t r = bdl_io_view_rw(f, write, v + p, b, k);
            if (r < 0) {
                got = r;
                break;
            }
            if (!write)
                bdl_dt_unpack(t, buf, count, p, b, (uint64_t)r);
            p += (uint64_t)r;
            got = (int64_t)p;
            if ((uint64_t)r < k)
                break;
        }
        bdl_io_unbounce(b, cap);
    }
    if (f->atomic) {
        struct flock fl = {.l_type = F_UNLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
        fcntl(f->fd, F_OFD_SETLK, &fl);
    }
    if (got < 0) {
        *msg = strerror((int)-got);
        return bdl_io_errno_class((int)-got);
    }
    *moved = (uint64_t)got;
    *fmoved = f->rep != BDL_REP_NATIVE ? fgot : (uint64_t)got;
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- the calls */

#define FILE_OR_ERR(call, fh, f)                                                                   \
    BDL_CHECK_INIT(call);                                                                          \
    bdl_file_t *f = bdl_file_get(fh);                                                              \
    if (!f)                                                                                        \
        return bdl_file_error(MPI_FILE_NULL, MPI_ERR_FILE, call, "invalid file handle %d", fh);

int bdl_io_check(bdl_file_t *f, MPI_File fh, const char *call, int write, int where,
                 MPI_Offset offset, int count, MPI_Datatype dt, bdl_dt_t **t)
{
    if ((where == BDL_IO_AT || where == BDL_IO_INDIV) && (f->amode & MPI_MODE_SEQUENTIAL))
        return bdl_file_error(fh, MPI_ERR_UNSUPPORTED_OPERATION, call,
                              "file %d was opened with MPI_MODE_SEQUENTIAL: only shared file "
                              "pointers may access it",
                              fh);
    /* the classes MPICH gives: a write to a read-only file is
     * MPI_ERR_READ_ONLY, a read of a write-only one MPI_ERR_ACCESS */
    if (write && (f->amode & MPI_MODE_RDONLY))
        return bdl_file_error(fh, MPI_ERR_READ_ONLY, call,
                              "file %d (\"%s\") was opened with MPI_MODE_RDONLY", fh, f->path);
    if (!write && (f->amode & MPI_MODE_WRONLY))
        return bdl_file_error(fh, MPI_ERR_ACCESS, call,
                              "file %d (\"%s\") was opened with MPI_MODE_WRONLY", fh, f->path);
    if (count < 0)
        return bdl_file_error(fh, MPI_ERR_COUNT, call, "invalid count %d", count);
    if (where == BDL_IO_AT && offset < 0)
        return bdl_file_error(fh, MPI_ERR_ARG, call, "invalid offset %lld", (long long)offset);
    bdl_dt_t *d = bdl_dt_lookup(dt);
    if (!d)
        return bdl_file_error(fh, MPI_ERR_TYPE, call, "datatype %d %s", dt, bdl_dt_bad_why(dt));
    if (!d->committed)
        return bdl_file_error(fh, MPI_ERR_TYPE, call, "datatype %d is not committed", dt);
    if (bdl_io_file_bytes(f, d, (uint64_t)count) % f->esize)
        return bdl_file_error(fh, MPI_ERR_IO, call,
                              "%d elements of datatype %d are not a whole number of etypes "
                              "(%llu bytes each)",
                              count, dt, (unsigned long long)f->esize);
    if (!f->ftype->size && count && d->size)
        return bdl_file_error(fh, MPI_ERR_IO, call,
                              "the view of file %d has a filetype without data: nothing can be "
                              "%s through it",
                              fh, write ? "written" : "read");
    *t = d;
    return MPI_SUCCESS;
}

static void set_status(MPI_Status *status, uint64_t moved)
{
    if (status == MPI_STATUS_IGNORE || !status)
        return;
    bdl_status_empty(status);
    status->bd_nbytes = (long long)moved;
}

int bdl_io_access(MPI_File fh, const char *call, int write, int where, MPI_Offset offset, void *buf,
                  int count, MPI_Datatype dt, MPI_Status *status)
{
    FILE_OR_ERR(call, fh, f);
    bdl_dt_t *t;
    int rc = bdl_io_check(f, fh, call, write, where, offset, count, dt, &t);
    if (rc)
        return rc;
    uint64_t es = f->esize;
    uint64_t netypes = bdl_io_file_bytes(f, t, (uint64_t)count) / es;
    MPI_Offset pos = offset; /* BDL_IO_AT, BDL_IO_ORDERED */
    if (where == BDL_IO_INDIV) {
        pos = f->pos;
    } else if (where == BDL_IO_SHARED) {
        pos = bdl_shared_fetch_add(f, (MPI_Offset)netypes);
        if (pos < 0)
            return bdl_file_error(fh, bdl_io_errno_class(errno), call,
                                  "shared file pointer of \"%s\": %s", f->path, strerror(errno));
    }
    uint64_t moved, fmoved;
    const char *msg = "";
    rc = bdl_io_transfer(f, write, pos, buf, (uint64_t)count, t, dt, &moved, &fmoved, &msg);
    if (where == BDL_IO_INDIV)
        f->pos += (MPI_Offset)(fmoved / es);
    if (rc)
        return bdl_file_error(fh, rc, call, "%s %llu bytes %s \"%s\" at etype %lld: %s",
                              write ? "writing" : "reading",
                              (unsigned long long)((uint64_t)count * t->size),
                              write ? "to" : "from", f->path, (long long)pos, msg);
    set_status(status, moved);
    return MPI_SUCCESS;
}

int bdl_io_iaccess(MPI_File fh, const char *call, int write, int where, MPI_Offset offset,
                   void *buf, int count, MPI_Datatype dt, MPI_Request *request)
{
    BDL_CHECK_INIT(call);
    if (!request)
        return bdl_file_error(fh, MPI_ERR_ARG, call, "request is NULL");
    MPI_Status st;
    int rc = bdl_io_access(fh, call, write, where, offset, buf, count, dt, &st);
    if (rc)
        return rc;
    *request = bdl_recv_done_req(buf, (uint64_t)count, &st, MPI_SUCCESS);
    return MPI_SUCCESS;
}

#define READ_AT(name)                                                                              \
    int name(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,          \
             MPI_Status *status)                                                                   \
    {                                                                                              \
        return bdl_io_access(fh, #name, 0, BDL_IO_AT, offset, buf, count, datatype, status);       \
    }
READ_AT(MPI_File_read_at)
#define READ_AT_ALL(name)                                                                          \
    int name(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,          \
             MPI_Status *status)                                                                   \
    {                                                                                              \
        return bdl_io_access_all(fh, #name, 0, BDL_IO_AT, offset, buf, count, datatype, status,    \
                                 0);                                                               \
    }
READ_AT_ALL(MPI_File_read_at_all)

#define WRITE_AT(name)                                                                             \
    int name(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,    \
             MPI_Status *status)                                                                   \
    {                                                                                              \
        return bdl_io_access(fh, #name, 1, BDL_IO_AT, offset, (void *)buf, count, datatype,        \
                             status);                                                              \
    }
WRITE_AT(MPI_File_write_at)
#define WRITE_AT_ALL(name)                                                                         \
    int name(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,    \
             MPI_Status *status)                                                                   \
    {                                                                                              \
        return bdl_io_access_all(fh, #name, 1, BDL_IO_AT, offset, (void *)buf, count, datatype,    \
                                 status, 0);                                                       \
    }
WRITE_AT_ALL(MPI_File_write_at_all)

#define READ_PTR(name, where)                                                                      \
    int name(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)         \
    {                                                                                              \
        return bdl_io_access(fh, #name, 0, where, 0, buf, count, datatype, status);                \
    }
READ_PTR(MPI_File_read, BDL_IO_INDIV)

int MPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return bdl_io_access_all(fh, "MPI_File_read_all", 0, BDL_IO_INDIV, 0, buf, count, datatype,
                             status, 0);
}

#define WRITE_PTR(name, where)                                                                     \
    int name(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)   \
    {                                                                                              \
        return bdl_io_access(fh, #name, 1, where, 0, (void *)buf, count, datatype, status);        \
    }
WRITE_PTR(MPI_File_write, BDL_IO_INDIV)

int MPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                       MPI_Status *status)
{
    return bdl_io_access_all(fh, "MPI_File_write_all", 1, BDL_IO_INDIV, 0, (void *)buf, count,
                             datatype, status, 0);
}

#define IREAD_AT(name)                                                                             \
    int name(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,          \
             MPI_Request *request)                                                                 \
    {                                                                                              \
        return bdl_io_iaccess(fh, #name, 0, BDL_IO_AT, offset, buf, count, datatype, request);     \
    }
IREAD_AT(MPI_File_iread_at)
IREAD_AT(MPI_File_iread_at_all)

#define IWRITE_AT(name)                                                                            \
    int name(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,    \
             MPI_Request *request)                                                                 \
    {                                                                                              \
        return bdl_io_iaccess(fh, #name, 1, BDL_IO_AT, offset, (void *)buf, count, datatype,       \
                              request);                                                            \
    }
IWRITE_AT(MPI_File_iwrite_at)
IWRITE_AT(MPI_File_iwrite_at_all)

#define IREAD_PTR(name, where)                                                                     \
    int name(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)       \
    {                                                                                              \
        return bdl_io_iaccess(fh, #name, 0, where, 0, buf, count, datatype, request);              \
    }
IREAD_PTR(MPI_File_iread, BDL_IO_INDIV)
IREAD_PTR(MPI_File_iread_all, BDL_IO_INDIV)

#define IWRITE_PTR(name, where)                                                                    \
    int name(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request) \
    {                                                                                              \
        return bdl_io_iaccess(fh, #name, 1, where, 0, (void *)buf, count, datatype, request);      \
    }
IWRITE_PTR(MPI_File_iwrite, BDL_IO_INDIV)
IWRITE_PTR(MPI_File_iwrite_all, BDL_IO_INDIV)

/* ---------------------------------------------------------------- positions */

int bdl_io_eof_pos(bdl_file_t *f, MPI_Offset *pos)
{
    struct stat st;
    if (fstat(f->fd, &st) < 0)
        return -errno;
    uint64_t b = bdl_view_bytes_below(f, st.st_size);
    *pos = (MPI_Offset)((b + f->esize - 1) / f->esize);
    return 0;
}

int bdl_io_seek_pos(bdl_file_t *f, MPI_File fh, const char *call, MPI_Offset cur, MPI_Offset offset,
                    int whence, MPI_Offset *out)
{
    MPI_Offset base;
    if (whence == MPI_SEEK_SET)
        base = 0;
    else if (whence == MPI_SEEK_CUR)
        base = cur;
    else if (whence == MPI_SEEK_END) {
        int e = bdl_io_eof_pos(f, &base);
        if (e < 0)
            return bdl_file_error(fh, bdl_io_errno_class(-e), call, "fstat of \"%s\": %s", f->path,
                                  strerror(-e));
    } else
        return bdl_file_error(fh, MPI_ERR_ARG, call,
                              "invalid whence %d (MPI_SEEK_SET, MPI_SEEK_CUR or MPI_SEEK_END)",
                              whence);
    if (base + offset < 0)
        return bdl_file_error(fh, MPI_ERR_ARG, call,
                              "offset %lld from %lld gives a negative position", (long long)offset,
                              (long long)base);
    *out = base + offset;
    return MPI_SUCCESS;
}

int MPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_seek";
    FILE_OR_ERR(call, fh, f);
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return bdl_file_error(fh, MPI_ERR_UNSUPPORTED_OPERATION, call,
                              "file %d was opened with MPI_MODE_SEQUENTIAL", fh);
    return bdl_io_seek_pos(f, fh, call, f->pos, offset, whence, &f->pos);
}

int MPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_get_position";
    FILE_OR_ERR(call, fh, f);
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return bdl_file_error(fh, MPI_ERR_UNSUPPORTED_OPERATION, call,
                              "file %d was opened with MPI_MODE_SEQUENTIAL", fh);
    if (!offset)
        return bdl_file_error(fh, MPI_ERR_ARG, call, "offset is NULL");
    *offset = f->pos;
    return MPI_SUCCESS;
}

int MPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_get_byte_offset";
    FILE_OR_ERR(call, fh, f);
    if (offset < 0)
        return bdl_file_error(fh, MPI_ERR_ARG, call, "invalid offset %lld", (long long)offset);
    if (!disp)
        return bdl_file_error(fh, MPI_ERR_ARG, call, "disp is NULL");
    *disp = bdl_view_file_offset(f, (uint64_t)offset * f->esize);
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- consistency */

int MPI_File_sync(MPI_File fh)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_sync";
    FILE_OR_ERR(call, fh, f);
    int err = fsync(f->fd) < 0 ? errno : 0;
    if (err == EINVAL || err == EROFS) /* nothing to write back to such files */
        err = 0;
    if (err)
        return bdl_file_error(fh, bdl_io_errno_class(err), call, "fsync of \"%s\": %s", f->path,
                              strerror(err));
    return MPI_SUCCESS;
}

int MPI_File_set_atomicity(MPI_File fh, int flag)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_set_atomicity";
    FILE_OR_ERR(call, fh, f);
    int v[2] = {!!flag, -!!flag}, r[2] = {0, 0};
    if (f->size > 1)
        MPI_Allreduce(v, r, 2, MPI_INT, MPI_MAX, f->comm);
    else
        r[0] = v[0], r[1] = v[1];
    if (r[0] != -r[1])
        return bdl_file_error(fh, MPI_ERR_NOT_SAME, call,
                              "flag differs among the processes of file %d", fh);
    f->atomic = !!flag;
    return MPI_SUCCESS;
}

int MPI_File_get_atomicity(MPI_File fh, int *flag)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_get_atomicity";
    FILE_OR_ERR(call, fh, f);
    if (!flag)
        return bdl_file_error(fh, MPI_ERR_ARG, call, "flag is NULL");
    *flag = f->atomic;
    return MPI_SUCCESS;
}
