/*
 * poll_bench: programs that poll (MPI_Test) instead of blocking, the two
 * kinds -poll-quantum tells apart (src/lib/core/mt.c bdl_p2p_poll_failed).
 *
 *   poll_bench work [UPDATES] [BUCKET]
 *       Every rank makes UPDATES updates (default 200000) to a table spread
 *       over the ranks, as HPCC's MPIRandomAccess does: each update goes to
 *       the rank that owns its index, through a bucket per destination sent
 *       with MPI_Isend when it holds BUCKET updates (default 256); after
 *       each update the rank tests (MPI_Test) its one posted receive, and
 *       applies what came.  At the end every rank sends each other rank an
 *       empty "done" message and receives until all have come.  Checked:
 *       every rank received exactly the updates meant for it (count and sum
 *       of values, against an MPI_Allreduce of what was sent to it).
 *   poll_bench pingpong [ROUNDS]
 *       Ranks 0 and 1 exchange a 8-byte message ROUNDS times (default
 *       20000), each waiting for the other's only by MPI_Test on an
 *       MPI_Irecv; other ranks wait in MPI_Barrier.  Checked: every payload.
 *   poll_bench cross [ROUNDS]
 *       Rank r of the first half and rank r + size/2 exchange a 8-byte
 *       message ROUNDS times (default 20000), each pair at once, each rank
 *       waiting for its partner's message by MPI_Iprobe and then receiving
 *       it.  With the ranks in blocks of nodes (bdmpiexec -nn 2 -ns N) every
 *       pair spans the two nodes, and each rank polls for a message that
 *       only the other node can send (HPL's pivot exchange down a process
 *       column); at -nn 1 the same pairs are within the node (the baseline).
 *       Checked: every payload.  The size must be even.
 *   poll_bench relay [ROUNDS]
 *       A token goes ROUNDS times around the ranks in the order 0, h, h+1,
 *       ..., size-1, 1, 2, ..., h-1 (h = size/2), each rank waiting for it
 *       by MPI_Iprobe of its predecessor and then receiving it.  With two
 *       nodes of h ranks (bdmpiexec -nn 2 -ns h, h >= 2) the token crosses
 *       the nodes twice a round and its other hops are within a node: such
 *       a rank polls for a rank of its own node that waits in the master for
 *       the other node (HPL's row broadcast, whose ring partner waits for
 *       the pivot exchange down a column).  At -nn 1 every hop is within
 *       the node (the baseline).  Checked: every payload.  The size must be
 *       even and at least 4.
 *
 * Prints "RESULT <mode> <seconds> <per-unit microseconds>" and, on rank 0,
 * "PASS poll_bench <mode>"; exit 0 pass, 1 fail.  A benchmark
 * (bench/poll_bench.py compares -poll-quantum 0 with the default) and the
 * program of the test sched.poll_quantum (counts from --stats).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG_UPD 1
#define TAG_DONE 2

static int g_rank, g_size;

static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static int work(long updates, int bucket)
{
    uint64_t *buckets = calloc((size_t)g_size * (size_t)bucket, sizeof(uint64_t));
    uint64_t *sendbuf = calloc((size_t)g_size * (size_t)bucket, sizeof(uint64_t));
    uint64_t *recvbuf = calloc((size_t)bucket, sizeof(uint64_t));
    int *fill = calloc((size_t)g_size, sizeof(int));
    MPI_Request *out = malloc((size_t)g_size * sizeof(MPI_Request));
    /* [0]: count, [1]: sum of values, per destination */
    uint64_t *sent = calloc(2 * (size_t)g_size, sizeof(uint64_t));
    uint64_t *expect = calloc(2 * (size_t)g_size, sizeof(uint64_t));
    if (!buckets || !sendbuf || !recvbuf || !fill || !out || !sent || !expect) {
        fprintf(stderr, "poll_bench: out of memory\n");
        return 1;
    }
    for (int r = 0; r < g_size; r++)
        out[r] = MPI_REQUEST_NULL;
    uint64_t got_n = 0, got_sum = 0, seed = 0x9e3779b97f4a7c15ull * (uint64_t)(g_rank + 1);
    int done_from = 0;
    MPI_Request in;
    MPI_Status st;
    MPI_Irecv(recvbuf, bucket, MPI_UINT64_T, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &in);
    /* apply what came, and post the next receive; returns 1 if something did */
    int flag;
