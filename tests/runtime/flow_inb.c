/* Bounded staging of the nonblocking gathers, scatters, allgathers and
 * broadcasts (issue 17, session 19): MPI_Iallgather(v), MPI_Ibcast,
 * MPI_Igather(v) and MPI_Iscatter(v) under -coll-stage, every byte checked.
 * Rank i's block in round k is SIZE bytes (the v forms: SIZE + (7i + 3k) %
 * 4096, rank 2's empty), each byte a pattern of (i, k, offset); a
 * broadcast's buffer is SIZE bytes of its root's pattern.  Usage:
 *   flow_inb OP N SIZE [HOW]
 * OP: iallgather, iallgatherv (blocks in reverse rank order in the receive
 * buffer), iallgather_ip (in place), ibcast, igather (MPI_Igatherv, root k
 * % size), iscatter (MPI_Iscatterv, root k % size), mix (all four at once on
 * MPI_COMM_WORLD, completed one by one: even ranks in the order started,
 * odd ranks the other way round), recv (MPI_Iallgather; rank 1 receives
 * from rank 0 before its MPI_Wait, rank 0 sends only after its own: MPI
 * says both complete), persist (MPI_Allgather_init and MPI_Bcast_init,
 * started N times).
 * HOW: wait (default: compute, then MPI_Wait), test (an MPI_Test loop),
 * late (rank r computes longer the lower its rank, then waits).
 * Prints "flow_inb OP: ok" on rank 0.  Exit 0 pass, 1 fail. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_rank, g_size, g_vec, g_bad;
static size_t g_sz;
static const char *g_how = "wait";

static unsigned char pat(int i, int k, size_t b)
{
    return (unsigned char)(i * 31 + k * 7 + b * 13 + (b >> 9));
}

static size_t blen(int i, int k)
{
    if (!g_vec)
        return g_sz;
    return i == 2 ? 0 : g_sz + (size_t)((7 * i + 3 * k) % 4096);
}

/* Touch memory of its own for a while: the rank computes while its
 * collective is pending. */
static void compute(int units)
{
    static volatile unsigned char scratch[1 << 16];
    for (int u = 0; u < units; u++)
        for (size_t b = 0; b < sizeof scratch; b++)
            scratch[b] = (unsigned char)(scratch[b] + b + (size_t)u);
}

static void complete(MPI_Request *r)
{
    if (!strcmp(g_how, "test")) {
        int flag = 0;
        while (!flag) {
            MPI_Test(r, &flag, MPI_STATUS_IGNORE);
            if (!flag)
                compute(1);
        }
        return;
    }
    compute(!strcmp(g_how, "late") ? 4 * (g_size - g_rank) : 2);
    MPI_Wait(r, MPI_STATUS_IGNORE);
}

static void check(const char *what, int k, int from, const unsigned char *p, size_t n)
{
    for (size_t b = 0; b < n; b++)
        if (p[b] != pat(from, k, b)) {
            fprintf(stderr,
                    "flow_inb %s: rank %d, round %d: block of rank %d wrong at byte %zu "
                    "(%u, not %u)\n",
                    what, g_rank, k, from, b, p[b], pat(from, k, b));
            g_bad = 1;
            return;
        }
}

/* The blocks of an allgather or gather: counts, displacements (reverse
 * rank order when rev), the total. */
typedef struct {
    int *cnt, *dsp;
    size_t total;
    unsigned char *out, *in;
} blocks_t;

static void blocks_init(blocks_t *x, int k, int rev, int recv)
{
    x->cnt = malloc(sizeof(int) * (size_t)g_size);
    x->dsp = malloc(sizeof(int) * (size_t)g_size);
    x->total = 0;
    for (int j = 0; j < g_size; j++) {
        int r = rev ? g_size - 1 - j : j;
        x->cnt[r] = (int)blen(r, k);
        x->dsp[r] = (int)x->total;
        x->total += (size_t)x->cnt[r];
    }
    size_t mine = blen(g_rank, k);
    x->out = malloc(mine + 1);
    for (size_t b = 0; b < mine; b++)
        x->out[b] = pat(g_rank, k, b);
    x->in = recv ? calloc(x->total + 1, 1) : NULL;
}

static void blocks_check(blocks_t *x, const char *what, int k)
{
    for (int j = 0; j < g_size; j++)
        check(what, k, j, x->in + x->dsp[j], (size_t)x->cnt[j]);
}

