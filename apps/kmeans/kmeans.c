/*
 * kmeans -- spherical K-means of the rows of a sparse matrix (BDMPICSR with
 * float values; rows are scaled to unit length on load), the paper's MPI
 * benchmark.
 *
 *   kmeans [-k K] [-i MAXITERS] [-s SEED] [-V MIB] [-d DIR] FILE
 *
 * Rows are split among the ranks as in pagerank (balanced by non-zeros,
 * each rank preads its own rows).  Rank 0 picks K distinct rows as the
 * initial centroids (seeded).  Every iteration: rank 0 broadcasts the K
 * centroids; each rank assigns its rows to the most similar centroid
 * (cosine similarity) and adds them into per-cluster sums; the sums are
 * reduced to rank 0 and the objective, number of moved rows and cluster
 * sizes are all-reduced; rank 0 scales the sums to unit length to get the
 * next centroids.  Stops when no row moves or after MAXITERS iterations.
 * Sums are exact (64-bit fixed point, see kmcommon.h), so every variant and
 * every rank count prints the same numbers.
 *
 * Built with -DKM_OOC (kmeans_ooc.c) it becomes the explicit out-of-core
 * variant: around every blocking MPI call the rank writes its rows and
 * assignment vector to a spill file in -d DIR and frees them (and drops its
 * copy of the centroids, which the next broadcast brings back).
 *
 * -V MIB: every rank also holds the same MIB MiB vocabulary (kmcommon.h),
 * weighs its rows' values by it before normalizing and rank 0 prints each
 * cluster's top term at the end: the replicated-data variant.  The
 * out-of-core variant frees its copy after the setup and rank 0 rebuilds
 * it at the end, as a hand-written code would.
 *
 * Output (rank 0): "iter T objective X moved M time S" per iteration, then
 * "clusters N1 ... NK" (final sizes).
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
#include "kmcommon.h"

#ifdef KM_OOC
#define PROG "kmeans_ooc"
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
#define PROG "kmeans"
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
        fprintf(stderr,
                "usage: " PROG " [-k K] [-i MAXITERS] [-s SEED] [-V MIB] [-d SPILLDIR] FILE\n");
    MPI_Finalize();
    exit(2);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int p;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);

    int K = 8, maxit = 20, c;
    int64_t vocab_mib = 0;
    uint64_t seed = 1;
    const char *dir = NULL;
    while ((c = getopt(argc, argv, "k:i:s:V:d:")) != -1) {
        switch (c) {
        case 'k': K = atoi(optarg); break;
        case 'i': maxit = atoi(optarg); break;
        case 's': seed = strtoull(optarg, NULL, 0); break;
        case 'd': dir = optarg; break;
        case 'V': vocab_mib = atoll(optarg); break;
        default: usage();
        }
    }
    if (optind != argc - 1 || K < 1 || maxit < 0 || vocab_mib < 0)
        usage();
    (void)dir;

    double t_start = MPI_Wtime();
    bdcsr_hdr_t h;
    char err[600];
    errno = 0;
    int fd = bdcsr_open(argv[optind], &h, err, sizeof err);
    check(fd >= 0, err);
    check(h.ncols < INT32_MAX, "too many columns");
    const int64_t ncols = h.ncols;
    const double scale = ldexp(1.0, km_fraction_bits(h.nrows));
    const size_t csize = (size_t)ncols * K; /* centroid array entries */
    check(csize <= INT32_MAX, "K x columns too large for one message");

    int64_t r0 = bdcsr_part_start(fd, &h, p, g_rank), r1 = bdcsr_part_start(fd, &h, p, g_rank + 1);
    check(r0 >= 0 && r1 >= r0, "cannot read the row pointers");
    const int64_t nloc = r1 - r0;
    int64_t *rowptr = bd_xmalloc((size_t)(nloc + 1) * sizeof *rowptr, "rowptr");
    IO_BEGIN(); /* -ooc under BDMPI: one reader per node at a time */
    check(bdcsr_read_rowptr(fd, &h, r0, r1, rowptr) == 0, "cannot read the row pointers");
    const int64_t e0 = rowptr[0], lnnz = rowptr[nloc] - e0;
    for (int64_t i = 0; i <= nloc; i++)
        rowptr[i] -= e0;
    int32_t *colind = bd_xmalloc((size_t)lnnz * sizeof *colind, "colind");
    float *val = bd_xmalloc((size_t)lnnz * sizeof *val, "values");
    check(bdcsr_read_colind32(fd, &h, e0, e0 + lnnz, colind) == 0,
          "cannot read the column indices");
    check(bdcsr_read_values(fd, &h, e0, e0 + lnnz, val) == 0, "cannot read the values");
    const size_t nvocab = km_vocab_entries(vocab_mib);
    km_vocab_entry_t *vocab = NULL;
    if (nvocab) {
        vocab = bd_xmalloc(nvocab * sizeof *vocab, "vocabulary");
        km_vocab_build(vocab, nvocab, seed);
        km_vocab_weigh(vocab, nvocab, nloc, rowptr, colind, val);
#ifdef KM_OOC
        free(vocab);
        vocab = NULL;
#endif
    }
    km_normalize_rows(nloc, rowptr, val);
    int32_t *assign = bd_xmalloc((size_t)nloc * sizeof *assign, "assignment");
    for (int64_t i = 0; i < nloc; i++)
        assign[i] = -1;

    double *ct = NULL; /* centroids, ncols x K */
    int64_t *sums = NULL;
    if (g_rank == 0) {
        ct = bd_xmalloc(csize * sizeof *ct, "centroids");
        check(km_initial_centroids(fd, &h, K, seed, ct) == 0,
              "cannot pick K distinct non-empty rows");
    }
    close(fd);
    IO_END();
