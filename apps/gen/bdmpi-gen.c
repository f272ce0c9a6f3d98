/*
 * bdmpi-gen -- input generators for the BDMPI benchmark applications.
 * Every generator writes the BDMPICSR format of apps/FORMAT.md, streams
 * its output (memory stays within the -m budget, whatever the output size)
 * and is a pure function of its arguments and seed: the same command gives
 * the same bytes, whatever the budget.
 *
 *   bdmpi-gen rmat    -s SCALE -e EDGEFACTOR --seed S -o FILE [-u] [--idx64] [-m BUDGET] [-t TMPDIR]
 *   bdmpi-gen docs    -r NROWS -c NCOLS -l AVGLEN --seed S -o FILE [-z ZIPF]
 *   bdmpi-gen ratings -r USERS -c ITEMS -l AVGDEG -k RANK --seed S -o FILE [-n NOISE]
 *   bdmpi-gen info    FILE
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bdcsr.h"

static const char *usage_text =
    "usage:\n"
    "  bdmpi-gen rmat -s SCALE -e EDGEFACTOR --seed S -o FILE [-u] [--idx64] [-m BUDGET] [-t "
    "TMPDIR]\n"
    "      R-MAT graph (a=0.57 b=0.19 c=0.19), 2^SCALE vertices, EDGEFACTOR*2^SCALE generated\n"
    "      edges, vertices renumbered by a seeded permutation; rows are sources, each row\n"
    "      sorted, duplicates and self loops dropped; -u also adds every reverse edge;\n"
    "      --idx64 writes 8-byte column indices even when 4 would do.\n"
    "  bdmpi-gen docs -r NROWS -c NCOLS -l AVGLEN --seed S -o FILE [-z ZIPF_EXPONENT]\n"
    "      document-term matrix: lognormal row lengths, Zipf term frequencies,\n"
    "      log-tf * idf weights, rows normalized to unit length.\n"
    "  bdmpi-gen ratings -r USERS -c ITEMS -l AVGDEG -k RANK --seed S -o FILE [-n NOISE]\n"
    "      rating matrix: rank-RANK model plus Gaussian noise, clipped to [1,5];\n"
    "      power-law user degrees, Zipf item popularity over permuted item ids.\n"
    "  bdmpi-gen info FILE\n"
    "      print a file's header.\n"
    "Sizes take K/M/G suffixes.  -m is the memory budget (default 256M).\n";

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "bdmpi-gen: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

static int64_t parse_int(const char *s, const char *what)
{
    int64_t v = bd_parse_size(s);
    if (v < 0)
        die("bad %s: %s", what, s);
    return v;
}

/* A buffered sequential writer into one region of the output file. */
typedef struct {
    int fd;
    int64_t off;
    char *buf;
    size_t len, cap;
} wstream_t;

static void ws_init(wstream_t *w, int fd, int64_t off, size_t cap)
{
    w->fd = fd;
    w->off = off;
    w->cap = cap;
    w->len = 0;
    w->buf = bd_xmalloc(cap, "write buffer");
}
static void ws_flush(wstream_t *w)
{
    if (w->len && bd_pwrite_full(w->fd, w->buf, w->len, w->off) < 0)
        die("write: %s", strerror(errno));
    w->off += (int64_t)w->len;
    w->len = 0;
}
static void ws_put(wstream_t *w, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        if (w->len == w->cap)
            ws_flush(w);
        size_t k = w->cap - w->len < n ? w->cap - w->len : n;
        memcpy(w->buf + w->len, c, k);
        w->len += k;
        c += k;
        n -= k;
    }
}
static void ws_done(wstream_t *w)
{
    ws_flush(w);
    free(w->buf);
    w->buf = NULL;
}

static int open_out(const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        die("%s: %s", path, strerror(errno));
    return fd;
}

