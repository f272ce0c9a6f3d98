/* mem_util.c - async-signal-safe helpers: messages, timing, full I/O. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <linux/futex.h>
#include <unistd.h>

#include "bd_crc.h"
#include "bd_fault.h"
#include "bd_iowatch.h"
#include "mem_internal.h"

void bdm_msg(const char *s)
{
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t w = write(2, s, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        s += w;
        n -= (size_t)w;
    }
}

void bdm_fmt_u64(char *out, uint64_t v)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (int i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    out[n] = 0;
}

void bdm_fmt_hex(char *out, uint64_t v)
{
    static const char hx[] = "0123456789abcdef";
    char tmp[20];
    int n = 0;
    do {
        tmp[n++] = hx[v & 15];
        v >>= 4;
    } while (v);
    out[0] = '0';
    out[1] = 'x';
    for (int i = 0; i < n; i++)
        out[2 + i] = tmp[n - 1 - i];
    out[2 + n] = 0;
}

static const char *errname(int e)
{
    switch (e) {
    case ENOSPC: return "ENOSPC (no space left on device)";
    case EDQUOT: return "EDQUOT (disk quota exceeded)";
    case EIO: return "EIO (I/O error)";
    case EFBIG: return "EFBIG (file too large)";
    case ENOMEM: return "ENOMEM (out of memory or too many mappings)";
    case EFAULT: return "EFAULT (bad address)";
    case EINVAL: return "EINVAL (invalid argument)";
    case EPERM: return "EPERM (operation not permitted)";
    case EACCES: return "EACCES (permission denied)";
    case ENOENT: return "ENOENT (no such file)";
    case EMFILE: return "EMFILE (too many open files)";
    case EROFS: return "EROFS (read-only file system)";
    case EAGAIN: return "EAGAIN";
    default: return NULL;
    }
}

void bdm_die(const char *what, int err, size_t bytes)
{
    char num[32];
    bdm_msg("bdmem: FATAL: ");
    if (bdm_g.label[0]) {
        bdm_msg(bdm_g.label);
        bdm_msg(": ");
    }
    bdm_msg(what);
    if (err && bdm_g.st.err_call) {
        bdm_msg(": ");
        bdm_msg(bdm_g.st.err_call);
    }
    if (err) {
        const char *n = errname(err);
        bdm_msg(": ");
        if (n) {
            bdm_msg(n);
        } else {
            bdm_msg("errno ");
            bdm_fmt_u64(num, (uint64_t)err);
            bdm_msg(num);
        }
    }
    bdm_msg(" [storage dir ");
    bdm_msg(bdm_g.dir[0] ? bdm_g.dir : "(unset)");
    bdm_msg(", ");
    bdm_fmt_u64(num, bytes);
    bdm_msg(num);
    bdm_msg(" bytes]\n");
    abort();
}

void bdm_die_corrupt(const alloc_t *a, uint64_t off)
{
    char num[32], path[sizeof bdm_g.dir + 64];
    bdm_backing_path(a, path);
    bdm_fmt_u64(num, off);
    bdm_msg("bdmem: FATAL: storage returned corrupted data for ");
    bdm_msg(bdm_g.label[0] ? bdm_g.label : "this process");
    bdm_msg(" at offset ");
    bdm_msg(num);
    bdm_msg(" in ");
    bdm_msg(path);
    bdm_msg(" (its CRC32C differs from the one recorded when it was written)\n");
    abort();
}

size_t bdm_crc_check(const uint8_t *buf, size_t n, const uint32_t *want)
{
    size_t sb = bdm_g.sbpage;
    for (size_t k = 0; k < n; k++)
        if (bd_crc32c(0, buf + k * sb, sb) != want[k])
            return k;
    return n;
}

uint64_t bdm_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The backing-file I/O below runs with the manager's lock held and, on the
 * uffd path, writes straight from managed memory.  It calls the kernel
 * directly so that it never goes through the program-level pread/pwrite
 * wrappers of syscall-override.c (they would take the lock again) and is
 * never a thread-cancellation point while the lock is held. */
static int pread_loop(int fd, void *buf, size_t len, off_t off)
{
    uint8_t *p = buf;
    while (len > 0) {
        ssize_t r = BD_IO_SYS(BD_FAULT_MEM_PREAD, syscall(SYS_pread64, fd, p, len, off));
        if (r < 0) {
            if (errno == EINTR)
                continue;
            bdm_g.st.err_call = "pread";
            return -errno;
        }
        if (r == 0) {
            bdm_g.st.err_call = "pread (end of file)";
            return -EIO; /* stored sbpages are always inside the file */
        }
        p += r;
        off += r;
        len -= (size_t)r;
    }
    return 0;
}

