/*
 * sgd -- matrix factorization R ~ U V^T by stochastic gradient descent
 * (BDMPICSR rating matrix, users = rows, items = columns), the paper's MPI
 * benchmark, parallelized as in Gemulla et al.:
 *
 *   sgd [-k RANK] [-i ITERS] [-l LEARNRATE] [-r REG] [-s SEED] [-d DIR] FILE
 *
 * p = q*q ranks (p must be a perfect square); rank bi*q+bj holds block
 * (bi, bj) of R (see sgdcommon.h for the split), read with pread.  The
 * factor segment U_bi travels along block row bi and V_bj along block
 * column bj: an iteration has q steps and in step s the ranks of block
 * diagonal s (bj = bi + s mod q) receive U_bi from their left neighbour and
 * V_bj from the neighbour below, run SGD over their block, and pass them on
 * to the right and upwards.  At any time only q ranks compute -- fine under
 * BDMPI, where the waiting ranks are simply not scheduled.  After every
 * iteration rank 0 gathers the blocks' squared errors and prints the
 * training RMSE (errors taken during the sweep, just before each update);
 * after the last one a sweep without updates gives the "final rmse".
 *
 * Built with -DSGD_OOC (sgd_ooc.c) it becomes the explicit out-of-core
 * variant: around every blocking MPI call the rank writes its block of R
 * (and U, V if it keeps them) to a spill file in -d DIR and frees them.
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
#include "sgdcommon.h"

#ifdef SGD_OOC
#define PROG "sgd_ooc"
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
#define PROG "sgd"
#define OOC_OUT() ((void)0)
#define OOC_IN() ((void)0)
#endif

enum { TAG_U = 11, TAG_V = 12 };

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
                "usage: " PROG
                " [-k RANK] [-i ITERS] [-l LEARNRATE] [-r REG] [-s SEED] [-d SPILLDIR] FILE\n");
    MPI_Finalize();
    exit(2);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int p;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);

    int k = 10, iters = 5, c;
    float lr = 0.01f, reg = 0.05f;
    uint64_t seed = 1;
    const char *dir = NULL;
    while ((c = getopt(argc, argv, "k:i:l:r:s:d:")) != -1) {
        switch (c) {
        case 'k': k = atoi(optarg); break;
        case 'i': iters = atoi(optarg); break;
        case 'l': lr = strtof(optarg, NULL); break;
        case 'r': reg = strtof(optarg, NULL); break;
        case 's': seed = strtoull(optarg, NULL, 0); break;
        case 'd': dir = optarg; break;
        default: usage();
        }
    }
    if (optind != argc - 1 || k < 1 || k > SGD_MAXK || iters < 0)
        usage();
    (void)dir;
    int q = 1;
    while ((q + 1) * (q + 1) <= p)
        q++;
    if (q * q != p) {
        if (g_rank == 0)
            fprintf(stderr, PROG ": the number of ranks (%d) must be a perfect square\n", p);
        MPI_Finalize();
        return 2;
    }
    const int bi = g_rank / q, bj = g_rank % q;
    const int left = bi * q + (bj + q - 1) % q, right = bi * q + (bj + 1) % q;
    const int below = ((bi + 1) % q) * q + bj, above = ((bi + q - 1) % q) * q + bj;
    const int mystep = (bj - bi + q) % q;

    double t_start = MPI_Wtime();
    bdcsr_hdr_t h;
    char err[600];
    errno = 0;
    int fd = bdcsr_open(argv[optind], &h, err, sizeof err);
    check(fd >= 0, err);
    check(h.ncols < INT32_MAX && h.nrows < INT32_MAX, "matrix too large");
    const int64_t r0 = bdcsr_part_start(fd, &h, q, bi), r1 = bdcsr_part_start(fd, &h, q, bi + 1);
    const int64_t c0 = sgd_col_start(h.ncols, q, bj), c1 = sgd_col_start(h.ncols, q, bj + 1);
    check(r0 >= 0 && r1 >= r0, "cannot read the row pointers");
    const int64_t nr = r1 - r0, nc = c1 - c0;
    check(nr * k <= INT32_MAX && nc * k <= INT32_MAX, "factor segment too large for one message");
    int64_t *rp = NULL, lnnz = 0;
    int32_t *ci = NULL;
    float *val = NULL;
    IO_BEGIN(); /* -ooc under BDMPI: one reader per node at a time */
    check(sgd_load_block(fd, &h, r0, r1, c0, c1, 1 << 18, &rp, &ci, &val, &lnnz) == 0,
          "cannot read my block");
    close(fd);
    IO_END();
    int32_t *order = bd_xmalloc((size_t)nr * sizeof *order, "row order");
    float *U = NULL, *V = NULL;
    const size_t ubytes = (size_t)(nr * k) * sizeof(float),
                 vbytes = (size_t)(nc * k) * sizeof(float);
    if (mystep == 0) { /* the diagonal ranks create the factor segments */
        U = bd_xmalloc(ubytes, "U");
        V = bd_xmalloc(vbytes, "V");
        for (int64_t i = 0; i < nr; i++)
            sgd_init_factor(seed, 0, r0 + i, k, U + i * k);
        for (int64_t j = 0; j < nc; j++)
            sgd_init_factor(seed, 1, c0 + j, k, V + j * k);
    }