static void finish_out(int fd, const char *path, const bdcsr_hdr_t *h)
{
    if (bdcsr_write_hdr(fd, h) < 0 || ftruncate(fd, (off_t)bdcsr_file_size(h)) < 0 ||
        fsync(fd) < 0 || close(fd) < 0)
        die("%s: %s", path, strerror(errno));
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static void sort_u32(uint32_t *a, int64_t n)
{
    if (n < 24) {
        for (int64_t i = 1; i < n; i++) {
            uint32_t v = a[i];
            int64_t j = i;
            while (j > 0 && a[j - 1] > v) {
                a[j] = a[j - 1];
                j--;
            }
            a[j] = v;
        }
    } else {
        qsort(a, (size_t)n, sizeof *a, cmp_u32);
    }
}

/* ------------------------------------------------------------------ rmat */

#define RMAT_BLOCK                                                                                 \
    (1 << 20) /* edges per generation block (fixed: part of the output's definition) */

typedef struct {
    int64_t off;  /* offset in the run file */
    uint32_t len; /* bytes */
    uint32_t bucket;
} chunk_t;

static void cmd_rmat(int argc, char **argv)
{
    int scale = -1, undirected = 0, idx64 = 0;
    int64_t ef = -1, budget = 256 << 20;
    uint64_t seed = 1;
    const char *out = NULL, *tmpdir = NULL;
    static struct option lo[] = {
        {"seed", required_argument, 0, 'S'}, {"idx64", no_argument, 0, 'W'}, {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "s:e:o:m:t:uS:", lo, NULL)) != -1) {
        switch (c) {
        case 's': scale = (int)parse_int(optarg, "scale"); break;
        case 'e': ef = parse_int(optarg, "edge factor"); break;
        case 'o': out = optarg; break;
        case 'm': budget = parse_int(optarg, "budget"); break;
        case 't': tmpdir = optarg; break;
        case 'u': undirected = 1; break;
        case 'W': idx64 = 1; break;
        case 'S': seed = (uint64_t)parse_int(optarg, "seed"); break;
        default: fputs(usage_text, stderr); exit(2);
        }
    }
    if (scale < 1 || scale > 32 || ef < 1 || !out)
        die("rmat needs -s SCALE (1..32), -e EDGEFACTOR (>=1) and -o FILE");
    if (budget < (1 << 20))
        budget = 1 << 20;
    if (!tmpdir)
        tmpdir = getenv("TMPDIR");
    if (!tmpdir || !*tmpdir)
        tmpdir = "/tmp";

    const uint64_t n = (uint64_t)1 << scale;
    const uint64_t m = (uint64_t)ef << scale;
    const uint64_t dir_edges = undirected ? 2 * m : m;
    const uint32_t TA = (uint32_t)(0.57 * 4294967296.0), TB = (uint32_t)(0.76 * 4294967296.0),
                   TC = (uint32_t)(0.95 * 4294967296.0);
    bd_perm_t perm;
    bd_perm_init(&perm, n, seed);

    /* Buckets: power of two ranges of sources, each small enough to sort
     * in half the budget (8 bytes per edge pair + 4 per column + 8 per row,
     * with 25% slack for imbalance). */
    int bbits = 0;
    for (;;) {
        uint64_t nb = (uint64_t)1 << bbits;
        double per = (double)dir_edges / (double)nb * 1.25 * 12.0 + 8.0 * (double)(n / nb);
        if (per <= (double)budget / 2 || bbits >= scale || nb >= 65536)
            break;
        bbits++;
    }
    const uint32_t nbuckets = 1u << bbits;
    const int wshift = scale - bbits; /* bucket of source u is u >> wshift */
    size_t bufsz = (size_t)(budget / 4) / nbuckets;
    bufsz &= ~(size_t)7;
    if (bufsz < 4096)
        bufsz = 4096;
    if (bufsz > (64 << 20))
        bufsz = 64 << 20;

    char runpath[4096];
    snprintf(runpath, sizeof runpath, "%s/bdmpi-gen-run.XXXXXX", tmpdir);
    int rfd = mkstemp(runpath);
    if (rfd < 0)
        die("%s: %s", runpath, strerror(errno));
    unlink(runpath);

    /* Pass 1: generate, permute, append to per-bucket buffers, spill full
     * buffers as chunks of the single run file. */
    uint32_t *bufs = bd_xmalloc(bufsz * nbuckets, "bucket buffers");
    size_t *fill = bd_xcalloc(nbuckets, sizeof *fill, "bucket fill");
    uint64_t *bcount = bd_xcalloc(nbuckets, sizeof *bcount, "bucket counts");
    size_t nchunks = 0, chunkcap = 1024;
    chunk_t *chunks = bd_xmalloc(chunkcap * sizeof *chunks, "chunk list");
    int64_t runend = 0;
    const size_t perbuf = bufsz / 8; /* pairs per buffer */

#define SPILL(bk)                                                                                  \
    do {                                                                                           \
        uint32_t b_ = (bk);                                                                        \
        if (fill[b_]) {                                                                            \
            if (nchunks == chunkcap) {                                                             \
                chunkcap *= 2;                                                                     \
                chunks = realloc(chunks, chunkcap * sizeof *chunks);                               \
                if (!chunks)                                                                       \
                    die("out of memory (chunk list)");                                             \
            }                                                                                      \
            size_t bytes_ = fill[b_] * 8;                                                          \
            if (bd_pwrite_full(rfd, bufs + (size_t)b_ * (bufsz / 4), bytes_, runend) < 0)          \
                die("run file: %s", strerror(errno));                                              \
            chunks[nchunks].off = runend;                                                          \
            chunks[nchunks].len = (uint32_t)bytes_;                                                \
            chunks[nchunks].bucket = b_;                                                           \
            nchunks++;                                                                             \
            runend += (int64_t)bytes_;                                                             \
            fill[b_] = 0;                                                                          \
        }                                                                                          \
    } while (0)

#define EMIT(src, dst)                                                                             \
    do {                                                                                           \
        uint32_t bk_ = (uint32_t)((src) >> wshift);                                                \
        uint32_t *p_ = bufs + (size_t)bk_ * (bufsz / 4) + 2 * fill[bk_];                           \
        p_[0] = (uint32_t)(src);                                                                   \
        p_[1] = (uint32_t)(dst);                                                                   \
        bcount[bk_]++;                                                                             \
        if (++fill[bk_] == perbuf)                                                                 \
            SPILL(bk_);                                                                            \
    } while (0)

    double t0 = bd_now();
    for (uint64_t blk = 0; blk * RMAT_BLOCK < m; blk++) {
        bd_rng_t rng;
        bd_rng_init(&rng, seed, blk);
        uint64_t e_end = (blk + 1) * RMAT_BLOCK < m ? (blk + 1) * RMAT_BLOCK : m;
        for (uint64_t e = blk * RMAT_BLOCK; e < e_end; e++) {
            uint64_t u = 0, v = 0;
            for (int l = 0; l < scale; l += 2) {
                uint64_t r = bd_rng_u64(&rng);
                for (int h = 0; h < 2 && l + h < scale; h++) {
                    uint32_t x = (uint32_t)(r >> (32 * h));
                    uint64_t ub = x >= TB, vb = (x >= TA && x < TB) || x >= TC;
                    u = (u << 1) | ub;
                    v = (v << 1) | vb;
                }
            }
            u = bd_perm_apply(&perm, u);
            v = bd_perm_apply(&perm, v);
            EMIT(u, v);
            if (undirected)
                EMIT(v, u);
        }
    }
    for (uint32_t b = 0; b < nbuckets; b++)
        SPILL(b);
    free(bufs);
    free(fill);
    double t1 = bd_now();

    /* Pass 2: per bucket, gather its chunks, counting-sort by source, sort
     * and deduplicate each row, and write rows, colind in order. */
    bdcsr_hdr_t h = {.nrows = (int64_t)n,
                     .ncols = (int64_t)n,
                     .nnz = 0,
                     .idxsize = idx64 || n > INT32_MAX ? 8 : 4,
                     .valtype = BDCSR_VAL_NONE};
    int fd = open_out(out);
    size_t wcap = (size_t)(budget / 16);
    wstream_t wrow, wcol;
    ws_init(&wrow, fd, bdcsr_rowptr_off(&h), wcap);
    ws_init(&wcol, fd, bdcsr_colind_off(&h), wcap);
    /* chunks are in spill order; index them by bucket (stable) */
    size_t *cstart = bd_xcalloc((size_t)nbuckets + 1, sizeof *cstart, "chunk index");
    for (size_t i = 0; i < nchunks; i++)
        cstart[chunks[i].bucket + 1]++;
    for (uint32_t b = 0; b < nbuckets; b++)
        cstart[b + 1] += cstart[b];
    size_t *cpos = bd_xmalloc(((size_t)nbuckets + 1) * sizeof *cpos, "chunk index");
    memcpy(cpos, cstart, ((size_t)nbuckets + 1) * sizeof *cpos);
    chunk_t *sorted = bd_xmalloc((nchunks ? nchunks : 1) * sizeof *sorted, "chunk index");
    for (size_t i = 0; i < nchunks; i++)
        sorted[cpos[chunks[i].bucket]++] = chunks[i];
    free(chunks);
    free(cpos);

    const uint64_t width = (uint64_t)1 << wshift;
    uint64_t maxb = 0;
    for (uint32_t b = 0; b < nbuckets; b++)
        if (bcount[b] > maxb)
            maxb = bcount[b];
    uint32_t *pairs = bd_xmalloc(maxb * 8, "bucket pairs");
    uint32_t *cols = bd_xmalloc(maxb * 4, "bucket columns");
    int64_t *rp = bd_xmalloc((width + 1) * 8, "bucket row pointers");
    int64_t nnz = 0;
    if (bd_pwrite_full(fd, &nnz, 8, bdcsr_rowptr_off(&h)) < 0) /* rowptr[0] = 0 */
        die("write: %s", strerror(errno));
    wrow.off += 8;
    for (uint32_t b = 0; b < nbuckets; b++) {
        uint64_t cnt = 0;
        for (size_t i = cstart[b]; i < cstart[b + 1]; i++) {
            if (bd_pread_full(rfd, (char *)pairs + cnt * 8, sorted[i].len, sorted[i].off) < 0)
                die("run file: %s", strerror(errno));
            cnt += sorted[i].len / 8;
        }
        uint64_t base = (uint64_t)b << wshift;
        memset(rp, 0, (width + 1) * 8);
        for (uint64_t i = 0; i < cnt; i++)
            rp[pairs[2 * i] - base + 1]++;
        for (uint64_t r = 0; r < width; r++)
            rp[r + 1] += rp[r];
        for (uint64_t i = 0; i < cnt; i++)
            cols[rp[pairs[2 * i] - base]++] = pairs[2 * i + 1];
        for (uint64_t r = width; r > 0; r--)
            rp[r] = rp[r - 1];
        rp[0] = 0;
        for (uint64_t r = 0; r < width; r++) {
            uint32_t *row = cols + rp[r];
            int64_t len = rp[r + 1] - rp[r], k = 0;
            sort_u32(row, len);
            for (int64_t i = 0; i < len; i++) {
                if (row[i] == base + r || (k > 0 && row[k - 1] == row[i]))
                    continue;
                row[k++] = row[i];
            }
            if (h.idxsize == 4) {
                ws_put(&wcol, row, (size_t)k * 4);
            } else {
                for (int64_t i = 0; i < k; i++) {
                    int64_t v = row[i];
                    ws_put(&wcol, &v, 8);
                }
            }
            nnz += k;
            ws_put(&wrow, &nnz, 8);
        }
    }
    ws_done(&wrow);
    ws_done(&wcol);
    close(rfd);
    h.nnz = nnz;
    finish_out(fd, out, &h);
    fprintf(stderr,
            "rmat: %llu vertices, %llu generated edges, %lld stored (%u buckets, %.1fs + %.1fs)\n",
            (unsigned long long)n, (unsigned long long)dir_edges, (long long)nnz, nbuckets, t1 - t0,
            bd_now() - t1);
    free(pairs);
    free(cols);
    free(rp);
    free(sorted);
    free(cstart);
    free(bcount);
}

