/* Bounded staging of nonblocking all-to-alls (issue 17, session 17):
 * MPI_Ialltoall(v,w) under -coll-stage, every byte checked.  The piece from
 * i to j is SIZE + (7i + 13j) % 4096 bytes (MPI_Ialltoall: SIZE), its bytes
 * a pattern of (i, j, round).  Modes (argv[1]):
 *   wait N SIZE    N rounds: MPI_Ialltoallv, compute (touch a buffer of
 *                  its own for a while), MPI_Wait;
 *   test N SIZE    the same, completed by an MPI_Test loop;
 *   fixed N SIZE   MPI_Ialltoall, then MPI_Wait;
 *   w N SIZE       MPI_Ialltoallw (per-peer types: contiguous blocks of
 *                  MPI_BYTE and of a 4-byte type where the length allows);
 *   recv N SIZE    rank 0: MPI_Ialltoallv, MPI_Wait, then MPI_Send to rank
 *                  1; rank 1: MPI_Ialltoallv, MPI_Recv from rank 0, then
 *                  MPI_Wait (MPI says both complete: rank 1's receive
 *                  progresses its all-to-all); the others wait at once;
 *   probe N SIZE   the same, rank 1 polling MPI_Iprobe until rank 0's
 *                  message is there;
 *   two N SIZE     two MPI_Ialltoallv at once, completed by MPI_Waitall,
 *                  on MPI_COMM_WORLD and on a duplicate;
 *   order N SIZE   two at once, rank 0 waits for the first then the
 *                  second, the others the other way round;
 *   ipMODE N SIZE  MODE (wait, test, fixed, w, recv, probe, two) in place
 *                  (MPI_IN_PLACE, session 21): the block rank i keeps for
 *                  j is what it sends j and where j's piece lands, so the
 *                  lengths are symmetric, SIZE + 7 (i + j) % 4096, and 0
 *                  where (i + j) % 5 == 0 (i != j; not for fixed).
 * Prints "flow_ia2a MODE: ok" on rank 0.  Exit 0 pass, 1 fail. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_rank, g_size, g_fixed, g_ip;
static size_t g_sz;

static unsigned char pat(int i, int j, int k, size_t b)
{
    return (unsigned char)(i * 31 + j * 17 + k * 7 + b);
}

static size_t len(int i, int j)
{
    if (g_fixed)
        return g_sz;
    if (g_ip) /* in place: what i sends j is what i receives from j */
        return i != j && (i + j) % 5 == 0 ? 0 : g_sz + (size_t)((7 * (i + j)) % 4096);
    return g_sz + (size_t)((7 * i + 13 * j) % 4096);
}

typedef struct {
    int *sc, *sd, *rc, *rd;
    int *wsc, *wrc; /* Ialltoallw's counts (kept until completion) */
    unsigned char *out, *in;
    size_t st, rt;
} a2a_t;

static void a2a_init(a2a_t *a, int k)
{
    a->sc = malloc(sizeof(int) * (size_t)g_size);
    a->sd = malloc(sizeof(int) * (size_t)g_size);
    a->rc = malloc(sizeof(int) * (size_t)g_size);
    a->rd = malloc(sizeof(int) * (size_t)g_size);
    a->st = a->rt = 0;
    a->wsc = a->wrc = NULL;
    for (int j = 0; j < g_size; j++) {
        a->sc[j] = (int)len(g_rank, j);
        a->sd[j] = (int)a->st;
        a->st += (size_t)a->sc[j];
        a->rc[j] = (int)len(j, g_rank);
        a->rd[j] = (int)a->rt;
        a->rt += (size_t)a->rc[j];
    }
    a->out = malloc(a->st + 1);
    a->in = calloc(a->rt + 1, 1);
    for (int j = 0; j < g_size; j++)
        for (size_t b = 0; b < (size_t)a->sc[j]; b++)
            a->out[a->sd[j] + b] = pat(g_rank, j, k, b);
    if (g_ip) /* the same layout both ways (the lengths are symmetric) */
        memcpy(a->in, a->out, a->rt);
}

static int a2a_check(a2a_t *a, int k, const char *what)
{
    int bad = 0;
    for (int j = 0; j < g_size && !bad; j++)
        for (size_t b = 0; b < (size_t)a->rc[j]; b++)
            if (a->in[a->rd[j] + b] != pat(j, g_rank, k, b)) {
                fprintf(stderr,
                        "flow_ia2a %s: rank %d: round %d, piece from %d wrong at byte %zu\n", what,
                        g_rank, k, j, b);
                bad = 1;
                break;
            }
    free(a->wsc);
    free(a->wrc);
    free(a->sc);
    free(a->sd);
    free(a->rc);
    free(a->rd);
    free(a->out);
    free(a->in);
    return bad;
}

