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
 * code runs on a buffered descriptor.
 *
 * Writes leave the master's event loop (issue 13): the loop is the only
 * one serving every rank's requests, memory grants and unload commands, so
 * a synchronous write of collective data stalls them all.  A full writer
 * buffer, a piece's last bytes (copied into a buffer of their size when
 * small, so the staging buffer is reused at once) and a piece
 * bdr_coll_shrink stores (from the piece's own memory, which place() in
 * coll.c keeps aligned and padded) become jobs of one I/O thread, written
 * in the order they were queued.  Their memory stays counted
 * (bdr_coll_staging_bytes) until the loop reaps them: the thread rings
 * g_m.event_fd when a write completes, bdr_stage_poll frees the memory (or
 * ends the job, with the message a synchronous write gave) and the budget
 * is looked at again, where bytes being written count as coming, like a
 * rank's unload.  Writers' buffers in flight are bounded (flight_max): past
 * that the loop waits.  A GET of bytes still being written reads them from
 * the job's buffer (never changed while queued); the read cache is filled
 * only from blocks no queued write touches, and dropped where one is
 * queued.  Whatever needs the file itself (an out-of-order patch, shipping
 * a piece to another node, a fallback from direct I/O) first waits for the
 * writes of its instance; freeing an instance drops its writes not started.
 * BDMPI_STAGE_WRITE_DELAY_US (tests only) delays each write, so that tests
 * see GETs of data in flight.
 *
 * Reads ahead: the rank the run queue serves next will GET its pieces as
 * soon as it runs, and each GET read from storage in the loop stalls the
 * loop and the rank.  bdr_coll_readahead (coll.c) has the same thread read
 * that rank's pieces whole while another rank computes (reads before
 * writes in the thread's queue), into buffers counted like the others and
 * bounded like the writers' (flight_max), only into memory the budget has
 * free (bdr_stage_fits).  A GET then copies from the buffer (waiting for
 * the read if it is still running), and the buffer goes once the piece's
 * one reader has had all of it. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bd_crc.h"
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

/* A spill file of one instance.  ck: the CRC32C of each block of the
 * file as written (issue 18), recorded when its write is queued (a job's
 * buffer does not change after) and checked wherever blocks are read back
 * (the read cache, reads ahead, patches); a block never written reads as
 * zeros and is expected so. */
typedef struct sfile {
    struct sfile *next;
    coll_t *c;
    int direct;
    int ship_fd; /* buffered descriptor for node.c, or -1 */
    uint32_t *ck;
    uint64_t nck;
} sfile_t;

/* A piece being written in order: bytes [base, pos) of it are in buf. */
typedef struct writer {
    struct writer *next;
    coll_t *c;
    piece_t *p;
    char *buf;
    uint64_t base, pos;
} writer_t;

/* A write handed to the I/O thread: len bytes of buf at off of fd, which
 * hold bytes [poff, poff + n) of piece p of c (the rest is padding).
 * Everything but state and rc is set before it is queued and not changed
 * until it is reaped, so the loop reads those fields without the lock. */
typedef struct job {
    struct job *next;
    coll_t *c;
    const piece_t *p;
    uint64_t poff, n;
    char *buf;
    uint64_t len, off;
    int fd;
    int pooled; /* buf is a staging buffer (back to the pool), else its own */
    int writer; /* a writer's output (bounded by flight_max), not a stored piece */
    int state;  /* J_QUEUED, J_WRITING, J_DONE; under g_io.mu */
    int rc;     /* the write's result once J_DONE */
} job_t;

enum { J_QUEUED, J_WRITING, J_DONE };

/* The I/O thread and its jobs.  Only the loop links and unlinks jobs (under
 * mu), so it may walk the list without the lock; the thread finds queued
 * jobs under mu. */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    int started;
    job_t *head;
    unsigned delay_us; /* BDMPI_STAGE_WRITE_DELAY_US (tests only) */
} g_io = {
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, NULL, 0};

static sfile_t *g_files;
static writer_t *g_writers;
static char *g_pool[POOL_MAX];
static int g_npool;
static uint64_t g_buf_bytes;   /* aligned staging buffers held: writers, pool, cache, jobs */
static uint64_t g_flight;      /* bytes of buffers of jobs not reaped */
static uint64_t g_flight_wr;   /* of which writers' output (bounded: flight_max) */
static uint64_t g_flight_hits; /* piece bytes GETs read from writes in flight */
static uint64_t g_stored;      /* piece bytes bdr_stage_store wrote from memory */
static struct {
    const coll_t *c; /* whose file the cached bytes are from; NULL: none */
    uint64_t lo, hi; /* file offsets */
    char *buf;
} g_cache;