/* ------------------------------------------------------------------ docs / ratings */

/* Inverse-CDF table of a Zipf distribution over [0, n): cdf[i] = P(X <= i). */
static double *zipf_table(int64_t n, double s)
{
    double *cdf = bd_xmalloc((size_t)n * sizeof *cdf, "zipf table");
    double acc = 0;
    for (int64_t i = 0; i < n; i++) {
        acc += pow((double)(i + 1), -s);
        cdf[i] = acc;
    }
    for (int64_t i = 0; i < n; i++)
        cdf[i] /= acc;
    cdf[n - 1] = 1.0;
    return cdf;
}
static int64_t zipf_draw(const double *cdf, int64_t n, bd_rng_t *r)
{
    double u = bd_rng_double(r);
    int64_t a = 0, b = n - 1;
    while (a < b) {
        int64_t mid = a + (b - a) / 2;
        if (cdf[mid] > u)
            b = mid;
        else
            a = mid + 1;
    }
    return a;
}

typedef struct {
    uint32_t col;
    float val;
} entry_t;

static int cmp_entry(const void *a, const void *b)
{
    uint32_t x = ((const entry_t *)a)->col, y = ((const entry_t *)b)->col;
    return (x > y) - (x < y);
}

/* Row generator callback: fills ents with the row's entries (sorted by
 * column, distinct) and returns how many.  Must be a pure function of i. */