static void blocks_free(blocks_t *x)
{
    free(x->cnt);
    free(x->dsp);
    free(x->out);
    free(x->in);
}

static void one_allgather(const char *what, int k, int inplace)
{
    blocks_t x;
    blocks_init(&x, k, g_vec, 1);
    MPI_Request r;
    if (inplace) {
        memcpy(x.in + x.dsp[g_rank], x.out, (size_t)x.cnt[g_rank]);
        MPI_Iallgather(MPI_IN_PLACE, 0, MPI_BYTE, x.in, (int)g_sz, MPI_BYTE, MPI_COMM_WORLD, &r);
    } else if (g_vec) {
        MPI_Iallgatherv(x.out, x.cnt[g_rank], MPI_BYTE, x.in, x.cnt, x.dsp, MPI_BYTE,
                        MPI_COMM_WORLD, &r);
    } else {
        MPI_Iallgather(x.out, (int)g_sz, MPI_BYTE, x.in, (int)g_sz, MPI_BYTE, MPI_COMM_WORLD, &r);
    }
    complete(&r);
    blocks_check(&x, what, k);
    blocks_free(&x);
}

static unsigned char *bcast_buf(int k, int root)
{
    unsigned char *b = malloc(g_sz + 1);
    for (size_t i = 0; i < g_sz; i++)
        b[i] = g_rank == root ? pat(root, k, i) : 0;
    return b;
}

static void one_bcast(const char *what, int k)
{
    int root = k % g_size;
    unsigned char *b = bcast_buf(k, root);
    MPI_Request r;
    MPI_Ibcast(b, (int)g_sz, MPI_BYTE, root, MPI_COMM_WORLD, &r);
    complete(&r);
    check(what, k, root, b, g_sz);
    free(b);
}

static void one_gather(const char *what, int k)
{
    int root = k % g_size;
    blocks_t x;
    blocks_init(&x, k, 1, g_rank == root);
    MPI_Request r;
    MPI_Igatherv(x.out, x.cnt[g_rank], MPI_BYTE, x.in, x.cnt, x.dsp, MPI_BYTE, root, MPI_COMM_WORLD,
                 &r);
    complete(&r);
    if (g_rank == root)
        blocks_check(&x, what, k);
    blocks_free(&x);
}

static void one_scatter(const char *what, int k)
{
    int root = k % g_size;
    blocks_t x;
    blocks_init(&x, k, 1, 0);
    unsigned char *all = NULL;
    if (g_rank == root) { /* block j of the root's buffer: rank j's pattern */
        all = malloc(x.total + 1);
        for (int j = 0; j < g_size; j++)
            for (size_t b = 0; b < (size_t)x.cnt[j]; b++)
                all[x.dsp[j] + b] = pat(j, k, b);
    }
    size_t mine = (size_t)x.cnt[g_rank];
    unsigned char *in = calloc(mine + 1, 1);
    MPI_Request r;
    MPI_Iscatterv(all, x.cnt, x.dsp, MPI_BYTE, in, (int)mine, MPI_BYTE, root, MPI_COMM_WORLD, &r);
    complete(&r);
    check(what, k, g_rank, in, mine);
    free(in);
    free(all);
    blocks_free(&x);
}

/* All four at once, completed in an order that differs between ranks. */
static void one_mix(const char *what, int k)
{
    int root = (k + 1) % g_size;
    blocks_t ag, ga, sc;
    blocks_init(&ag, k, 0, 1);
    blocks_init(&ga, k, 1, g_rank == root);
    blocks_init(&sc, k, 0, 0);
    unsigned char *b = bcast_buf(k, root), *all = NULL;
    if (g_rank == root) {
        all = malloc(sc.total + 1);
        for (int j = 0; j < g_size; j++)
            for (size_t x = 0; x < (size_t)sc.cnt[j]; x++)
                all[sc.dsp[j] + x] = pat(j, k, x);
    }
    size_t mine = (size_t)sc.cnt[g_rank];
    unsigned char *in = calloc(mine + 1, 1);
    MPI_Request r[4];
    MPI_Iallgather(ag.out, (int)g_sz, MPI_BYTE, ag.in, (int)g_sz, MPI_BYTE, MPI_COMM_WORLD, &r[0]);
    MPI_Ibcast(b, (int)g_sz, MPI_BYTE, root, MPI_COMM_WORLD, &r[1]);
    MPI_Igatherv(ga.out, ga.cnt[g_rank], MPI_BYTE, ga.in, ga.cnt, ga.dsp, MPI_BYTE, root,
                 MPI_COMM_WORLD, &r[2]);
    MPI_Iscatterv(all, sc.cnt, sc.dsp, MPI_BYTE, in, (int)mine, MPI_BYTE, root, MPI_COMM_WORLD,
                  &r[3]);
    for (int i = 0; i < 4; i++)
        complete(&r[g_rank % 2 ? 3 - i : i]);
    blocks_check(&ag, what, k);
    check(what, k, root, b, g_sz);
    if (g_rank == root)
        blocks_check(&ga, what, k);
    check(what, k, g_rank, in, mine);
    free(in);
    free(all);
    free(b);
    blocks_free(&ag);
    blocks_free(&ga);
    blocks_free(&sc);
}

