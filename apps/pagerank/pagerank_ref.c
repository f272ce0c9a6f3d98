/*
 * pagerank_ref -- small in-memory serial PageRank used as the tests'
 * reference.  Deliberately the plainest formulation (pull over a transposed
 * copy of the graph, so it shares no loop with the other variants): loads the
 * whole graph, damping 0.85, dangling rank spread evenly.
 *
 *   pagerank_ref [-i ITERS] [-t TOPK] FILE
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bdcsr.h"
#include "prtop.h"

int main(int argc, char **argv)
{
    int iters = 10, topk = 10, c;
    while ((c = getopt(argc, argv, "i:t:")) != -1) {
        switch (c) {
        case 'i': iters = atoi(optarg); break;
        case 't': topk = atoi(optarg); break;
        default: optind = argc + 1;
        }
    }
    if (optind != argc - 1 || iters < 0 || topk < 1) {
        fprintf(stderr, "usage: pagerank_ref [-i ITERS] [-t TOPK] FILE\n");
        return 2;
    }
    bdcsr_hdr_t h;
    char err[600];
    int fd = bdcsr_open(argv[optind], &h, err, sizeof err);
    if (fd < 0 || h.nrows != h.ncols || h.nrows >= INT32_MAX) {
        fprintf(stderr, "pagerank_ref: %s\n",
                fd < 0 ? err : "need a square matrix under 2^31 rows");
        return 1;
    }
    int64_t n = h.nrows, m = h.nnz;
    int64_t *rp = bd_xmalloc((size_t)(n + 1) * 8, "rowptr");
    int32_t *ci = bd_xmalloc((size_t)m * 4, "colind");
    if (bdcsr_read_rowptr(fd, &h, 0, n, rp) < 0 || bdcsr_read_colind32(fd, &h, 0, m, ci) < 0) {
        fprintf(stderr, "pagerank_ref: read: %s\n", strerror(errno));
        return 1;
    }
    close(fd);
    /* transpose: in-edges of every vertex */
    int64_t *tp = bd_xcalloc((size_t)n + 1, 8, "transposed rowptr");
    int32_t *src = bd_xmalloc((size_t)m * 4, "transposed colind");
    for (int64_t e = 0; e < m; e++)
        tp[ci[e] + 1]++;
    for (int64_t i = 0; i < n; i++)
        tp[i + 1] += tp[i];
    int64_t *fill = bd_xmalloc((size_t)n * 8, "fill");
    memcpy(fill, tp, (size_t)n * 8);
    for (int64_t i = 0; i < n; i++)
        for (int64_t e = rp[i]; e < rp[i + 1]; e++)
            src[fill[ci[e]]++] = (int32_t)i;
    free(fill);
    double *pr = bd_xmalloc((size_t)n * 8, "pr"), *next = bd_xmalloc((size_t)n * 8, "next");
    for (int64_t i = 0; i < n; i++)
        pr[i] = 1.0 / (double)n;
    for (int it = 1; it <= iters; it++) {
        double dangling = 0;
        for (int64_t i = 0; i < n; i++)
            if (rp[i + 1] == rp[i])
                dangling += pr[i];
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t e = tp[j]; e < tp[j + 1]; e++)
                s += pr[src[e]] / (double)(rp[src[e] + 1] - rp[src[e]]);
            next[j] = 0.15 / (double)n + 0.85 * (s + dangling / (double)n);
        }
        double *t = pr;
        pr = next;
        next = t;
        printf("iter %d\n", it);
    }
    double sum = 0;
    prtop_t top;
    prtop_init(&top, topk);
    for (int64_t i = 0; i < n; i++) {
        sum += pr[i];
        prtop_offer(&top, i, pr[i]);
    }
    printf("pagerank_ref: n=%lld nnz=%lld iters=%d\n", (long long)n, (long long)m, iters);
    printf("sum %.17g\n", sum);
    for (int k = 0; k < top.n; k++)
        printf("top %d vertex %lld rank %.17g\n", k + 1, (long long)top.id[k], top.val[k]);
    prtop_free(&top);
    free(rp);
    free(ci);
    free(tp);
    free(src);
    free(pr);
    free(next);
    return 0;
}
