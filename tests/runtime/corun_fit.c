/* Two running ranks whose working sets do not fit in the budget together
 * (issue 13, session 16).
 *
 * Every rank has argv[3] (default 2) managed arrays of argv[1] KiB
 * (default 2048) and, for argv[2] rounds (default 10), writes the first,
 * computes for about 30 ms, writes the second, and so on, and waits in a
 * barrier; each array is checked
 * against what the rank wrote in the previous round before it is
 * overwritten.  Run at -nr 2 under a budget that holds one rank's two
 * arrays but not two ranks' (corun_fit.sh: -mem 5M for 2 x 2 MiB).
 *
 * Two ranks that run at once each get their first array, then both wait
 * for the second: neither can go on, and the master makes one give back
 * what it holds (MEM_SHRINKS), which it reads again when the other has
 * blocked.  A runtime that keeps the second run slot free while the next
 * rank's memory (as in its last turns) does not fit beside the running
 * rank's (CORUN_HELD) gets there only in the first round, before any
 * rank was unloaded.  corun_capped.sh (session 17) runs 4 x 1 MiB under
 * 6.5M: the next rank has room for more than half of its arrays and runs
 * beside the first with its grants capped.  Rank 0 prints "PASS corun_fit". */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t val(int rank, int round, int which, uint64_t k)
{
    return ((uint64_t)rank << 48) ^ ((uint64_t)round << 40) ^ ((uint64_t)which << 36) ^
           (k * 0x9E3779B97F4A7C15ull);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Check a against round-1's values (round 0: nothing yet), then fill it. */
static int step(uint64_t *a, uint64_t n, int rank, int round, int which)
{
    int bad = 0;
    for (uint64_t k = 0; k < n; k++) {
        if (round > 0 && a[k] != val(rank, round - 1, which, k) && bad++ < 3)
            fprintf(stderr, "rank %d round %d: word %llu of array %d is %#llx, not %#llx\n", rank,
                    round, (unsigned long long)k, which, (unsigned long long)a[k],
                    (unsigned long long)val(rank, round - 1, which, k));
        a[k] = val(rank, round, which, k);
    }
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    uint64_t kib = argc > 1 ? strtoull(argv[1], NULL, 10) : 2048;
    int rounds = argc > 2 ? atoi(argv[2]) : 10;
    int na = argc > 3 ? atoi(argv[3]) : 2;
    uint64_t n = kib * 1024 / 8;
    uint64_t *arr[8] = {0};
    if (na < 1 || na > 8) {
        fprintf(stderr, "rank %d: 1 to 8 arrays, not %d\n", me, na);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int i = 0; i < na; i++)
        if (!(arr[i] = malloc(n * 8))) {
            fprintf(stderr, "rank %d: cannot allocate %d x %llu KiB\n", me, na,
                    (unsigned long long)kib);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    int bad = 0;
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < na; i++) {
            bad += step(arr[i], n, me, r, i);
            if (i == na - 1)
                break;
            /* computing, while another running rank may take its arrays */
            double t0 = now();
            while (now() - t0 < 0.03)
                ;
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    int all = 0;
    MPI_Reduce(&bad, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0) {
        if (all)
            printf("FAIL corun_fit: %d words wrong\n", all);
        else
            printf("PASS corun_fit: %d rounds of %d x %llu KiB\n", rounds, na,
                   (unsigned long long)kib);
    }
    for (int i = 0; i < na; i++)
        free(arr[i]);
    MPI_Finalize();
    return all != 0;
}
