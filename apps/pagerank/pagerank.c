/*
 * pagerank -- PageRank of a directed graph (BDMPICSR file, row i = out-edges
 * of vertex i), the paper's MPI benchmark.
 *
 *   pagerank [-i ITERS] [-t TOPK] [-d DIR] FILE
 *
 * 1-D row-wise decomposition balanced by non-zeros: each rank computes its
 * own row range and preads only its rows.  Push algorithm: every iteration a
 * rank adds pr[i]/outdeg(i) of its vertices into one slot per distinct
 * target vertex, the slots go to the targets' owners in one Alltoallv, and
 * the owners add them up.  Damping 0.85; the rank of dangling vertices
 * (no out-edges) is spread evenly over all vertices.
 *
 * Built with -DPR_OOC (pagerank_ooc.c) it becomes the explicit out-of-core
 * variant (-d DIR): around every blocking MPI call the rank writes its large
 * arrays to a spill file in DIR, frees them, and reads them back afterwards.
 *
 * Output (rank 0): one line per iteration with its time, then the checksum:
 * "sum S" (should be 1) and "top K vertex V rank R" lines.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "bdcsr.h"
#include "bdooc.h"
#include "prtop.h"

#define DAMPING 0.85

#ifdef PR_OOC
#define PROG "pagerank_ooc"
static bdooc_t g_ooc;
#include "bdooc_io.h"
#define OOC_OUT()                                                                                  \
    do {                                                                                           \
        IO_BEGIN();                                                                                \
        check(bdooc_unload(&g_ooc) == 0, "spill failed");                                          \
        IO_END();                                                                                  \
    } while (0)
#define OOC_IN()                                                                                   \
    do {                                                                                           \
        IO_BEGIN();                                                                                \
        check(bdooc_load(&g_ooc) == 0, "reload failed");                                           \
        IO_END();                                                                                  \
    } while (0)
#else
#define IO_BEGIN() ((void)0)
#define IO_END() ((void)0)
#define PROG "pagerank"
#define OOC_OUT() ((void)0)
#define OOC_IN() ((void)0)
#endif

static int g_rank;

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, PROG " [rank %d]: %s%s%s\n", g_rank, what, errno ? ": " : "",
                errno ? strerror(errno) : "");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void usage(void)
{
    if (g_rank == 0)
        fprintf(stderr, "usage: " PROG " [-i ITERS] [-t TOPK] [-d SPILLDIR] FILE\n");
    MPI_Finalize();
    exit(2);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int p;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);

    int iters = 10, topk = 10, c;
    const char *dir = NULL;
    while ((c = getopt(argc, argv, "i:t:d:")) != -1) {
        switch (c) {
        case 'i': iters = atoi(optarg); break;
        case 't': topk = atoi(optarg); break;
        case 'd': dir = optarg; break;
        default: usage();
        }
    }
    if (optind != argc - 1 || iters < 0 || topk < 1)
        usage();
    (void)dir;

    double t_start = MPI_Wtime();
    bdcsr_hdr_t h;
    char err[600];
    errno = 0;
    int fd = bdcsr_open(argv[optind], &h, err, sizeof err);
    check(fd >= 0, err);
    check(h.nrows == h.ncols, "the graph's matrix must be square");
    check(h.nrows < INT32_MAX, "more than 2^31-1 vertices");
    const int64_t n = h.nrows;

    /* My rows, and everyone's first row (for finding a vertex's owner). */
    int64_t r0 = bdcsr_part_start(fd, &h, p, g_rank), r1 = bdcsr_part_start(fd, &h, p, g_rank + 1);
    check(r0 >= 0 && r1 >= r0, "cannot read the row pointers");
    int64_t *bounds = bd_xmalloc((size_t)(p + 1) * sizeof *bounds, "bounds");
    MPI_Allgather(&r0, 1, MPI_INT64_T, bounds, 1, MPI_INT64_T, MPI_COMM_WORLD);
    bounds[p] = n;
    const int64_t nloc = r1 - r0;

    int64_t *rowptr = bd_xmalloc((size_t)(nloc + 1) * sizeof *rowptr, "rowptr");
    IO_BEGIN(); /* -ooc under BDMPI: one reader per node at a time */
    check(bdcsr_read_rowptr(fd, &h, r0, r1, rowptr) == 0, "cannot read the row pointers");
    const int64_t e0 = rowptr[0], lnnz = rowptr[nloc] - rowptr[0];
    for (int64_t i = 0; i <= nloc; i++)
        rowptr[i] -= e0;
    int32_t *colind = bd_xmalloc((size_t)lnnz * sizeof *colind, "colind");
    check(bdcsr_read_colind32(fd, &h, e0, e0 + lnnz, colind) == 0,
          "cannot read the column indices");
    close(fd);
    IO_END();

    /* Send plan: the distinct targets of my edges, in increasing order (so
     * grouped by owner), found with a bitmap over all vertices; each edge's
     * column index is then replaced by its target's slot. */
    int64_t nwords = (n + 63) / 64;
    uint64_t *bits = bd_xcalloc((size_t)nwords, sizeof *bits, "target bitmap");
    for (int64_t e = 0; e < lnnz; e++)
        bits[colind[e] >> 6] |= (uint64_t)1 << (colind[e] & 63);
    int64_t *wordslot = bd_xmalloc((size_t)nwords * sizeof *wordslot, "slot prefix");
    int64_t nslots = 0;
    for (int64_t w = 0; w < nwords; w++) {
        wordslot[w] = nslots;
        nslots += __builtin_popcountll(bits[w]);
    }
    check(nslots <= INT32_MAX, "too many distinct targets on one rank");
    for (int64_t e = 0; e < lnnz; e++) {
        int32_t j = colind[e];
        uint64_t below = bits[j >> 6] & (((uint64_t)1 << (j & 63)) - 1);
        colind[e] = (int32_t)(wordslot[j >> 6] + __builtin_popcountll(below));
    }
    int32_t *targets = bd_xmalloc((size_t)nslots * sizeof *targets, "targets");
    int *scount = bd_xcalloc((size_t)p, sizeof *scount, "counts"),
        *sdispl = bd_xcalloc((size_t)p, sizeof *sdispl, "displs");
    int *rcount = bd_xcalloc((size_t)p, sizeof *rcount, "counts"),
        *rdispl = bd_xcalloc((size_t)p, sizeof *rdispl, "displs");
    {
        int64_t k = 0;
        int owner = 0;
        for (int64_t w = 0; w < nwords; w++)
            for (uint64_t b = bits[w]; b; b &= b - 1) {
                int64_t j = w * 64 + __builtin_ctzll(b);
                while (j >= bounds[owner + 1])
                    owner++;
                targets[k++] = (int32_t)j;
                scount[owner]++;
            }
    }
    free(bits);
    free(wordslot);
    for (int q = 1; q < p; q++)
        sdispl[q] = sdispl[q - 1] + scount[q - 1];
