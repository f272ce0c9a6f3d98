/* Large messages between nodes without spill files (-net-direct, issue 12):
 * run at -nn 2 -ns 2, world ranks 0 and 1 on node 0, 2 and 3 on node 1.
 * Every byte received is checked against the pattern of its sender, tag
 * and size.  Modes (argv[1]):
 *   posted    rank 2 has posted its receives before rank 0 sends messages of
 *             odd sizes (64 KiB to 4 MiB + 17); then the other way round,
 *             with blocking receives that wait in the master;
 *   mid       as posted's first half, messages of 4 KiB + 1 to 64 KiB - 1
 *             (above -msg-threshold, 4K): no spill file either (--stats
 *             SENDS_FILE 0; they went through spill files on both nodes
 *             while -net-direct's default was 64K, before session 27);
 *   stream    windows of 8 nonblocking 1 MiB sends to receives posted first
 *             (--stats: written straight into the receive buffers, all 32
 *             unless the machine keeps the receiver off its CPU for 50 ms);
 *   late      rank 2 computes for 50 ms before it posts its receive, so the
 *             sender's wait for it runs out and the data goes to a spill
 *             file on node 1; then a receive posted 1 ms late;
 *   unloaded  (-nr 1 -mem small) rank 2 waits for rank 3 while rank 3
 *             touches enough memory to unload it, and rank 0's message to
 *             rank 2 arrives meanwhile; rank 2 receives it into a buffer
 *             that was unloaded (the data waits in a spill file on node 1);
 *             then, unloaded again, it posts a receive before rank 0 sends,
 *             into the buffer still on storage;
 *   partial   (-nr 1 -mem small -mem-strategy lrlw) rank 0's send buffer was
 *             unloaded while it waited (rank 1 touched memory) and only its
 *             first half touched again, so it is partly on storage when
 *             rank 0 sends it;
 *   anysrc    rank 2 receives with MPI_ANY_SOURCE from rank 0 (remote,
 *             large, two messages of one tag: they must arrive in order),
 *             rank 3 (local, large) and rank 1 (remote, small);
 *   types     a vector (noncontiguous) send between nodes, a contiguous
 *             send received into a vector type, and a truncated receive
 *             (MPI_ERR_TRUNCATE, the prefix delivered).
 * Prints "PASS net_direct MODE" and exits 0, else names what differed and
 * exits 1. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int g_rank, g_bad;

static unsigned char pat(int src, int tag, size_t n, size_t i)
{
    return (unsigned char)((i * 131u) ^ (i >> 9) ^ (size_t)(src * 7 + tag * 13) ^ n);
}

static void fill(unsigned char *b, int src, int tag, size_t n)
{
    for (size_t i = 0; i < n; i++)
        b[i] = pat(src, tag, n, i);
}

static void check(const unsigned char *b, int src, int tag, size_t n, size_t len, const char *what)
{
    for (size_t i = 0; i < len; i++)
        if (b[i] != pat(src, tag, n, i)) {
            fprintf(stderr, "rank %d: %s: byte %zu of %zu from rank %d tag %d is %u, not %u\n",
                    g_rank, what, i, n, src, tag, b[i], pat(src, tag, n, i));
            g_bad++;
            return;
        }
}

static void busy_ms(int ms)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

/* Write every page of p (through a volatile pointer: a memset of memory
 * that is only freed afterwards may be left out by the compiler). */
static void touch(unsigned char *p, size_t n, int v)
{
    volatile unsigned char *q = p;
    for (size_t i = 0; i < n; i += 4096)
        q[i] = (unsigned char)v;
}

static unsigned char *xmalloc(size_t n)
{
    unsigned char *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "rank %d: out of memory\n", g_rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

static const size_t g_sizes[] = {65536, 65537, 300001, (1u << 20) + 3, (4u << 20) + 17};
#define NSIZES (sizeof g_sizes / sizeof g_sizes[0])

/* Rank 2 posts its receives into b[k] (sz[k] bytes, tag k) before rank 0
 * sends them; rank 2 checks every byte. */
static void to_posted(unsigned char **b, const size_t *sz, size_t n, const char *what)
{
    MPI_Request q[8];
    if (g_rank == 2)
        for (size_t k = 0; k < n; k++)
            MPI_Irecv(b[k], (int)sz[k], MPI_BYTE, 0, (int)k, MPI_COMM_WORLD, &q[k]);
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank == 0)
        for (size_t k = 0; k < n; k++) {
            fill(b[k], 0, (int)k, sz[k]);
            MPI_Send(b[k], (int)sz[k], MPI_BYTE, 2, (int)k, MPI_COMM_WORLD);
        }
    if (g_rank == 2) {
        MPI_Waitall((int)n, q, MPI_STATUSES_IGNORE);
        for (size_t k = 0; k < n; k++)
            check(b[k], 0, (int)k, sz[k], sz[k], what);
    }
}

