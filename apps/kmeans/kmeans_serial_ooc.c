/*
 * kmeans_serial_ooc -- serial out-of-core spherical K-means (the paper's
 * Serial-ooc): the current centroids and the next centroids' sums stay in
 * memory; the matrix is streamed from the file in chunks of whole rows that
 * fit the -m budget, and the row-to-cluster assignment vector lives in a
 * file in -d DIR (default $TMPDIR): each chunk's part is read before the
 * chunk is processed and written back after.  Same algorithm and output as
 * kmeans.c (kmcommon.h), so the numbers match it exactly.
 *
 *   kmeans_serial_ooc [-k K] [-i MAXITERS] [-s SEED] [-m BUDGET] [-d DIR] FILE
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bdcsr.h"
#include "kmcommon.h"

static void die(const char *what)
{
    fprintf(stderr, "kmeans_serial_ooc: %s%s%s\n", what, errno ? ": " : "",
            errno ? strerror(errno) : "");
    exit(1);
}

int main(int argc, char **argv)
{
    int K = 8, maxit = 20, c;
    uint64_t seed = 1;
    int64_t budget = 64 << 20;
    const char *dir = NULL;
    while ((c = getopt(argc, argv, "k:i:s:m:d:")) != -1) {
        switch (c) {
        case 'k': K = atoi(optarg); break;
        case 'i': maxit = atoi(optarg); break;
        case 's': seed = strtoull(optarg, NULL, 0); break;
        case 'm': budget = bd_parse_size(optarg); break;
        case 'd': dir = optarg; break;
        default: optind = argc + 1;
        }
    }
    if (optind != argc - 1 || K < 1 || maxit < 0 || budget < 64) {
        fprintf(
            stderr,
            "usage: kmeans_serial_ooc [-k K] [-i MAXITERS] [-s SEED] [-m BUDGET] [-d DIR] FILE\n");
        return 2;
    }
    if (!dir || !*dir)
        dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    double t_start = bd_now();
    bdcsr_hdr_t h;
    char err[600];
    errno = 0;
    int fd = bdcsr_open(argv[optind], &h, err, sizeof err);
    if (fd < 0)
        die(err);
    if (h.ncols >= INT32_MAX)
        die("too many columns");
    const int64_t n = h.nrows, ncols = h.ncols;
    const double scale = ldexp(1.0, km_fraction_bits(n));
    const size_t csize = (size_t)ncols * K;
    double *ct = bd_xmalloc(csize * sizeof *ct, "centroids");
    int64_t *sums = bd_xmalloc(csize * sizeof *sums, "centroid sums");
    double *sims = bd_xmalloc((size_t)K * sizeof *sims, "similarities");
    int64_t *count = bd_xmalloc((size_t)K * sizeof *count, "cluster sizes");
    errno = 0;
    if (km_initial_centroids(fd, &h, K, seed, ct) < 0)
        die("cannot pick K distinct non-empty rows");

    /* the budget: a quarter for rows (row pointer + assignment), the rest
     * for non-zeros (index + value); a row longer than that grows it */
    int64_t rcap = budget / 4 / 12, ccap = budget * 3 / 4 / 8;
    if (rcap < 1)
        rcap = 1;
    if (ccap < 1)
        ccap = 1;
    int64_t *rp = bd_xmalloc((size_t)(rcap + 1) * 8, "row pointer chunk");
    int32_t *asg = bd_xmalloc((size_t)rcap * 4, "assignment chunk");
    int32_t *col = bd_xmalloc((size_t)ccap * 4, "column chunk");
    float *val = bd_xmalloc((size_t)ccap * 4, "value chunk");

    char path[4096];
    snprintf(path, sizeof path, "%s/kmeans_serial_ooc.assign.XXXXXX", dir);
    int afd = mkstemp(path);
    if (afd < 0)
        die("cannot create the assignment file");
    unlink(path);
    for (int64_t i = 0; i < rcap; i++)
        asg[i] = -1;
    for (int64_t a = 0; a < n; a += rcap) {
        int64_t b = a + rcap < n ? a + rcap : n;
        if (bd_pwrite_full(afd, asg, (size_t)(b - a) * 4, a * 4) < 0)
            die("cannot write the assignment file");
    }
    printf("kmeans_serial_ooc: rows=%lld cols=%lld nnz=%lld K=%d maxit=%d seed=%llu budget=%lld\n",
           (long long)n, (long long)ncols, (long long)h.nnz, K, maxit, (unsigned long long)seed,
           (long long)budget);

    double t_iters = bd_now();
    int it;
    int64_t moved = 0;
    for (it = 1; it <= maxit; it++) {
        double t0 = bd_now();
        memset(sums, 0, csize * sizeof *sums);
        memset(count, 0, (size_t)K * sizeof *count);
        int64_t obj = 0;
        moved = 0;
        for (int64_t a = 0; a < n;) {
            int64_t b = a + rcap < n ? a + rcap : n;
            if (bdcsr_read_rowptr(fd, &h, a, b, rp) < 0)
                die("cannot read the row pointers");
            /* whole rows whose non-zeros fit the chunk (at least one row) */
            while (b > a + 1 && rp[b - a] - rp[0] > ccap)
                b--;
            int64_t nz = rp[b - a] - rp[0];
            if (nz > ccap) {
                ccap = nz;
                col = realloc(col, (size_t)ccap * 4);
                val = realloc(val, (size_t)ccap * 4);
                if (!col || !val)
                    die("out of memory");
            }
            if (bdcsr_read_colind32(fd, &h, rp[0], rp[b - a], col) < 0 ||
                bdcsr_read_values(fd, &h, rp[0], rp[b - a], val) < 0 ||
                bd_pread_full(afd, asg, (size_t)(b - a) * 4, a * 4) < 0)
                die("read failed");
            int64_t base = rp[0];
            for (int64_t i = 0; i <= b - a; i++)
                rp[i] -= base;
            km_normalize_rows(b - a, rp, val);
            for (int64_t i = 0; i < b - a; i++) {
                int64_t s = rp[i], len = rp[i + 1] - s;
                double sim;
                int best = km_assign_row(K, col + s, val + s, len, ct, sims, &sim);
                obj += km_fix(sim, scale);
                moved += asg[i] != best;
                count[best]++;
                asg[i] = best;
                km_accumulate(K, best, col + s, val + s, len, sums, scale);
            }
            if (bd_pwrite_full(afd, asg, (size_t)(b - a) * 4, a * 4) < 0)
                die("cannot write the assignment file");
            a = b;
        }
        km_new_centroids(K, ncols, sums, count, scale, ct);
        printf("iter %d objective %.17g moved %lld time %.6f\n", it, (double)obj / scale,
               (long long)moved, bd_now() - t0);
        fflush(stdout);
        if (moved == 0)
            break;
    }
    double t_end = bd_now();
    int done = it > maxit ? maxit : it;
    printf("time total %.6f iterations %.6f per-iteration %.6f\n", bd_now() - t_start,
           t_end - t_iters, done ? (t_end - t_iters) / done : 0);
    printf("clusters");
    for (int k = 0; k < K; k++)
        printf(" %lld", maxit ? (long long)count[k] : 0LL);
    printf("\n");
    close(afd);
    close(fd);
    free(ct);
    free(sums);
    free(sims);
    free(count);
    free(rp);
    free(asg);
    free(col);
    free(val);
    return 0;
}