/* Read-ahead (bdr_stage_readahead): a whole piece read by the I/O thread
 * into a buffer of its own before the rank that GETs it runs.  Only pieces
 * with one reader (an all-to-all's, a scatter's, a gather's at the root)
 * are read ahead, so a piece's buffer goes when its last byte was served.
 * Linked and unlinked by the loop under g_io.mu; the thread changes only
 * state and rc. */
typedef struct rjob {
    struct rjob *next;
    coll_t *c;
    const piece_t *p;
    char *buf;
    uint64_t len; /* up(p->total), read from p->file_off */
    int fd;
    int state, rc;
    uint64_t served; /* piece bytes given to GETs */
    int checked;     /* its blocks were checked against the file's checksums */
} rjob_t;
static rjob_t *g_reads;
static uint64_t g_ra_bytes; /* buffers of reads ahead (also in g_buf_bytes) */
static uint64_t g_ra_hits;  /* piece bytes GETs found read ahead */

static char *buf_get(void)
{
    if (g_npool)
        return g_pool[--g_npool];
    void *b = NULL;
    int rc = posix_memalign(&b, ALIGN, STAGE_BUF);
    if (rc)
        bdr_master_oom("posix_memalign", STAGE_BUF, rc);
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

static uint32_t zero_ck(void)
{
    static uint32_t z;
    static int done;
    if (!done) {
        static const char zeros[ALIGN];
        z = bd_crc32c(0, zeros, ALIGN);
        done = 1;
    }
    return z;
}

/* len bytes of buf (whole blocks) are written at off of f's file. */
static void ck_note(sfile_t *f, const char *buf, uint64_t len, uint64_t off)
{
    uint64_t b0 = off / ALIGN, nb = len / ALIGN;
    if (b0 + nb > f->nck) {
        uint64_t n = (b0 + nb) * 2;
        uint32_t *t = realloc(f->ck, n * sizeof *t); /* never NULL: src/master/oom.c */
        for (uint64_t i = f->nck; i < n; i++)
            t[i] = zero_ck();
        f->ck = t;
        f->nck = n;
    }
    for (uint64_t k = 0; k < nb; k++)
        f->ck[b0 + k] = bd_crc32c(0, buf + k * ALIGN, ALIGN);
}

static char g_bad[BD_PATH_MAX + 128]; /* where the last mismatch was */

const char *bdr_stage_bad(void) { return g_bad; }

uint32_t *bdr_stage_piece_ck(coll_t *c, const piece_t *p)
{
    const sfile_t *f = file_of(c);
    uint64_t nb = up(p->total) / ALIGN, b0 = p->file_off / ALIGN;
    uint32_t *t = malloc((nb ? nb : 1) * sizeof *t);
    for (uint64_t k = 0; k < nb; k++)
        t[k] = f && b0 + k < f->nck ? f->ck[b0 + k] : zero_ck();
    return t;
}

/* len bytes (whole blocks) just read from off of c's file are what was
 * written there: 0, or -EBADMSG with g_bad saying where. */
static int ck_check(const coll_t *c, const sfile_t *f, const char *buf, uint64_t len, uint64_t off)
{
    for (uint64_t k = 0; k < len / ALIGN; k++) {
        uint64_t b = off / ALIGN + k;
        uint32_t want = b < f->nck ? f->ck[b] : zero_ck();
        if (bd_crc32c(0, buf + k * ALIGN, ALIGN) != want) {
            snprintf(g_bad, sizeof g_bad, "at offset %llu in %s/coll-%d-%llu",
                     (unsigned long long)(b * ALIGN), g_m.jobdir, c->ctx,
                     (unsigned long long)c->seq);
            return -EBADMSG;
        }
    }
    return 0;
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

/* ---- The I/O thread ---- */

static void *io_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&g_io.mu);
    for (;;) {
        /* a read ahead is for the rank that runs next: before the writes */
        rjob_t *r = g_reads;
        while (r && r->state != J_QUEUED)
            r = r->next;
        if (r) {
            r->state = J_WRITING;
            pthread_mutex_unlock(&g_io.mu);
            int rc = bd_fs_pread_zero(r->fd, r->buf, r->len, (off_t)r->p->file_off);
            pthread_mutex_lock(&g_io.mu);
            r->rc = rc;
            r->state = J_DONE;
            pthread_cond_broadcast(&g_io.done);
            continue;
        }
        job_t *j = g_io.head;
        while (j && j->state != J_QUEUED)
            j = j->next;
        if (!j) {
            pthread_cond_wait(&g_io.work, &g_io.mu);
            continue;
        }
        j->state = J_WRITING;
        pthread_mutex_unlock(&g_io.mu);
        if (g_io.delay_us)
            usleep(g_io.delay_us);
        int rc = bd_fs_pwrite_all(j->fd, j->buf, j->len, j->off);
        pthread_mutex_lock(&g_io.mu);
        j->rc = rc;
        j->state = J_DONE;
        pthread_cond_broadcast(&g_io.done);
        /* wake the loop: it reaps the job and looks at the budget again */
        uint64_t one = 1;
        if (write(g_m.event_fd, &one, sizeof one) < 0) {
            /* the counter is saturated: the loop is awake anyway */
        }
    }
    return NULL;
}

