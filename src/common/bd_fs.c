#include "bd_fs.h"
#include "bd_crc.h"
#include "bd_fault.h"
#include "bd_iowatch.h"
#include "bd_ipc.h"

#include <dirent.h>
#include <linux/aio_abi.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* This boot of this machine: the kernel's random boot id. */
static int read_boot_id(char *out, size_t len)
{
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t r = read(fd, out, len - 1);
    close(fd);
    if (r <= 0)
        return -1;
    out[r] = 0;
    out[strcspn(out, "\n ")] = 0;
    return out[0] ? 0 : -1;
}

/* The start time of process pid (field 22 of /proc/PID/stat, in clock
 * ticks since boot): with the pid, it names one process, not whoever gets
 * the pid next.  -1 (errno set) when there is no such process or it has
 * ended (a zombie nobody reaped: an orphan's new parent may never). */
static int proc_start_time(int pid, unsigned long long *out)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t r = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (r <= 0)
        return -1;
    buf[r] = 0;
    /* the command name, in parentheses, may hold spaces and parentheses */
    char *p = strrchr(buf, ')');
    if (!p) {
        errno = EINVAL;
        return -1;
    }
    /* after it: field 3 (state) ... field 22 (starttime) */
    char state = 0;
    if (sscanf(p + 1, " %c", &state) != 1 || state == 'Z' || state == 'X') {
        errno = ESRCH;
        return -1;
    }
    if (sscanf(p + 1,
               " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
               "%*d %*d %llu",
               out) != 1) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

static int owner_append(const char *jobdir, const char *line, size_t len)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/" BD_FS_JOBDIR_OWNER, jobdir);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -1;
    ssize_t w = write(fd, line, len);
    int saved = errno;
    close(fd);
    if (w != (ssize_t)len) {
        errno = w < 0 ? saved : EIO;
        return -1;
    }
    return 0;
}

int bd_fs_make_jobdir(const char *base, char *out, size_t outlen, char *err, size_t errlen)
{
    if (!base || !*base)
        base = getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    struct stat st;
    if (stat(base, &st) < 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "working directory '%s' is not a directory: %s", base,
                 errno ? strerror(errno) : "not a directory");
        return -1;
    }
    if ((size_t)snprintf(out, outlen, "%s/bdmpi.%d.XXXXXX", base, (int)getpid()) >= outlen) {
        snprintf(err, errlen, "working directory path '%s' is too long", base);
        return -1;
    }
    if (!mkdtemp(out)) {
        snprintf(err, errlen, "cannot create a job directory in '%s': %s", base, strerror(errno));
        return -1;
    }
    char boot[64], line[160];
    unsigned long long start = 0;
    if (read_boot_id(boot, sizeof boot) < 0 || proc_start_time(getpid(), &start) < 0) {
        boot[0] = 0; /* no /proc: no owner file, and the directory is never swept */
    }
    int n = snprintf(line, sizeof line, "boot %s\npid %d %llu\n", boot, (int)getpid(), start);
    if (boot[0] && owner_append(out, line, (size_t)n) < 0) {
        snprintf(err, errlen, "cannot write in the job directory '%s': %s", out, strerror(errno));
        bd_fs_remove_tree(out);
        return -1;
    }
    return 0;
}

int bd_fs_jobdir_mark_guardian(const char *jobdir, int guardian_pid)
{
    unsigned long long start = 0;
    if (proc_start_time(guardian_pid, &start) < 0)
        return -errno;
    char line[64];
    int n = snprintf(line, sizeof line, "pid %d %llu\n", guardian_pid, start);
    return owner_append(jobdir, line, (size_t)n) < 0 ? -errno : 0;
}

/* The owner file's pids: is one of them still the process it names? */
static int owner_alive(const char *text)
{
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        int pid;
        unsigned long long start, now;
        if (sscanf(l, "pid %d %llu", &pid, &start) != 2)
            continue;
        if (pid > 0 && proc_start_time(pid, &now) == 0 && now == start)
            return 1;
    }
    return 0;
}

int bd_fs_jobdir_sweep(const char *base, int min_age_s, void (*removed)(const char *path, int pid))
{
    if (!base || !*base)
        base = getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    char boot[64];
    if (read_boot_id(boot, sizeof boot) < 0)
        return 0;
    DIR *d = opendir(base);
    if (!d)
        return 0;
    uid_t me = geteuid();
    time_t now = time(NULL);
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        int pid = 0, n = 0;
        if (sscanf(e->d_name, "bdmpi.%d.%*6[A-Za-z0-9]%n", &pid, &n) != 1 || n == 0 ||
            e->d_name[n] || pid <= 0)
            continue;
        char path[4096], owner[4200], text[512];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", base, e->d_name);
        if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != me ||
            now - st.st_mtime < min_age_s)
            continue;
        snprintf(owner, sizeof owner, "%s/" BD_FS_JOBDIR_OWNER, path);
        int fd = open(owner, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
            continue;
        ssize_t r = read(fd, text, sizeof text - 1);
        close(fd);
        if (r <= 0)
            continue;
        text[r] = 0;
        char their[64];
        if (sscanf(text, "boot %63s", their) != 1 || strcmp(their, boot) != 0 || owner_alive(text))
            continue;
        if (bd_fs_remove_tree(path) == 0) {
            count++;
            if (removed)
                removed(path, pid);
        }
    }
    closedir(d);
    return count;
}

