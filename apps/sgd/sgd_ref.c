/*
 * sgd_ref -- small in-memory serial SGD used as the tests' reference: the
 * whole matrix and both factor matrices in memory; the blocks of a q x q
 * split are visited along the block diagonals, each block's rows in the
 * order of sgd_row_order (sgdcommon.h), filtering each full row to the
 * block's columns.  The per-iteration and final RMSE must match sgd.c on
 * q*q ranks exactly.
 *
 *   sgd_ref [-q Q] [-k RANK] [-i ITERS] [-l LEARNRATE] [-r REG] [-s SEED] FILE
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bdcsr.h"
#include "sgdcommon.h"

int main(int argc, char **argv)
{
    int q = 1, k = 10, iters = 5, c;
    float lr = 0.01f, reg = 0.05f;
    uint64_t seed = 1;
    while ((c = getopt(argc, argv, "q:k:i:l:r:s:")) != -1) {
        switch (c) {
        case 'q': q = atoi(optarg); break;
        case 'k': k = atoi(optarg); break;
        case 'i': iters = atoi(optarg); break;
        case 'l': lr = strtof(optarg, NULL); break;
        case 'r': reg = strtof(optarg, NULL); break;
        case 's': seed = strtoull(optarg, NULL, 0); break;
        default: optind = argc + 1;
        }
    }
    if (optind != argc - 1 || q < 1 || k < 1 || k > SGD_MAXK || iters < 0) {
        fprintf(
            stderr,
            "usage: sgd_ref [-q Q] [-k RANK] [-i ITERS] [-l LEARNRATE] [-r REG] [-s SEED] FILE\n");
        return 2;
    }
    bdcsr_hdr_t h;
    char err[600];
    int fd = bdcsr_open(argv[optind], &h, err, sizeof err);
    if (fd < 0) {
        fprintf(stderr, "sgd_ref: %s\n", err);
        return 1;
    }
    int64_t n = h.nrows, m = h.ncols, nnz = h.nnz;
    int64_t *rp = bd_xmalloc((size_t)(n + 1) * 8, "rowptr");
    int32_t *ci = bd_xmalloc((size_t)nnz * 4, "colind");
    float *v = bd_xmalloc((size_t)nnz * 4, "values");
    int64_t *rs = bd_xmalloc((size_t)(q + 1) * 8, "row blocks"),
            *cs = bd_xmalloc((size_t)(q + 1) * 8, "col blocks");
    for (int b = 0; b <= q; b++) {
        rs[b] = bdcsr_part_start(fd, &h, q, b);
        cs[b] = sgd_col_start(m, q, b);
    }
    if (bdcsr_read_rowptr(fd, &h, 0, n, rp) < 0 || bdcsr_read_colind32(fd, &h, 0, nnz, ci) < 0 ||
        bdcsr_read_values(fd, &h, 0, nnz, v) < 0) {
        fprintf(stderr, "sgd_ref: cannot read the matrix\n");
        return 1;
    }
    close(fd);
    float *U = bd_xmalloc((size_t)(n * k) * 4, "U"), *V = bd_xmalloc((size_t)(m * k) * 4, "V");
    for (int64_t i = 0; i < n; i++)
        sgd_init_factor(seed, 0, i, k, U + i * k);
    for (int64_t j = 0; j < m; j++)
        sgd_init_factor(seed, 1, j, k, V + j * k);
    int32_t *order = bd_xmalloc((size_t)n * 4, "order");
    double *sse = bd_xmalloc((size_t)q * q * 8, "block errors");
    printf(
        "sgd_ref: rows=%lld cols=%lld nnz=%lld blocks=%dx%d k=%d iters=%d lr=%g reg=%g seed=%llu\n",
        (long long)n, (long long)m, (long long)nnz, q, q, k, iters, (double)lr, (double)reg,
        (unsigned long long)seed);
    for (int it = 1; it <= iters + 1; it++) {
        int update = it <= iters;
        for (int s = 0; s < q; s++)
            for (int bi = 0; bi < q; bi++) {
                int bj = (bi + s) % q;
                int64_t nr = rs[bi + 1] - rs[bi];
                double acc = 0;
                if (update)
                    sgd_row_order(nr, seed, it, bi, bj, order);
                for (int64_t x = 0; x < nr; x++) {
                    int64_t i = rs[bi] + (update ? order[x] : x);
                    for (int64_t e = rp[i]; e < rp[i + 1]; e++) {
                        if (ci[e] < cs[bj] || ci[e] >= cs[bj + 1])
                            continue;
                        if (update)
                            acc += sgd_update(U + i * k, V + (int64_t)ci[e] * k, k, v[e], lr, reg);
                        else
                            acc += sgd_error(U + i * k, V + (int64_t)ci[e] * k, k, v[e]);
                    }
                }
                sse[bi * q + bj] = acc;
            }
        double tot = 0;
        for (int b = 0; b < q * q; b++)
            tot += sse[b];
        double rmse = nnz ? sqrt(tot / (double)nnz) : 0;
        if (update)
            printf("iter %d rmse %.17g\n", it, rmse);
        else
            printf("final rmse %.17g\n", rmse);
    }
    free(rp);
    free(ci);
    free(v);
    free(rs);
    free(cs);
    free(U);
    free(V);
    free(order);
    free(sse);
    return 0;
}
