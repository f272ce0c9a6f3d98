/*
 * kmeans_ref -- small in-memory serial spherical K-means used as the tests'
 * reference: the whole matrix in memory, one loop per iteration, built from
 * the same kmcommon.h pieces (initial centroids, fixed-point sums) that fix
 * the exact results every variant must reproduce.
 *
 *   kmeans_ref [-k K] [-i MAXITERS] [-s SEED] [-V MIB] FILE
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bdcsr.h"
#include "kmcommon.h"

int main(int argc, char **argv)
{
    int K = 8, maxit = 20, c;
    int64_t vocab_mib = 0;
    uint64_t seed = 1;
    while ((c = getopt(argc, argv, "k:i:s:V:")) != -1) {
        switch (c) {
        case 'k': K = atoi(optarg); break;
        case 'i': maxit = atoi(optarg); break;
        case 's': seed = strtoull(optarg, NULL, 0); break;
        case 'V': vocab_mib = atoll(optarg); break;
        default: optind = argc + 1;
        }
    }
    if (optind != argc - 1 || K < 1 || maxit < 0 || vocab_mib < 0) {
        fprintf(stderr, "usage: kmeans_ref [-k K] [-i MAXITERS] [-s SEED] [-V MIB] FILE\n");
        return 2;
    }
    bdcsr_hdr_t h;
    char err[600];
    int fd = bdcsr_open(argv[optind], &h, err, sizeof err);
    if (fd < 0) {
        fprintf(stderr, "kmeans_ref: %s\n", err);
        return 1;
    }
    int64_t n = h.nrows, ncols = h.ncols, m = h.nnz;
    int64_t *rp = bd_xmalloc((size_t)(n + 1) * 8, "rowptr");
    int32_t *ci = bd_xmalloc((size_t)m * 4, "colind");
    float *v = bd_xmalloc((size_t)m * 4, "values");
    size_t csize = (size_t)ncols * K;
    double *ct = bd_xmalloc(csize * 8, "centroids");
    int64_t *sums = bd_xmalloc(csize * 8, "sums");
    if (bdcsr_read_rowptr(fd, &h, 0, n, rp) < 0 || bdcsr_read_colind32(fd, &h, 0, m, ci) < 0 ||
        bdcsr_read_values(fd, &h, 0, m, v) < 0 || km_initial_centroids(fd, &h, K, seed, ct) < 0) {
        fprintf(stderr, "kmeans_ref: cannot read the matrix or pick the centroids\n");
        return 1;
    }
    close(fd);
    const size_t nvocab = km_vocab_entries(vocab_mib);
    km_vocab_entry_t *vocab = NULL;
    if (nvocab) {
        vocab = bd_xmalloc(nvocab * sizeof *vocab, "vocabulary");
        km_vocab_build(vocab, nvocab, seed);
        km_vocab_weigh(vocab, nvocab, n, rp, ci, v);
    }
    km_normalize_rows(n, rp, v);
    const double scale = ldexp(1.0, km_fraction_bits(n));
    int32_t *asg = bd_xmalloc((size_t)n * 4, "assignment");
    for (int64_t i = 0; i < n; i++)
        asg[i] = -1;
    double *sims = bd_xmalloc((size_t)K * 8, "sims");
    int64_t *count = bd_xcalloc((size_t)K, 8, "count");
    printf("kmeans_ref: rows=%lld cols=%lld nnz=%lld K=%d maxit=%d seed=%llu\n", (long long)n,
           (long long)ncols, (long long)m, K, maxit, (unsigned long long)seed);
    for (int it = 1; it <= maxit; it++) {
        memset(sums, 0, csize * 8);
        memset(count, 0, (size_t)K * 8);
        int64_t obj = 0, moved = 0;
        for (int64_t i = 0; i < n; i++) {
            double sim;
            int best = km_assign_row(K, ci + rp[i], v + rp[i], rp[i + 1] - rp[i], ct, sims, &sim);
            obj += km_fix(sim, scale);
            moved += asg[i] != best;
            asg[i] = best;
            count[best]++;
            km_accumulate(K, best, ci + rp[i], v + rp[i], rp[i + 1] - rp[i], sums, scale);
        }
        km_new_centroids(K, ncols, sums, count, scale, ct);
        printf("iter %d objective %.17g moved %lld\n", it, (double)obj / scale, (long long)moved);
        if (moved == 0)
            break;
    }
    printf("clusters");
    for (int k = 0; k < K; k++)
        printf(" %lld", (long long)count[k]);
    printf("\n");
    if (nvocab)
        km_vocab_print_top(stdout, vocab, nvocab, K, ncols, ct);
    free(vocab);
    free(rp);
    free(ci);
    free(v);
    free(ct);
    free(sums);
    free(asg);
    free(sims);
    free(count);
    return 0;
}
