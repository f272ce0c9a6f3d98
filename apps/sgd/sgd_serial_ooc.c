/*
 * sgd_serial_ooc -- serial out-of-core SGD matrix factorization (the
 * paper's Serial-ooc).  The rating matrix is first split into q x q block
 * files (streamed, in -d DIR); U and V live in files there too.  Every
 * iteration visits the blocks step by step along the block diagonals (the
 * order of sgd.c, so the results match sgd.c on q*q ranks exactly); for each
 * block it reads the block and the U and V segments it needs, runs SGD over
 * it, and writes the segments back.  Memory: one block and two segments
 * (-m BUDGET is the target for that; larger blocks are processed anyway with
 * a warning -- use a larger -q).
 *
 *   sgd_serial_ooc [-q Q] [-k RANK] [-i ITERS] [-l LEARNRATE] [-r REG] [-s SEED]
 *                  [-m BUDGET] [-d DIR] FILE
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bdcsr.h"
#include "sgdcommon.h"

typedef struct {
    int32_t row, col;
    float val;
} trip_t;

static void die(const char *what)
{
    fprintf(stderr, "sgd_serial_ooc: %s%s%s\n", what, errno ? ": " : "",
            errno ? strerror(errno) : "");
    exit(1);
}

static int tmpfile_in(const char *dir, const char *tag)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/sgd_serial_ooc.%s.XXXXXX", dir, tag);
    int fd = mkstemp(path);
    if (fd < 0)
        die("cannot create a work file");
    unlink(path);
    return fd;
}

int main(int argc, char **argv)
{
    int q = 1, k = 10, iters = 5, c;
    float lr = 0.01f, reg = 0.05f;
    uint64_t seed = 1;
    int64_t budget = 64 << 20;
    const char *dir = NULL;
    while ((c = getopt(argc, argv, "q:k:i:l:r:s:m:d:")) != -1) {
        switch (c) {
        case 'q': q = atoi(optarg); break;
        case 'k': k = atoi(optarg); break;
        case 'i': iters = atoi(optarg); break;
        case 'l': lr = strtof(optarg, NULL); break;
        case 'r': reg = strtof(optarg, NULL); break;
        case 's': seed = strtoull(optarg, NULL, 0); break;
        case 'm': budget = bd_parse_size(optarg); break;
        case 'd': dir = optarg; break;
        default: optind = argc + 1;
        }
    }
    if (optind != argc - 1 || q < 1 || k < 1 || k > SGD_MAXK || iters < 0 || budget < 64) {
        fprintf(
            stderr,
            "usage: sgd_serial_ooc [-q Q] [-k RANK] [-i ITERS] [-l LEARNRATE] [-r REG] [-s SEED] "
            "[-m BUDGET] [-d DIR] FILE\n");
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
    if (h.ncols >= INT32_MAX || h.nrows >= INT32_MAX)
        die("matrix too large");
    const int nb = q * q;
    int64_t *rs = bd_xmalloc((size_t)(q + 1) * 8, "row blocks"),
            *cs = bd_xmalloc((size_t)(q + 1) * 8, "col blocks");
    for (int b = 0; b <= q; b++) {
        rs[b] = bdcsr_part_start(fd, &h, q, b);
        cs[b] = sgd_col_start(h.ncols, q, b);
        if (rs[b] < 0)
            die("cannot read the row pointers");
    }

    /* Split into block files: count, then stream the triplets to their
     * block's region of one work file. */
    int64_t chunk = budget / 2 / 8;
    if (chunk < 1024)
        chunk = 1024;
    int64_t *bcount = bd_xcalloc((size_t)nb, 8, "block sizes"),
            *boff = bd_xmalloc((size_t)nb * 8, "block offsets");
    int64_t *rp = bd_xmalloc((size_t)(chunk + 1) * 8, "row pointer chunk");
    int32_t *col = bd_xmalloc((size_t)chunk * 4, "column chunk");
    float *val = bd_xmalloc((size_t)chunk * 4, "value chunk");
    int bfd = tmpfile_in(dir, "blocks");
    size_t wcap = (size_t)(budget / 2) / (size_t)q / sizeof(trip_t);
    if (wcap < 256)
        wcap = 256;
    trip_t *wbuf = bd_xmalloc(wcap * q * sizeof *wbuf, "block writers");
    size_t *wlen = bd_xcalloc((size_t)q, sizeof *wlen, "block writers");
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            int64_t off = 0;
            for (int b = 0; b < nb; b++) {
                boff[b] = off;
                off += bcount[b] * (int64_t)sizeof(trip_t);
            }
            memset(bcount, 0, (size_t)nb * 8);
        }
        for (int bi = 0; bi < q; bi++) {
            for (int64_t a = rs[bi]; a < rs[bi + 1];) {
                /* rows [a, b) whose non-zeros fit the chunk (a longer row alone is streamed piecewise) */
                int64_t b = a + chunk < rs[bi + 1] ? a + chunk : rs[bi + 1];
                if (bdcsr_read_rowptr(fd, &h, a, b, rp) < 0)
                    die("cannot read the row pointers");
                while (b > a + 1 && rp[b - a] - rp[0] > chunk)
                    b--;
                for (int64_t e0 = rp[0]; e0 < rp[b - a]; e0 += chunk) {
                    int64_t e1 = e0 + chunk < rp[b - a] ? e0 + chunk : rp[b - a];
                    if (bdcsr_read_colind32(fd, &h, e0, e1, col) < 0 ||
                        bdcsr_read_values(fd, &h, e0, e1, val) < 0)
                        die("cannot read the matrix");
                    int64_t row = a, bj = 0;
                    for (int64_t e = e0; e < e1; e++) {
                        while (rp[row - a + 1] <= e)
                            row++;
                        while (col[e - e0] >= cs[bj + 1])
                            bj++;
                        while (col[e - e0] < cs[bj])
                            bj--;
                        int blk = bi * q + (int)bj;
                        if (pass == 1) {
                            trip_t *t = &wbuf[bj * wcap + wlen[bj]++];
                            t->row = (int32_t)(row - rs[bi]);
                            t->col = (int32_t)(col[e - e0] - cs[bj]);
                            t->val = val[e - e0];
                            if (wlen[bj] == wcap) {
                                if (bd_pwrite_full(bfd, &wbuf[bj * wcap], wcap * sizeof(trip_t),
                                                   boff[blk] +
                                                       bcount[blk] * (int64_t)sizeof(trip_t)) < 0)
                                    die("cannot write the block file");
                                bcount[blk] += (int64_t)wcap;
                                wlen[bj] = 0;
                            }
                        } else {
                            bcount[blk]++;
                        }
                    }
                }
                a = b;
            }
            if (pass == 1)
                for (int bj = 0; bj < q; bj++) {
                    int blk = bi * q + bj;
                    if (wlen[bj] &&
                        bd_pwrite_full(bfd, &wbuf[bj * wcap], wlen[bj] * sizeof(trip_t),
                                       boff[blk] + bcount[blk] * (int64_t)sizeof(trip_t)) < 0)
                        die("cannot write the block file");
                    bcount[blk] += (int64_t)wlen[bj];
                    wlen[bj] = 0;
                }
        }
    }
    free(wbuf);
    free(wlen);
    free(rp);
    free(col);
    free(val);
    close(fd);

    /* U and V files, initialized in chunks */
    int ufd = tmpfile_in(dir, "U"), vfd = tmpfile_in(dir, "V");
    {
        enum { CH = 4096 };
        float *buf = bd_xmalloc((size_t)CH * k * 4, "init buffer");
        for (int w = 0; w < 2; w++) {
            int64_t n = w ? h.ncols : h.nrows;
            for (int64_t a = 0; a < n; a += CH) {
                int64_t b = a + CH < n ? a + CH : n;
                for (int64_t i = a; i < b; i++)
                    sgd_init_factor(seed, w, i, k, buf + (i - a) * k);
                if (bd_pwrite_full(w ? vfd : ufd, buf, (size_t)(b - a) * k * 4, a * k * 4) < 0)
                    die("cannot write the factor files");
            }
        }
        free(buf);
    }
    int64_t maxr = 0, maxc = 0, maxnz = 0;
    for (int b = 0; b < q; b++) {
        if (rs[b + 1] - rs[b] > maxr)
            maxr = rs[b + 1] - rs[b];
        if (cs[b + 1] - cs[b] > maxc)
            maxc = cs[b + 1] - cs[b];
    }
    for (int b = 0; b < nb; b++)
        if (bcount[b] > maxnz)
            maxnz = bcount[b];
    int64_t need = maxnz * (12 + 8) + (maxr + 1) * 12 + (maxr + maxc) * k * 4;
    if (need > budget)
        fprintf(stderr,
                "sgd_serial_ooc: warning: a block needs %lld bytes, over the %lld budget (use a "
                "larger -q)\n",
                (long long)need, (long long)budget);
    trip_t *tb = bd_xmalloc((size_t)maxnz * sizeof *tb, "block triplets");
    int64_t *brp = bd_xmalloc((size_t)(maxr + 1) * 8, "block rowptr");
    int32_t *bci = bd_xmalloc((size_t)maxnz * 4, "block columns"),
            *order = bd_xmalloc((size_t)maxr * 4, "order");
    float *bval = bd_xmalloc((size_t)maxnz * 4, "block values");
    float *U = bd_xmalloc((size_t)(maxr * k) * 4, "U segment"),
          *V = bd_xmalloc((size_t)(maxc * k) * 4, "V segment");
    double *sse = bd_xmalloc((size_t)nb * 8, "block errors");
    printf("sgd_serial_ooc: rows=%lld cols=%lld nnz=%lld blocks=%dx%d k=%d iters=%d lr=%g reg=%g "
           "seed=%llu "
           "budget=%lld setup %.3f s\n",
           (long long)h.nrows, (long long)h.ncols, (long long)h.nnz, q, q, k, iters, (double)lr,
           (double)reg, (unsigned long long)seed, (long long)budget, bd_now() - t_start);

    double t_iters = bd_now(), t_final = t_iters;
    for (int it = 1; it <= iters + 1; it++) {
        const int update = it <= iters;
        double t0 = bd_now();
        for (int s = 0; s < q; s++)
            for (int bi = 0; bi < q; bi++) {
                int bj = (bi + s) % q, blk = bi * q + bj;
                int64_t nr = rs[bi + 1] - rs[bi], nc = cs[bj + 1] - cs[bj], nz = bcount[blk];
                if (bd_pread_full(bfd, tb, (size_t)nz * sizeof *tb, boff[blk]) < 0 ||
                    bd_pread_full(ufd, U, (size_t)(nr * k) * 4, rs[bi] * k * 4) < 0 ||
                    bd_pread_full(vfd, V, (size_t)(nc * k) * 4, cs[bj] * k * 4) < 0)
                    die("cannot read a block");
                memset(brp, 0, (size_t)(nr + 1) * 8);
                for (int64_t e = 0; e < nz; e++) {
                    brp[tb[e].row + 1]++;
                    bci[e] = tb[e].col;
                    bval[e] = tb[e].val;
                }
                for (int64_t i = 0; i < nr; i++)
                    brp[i + 1] += brp[i];
                sse[blk] = sgd_block(nr, brp, bci, bval, U, V, k, lr, reg, update, seed, it, bi, bj,
                                     order);
                if (update && (bd_pwrite_full(ufd, U, (size_t)(nr * k) * 4, rs[bi] * k * 4) < 0 ||
                               bd_pwrite_full(vfd, V, (size_t)(nc * k) * 4, cs[bj] * k * 4) < 0))
                    die("cannot write the factors");
            }
        double tot = 0;
        for (int b = 0; b < nb; b++)
            tot += sse[b];
        double rmse = h.nnz ? sqrt(tot / (double)h.nnz) : 0;
        if (update) {
            printf("iter %d rmse %.17g time %.6f\n", it, rmse, bd_now() - t0);
            t_final = bd_now();
        } else {
            printf("final rmse %.17g\n", rmse);
        }
        fflush(stdout);
    }
    printf("time total %.6f iterations %.6f per-iteration %.6f\n", bd_now() - t_start,
           t_final - t_iters, iters ? (t_final - t_iters) / iters : 0);
    close(bfd);
    close(ufd);
    close(vfd);
    free(rs);
    free(cs);
    free(bcount);
    free(boff);
    free(tb);
    free(brp);
    free(bci);
    free(order);
    free(bval);
    free(U);
    free(V);
    free(sse);
    return 0;
}