static int io_start(void)
{
    if (g_io.started)
        return 0;
    const char *d = getenv("BDMPI_STAGE_WRITE_DELAY_US");
    g_io.delay_us = d ? (unsigned)strtoul(d, NULL, 10) : 0;
    /* Signals stay with the loop (signalfd): the thread blocks them all. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    pthread_t t;
    int rc = pthread_create(&t, NULL, io_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc)
        return -rc;
    pthread_detach(t);
    g_io.started = 1;
    return 0;
}

/* Has c a job queued or being written?  Under g_io.mu. */
static int busy_locked(const coll_t *c)
{
    for (const job_t *j = g_io.head; j; j = j->next)
        if (j->c == c && j->state != J_DONE)
            return 1;
    return 0;
}

/* Wait until no write of c is queued or running (without reaping). */
static void wait_idle(const coll_t *c)
{
    pthread_mutex_lock(&g_io.mu);
    while (busy_locked(c))
        pthread_cond_wait(&g_io.done, &g_io.mu);
    pthread_mutex_unlock(&g_io.mu);
}

/* The file system may refuse direct I/O on a transfer (a device with
 * larger blocks): go on buffered.  The writes still queued on the old
 * descriptor finish first (it is closed here). */
static int fall_back(coll_t *c, sfile_t *f, int rc)
{
    if (rc != -EINVAL || !f->direct)
        return 0;
    wait_idle(c);
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

/* Release what a reaped job holds. */
static void job_release(job_t *j)
{
    if (j->writer)
        g_flight_wr -= j->pooled ? STAGE_BUF : j->len;
    if (j->pooled) {
        buf_put(j->buf);
        g_flight -= STAGE_BUF;
    } else {
        free(j->buf);
        g_buf_bytes -= j->len;
        g_flight -= j->len;
    }
    free(j);
}

/* A reaped job's result: a direct write the file system refused is done
 * again on a buffered descriptor; any other failure ends the job, with the
 * message a synchronous write gave (unless quiet: c is being freed and
 * nobody reads these bytes any more).  0 or -1. */
static int job_finish(job_t *j, int quiet)
{
    int rc = j->rc;
    sfile_t *f = rc == -EINVAL ? file_of(j->c) : NULL;
    if (f) {
        fall_back(j->c, f, rc);
        if (!f->direct && j->fd != j->c->fd)
            rc = bd_fs_pwrite_all(j->c->fd, j->buf, j->len, j->off);
    }
    if (rc < 0 && !quiet)
        bdr_master_fail(1, "cannot write %llu bytes of %s data to the spill file in %s: %s",
                        (unsigned long long)j->n, bdr_coll_call_name(&j->c->d), g_m.jobdir,
                        strerror(-rc));
    job_release(j);
    return rc < 0 ? -1 : 0;
}

/* Reap the finished writes (of c only, unless c is NULL). 0 or -1. */
static int reap(const coll_t *c, int quiet)
{
    job_t *done = NULL, **dt = &done;
    pthread_mutex_lock(&g_io.mu);
    for (job_t **pp = &g_io.head; *pp;) {
        job_t *j = *pp;
        if (j->state == J_DONE && (!c || j->c == c)) {
            *pp = j->next;
            j->next = NULL;
            *dt = j;
            dt = &j->next;
        } else {
            pp = &j->next;
        }
    }
    pthread_mutex_unlock(&g_io.mu);
    int rc = 0;
    for (job_t *j = done, *n; j; j = n) {
        n = j->next;
        if (job_finish(j, quiet) < 0)
            rc = -1;
    }
    return rc;
}

/* Every write of c is on storage (or, with cancel, dropped if it had not
 * started); 0 or -1 when one failed (the job is ended). */
static int drain(coll_t *c, int cancel)
{
    if (!g_io.started)
        return 0;
    job_t *gone = NULL;
    pthread_mutex_lock(&g_io.mu);
    if (cancel)
        for (job_t **pp = &g_io.head; *pp;) {
            job_t *j = *pp;
            if (j->c == c && j->state == J_QUEUED) {
                *pp = j->next;
                j->next = gone;
                gone = j;
            } else {
                pp = &j->next;
            }
        }
    while (busy_locked(c))
        pthread_cond_wait(&g_io.done, &g_io.mu);
    pthread_mutex_unlock(&g_io.mu);
    for (job_t *j = gone, *n; j; j = n) {
        n = j->next;
        job_release(j);
    }
    return reap(c, cancel);
}

/* How many bytes of writers' buffers may be in flight: a budget's 8th (at
 * least four buffers); without a budget 16 MiB. */
static uint64_t flight_max(void)
{
    uint64_t b = g_m.hdr->job.mem_budget / 8;
    if (!g_m.hdr->job.mem_budget)
        b = 16u << 20;
    return b > 4 * STAGE_BUF ? b : 4 * STAGE_BUF;
}

/* Queue the write of len bytes of buf at off of c's file, holding bytes
 * [poff, poff + n) of piece p; buf is the job's from now on (pooled: a
 * staging buffer).  While writers' buffers in flight exceed flight_max(),
 * wait for writes to finish.  0 or -errno (buf is released then). */
static int submit(coll_t *c, const piece_t *p, uint64_t poff, uint64_t n, char *buf, uint64_t len,
                  uint64_t off, int pooled, int writer)
{
    job_t *j = calloc(1, sizeof *j);
    int rc = j ? io_start() : -ENOMEM;
    if (rc < 0) {
        free(j);
        if (pooled) {
            buf_put(buf);
        } else {
            free(buf);
            g_buf_bytes -= len;
        }
        return rc;
    }
    *j = (job_t){.c = c,
                 .p = p,
                 .poff = poff,
                 .n = n,
                 .buf = buf,
                 .len = len,
                 .off = off,
                 .fd = c->fd,
                 .pooled = pooled,
                 .writer = writer,
                 .state = J_QUEUED};
    cache_drop(c, off, off + len);
    ck_note(file_of(c), buf, len, off);
    g_flight += pooled ? STAGE_BUF : len;
    if (writer)
        g_flight_wr += pooled ? STAGE_BUF : len;
    pthread_mutex_lock(&g_io.mu);
    job_t **pp = &g_io.head;
    while (*pp)
        pp = &(*pp)->next;
    *pp = j;
    pthread_cond_signal(&g_io.work);
    pthread_mutex_unlock(&g_io.mu);
    while (g_flight_wr > flight_max()) {
        pthread_mutex_lock(&g_io.mu);
        for (;;) {
            const job_t *d = g_io.head;
            while (d && d->state != J_DONE)
                d = d->next;
            if (d)
                break;
            pthread_cond_wait(&g_io.done, &g_io.mu);
        }
        pthread_mutex_unlock(&g_io.mu);
        if (reap(NULL, 0) < 0)
            return -EIO; /* the job was ended with the write's own message */
    }
    return 0;
}

/* The write not yet reaped that holds byte off of piece p, or NULL. */
static const job_t *job_at(const coll_t *c, const piece_t *p, uint64_t off)
{
    for (const job_t *j = g_io.head; j; j = j->next)
        if (j->c == c && j->p == p && off >= j->poff && off < j->poff + j->n)
            return j;
    return NULL;
}

static int file_write(coll_t *c, sfile_t *f, const char *buf, uint64_t len, uint64_t off)
{
    cache_drop(c, off, off + len);
    ck_note(f, buf, len, off);
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
    return rc < 0 ? rc : ck_check(c, f, buf, len, off);
}

static rjob_t *ra_of(const coll_t *c, const piece_t *p)
{
    for (rjob_t *r = g_reads; r; r = r->next)
        if (r->c == c && r->p == p)
            return r;
    return NULL;
}

/* Wait for r's read (it cannot be called back once started) and free it. */
static void ra_drop(rjob_t *r)
{
    pthread_mutex_lock(&g_io.mu);
    while (r->state == J_WRITING)
        pthread_cond_wait(&g_io.done, &g_io.mu);
    rjob_t **pp = &g_reads;
    while (*pp && *pp != r)
        pp = &(*pp)->next;
    if (*pp)
        *pp = r->next;
    pthread_mutex_unlock(&g_io.mu);
    free(r->buf);
    g_buf_bytes -= r->len;
    g_ra_bytes -= r->len;
    free(r);
}

int bdr_stage_readahead(coll_t *c, const piece_t *p)
{
    sfile_t *f = file_of(c);
    if (!f || !p->in_file || !p->total || p->filled != p->total || writer_of(p) || ra_of(c, p))
        return 0;
    for (const job_t *j = g_io.head; j; j = j->next)
        if (j->c == c && j->p == p && j->state != J_DONE)
            return 0; /* GETs read those bytes from the write's own buffer */
    uint64_t len = up(p->total);
    if (g_ra_bytes + len > flight_max() || !bdr_stage_fits(len))
        return -1;
    rjob_t *r = calloc(1, sizeof *r);
    void *b = NULL;
    if (!r || io_start() < 0 || posix_memalign(&b, ALIGN, len)) {
        free(r);
        return -1;
    }
    *r = (rjob_t){.c = c, .p = p, .buf = b, .len = len, .fd = c->fd, .state = J_QUEUED};
    g_buf_bytes += len;
    g_ra_bytes += len;
    pthread_mutex_lock(&g_io.mu);
    r->next = g_reads;
    g_reads = r;
    pthread_cond_signal(&g_io.work);
    pthread_mutex_unlock(&g_io.mu);
    return 1;
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

/* Hand what w holds to the I/O thread: all of it padded to the block when
 * final, else (a full buffer) exactly.  A small final part is copied into
 * a buffer of its size, so the staging buffer goes back to the pool. */
static int writer_flush(writer_t *w, int final)
{
    uint64_t n = w->pos - w->base, len = final ? up(n) : n;
    if (!len)
        return 0;
    memset(w->buf + n, 0, len - n);
    char *b = w->buf;
    int pooled = 1;
    void *own = NULL;
    if (final && len <= STAGE_BUF / 2 && !posix_memalign(&own, ALIGN, len)) {
        memcpy(own, w->buf, len);
        g_buf_bytes += len;
        b = own;
        pooled = 0;
    } else {
        w->buf = final ? NULL : buf_get();
    }
    uint64_t base = w->base;
    w->base = w->pos;
    int rc = submit(w->c, w->p, base, n, b, len, w->p->file_off + base, pooled, 1);
    if (rc == 0 && !w->buf && !final)
        rc = -ENOMEM;
    return rc;
}

/* Out of order: read the blocks, patch them, write them back (after the
 * writes of c in flight, which may hold them). */
static int patch(coll_t *c, sfile_t *f, piece_t *p, uint64_t off, const char *src, uint64_t len)
{
    if (drain(c, 0) < 0)
        return -EIO;
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
        int rc = writer_flush(w, 1);
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
            int rc = writer_flush(w, 0);
            if (rc < 0)
                return rc;
        }
    }
    if (w->pos >= p->total) {
        int rc = writer_flush(w, 1);
        writer_free(w);
        return rc;
    }
    return 0;
}

int bdr_stage_store(coll_t *c, piece_t *p, char *data)
{
    if (!file_of(c)) {
        free(data);
        return -EBADF;
    }
    uint64_t len = up(p->total);
    memset(data + p->total, 0, len - p->total);
    /* data now counts as a buffer of the stage until its write is reaped */
    g_buf_bytes += len;
    int rc = submit(c, p, 0, p->total, data, len, p->file_off, 0, 0);
    if (rc == 0) {
        p->filled = p->total;
        g_stored += p->total;
    }
    return rc;
}

int bdr_stage_read(coll_t *c, const piece_t *p, uint64_t off, char *dst, uint32_t len)
{
    sfile_t *f = file_of(c);
    if (!f)
        return -EBADF;
    rjob_t *r = g_reads ? ra_of(c, p) : NULL;
    if (r) {
        pthread_mutex_lock(&g_io.mu);
        while (r->state != J_DONE)
            pthread_cond_wait(&g_io.done, &g_io.mu);
        pthread_mutex_unlock(&g_io.mu);
        if (r->rc == 0 && !r->checked) {
            r->rc = ck_check(c, f, r->buf, r->len, p->file_off);
            r->checked = 1;
            if (r->rc == -EBADMSG)
                return r->rc;
        }
        if (r->rc == 0 && off + len <= p->total) {
            memcpy(dst, r->buf + off, len);
            g_ra_hits += len;
            r->served += len;
            if (r->served >= p->total)
                ra_drop(r); /* one reader: it has had all of it */
            return 0;
        }
        ra_drop(r); /* failed: the read below reports it */
    }
    const writer_t *w = writer_of(p);
    uint64_t stored = w ? w->base : p->total; /* [0, stored) is in the file or being written */
    uint64_t left = len;
    while (left) {
        uint64_t k;
        const job_t *j;
        if (off >= stored) {
            k = left;
            if (w && off < w->pos) {
                k = min64(left, w->pos - off);
                memcpy(dst, w->buf + (off - w->base), k);
            } else {
                memset(dst, 0, k); /* not written yet */
            }
        } else if ((j = job_at(c, p, off))) {
            /* still being written: its buffer has the bytes */
            k = min64(left, j->poff + j->n - off);
            memcpy(dst, j->buf + (off - j->poff), k);
            g_flight_hits += k;
        } else {
            uint64_t at = p->file_off + off;
            if (g_cache.c != c || at < g_cache.lo || at >= g_cache.hi) {
                if (!g_cache.buf && !(g_cache.buf = buf_get()))
                    return -ENOMEM;
                uint64_t lo = down(at), hi = min64(lo + STAGE_BUF, p->file_off + up(stored));
                /* not into blocks still being written (they start on a
                 * block after at: at itself is on storage) */
                for (const job_t *q = g_io.head; q; q = q->next)
                    if (q->c == c && q->off > at && q->off < hi)
                        hi = q->off;
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
    if (f && drain(c, 0) < 0)
        return -EIO;
    if (!f || !f->direct)
        return c->fd;
    if (f->ship_fd < 0)
        f->ship_fd = bd_fs_reopen_buffered(c->fd, O_RDONLY);
    return f->ship_fd;
}

int bdr_stage_release(coll_t *c, const piece_t *p)
{
    sfile_t *f = file_of(c);
    if (!f || c->fd < 0)
        return 0;
    rjob_t *r = ra_of(c, p);
    if (r)
        ra_drop(r);
    writer_t *w = writer_of(p);
    if (w)
        writer_free(w);
    wait_idle(c); /* no write may fill the blocks again after the punch */
    uint64_t lo = p->file_off, len = up(p->total);
    cache_drop(c, lo, lo + len);
    if (fallocate(c->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)lo, (off_t)len) < 0) {
        static int once;
        if (errno != EOPNOTSUPP)
            return -errno;
        if (!once++)
            bd_log_error("warning: the file system of %s cannot punch holes: collective data "
                         "taken from the spill file keeps its blocks until the collective ends",
                         g_m.jobdir);
    }
    return 0;
}

void bdr_stage_close(coll_t *c)
{
    drain(c, 1); /* nobody reads c's data any more: what has not started is dropped */
    for (rjob_t *r = g_reads, *n; r; r = n) {
        n = r->next;
        if (r->c == c)
            ra_drop(r);
    }
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
        free(f->ck);
        free(f);
    }
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    if (!g_files)
        bdr_stage_trim(); /* no spill file open: give the buffers back */
}

void bdr_stage_poll(void)
{
    if (g_io.started)
        reap(NULL, 0);
}

uint64_t bdr_stage_writing_bytes(void) { return g_flight; }

void bdr_stage_stats(uint64_t *hits, uint64_t *stored, uint64_t *ahead)
{
    *hits = g_flight_hits;
    *stored = g_stored;
    *ahead = g_ra_hits;
}

int bdr_stage_fits(uint64_t bytes)
{
    uint64_t budget = g_m.hdr->job.mem_budget;
    if (!budget || atomic_load_explicit(&g_m.hdr->mem_waiters, memory_order_relaxed))
        return 0;
    uint64_t t = g_m.bytes_buffered + bdr_node_transient_bytes() + bdr_coll_staging_bytes() +
                 bdr_unmanaged_counted();
    for (int i = 0; i < g_m.ns; i++)
        if (!g_m.slaves[i].exited)
            t += atomic_load_explicit(&g_m.slaves[i].slot->mem_resident, memory_order_relaxed);
    return t + bytes <= budget;
}

uint64_t bdr_stage_trim(void)
{
    uint64_t freed = g_ra_bytes;
    /* reads ahead are a bet on free memory: a rank that needs it now wins
     * (the GETs then read from the file) */
    while (g_reads)
        ra_drop(g_reads);
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
    uint64_t t = g_buf_bytes + bdr_ref_buffer_bytes();
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