static int pwrite_loop(int fd, const void *buf, size_t len, off_t off)
{
    const uint8_t *p = buf;
    while (len > 0) {
        ssize_t w = BD_IO_SYS(BD_FAULT_MEM_PWRITE, syscall(SYS_pwrite64, fd, p, len, off));
        if (w < 0) {
            if (errno == EINTR)
                continue;
            bdm_g.st.err_call = "pwrite";
            return -errno;
        }
        if (w == 0)
            return -EIO;
        p += w;
        off += w;
        len -= (size_t)w;
    }
    return 0;
}

/* Every read and write of backing storage goes through these two, which
 * tell the runtime (cfg.io_begin, cfg.io_end). */
int bdm_pread_all(int fd, void *buf, size_t len, off_t off)
{
    if (!bdm_g.io_begin || !bdm_g.io_end)
        return pread_loop(fd, buf, len, off);
    bdm_g.io_begin(bdm_g.ctx, 0);
    uint64_t t0 = bdm_now_ns();
    int rc = pread_loop(fd, buf, len, off);
    bdm_g.io_end(bdm_g.ctx, 0, rc == 0 ? len : 0, t0);
    return rc;
}

/* A write told to the runtime as kind (1: the process's own, 2: in the
 * background, see bdm_pwrite_bg). */
static int pwrite_told(int kind, int fd, const void *buf, size_t len, off_t off)
{
    if (!bdm_g.io_begin || !bdm_g.io_end)
        return pwrite_loop(fd, buf, len, off);
    bdm_g.io_begin(bdm_g.ctx, kind);
    uint64_t t0 = bdm_now_ns();
    int rc = pwrite_loop(fd, buf, len, off);
    bdm_g.io_end(bdm_g.ctx, kind, rc == 0 ? len : 0, t0);
    return rc;
}

int bdm_pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
    return pwrite_told(1, fd, buf, len, off);
}

/* A write in the background of a running process (pre-cleaning): told to
 * the runtime as write 2, which the timeline records but the accounting of
 * the process's own time does not count (the process computes meanwhile). */
int bdm_pwrite_bg(int fd, const void *buf, size_t len, off_t off)
{
    return pwrite_told(2, fd, buf, len, off);
}

void *bdm_map(size_t len)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void bdm_unmap(void *p, size_t len)
{
    if (p)
        munmap(p, len);
}

/* ------------------------------------------------------------------------ */
/* I/O slots: one worker thread per slot.  A worker never takes the manager's
 * lock and never touches the application's view from user space: it reads
 * into a bounce buffer (uffd) or the staging view (mprotect), installs the
 * data (UFFDIO_COPY, which wakes threads waiting on those pages, or
 * mprotect(PROT_READ)), and marks the slot done.  Whoever holds the lock
 * reaps done slots and updates the sbpage state. */

