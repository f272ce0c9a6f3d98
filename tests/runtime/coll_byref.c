/* Collective pieces handed over by reference to their stored copy (issue
 * 13, session 25; src/master/coll_ref.c): right data, and the sender may
 * change its buffer as soon as its call returns.
 *
 * NRANKS ranks at -nr 1 under a budget that holds about two ranks' arrays
 * (coll_byref.sh).  Every round each rank fills its send buffer S (argv[1]
 * MiB) with the round's pattern, then waits in a barrier, in which the
 * ranks after it push S out to storage; so S is out of memory when the
 * rank calls MPI_Alltoall, MPI_Alltoallv (uneven counts), MPI_Gather and
 * MPI_Scatter, and goes by reference.  Straight after each call the rank
 * overwrites S with the next round's pattern, before the ranks after it
 * have read their pieces of S: those must still read this round's bytes
 * (the rewritten S goes to fresh slots).  Every word received is checked.
 * Prints "PASS coll_byref"; coll_byref.sh also checks --stats
 * (COLL_BYTES_REF > 0). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_rank, g_size, g_bad;

static uint64_t val(int round, int call, int from, int to, uint64_t k)
{
    uint64_t x = ((uint64_t)round << 60) ^ ((uint64_t)call << 56) ^ ((uint64_t)(from + 1) << 44) ^
                 ((uint64_t)(to + 1) << 32) ^ k;
    return x * 0x9E3779B97F4A7C15ull;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p) {
        fprintf(stderr, "rank %d: cannot allocate %zu bytes\n", g_rank, n);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

/* S as call `call` of round `round` sends it: block `to` at displs[to]. */
static void fill(uint64_t *s, int round, int call, const int *counts, const int *displs)
{
    for (int to = 0; to < g_size; to++)
        for (int k = 0; k < counts[to]; k++)
            s[displs[to] + k] = val(round, call, g_rank, to, (uint64_t)k);
}

static void check(const uint64_t *r, int round, int call, int from, int n, const char *what)
{
    for (int k = 0; k < n; k++)
        if (r[k] != val(round, call, from, g_rank, (uint64_t)k)) {
            if (g_bad++ < 5)
                fprintf(stderr, "rank %d: %s round %d: word %d from rank %d is wrong\n", g_rank,
                        what, round, k, from);
            return;
        }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    int mib = argc > 1 ? atoi(argv[1]) : 4, rounds = argc > 2 ? atoi(argv[2]) : 3;
    int p = g_size, blk = (int)(((size_t)mib << 20) / 8 / (size_t)p);
    size_t words = (size_t)blk * (size_t)p;
    /* room for the Alltoallv's larger blocks and gaps */
    size_t room = (words + 1024 * (size_t)p) * 8;
    uint64_t *s = xmalloc(room), *r = xmalloc(room);
    int *cnt = xmalloc(4 * (size_t)p), *dsp = xmalloc(4 * (size_t)p);
    int *rcnt = xmalloc(4 * (size_t)p), *rdsp = xmalloc(4 * (size_t)p);

    for (int round = 1; round <= rounds; round++) {
        /* MPI_Alltoall: equal blocks */
        for (int q = 0; q < p; q++) {
            cnt[q] = blk;
            dsp[q] = q * blk;
        }
        fill(s, round, 0, cnt, dsp);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Alltoall(s, blk, MPI_UINT64_T, r, blk, MPI_UINT64_T, MPI_COMM_WORLD);
        fill(s, round + 1, 0, cnt, dsp); /* at once: the others have not read theirs yet */
        for (int q = 0; q < p; q++)
            check(r + (size_t)q * blk, round, 0, q, blk, "MPI_Alltoall");

        /* MPI_Alltoallv: block to q of blk + (g_rank + q) % 3 * 1000 - 1500 words, not
         * aligned to anything */
        int off = 0, roff = 0;
        for (int q = 0; q < p; q++) {
            cnt[q] = blk + (g_rank + q) % 3 * 1000 - 1500;
            dsp[q] = off;
            off += cnt[q] + 3;
            rcnt[q] = blk + (q + g_rank) % 3 * 1000 - 1500;
            rdsp[q] = roff;
            roff += rcnt[q] + 1;
        }
        fill(s, round, 1, cnt, dsp);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Alltoallv(s, cnt, dsp, MPI_UINT64_T, r, rcnt, rdsp, MPI_UINT64_T, MPI_COMM_WORLD);
        fill(s, round + 1, 1, cnt, dsp);
        for (int q = 0; q < p; q++)
            check(r + rdsp[q], round, 1, q, rcnt[q], "MPI_Alltoallv");

        /* MPI_Gather to rank round % p, MPI_Scatter from rank (round + 1) % p */
        int groot = round % p, sroot = (round + 1) % p;
        for (int q = 0; q < p; q++) {
            cnt[q] = blk;
            dsp[q] = 0;
        }
        fill(s, round, 2, cnt, dsp); /* every block at 0: the gather sends block 0 */
        for (int k = 0; k < blk; k++)
            s[k] = val(round, 2, g_rank, groot, (uint64_t)k);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Gather(s, blk, MPI_UINT64_T, r, blk, MPI_UINT64_T, groot, MPI_COMM_WORLD);
        memset(s, 0xab, (size_t)blk * 8);
        if (g_rank == groot)
            for (int q = 0; q < p; q++)
                check(r + (size_t)q * blk, round, 2, q, blk, "MPI_Gather");
        for (int q = 0; q < p; q++)
            dsp[q] = q * blk;
        if (g_rank == sroot)
            fill(s, round, 3, cnt, dsp);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Scatter(s, blk, MPI_UINT64_T, r, blk, MPI_UINT64_T, sroot, MPI_COMM_WORLD);
        if (g_rank == sroot)
            memset(s, 0xcd, words * 8);
        check(r, round, 3, sroot, blk, "MPI_Scatter");
    }
    int bad = 0;
    MPI_Reduce(&g_bad, &bad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (g_rank == 0) {
        if (bad)
            printf("FAIL coll_byref: %d wrong blocks\n", bad);
        else
            printf("PASS coll_byref\n");
    }
    free(s);
    free(r);
    free(cnt);
    free(dsp);
    free(rcnt);
    free(rdsp);
    MPI_Finalize();
    return bad ? 1 : 0;
}