#ifdef PR_OOC
    check(bdooc_open(&g_ooc, dir, PROG, g_rank) == 0, "cannot create the spill file");
    bdooc_add(&g_ooc, (void **)&rowptr, (size_t)(nloc + 1) * sizeof *rowptr, 1);
    bdooc_add(&g_ooc, (void **)&colind, (size_t)lnnz * sizeof *colind, 1);
#endif
    OOC_OUT();
    MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, MPI_COMM_WORLD);
    int64_t nrecv = 0;
    for (int q = 0; q < p; q++) {
        check(nrecv <= INT32_MAX, "too many incoming contributions");
        rdispl[q] = (int)nrecv;
        nrecv += rcount[q];
    }
    check(nrecv <= INT32_MAX, "too many incoming contributions");
    int32_t *recvidx = bd_xmalloc((size_t)nrecv * sizeof *recvidx, "receive index");
    MPI_Alltoallv(targets, scount, sdispl, MPI_INT32_T, recvidx, rcount, rdispl, MPI_INT32_T,
                  MPI_COMM_WORLD);
    free(targets);
    OOC_IN();
    for (int64_t k = 0; k < nrecv; k++)
        recvidx[k] -= (int32_t)r0;

    double *pr = bd_xmalloc((size_t)nloc * sizeof *pr, "pr");
    for (int64_t i = 0; i < nloc; i++)
        pr[i] = 1.0 / (double)n;
    double *sendbuf = NULL, *recvbuf = NULL, *acc = NULL;
#ifdef PR_OOC
    bdooc_add(&g_ooc, (void **)&recvidx, (size_t)nrecv * sizeof *recvidx, 1);
    bdooc_add(&g_ooc, (void **)&pr, (size_t)nloc * sizeof *pr, 0);
#else
    sendbuf = bd_xmalloc((size_t)nslots * sizeof *sendbuf, "send buffer");
    recvbuf = bd_xmalloc((size_t)nrecv * sizeof *recvbuf, "receive buffer");
    acc = bd_xmalloc((size_t)nloc * sizeof *acc, "accumulator");
