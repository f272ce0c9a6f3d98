/* syscall-override.c - system calls and stdio transfers on managed memory.
 *
 * The kernel cannot fault managed memory in on the mprotect path (pages of
 * an unloaded sbpage are PROT_NONE, clean ones PROT_READ) nor on the
 * userfaultfd path with a UFFD_USER_MODE_ONLY descriptor: read(2) into such
 * memory, or write(2) from it, fails with EFAULT.  The wrappers below are
 * linked into every rank (with alloc-override.c, in the same archive) and
 * make the buffer resident (and writable and dirty when the kernel fills it)
 * with bd_mem_prepare() before calling the C library's function.  They do it
 * on every path, also where the kernel's faults are handled: one bulk load
 * is cheaper than one fault round trip per chunk.
 *
 * Fast path: a buffer that does not intersect the managed arena costs one
 * range comparison (bd_mem_overlaps: no lock, no allocation), so the
 * wrappers are safe in signal handlers, in the manager's own messages and
 * in code reached from malloc as long as the buffers there are unmanaged.
 *
 * Large transfers are cut into steps of at most STEP bytes, each prepared
 * just before its own call, so that a read of a few bytes into a huge buffer
 * does not first load (and ask the budget for) all of it.  Stepping keeps
 * the call's meaning:
 *   - a step that transfers less than asked (end of file, signal, full
 *     socket buffer, error after some data) ends the call with the bytes
 *     so far, as a single short call would; an error with nothing
 *     transferred is returned as is;
 *   - an input from a pipe, socket, terminal or character device only goes
 *     on to the next step when more data is there already (recv with
 *     MSG_DONTWAIT, else poll with no timeout), so the call never blocks
 *     longer than the single call would have;
 *   - transfers whose boundaries matter are never cut: datagram and
 *     seqpacket sockets, MSG_PEEK, recvmsg/sendmsg (ancillary data).
 *     Their whole buffer is prepared at once.
 * Step boundaries are multiples of STEP in the address space, so O_DIRECT
 * transfers keep their alignment.
 *
 * Errors: errno is left as it was on success; when the buffer cannot be
 * made resident (the budget refused it, storage failed) the call fails with
 * that error without doing anything (stdio: returns 0 and sets the stream's
 * error indicator).
 *
 * Also wrapped: recvmmsg/sendmmsg (never cut, as recvmsg), getrandom
 * (stepped like a file read), getentropy, vmsplice (stepped; later steps
 * with SPLICE_F_NONBLOCK so they never wait where the single call would
 * not).  Headers the kernel writes back (msghdr fields, mmsghdr.msg_len,
 * recvmmsg's timeout, recvfrom's address) are prepared for writing too.
 *
 * setvbuf/setbuffer/setbuf with a managed buffer: glibc fills and drains a
 * FILE's buffer through internal read/write calls that nothing here sees,
 * from any stdio function (putc is even a macro) and at exit.  So the
 * stream gets an unmanaged buffer of the same size instead (C11 7.21.5.6:
 * the array's contents are indeterminate while the stream uses it, so a
 * conforming program cannot tell), unmapped at fclose/pclose.  That buffer
 * is ordinary memory, outside the budget.
 *
 * Not covered: asynchronous I/O (aio, io_uring; see docs/design.md for
 * what each path does), process_vm_*, other rarely used calls, and a
 * buffer that another thread lets be unloaded (BDMPI unloads only while
 * the rank is blocked in MPI) before the call returns.  On those the
 * kernel may still see EFAULT unless it handles faults itself.  Vector
 * headers (iovec, msghdr) are read here before the call, so an invalid
 * pointer there crashes instead of giving EFAULT.  A signal handler may use
 * these calls on unmanaged buffers (the fast path takes no lock), not on
 * managed ones (the slow path takes the manager's lock, as touching managed
 * memory there would).
 */
#undef _FORTIFY_SOURCE /* this file defines the functions that fortify wraps */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bd_mem.h"

/* glibc's stdio.h may define these as macros when optimizing. */
#undef fread_unlocked
#undef fwrite_unlocked

/* Referenced through the link option of bdmem_override so that this object
 * is always taken from the archive. */
int bd_mem_syscall_override_linked = 1;

#define STEP ((size_t)8 << 20) /* power of two */
#define IOV_STEP 64            /* iovec entries per stepped vector call */

extern void __chk_fail(void) __attribute__((noreturn));

/* ------------------------------------------------------------------------ */
/* the C library's functions                                                 */

