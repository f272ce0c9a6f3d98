#include "bd_fs.h"

#include <dirent.h>
#include <errno.h>
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