typedef int64_t (*rowgen_fn)(void *ctx, int64_t i, entry_t *ents, uint32_t *scratch);

/* Two passes over the rows (lengths, then contents) so every array is
 * written sequentially at its final offset. */
static void write_rows(const char *out, int64_t nrows, int64_t ncols, int64_t maxlen, rowgen_fn gen,
                       void *ctx)
{
    entry_t *ents = bd_xmalloc((size_t)maxlen * sizeof *ents, "row entries");
    uint32_t *scratch = bd_xmalloc((size_t)maxlen * sizeof *scratch, "row scratch");
    bdcsr_hdr_t h = {.nrows = nrows,
                     .ncols = ncols,
                     .nnz = 0,
                     .idxsize = ncols > INT32_MAX ? 8 : 4,
                     .valtype = BDCSR_VAL_F32};
    int fd = open_out(out);
    wstream_t wrow;
    ws_init(&wrow, fd, bdcsr_rowptr_off(&h), 8 << 20);
    int64_t nnz = 0;
    ws_put(&wrow, &nnz, 8);
    for (int64_t i = 0; i < nrows; i++) {
        nnz += gen(ctx, i, ents, scratch);
        ws_put(&wrow, &nnz, 8);
    }
    ws_done(&wrow);
    h.nnz = nnz;
    wstream_t wcol, wval;
    ws_init(&wcol, fd, bdcsr_colind_off(&h), 8 << 20);
    ws_init(&wval, fd, bdcsr_values_off(&h), 8 << 20);
    for (int64_t i = 0; i < nrows; i++) {
        int64_t k = gen(ctx, i, ents, scratch);
        for (int64_t j = 0; j < k; j++) {
            if (h.idxsize == 4) {
                ws_put(&wcol, &ents[j].col, 4);
            } else {
                int64_t c = ents[j].col;
                ws_put(&wcol, &c, 8);
            }
            ws_put(&wval, &ents[j].val, 4);
        }
    }
    ws_done(&wcol);
    ws_done(&wval);
    finish_out(fd, out, &h);
    free(ents);
    free(scratch);
    fprintf(stderr, "%lld x %lld, %lld non-zeros\n", (long long)nrows, (long long)ncols,
            (long long)nnz);
}