int bd_fs_check_private_dir(const char *dir, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(dir, &st) < 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        return -1;
    }
    if (S_ISLNK(st.st_mode)) {
        snprintf(err, errlen, "it is a symbolic link");
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "it is not a directory");
        return -1;
    }
    if (st.st_uid != geteuid()) {
        snprintf(err, errlen, "it is owned by uid %u, not by this user (uid %u)",
                 (unsigned)st.st_uid, (unsigned)geteuid());
        return -1;
    }
    if (st.st_mode & 077) {
        snprintf(err, errlen, "it has mode %04o, which lets group or others in",
                 (unsigned)(st.st_mode & 07777));
        return -1;
    }
    return 0;
}

int bd_fs_remove_tree(const char *dir)
{
    if (!dir || !*dir)
        return 0;
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : -errno;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (e->d_type == DT_DIR)
            bd_fs_remove_tree(path);
        else
            unlink(path);
    }
    closedir(d);
    return rmdir(dir) < 0 ? -errno : 0;
}

int bd_fs_spill_create(const char *path, int want_direct, int *direct)
{
    int flags = O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC;
    if (BD_FAULT_SYS(BD_FAULT_SPILL_OPEN) < 0)
        return -errno;
    int fd = want_direct ? open(path, flags | O_DIRECT, 0600) : -1;
    *direct = fd >= 0;
    if (fd < 0 && want_direct && errno == EINVAL)
        unlink(path); /* the refused open may have created it (O_EXCL: ours) */
    if (fd < 0 && (!want_direct || errno == EINVAL)) /* not wanted, or no direct I/O there */
        fd = open(path, flags, 0600);
    if (fd < 0)
        return -errno;
    unlink(path);
    return fd;
}

int bd_fs_reopen_buffered(int fd, int flags)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int nfd = open(path, flags | O_CLOEXEC);
    return nfd < 0 ? -errno : nfd;
}

int bd_fs_pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
    const char *p = buf;
    while (len) {
        ssize_t w = BD_IO_SYS(BD_FAULT_SPILL_WRITE, pwrite(fd, p, len, (off_t)off));
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -errno;
        if (w == 0)
            return -EIO;
        p += w;
        off += (uint64_t)w;
        len -= (size_t)w;
    }
    return 0;
}

int bd_fs_pread_zero(int fd, void *buf, size_t len, uint64_t off)
{
    char *p = buf;
    while (len) {
        ssize_t r = BD_IO_SYS(BD_FAULT_SPILL_READ, pread(fd, p, len, (off_t)off));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -errno;
        if (r == 0) {
            memset(p, 0, len);
            return 0;
        }
        p += r;
        off += (uint64_t)r;
        len -= (size_t)r;
    }
    return 0;
}

enum { BATCH_DEPTH = 64 };

int bd_fs_pread_batch(bd_fs_batch_t *b, int fd, const bd_fs_rd_t *v, int n)
{
    if (!b->ctx && !b->broken) {
        aio_context_t ctx = 0;
        if (syscall(SYS_io_setup, BATCH_DEPTH, &ctx) < 0)
            b->broken = 1;
        else
            b->ctx = ctx;
    }
    if (b->broken) {
        for (int i = 0; i < n; i++) {
            int rc = bd_pread_full(fd, v[i].buf, v[i].len, v[i].off);
            if (rc < 0)
                return rc;
        }
        return 0;
    }
    int rc = 0;
    for (int base = 0; base < n; base += BATCH_DEPTH) {
        int m = n - base < BATCH_DEPTH ? n - base : BATCH_DEPTH;
        struct iocb cb[BATCH_DEPTH], *cbp[BATCH_DEPTH];
        struct io_event ev[BATCH_DEPTH];
        for (int i = 0; i < m; i++) {
            memset(&cb[i], 0, sizeof cb[i]);
            cb[i].aio_fildes = (uint32_t)fd;
            cb[i].aio_lio_opcode = IOCB_CMD_PREAD;
            cb[i].aio_buf = (uint64_t)(uintptr_t)v[base + i].buf;
            cb[i].aio_nbytes = v[base + i].len;
            cb[i].aio_offset = (int64_t)v[base + i].off;
            cb[i].aio_data = (uint64_t)(base + i);
            cbp[i] = &cb[i];
        }
        int sent = 0, done = 0;
        while (sent < m) {
            long r = syscall(SYS_io_submit, (aio_context_t)b->ctx, (long)(m - sent), cbp + sent);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0) { /* the rest one at a time (EAGAIN: no room; others) */
                for (int i = sent; i < m && rc == 0; i++)
                    rc = bd_pread_full(fd, v[base + i].buf, v[base + i].len, v[base + i].off);
                m = sent;
                break;
            }
            sent += (int)r;
        }
        /* every submitted read is collected, even after an error: their
         * buffers are the caller's once we return */
        while (done < sent) {
            long r =
                syscall(SYS_io_getevents, (aio_context_t)b->ctx, 1L, (long)(sent - done), ev, NULL);
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0) {
                /* cannot happen with a valid context; the buffers may still
                 * be written: destroying the context waits for them */
                rc = -errno;
                syscall(SYS_io_destroy, (aio_context_t)b->ctx);
                b->ctx = 0;
                b->broken = 1;
                return rc;
            }
            for (long k = 0; k < r; k++) {
                const bd_fs_rd_t *d = &v[ev[k].data];
                long long got = (long long)ev[k].res;
                if (got < 0 && rc == 0)
                    rc = (int)got;
                else if (got >= 0 && (size_t)got < d->len && rc == 0)
                    rc = bd_pread_full(fd, (char *)d->buf + got, d->len - (size_t)got,
                                       d->off + (uint64_t)got);
            }
            done += (int)r;
        }
        if (rc < 0)
            return rc;
    }
    return rc;
}

