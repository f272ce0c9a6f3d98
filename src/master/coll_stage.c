/* Collective data the master keeps on storage (issue 13, "move only what
 * must move").  Pieces larger than -msg-threshold of the data-moving
 * collectives go to one spill file per instance (coll.c), written and read
 * with O_DIRECT, so they never sit in the page cache, where the node's
 * budget does not see them.  Direct I/O moves whole aligned blocks from
 * aligned memory, so:
 *   - a piece is written in order (the ranks PUT it so, other nodes send
 *     it so) through a writer: an aligned buffer of STAGE_BUF bytes (1 MiB,
 *     or a 32nd of a small budget) that
 *     is written out whenever it is full, and once more, padded with zeros
 *     to the block, when the piece is complete.  Each piece starts on a
 *     block of its own (coll.c places it), so padding never hits a
 *     neighbour.  A write out of order (never seen; kept for safety)
 *     flushes the writer and from then on reads, patches and rewrites the
 *     blocks it touches;
 *   - reads go through one aligned read cache of STAGE_BUF bytes, filled
 *     from the block before the requested offset up to STAGE_BUF or the end
 *     of the piece, so the GETs of one rank, which read a piece in
 *     window-sized segments one after another, read it from storage once;
 *     bytes still in a writer are read from there.
 * These buffers are the master's memory for collective data, with the
 * pieces it keeps in memory (small pieces, contributions to reductions and
 * their results, and large pieces while the budget has room for them:
 * bdr_stage_fits; memacct.c has them stored, bdr_coll_shrink in coll.c,
 * before it makes any rank unload): bdr_coll_staging_bytes() counts all of
 * it in the node's budget.  Buffers are kept for reuse while a spill file
 * is open and given back when the last one closes.  Where the file system
 * has no direct I/O, and without a budget (-mem-strategy none), the same
 * code runs on a buffered descriptor. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bd_fs.h"
#include "bd_log.h"
#include "coll.h"

#define ALIGN BD_FS_DIO_ALIGN
/* The buffers' size: 1 MiB (a good direct-I/O request), but at most a
 * 32nd of the budget (never below 64 KiB), so that small budgets are not
 * taken up by the staging itself. */
static uint64_t stage_buf(void)
{
    static uint64_t n;
    if (!n) {
        uint64_t b = g_m.hdr->job.mem_budget / 32;
        n = b && b < (1u << 20) ? b : (1u << 20);
        n = n < (64u << 10) ? (64u << 10) : n & ~(uint64_t)(ALIGN - 1);
    }
    return n;
}
#define STAGE_BUF stage_buf()
#define POOL_MAX 2

static uint64_t up(uint64_t x) { return (x + ALIGN - 1) & ~(uint64_t)(ALIGN - 1); }
static uint64_t down(uint64_t x) { return x & ~(uint64_t)(ALIGN - 1); }
static uint64_t min64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* A spill file of one instance. */
typedef struct sfile {
    struct sfile *next;
    coll_t *c;
    int direct;
    int ship_fd; /* buffered descriptor for node.c, or -1 */
} sfile_t;

/* A piece being written in order: bytes [base, pos) of it are in buf. */
typedef struct writer {
    struct writer *next;
    coll_t *c;
    piece_t *p;
    char *buf;
    uint64_t base, pos;
} writer_t;

static sfile_t *g_files;
static writer_t *g_writers;
static char *g_pool[POOL_MAX];
static int g_npool;
static uint64_t g_buf_bytes; /* aligned buffers held: writers, pool, cache */
static struct {
    const coll_t *c; /* whose file the cached bytes are from; NULL: none */
    uint64_t lo, hi; /* file offsets */
    char *buf;
} g_cache;

static char *buf_get(void)
{
    if (g_npool)
        return g_pool[--g_npool];
    void *b = NULL;
    if (posix_memalign(&b, ALIGN, STAGE_BUF))
        return NULL;
    g_buf_bytes += STAGE_BUF;
    return b;
}

static void buf_put(char *b)
{
    if (!b)
        return;
    if (g_npool < POOL_MAX) {
        g_pool[g_npool++] = b;
        return;
    }
    free(b);
    g_buf_bytes -= STAGE_BUF;
}

static sfile_t *file_of(const coll_t *c)
{
    for (sfile_t *f = g_files; f; f = f->next)
        if (f->c == c)
            return f;
    return NULL;
}

static writer_t *writer_of(const piece_t *p)
{
    for (writer_t *w = g_writers; w; w = w->next)
        if (w->p == p)
            return w;
    return NULL;
}

