/* bdooc.c -- see bdooc.h. */
#include "bdooc.h"
#include "bdcsr.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int bdooc_open(bdooc_t *o, const char *dir, const char *tag, int rank)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
    o->loaded = 1;
    if (!dir || !*dir)
        dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.%d.XXXXXX", dir, tag, rank);
    o->fd = mkstemp(path);
    if (o->fd < 0) {
        fprintf(stderr, "bdooc: cannot create spill file %s: %s\n", path, strerror(errno));
        return -1;
    }
    unlink(path);
    return 0;
}

void bdooc_close(bdooc_t *o)
{
    if (o->fd >= 0)
        close(o->fd);
    o->fd = -1;
}

static bdooc_arr_t *find(bdooc_t *o, void **pp)
{
    for (int i = 0; i < o->n; i++)
        if (o->a[i].pp == pp)
            return &o->a[i];
    return NULL;
}

void bdooc_add(bdooc_t *o, void **pp, size_t bytes, int readonly)
{
    bdooc_arr_t *a = find(o, pp);
    if (!a) {
        if (o->n == BDOOC_MAX) {
            fprintf(stderr, "bdooc: too many arrays\n");
            abort();
        }
        a = &o->a[o->n++];
        memset(a, 0, sizeof *a);
        a->pp = pp;
    }
    a->bytes = bytes;
    a->readonly = readonly;
    a->on_disk = 0;
}

void bdooc_resize(bdooc_t *o, void **pp, size_t bytes)
{
    bdooc_arr_t *a = find(o, pp);
    if (a) {
        a->bytes = bytes;
        a->on_disk = 0;
    }
}

void bdooc_remove(bdooc_t *o, void **pp)
{
    for (int i = 0; i < o->n; i++)
        if (o->a[i].pp == pp) {
            o->a[i] = o->a[--o->n];
            return;
        }
}

int bdooc_unload(bdooc_t *o)
{
    if (!o->loaded)
        return 0;
    double t0 = bd_now();
    for (int i = 0; i < o->n; i++) {
        bdooc_arr_t *a = &o->a[i];
        if (!*a->pp)
            continue;
        if (!a->on_disk && a->bytes > 0) {
            if (a->bytes > a->cap) { /* new slot at the end of the file */
                a->off = o->end;
                a->cap = a->bytes;
                o->end += (int64_t)((a->bytes + 4095) & ~(size_t)4095);
            }
            if (bd_pwrite_full(o->fd, *a->pp, a->bytes, a->off) < 0) {
                fprintf(stderr, "bdooc: write failed: %s\n", strerror(errno));
                return -1;
            }
            o->bytes_written += a->bytes;
        }
        a->on_disk = 1;
        a->out = 1;
        free(*a->pp);
        *a->pp = NULL;
    }
    o->loaded = 0;
    o->io_seconds += bd_now() - t0;
    return 0;
}

int bdooc_load(bdooc_t *o)
{
    if (o->loaded)
        return 0;
    double t0 = bd_now();
    for (int i = 0; i < o->n; i++) {
        bdooc_arr_t *a = &o->a[i];
        if (!a->out)
            continue;
        a->out = 0;
        *a->pp = malloc(a->bytes ? a->bytes : 1);
        if (!*a->pp) {
            fprintf(stderr, "bdooc: out of memory (%zu bytes)\n", a->bytes);
            return -1;
        }
        if (a->bytes > 0 && bd_pread_full(o->fd, *a->pp, a->bytes, a->off) < 0) {
            fprintf(stderr, "bdooc: read failed: %s\n", strerror(errno));
            return -1;
        }
        o->bytes_read += a->bytes;
        /* a writable array may change from now on; a read-only one keeps its copy */
        a->on_disk = a->readonly;
    }
    o->loaded = 1;
    o->io_seconds += bd_now() - t0;
    return 0;
}