#define DRAIN()                                                                                    \
    do {                                                                                           \
        MPI_Test(&in, &flag, &st);                                                                 \
        if (flag) {                                                                                \
            int n;                                                                                 \
            MPI_Get_count(&st, MPI_UINT64_T, &n);                                                  \
            if (st.MPI_TAG == TAG_DONE)                                                            \
                done_from++;                                                                       \
            for (int j = 0; j < n; j++) {                                                          \
                got_n++;                                                                           \
                got_sum += recvbuf[j];                                                             \
            }                                                                                      \
            MPI_Irecv(recvbuf, bucket, MPI_UINT64_T, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,  \
                      &in);                                                                        \
        }                                                                                          \
    } while (flag)
    double t0 = MPI_Wtime();
    for (long i = 0; i < updates; i++) {
        DRAIN();
        uint64_t v = next_rand(&seed);
        int dst = (int)(v % (uint64_t)g_size);
        if (dst == g_rank)
            continue; /* a local update */
        sent[2 * dst]++;
        sent[2 * dst + 1] += v;
        buckets[(size_t)dst * bucket + fill[dst]++] = v;
        if (fill[dst] == bucket) {
            MPI_Wait(&out[dst], MPI_STATUS_IGNORE);
            memcpy(sendbuf + (size_t)dst * bucket, buckets + (size_t)dst * bucket,
                   (size_t)bucket * sizeof(uint64_t));
            MPI_Isend(sendbuf + (size_t)dst * bucket, bucket, MPI_UINT64_T, dst, TAG_UPD,
                      MPI_COMM_WORLD, &out[dst]);
            fill[dst] = 0;
        }
    }
    for (int dst = 0; dst < g_size; dst++) {
        if (dst == g_rank)
            continue;
        MPI_Wait(&out[dst], MPI_STATUS_IGNORE);
        memcpy(sendbuf + (size_t)dst * bucket, buckets + (size_t)dst * bucket,
               (size_t)fill[dst] * sizeof(uint64_t));
        MPI_Send(sendbuf + (size_t)dst * bucket, fill[dst], MPI_UINT64_T, dst, TAG_UPD,
                 MPI_COMM_WORLD);
        MPI_Send(NULL, 0, MPI_UINT64_T, dst, TAG_DONE, MPI_COMM_WORLD);
    }
    while (done_from < g_size - 1)
        DRAIN();
    double t = MPI_Wtime() - t0;
    MPI_Cancel(&in);
    MPI_Wait(&in, MPI_STATUS_IGNORE);
    MPI_Allreduce(sent, expect, 2 * g_size, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    int bad = got_n != expect[2 * g_rank] || got_sum != expect[2 * g_rank + 1];
    if (bad)
        fprintf(stderr,
                "rank %d: poll_bench work: received %llu updates (sum %llx), expected %llu "
                "(sum %llx)\n",
                g_rank, (unsigned long long)got_n, (unsigned long long)got_sum,
                (unsigned long long)expect[2 * g_rank], (unsigned long long)expect[2 * g_rank + 1]);
    double tmax;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("RESULT work %.4f %.4f\n", tmax, tmax * 1e6 / (double)updates);
    free(buckets);
    free(sendbuf);
    free(recvbuf);
    free(fill);
    free(out);
    free(sent);
    free(expect);
    return bad;
}

static int pingpong(long rounds)
{
    int bad = 0;
    double t0 = MPI_Wtime();
    if (g_rank < 2 && g_size >= 2) {
        int peer = 1 - g_rank;
        for (long i = 0; i < rounds; i++) {
            long v = -1, mine = i * 2 + g_rank;
            MPI_Request r, s;
            int flag = 0;
            MPI_Irecv(&v, 1, MPI_LONG, peer, 5, MPI_COMM_WORLD, &r);
            if (g_rank == 0) {
                MPI_Isend(&mine, 1, MPI_LONG, peer, 5, MPI_COMM_WORLD, &s);
                while (!flag)
                    MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
            } else {
                while (!flag)
                    MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
                MPI_Isend(&mine, 1, MPI_LONG, peer, 5, MPI_COMM_WORLD, &s);
            }
            MPI_Wait(&s, MPI_STATUS_IGNORE);
            if (v != i * 2 + peer && !bad++)
                fprintf(stderr, "rank %d: round %ld got %ld, expected %ld\n", g_rank, i, v,
                        i * 2 + peer);
        }
    }
    double t = MPI_Wtime() - t0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("RESULT pingpong %.4f %.4f\n", t, t * 1e6 / (double)rounds);
    return bad;
}