static struct {
    ssize_t (*read)(int, void *, size_t);
    ssize_t (*pread64)(int, void *, size_t, off64_t);
    ssize_t (*readv)(int, const struct iovec *, int);
    ssize_t (*preadv64)(int, const struct iovec *, int, off64_t);
    ssize_t (*preadv64v2)(int, const struct iovec *, int, off64_t, int);
    ssize_t (*recv)(int, void *, size_t, int);
    ssize_t (*recvfrom)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
    ssize_t (*recvmsg)(int, struct msghdr *, int);
    ssize_t (*write)(int, const void *, size_t);
    ssize_t (*pwrite64)(int, const void *, size_t, off64_t);
    ssize_t (*writev)(int, const struct iovec *, int);
    ssize_t (*pwritev64)(int, const struct iovec *, int, off64_t);
    ssize_t (*pwritev64v2)(int, const struct iovec *, int, off64_t, int);
    ssize_t (*send)(int, const void *, size_t, int);
    ssize_t (*sendto)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
    ssize_t (*sendmsg)(int, const struct msghdr *, int);
    int (*recvmmsg)(int, struct mmsghdr *, unsigned int, int, struct timespec *);
    int (*sendmmsg)(int, struct mmsghdr *, unsigned int, int);
    ssize_t (*vmsplice)(int, const struct iovec *, size_t, unsigned int);
    ssize_t (*getrandom)(void *, size_t, unsigned int);
    int (*getentropy)(void *, size_t);
    size_t (*fread)(void *, size_t, size_t, FILE *);
    size_t (*fwrite)(const void *, size_t, size_t, FILE *);
    size_t (*fread_unlocked)(void *, size_t, size_t, FILE *);
    size_t (*fwrite_unlocked)(const void *, size_t, size_t, FILE *);
    int (*setvbuf)(FILE *, char *, int, size_t);
    void (*setbuffer)(FILE *, char *, size_t);
    int (*fclose)(FILE *);
    int (*pclose)(FILE *);
} real;

static void die_unresolved(const char *name)
{
    /* Straight to the kernel: no stdio (we may be inside it) and not through
   * our own write(), which may be the one that is missing. */
    static const char m[] = "bdmem: FATAL: cannot find the C library's ";
    if (syscall(SYS_write, 2, m, sizeof m - 1) < 0 ||
        syscall(SYS_write, 2, name, strlen(name)) < 0 || syscall(SYS_write, 2, "\n", 1) < 0) {
    }
    abort();
}

static void *resolve(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f)
        die_unresolved(name);
    return f;
}

/* The constructor resolves everything before main (and before any signal
 * handler could call a wrapper), so the lazy branch only runs for calls made
 * by constructors of libraries initialized before this one. */
