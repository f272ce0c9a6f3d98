/* bdcsr.c -- see bdcsr.h. */
#include "bdcsr.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BD_IO_MAX ((size_t)1 << 30)

int bd_pread_full(int fd, void *buf, size_t n, int64_t off)
{
    char *p = buf;
    while (n > 0) {
        size_t req = n < BD_IO_MAX ? n : BD_IO_MAX;
        ssize_t got = pread(fd, p, req, (off_t)off);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (got == 0) {
            errno = EIO;
            return -1;
        }
        p += got;
        n -= (size_t)got;
        off += got;
    }
    return 0;
}

int bd_pwrite_full(int fd, const void *buf, size_t n, int64_t off)
{
    const char *p = buf;
    while (n > 0) {
        size_t req = n < BD_IO_MAX ? n : BD_IO_MAX;
        ssize_t put = pwrite(fd, p, req, (off_t)off);
        if (put < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += put;
        n -= (size_t)put;
        off += put;
    }
    return 0;
}

static void put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static void put_i64(unsigned char *p, int64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)((uint64_t)v >> (8 * i));
}
static uint32_t get_u32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)p[i] << (8 * i);
    return v;
}
static int64_t get_i64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return (int64_t)v;
}

int bdcsr_write_hdr(int fd, const bdcsr_hdr_t *h)
{
    unsigned char b[BDCSR_HDR_SIZE];
    memset(b, 0, sizeof b);
    memcpy(b, BDCSR_MAGIC, 8);
    put_u32(b + 8, BDCSR_VERSION);
    put_u32(b + 12, (uint32_t)h->idxsize);
    put_u32(b + 16, (uint32_t)h->valtype);
    put_i64(b + 24, h->nrows);
    put_i64(b + 32, h->ncols);
    put_i64(b + 40, h->nnz);
    return bd_pwrite_full(fd, b, sizeof b, 0);
}