#ifdef SGD_OOC
    check(bdooc_open(&g_ooc, dir, PROG, g_rank) == 0, "cannot create the spill file");
    bdooc_add(&g_ooc, (void **)&rp, (size_t)(nr + 1) * sizeof *rp, 1);
    bdooc_add(&g_ooc, (void **)&ci, (size_t)lnnz * sizeof *ci, 1);
    bdooc_add(&g_ooc, (void **)&val, (size_t)lnnz * sizeof *val, 1);
    bdooc_add(&g_ooc, (void **)&order, (size_t)nr * sizeof *order, 0);
    if (q == 1) { /* nobody to pass them to: they stay with me */
        bdooc_add(&g_ooc, (void **)&U, ubytes, 0);
        bdooc_add(&g_ooc, (void **)&V, vbytes, 0);
    }
#endif
    double *allsse = g_rank == 0 ? bd_xmalloc((size_t)p * sizeof *allsse, "errors") : NULL;
    if (g_rank == 0)
        printf(PROG ": rows=%lld cols=%lld nnz=%lld ranks=%d (%dx%d) k=%d iters=%d lr=%g reg=%g "
                    "seed=%llu setup %.3f s\n",
               (long long)h.nrows, (long long)h.ncols, (long long)h.nnz, p, q, q, k, iters,
               (double)lr, (double)reg, (unsigned long long)seed, MPI_Wtime() - t_start);

    double t_iters = MPI_Wtime(), t_final = 0;
    /* rounds 1..iters update; round iters+1 only measures the error */
    for (int it = 1; it <= iters + 1; it++) {
        const int update = it <= iters;
        double t0 = MPI_Wtime();
        if (q > 1 && !(it == 1 && mystep == 0)) {
            OOC_OUT();
            U = bd_xmalloc(ubytes, "U");
            V = bd_xmalloc(vbytes, "V");
            MPI_Request rq[2];
            MPI_Status st[2];
            MPI_Irecv(U, (int)(nr * k), MPI_FLOAT, left, TAG_U, MPI_COMM_WORLD, &rq[0]);
            MPI_Irecv(V, (int)(nc * k), MPI_FLOAT, below, TAG_V, MPI_COMM_WORLD, &rq[1]);
            MPI_Waitall(2, rq, st);
        }
        OOC_IN(); /* my block (if it was spilled) */
        double sse = sgd_block(nr, rp, ci, val, U, V, k, lr, reg, update, seed, it, bi, bj, order);
        MPI_Request sq[2];
        MPI_Status st[2];
        /* pass U and V on, except after the last step of the final sweep */
        int sending = q > 1 && (update || mystep < q - 1);
        if (sending) {
            MPI_Isend(U, (int)(nr * k), MPI_FLOAT, right, TAG_U, MPI_COMM_WORLD, &sq[0]);
            MPI_Isend(V, (int)(nc * k), MPI_FLOAT, above, TAG_V, MPI_COMM_WORLD, &sq[1]);
        }
        OOC_OUT();
        MPI_Gather(&sse, 1, MPI_DOUBLE, allsse, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (sending)
            MPI_Waitall(2, sq, st);
        if (q > 1) {
            free(U);
            free(V);
            U = V = NULL;
        }
        /* the block stays out until the next sweep's U and V have arrived */
        if (g_rank == 0) {
            double tot = 0;
            for (int b = 0; b < p; b++) /* row-major block order, like the serial programs */
                tot += allsse[b];
            double rmse = h.nnz ? sqrt(tot / (double)h.nnz) : 0;
            if (update)
                printf("iter %d rmse %.17g time %.6f\n", it, rmse, MPI_Wtime() - t0);
            else
                printf("final rmse %.17g\n", rmse);
            fflush(stdout);
        }
        if (it == iters)
            t_final = MPI_Wtime();
    }
    if (iters == 0)
        t_final = t_iters;
    if (g_rank == 0) {
        printf("time total %.6f iterations %.6f per-iteration %.6f\n", MPI_Wtime() - t_start,
               t_final - t_iters, iters ? (t_final - t_iters) / iters : 0);
#ifdef SGD_OOC
        printf("spill: wrote %llu bytes, read %llu bytes, %.3f s (rank 0)\n",
               (unsigned long long)g_ooc.bytes_written, (unsigned long long)g_ooc.bytes_read,
               g_ooc.io_seconds);
#endif
    }
#ifdef SGD_OOC
    bdooc_close(&g_ooc);
#endif
    free(rp);
    free(ci);
    free(val);
    free(order);
    free(U);
    free(V);
    free(allsse);
    MPI_Finalize();
    return 0;
}
