/* rma_bench: one-sided throughput between rank 0 (origin) and rank 1
 * (target), run by bench/rma_bench.py under BDMPI and MPICH alike.
 *
 * For each size, rank 0 issues operations to rank 1's window and prints
 *   RESULT <test> <bytes> <ops per second> ops/s
 * Tests:
 *   put_fence, get_fence, acc_fence  BATCH operations per fence epoch
 *   put_lock, get_lock, acc_lock     MPI_Win_lock(shared)/unlock around BATCH
 *   put_flush                        MPI_Win_lock_all, one flush per operation
 * The target's window is checked after the puts (the last value written). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BATCH = 64 };

static double g_budget = 0.5; /* seconds per figure, roughly */

static int rounds_for(double once)
{
    int r = once > 0 ? (int)(g_budget / once) : 1000;
    return r < 2 ? 2 : r > 5000 ? 5000 : r;
}

typedef enum { PUT, GET, ACC } op_t;

static void issue(op_t op, double *src, double *dst, int n, int target, MPI_Aint disp, MPI_Win w)
{
    if (op == PUT)
        MPI_Put(src, n, MPI_DOUBLE, target, disp, n, MPI_DOUBLE, w);
    else if (op == GET)
        MPI_Get(dst, n, MPI_DOUBLE, target, disp, n, MPI_DOUBLE, w);
    else
        MPI_Accumulate(src, n, MPI_DOUBLE, target, disp, n, MPI_DOUBLE, MPI_SUM, w);
}

/* One round: BATCH operations in one epoch of the given kind; returns seconds. */
static double round_of(int kind, op_t op, int rank, double *src, double *dst, int n, MPI_Win w)
{
    double t0 = MPI_Wtime();
    if (kind == 0) { /* fence */
        MPI_Win_fence(0, w);
        if (rank == 0)
            for (int i = 0; i < BATCH; i++)
                issue(op, src, dst + (op == GET ? (size_t)i * n : 0), n, 1, 0, w);
        MPI_Win_fence(0, w);
    } else if (kind == 1) { /* lock/unlock around the batch */
        if (rank == 0) {
            MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, w);
            for (int i = 0; i < BATCH; i++)
                issue(op, src, dst + (op == GET ? (size_t)i * n : 0), n, 1, 0, w);
            MPI_Win_unlock(1, w);
        }
    } else { /* lock_all, a flush after every operation */
        if (rank == 0) {
            MPI_Win_lock_all(0, w);
            for (int i = 0; i < BATCH; i++) {
                issue(op, src, dst, n, 1, 0, w);
                MPI_Win_flush(1, w);
            }
            MPI_Win_unlock_all(w);
        }
    }
    return MPI_Wtime() - t0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t maxb = 65536;
    const char *tests = "put_fence,get_fence,acc_fence,put_lock,get_lock,acc_lock,put_flush";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--max") && i + 1 < argc)
            maxb = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--budget") && i + 1 < argc)
            g_budget = atof(argv[++i]);
        else if (!strcmp(argv[i], "--tests") && i + 1 < argc)
            tests = argv[++i];
    }
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "rma_bench: run with 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    size_t maxn = maxb / sizeof(double);
    double *base;
    MPI_Win w;
    MPI_Win_allocate((MPI_Aint)(maxn * sizeof(double)), sizeof(double), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &base, &w);
    double *src = malloc(maxn * sizeof(double));
    double *dst = malloc((size_t)BATCH * maxn * sizeof(double));
    static const char *names[] = {"put_fence", "get_fence", "acc_fence", "put_lock",
                                  "get_lock",  "acc_lock",  "put_flush"};
    static const int kinds[] = {0, 0, 0, 1, 1, 1, 2};
    static const op_t ops[] = {PUT, GET, ACC, PUT, GET, ACC, PUT};
    int bad = 0;
    for (int t = 0; t < 7; t++) {
        if (!strstr(tests, names[t]))
            continue;
        for (size_t b = sizeof(double); b <= maxb; b *= 64) {
            int n = (int)(b / sizeof(double));
            for (int k = 0; k < n; k++)
                src[k] = rank * 1000.0 + (double)k + (double)t;
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w);
            for (size_t k = 0; k < maxn; k++)
                base[k] = 0;
            MPI_Win_unlock(rank, w);
            MPI_Barrier(MPI_COMM_WORLD);
            double once = round_of(kinds[t], ops[t], rank, src, dst, n, w);
            MPI_Bcast(&once, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
            int r = rounds_for(once);
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int i = 0; i < r; i++)
                round_of(kinds[t], ops[t], rank, src, dst, n, w);
            double el = MPI_Wtime() - t0;
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 1 && ops[t] == PUT) {
                MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, w);
                if (base[n - 1] != (double)(n - 1) + (double)t) {
                    fprintf(stderr, "rma_bench: %s %zu: target holds %g, expected %g\n", names[t],
                            b, base[n - 1], (double)(n - 1) + (double)t);
                    bad = 1;
                }
                MPI_Win_unlock(1, w);
            }
            if (rank == 0)
                printf("RESULT %s %zu %.0f ops/s\n", names[t], b, (double)r * BATCH / el);
            fflush(stdout);
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    free(src);
    free(dst);
    MPI_Win_free(&w);
    MPI_Finalize();
    return bad;
}