/* Rank 1 receives from rank 0 before it waits; rank 0 sends after its wait. */
static void one_recv(const char *what, int k)
{
    blocks_t x;
    blocks_init(&x, k, 0, 1);
    MPI_Request r;
    MPI_Iallgather(x.out, (int)g_sz, MPI_BYTE, x.in, (int)g_sz, MPI_BYTE, MPI_COMM_WORLD, &r);
    int token = 0;
    if (g_rank == 1)
        MPI_Recv(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    if (g_rank == 0) {
        token = 42 + k;
        MPI_Send(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
    }
    if (g_rank == 1 && token != 42 + k) {
        fprintf(stderr, "flow_inb %s: rank 1 received %d\n", what, token);
        g_bad = 1;
    }
    blocks_check(&x, what, k);
    blocks_free(&x);
}

/* Persistent forms: started n times (each start a nonblocking call). */
static void persist(const char *what, int n)
{
    blocks_t x;
    unsigned char *out = malloc(g_sz + 1), *b = malloc(g_sz + 1);
    blocks_init(&x, 0, 0, 1);
    MPI_Request r[2];
    MPI_Allgather_init(out, (int)g_sz, MPI_BYTE, x.in, (int)g_sz, MPI_BYTE, MPI_COMM_WORLD,
                       MPI_INFO_NULL, &r[0]);
    MPI_Bcast_init(b, (int)g_sz, MPI_BYTE, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
    for (int k = 0; k < n; k++) {
        for (size_t i = 0; i < g_sz; i++) {
            out[i] = pat(g_rank, k, i);
            b[i] = g_rank == 0 ? pat(0, k, i) : 0;
        }
        memset(x.in, 0, x.total);
        MPI_Startall(2, r);
        complete(&r[g_rank % 2]);
        complete(&r[1 - g_rank % 2]);
        blocks_check(&x, what, k);
        check(what, k, 0, b, g_sz);
    }
    MPI_Request_free(&r[0]);
    MPI_Request_free(&r[1]);
    free(out);
    free(b);
    blocks_free(&x);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    if (argc < 4 || g_size < 3) {
        if (!g_rank)
            fprintf(stderr, "usage: flow_inb OP N SIZE [wait|test|late], at least 3 ranks\n");
        MPI_Finalize();
        return 1;
    }
    const char *op = argv[1];
    int n = atoi(argv[2]);
    g_sz = (size_t)atol(argv[3]);
    if (argc > 4)
        g_how = argv[4];
    g_vec = !strcmp(op, "iallgatherv") || !strcmp(op, "igather") || !strcmp(op, "iscatter");
    for (int k = 0; k < n; k++) {
        if (!strcmp(op, "iallgather") || !strcmp(op, "iallgatherv"))
            one_allgather(op, k, 0);
        else if (!strcmp(op, "iallgather_ip"))
            one_allgather(op, k, 1);
        else if (!strcmp(op, "ibcast"))
            one_bcast(op, k);
        else if (!strcmp(op, "igather"))
            one_gather(op, k);
        else if (!strcmp(op, "iscatter"))
            one_scatter(op, k);
        else if (!strcmp(op, "mix"))
            one_mix(op, k);
        else if (!strcmp(op, "recv"))
            one_recv(op, k);
        else if (!strcmp(op, "persist")) {
            persist(op, n);
            break;
        } else {
            if (!g_rank)
                fprintf(stderr, "flow_inb: unknown OP %s\n", op);
            g_bad = 1;
            break;
        }
    }
    int bad = 0;
    MPI_Allreduce(&g_bad, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!g_rank && !bad)
        printf("flow_inb %s: ok\n", op);
    MPI_Finalize();
    return bad ? 1 : 0;
}