static void posted(void)
{
    unsigned char *b[NSIZES];
    for (size_t k = 0; k < NSIZES; k++)
        b[k] = xmalloc(g_sizes[k]);
    to_posted(b, g_sizes, NSIZES, "posted");
    /* the other way: blocking receives, which wait in the master */
    for (size_t k = 0; k < NSIZES; k++) {
        if (g_rank == 3) {
            fill(b[k], 3, (int)k, g_sizes[k]);
            MPI_Send(b[k], (int)g_sizes[k], MPI_BYTE, 1, (int)k, MPI_COMM_WORLD);
        } else if (g_rank == 1) {
            memset(b[k], 0, g_sizes[k]);
            MPI_Status st;
            MPI_Recv(b[k], (int)g_sizes[k], MPI_BYTE, 3, (int)k, MPI_COMM_WORLD, &st);
            int c = -1;
            MPI_Get_count(&st, MPI_BYTE, &c);
            if (c != (int)g_sizes[k]) {
                fprintf(stderr, "rank 1: count %d, not %zu\n", c, g_sizes[k]);
                g_bad++;
            }
            check(b[k], 3, (int)k, g_sizes[k], g_sizes[k], "blocking");
        }
    }
    for (size_t k = 0; k < NSIZES; k++)
        free(b[k]);
}

/* Windows of nonblocking sends, as a bandwidth test makes them: every
 * message must be written straight into its receive buffer (the second
 * envelope of a round once found the receiver just made runnable, not
 * yet running, and sent its message to a spill file). */
