/*
 * kmcommon.h -- pieces of spherical K-means shared by every variant, so
 * they all compute bit-identical results:
 *
 *  - row normalization (each row scaled to unit length, in double, stored
 *    back as float);
 *  - the initial centroids: K distinct non-empty rows drawn with a seeded
 *    generator (read from the file by whoever picks them);
 *  - cluster assignment of one row (cosine similarity = dot product with
 *    the unit centroids; ties go to the lower cluster);
 *  - exact accumulation: centroid sums and the objective are added up in
 *    64-bit fixed point (each contribution rounded to a multiple of 2^-F),
 *    so the totals do not depend on how rows are split among ranks or in
 *    what order partial sums are combined;
 *  - the new centroid of a cluster: its sum scaled to unit length (an empty
 *    cluster keeps its previous centroid).
 *
 * Centroids are dense and stored transposed, ct[col * K + c], so the
 * assignment walks a row's non-zeros once and updates all K similarities.
 */
#ifndef BDAPPS_KMCOMMON_H
#define BDAPPS_KMCOMMON_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bdcsr.h"

/* Fixed-point exponent: F fraction bits such that nrows contributions of
 * magnitude <= 1 cannot overflow int64. */
static inline int km_fraction_bits(int64_t nrows)
{
    int lg = 0;
    while (lg < 62 && ((int64_t)1 << lg) < nrows + 1)
        lg++;
    int f = 61 - lg;
    return f > 40 ? 40 : f;
}

static inline int64_t km_fix(double v, double scale) { return (int64_t)llround(v * scale); }

static inline void km_normalize_rows(int64_t nrows, const int64_t *rowptr, float *val)
{
    for (int64_t i = 0; i < nrows; i++) {
        double s = 0;
        for (int64_t e = rowptr[i]; e < rowptr[i + 1]; e++)
            s += (double)val[e] * val[e];
        if (s > 0) {
            double inv = 1.0 / sqrt(s);
            for (int64_t e = rowptr[i]; e < rowptr[i + 1]; e++)
                val[e] = (float)(val[e] * inv);
        }
    }
}

/* Pick the K initial centroids (rows of the whole matrix) and write them,
 * normalized, into ct (ncols * K, transposed).  Returns 0, or -1 if the
 * matrix has fewer than K non-empty rows or a read fails. */
static inline int km_initial_centroids(int fd, const bdcsr_hdr_t *h, int K, uint64_t seed,
                                       double *ct)
{
    memset(ct, 0, (size_t)h->ncols * K * sizeof *ct);
    int64_t *picked = malloc((size_t)K * sizeof *picked);
    if (!picked)
        return -1;
    bd_rng_t r;
    bd_rng_init(&r, seed, 0xC3);
    int got = 0;
    int64_t tries = 0, limit = 100 * (int64_t)K + 10 * h->nrows;
    while (got < K && tries++ < limit) {
        int64_t row = (int64_t)bd_rng_below(&r, (uint64_t)h->nrows);
        int dup = 0;
        for (int c = 0; c < got; c++)
            dup |= picked[c] == row;
        int64_t rp[2];
        if (dup || bdcsr_read_rowptr(fd, h, row, row + 1, rp) < 0 || rp[1] == rp[0])
            continue;
        int64_t len = rp[1] - rp[0];
        int32_t *ci = malloc((size_t)len * sizeof *ci);
        float *v = malloc((size_t)len * sizeof *v);
        int64_t lrp[2] = {0, len};
        if (!ci || !v || bdcsr_read_colind32(fd, h, rp[0], rp[1], ci) < 0 ||
            bdcsr_read_values(fd, h, rp[0], rp[1], v) < 0) {
            free(ci);
            free(v);
            free(picked);
            return -1;
        }
        km_normalize_rows(1, lrp, v);
        for (int64_t e = 0; e < len; e++)
            ct[(int64_t)ci[e] * K + got] = v[e];
        free(ci);
        free(v);
        picked[got++] = row;
    }
    free(picked);
    return got == K ? 0 : -1;
}

/* Best cluster of one row (sims: K doubles of scratch); *best_sim gets its
 * similarity. */
