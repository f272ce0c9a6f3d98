/* mpi_bench: message-passing micro-benchmark, built with bdmpicc and with
 * MPICH's mpicc from the same source and run by bench/mpi_bench.py, which
 * prints BDMPI/MPICH ratios (issue 12's targets).  Plain MPI 3.1, nothing
 * BDMPI-specific.
 *
 * Tests (each prints one line per size: "RESULT test size value unit"):
 *   pingpong   ranks 0 and 1, half the round-trip time          (us)
 *   bandwidth  rank 0 streams a window of messages to rank 1     (MB/s)
 *   msgrate    rank 0 -> 1, 8-byte messages in windows of 64     (msgs/s)
 *   allreduce  MPI_Allreduce (MPI_SUM of doubles) over all ranks (us)
 *   bcast      MPI_Bcast from rank 0                              (us)
 *   alltoall   MPI_Alltoall, size bytes per pair                  (us)
 *   iallreduce MPI_Iallreduce then MPI_Wait, as allreduce         (us)
 *   ibarrier   MPI_Ibarrier then MPI_Wait (smallest size only)    (us)
 *   iallgather MPI_Iallgather then MPI_Wait, size bytes a rank   (us)
 *   scan       MPI_Scan (MPI_SUM of doubles); rank r waits only for the
 *              ranks below it, so the loop ends with a barrier           (us)
 *   iscan      MPI_Iscan then MPI_Wait, as scan                          (us)
 *   uallreduce MPI_Allreduce with a user op (a sum of doubles)         (us)
 *   ireduce    MPI_Ireduce to rank 0 then MPI_Wait; the others never
 *              wait, so the loop ends with a barrier                   (us)
 *   ring       every rank sends to rank+1 and receives from rank-1 (us per step)
 *   sendrecv   ranks in pairs (0-1, 2-3, ...) exchange size bytes each way
 *              with one MPI_Sendrecv                            (us per exchange)
 *
 * A test's time is the best of --reps repetitions, each of as many
 * iterations as fill --budget seconds (from calibration runs of growing
 * length).
 * The best, not the mean, because these machines are shared and noisy. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_rank, g_size;
static int g_reps = 3;
static double g_budget = 0.05; /* seconds one repetition aims at */
static size_t g_min = 8, g_max = 16u << 20;

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "mpi_bench: rank %d: out of memory (%zu bytes)\n", g_rank, n);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(p, g_rank + 1, n);
    return p;
}

typedef double (*bench_fn)(size_t size, int iters, void *a, void *b);

/* Iterations for one repetition: runs of 2, 8, 32, ... iterations until
 * one takes a tenth of --budget (the slowest rank's time, so every rank
 * computes the same number), then as many as fill --budget at that rate;
 * at least 2, at most 100000.  Measured rather than modelled: 8
 * busy-polling MPICH processes on 2 cores take 50-100 ms for an 8-byte
 * Allreduce, and a fixed model gave them 1000 iterations.  Not from a
 * single short run: one descheduling in 4 iterations left 2 iterations a
 * repetition, and the best of such repetitions measured wake-ups. */
static int iters_for(bench_fn fn, size_t size, void *a, void *b)
{
    for (int k = 2;; k *= 4) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t = fn(size, k, a, b);
        MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (t >= g_budget / 10 || k >= 100000) {
            double n = t > 0 ? g_budget * k / t : 1e9;
            if (n < 2)
                n = 2;
            if (n > 100000)
                n = 100000;
            return (int)n;
        }
    }
}

static void result(const char *test, size_t size, double value, const char *unit)
{
    if (g_rank == 0)
        printf("RESULT %s %zu %.3f %s\n", test, size, value, unit);
}