static void stream(void)
{
    enum { W = 8, ROUNDS = 4 };
    size_t n = 1u << 20;
    unsigned char *b[W];
    MPI_Request q[W];
    for (int k = 0; k < W; k++)
        b[k] = xmalloc(n);
    for (int r = 0; r < ROUNDS; r++) {
        if (g_rank == 0) {
            for (int k = 0; k < W; k++) {
                fill(b[k], 0, r * W + k, n);
                MPI_Isend(b[k], (int)n, MPI_BYTE, 2, r * W + k, MPI_COMM_WORLD, &q[k]);
            }
            MPI_Waitall(W, q, MPI_STATUSES_IGNORE);
        } else if (g_rank == 2) {
            for (int k = 0; k < W; k++)
                MPI_Irecv(b[k], (int)n, MPI_BYTE, 0, r * W + k, MPI_COMM_WORLD, &q[k]);
            MPI_Waitall(W, q, MPI_STATUSES_IGNORE);
            for (int k = 0; k < W; k++)
                check(b[k], 0, r * W + k, n, n, "stream");
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    for (int k = 0; k < W; k++)
        free(b[k]);
}

static void late(void)
{
    size_t n = (2u << 20) + 5;
    unsigned char *b = xmalloc(n);
    for (int delay = 50; delay >= 1; delay -= 49) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (g_rank == 0) {
            fill(b, 0, delay, n);
            MPI_Send(b, (int)n, MPI_BYTE, 2, delay, MPI_COMM_WORLD);
        } else if (g_rank == 2) {
            busy_ms(delay);
            memset(b, 0, n);
            MPI_Recv(b, (int)n, MPI_BYTE, 0, delay, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            check(b, 0, delay, n, n, "late");
        }
    }
    free(b);
}

/* -nr 1 and a budget of a few MiB on each node. */
static void unloaded(void)
{
    /* n2: within the part of a message that leaves at once (2 MiB), so it
     * waits on node 1 however long making the buffer resident takes (a
     * larger one's sender may stop waiting and send the rest to a file) */
    size_t n = (3u << 20) + 11, n2 = (2u << 20) - 3;
    unsigned char *b = xmalloc(n), *big = NULL;
    if (g_rank == 2) {
        memset(b, 0x5a, n); /* resident, then unloaded while we wait */
        char c = 0;
        MPI_Send(&c, 1, MPI_CHAR, 3, 96, MPI_COMM_WORLD); /* rank 3 may push us out now */
        MPI_Recv(&c, 1, MPI_CHAR, 3, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(b, (int)n, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check(b, 0, 7, n, n, "unloaded");
        /* unloaded again; then a receive posted before the message comes,
         * into the buffer still on storage (made resident when it asks) */
        MPI_Recv(&c, 1, MPI_CHAR, 3, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&c, 1, MPI_CHAR, 0, 97, MPI_COMM_WORLD);
        MPI_Recv(b, (int)n2, MPI_BYTE, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check(b, 0, 9, n2, n2, "unloaded, posted");
        MPI_Send(&c, 1, MPI_CHAR, 3, 95, MPI_COMM_WORLD);
    } else if (g_rank == 3) {
        big = xmalloc(6u << 20);
        char c = 1;
        MPI_Recv(&c, 1, MPI_CHAR, 2, 96, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int k = 0; k < 2; k++) {
            touch(big, 6u << 20, k + 1); /* pushes rank 2 out of memory */
            busy_ms(20);                 /* rank 0's message arrives while rank 2 waits */
            MPI_Send(&c, 1, MPI_CHAR, 2, 99, MPI_COMM_WORLD);
        }
        /* waits (holds no run slot) while rank 2 receives: rank 2 can take
         * the message as soon as it comes */
        MPI_Recv(&c, 1, MPI_CHAR, 2, 95, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (g_rank == 0) {
        fill(b, 0, 7, n);
        MPI_Send(b, (int)n, MPI_BYTE, 2, 7, MPI_COMM_WORLD);
        char c;
        MPI_Recv(&c, 1, MPI_CHAR, 2, 97, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        fill(b, 0, 9, n2);
        MPI_Send(b, (int)n2, MPI_BYTE, 2, 9, MPI_COMM_WORLD);
    }
    free(big);
    free(b);
}

static void partial(void)
{
    size_t n = (5u << 20) + 1;
    unsigned char *b = xmalloc(n), *big = NULL;
    char c = 0;
    if (g_rank == 0) {
        fill(b, 0, 8, n);
        /* rank 1 runs and touches memory: ours is unloaded meanwhile */
        MPI_Send(&c, 1, MPI_CHAR, 1, 96, MPI_COMM_WORLD);
        MPI_Recv(&c, 1, MPI_CHAR, 1, 98, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        /* touch the first half again: under lrlw only that part loads */
        unsigned sum = 0;
        for (size_t i = 0; i < n / 2; i += 4096)
            sum += b[i];
        if (sum == 12345678u)
            fprintf(stderr, "(unlikely sum)\n");
        MPI_Send(b, (int)n, MPI_BYTE, 2, 8, MPI_COMM_WORLD);
    } else if (g_rank == 1) {
        big = xmalloc(4u << 20);
        MPI_Recv(&c, 1, MPI_CHAR, 0, 96, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        touch(big, 4u << 20, 2);
        MPI_Send(&c, 1, MPI_CHAR, 0, 98, MPI_COMM_WORLD);
    } else if (g_rank == 2) {
        memset(b, 0, n);
        MPI_Recv(b, (int)n, MPI_BYTE, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check(b, 0, 8, n, n, "partial");
    }
    free(big);
    free(b);
}

static void anysrc(void)
{
    size_t big = (1u << 20) + 9, small = 100;
    unsigned char *b = xmalloc(big);
    if (g_rank == 0) {
        for (int k = 0; k < 2; k++) { /* one tag: they must arrive in order */
            fill(b, 0, 20 + k, big);
            MPI_Send(b, (int)big, MPI_BYTE, 2, 20, MPI_COMM_WORLD);
        }
    } else if (g_rank == 1) {
        fill(b, 1, 21, small);
        MPI_Send(b, (int)small, MPI_BYTE, 2, 21, MPI_COMM_WORLD);
    } else if (g_rank == 3) {
        fill(b, 3, 22, big);
        MPI_Send(b, (int)big, MPI_BYTE, 2, 22, MPI_COMM_WORLD);
    } else if (g_rank == 2) {
        int from0 = 0, seen1 = 0, seen3 = 0;
        for (int k = 0; k < 4; k++) {
            MPI_Status st;
            memset(b, 0, big);
            MPI_Recv(b, (int)big, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            int c = -1;
            MPI_Get_count(&st, MPI_BYTE, &c);
            if (st.MPI_SOURCE == 0) {
                check(b, 0, 20 + from0, big, big, "anysrc from rank 0");
                from0++;
            } else if (st.MPI_SOURCE == 1) {
                check(b, 1, 21, small, (size_t)c, "anysrc from rank 1");
                seen1 += c == (int)small;
            } else if (st.MPI_SOURCE == 3) {
                check(b, 3, 22, big, (size_t)c, "anysrc from rank 3");
                seen3 += c == (int)big;
            }
        }
        if (from0 != 2 || seen1 != 1 || seen3 != 1) {
            fprintf(stderr, "rank 2: got %d from rank 0, %d from 1, %d from 3\n", from0, seen1,
                    seen3);
            g_bad++;
        }
    }
    free(b);
}

static void types(void)
{
    /* 2 of every 3 ints: a vector type, 1 MiB of data */
    int nblk = 1 << 17;
    MPI_Datatype vec;
    MPI_Type_vector(nblk, 2, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    size_t words = (size_t)nblk * 3, data = (size_t)nblk * 2 * sizeof(int);
    int *v = (int *)xmalloc(words * sizeof(int));
    unsigned char *b = xmalloc(data);
    if (g_rank == 0) {
        for (size_t i = 0; i < words; i++)
            v[i] = (int)(i * 2654435761u);
        MPI_Send(v, 1, vec, 2, 30, MPI_COMM_WORLD); /* noncontiguous send */
        fill(b, 0, 31, data);
        MPI_Send(b, (int)data, MPI_BYTE, 2, 31, MPI_COMM_WORLD); /* into a vector */
        fill(b, 0, 32, data);
        MPI_Send(b, (int)data, MPI_BYTE, 2, 32, MPI_COMM_WORLD); /* truncated */
    } else if (g_rank == 2) {
        int *got = (int *)b;
        MPI_Recv(got, (int)(data / sizeof(int)), MPI_INT, 0, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (size_t j = 0, i = 0; i < words; i++)
            if (i % 3 != 2 && got[j++] != (int)(i * 2654435761u)) {
                fprintf(stderr, "rank 2: vector send: word %zu differs\n", i);
                g_bad++;
                break;
            }
        memset(v, 0, words * sizeof(int));
        MPI_Recv(v, 1, vec, 0, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        unsigned char *p = (unsigned char *)v;
        for (size_t j = 0, i = 0; i < words && !g_bad; i++) {
            if (i % 3 == 2) {
                if (v[i] != 0) {
                    fprintf(stderr, "rank 2: vector receive wrote the gap at word %zu\n", i);
                    g_bad++;
                }
                continue;
            }
            for (size_t k = 0; k < sizeof(int); k++, j++)
                if (p[i * sizeof(int) + k] != pat(0, 31, data, j)) {
                    fprintf(stderr, "rank 2: vector receive: byte %zu differs\n", j);
                    g_bad++;
                    break;
                }
        }
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        memset(b, 0, data);
        MPI_Status st;
        size_t cap = data / 2 + 3;
        int rc = MPI_Recv(b, (int)cap, MPI_BYTE, 0, 32, MPI_COMM_WORLD, &st);
        int cls = -1;
        MPI_Error_class(rc, &cls);
        if (cls != MPI_ERR_TRUNCATE) {
            fprintf(stderr, "rank 2: truncated receive returned class %d\n", cls);
            g_bad++;
        }
        check(b, 0, 32, data, cap, "truncated");
        if (b[cap] != 0) {
            fprintf(stderr, "rank 2: truncated receive wrote past its buffer\n");
            g_bad++;
        }
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    }
    MPI_Type_free(&vec);
    free(v);
    free(b);
}

static void mid(void)
{
    static const size_t sz[] = {4097, 8192, 32768, 65535};
    enum { N = sizeof sz / sizeof sz[0] };
    unsigned char *b[N];
    for (size_t k = 0; k < N; k++)
        b[k] = xmalloc(sz[k]);
    to_posted(b, sz, N, "mid");
    for (size_t k = 0; k < N; k++)
        free(b[k]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "posted";
    if (size != 4) {
        if (g_rank == 0)
            fprintf(stderr, "net_direct: needs 4 ranks (-nn 2 -ns 2), not %d\n", size);
        MPI_Finalize();
        return 77;
    }
    if (!strcmp(mode, "posted"))
        posted();
    else if (!strcmp(mode, "mid"))
        mid();
    else if (!strcmp(mode, "stream"))
        stream();
    else if (!strcmp(mode, "late"))
        late();
    else if (!strcmp(mode, "unloaded"))
        unloaded();
    else if (!strcmp(mode, "partial"))
        partial();
    else if (!strcmp(mode, "anysrc"))
        anysrc();
    else if (!strcmp(mode, "types"))
        types();
    else {
        if (g_rank == 0)
            fprintf(stderr, "net_direct: unknown mode %s\n", mode);
        g_bad++;
    }
    int tot = 0;
    MPI_Allreduce(&g_bad, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0 && !tot)
        printf("PASS net_direct %s\n", mode);
    MPI_Finalize();
    return tot ? 1 : 0;
}
