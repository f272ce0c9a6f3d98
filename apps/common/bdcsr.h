/*
 * bdcsr.h -- the benchmark applications' binary CSR file format (see
 * apps/FORMAT.md), whole-request file I/O helpers, row partitioning, and
 * small deterministic random number tools shared by the generator and the
 * applications.  No MPI in here.
 */
#ifndef BDAPPS_BDCSR_H
#define BDAPPS_BDCSR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define BDCSR_MAGIC "BDMPICSR"
#define BDCSR_VERSION 1
#define BDCSR_HDR_SIZE 64

enum { BDCSR_VAL_NONE = 0, BDCSR_VAL_F32 = 1 };

typedef struct {
    int64_t nrows, ncols, nnz;
    int idxsize; /* bytes per column index: 4 or 8 */
    int valtype; /* BDCSR_VAL_NONE or BDCSR_VAL_F32 */
} bdcsr_hdr_t;

static inline int64_t bdcsr_rowptr_off(const bdcsr_hdr_t *h)
{
    (void)h;
    return BDCSR_HDR_SIZE;
}
static inline int64_t bdcsr_colind_off(const bdcsr_hdr_t *h)
{
    return BDCSR_HDR_SIZE + 8 * (h->nrows + 1);
}
static inline int64_t bdcsr_values_off(const bdcsr_hdr_t *h)
{
    return bdcsr_colind_off(h) + (int64_t)h->idxsize * h->nnz;
}
static inline int64_t bdcsr_file_size(const bdcsr_hdr_t *h)
{
    return bdcsr_values_off(h) + (h->valtype == BDCSR_VAL_F32 ? 4 * h->nnz : 0);
}

/* Whole-request pread/pwrite: loop over short transfers and EINTR, in
 * requests of at most 1 GiB.  0 on success; -1 with errno set (EIO for an
 * unexpected end of file). */
int bd_pread_full(int fd, void *buf, size_t n, int64_t off);
int bd_pwrite_full(int fd, const void *buf, size_t n, int64_t off);

/* Open and validate a CSR file; returns the fd or -1 with a message in err. */
int bdcsr_open(const char *path, bdcsr_hdr_t *h, char *err, size_t errlen);
int bdcsr_write_hdr(int fd, const bdcsr_hdr_t *h);

/* rowptr[r0..r1] (r1 - r0 + 1 entries). */
int bdcsr_read_rowptr(int fd, const bdcsr_hdr_t *h, int64_t r0, int64_t r1, int64_t *out);
/* Column indices of non-zeros [e0, e1) as int32 (int64 files are narrowed,
 * failing with ERANGE if an index does not fit). */
int bdcsr_read_colind32(int fd, const bdcsr_hdr_t *h, int64_t e0, int64_t e1, int32_t *out);
/* Values of non-zeros [e0, e1); a pattern-only file yields 1.0f. */
int bdcsr_read_values(int fd, const bdcsr_hdr_t *h, int64_t e0, int64_t e1, float *out);

/* Split rows [0, nrows) into nparts consecutive ranges balanced by weight
 * (row's non-zeros + 1, so empty rows are spread too).  Part k is rows
 * [bdcsr_part_start(k), bdcsr_part_start(k+1)).  Only O(log nrows) 8-byte
 * preads of the row pointer array, so any rank can compute any boundary. */
int64_t bdcsr_part_start(int fd, const bdcsr_hdr_t *h, int nparts, int k);

/* Same split over a row range [lo, hi) instead of the whole matrix. */
int64_t bdcsr_part_start_range(int fd, const bdcsr_hdr_t *h, int64_t lo, int64_t hi, int nparts,
                               int k);

/* ---- deterministic random numbers ---- */
static inline uint64_t bd_splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
/* Hash of a few words, for per-object seeds (seed, stream, index...). */
static inline uint64_t bd_hash3(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t s = a * 0xD6E8FEB86659FD93ULL;
    s ^= bd_splitmix64(&s) + b;
    s ^= bd_splitmix64(&s) + c;
    return bd_splitmix64(&s);
}

typedef struct {
    uint64_t s[4];
} bd_rng_t; /* xoshiro256** */

void bd_rng_init(bd_rng_t *r, uint64_t seed, uint64_t stream);
static inline uint64_t bd_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
static inline uint64_t bd_rng_u64(bd_rng_t *r)
{
    uint64_t *s = r->s;
    uint64_t res = bd_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = bd_rotl(s[3], 45);
    return res;
}
/* Uniform in [0, 1) with 53 random bits. */
static inline double bd_rng_double(bd_rng_t *r)
{
    return (double)(bd_rng_u64(r) >> 11) * 0x1.0p-53;
}
/* Uniform in [0, n), n > 0, unbiased. */
uint64_t bd_rng_below(bd_rng_t *r, uint64_t n);
/* Standard normal (Box-Muller, one value per call). */
double bd_rng_normal(bd_rng_t *r);

/* A seeded bijection of [0, n): a mixing bijection on the smallest power of
 * two >= n, with cycle walking for the values >= n.  O(1) memory. */
typedef struct {
    uint64_t n, mask;
    int shift;
    uint64_t mul[4], add[4];
} bd_perm_t;
void bd_perm_init(bd_perm_t *p, uint64_t n, uint64_t seed);
uint64_t bd_perm_apply(const bd_perm_t *p, uint64_t x);

/* ---- misc ---- */
double bd_now(void);
/* Parse a size like 64M, 1G, 4096 (K/M/G/T binary suffixes); -1 if bad. */
int64_t bd_parse_size(const char *s);
void *bd_xmalloc(size_t n, const char *what);
void *bd_xcalloc(size_t n, size_t sz, const char *what);

#endif
