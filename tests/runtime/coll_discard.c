/* Receive buffers of collectives are not read back from storage before
 * they are overwritten (issue 13, "move only what must move").
 *
 * Two ranks, -nr 1, a budget of 4 x argv[1] MiB (M, default 8).  Each
 * phase, every rank fills a receive buffer R of M bytes with a pattern,
 * and the ranks take turns putting pressure on the budget (a ballast they
 * fill and free) so that both Rs are unloaded to storage; then each makes
 * a fresh send buffer and calls one collective into R.  Afterwards every
 * word of R is checked: received data where the call writes, the pattern
 * everywhere else (gaps between Alltoallv/Gatherv blocks, the gaps of a
 * strided receive type, the own block of an in-place Alltoall, the root's
 * buffer of a broadcast, the buffer of a non-root in a gather).
 *
 * The only stored data a correct runtime reads back is that of the
 * sbpages (argv[2] bytes, the -sbpage) of R that the call does not
 * overwrite entirely: the program adds them up (plus what R sends in
 * place, the own block a call may copy before it waits, and the
 * send buffer of the neighbourhood collective, whose single-copy transfer
 * may load it again) and prints "PASS coll_discard: reads at most N bytes"; the test
 * (coll_discard.sh) compares N with MEM_READ of --stats.  Without the
 * discard, every R is read back whole. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_rank, g_bad;
static uint64_t g_m, g_w, g_sb; /* bytes of R, its words, sbpage bytes */
static unsigned long long g_allow;

static uint64_t pat(int rank, int phase, uint64_t i)
{
    return ((uint64_t)(rank + 1) << 56) ^ ((uint64_t)phase << 48) ^ (i * 0x9E3779B97F4A7C15ull);
}

/* What rank `from` sends in phase `phase`: word k of its block for `to`. */
static uint64_t val(int from, int to, int phase, uint64_t k)
{
    return pat(from, phase, k) ^ ((uint64_t)(to + 7) << 40);
}

