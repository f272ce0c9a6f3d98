/*
 * pagerank_serial_ooc -- serial out-of-core PageRank (the paper's
 * Serial-ooc): the two rank vectors stay in memory, the graph is streamed
 * from the file in chunks that fit the -m budget (row pointers and column
 * indices; a row longer than a chunk is handled piecewise).  Same
 * algorithm and output format as pagerank.c.
 *
 *   pagerank_serial_ooc [-i ITERS] [-t TOPK] [-m BUDGET] [-d DIR] FILE
 *
 * BUDGET (default 64M) bounds the graph buffers; the two vectors of
 * 8*nrows bytes each come on top.  -d is accepted (for a uniform command line
 * across the apps) and ignored: nothing is written.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bdcsr.h"
#include "prtop.h"

#define DAMPING 0.85

static void die(const char *what)
{
    fprintf(stderr, "pagerank_serial_ooc: %s%s%s\n", what, errno ? ": " : "",
            errno ? strerror(errno) : "");
    exit(1);
}

int main(int argc, char **argv)
{
    int iters = 10, topk = 10, c;
    int64_t budget = 64 << 20;
    while ((c = getopt(argc, argv, "i:t:m:d:")) != -1) {
        switch (c) {
        case 'i': iters = atoi(optarg); break;
        case 't': topk = atoi(optarg); break;
        case 'm': budget = bd_parse_size(optarg); break;
        case 'd': break; /* accepted for symmetry with the other apps: nothing to spill */
        default: optind = argc + 1;
        }
    }
    if (optind != argc - 1 || iters < 0 || topk < 1 || budget < 64) {
        fprintf(stderr, "usage: pagerank_serial_ooc [-i ITERS] [-t TOPK] [-m BUDGET] FILE\n");
        return 2;
    }
    double t_start = bd_now();
    bdcsr_hdr_t h;
    char err[600];
    errno = 0;
    int fd = bdcsr_open(argv[optind], &h, err, sizeof err);
    if (fd < 0)
        die(err);
    if (h.nrows != h.ncols || h.nrows >= INT32_MAX)
        die("the graph's matrix must be square with fewer than 2^31 vertices");
    const int64_t n = h.nrows;

    /* a quarter of the budget for row pointers, the rest for column indices */
    int64_t rcap = budget / 4 / 8 - 1, ccap = budget * 3 / 4 / 4;
    if (rcap < 1)
        rcap = 1;
    if (ccap < 1)
        ccap = 1;
    int64_t *rp = bd_xmalloc((size_t)(rcap + 1) * 8, "row pointer chunk");
    int32_t *col = bd_xmalloc((size_t)ccap * 4, "column chunk");
    double *pr = bd_xmalloc((size_t)n * 8, "pr"), *next = bd_xmalloc((size_t)n * 8, "next");
    for (int64_t i = 0; i < n; i++)
        pr[i] = 1.0 / (double)n;
    printf("pagerank_serial_ooc: n=%lld nnz=%lld budget=%lld iters=%d\n", (long long)n,
           (long long)h.nnz, (long long)budget, iters);

    double t_iters = bd_now();
    for (int it = 1; it <= iters; it++) {
        double t0 = bd_now();
        memset(next, 0, (size_t)n * 8);
        double dangling = 0;
        for (int64_t a = 0; a < n; a += rcap) {
            int64_t b = a + rcap < n ? a + rcap : n;
            if (bdcsr_read_rowptr(fd, &h, a, b, rp) < 0)
                die("cannot read the row pointers");
            for (int64_t i = a; i < b; i++)
                if (rp[i - a + 1] == rp[i - a])
                    dangling += pr[i];
            int64_t row = a;
            for (int64_t c0 = rp[0]; c0 < rp[b - a]; c0 += ccap) {
                int64_t c1 = c0 + ccap < rp[b - a] ? c0 + ccap : rp[b - a];
                if (bdcsr_read_colind32(fd, &h, c0, c1, col) < 0)
                    die("cannot read the column indices");
                for (int64_t e = c0; e < c1;) {
                    while (rp[row - a + 1] <= e)
                        row++;
                    int64_t end = rp[row - a + 1] < c1 ? rp[row - a + 1] : c1;
                    double share = pr[row] / (double)(rp[row - a + 1] - rp[row - a]);
                    for (; e < end; e++)
                        next[col[e - c0]] += share;
                }
            }
        }
        const double base = (1.0 - DAMPING) / (double)n + DAMPING * dangling / (double)n;
        for (int64_t i = 0; i < n; i++)
            pr[i] = base + DAMPING * next[i];
        printf("iter %d time %.6f\n", it, bd_now() - t0);
        fflush(stdout);
    }
    double t_end = bd_now();
    double sum = 0;
    prtop_t top;
    prtop_init(&top, topk);
    for (int64_t i = 0; i < n; i++) {
        sum += pr[i];
        prtop_offer(&top, i, pr[i]);
    }
    printf("time total %.6f iterations %.6f per-iteration %.6f\n", bd_now() - t_start,
           t_end - t_iters, iters ? (t_end - t_iters) / iters : 0);
    printf("sum %.17g\n", sum);
    for (int k = 0; k < top.n; k++)
        printf("top %d vertex %lld rank %.17g\n", k + 1, (long long)top.id[k], top.val[k]);
    prtop_free(&top);
    free(rp);
    free(col);
    free(pr);
    free(next);
    close(fd);
    return 0;
}