typedef struct {
    uint64_t seed;
    int64_t ncols, maxlen;
    double mu, sigma;
    double *cdf;
    bd_perm_t perm;
} docs_t;

static int64_t docs_row(void *vctx, int64_t i, entry_t *ents, uint32_t *ranks)
{
    docs_t *d = vctx;
    bd_rng_t r;
    bd_rng_init(&r, d->seed, (uint64_t)i);
    double len = exp(d->mu + d->sigma * bd_rng_normal(&r));
    int64_t L = (int64_t)(len + 0.5);
    if (L < 1)
        L = 1;
    if (L > d->maxlen)
        L = d->maxlen;
    for (int64_t j = 0; j < L; j++)
        ranks[j] = (uint32_t)zipf_draw(d->cdf, d->ncols, &r);
    sort_u32(ranks, L);
    int64_t k = 0;
    double norm = 0;
    for (int64_t j = 0; j < L;) {
        int64_t e = j;
        while (e < L && ranks[e] == ranks[j])
            e++;
        double tf = (double)(e - j);
        double idf = log(1.0 + (double)d->ncols / (double)(ranks[j] + 1));
        double w = (1.0 + log(tf)) * idf;
        ents[k].col = (uint32_t)bd_perm_apply(&d->perm, ranks[j]);
        ents[k].val = (float)w;
        norm += w * w;
        k++;
        j = e;
    }
    norm = sqrt(norm);
    for (int64_t j = 0; j < k; j++)
        ents[j].val = (float)(ents[j].val / norm);
    qsort(ents, (size_t)k, sizeof *ents, cmp_entry);
    return k;
}