static void futex_wait(_Atomic uint32_t *w, uint32_t v)
{
    syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *w)
{
    syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static void *io_worker(void *arg)
{
    io_slot_t *sl = arg;
    for (;;) {
        uint32_t st = __atomic_load_n(&sl->state, __ATOMIC_ACQUIRE);
        if (st == IO_STOP)
            break;
        if (st != IO_SUB) {
            futex_wait(&sl->state, st);
            continue;
        }
        uint64_t t0 = bdm_now_ns();
        size_t nsb = sl->len / bdm_g.sbpage;
        if (sl->op == IO_WRITE && bdm_g.verify) /* what is stored: its checksum, per sbpage */
            for (size_t k = 0; k < nsb; k++)
                sl->crc[k] = bd_crc32c(0, sl->buf + k * bdm_g.sbpage, bdm_g.sbpage);
        if (sl->op == IO_WRITE && (sl->flags & IO_PRECLEAN) && bdm_g.pc_delay) {
            struct timespec ts = {(time_t)(bdm_g.pc_delay / 1000000000ULL),
                                  (long)(bdm_g.pc_delay % 1000000000ULL)};
            nanosleep(&ts, NULL); /* tests: writes and scans fall inside this one */
        }
        int rc = (sl->flags & IO_REMOTE)     ? bdm_rmt_io(sl)
                 : sl->op == IO_READ         ? bdm_pread_all(sl->fd, sl->buf, sl->len, sl->off)
                 : (sl->flags & IO_PRECLEAN) ? bdm_pwrite_bg(sl->fd, sl->buf, sl->len, sl->off)
                                             : bdm_pwrite_all(sl->fd, sl->buf, sl->len, sl->off);
        if (rc == 0 && sl->op == IO_READ && bdm_g.verify &&
            (sl->bad = bdm_crc_check(sl->buf, nsb, sl->crc)) < nsb)
            rc = -EBADMSG; /* never installed: the reaper stops the process */
        if (rc == 0 && sl->op == IO_READ && sl->install) {
            int untracked = (sl->flags & IO_UNTRACKED) != 0;
            if (bdm_g.track == BD_MEM_TRACK_UFFD)
                bdm_uffd_install_mode(sl->install, sl->buf, sl->len, !untracked);
            else if (mprotect((void *)sl->install, sl->len,
                              untracked ? PROT_READ | PROT_WRITE : PROT_READ) != 0)
                rc = -errno;
            else /* map it now, instead of one fault per 4 KiB page later */
                madvise((void *)sl->install, sl->len,
                        untracked ? 23 /* MADV_POPULATE_WRITE */ : 22 /* MADV_POPULATE_READ */);
        }
        sl->ns = bdm_now_ns() - t0;
        sl->rc = rc;
        __atomic_store_n(&sl->state, IO_DONE, __ATOMIC_RELEASE);
        futex_wake(&sl->state);
        if (bdm_g.io_evfd >= 0) {
            uint64_t one = 1;
            if (write(bdm_g.io_evfd, &one, sizeof one) < 0) { /* counter overflow cannot happen */
            }
        }
    }
    return NULL;
}

void bdm_io_submit(io_slot_t *sl)
{
    __atomic_store_n(&sl->state, IO_SUB, __ATOMIC_RELEASE);
    futex_wake(&sl->state);
}

void bdm_io_wait(io_slot_t *sl)
{
    uint32_t st;
    while ((st = __atomic_load_n(&sl->state, __ATOMIC_ACQUIRE)) == IO_SUB)
        futex_wait(&sl->state, st);
}

int bdm_io_start(void)
{
    mem_global_t *g = &bdm_g;
    g->io = bdm_map(IO_NSLOT * sizeof(io_slot_t));
    if (!g->io)
        return -ENOMEM;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = 0, n = 0;
    for (; n < IO_NSLOT; n++) {
        io_slot_t *sl = &g->io[n];
        sl->state = IO_FREE;
        rc = -pthread_create(&sl->th, NULL, io_worker, sl);
        if (rc)
            break;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    g->io_started = n;
    if (rc)
        bdm_io_stop();
    return rc;
}

void bdm_io_stop(void)
{
    mem_global_t *g = &bdm_g;
    for (int i = 0; i < g->io_started; i++) {
        bdm_io_wait(&g->io[i]);
        __atomic_store_n(&g->io[i].state, IO_STOP, __ATOMIC_RELEASE);
        futex_wake(&g->io[i].state);
        pthread_join(g->io[i].th, NULL);
    }
    g->io_started = 0;
    bdm_unmap(g->io, IO_NSLOT * sizeof(io_slot_t));
    g->io = NULL;
}

/* ------------------------------------------------------------------------ */
/* per-allocation I/O counts (cfg.alloc_report)                               */

void bdm_count_io(alloc_t *a, int write, uint64_t bytes)
{
    if (write) {
        bdm_g.st.bytes_written += bytes;
        a->wr += bytes;
        a->nwr++;
    } else {
        bdm_g.st.bytes_read += bytes;
        a->rd += bytes;
        a->nrd++;
    }
}

/* Decimal digits of v at the end of buf[0..n); returns the first digit. */
static char *fmt_u64(char *buf, size_t n, uint64_t v)
{
    char *p = buf + n;
    *--p = '\0';
    do
        *--p = (char)('0' + v % 10);
    while ((v /= 10) && p > buf);
    return p;
}

void bdm_alloc_report(const alloc_t *a)
{
    if (!bdm_g.alloc_report || (!a->rd && !a->wr))
        return;
    /* free may run inside malloc: no stdio, no allocation */
    char line[256], num[24];
    size_t len = 0;
    const char *parts[] = {bdm_g.label[0] ? bdm_g.label : "bdmem",
                           ": mem alloc ",
                           NULL,
                           " size ",
                           NULL,
                           " read ",
                           NULL,
                           " in ",
                           NULL,
                           " written ",
                           NULL,
                           " in ",
                           NULL,
                           "\n"};
    const uint64_t vals[] = {a->id, a->size, a->rd, a->nrd, a->wr, a->nwr};
    int v = 0;
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
        const char *s = parts[i] ? parts[i] : fmt_u64(num, sizeof num, vals[v++]);
        size_t l = strlen(s);
        if (len + l >= sizeof line)
            break;
        memcpy(line + len, s, l);
        len += l;
    }
    ssize_t rc = write(2, line, len);
    (void)rc;
}