#define REAL(fn)                                                                                   \
    (__extension__({                                                                               \
        __typeof__(real.fn) f_ = __atomic_load_n(&real.fn, __ATOMIC_RELAXED);                      \
        if (!f_) {                                                                                 \
            f_ = (__typeof__(real.fn))resolve(#fn);                                                \
            __atomic_store_n(&real.fn, f_, __ATOMIC_RELAXED);                                      \
        }                                                                                          \
        f_;                                                                                        \
    }))

__attribute__((constructor)) static void resolve_all(void)
{
    (void)REAL(read), (void)REAL(pread64), (void)REAL(readv), (void)REAL(preadv64),
        (void)REAL(preadv64v2);
    (void)REAL(recv), (void)REAL(recvfrom), (void)REAL(recvmsg);
    (void)REAL(write), (void)REAL(pwrite64), (void)REAL(writev), (void)REAL(pwritev64),
        (void)REAL(pwritev64v2);
    (void)REAL(send), (void)REAL(sendto), (void)REAL(sendmsg), (void)REAL(recvmmsg),
        (void)REAL(sendmmsg);
    (void)REAL(vmsplice), (void)REAL(getrandom), (void)REAL(getentropy);
    (void)REAL(fread), (void)REAL(fwrite), (void)REAL(fread_unlocked), (void)REAL(fwrite_unlocked);
    (void)REAL(setvbuf), (void)REAL(setbuffer), (void)REAL(fclose), (void)REAL(pclose);
}

/* ------------------------------------------------------------------------ */
/* one transfer                                                              */

enum kind {
    K_READ,
    K_PREAD,
    K_RECV,
    K_RECVFROM,
    K_READV,
    K_PREADV,
    K_VMSPLICE_IN,
    K_GETRANDOM, /* into user memory */
    K_WRITE,
    K_PWRITE,
    K_SEND,
    K_SENDTO,
    K_WRITEV,
    K_PWRITEV,
    K_VMSPLICE_OUT, /* from user memory */
    K_FREAD,
    K_FREAD_UNLOCKED,
    K_FWRITE,
    K_FWRITE_UNLOCKED
};

typedef struct {
    enum kind k;
    int fd;
    FILE *fp;
    off64_t off; /* positional calls; -1 = current position (preadv2) */
    int flags;   /* socket flags, RWF_*, SPLICE_F_* or GRND_* */
    int v2;      /* preadv2/pwritev2 */
    struct sockaddr *from;
    socklen_t *fromlen;
    const struct sockaddr *to;
    socklen_t tolen;
} op_t;

static int is_input(enum kind k)
{
    return k <= K_GETRANDOM || k == K_FREAD || k == K_FREAD_UNLOCKED;
}
static int is_stdio(enum kind k) { return k >= K_FREAD; }

/* One call of the C library's function on len bytes at buf, done bytes into
 * the transfer.  nowait: a later step of a stream input (must not block). */
static ssize_t call1(const op_t *o, void *buf, size_t len, size_t done, int nowait)
{
    off64_t off = o->off < 0 ? o->off : o->off + (off64_t)done;
    switch (o->k) {
    case K_READ: return REAL(read)(o->fd, buf, len);
    case K_PREAD: return REAL(pread64)(o->fd, buf, len, off);
    case K_RECV: return REAL(recv)(o->fd, buf, len, o->flags | (nowait ? MSG_DONTWAIT : 0));
    case K_RECVFROM:
        return REAL(recvfrom)(o->fd, buf, len, o->flags | (nowait ? MSG_DONTWAIT : 0), o->from,
                              o->fromlen);
    case K_WRITE: return REAL(write)(o->fd, buf, len);
    case K_PWRITE: return REAL(pwrite64)(o->fd, buf, len, off);
    case K_SEND: return REAL(send)(o->fd, buf, len, o->flags);
    case K_SENDTO: return REAL(sendto)(o->fd, buf, len, o->flags, o->to, o->tolen);
    case K_GETRANDOM: return REAL(getrandom)(buf, len, (unsigned)o->flags);
    case K_FREAD: return (ssize_t)REAL(fread)(buf, 1, len, o->fp);
    case K_FREAD_UNLOCKED: return (ssize_t)REAL(fread_unlocked)(buf, 1, len, o->fp);
    case K_FWRITE: return (ssize_t)REAL(fwrite)(buf, 1, len, o->fp);
    case K_FWRITE_UNLOCKED: return (ssize_t)REAL(fwrite_unlocked)(buf, 1, len, o->fp);
    default: break;
    }
    errno = EINVAL;
    return -1;
}

/* Vector form of call1 (readv, preadv, writev, pwritev and their v2,
 * vmsplice). */
static ssize_t callv(const op_t *o, const struct iovec *iov, int n, size_t done, int nowait)
{
    off64_t off = o->off < 0 ? o->off : o->off + (off64_t)done;
    switch (o->k) {
    case K_VMSPLICE_IN:
    case K_VMSPLICE_OUT:
        return REAL(vmsplice)(o->fd, iov, (size_t)n,
                              (unsigned)o->flags | (nowait ? SPLICE_F_NONBLOCK : 0));
    case K_READV: return REAL(readv)(o->fd, iov, n);
    case K_PREADV:
        return o->v2 ? REAL(preadv64v2)(o->fd, iov, n, off, o->flags)
                     : REAL(preadv64)(o->fd, iov, n, off);
    case K_WRITEV: return REAL(writev)(o->fd, iov, n);
    case K_PWRITEV:
        return o->v2 ? REAL(pwritev64v2)(o->fd, iov, n, off, o->flags)
                     : REAL(pwritev64)(o->fd, iov, n, off);
    default: break;
    }
    errno = EINVAL;
    return -1;
}

/* How a transfer larger than STEP may be cut.  Returns 0 (never), 1 (into
 * steps) or 2 (into steps, and an input must check that more data is
 * there before each later step). */
static int step_mode(const op_t *o)
{
    if (is_stdio(o->k))
        return 1; /* fread/fwrite block until done anyway */
    if (o->k == K_GETRANDOM)
        return 1; /* blocks only until the pool is ready */
    /* A pipe: one call waits at most once, for data or room; later steps
   * get SPLICE_F_NONBLOCK in both directions. */
    if (o->k == K_VMSPLICE_IN || o->k == K_VMSPLICE_OUT)
        return 2;
    if (o->off >= 0 &&
        (o->k == K_PREAD || o->k == K_PWRITE || o->k == K_PREADV || o->k == K_PWRITEV))
        return 1;
    struct stat st;
    if (fstat(o->fd, &st) != 0)
        return 0; /* the call itself reports EBADF */
    if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode))
        return 1;
    if (S_ISSOCK(st.st_mode)) {
        int type = 0;
        socklen_t tl = sizeof type;
        if (getsockopt(o->fd, SOL_SOCKET, SO_TYPE, &type, &tl) != 0 || type != SOCK_STREAM)
            return 0;
        if ((o->k == K_RECV || o->k == K_RECVFROM) && (o->flags & MSG_PEEK))
            return 0;
        if ((o->k == K_RECV || o->k == K_RECVFROM) && (o->flags & MSG_WAITALL))
            return 1;
    }
    return is_input(o->k) ? 2 : 1;
}

/* Later step of a stream input: is there data (or end of file) to take
 * without blocking?  recv/recvfrom/vmsplice use a nonblocking flag
 * instead. */
static int more_ready(const op_t *o)
{
    if (o->k == K_RECV || o->k == K_RECVFROM || o->k == K_VMSPLICE_IN)
        return 1;
    struct pollfd p = {o->fd, POLLIN, 0};
    int r;
    do
        r = poll(&p, 1, 0);
    while (r < 0 && errno == EINTR);
    return r == 1 && (p.revents & POLLIN);
}

static void stdio_error(const op_t *o)
{
    if (o->k == K_FREAD || o->k == K_FWRITE)
        flockfile(o->fp);
    o->fp->_flags |= _IO_ERR_SEEN; /* what ferror() reads (glibc) */
    if (o->k == K_FREAD || o->k == K_FWRITE)
        funlockfile(o->fp);
}