static int cross(long rounds)
{
    int bad = 0, half = g_size / 2;
    if (g_size % 2) {
        if (g_rank == 0)
            fprintf(stderr, "poll_bench cross: needs an even number of ranks\n");
        return 1;
    }
    int peer = g_rank < half ? g_rank + half : g_rank - half, first = g_rank < half;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long i = 0; i < rounds; i++) {
        long mine = i * 2 + first, v = -1;
        for (int turn = 0; turn < 2; turn++) {
            if ((turn == 0) == first) {
                MPI_Send(&mine, 1, MPI_LONG, peer, 6, MPI_COMM_WORLD);
                continue;
            }
            int flag = 0;
            while (!flag)
                MPI_Iprobe(peer, 6, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            MPI_Recv(&v, 1, MPI_LONG, peer, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        if (v != i * 2 + !first && !bad++)
            fprintf(stderr, "rank %d: round %ld got %ld, expected %ld\n", g_rank, i, v,
                    i * 2 + !first);
    }
    double t = MPI_Wtime() - t0, tmax;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("RESULT cross %.4f %.4f\n", tmax, tmax * 1e6 / (double)rounds);
    return bad;
}

/* The ring order 0, h, ..., size-1, 1, ..., h-1: position of rank r, and
 * the rank at position p. */
static int relay_pos(int r, int h) { return r == 0 ? 0 : r >= h ? r - h + 1 : r + h; }
static int relay_rank(int p, int h) { return p == 0 ? 0 : p <= h ? p + h - 1 : p - h; }

static int relay(long rounds)
{
    int bad = 0, h = g_size / 2;
    if (g_size % 2 || g_size < 4) {
        if (g_rank == 0)
            fprintf(stderr, "poll_bench relay: needs an even number of ranks, at least 4\n");
        return 1;
    }
    int pos = relay_pos(g_rank, h);
    int prev = relay_rank((pos + g_size - 1) % g_size, h), next = relay_rank((pos + 1) % g_size, h);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long i = 0; i < rounds; i++) {
        long v = i * g_size + pos;
        if (pos != 0) {
            int flag = 0;
            while (!flag)
                MPI_Iprobe(prev, 7, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            MPI_Recv(&v, 1, MPI_LONG, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (v != i * g_size + pos - 1 && !bad++)
                fprintf(stderr, "rank %d: round %ld got %ld, expected %ld\n", g_rank, i, v,
                        i * g_size + pos - 1);
            v++;
        }
        MPI_Send(&v, 1, MPI_LONG, next, 7, MPI_COMM_WORLD);
        if (pos == 0) {
            int flag = 0;
            while (!flag)
                MPI_Iprobe(prev, 7, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            MPI_Recv(&v, 1, MPI_LONG, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (v != i * g_size + g_size - 1 && !bad++)
                fprintf(stderr, "rank 0: round %ld got %ld, expected %ld\n", i, v,
                        i * g_size + g_size - 1);
        }
    }
    double t = MPI_Wtime() - t0, tmax;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("RESULT relay %.4f %.4f\n", tmax, tmax * 1e6 / (double)rounds);
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    const char *mode = argc > 1 ? argv[1] : "work";
    int bad;
    if (!strcmp(mode, "work"))
        bad = work(argc > 2 ? atol(argv[2]) : 200000, argc > 3 ? atoi(argv[3]) : 256);
    else if (!strcmp(mode, "pingpong"))
        bad = pingpong(argc > 2 ? atol(argv[2]) : 20000);
    else if (!strcmp(mode, "cross"))
        bad = cross(argc > 2 ? atol(argv[2]) : 20000);
    else if (!strcmp(mode, "relay"))
        bad = relay(argc > 2 ? atol(argv[2]) : 20000);
    else {
        if (g_rank == 0)
            fprintf(stderr, "usage: poll_bench work [UPDATES] [BUCKET] | pingpong [ROUNDS] | cross "
                            "[ROUNDS] | relay [ROUNDS]\n");
        MPI_Finalize();
        return 2;
    }
    int anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (g_rank == 0 && !anybad)
        printf("PASS poll_bench %s\n", mode);
    MPI_Finalize();
    return anybad != 0;
}
