/*
 * sgdcommon.h -- pieces of SGD matrix factorization shared by every
 * variant, so they all compute bit-identical results for the same q:
 *
 *  - the q x q decomposition: row block bi is rows [bdcsr_part_start(q, bi),
 *    bdcsr_part_start(q, bi+1)) (balanced by non-zeros), column block bj is
 *    columns [ncols*bj/q, ncols*(bj+1)/q);
 *  - the schedule: an iteration has q steps; in step s the blocks
 *    (bi, (bi+s) mod q) are processed (a block diagonal, so no two touch the
 *    same rows of U or columns of V and their order within a step does not
 *    matter);
 *  - the traversal of a block: its rows in a seeded random order (a fresh
 *    order per iteration and block), each row's ratings by increasing column
 *    (the paper's row-wise random traversal);
 *  - the initial factors: a hash of (seed, row or column, factor), so they
 *    do not depend on who creates them;
 *  - the update: e = r - u.v; u += lr (e v - reg u); v += lr (e u - reg v),
 *    in float, with the squared errors (taken before each update) summed in
 *    double per block.  Per-iteration RMSE = sqrt(sum of the blocks' sums,
 *    added in row-major block order / nnz).
 *
 * After the last iteration a pass without updates gives the "final rmse".
 */
#ifndef BDAPPS_SGDCOMMON_H
#define BDAPPS_SGDCOMMON_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "bdcsr.h"

#define SGD_MAXK 256

static inline int64_t sgd_col_start(int64_t ncols, int q, int j)
{
    return (int64_t)((__int128)ncols * j / q);
}

/* Initial factor vector of row i (which = 0, U) or column j (which = 1, V). */
static inline void sgd_init_factor(uint64_t seed, int which, int64_t idx, int k, float *out)
{
    const double amp = sqrt(3.0 / k);
    for (int f = 0; f < k; f++) {
        uint64_t h = bd_hash3(seed + 0x51D * (uint64_t)(which + 1), (uint64_t)idx, (uint64_t)f);
        out[f] = (float)(amp * (0.5 + (double)(h >> 11) * 0x1.0p-53));
    }
}

/* The order in which block (bi, bj) visits its nrows rows in iteration it. */
static inline void sgd_row_order(int64_t nrows, uint64_t seed, int it, int bi, int bj,
                                 int32_t *order)
{
    bd_rng_t r;
    bd_rng_init(&r, seed, bd_hash3((uint64_t)it, (uint64_t)bi, (uint64_t)bj));
    for (int64_t i = 0; i < nrows; i++)
        order[i] = (int32_t)i;
    for (int64_t i = nrows - 1; i > 0; i--) {
        int64_t j = (int64_t)bd_rng_below(&r, (uint64_t)i + 1);
        int32_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

/* One rating: returns the squared error before the update. */
static inline double sgd_update(float *u, float *v, int k, float r, float lr, float reg)
{
    double pred = 0;
    for (int f = 0; f < k; f++)
        pred += (double)u[f] * v[f];
    float e = (float)(r - pred);
    for (int f = 0; f < k; f++) {
        float uf = u[f], vf = v[f];
        u[f] = uf + lr * (e * vf - reg * uf);
        v[f] = vf + lr * (e * uf - reg * vf);
    }
    return (double)e * e;
}

static inline double sgd_error(const float *u, const float *v, int k, float r)
{
    double pred = 0;
    for (int f = 0; f < k; f++)
        pred += (double)u[f] * v[f];
    float e = (float)(r - pred);
    return (double)e * e;
}

/* Process one block held as a local CSR (rows relative to the block's
 * first row, columns relative to its first column) with U (block rows x k)
 * and V (block columns x k).  update = 0: only sum the errors, in stored
 * order (the final evaluation).  order: nrows scratch entries. */
static inline double sgd_block(int64_t nrows, const int64_t *rp, const int32_t *ci,
                               const float *val, float *U, float *V, int k, float lr, float reg,
                               int update, uint64_t seed, int it, int bi, int bj, int32_t *order)
{
    double sse = 0;
    if (!update) {
        for (int64_t i = 0; i < nrows; i++)
            for (int64_t e = rp[i]; e < rp[i + 1]; e++)
                sse += sgd_error(U + i * k, V + (int64_t)ci[e] * k, k, val[e]);
        return sse;
    }
    sgd_row_order(nrows, seed, it, bi, bj, order);
    for (int64_t x = 0; x < nrows; x++) {
        int64_t i = order[x];
        for (int64_t e = rp[i]; e < rp[i + 1]; e++)
            sse += sgd_update(U + i * k, V + (int64_t)ci[e] * k, k, val[e], lr, reg);
    }
    return sse;
}

/* Read block (rows [r0, r1), columns [c0, c1)) of the file into a local
 * CSR, streaming the row range in pieces of at most `chunk` non-zeros.
 * Returns 0 or -1 (errno set). */
static inline int sgd_load_block(int fd, const bdcsr_hdr_t *h, int64_t r0, int64_t r1, int64_t c0,
                                 int64_t c1, int64_t chunk, int64_t **rp_out, int32_t **ci_out,
                                 float **val_out, int64_t *nnz_out)
{
    int64_t nr = r1 - r0;
    int64_t *grp = malloc((size_t)(nr + 1) * sizeof *grp);
    int64_t *rp = malloc((size_t)(nr + 1) * sizeof *rp);
    if (!grp || !rp || bdcsr_read_rowptr(fd, h, r0, r1, grp) < 0)
        return -1;
    if (chunk > grp[nr] - grp[0]) /* no bigger than the row range */
        chunk = grp[nr] - grp[0];
    if (chunk < 1)
        chunk = 1;
    int32_t *tc = malloc((size_t)chunk * sizeof *tc);
    float *tv = malloc((size_t)chunk * sizeof *tv);
    size_t cap = 1024, n = 0;
    int32_t *ci = malloc(cap * sizeof *ci);
    float *val = malloc(cap * sizeof *val);
    if (!tc || !tv || !ci || !val)
        return -1;
    rp[0] = 0;
    int64_t row = 0;
    for (int64_t a = grp[0]; a < grp[nr] || row < nr;) {
        int64_t b = a + chunk < grp[nr] ? a + chunk : grp[nr];
        if (b > a &&
            (bdcsr_read_colind32(fd, h, a, b, tc) < 0 || bdcsr_read_values(fd, h, a, b, tv) < 0))
            return -1;
        for (int64_t e = a; e < b; e++) {
            while (grp[row + 1] <= e)
                rp[++row] = (int64_t)n;
            if (tc[e - a] < c0 || tc[e - a] >= c1)
                continue;
            if (n == cap) {
                cap *= 2;
                ci = realloc(ci, cap * sizeof *ci);
                val = realloc(val, cap * sizeof *val);
                if (!ci || !val)
                    return -1;
            }
            ci[n] = (int32_t)(tc[e - a] - c0);
            val[n] = tv[e - a];
            n++;
        }
        a = b;
        if (a >= grp[nr])
            while (row < nr)
                rp[++row] = (int64_t)n;
    }
    free(grp);
    free(tc);
    free(tv);
    *rp_out = rp;
    *ci_out = ci;
    *val_out = val;
    *nnz_out = (int64_t)n;
    return 0;
}

#endif