static void writer_free(writer_t *w)
{
    writer_t **pp = &g_writers;
    while (*pp && *pp != w)
        pp = &(*pp)->next;
    if (*pp)
        *pp = w->next;
    buf_put(w->buf);
    free(w);
}

static void cache_drop(const coll_t *c, uint64_t lo, uint64_t hi)
{
    if (g_cache.c == c && lo < g_cache.hi && g_cache.lo < hi)
        g_cache.c = NULL;
}

/* The file system may refuse direct I/O on a transfer (a device with
 * larger blocks): go on buffered. */
static int fall_back(coll_t *c, sfile_t *f, int rc)
{
    if (rc != -EINVAL || !f->direct)
        return 0;
    int nfd = bd_fs_reopen_buffered(c->fd, O_RDWR);
    if (nfd < 0)
        return 0;
    close(c->fd);
    c->fd = nfd;
    f->direct = 0;
    bd_log_info("collective spill files: direct I/O refused in %s, using the page cache",
                g_m.jobdir);
    return 1;
}

static int file_write(coll_t *c, sfile_t *f, const char *buf, uint64_t len, uint64_t off)
{
    cache_drop(c, off, off + len);
    int rc = bd_fs_pwrite_all(c->fd, buf, len, off);
    if (rc < 0 && fall_back(c, f, rc))
        rc = bd_fs_pwrite_all(c->fd, buf, len, off);
    return rc;
}

static int file_read(coll_t *c, sfile_t *f, char *buf, uint64_t len, uint64_t off)
{
    int rc = bd_fs_pread_zero(c->fd, buf, len, off);
    if (rc < 0 && fall_back(c, f, rc))
        rc = bd_fs_pread_zero(c->fd, buf, len, off);
    return rc;
}