static void cmd_docs(int argc, char **argv)
{
    int64_t nrows = -1, ncols = -1, avg = -1;
    double zipf = 1.1;
    uint64_t seed = 1;
    const char *out = NULL;
    static struct option lo[] = {{"seed", required_argument, 0, 'S'}, {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "r:c:l:z:o:S:", lo, NULL)) != -1) {
        switch (c) {
        case 'r': nrows = parse_int(optarg, "rows"); break;
        case 'c': ncols = parse_int(optarg, "columns"); break;
        case 'l': avg = parse_int(optarg, "average length"); break;
        case 'z': zipf = atof(optarg); break;
        case 'o': out = optarg; break;
        case 'S': seed = (uint64_t)parse_int(optarg, "seed"); break;
        default: fputs(usage_text, stderr); exit(2);
        }
    }
    if (nrows < 1 || ncols < 1 || ncols > UINT32_MAX || avg < 1 || !out || zipf <= 0)
        die("docs needs -r NROWS, -c NCOLS, -l AVGLEN and -o FILE");
    docs_t d = {.seed = seed, .ncols = ncols, .sigma = 1.0};
    d.mu = log((double)avg) - 0.5 * d.sigma * d.sigma;
    d.maxlen = 20 * avg < ncols * 4 ? 20 * avg : ncols * 4;
    if (d.maxlen < 1)
        d.maxlen = 1;
    d.cdf = zipf_table(ncols, zipf);
    bd_perm_init(&d.perm, (uint64_t)ncols, seed ^ 0xD0C5);
    write_rows(out, nrows, ncols, d.maxlen, docs_row, &d);
    free(d.cdf);
}

typedef struct {
    uint64_t seed;
    int64_t ncols, maxdeg;
    int k;
    double dmin, alpha, noise;
    double *cdf;
    float *items; /* cached item factors (ncols x k) or NULL */
    bd_perm_t perm;
} ratings_t;

static void factor(uint64_t seed, uint64_t kind, int64_t id, int k, float *out)
{
    bd_rng_t r;
    bd_rng_init(&r, bd_hash3(seed, kind, 0xFAC), (uint64_t)id);
    for (int f = 0; f < k; f++)
        out[f] = (float)bd_rng_normal(&r);
}