/* Best-of-reps seconds per iteration; every rank returns rank 0's. */
static double measure(bench_fn fn, size_t size, void *a, void *b)
{
    fn(size, 2, a, b); /* warm-up */
    int iters = iters_for(fn, size, a, b);
    double best = 1e30;
    for (int r = 0; r < g_reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t = fn(size, iters, a, b) / iters;
        if (t < best)
            best = t;
    }
    MPI_Bcast(&best, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return best;
}

static double pingpong(size_t size, int iters, void *a, void *b)
{
    (void)b;
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (g_rank == 0) {
            MPI_Send(a, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(a, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (g_rank == 1) {
            MPI_Recv(a, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(a, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
    }
    return MPI_Wtime() - t0;
}

#define WINDOW 16
static double bandwidth(size_t size, int iters, void *a, void *b)
{
    (void)b;
    MPI_Request rq[WINDOW];
    MPI_Status st[WINDOW];
    int w = size >= (1u << 20) ? 4 : WINDOW;
    char ack = 0;
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i += w) {
        if (g_rank == 0) {
            for (int k = 0; k < w; k++)
                MPI_Isend(a, (int)size, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &rq[k]);
            MPI_Waitall(w, rq, st);
            MPI_Recv(&ack, 1, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (g_rank == 1) {
            for (int k = 0; k < w; k++)
                MPI_Irecv(a, (int)size, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &rq[k]);
            MPI_Waitall(w, rq, st);
            MPI_Send(&ack, 1, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) * iters / (double)(((iters + w - 1) / w) * w);
}

static double msgrate(size_t size, int iters, void *a, void *b)
{
    (void)b;
    enum { W = 64 };
    MPI_Request rq[W];
    MPI_Status st[W];
    char ack = 0;
    int rounds = (iters + W - 1) / W;
    double t0 = MPI_Wtime();
    for (int i = 0; i < rounds; i++) {
        if (g_rank == 0) {
            for (int k = 0; k < W; k++)
                MPI_Isend(a, (int)size, MPI_BYTE, 1, 4, MPI_COMM_WORLD, &rq[k]);
            MPI_Waitall(W, rq, st);
            MPI_Recv(&ack, 1, MPI_BYTE, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (g_rank == 1) {
            for (int k = 0; k < W; k++)
                MPI_Irecv((char *)a + (size_t)k * size, (int)size, MPI_BYTE, 0, 4, MPI_COMM_WORLD,
                          &rq[k]);
            MPI_Waitall(W, rq, st);
            MPI_Send(&ack, 1, MPI_BYTE, 0, 5, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) * iters / (double)(rounds * W);
}

static double allreduce(size_t size, int iters, void *a, void *b)
{
    int n = (int)(size / sizeof(double));
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        MPI_Allreduce(a, b, n ? n : 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return MPI_Wtime() - t0;
}

static double iallreduce(size_t size, int iters, void *a, void *b)
{
    int n = (int)(size / sizeof(double));
    MPI_Request r;
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        MPI_Iallreduce(a, b, n ? n : 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    return MPI_Wtime() - t0;
}

static double scan(size_t size, int iters, void *a, void *b)
{
    int n = (int)(size / sizeof(double));
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        MPI_Scan(a, b, n ? n : 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    return MPI_Wtime() - t0;
}

static double iscan(size_t size, int iters, void *a, void *b)
{
    int n = (int)(size / sizeof(double));
    MPI_Request r;
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        MPI_Iscan(a, b, n ? n : 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return MPI_Wtime() - t0;
}

static double ireduce(size_t size, int iters, void *a, void *b)
{
    int n = (int)(size / sizeof(double));
    MPI_Request r;
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        MPI_Ireduce(a, b, n ? n : 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return MPI_Wtime() - t0;
}

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const double *x = in;
    double *y = inout;
    for (int i = 0; i < *len; i++)
        y[i] += x[i];
}

static MPI_Op g_user_sum;

static double uallreduce(size_t size, int iters, void *a, void *b)
{
    int n = (int)(size / sizeof(double));
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        MPI_Allreduce(a, b, n ? n : 1, MPI_DOUBLE, g_user_sum, MPI_COMM_WORLD);
    return MPI_Wtime() - t0;
}

static double ibarrier(size_t size, int iters, void *a, void *b)
{
    (void)size, (void)a, (void)b;
    MPI_Request r;
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        MPI_Ibarrier(MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    return MPI_Wtime() - t0;
}

static double iallgather(size_t size, int iters, void *a, void *b)
{
    MPI_Request r;
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        MPI_Iallgather(a, (int)size, MPI_BYTE, b, (int)size, MPI_BYTE, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    return MPI_Wtime() - t0;
}

static double bcast(size_t size, int iters, void *a, void *b)
{
    (void)b;
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        MPI_Bcast(a, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD);
    return MPI_Wtime() - t0;
}

static double alltoall(size_t size, int iters, void *a, void *b)
{
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        MPI_Alltoall(a, (int)size, MPI_BYTE, b, (int)size, MPI_BYTE, MPI_COMM_WORLD);
    return MPI_Wtime() - t0;
}

static double ring(size_t size, int iters, void *a, void *b)
{
    int next = (g_rank + 1) % g_size, prev = (g_rank + g_size - 1) % g_size;
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        MPI_Sendrecv(a, (int)size, MPI_BYTE, next, 6, b, (int)size, MPI_BYTE, prev, 6,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return MPI_Wtime() - t0;
}

/* Pairs 2k and 2k+1 swap buffers; an odd last rank sits out. */
static double sendrecv(size_t size, int iters, void *a, void *b)
{
    int peer = g_rank ^ 1;
    if (peer >= g_size)
        peer = MPI_PROC_NULL;
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        MPI_Sendrecv(a, (int)size, MPI_BYTE, peer, 7, b, (int)size, MPI_BYTE, peer, 7,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return MPI_Wtime() - t0;
}

static int wanted(const char *list, const char *name)
{
    if (!list)
        return 1;
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += n)
        if ((p == list || p[-1] == ',') && (p[n] == 0 || p[n] == ','))
            return 1;
    return 0;
}

static size_t parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    switch (*end) {
    case 'k':
    case 'K': v *= 1024; break;
    case 'm':
    case 'M': v *= 1024 * 1024; break;
    case 'g':
    case 'G': v *= 1024.0 * 1024 * 1024; break;
    default: break;
    }
    return (size_t)v;
}

static void usage(void)
{
    if (g_rank == 0)
        fprintf(stderr,
                "usage: mpi_bench [--tests LIST] [--min SIZE] [--max SIZE] [--reps N] "
                "[--budget SECONDS]\n"
                "  LIST: comma-separated of pingpong,bandwidth,msgrate,allreduce,bcast,alltoall,"
                "ring,sendrecv,iallreduce,ibarrier,iallgather,scan,iscan,uallreduce,ireduce\n"
                "  (default: all; point-to-point tests need at least 2 ranks)\n");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    const char *tests = NULL;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--tests") && v)
            tests = argv[++i];
        else if (!strcmp(argv[i], "--min") && v)
            g_min = parse_size(argv[++i]);
        else if (!strcmp(argv[i], "--max") && v)
            g_max = parse_size(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && v)
            g_reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--budget") && v)
            g_budget = atof(argv[++i]);
        else {
            usage();
            MPI_Finalize();
            return 2;
        }
    }
    if (g_reps < 1 || g_min < 1 || g_max < g_min || g_budget <= 0) {
        usage();
        MPI_Finalize();
        return 2;
    }
    if (g_rank == 0)
        printf("# mpi_bench: %d ranks, sizes %zu..%zu, best of %d\n", g_size, g_min, g_max, g_reps);
    /* alltoall needs size x ranks; msgrate posts 64 receives of 8 bytes */
    size_t amax = g_max * (size_t)g_size;
    if (amax < 64 * 8)
        amax = 64 * 8;
    void *a = xmalloc(amax), *b = xmalloc(amax);
    MPI_Op_create(user_sum, 1, &g_user_sum);
    int p2p = g_size >= 2;
    for (size_t s = g_min; s <= g_max; s *= 4) {
        if (p2p && wanted(tests, "pingpong"))
            result("pingpong", s, measure(pingpong, s, a, b) / 2 * 1e6, "us");
        if (p2p && wanted(tests, "bandwidth") && s >= 1024)
            result("bandwidth", s, (double)s / measure(bandwidth, s, a, b) / 1e6, "MB/s");
        if (wanted(tests, "allreduce") && s <= (1u << 20))
            result("allreduce", s, measure(allreduce, s, a, b) * 1e6, "us");
        if (wanted(tests, "bcast"))
            result("bcast", s, measure(bcast, s, a, b) * 1e6, "us");
        if (wanted(tests, "alltoall") && s * (size_t)g_size <= (16u << 20))
            result("alltoall", s, measure(alltoall, s, a, b) * 1e6, "us");
        if (wanted(tests, "iallreduce") && s <= (1u << 20))
            result("iallreduce", s, measure(iallreduce, s, a, b) * 1e6, "us");
        if (wanted(tests, "ibarrier") && s == g_min)
            result("ibarrier", 0, measure(ibarrier, s, a, b) * 1e6, "us");
        if (wanted(tests, "iallgather") && s * (size_t)g_size <= (16u << 20))
            result("iallgather", s, measure(iallgather, s, a, b) * 1e6, "us");
        if (wanted(tests, "scan") && s <= (1u << 20))
            result("scan", s, measure(scan, s, a, b) * 1e6, "us");
        if (wanted(tests, "iscan") && s <= (1u << 20))
            result("iscan", s, measure(iscan, s, a, b) * 1e6, "us");
        if (wanted(tests, "ireduce") && s <= (1u << 20))
            result("ireduce", s, measure(ireduce, s, a, b) * 1e6, "us");
        if (wanted(tests, "uallreduce") && s <= (1u << 20))
            result("uallreduce", s, measure(uallreduce, s, a, b) * 1e6, "us");
        if (wanted(tests, "ring") && s <= (1u << 20))
            result("ring", s, measure(ring, s, a, b) * 1e6, "us");
        if (p2p && wanted(tests, "sendrecv"))
            result("sendrecv", s, measure(sendrecv, s, a, b) * 1e6, "us");
    }
    if (p2p && wanted(tests, "msgrate"))
        result("msgrate", 8, 1.0 / measure(msgrate, 8, a, b), "msgs/s");
    MPI_Op_free(&g_user_sum);
    free(a);
    free(b);
    MPI_Finalize();
    return 0;
}
