#include "bd_fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
    int fd = want_direct ? open(path, flags | O_DIRECT, 0600) : -1;
    *direct = fd >= 0;
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
        ssize_t w = pwrite(fd, p, len, (off_t)off);
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
        ssize_t r = pread(fd, p, len, (off_t)off);
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