/* Prepare failed before anything was transferred. */
static ssize_t fail_prepare(const op_t *o, int rc)
{
    if (is_stdio(o->k))
        stdio_error(o);
    errno = -rc;
    return -1;
}

/* The slow path of a single-buffer transfer that touches managed memory.
 * Returns bytes transferred or -1 with errno (stdio: never -1 after a
 * call, see callers). */
static ssize_t steps(const op_t *o, void *buf, size_t len, int mode, int saved);

static ssize_t transfer(const op_t *o, void *buf, size_t len)
{
    int saved = errno, in = is_input(o->k);
    int mode = len > STEP ? step_mode(o) : 0;
    if (mode == 0) {
        int rc = bd_mem_prepare(buf, len, in);
        if (rc < 0)
            return fail_prepare(o, rc);
        errno = saved;
        return call1(o, buf, len, 0, 0);
    }
    if (o->k != K_FREAD && o->k != K_FWRITE)
        return steps(o, buf, len, mode, saved);
    /* One fread/fwrite is atomic with respect to other threads using the
   * stream: hold its lock over all the steps. */
    op_t u = *o;
    u.k = o->k == K_FREAD ? K_FREAD_UNLOCKED : K_FWRITE_UNLOCKED;
    flockfile(o->fp);
    ssize_t r = steps(&u, buf, len, mode, saved);
    funlockfile(o->fp);
    return r;
}

static ssize_t steps(const op_t *o, void *buf, size_t len, int mode, int saved)
{
    int in = is_input(o->k);
    size_t done = 0;
    while (done < len) {
        uintptr_t cur = (uintptr_t)buf + done;
        size_t n = ((cur & ~(uintptr_t)(STEP - 1)) + STEP) - cur;
        if (n > len - done)
            n = len - done;
        if (done > 0 && mode == 2 && in && !more_ready(o))
            break;
        int rc = bd_mem_prepare((void *)cur, n, in);
        if (rc < 0) {
            if (done == 0)
                return fail_prepare(o, rc);
            break; /* a short transfer; the next call reports the error */
        }
        ssize_t r = call1(o, (void *)cur, n, done, done > 0 && mode == 2 && in);
        if (r < 0) {
            if (done == 0)
                return -1;
            break; /* data was transferred: report it, as the kernel would */
        }
        done += (size_t)r;
        if ((size_t)r < n)
            break;
    }
    errno = saved;
    return (ssize_t)done;
}

/* A macro, not a function: only the address is looked at, and GCC must see
 * that (bd_mem_overlaps is declared access(none)) even without inlining, or
 * it takes read()'s write-only buffer to be read here. */
#define managed(p, n) bd_mem_overlaps((p), (n))

static int iov_managed(const struct iovec *iov, int n)
{
    if (!iov || n <= 0)
        return 0;
    for (int i = 0; i < n; i++)
        if (managed(iov[i].iov_base, iov[i].iov_len))
            return 1;
    return 0;
}

static int iov_prepare(const struct iovec *iov, int n, int in)
{
    for (int i = 0; i < n; i++)
        if (managed(iov[i].iov_base, iov[i].iov_len)) {
            int rc = bd_mem_prepare(iov[i].iov_base, iov[i].iov_len, in);
            if (rc < 0)
                return rc;
        }
    return 0;
}

/* The slow path of a vector transfer: as transfer(), the steps made of at
 * most IOV_STEP entries and STEP bytes. */
static ssize_t transferv(const op_t *o, const struct iovec *iov, int cnt)
{
    int saved = errno, in = is_input(o->k);
    size_t total = 0;
    for (int i = 0; i < cnt; i++) {
        if (total + iov[i].iov_len < total)
            break; /* the call reports EINVAL */
        total += iov[i].iov_len;
    }
    int mode = total > STEP ? step_mode(o) : 0;
    if (mode == 0) {
        int rc = iov_prepare(iov, cnt, in);
        if (rc < 0) {
            errno = -rc;
            return -1;
        }
        errno = saved;
        return callv(o, iov, cnt, 0, 0);
    }
    struct iovec sub[IOV_STEP];
    size_t done = 0;
    int i = 0;
    size_t skip = 0; /* bytes of iov[i] already transferred */
    while (i < cnt) {
        int n = 0;
        size_t bytes = 0;
        for (int j = i; j < cnt && n < IOV_STEP && bytes < STEP; j++) {
            size_t off = j == i ? skip : 0;
            size_t l = iov[j].iov_len - off;
            if (l > STEP - bytes)
                l = STEP - bytes;
            sub[n].iov_base = (char *)iov[j].iov_base + off;
            sub[n].iov_len = l;
            n++;
            bytes += l;
        }
        if (done > 0 && mode == 2 && in && !more_ready(o))
            break;
        int rc = iov_prepare(sub, n, in);
        if (rc < 0) {
            if (done == 0) {
                errno = -rc;
                return -1;
            }
            break;
        }
        ssize_t r = callv(o, sub, n, done, done > 0 && mode == 2);
        if (r < 0) {
            if (done == 0)
                return -1;
            break;
        }
        done += (size_t)r;
        if ((size_t)r < bytes)
            break;
        /* advance the cursor over the bytes of this step */
        size_t adv = bytes;
        while (adv > 0 && i < cnt) {
            size_t left = iov[i].iov_len - skip;
            if (adv < left) {
                skip += adv;
                adv = 0;
            } else {
                adv -= left;
                i++;
                skip = 0;
            }
        }
        while (i < cnt && iov[i].iov_len == 0)
            i++;
    }
    errno = saved;
    return (ssize_t)done;
}