int bdcsr_open(const char *path, bdcsr_hdr_t *h, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    unsigned char b[BDCSR_HDR_SIZE];
    if (bd_pread_full(fd, b, sizeof b, 0) < 0) {
        snprintf(err, errlen, "%s: cannot read header: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    if (memcmp(b, BDCSR_MAGIC, 8) != 0 || get_u32(b + 8) != BDCSR_VERSION) {
        snprintf(err, errlen, "%s: not a version %d BDMPICSR file", path, BDCSR_VERSION);
        close(fd);
        return -1;
    }
    h->idxsize = (int)get_u32(b + 12);
    h->valtype = (int)get_u32(b + 16);
    h->nrows = get_i64(b + 24);
    h->ncols = get_i64(b + 32);
    h->nnz = get_i64(b + 40);
    if ((h->idxsize != 4 && h->idxsize != 8) ||
        (h->valtype != BDCSR_VAL_NONE && h->valtype != BDCSR_VAL_F32) || h->nrows < 0 ||
        h->ncols < 0 || h->nnz < 0) {
        snprintf(err, errlen, "%s: bad header fields", path);
        close(fd);
        return -1;
    }
    off_t end = lseek(fd, 0, SEEK_END);
    if (end < (off_t)bdcsr_file_size(h)) {
        snprintf(err, errlen, "%s: truncated (%lld bytes, header needs %lld)", path, (long long)end,
                 (long long)bdcsr_file_size(h));
        close(fd);
        return -1;
    }
    return fd;
}

int bdcsr_read_rowptr(int fd, const bdcsr_hdr_t *h, int64_t r0, int64_t r1, int64_t *out)
{
    if (r0 < 0 || r1 < r0 || r1 > h->nrows) {
        errno = EINVAL;
        return -1;
    }
    return bd_pread_full(fd, out, (size_t)(r1 - r0 + 1) * 8, bdcsr_rowptr_off(h) + 8 * r0);
}

int bdcsr_read_colind32(int fd, const bdcsr_hdr_t *h, int64_t e0, int64_t e1, int32_t *out)
{
    if (e0 < 0 || e1 < e0 || e1 > h->nnz) {
        errno = EINVAL;
        return -1;
    }
    int64_t off = bdcsr_colind_off(h);
    if (h->idxsize == 4)
        return bd_pread_full(fd, out, (size_t)(e1 - e0) * 4, off + 4 * e0);
    /* int64 on disk: read through a bounce buffer of 1M entries. */
    enum { CH = 1 << 20 };
    int64_t *tmp = malloc(CH * sizeof *tmp);
    if (!tmp)
        return -1;
    for (int64_t e = e0; e < e1; e += CH) {
        int64_t n = e1 - e < CH ? e1 - e : CH;
        if (bd_pread_full(fd, tmp, (size_t)n * 8, off + 8 * e) < 0) {
            free(tmp);
            return -1;
        }
        for (int64_t i = 0; i < n; i++) {
            if (tmp[i] < 0 || tmp[i] > INT32_MAX) {
                free(tmp);
                errno = ERANGE;
                return -1;
            }
            out[e - e0 + i] = (int32_t)tmp[i];
        }
    }
    free(tmp);
    return 0;
}

int bdcsr_read_values(int fd, const bdcsr_hdr_t *h, int64_t e0, int64_t e1, float *out)
{
    if (e0 < 0 || e1 < e0 || e1 > h->nnz) {
        errno = EINVAL;
        return -1;
    }
    if (h->valtype == BDCSR_VAL_NONE) {
        for (int64_t i = 0; i < e1 - e0; i++)
            out[i] = 1.0f;
        return 0;
    }
    return bd_pread_full(fd, out, (size_t)(e1 - e0) * 4, bdcsr_values_off(h) + 4 * e0);
}

int64_t bdcsr_part_start_range(int fd, const bdcsr_hdr_t *h, int64_t lo, int64_t hi, int nparts,
                               int k)
{
    if (k <= 0)
        return lo;
    if (k >= nparts)
        return hi;
    int64_t base[2];
    if (bdcsr_read_rowptr(fd, h, lo, lo, &base[0]) < 0 ||
        bdcsr_read_rowptr(fd, h, hi, hi, &base[1]) < 0)
        return -1;
    /* weight W(r) = rowptr[r] + r, strictly increasing; target share k/nparts. */
    int64_t total = (base[1] + hi) - (base[0] + lo);
    int64_t target = base[0] + lo + (int64_t)((__int128)total * k / nparts);
    int64_t a = lo, b = hi; /* smallest r in [a, b] with W(r) >= target */
    while (a < b) {
        int64_t m = a + (b - a) / 2, rp;
        if (bdcsr_read_rowptr(fd, h, m, m, &rp) < 0)
            return -1;
        if (rp + m >= target)
            b = m;
        else
            a = m + 1;
    }
    return a;
}

int64_t bdcsr_part_start(int fd, const bdcsr_hdr_t *h, int nparts, int k)
{
    return bdcsr_part_start_range(fd, h, 0, h->nrows, nparts, k);
}

void bd_rng_init(bd_rng_t *r, uint64_t seed, uint64_t stream)
{
    uint64_t s = bd_hash3(seed, stream, 0x5EED);
    for (int i = 0; i < 4; i++)
        r->s[i] = bd_splitmix64(&s);
}

uint64_t bd_rng_below(bd_rng_t *r, uint64_t n)
{
    uint64_t lim = UINT64_MAX - UINT64_MAX % n; /* reject the biased tail */
    uint64_t x;
    do
        x = bd_rng_u64(r);
    while (x >= lim);
    return x % n;
}

double bd_rng_normal(bd_rng_t *r)
{
    double u1 = bd_rng_double(r), u2 = bd_rng_double(r);
    if (u1 < 1e-300)
        u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

void bd_perm_init(bd_perm_t *p, uint64_t n, uint64_t seed)
{
    int bits = 1;
    while (bits < 64 && ((uint64_t)1 << bits) < n)
        bits++;
    p->n = n;
    p->mask = bits >= 64 ? UINT64_MAX : (((uint64_t)1 << bits) - 1);
    p->shift = bits / 2 + 1;
    uint64_t s = bd_hash3(seed, n, 0x9E4);
    for (int i = 0; i < 4; i++) {
        p->mul[i] = bd_splitmix64(&s) | 1; /* odd: invertible mod 2^bits */
        p->add[i] = bd_splitmix64(&s);
    }
}

uint64_t bd_perm_apply(const bd_perm_t *p, uint64_t x)
{
    do {
        for (int i = 0; i < 4; i++) {
            x = (x * p->mul[i] + p->add[i]) & p->mask;
            x ^= x >> p->shift;
        }
    } while (x >= p->n);
    return x;
}

double bd_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int64_t bd_parse_size(const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || v < 0)
        return -1;
    double mul = 1;
    switch (*end) {
    case 'k':
    case 'K':
        mul = 1024.0;
        end++;
        break;
    case 'm':
    case 'M':
        mul = 1048576.0;
        end++;
        break;
    case 'g':
    case 'G':
        mul = 1073741824.0;
        end++;
        break;
    case 't':
    case 'T':
        mul = 1099511627776.0;
        end++;
        break;
    default: break;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end)
        return -1;
    return (int64_t)(v * mul);
}

void *bd_xmalloc(size_t n, const char *what)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory allocating %zu bytes for %s\n", n, what);
        exit(3);
    }
    return p;
}

void *bd_xcalloc(size_t n, size_t sz, const char *what)
{
    void *p = calloc(n ? n : 1, sz ? sz : 1);
    if (!p) {
        fprintf(stderr, "out of memory allocating %zu x %zu bytes for %s\n", n, sz, what);
        exit(3);
    }
    return p;
}