#endif
    if (g_rank == 0)
        printf(PROG ": n=%lld nnz=%lld ranks=%d iters=%d setup %.3f s\n", (long long)n,
               (long long)h.nnz, p, iters, MPI_Wtime() - t_start);

    double t_iters = MPI_Wtime();
    for (int it = 1; it <= iters; it++) {
        double t0 = MPI_Wtime();
#ifdef PR_OOC
        sendbuf = bd_xmalloc((size_t)nslots * sizeof *sendbuf, "send buffer");
#endif
        /* push */
        memset(sendbuf, 0, (size_t)nslots * sizeof *sendbuf);
        double dangling = 0;
        for (int64_t i = 0; i < nloc; i++) {
            int64_t b = rowptr[i], e = rowptr[i + 1];
            if (b == e) {
                dangling += pr[i];
                continue;
            }
            double share = pr[i] / (double)(e - b);
            for (; b < e; b++)
                sendbuf[colind[b]] += share;
        }
        OOC_OUT();
        double gdangling;
        MPI_Allreduce(&dangling, &gdangling, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
#ifdef PR_OOC
        recvbuf = bd_xmalloc((size_t)nrecv * sizeof *recvbuf, "receive buffer");
#endif
        MPI_Alltoallv(sendbuf, scount, sdispl, MPI_DOUBLE, recvbuf, rcount, rdispl, MPI_DOUBLE,
                      MPI_COMM_WORLD);
#ifdef PR_OOC
        free(sendbuf);
        sendbuf = NULL;
#endif
        OOC_IN();
#ifdef PR_OOC
        acc = bd_xmalloc((size_t)nloc * sizeof *acc, "accumulator");
#endif
        /* add up the incoming contributions */
        memset(acc, 0, (size_t)nloc * sizeof *acc);
        for (int64_t k = 0; k < nrecv; k++)
            acc[recvidx[k]] += recvbuf[k];
        const double base = (1.0 - DAMPING) / (double)n + DAMPING * gdangling / (double)n;
        for (int64_t i = 0; i < nloc; i++)
            pr[i] = base + DAMPING * acc[i];
#ifdef PR_OOC
        free(recvbuf);
        free(acc);
        recvbuf = acc = NULL;
#endif
        if (g_rank == 0) {
            printf("iter %d time %.6f\n", it, MPI_Wtime() - t0);
            fflush(stdout);
        }
    }
    double t_end = MPI_Wtime();

    /* checksum: sum of the ranks and the top-k vertices */
    double lsum = 0, gsum = 0;
    for (int64_t i = 0; i < nloc; i++)
        lsum += pr[i];
    prtop_t top;
    prtop_init(&top, topk);
    for (int64_t i = 0; i < nloc; i++)
        prtop_offer(&top, r0 + i, pr[i]);
    OOC_OUT();
    MPI_Reduce(&lsum, &gsum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    double *allval =
        g_rank == 0 ? bd_xmalloc((size_t)topk * p * sizeof *allval, "top values") : NULL;
    int64_t *allid = g_rank == 0 ? bd_xmalloc((size_t)topk * p * sizeof *allid, "top ids") : NULL;
    MPI_Gather(top.val, topk, MPI_DOUBLE, allval, topk, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Gather(top.id, topk, MPI_INT64_T, allid, topk, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (g_rank == 0) {
        prtop_t best;
        prtop_init(&best, topk);
        for (int k = 0; k < topk * p; k++)
            if (allid[k] >= 0)
                prtop_offer(&best, allid[k], allval[k]);
        double it_avg = iters ? (t_end - t_iters) / iters : 0;
        printf("time total %.6f iterations %.6f per-iteration %.6f\n", MPI_Wtime() - t_start,
               t_end - t_iters, it_avg);
        printf("sum %.17g\n", gsum);
        for (int k = 0; k < best.n; k++)
            printf("top %d vertex %lld rank %.17g\n", k + 1, (long long)best.id[k], best.val[k]);
        prtop_free(&best);
        free(allval);
        free(allid);
    }
#ifdef PR_OOC
    if (g_rank == 0)
        printf("spill: wrote %llu bytes, read %llu bytes, %.3f s (rank 0)\n",
               (unsigned long long)g_ooc.bytes_written, (unsigned long long)g_ooc.bytes_read,
               g_ooc.io_seconds);
    bdooc_close(&g_ooc);
#endif
    prtop_free(&top);
    free(rowptr);
    free(colind);
    free(recvidx);
    free(pr);
    free(sendbuf);
    free(recvbuf);
    free(acc);
    free(bounds);
    free(scount);
    free(sdispl);
    free(rcount);
    free(rdispl);
    MPI_Finalize();
    return 0;
}