/* ------------------------------------------------------------------------ */
/* unistd.h                                                                  */

BD_MEM_EXPORT ssize_t read(int fd, void *buf, size_t n)
{
    if (!managed(buf, n))
        return REAL(read)(fd, buf, n);
    op_t o = {.k = K_READ, .fd = fd, .off = -1};
    return transfer(&o, buf, n);
}

BD_MEM_EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
    if (n > buflen)
        __chk_fail();
    return read(fd, buf, n);
}

BD_MEM_EXPORT ssize_t pread64(int fd, void *buf, size_t n, off64_t off)
{
    if (!managed(buf, n) || off < 0)
        return REAL(pread64)(fd, buf, n, off); /* < 0: EINVAL */
    op_t o = {.k = K_PREAD, .fd = fd, .off = off};
    return transfer(&o, buf, n);
}

BD_MEM_EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    return pread64(fd, buf, n, (off64_t)off);
}

BD_MEM_EXPORT ssize_t __pread64_chk(int fd, void *buf, size_t n, off64_t off, size_t buflen)
{
    if (n > buflen)
        __chk_fail();
    return pread64(fd, buf, n, off);
}

BD_MEM_EXPORT ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
{
    if (n > buflen)
        __chk_fail();
    return pread64(fd, buf, n, (off64_t)off);
}

BD_MEM_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
    if (!managed(buf, n))
        return REAL(write)(fd, buf, n);
    op_t o = {.k = K_WRITE, .fd = fd, .off = -1};
    return transfer(&o, (void *)buf, n);
}

BD_MEM_EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
    if (!managed(buf, n) || off < 0)
        return REAL(pwrite64)(fd, buf, n, off);
    op_t o = {.k = K_PWRITE, .fd = fd, .off = off};
    return transfer(&o, (void *)buf, n);
}

BD_MEM_EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    return pwrite64(fd, buf, n, (off64_t)off);
}

/* ------------------------------------------------------------------------ */
/* sys/uio.h                                                                 */

BD_MEM_EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
    if (!iov_managed(iov, cnt))
        return REAL(readv)(fd, iov, cnt);
    op_t o = {.k = K_READV, .fd = fd, .off = -1};
    return transferv(&o, iov, cnt);
}

BD_MEM_EXPORT ssize_t preadv64(int fd, const struct iovec *iov, int cnt, off64_t off)
{
    if (!iov_managed(iov, cnt) || off < 0)
        return REAL(preadv64)(fd, iov, cnt, off);
    op_t o = {.k = K_PREADV, .fd = fd, .off = off};
    return transferv(&o, iov, cnt);
}

BD_MEM_EXPORT ssize_t preadv(int fd, const struct iovec *iov, int cnt, off_t off)
{
    return preadv64(fd, iov, cnt, (off64_t)off);
}

BD_MEM_EXPORT ssize_t preadv64v2(int fd, const struct iovec *iov, int cnt, off64_t off, int flags)
{
    if (!iov_managed(iov, cnt) || off < -1)
        return REAL(preadv64v2)(fd, iov, cnt, off, flags);
    op_t o = {.k = K_PREADV, .fd = fd, .off = off, .flags = flags, .v2 = 1};
    return transferv(&o, iov, cnt);
}

BD_MEM_EXPORT ssize_t preadv2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
    return preadv64v2(fd, iov, cnt, (off64_t)off, flags);
}

BD_MEM_EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    if (!iov_managed(iov, cnt))
        return REAL(writev)(fd, iov, cnt);
    op_t o = {.k = K_WRITEV, .fd = fd, .off = -1};
    return transferv(&o, iov, cnt);
}

BD_MEM_EXPORT ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off64_t off)
{
    if (!iov_managed(iov, cnt) || off < 0)
        return REAL(pwritev64)(fd, iov, cnt, off);
    op_t o = {.k = K_PWRITEV, .fd = fd, .off = off};
    return transferv(&o, iov, cnt);
}

BD_MEM_EXPORT ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
    return pwritev64(fd, iov, cnt, (off64_t)off);
}

BD_MEM_EXPORT ssize_t pwritev64v2(int fd, const struct iovec *iov, int cnt, off64_t off, int flags)
{
    if (!iov_managed(iov, cnt) || off < -1)
        return REAL(pwritev64v2)(fd, iov, cnt, off, flags);
    op_t o = {.k = K_PWRITEV, .fd = fd, .off = off, .flags = flags, .v2 = 1};
    return transferv(&o, iov, cnt);
}