static int64_t ratings_row(void *vctx, int64_t i, entry_t *ents, uint32_t *items)
{
    ratings_t *g = vctx;
    bd_rng_t r;
    bd_rng_init(&r, g->seed, (uint64_t)i);
    double deg = g->dmin * pow(1.0 - bd_rng_double(&r), -1.0 / (g->alpha - 1.0));
    int64_t L = (int64_t)deg;
    if (L < 1)
        L = 1;
    if (L > g->maxdeg)
        L = g->maxdeg;
    for (int64_t j = 0; j < L; j++)
        items[j] = (uint32_t)bd_perm_apply(&g->perm, (uint64_t)zipf_draw(g->cdf, g->ncols, &r));
    sort_u32(items, L);
    float u[256], vbuf[256];
    factor(g->seed, 1, i, g->k, u);
    int64_t k = 0;
    for (int64_t j = 0; j < L; j++) {
        if (k > 0 && ents[k - 1].col == items[j])
            continue;
        const float *v = vbuf;
        if (g->items)
            v = g->items + (size_t)items[j] * g->k;
        else
            factor(g->seed, 2, items[j], g->k, vbuf);
        double dot = 0;
        for (int f = 0; f < g->k; f++)
            dot += (double)u[f] * v[f];
        double val = 3.0 + dot / sqrt((double)g->k) + g->noise * bd_rng_normal(&r);
        val = val < 1 ? 1 : val > 5 ? 5 : val;
        ents[k].col = items[j];
        ents[k].val = (float)val;
        k++;
    }
    return k;
}

static void cmd_ratings(int argc, char **argv)
{
    int64_t nrows = -1, ncols = -1, avg = -1, k = 10;
    double noise = 0.5;
    uint64_t seed = 1;
    const char *out = NULL;
    static struct option lo[] = {{"seed", required_argument, 0, 'S'}, {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "r:c:l:k:n:o:S:", lo, NULL)) != -1) {
        switch (c) {
        case 'r': nrows = parse_int(optarg, "users"); break;
        case 'c': ncols = parse_int(optarg, "items"); break;
        case 'l': avg = parse_int(optarg, "average degree"); break;
        case 'k': k = parse_int(optarg, "rank"); break;
        case 'n': noise = atof(optarg); break;
        case 'o': out = optarg; break;
        case 'S': seed = (uint64_t)parse_int(optarg, "seed"); break;
        default: fputs(usage_text, stderr); exit(2);
        }
    }
    if (nrows < 1 || ncols < 1 || ncols > UINT32_MAX || avg < 1 || k < 1 || k > 256 || !out)
        die("ratings needs -r USERS, -c ITEMS, -l AVGDEG, -k RANK (1..256) and -o FILE");
    ratings_t g = {.seed = seed, .ncols = ncols, .k = (int)k, .alpha = 2.5, .noise = noise};
    g.dmin = (double)avg * (g.alpha - 2.0) / (g.alpha - 1.0);
    g.maxdeg = ncols < 50 * avg ? ncols : 50 * avg;
    g.cdf = zipf_table(ncols, 0.8);
    bd_perm_init(&g.perm, (uint64_t)ncols, seed ^ 0x1735);
    if ((double)ncols * (double)k * 4 <= 512.0 * 1048576.0) {
        g.items = bd_xmalloc((size_t)ncols * (size_t)k * 4, "item factors");
        for (int64_t j = 0; j < ncols; j++)
            factor(seed, 2, j, g.k, g.items + (size_t)j * g.k);
    }
    write_rows(out, nrows, ncols, g.maxdeg, ratings_row, &g);
    free(g.cdf);
    free(g.items);
}

static void cmd_info(int argc, char **argv)
{
    if (argc < 2)
        die("info needs a FILE");
    bdcsr_hdr_t h;
    char err[512];
    int fd = bdcsr_open(argv[1], &h, err, sizeof err);
    if (fd < 0)
        die("%s", err);
    printf("nrows %lld\nncols %lld\nnnz %lld\nidxsize %d\nvaltype %s\nbytes %lld\n",
           (long long)h.nrows, (long long)h.ncols, (long long)h.nnz, h.idxsize,
           h.valtype == BDCSR_VAL_F32 ? "float32" : "none", (long long)bdcsr_file_size(&h));
    close(fd);
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        fputs(usage_text, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *cmd = argv[1];
    argc--;
    argv++;
    if (!strcmp(cmd, "rmat"))
        cmd_rmat(argc, argv);
    else if (!strcmp(cmd, "docs"))
        cmd_docs(argc, argv);
    else if (!strcmp(cmd, "ratings"))
        cmd_ratings(argc, argv);
    else if (!strcmp(cmd, "info"))
        cmd_info(argc, argv);
    else
        die("unknown command %s (see bdmpi-gen --help)", cmd);
    return 0;
}