static void a2a_start(a2a_t *a, MPI_Comm comm, MPI_Request *q, MPI_Datatype *tv)
{
    if (g_ip && g_fixed) {
        MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a->in, (int)g_sz, MPI_BYTE, comm, q);
    } else if (g_ip && tv) {
        int *rcnt = a->wrc = malloc(sizeof(int) * (size_t)g_size);
        MPI_Datatype *rtv = tv + g_size;
        for (int j = 0; j < g_size; j++) {
            rtv[j] = a->rc[j] % 4 ? MPI_BYTE : MPI_INT;
            rcnt[j] = a->rc[j] / (a->rc[j] % 4 ? 1 : 4);
        }
        MPI_Ialltoallw(MPI_IN_PLACE, NULL, NULL, NULL, a->in, rcnt, a->rd, rtv, comm, q);
    } else if (g_ip) {
        MPI_Ialltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, a->in, a->rc, a->rd, MPI_BYTE,
                       comm, q);
    } else if (g_fixed) {
        MPI_Ialltoall(a->out, (int)g_sz, MPI_BYTE, a->in, (int)g_sz, MPI_BYTE, comm, q);
    } else if (tv) { /* Ialltoallw: counts in elements of per-peer types, displacements in bytes */
        int *scnt = a->wsc = malloc(sizeof(int) * (size_t)g_size);
        int *rcnt = a->wrc = malloc(sizeof(int) * (size_t)g_size);
        MPI_Datatype *rtv = tv + g_size;
        for (int j = 0; j < g_size; j++) {
            tv[j] = a->sc[j] % 4 ? MPI_BYTE : MPI_INT;
            scnt[j] = a->sc[j] / (a->sc[j] % 4 ? 1 : 4);
            rtv[j] = a->rc[j] % 4 ? MPI_BYTE : MPI_INT;
            rcnt[j] = a->rc[j] / (a->rc[j] % 4 ? 1 : 4);
        }
        MPI_Ialltoallw(a->out, scnt, a->sd, tv, a->in, rcnt, a->rd, rtv, comm, q);
    } else {
        MPI_Ialltoallv(a->out, a->sc, a->sd, MPI_BYTE, a->in, a->rc, a->rd, MPI_BYTE, comm, q);
    }
}

/* Work outside MPI between the start and the completion. */
static volatile unsigned g_sink;
static void compute(void)
{
    static unsigned char buf[1 << 20];
    for (int it = 0; it < 20; it++)
        for (size_t b = 0; b < sizeof buf; b += 64)
            g_sink += buf[b]++;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    if (argc < 4) {
        if (g_rank == 0)
            fprintf(stderr, "usage: flow_ia2a MODE ROUNDS SIZE\n");
        MPI_Finalize();
        return 1;
    }
    const char *name = argv[1], *mode = name;
    if (!strncmp(mode, "ip", 2)) { /* in place */
        g_ip = 1;
        mode += 2;
    }
    int n = atoi(argv[2]), bad = 0;
    g_sz = (size_t)atol(argv[3]);
    g_fixed = !strcmp(mode, "fixed");
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Datatype *tv = !strcmp(mode, "w") ? malloc(sizeof *tv * 2 * (size_t)g_size) : NULL;
    for (int k = 0; k < n && !bad; k++) {
        a2a_t a, b;
        MPI_Request q[2];
        a2a_init(&a, k);
        if (!strcmp(mode, "two") || !strcmp(mode, "order")) {
            a2a_init(&b, k + 100);
            a2a_start(&a, MPI_COMM_WORLD, &q[0], NULL);
            a2a_start(&b, dup, &q[1], NULL);
            compute();
            if (!strcmp(mode, "two")) {
                MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
            } else {
                int first = g_rank == 0 ? 0 : 1;
                MPI_Wait(&q[first], MPI_STATUS_IGNORE);
                MPI_Wait(&q[1 - first], MPI_STATUS_IGNORE);
            }
            bad |= a2a_check(&b, k + 100, mode);
        } else if (!strcmp(mode, "recv") || !strcmp(mode, "probe")) {
            int token = 0;
            a2a_start(&a, MPI_COMM_WORLD, &q[0], NULL);
            if (g_rank == 0) {
                MPI_Wait(&q[0], MPI_STATUS_IGNORE);
                token = 1000 + k;
                MPI_Send(&token, 1, MPI_INT, 1, 5, MPI_COMM_WORLD);
            } else if (g_rank == 1) {
                int flag = 0;
                while (!strcmp(mode, "probe") && !flag)
                    MPI_Iprobe(0, 5, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
                MPI_Recv(&token, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                bad |= token != 1000 + k;
                MPI_Wait(&q[0], MPI_STATUS_IGNORE);
            } else {
                MPI_Wait(&q[0], MPI_STATUS_IGNORE);
            }
        } else {
            a2a_start(&a, MPI_COMM_WORLD, &q[0], tv);
            compute();
            if (!strcmp(mode, "test")) {
                int flag = 0;
                while (!flag)
                    MPI_Test(&q[0], &flag, MPI_STATUS_IGNORE);
            } else {
                MPI_Wait(&q[0], MPI_STATUS_IGNORE);
            }
        }
        bad |= a2a_check(&a, k, mode);
    }
    free(tv);
    MPI_Comm_free(&dup);
    int all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (g_rank == 0 && !all)
        printf("flow_ia2a %s: ok\n", name);
    MPI_Finalize();
    return all;
}