BD_MEM_EXPORT ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
    return pwritev64v2(fd, iov, cnt, (off64_t)off, flags);
}

/* ------------------------------------------------------------------------ */
/* sys/socket.h                                                              */

BD_MEM_EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags)
{
    if (!managed(buf, n))
        return REAL(recv)(fd, buf, n, flags);
    op_t o = {.k = K_RECV, .fd = fd, .off = -1, .flags = flags};
    return transfer(&o, buf, n);
}

BD_MEM_EXPORT ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags)
{
    if (n > buflen)
        __chk_fail();
    return recv(fd, buf, n, flags);
}

/* The sender's address and its length, which the kernel writes back. */
static int addr_managed(const struct sockaddr *a, const socklen_t *alen)
{
    return alen && (managed(alen, sizeof *alen) || (a && managed(a, *alen)));
}

static int addr_prepare(struct sockaddr *a, socklen_t *alen)
{
    int rc = bd_mem_prepare(alen, sizeof *alen, 1);
    if (rc == 0 && a)
        rc = bd_mem_prepare(a, *alen, 1);
    return rc;
}

BD_MEM_EXPORT ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *from,
                               socklen_t *fromlen)
{
    int buf_managed = managed(buf, n);
    if (!buf_managed && !addr_managed(from, fromlen))
        return REAL(recvfrom)(fd, buf, n, flags, from, fromlen);
    if (addr_managed(from, fromlen)) {
        int saved = errno, rc = addr_prepare(from, fromlen);
        if (rc < 0) {
            errno = -rc;
            return -1;
        }
        errno = saved;
        if (!buf_managed)
            return REAL(recvfrom)(fd, buf, n, flags, from, fromlen);
    }
    op_t o = {
        .k = K_RECVFROM, .fd = fd, .off = -1, .flags = flags, .from = from, .fromlen = fromlen};
    return transfer(&o, buf, n);
}

BD_MEM_EXPORT ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags,
                                     struct sockaddr *from, socklen_t *fromlen)
{
    if (n > buflen)
        __chk_fail();
    return recvfrom(fd, buf, n, flags, from, fromlen);
}

BD_MEM_EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
    if (!managed(buf, n))
        return REAL(send)(fd, buf, n, flags);
    op_t o = {.k = K_SEND, .fd = fd, .off = -1, .flags = flags};
    return transfer(&o, (void *)buf, n);
}

BD_MEM_EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags,
                             const struct sockaddr *to, socklen_t tolen)
{
    if (!managed(buf, n))
        return REAL(sendto)(fd, buf, n, flags, to, tolen);
    op_t o = {.k = K_SENDTO, .fd = fd, .off = -1, .flags = flags, .to = to, .tolen = tolen};
    return transfer(&o, (void *)buf, n);
}

/* A message keeps its boundaries and ancillary data: never cut, the whole
 * of it (name, data, control) prepared at once.  On input the kernel also
 * writes the header (msg_namelen, msg_controllen, msg_flags). */
static int msg_managed(const struct msghdr *m)
{
    return m &&
           (managed(m, sizeof *m) || iov_managed(m->msg_iov, (int)m->msg_iovlen) ||
            managed(m->msg_name, m->msg_namelen) || managed(m->msg_control, m->msg_controllen));
}

static int msg_prepare(const struct msghdr *m, int in)
{
    int rc = in && managed(m, sizeof *m) ? bd_mem_prepare(m, sizeof *m, 1) : 0;
    if (rc == 0)
        rc = iov_prepare(m->msg_iov, (int)m->msg_iovlen, in);
    if (rc == 0 && managed(m->msg_name, m->msg_namelen))
        rc = bd_mem_prepare(m->msg_name, m->msg_namelen, in);
    if (rc == 0 && managed(m->msg_control, m->msg_controllen))
        rc = bd_mem_prepare(m->msg_control, m->msg_controllen, in);
    return rc;
}

BD_MEM_EXPORT ssize_t recvmsg(int fd, struct msghdr *m, int flags)
{
    if (msg_managed(m)) {
        int saved = errno, rc = msg_prepare(m, 1);
        if (rc < 0) {
            errno = -rc;
            return -1;
        }
        errno = saved;
    }
    return REAL(recvmsg)(fd, m, flags);
}

BD_MEM_EXPORT ssize_t sendmsg(int fd, const struct msghdr *m, int flags)
{
    if (msg_managed(m)) {
        int saved = errno, rc = msg_prepare(m, 0);
        if (rc < 0) {
            errno = -rc;
            return -1;
        }
        errno = saved;
    }
    return REAL(sendmsg)(fd, m, flags);
}

/* recvmmsg/sendmmsg: every message as in recvmsg/sendmsg, all at once (a
 * cut would change which messages one call takes and when its timeout
 * runs out).  The kernel writes msg_len back in both directions, so the
 * header array is prepared for writing. */
#define MMSG_MAX 1024 /* UIO_MAXIOV: the kernel looks at no more messages */