static void *xmalloc(uint64_t n)
{
    void *p = malloc(n);
    if (!p) {
        fprintf(stderr, "rank %d: cannot allocate %llu bytes\n", g_rank, (unsigned long long)n);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

/* Fill and free a ballast (its sum is kept, so the compiler cannot drop
 * the allocation). */
static volatile uint64_t g_sink;

static void touch(uint64_t bytes)
{
    uint64_t *volatile b = xmalloc(bytes);
    for (uint64_t i = 0; i < bytes / 8; i++)
        b[i] = i;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < bytes / 8; i += 512)
        sum += b[i];
    g_sink += sum;
    free(b);
}

/* R filled with this rank's pattern, and unloaded: rank 0 fills first;
 * rank 1 fills, then needs more than the budget leaves while rank 0 holds
 * its R (so rank 0's goes to storage); then rank 0 needs more than the
 * budget leaves while rank 1 holds its R. */
static uint64_t *prepare(int phase)
{
    int token = 0;
    if (g_rank == 1)
        MPI_Recv(&token, 1, MPI_INT, 0, 100 + phase, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    uint64_t *r = xmalloc(g_m);
    for (uint64_t i = 0; i < g_w; i++)
        r[i] = pat(g_rank, phase, i);
    if (g_rank == 0) {
        MPI_Send(&token, 1, MPI_INT, 1, 100 + phase, MPI_COMM_WORLD);
        MPI_Recv(&token, 1, MPI_INT, 1, 200 + phase, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        touch(g_m * 7 / 2);
        MPI_Send(&token, 1, MPI_INT, 1, 300 + phase, MPI_COMM_WORLD);
    } else {
        touch(g_m * 5 / 2);
        MPI_Send(&token, 1, MPI_INT, 0, 200 + phase, MPI_COMM_WORLD);
        MPI_Recv(&token, 1, MPI_INT, 0, 300 + phase, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    return r;
}

/* The expected content of R, word by word: written[i] says whether the
 * call writes word i, want[i] what it must hold then. */
typedef struct {
    uint8_t *written;
    uint64_t *want;
} expect_t;

static expect_t expect_new(void)
{
    expect_t e = {calloc(g_w, 1), calloc(g_w, 8)};
    if (!e.written || !e.want)
        MPI_Abort(MPI_COMM_WORLD, 2);
    return e;
}

static void expect_set(expect_t *e, uint64_t i, uint64_t v)
{
    e->written[i] = 1;
    e->want[i] = v;
}

/* Check R, count the sbpages the call does not overwrite entirely (their
 * stored copy may be read back), free everything. */
static void check(const char *what, int phase, uint64_t *r, expect_t *e, uint64_t extra_allow)
{
    int shown = 0;
    for (uint64_t i = 0; i < g_w; i++) {
        uint64_t want = e->written[i] ? e->want[i] : pat(g_rank, phase, i);
        if (r[i] != want && shown++ < 3) {
            fprintf(stderr, "rank %d: %s: word %llu is %#llx, not %#llx (%s)\n", g_rank, what,
                    (unsigned long long)i, (unsigned long long)r[i], (unsigned long long)want,
                    e->written[i] ? "received" : "kept");
            g_bad++;
        }
    }
    uint64_t sbw = g_sb / 8;
    for (uint64_t s = 0; s * sbw < g_w; s++) {
        uint64_t end = (s + 1) * sbw < g_w ? (s + 1) * sbw : g_w;
        int whole = end - s * sbw == sbw;
        for (uint64_t i = s * sbw; whole && i < end; i++)
            whole = e->written[i];
        if (!whole)
            g_allow += (end - s * sbw) * 8;
    }
    g_allow += extra_allow;
    free(e->written);
    free(e->want);
    free(r);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (g_rank == 0)
            fprintf(stderr, "coll_discard: needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    g_m = (argc > 1 ? strtoull(argv[1], NULL, 10) : 8) << 20;
    g_sb = argc > 2 ? strtoull(argv[2], NULL, 10) : 65536;
    g_w = g_m / 8;
    const uint64_t W = g_w, sbw = g_sb / 8;
    const int me = g_rank, other = 1 - g_rank;
    int phase = 0;

    /* Alltoallv with gaps, blocking and nonblocking: blocks of cnt words at
     * an odd offset, 1.5 sbpages apart. */
    for (int nb = 0; nb < 2; nb++, phase++) {
        uint64_t *r = prepare(phase);
        int g = (int)(sbw * 3 / 2 + 3), cnt = (int)(W / 2) - g;
        int sc[2] = {cnt, cnt}, sd[2] = {0, (int)(W / 2)}, rc[2] = {cnt, cnt},
            rd[2] = {5, 5 + cnt + g};
        uint64_t *s = xmalloc(g_m);
        for (int q = 0; q < 2; q++)
            for (int k = 0; k < cnt; k++)
                s[sd[q] + k] = val(me, q, phase, (uint64_t)k);
        if (nb) {
            MPI_Request req;
            MPI_Ialltoallv(s, sc, sd, MPI_UINT64_T, r, rc, rd, MPI_UINT64_T, MPI_COMM_WORLD, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            MPI_Alltoallv(s, sc, sd, MPI_UINT64_T, r, rc, rd, MPI_UINT64_T, MPI_COMM_WORLD);
        }
        free(s);
        expect_t e = expect_new();
        for (int q = 0; q < 2; q++)
            for (int k = 0; k < cnt; k++)
                expect_set(&e, (uint64_t)(rd[q] + k), val(q, me, phase, (uint64_t)k));
        /* A nonblocking call copies its own block at once, and a blocking
         * one under the AR strategies before it waits (own_block.c), so it
         * may be stored while the rank waits and read back. */
        check(nb ? "MPI_Ialltoallv" : "MPI_Alltoallv", phase, r, &e, (uint64_t)cnt * 8 + 2 * g_sb);
    }

    /* Alltoall in place: the own block stays. */
    {
        uint64_t *r = prepare(phase);
        int cnt = (int)(W / 2);
        MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, cnt, MPI_UINT64_T, MPI_COMM_WORLD);
        expect_t e = expect_new();
        for (int k = 0; k < cnt; k++)
            expect_set(&e, (uint64_t)(other * cnt + k),
                       pat(other, phase, (uint64_t)(me * cnt + k)));
        /* What it sends is read from R. */
        check("MPI_Alltoall in place", phase++, r, &e, g_m);
    }

    /* Allgather into a strided type: blocks of 2 sbpages, 3 apart, at an
     * odd offset; the gaps stay. */
    {
        uint64_t *r = prepare(phase);
        int bl = (int)(2 * sbw), st = (int)(3 * sbw);
        int nblk = (int)((W / 2 - 8 - (uint64_t)bl) / (uint64_t)st) + 1;
        MPI_Datatype vec;
        MPI_Type_vector(nblk, bl, st, MPI_UINT64_T, &vec);
        MPI_Type_commit(&vec);
        MPI_Aint lb, ext;
        MPI_Type_get_extent(vec, &lb, &ext);
        uint64_t n = (uint64_t)nblk * (uint64_t)bl;
        uint64_t *s = xmalloc(n * 8);
        for (uint64_t k = 0; k < n; k++)
            s[k] = val(me, 0, phase, k);
        MPI_Allgather(s, (int)n, MPI_UINT64_T, r + 3, 1, vec, MPI_COMM_WORLD);
        free(s);
        expect_t e = expect_new();
        for (int q = 0; q < 2; q++)
            for (uint64_t k = 0; k < n; k++)
                expect_set(&e,
                           3 + (uint64_t)q * (uint64_t)ext / 8 + k / (uint64_t)bl * (uint64_t)st +
                               k % (uint64_t)bl,
                           val(q, 0, phase, k));
        MPI_Type_free(&vec);
        check("MPI_Allgather strided", phase++, r, &e, 0);
    }

    /* Bcast from rank 0: the root's buffer is its input and stays. */
    {
        uint64_t *r = prepare(phase);
        MPI_Bcast(r + 7, (int)(W - 7), MPI_UINT64_T, 0, MPI_COMM_WORLD);
        expect_t e = expect_new();
        for (uint64_t k = 7; me == 1 && k < W; k++)
            expect_set(&e, k, pat(0, phase, k));
        check("MPI_Bcast", phase++, r, &e, 0);
    }

    /* Allreduce, not in place. */
    {
        uint64_t *r = prepare(phase);
        uint64_t n = W / 2 - 3; /* the master folds it in memory, in the budget */
        uint64_t *s = xmalloc(n * 8);
        for (uint64_t k = 0; k < n; k++)
            s[k] = val(me, 0, phase, k);
        MPI_Allreduce(s, r + 3, (int)n, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
        free(s);
        expect_t e = expect_new();
        for (uint64_t k = 0; k < n; k++)
            expect_set(&e, 3 + k, val(0, 0, phase, k) + val(1, 0, phase, k));
        check("MPI_Allreduce", phase++, r, &e, 0);
    }

    /* Gatherv to rank 1 with a gap; rank 0's buffer is not its to change. */
    {
        uint64_t *r = prepare(phase);
        int g = (int)(sbw + 1), cnt = (int)(W / 2) - g;
        int rc[2] = {cnt, cnt}, rd[2] = {cnt + g, 1};
        uint64_t *s = xmalloc((uint64_t)cnt * 8);
        for (int k = 0; k < cnt; k++)
            s[k] = val(me, 1, phase, (uint64_t)k);
        MPI_Gatherv(s, cnt, MPI_UINT64_T, r, rc, rd, MPI_UINT64_T, 1, MPI_COMM_WORLD);
        free(s);
        expect_t e = expect_new();
        for (int q = 0; me == 1 && q < 2; q++)
            for (int k = 0; k < cnt; k++)
                expect_set(&e, (uint64_t)(rd[q] + k), val(q, 1, phase, (uint64_t)k));
        check("MPI_Gatherv", phase++, r, &e, 0);
    }

    /* Scatter from rank 0 (its own block too, from its send buffer). */
    {
        uint64_t *r = prepare(phase);
        int cnt = (int)(W - 9);
        uint64_t *s = NULL;
        if (me == 0) {
            s = xmalloc(2 * (uint64_t)cnt * 8);
            for (int q = 0; q < 2; q++)
                for (int k = 0; k < cnt; k++)
                    s[(uint64_t)q * (uint64_t)cnt + (uint64_t)k] = val(0, q, phase, (uint64_t)k);
        }
        MPI_Scatter(s, cnt, MPI_UINT64_T, r + 9, cnt, MPI_UINT64_T, 0, MPI_COMM_WORLD);
        free(s);
        expect_t e = expect_new();
        for (int k = 0; k < cnt; k++)
            expect_set(&e, 9 + (uint64_t)k, val(0, me, phase, (uint64_t)k));
        check("MPI_Scatter", phase++, r, &e, 0);
    }

    /* Reduce_scatter_block. */
    {
        uint64_t *r = prepare(phase);
        uint64_t cnt = W / 4 - 2;
        uint64_t *s = xmalloc(2 * cnt * 8);
        for (uint64_t k = 0; k < 2 * cnt; k++)
            s[k] = val(me, 0, phase, k);
        MPI_Reduce_scatter_block(s, r + 2, (int)cnt, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
        free(s);
        expect_t e = expect_new();
        for (uint64_t k = 0; k < cnt; k++)
            expect_set(&e, 2 + k,
                       val(0, 0, phase, (uint64_t)me * cnt + k) +
                           val(1, 0, phase, (uint64_t)me * cnt + k));
        check("MPI_Reduce_scatter_block", phase++, r, &e, 0);
    }

    /* Neighbor_alltoall on a periodic ring of 2: both neighbours are the
     * other rank; block 0 comes from its +1 send, block 1 from its -1. */
    {
        MPI_Comm cart;
        int dims[1] = {2}, periods[1] = {1};
        MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
        uint64_t *r = prepare(phase);
        int cnt = (int)(W / 2) - 4;
        uint64_t *s = xmalloc(2 * (uint64_t)cnt * 8);
        for (int b = 0; b < 2; b++)
            for (int k = 0; k < cnt; k++)
                s[(uint64_t)b * (uint64_t)cnt + (uint64_t)k] = val(me, b, phase, (uint64_t)k);
        MPI_Neighbor_alltoall(s, cnt, MPI_UINT64_T, r + 4, cnt, MPI_UINT64_T, cart);
        free(s);
        expect_t e = expect_new();
        for (int b = 0; b < 2; b++)
            for (int k = 0; k < cnt; k++)
                expect_set(&e, 4 + (uint64_t)b * (uint64_t)cnt + (uint64_t)k,
                           val(other, 1 - b, phase, (uint64_t)k));
        check("MPI_Neighbor_alltoall", phase++, r, &e, 2 * (uint64_t)cnt * 8);
        MPI_Comm_free(&cart);
    }

    int bad = 0;
    unsigned long long allow = 0;
    MPI_Reduce(&g_bad, &bad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&g_allow, &allow, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0)
        printf("%s coll_discard: %d phases, 2 ranks x %llu MiB; reads at most %llu bytes\n",
               bad ? "FAIL" : "PASS", phase, (unsigned long long)(g_m >> 20), allow);
    MPI_Finalize();
    return bad ? 1 : 0;
}