#ifdef KM_OOC
    check(bdooc_open(&g_ooc, dir, PROG, g_rank) == 0, "cannot create the spill file");
    bdooc_add(&g_ooc, (void **)&rowptr, (size_t)(nloc + 1) * sizeof *rowptr, 1);
    bdooc_add(&g_ooc, (void **)&colind, (size_t)lnnz * sizeof *colind, 1);
    bdooc_add(&g_ooc, (void **)&val, (size_t)lnnz * sizeof *val, 1);
    bdooc_add(&g_ooc, (void **)&assign, (size_t)nloc * sizeof *assign, 0);
    /* rank 0 keeps its centroids: it is the root of every broadcast */
#else
    if (g_rank != 0)
        ct = bd_xmalloc(csize * sizeof *ct, "centroids");
    sums = bd_xmalloc(csize * sizeof *sums, "centroid sums");
#endif
    double *sims = bd_xmalloc((size_t)K * sizeof *sims, "similarities");
    /* small[0] objective, small[1] moved rows, small[2..] cluster sizes */
    int64_t *small = bd_xmalloc((size_t)(K + 2) * sizeof *small, "counters");
    int64_t *gsmall = bd_xmalloc((size_t)(K + 2) * sizeof *gsmall, "counters");
    if (g_rank == 0)
        printf(PROG
               ": rows=%lld cols=%lld nnz=%lld ranks=%d K=%d maxit=%d seed=%llu setup %.3f s\n",
               (long long)h.nrows, (long long)ncols, (long long)h.nnz, p, K, maxit,
               (unsigned long long)seed, MPI_Wtime() - t_start);

    double t_iters = MPI_Wtime();
    int it;
    for (it = 1; it <= maxit; it++) {
        double t0 = MPI_Wtime();
        OOC_OUT();
#ifdef KM_OOC
        if (g_rank != 0)
            ct = bd_xmalloc(csize * sizeof *ct, "centroids");
#endif
        MPI_Bcast(ct, (int)csize, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        OOC_IN();
#ifdef KM_OOC
        sums = bd_xmalloc(csize * sizeof *sums, "centroid sums");
#endif
        memset(sums, 0, csize * sizeof *sums);
        memset(small, 0, (size_t)(K + 2) * sizeof *small);
        for (int64_t i = 0; i < nloc; i++) {
            int64_t b = rowptr[i], len = rowptr[i + 1] - b;
            double sim;
            int best = km_assign_row(K, colind + b, val + b, len, ct, sims, &sim);
            small[0] += km_fix(sim, scale);
            small[1] += assign[i] != best;
            small[2 + best]++;
            assign[i] = best;
            km_accumulate(K, best, colind + b, val + b, len, sums, scale);
        }
#ifdef KM_OOC
        if (g_rank != 0) { /* the next broadcast brings the centroids back */
            free(ct);
            ct = NULL;
        }
#endif
        OOC_OUT();
        MPI_Reduce(g_rank == 0 ? MPI_IN_PLACE : sums, sums, (int)csize, MPI_INT64_T, MPI_SUM, 0,
                   MPI_COMM_WORLD);
        MPI_Allreduce(small, gsmall, K + 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
        /* the rows stay out through the next broadcast */
        if (g_rank == 0) {
            km_new_centroids(K, ncols, sums, gsmall + 2, scale, ct);
            printf("iter %d objective %.17g moved %lld time %.6f\n", it, (double)gsmall[0] / scale,
                   (long long)gsmall[1], MPI_Wtime() - t0);
            fflush(stdout);
        }
#ifdef KM_OOC
        free(sums);
        sums = NULL;
#endif
        if (gsmall[1] == 0)
            break;
    }
    double t_end = MPI_Wtime();
    if (g_rank == 0) {
        int done = it > maxit ? maxit : it;
        printf("time total %.6f iterations %.6f per-iteration %.6f\n", MPI_Wtime() - t_start,
               t_end - t_iters, done ? (t_end - t_iters) / done : 0);
        printf("clusters");
        for (int k = 0; k < K; k++)
            printf(" %lld", maxit ? (long long)gsmall[2 + k] : 0LL);
        printf("\n");
        if (nvocab) {
#ifdef KM_OOC
            vocab = bd_xmalloc(nvocab * sizeof *vocab, "vocabulary");
            km_vocab_build(vocab, nvocab, seed);
#endif
            km_vocab_print_top(stdout, vocab, nvocab, K, ncols, ct);
        }
#ifdef KM_OOC
        printf("spill: wrote %llu bytes, read %llu bytes, %.3f s (rank 0)\n",
               (unsigned long long)g_ooc.bytes_written, (unsigned long long)g_ooc.bytes_read,
               g_ooc.io_seconds);
#endif
    }
#ifdef KM_OOC
    bdooc_close(&g_ooc);
#endif
    free(rowptr);
    free(colind);
    free(val);
    free(assign);
    free(ct);
    free(sums);
    free(sims);
    free(small);
    free(gsmall);
    free(vocab);
    MPI_Finalize();
    return 0;
}
