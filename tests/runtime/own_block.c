/* A blocking all-to-all does not read its send buffer back from storage to
 * give its own block (issue 13, session 14).
 *
 * 4 ranks, -nr 1, -mem 32M, send and receive buffers S and R of argv[1]
 * MiB (M, default 8) each.  The ranks enter MPI_Alltoallv one after the
 * other (a token passed along): each fills S, then fills and frees a
 * ballast of 20 MiB, which makes the master unload the rank waiting in
 * the Alltoallv before it (its S, written, goes to storage).  Afterwards
 * every word of R is checked.
 *
 * What a runtime must read back: at most each rank's own block of R (M/4
 * bytes, plus the two sbpages, argv[2] bytes, it only partly covers), when
 * it copied that block before the wait and was unloaded with it.  Copying
 * the block after the wait from the unloaded S reads S back: whole (M
 * bytes per unloaded rank) under the AR strategies, which load an
 * allocation whole.  The program prints "PASS own_block: reads at most N
 * bytes"; own_block.sh compares N with MEM_READ of --stats. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NRANKS 4

static uint64_t val(int from, int to, uint64_t k)
{
    return ((uint64_t)(from + 1) << 56) ^ ((uint64_t)(to + 1) << 48) ^ (k * 0x9E3779B97F4A7C15ull);
}

static volatile uint64_t g_sink;

static void *xmalloc(uint64_t n, int rank)
{
    void *p = malloc(n);
    if (!p) {
        fprintf(stderr, "rank %d: cannot allocate %llu bytes\n", rank, (unsigned long long)n);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != NRANKS) {
        if (me == 0)
            fprintf(stderr, "own_block: needs %d ranks\n", NRANKS);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    uint64_t m = (argc > 1 ? strtoull(argv[1], NULL, 10) : 8) << 20;
    uint64_t sb = argc > 2 ? strtoull(argv[2], NULL, 10) : 65536;
    uint64_t cnt = m / 8 / NRANKS;
    int sc[NRANKS], sd[NRANKS];
    for (int q = 0; q < NRANKS; q++) {
        sc[q] = (int)cnt;
        sd[q] = (int)(cnt * (uint64_t)q);
    }

    int token = 0;
    if (me > 0)
        MPI_Recv(&token, 1, MPI_INT, me - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    uint64_t *s = xmalloc(m, me), *r = xmalloc(m, me);
    for (int q = 0; q < NRANKS; q++)
        for (uint64_t k = 0; k < cnt; k++)
            s[(uint64_t)sd[q] + k] = val(me, q, k);
    if (me > 0) { /* the rank waiting before this one is unloaded now */
        uint64_t bytes = 20ull << 20, sum = 0;
        uint64_t *volatile b = xmalloc(bytes, me);
        for (uint64_t i = 0; i < bytes / 8; i++)
            b[i] = i;
        for (uint64_t i = 0; i < bytes / 8; i += 512)
            sum += b[i];
        g_sink += sum;
        free(b);
    }
    if (me + 1 < NRANKS)
        MPI_Send(&token, 1, MPI_INT, me + 1, 1, MPI_COMM_WORLD);
    MPI_Alltoallv(s, sc, sd, MPI_UINT64_T, r, sc, sd, MPI_UINT64_T, MPI_COMM_WORLD);
    free(s);

    int bad = 0;
    for (int q = 0; q < NRANKS; q++)
        for (uint64_t k = 0; k < cnt; k++) {
            uint64_t got = r[(uint64_t)sd[q] + k], want = val(q, me, k);
            if (got != want && bad++ < 3)
                fprintf(stderr, "rank %d: word %llu of the block from %d is %#llx, not %#llx\n", me,
                        (unsigned long long)k, q, (unsigned long long)got,
                        (unsigned long long)want);
        }
    free(r);
    int allbad = 0;
    MPI_Reduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    unsigned long long allow = (unsigned long long)NRANKS * (cnt * 8 + 2 * sb);
    if (me == 0)
        printf("%s own_block: %d ranks x %llu MiB; reads at most %llu bytes\n",
               allbad ? "FAIL" : "PASS", NRANKS, (unsigned long long)(m >> 20), allow);
    MPI_Finalize();
    return allbad ? 1 : 0;
}