static inline int km_assign_row(int K, const int32_t *ci, const float *v, int64_t len,
                                const double *ct, double *sims, double *best_sim)
{
    for (int c = 0; c < K; c++)
        sims[c] = 0;
    for (int64_t e = 0; e < len; e++) {
        const double *col = ct + (int64_t)ci[e] * K;
        double x = v[e];
        for (int c = 0; c < K; c++)
            sims[c] += x * col[c];
    }
    int best = 0;
    for (int c = 1; c < K; c++)
        if (sims[c] > sims[best])
            best = c;
    *best_sim = sims[best];
    return best;
}

/* Add one assigned row into the fixed-point sums (ncols * K, transposed). */
static inline void km_accumulate(int K, int best, const int32_t *ci, const float *v, int64_t len,
                                 int64_t *sums, double scale)
{
    for (int64_t e = 0; e < len; e++)
        sums[(int64_t)ci[e] * K + best] += km_fix(v[e], scale);
}

/* New centroids from the global sums and sizes; empty clusters keep theirs. */
static inline void km_new_centroids(int K, int64_t ncols, const int64_t *sums, const int64_t *count,
                                    double scale, double *ct)
{
    double *norm = calloc((size_t)K, sizeof *norm);
    if (!norm)
        abort();
    for (int64_t j = 0; j < ncols; j++)
        for (int c = 0; c < K; c++) {
            double x = (double)sums[j * K + c] / scale;
            norm[c] += x * x;
        }
    for (int c = 0; c < K; c++)
        norm[c] = norm[c] > 0 ? 1.0 / sqrt(norm[c]) : 0;
    for (int64_t j = 0; j < ncols; j++)
        for (int c = 0; c < K; c++)
            if (count[c] > 0 && norm[c] > 0)
                ct[j * K + c] = (double)sums[j * K + c] / scale * norm[c];
    free(norm);
}

/*
 * The replicated vocabulary (-V MIB, issue 17's replicated-data variant):
 * a read-only table every rank holds in full, as text-clustering codes
 * hold a term dictionary with its IDF weights.  It is a hashed term space
 * of MIB MiB: entry i holds a 64-bit term id and a weight in [0.5, 1.5);
 * column j's term lives in entry mix(j) mod n.  Every rank builds the same
 * bytes from the seed (standing in for reading one dictionary file), so
 * the node holds as many identical copies as it has ranks: what storage
 * deduplication (-mem-dedup) and KSM (-mem-share) are for.  The values of
 * each row are scaled by their terms' weights before normalization (TF-IDF),
 * and at the end the top term of every cluster is printed, so the table is
 * used at the start and at the end, not inside the iterations.
 */
typedef struct {
    uint64_t term;
    float weight;
    uint32_t df; /* document frequency: not used by K-means */
} km_vocab_entry_t;

static inline uint64_t km_mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static inline size_t km_vocab_entries(int64_t mib)
{
    return (size_t)mib * (1u << 20) / sizeof(km_vocab_entry_t);
}

static inline void km_vocab_build(km_vocab_entry_t *tab, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t t = km_mix64(seed * 0xD1B54A32D192ED03ull ^ i);
        tab[i].term = t;
        tab[i].weight = (float)(0.5 + (double)(t >> 40) * 0x1p-24);
        tab[i].df = (uint32_t)(t & 0xffff);
    }
}

static inline const km_vocab_entry_t *km_vocab_of(const km_vocab_entry_t *tab, size_t n,
                                                  int64_t col)
{
    return &tab[km_mix64((uint64_t)col ^ 0xC01Dull) % n];
}

/* Scale the non-zeros of rows [0, nrows) by their terms' weights. */
static inline void km_vocab_weigh(const km_vocab_entry_t *tab, size_t n, int64_t nrows,
                                  const int64_t *rowptr, const int32_t *ci, float *val)
{
    for (int64_t e = rowptr[0]; e < rowptr[nrows]; e++)
        val[e] = (float)((double)val[e] * km_vocab_of(tab, n, ci[e])->weight);
}

/* "terms T1 ... TK": the term id, in hex, of each centroid's largest
 * coordinate (ties to the lower column). */
static inline void km_vocab_print_top(FILE *f, const km_vocab_entry_t *tab, size_t n, int K,
                                      int64_t ncols, const double *ct)
{
    fprintf(f, "terms");
    for (int c = 0; c < K; c++) {
        int64_t best = 0;
        for (int64_t j = 1; j < ncols; j++)
            if (ct[j * K + c] > ct[best * K + c])
                best = j;
        fprintf(f, " %016llx", (unsigned long long)km_vocab_of(tab, n, best)->term);
    }
    fprintf(f, "\n");
}

#endif