static int mmsg_managed(const struct mmsghdr *v, unsigned n)
{
    if (!v)
        return 0;
    if (n > MMSG_MAX)
        n = MMSG_MAX;
    if (managed(v, (size_t)n * sizeof *v))
        return 1;
    for (unsigned i = 0; i < n; i++)
        if (msg_managed(&v[i].msg_hdr))
            return 1;
    return 0;
}

static int mmsg_prepare(struct mmsghdr *v, unsigned n, int in)
{
    if (n > MMSG_MAX)
        n = MMSG_MAX;
    int rc = managed(v, (size_t)n * sizeof *v) ? bd_mem_prepare(v, (size_t)n * sizeof *v, 1) : 0;
    for (unsigned i = 0; rc == 0 && i < n; i++)
        rc = msg_prepare(&v[i].msg_hdr, in);
    return rc;
}

BD_MEM_EXPORT int recvmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags,
                           struct timespec *tmo)
{
    int tmo_managed = tmo && managed(tmo, sizeof *tmo); /* the time left is written back */
    if (mmsg_managed(v, n) || tmo_managed) {
        int saved = errno, rc = mmsg_prepare(v, n, 1);
        if (rc == 0 && tmo_managed)
            rc = bd_mem_prepare(tmo, sizeof *tmo, 1);
        if (rc < 0) {
            errno = -rc;
            return -1;
        }
        errno = saved;
    }
    return REAL(recvmmsg)(fd, v, n, flags, tmo);
}

BD_MEM_EXPORT int sendmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags)
{
    if (mmsg_managed(v, n)) {
        int saved = errno, rc = mmsg_prepare(v, n, 0);
        if (rc < 0) {
            errno = -rc;
            return -1;
        }
        errno = saved;
    }
    return REAL(sendmmsg)(fd, v, n, flags);
}

/* ------------------------------------------------------------------------ */
/* fcntl.h, sys/random.h                                                     */

/* The direction is the one the kernel picks: a descriptor open for writing
 * is spliced into, else the pipe is read into user memory. */
BD_MEM_EXPORT ssize_t vmsplice(int fd, const struct iovec *iov, size_t cnt, unsigned int flags)
{
    if (cnt > MMSG_MAX || !iov_managed(iov, (int)cnt))
        return REAL(vmsplice)(fd, iov, cnt, flags);
    int saved = errno, fl = fcntl(fd, F_GETFL);
    errno = saved;
    if (fl < 0)
        return REAL(vmsplice)(fd, iov, cnt, flags); /* EBADF */
    op_t o = {.k = (fl & O_ACCMODE) == O_RDONLY ? K_VMSPLICE_IN : K_VMSPLICE_OUT,
              .fd = fd,
              .off = -1,
              .flags = (int)flags};
    return transferv(&o, iov, (int)cnt);
}

BD_MEM_EXPORT ssize_t getrandom(void *buf, size_t n, unsigned int flags)
{
    if (!managed(buf, n))
        return REAL(getrandom)(buf, n, flags);
    op_t o = {.k = K_GETRANDOM, .fd = -1, .off = -1, .flags = (int)flags};
    return transfer(&o, buf, n);
}

BD_MEM_EXPORT int getentropy(void *buf, size_t n)
{
    if (n <= 256 && managed(buf, n)) { /* longer: EIO without touching it */
        int saved = errno, rc = bd_mem_prepare(buf, n, 1);
        if (rc < 0) {
            errno = -rc;
            return -1;
        }
        errno = saved;
    }
    return REAL(getentropy)(buf, n);
}

/* ------------------------------------------------------------------------ */
/* stdio: glibc's fread/fwrite call the kernel through internal symbols that
 * no wrapper above sees, so they are wrapped themselves.  Counting in bytes
 * and dividing at the end is what glibc does too (a partial item is
 * consumed but not counted). */

static size_t stdio_xfer(enum kind k, void *p, size_t size, size_t n, FILE *fp)
{
    size_t bytes;
    if (size == 0 || n == 0 || __builtin_mul_overflow(size, n, &bytes) || !managed(p, bytes)) {
        switch (k) {
        case K_FREAD: return REAL(fread)(p, size, n, fp);
        case K_FREAD_UNLOCKED: return REAL(fread_unlocked)(p, size, n, fp);
        case K_FWRITE: return REAL(fwrite)(p, size, n, fp);
        default: return REAL(fwrite_unlocked)(p, size, n, fp);
        }
    }
    op_t o = {.k = k, .fd = -1, .fp = fp, .off = -1};
    ssize_t r = transfer(&o, p, bytes);
    return r <= 0 ? 0 : (size_t)r / size;
}

BD_MEM_EXPORT size_t fread(void *p, size_t size, size_t n, FILE *fp)
{
    return stdio_xfer(K_FREAD, p, size, n, fp);
}
BD_MEM_EXPORT size_t fread_unlocked(void *p, size_t size, size_t n, FILE *fp)
{
    return stdio_xfer(K_FREAD_UNLOCKED, p, size, n, fp);
}
BD_MEM_EXPORT size_t fwrite(const void *p, size_t size, size_t n, FILE *fp)
{
    return stdio_xfer(K_FWRITE, (void *)p, size, n, fp);
}
BD_MEM_EXPORT size_t fwrite_unlocked(const void *p, size_t size, size_t n, FILE *fp)
{
    return stdio_xfer(K_FWRITE_UNLOCKED, (void *)p, size, n, fp);
}