void bd_fs_batch_close(bd_fs_batch_t *b)
{
    if (b->ctx)
        syscall(SYS_io_destroy, (aio_context_t)b->ctx);
    b->ctx = 0;
}

void bd_fs_ck_init(bd_fs_ck_t *k)
{
    memset(k, 0, sizeof *k);
    k->crc = k->small;
    k->cap = sizeof k->small / sizeof k->small[0];
}

void bd_fs_ck_free(bd_fs_ck_t *k)
{
    if (k->crc != k->small)
        free(k->crc);
    bd_fs_ck_init(k);
}

static void ck_push(bd_fs_ck_t *k)
{
    if (k->n == k->cap) {
        uint32_t cap = k->cap * 2;
        uint32_t *n =
            k->crc == k->small ? malloc(cap * sizeof *n) : realloc(k->crc, cap * sizeof *n);
        if (!n) {
            k->failed = 1;
            return;
        }
        if (k->crc == k->small)
            memcpy(n, k->small, sizeof k->small);
        k->crc = n;
        k->cap = cap;
    }
    k->crc[k->n++] = k->cur;
    k->cur = 0;
}

void bd_fs_ck_add(bd_fs_ck_t *k, const void *p, size_t len)
{
    const char *c = p;
    while (len && !k->failed) {
        uint64_t in = k->pos % BD_FS_CK_CHUNK;
        size_t take = BD_FS_CK_CHUNK - in < len ? (size_t)(BD_FS_CK_CHUNK - in) : len;
        k->cur = bd_crc32c(k->cur, c, take);
        k->pos += take;
        c += take;
        len -= take;
        if (k->pos % BD_FS_CK_CHUNK == 0)
            ck_push(k);
    }
}

/* The chunks' sums with the one in progress (if any) and the magic. */
static size_t ck_trailer_len(uint64_t pos)
{
    return (size_t)((pos + BD_FS_CK_CHUNK - 1) / BD_FS_CK_CHUNK + 1) * sizeof(uint32_t);
}

int bd_fs_ck_write(bd_fs_ck_t *k, int fd, uint64_t off)
{
    if (k->failed)
        return -ENOMEM;
    if (k->pos % BD_FS_CK_CHUNK)
        ck_push(k);
    uint32_t magic = BD_FS_CK_MAGIC;
    int rc = bd_fs_pwrite_all(fd, k->crc, k->n * sizeof *k->crc, off);
    if (rc == 0)
        rc = bd_fs_pwrite_all(fd, &magic, sizeof magic, off + k->n * sizeof *k->crc);
    return rc;
}

int bd_fs_ck_verify(bd_fs_ck_t *k, int fd, uint64_t off, uint64_t *bad)
{
    *bad = 0;
    if (k->failed)
        return 0; /* out of memory summing: nothing to compare with (never a false alarm) */
    if (k->pos % BD_FS_CK_CHUNK)
        ck_push(k);
    size_t len = ck_trailer_len(k->pos);
    uint32_t one[9], *t = len <= sizeof one ? one : malloc(len);
    if (!t)
        return 0;
    int rc = bd_fs_pread_zero(fd, t, len, off);
    if (rc == 0) {
        uint32_t n = (uint32_t)(len / sizeof *t) - 1;
        if (t[n] != BD_FS_CK_MAGIC || n != k->n) {
            rc = -EBADMSG;
        } else {
            for (uint32_t i = 0; i < n; i++)
                if (t[i] != k->crc[i]) {
                    *bad = (uint64_t)i * BD_FS_CK_CHUNK;
                    rc = -EBADMSG;
                    break;
                }
        }
    }
    if (t != one)
        free(t);
    return rc;
}

int bd_fs_ck_load(int fd, uint64_t n, uint32_t **out)
{
    size_t len = ck_trailer_len(n);
    uint32_t *t = malloc(len);
    if (!t)
        return -ENOMEM;
    int rc = bd_fs_pread_zero(fd, t, len, n);
    if (rc == 0 && t[len / sizeof *t - 1] != BD_FS_CK_MAGIC)
        rc = -EBADMSG;
    if (rc < 0) {
        free(t);
        return rc;
    }
    *out = t;
    return 0;
}