int bdr_stage_open(coll_t *c)
{
    sfile_t *f = calloc(1, sizeof *f);
    if (!f)
        return -ENOMEM;
    char path[BD_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/coll-%d-%llu", g_m.jobdir, c->ctx, (unsigned long long)c->seq);
    /* Without a budget (-mem-strategy none: the job is in memory) the page
     * cache may keep what is staged, as it keeps the ranks' own files. */
    int fd = bd_fs_spill_create(path, g_m.hdr->job.mem_budget != 0, &f->direct);
    if (fd < 0) {
        free(f);
        return fd;
    }
    c->fd = fd;
    f->c = c;
    f->ship_fd = -1;
    f->next = g_files;
    g_files = f;
    return 0;
}

/* Write out what w holds: all of it padded to the block when final, else
 * (a full buffer) exactly. */
static int writer_flush(sfile_t *f, writer_t *w, int final)
{
    uint64_t n = w->pos - w->base, len = final ? up(n) : n;
    if (!len)
        return 0;
    memset(w->buf + n, 0, len - n);
    int rc = file_write(w->c, f, w->buf, len, w->p->file_off + w->base);
    w->base = w->pos;
    return rc;
}

/* Out of order: read the blocks, patch them, write them back. */
static int patch(coll_t *c, sfile_t *f, piece_t *p, uint64_t off, const char *src, uint64_t len)
{
    if (!g_cache.buf && !(g_cache.buf = buf_get()))
        return -ENOMEM;
    g_cache.c = NULL;
    while (len) {
        uint64_t at = p->file_off + off, lo = down(at), hi = min64(up(at + len), lo + STAGE_BUF);
        uint64_t k = min64(len, hi - at);
        int rc = file_read(c, f, g_cache.buf, hi - lo, lo);
        if (rc < 0)
            return rc;
        memcpy(g_cache.buf + (at - lo), src, k);
        if ((rc = file_write(c, f, g_cache.buf, hi - lo, lo)) < 0)
            return rc;
        off += k;
        src += k;
        len -= k;
    }
    return 0;
}

int bdr_stage_write(coll_t *c, piece_t *p, uint64_t off, const char *src, uint32_t len)
{
    sfile_t *f = file_of(c);
    if (!f)
        return -EBADF;
    writer_t *w = writer_of(p);
    if (!w && off == 0 && !p->filled && len) {
        w = calloc(1, sizeof *w);
        if (!w || !(w->buf = buf_get())) {
            free(w);
            return -ENOMEM;
        }
        w->c = c;
        w->p = p;
        w->next = g_writers;
        g_writers = w;
    }
    if (w && off != w->pos) {
        int rc = writer_flush(f, w, 1);
        writer_free(w);
        return rc < 0 ? rc : patch(c, f, p, off, src, len);
    }
    if (!w)
        return patch(c, f, p, off, src, len);
    uint64_t left = len;
    while (left) {
        uint64_t k = min64(left, STAGE_BUF - (w->pos - w->base));
        memcpy(w->buf + (w->pos - w->base), src, k);
        w->pos += k;
        src += k;
        left -= k;
        if (w->pos - w->base == STAGE_BUF) {
            int rc = writer_flush(f, w, 0);
            if (rc < 0)
                return rc;
        }
    }
    if (w->pos >= p->total) {
        int rc = writer_flush(f, w, 1);
        writer_free(w);
        return rc;
    }
    return 0;
}

int bdr_stage_read(coll_t *c, const piece_t *p, uint64_t off, char *dst, uint32_t len)
{
    sfile_t *f = file_of(c);
    if (!f)
        return -EBADF;
    const writer_t *w = writer_of(p);
    uint64_t stored = w ? w->base : p->total; /* [0, stored) of the piece is in the file */
    uint64_t left = len;
    while (left) {
        uint64_t k;
        if (off >= stored) {
            k = left;
            if (w && off < w->pos) {
                k = min64(left, w->pos - off);
                memcpy(dst, w->buf + (off - w->base), k);
            } else {
                memset(dst, 0, k); /* not written yet */
            }
        } else {
            uint64_t at = p->file_off + off;
            if (g_cache.c != c || at < g_cache.lo || at >= g_cache.hi) {
                if (!g_cache.buf && !(g_cache.buf = buf_get()))
                    return -ENOMEM;
                uint64_t lo = down(at), hi = min64(lo + STAGE_BUF, p->file_off + up(stored));
                g_cache.c = NULL;
                int rc = file_read(c, f, g_cache.buf, hi - lo, lo);
                if (rc < 0)
                    return rc;
                g_cache.c = c;
                g_cache.lo = lo;
                g_cache.hi = hi;
            }
            k = min64(min64(left, g_cache.hi - at), stored - off);
            memcpy(dst, g_cache.buf + (at - g_cache.lo), k);
        }
        off += k;
        dst += k;
        left -= k;
    }
    return 0;
}

int bdr_stage_ship_fd(coll_t *c)
{
    sfile_t *f = file_of(c);
    if (!f || !f->direct)
        return c->fd;
    if (f->ship_fd < 0)
        f->ship_fd = bd_fs_reopen_buffered(c->fd, O_RDONLY);
    return f->ship_fd;
}

void bdr_stage_close(coll_t *c)
{
    for (writer_t *w = g_writers, *n; w; w = n) {
        n = w->next;
        if (w->c == c)
            writer_free(w);
    }
    if (g_cache.c == c)
        g_cache.c = NULL;
    sfile_t **pp = &g_files;
    while (*pp && (*pp)->c != c)
        pp = &(*pp)->next;
    if (*pp) {
        sfile_t *f = *pp;
        *pp = f->next;
        if (f->ship_fd >= 0)
            close(f->ship_fd);
        free(f);
    }
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    if (!g_files)
        bdr_stage_trim(); /* no spill file open: give the buffers back */
}

int bdr_stage_fits(uint64_t bytes)
{
    uint64_t budget = g_m.hdr->job.mem_budget;
    if (!budget || atomic_load_explicit(&g_m.hdr->mem_waiters, memory_order_relaxed))
        return 0;
    uint64_t t = g_m.bytes_buffered + bdr_node_transient_bytes() + bdr_coll_staging_bytes();
    for (int i = 0; i < g_m.ns; i++)
        if (!g_m.slaves[i].exited)
            t += atomic_load_explicit(&g_m.slaves[i].slot->mem_resident, memory_order_relaxed);
    return t + bytes <= budget;
}

uint64_t bdr_stage_trim(void)
{
    uint64_t freed = 0;
    while (g_npool) {
        free(g_pool[--g_npool]);
        g_buf_bytes -= STAGE_BUF;
        freed += STAGE_BUF;
    }
    if (g_cache.buf) {
        free(g_cache.buf);
        g_cache.buf = NULL;
        g_cache.c = NULL;
        g_buf_bytes -= STAGE_BUF;
        freed += STAGE_BUF;
    }
    return freed;
}

uint64_t bdr_coll_staging_bytes(void)
{
    uint64_t t = g_buf_bytes;
    for (const coll_t *c = g_m.colls; c; c = c->next) {
        for (size_t i = 0; i < c->npieces; i++)
            if (c->pieces[i].data)
                t += c->pieces[i].total;
        for (int r = 0; c->results && r < c->comm->size; r++)
            if (c->results[r].data)
                t += c->results[r].total;
        if (c->acc)
            t += c->d.count * c->elem_size;
    }
    return t;
}