BD_MEM_EXPORT size_t __fread_chk(void *p, size_t plen, size_t size, size_t n, FILE *fp)
{
    size_t bytes;
    if (__builtin_mul_overflow(size, n, &bytes) || bytes > plen)
        __chk_fail();
    return fread(p, size, n, fp);
}

BD_MEM_EXPORT size_t __fread_unlocked_chk(void *p, size_t plen, size_t size, size_t n, FILE *fp)
{
    size_t bytes;
    if (__builtin_mul_overflow(size, n, &bytes) || bytes > plen)
        __chk_fail();
    return fread_unlocked(p, size, n, fp);
}

/* ------------------------------------------------------------------------ */
/* stdio buffers.  A stream given a managed buffer gets an unmanaged one of
 * the same size (see the top of the file).  The mapping starts with one
 * page of bookkeeping, so no allocation is needed; mappings are listed per
 * stream and unmapped when it is closed (a stream closed another way, e.g.
 * by fcloseall, keeps its mapping until exit, or until a later stream at
 * the same address is closed: it is unused by then). */

typedef struct subst {
    struct subst *next;
    FILE *fp;
    size_t maplen;
} subst_t;

static subst_t *subst_list;
static pthread_mutex_t subst_lock = PTHREAD_MUTEX_INITIALIZER;

static subst_t *subst_new(FILE *fp, size_t size)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE), len;
    if (__builtin_add_overflow(size, 2 * pg - 1, &len))
        return NULL;
    len &= ~(pg - 1);
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    subst_t *s = m;
    s->fp = fp;
    s->maplen = len;
    return s;
}

static char *subst_buf(subst_t *s) { return (char *)s + sysconf(_SC_PAGESIZE); }

static void subst_add(subst_t *s)
{
    pthread_mutex_lock(&subst_lock);
    s->next = subst_list;
    __atomic_store_n(&subst_list, s, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&subst_lock);
}

static void subst_unmap(subst_t *s)
{
    int saved = errno;
    while (s) {
        subst_t *next = s->next;
        munmap(s, s->maplen);
        s = next;
    }
    errno = saved;
}

/* Before the stream is closed: after it, another thread's new stream may
 * get the same address and a mapping of its own. */
static subst_t *subst_take(FILE *fp)
{
    subst_t *mine = NULL;
    pthread_mutex_lock(&subst_lock);
    for (subst_t **pp = &subst_list; *pp;) {
        subst_t *s = *pp;
        if (s->fp == fp) {
            *pp = s->next;
            s->next = mine;
            mine = s;
        } else {
            pp = &s->next;
        }
    }
    pthread_mutex_unlock(&subst_lock);
    return mine;
}

BD_MEM_EXPORT int setvbuf(FILE *fp, char *buf, int mode, size_t size)
{
    /* Without a buffer, or unbuffered, glibc does not use buf. */
    if (!buf || size == 0 || (mode != _IOFBF && mode != _IOLBF) || !managed(buf, size))
        return REAL(setvbuf)(fp, buf, mode, size);
    subst_t *s = subst_new(fp, size);
    if (!s) {
        errno = ENOMEM;
        return EOF;
    }
    int r = REAL(setvbuf)(fp, subst_buf(s), mode, size);
    if (r == 0)
        subst_add(s);
    else
        subst_unmap(s);
    return r;
}

BD_MEM_EXPORT void setbuffer(FILE *fp, char *buf, size_t size)
{
    if (!buf || size == 0 || !managed(buf, size)) {
        REAL(setbuffer)(fp, buf, size);
        return;
    }
    subst_t *s = subst_new(fp, size);
    if (s) {
        REAL(setbuffer)(fp, subst_buf(s), size);
        subst_add(s);
    } else {
        /* Nothing to report through: fully buffered with a buffer of glibc's
     * choosing, the nearest thing. */
        REAL(setvbuf)(fp, NULL, _IOFBF, 0);
    }
}

/* glibc's setbuf calls its internal setbuffer. */
BD_MEM_EXPORT void setbuf(FILE *fp, char *buf) { setbuffer(fp, buf, BUFSIZ); }

BD_MEM_EXPORT int fclose(FILE *fp)
{
    if (!__atomic_load_n(&subst_list, __ATOMIC_ACQUIRE))
        return REAL(fclose)(fp);
    subst_t *mine = subst_take(fp);
    int r = REAL(fclose)(fp);
    subst_unmap(mine);
    return r;
}

BD_MEM_EXPORT int pclose(FILE *fp)
{
    if (!__atomic_load_n(&subst_list, __ATOMIC_ACQUIRE))
        return REAL(pclose)(fp);
    subst_t *mine = subst_take(fp);
    int r = REAL(pclose)(fp);
    subst_unmap(mine);
    return r;
}
