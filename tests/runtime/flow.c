/* Transient memory of communication inside a node (issue 17 part 2): the
 * spill quota (-spill-max) and flow control (-p2p-tokens).  Every byte
 * received is checked.  Modes (argv[1]), sizes in bytes:
 *   burst N SIZE   three rounds: rank 0 sends N messages of SIZE to rank
 *                  1, which is blocked in a receive from rank 0 of another
 *                  tag that comes last (so all N wait in spill files at
 *                  -nr 1);
 *   isends N SIZE  every rank posts N MPI_Isend of SIZE to the next rank
 *                  before it receives anything, then receives, then waits;
 *   ring N SIZE    N rounds: MPI_Send SIZE to the next rank, then MPI_Recv
 *                  from the previous one (even ranks; odd ranks receive
 *                  first, so the program is safe);
 *   blocked N SIZE rank 0 floods rank 1 with N blocking sends of SIZE
 *                  while rank 1 waits in a receive from rank 2, which
 *                  computes first (rank 0 never waits for rank 2);
 *   a2a N SIZE     N rounds of MPI_Alltoallv among all ranks, the piece
 *                  from i to j SIZE + (7i + 13j) % 4096 bytes (SIZE 0: the
 *                  pieces to rank 1 are empty);
 *   a2az N SIZE    the same with empty pieces: none from i to j when
 *                  (i + 2j) % 3 == 0 (a rank's piece to itself included);
 *   a2af N SIZE    N rounds of MPI_Alltoall of SIZE bytes per piece;
 *   a2ai N SIZE    N rounds of MPI_Alltoallv in place, the pieces between
 *                  i and j SIZE + 7(i + j) % 4096 bytes, none when
 *                  (i + j) % 5 == 0; a2aif: MPI_Alltoall in place;
 *   a2a_trunc N SIZE  an MPI_Alltoallv whose pieces are SIZE bytes, but
 *                  rank 1 expects SIZE/2 from rank 0 and SIZE*2 from rank
 *                  2: rank 1 gets MPI_ERR_TRUNCATE (errors return), every
 *                  byte that fits is right, nobody hangs;
 *   a2a_refuse N SIZE  the same, and rank 1 expects nothing from rank 3,
 *                  which sends it SIZE bytes (at least 4 ranks);
 *   gather N SIZE  N rounds of MPI_Gatherv to rank k % size, rank i's piece
 *                  SIZE + (7i) % 4096 bytes;
 *   scatter N SIZE N rounds of MPI_Scatterv from rank k % size, rank j's piece
 *                  SIZE + (7j) % 4096 bytes;
 *   self N SIZE    every rank MPI_Sends N messages of SIZE to itself, then
 *                  receives them (flow control never makes a send to the
 *                  rank itself wait);
 *   unsafe N SIZE  ranks 0 and 1 each MPI_Send N messages of SIZE to the
 *                  other before receiving: correct only if MPI_Send
 *                  buffers (unsafe for MPI, section 3.5).
 * Exit 0 pass, 1 fail. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int g_rank, g_size;

static unsigned char pat(int src, int k, size_t i) { return (unsigned char)(src * 31 + k * 7 + i); }

static void fill(unsigned char *b, size_t n, int src, int k)
{
    for (size_t i = 0; i < n; i++)
        b[i] = pat(src, k, i);
}

static int check(const unsigned char *b, size_t n, int src, int k)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != pat(src, k, i)) {
            fprintf(stderr, "flow: rank %d: message %d from %d wrong at byte %zu\n", g_rank, k, src,
                    i);
            return 1;
        }
    return 0;
}

static int burst(int n, size_t sz)
{
    int bad = 0;
    unsigned char *b = malloc(sz);
    for (int round = 0; round < 3; round++) { /* spill files given back, quota reused */
        if (g_rank == 0) {
            for (int k = 0; k < n; k++) {
                fill(b, sz, 0, round * n + k);
                MPI_Send(b, (int)sz, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            }
            MPI_Send(&n, 1, MPI_INT, 1, 2, MPI_COMM_WORLD);
        } else if (g_rank == 1) {
            int got = 0;
            MPI_Recv(&got, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int k = 0; k < got; k++) {
                memset(b, 0, sz);
                MPI_Recv(b, (int)sz, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                bad |= check(b, sz, 0, round * n + k);
            }
            bad |= got != n;
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(b);
    return bad;
}

static int isends(int n, size_t sz)
{
    int bad = 0, next = (g_rank + 1) % g_size, prev = (g_rank + g_size - 1) % g_size;
    unsigned char *out = malloc(sz * (size_t)n), *in = malloc(sz);
    MPI_Request *q = malloc(sizeof *q * (size_t)n);
    for (int k = 0; k < n; k++) {
        fill(out + (size_t)k * sz, sz, g_rank, k);
        MPI_Isend(out + (size_t)k * sz, (int)sz, MPI_BYTE, next, k, MPI_COMM_WORLD, &q[k]);
    }
    for (int k = 0; k < n; k++) {
        MPI_Recv(in, (int)sz, MPI_BYTE, prev, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        bad |= check(in, sz, prev, k);
    }
    MPI_Waitall(n, q, MPI_STATUSES_IGNORE);
    free(q);
    free(in);
    free(out);
    return bad;
}

static int ring(int n, size_t sz)
{
    int bad = 0, next = (g_rank + 1) % g_size, prev = (g_rank + g_size - 1) % g_size;
    unsigned char *out = malloc(sz), *in = malloc(sz);
    for (int k = 0; k < n; k++) {
        fill(out, sz, g_rank, k);
        if (g_rank % 2 == 0) {
            MPI_Send(out, (int)sz, MPI_BYTE, next, k, MPI_COMM_WORLD);
            MPI_Recv(in, (int)sz, MPI_BYTE, prev, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(in, (int)sz, MPI_BYTE, prev, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(out, (int)sz, MPI_BYTE, next, k, MPI_COMM_WORLD);
        }
        bad |= check(in, sz, prev, k);
    }
    free(in);
    free(out);
    return bad;
}

static int blocked(int n, size_t sz)
{
    int bad = 0;
    unsigned char *b = malloc(sz);
    if (g_rank == 0) {
        for (int k = 0; k < n; k++) {
            fill(b, sz, 0, k);
            MPI_Send(b, (int)sz, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        }
    } else if (g_rank == 1) {
        int v = 0;
        MPI_Recv(&v, 1, MPI_INT, 2, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        bad |= v != 42;
        for (int k = 0; k < n; k++) {
            memset(b, 0, sz);
            MPI_Recv(b, (int)sz, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            bad |= check(b, sz, 0, k);
        }
    } else if (g_rank == 2) {
        usleep(200 * 1000); /* rank 0 floods meanwhile */
        int v = 42;
        MPI_Send(&v, 1, MPI_INT, 1, 3, MPI_COMM_WORLD);
    }
    free(b);
    return bad;
}

static int unsafe(int n, size_t sz)
{
    int bad = 0;
    if (g_rank > 1)
        return 0;
    int peer = 1 - g_rank;
    unsigned char *b = malloc(sz);
    for (int k = 0; k < n; k++) {
        fill(b, sz, g_rank, k);
        MPI_Send(b, (int)sz, MPI_BYTE, peer, k, MPI_COMM_WORLD);
    }
    for (int k = 0; k < n; k++) {
        MPI_Recv(b, (int)sz, MPI_BYTE, peer, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        bad |= check(b, sz, peer, k);
    }
    free(b);
    return bad;
}

static int g_zeros, g_fixed, g_refuse, g_inplace; /* a2az, a2af, a2a_refuse, a2ai */

static size_t a2a_len(int i, int j, size_t sz)
{
    if (g_fixed)
        return sz;
    if (g_inplace) /* what i sends j is what i receives from j */
        return (i + j) % 5 == 0 ? 0 : sz + (size_t)((7 * (i + j)) % 4096);
    if (g_zeros && (i + 2 * j) % 3 == 0)
        return 0;
    return sz == 0 && j == 1 ? 0 : sz + (size_t)((7 * i + 13 * j) % 4096);
}

static int a2a(int n, size_t sz)
{
    int bad = 0;
    int *sc = malloc(sizeof(int) * (size_t)g_size), *sd = malloc(sizeof(int) * (size_t)g_size);
    int *rc = malloc(sizeof(int) * (size_t)g_size), *rd = malloc(sizeof(int) * (size_t)g_size);
    size_t st = 0, rt = 0;
    for (int j = 0; j < g_size; j++) {
        sc[j] = (int)a2a_len(g_rank, j, sz);
        sd[j] = (int)st;
        st += (size_t)sc[j];
        rc[j] = (int)a2a_len(j, g_rank, sz);
        rd[j] = (int)rt;
        rt += (size_t)rc[j];
    }
    unsigned char *out = malloc(st + 1), *in = malloc(rt + 1);
    for (int k = 0; k < n; k++) {
        for (int j = 0; j < g_size; j++)
            fill(out + sd[j], (size_t)sc[j], g_rank, k * 64 + j);
        memset(in, 0, rt);
        if (g_inplace) {
            memcpy(in, out, rt); /* the same layout both ways */
            if (g_fixed)
                MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, in, (int)sz, MPI_BYTE,
                             MPI_COMM_WORLD);
            else
                MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, in, rc, rd, MPI_BYTE,
                              MPI_COMM_WORLD);
        } else if (g_fixed)
            MPI_Alltoall(out, (int)sz, MPI_BYTE, in, (int)sz, MPI_BYTE, MPI_COMM_WORLD);
        else
            MPI_Alltoallv(out, sc, sd, MPI_BYTE, in, rc, rd, MPI_BYTE, MPI_COMM_WORLD);
        for (int j = 0; j < g_size; j++)
            bad |= check(in + rd[j], (size_t)rc[j], j, k * 64 + g_rank);
    }
    free(out);
    free(in);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    return bad;
}

static int a2a_trunc(size_t sz)
{
    int bad = 0;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int *sc = malloc(sizeof(int) * (size_t)g_size), *sd = malloc(sizeof(int) * (size_t)g_size);
    int *rc = malloc(sizeof(int) * (size_t)g_size), *rd = malloc(sizeof(int) * (size_t)g_size);
    for (int j = 0; j < g_size; j++) {
        sc[j] = (int)sz;
        sd[j] = j * (int)sz;
        rc[j] = g_rank == 1 && j == 0 ? (int)sz / 2 : g_rank == 1 && j == 2 ? 2 * (int)sz : (int)sz;
        if (g_refuse && g_rank == 1 && j == 3)
            rc[j] = 0;
        rd[j] = j * 2 * (int)sz;
    }
    unsigned char *out = malloc(sz * (size_t)g_size), *in = calloc(2 * sz * (size_t)g_size, 1);
    for (int j = 0; j < g_size; j++)
        fill(out + sd[j], sz, g_rank, j);
    int err = MPI_Alltoallv(out, sc, sd, MPI_BYTE, in, rc, rd, MPI_BYTE, MPI_COMM_WORLD);
    int cls = MPI_SUCCESS;
    if (err != MPI_SUCCESS)
        MPI_Error_class(err, &cls);
    if (g_rank == 1) {
        if (cls != MPI_ERR_TRUNCATE) {
            fprintf(stderr, "flow: rank 1: error class %d, expected MPI_ERR_TRUNCATE\n", cls);
            bad = 1;
        }
        bad |= check(in + rd[0], sz / 2, 0, 1) | check(in + rd[2], sz, 2, 1);
    } else if (cls != MPI_SUCCESS) {
        fprintf(stderr, "flow: rank %d: error class %d\n", g_rank, cls);
        bad = 1;
    }
    for (int j = 0; j < g_size; j++)
        if (!(g_rank == 1 && (j == 0 || j == 2 || (g_refuse && j == 3))))
            bad |= check(in + rd[j], sz, j, g_rank);
    free(out);
    free(in);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    return bad;
}

static int gather(int n, size_t sz)
{
    int bad = 0;
    int *rc = malloc(sizeof(int) * (size_t)g_size), *rd = malloc(sizeof(int) * (size_t)g_size);
    size_t rt = 0;
    for (int j = 0; j < g_size; j++) {
        rc[j] = (int)(sz + (size_t)((7 * j) % 4096));
        rd[j] = (int)rt;
        rt += (size_t)rc[j];
    }
    unsigned char *out = malloc((size_t)rc[g_rank]), *in = malloc(rt);
    for (int k = 0; k < n; k++) {
        int root = k % g_size;
        fill(out, (size_t)rc[g_rank], g_rank, k);
        memset(in, 0, rt);
        MPI_Gatherv(out, rc[g_rank], MPI_BYTE, in, rc, rd, MPI_BYTE, root, MPI_COMM_WORLD);
        for (int j = 0; g_rank == root && j < g_size; j++)
            bad |= check(in + rd[j], (size_t)rc[j], j, k);
    }
    free(out);
    free(in);
    free(rc);
    free(rd);
    return bad;
}

static int scatter(int n, size_t sz)
{
    int bad = 0;
    int *sc = malloc(sizeof(int) * (size_t)g_size), *sd = malloc(sizeof(int) * (size_t)g_size);
    size_t st = 0;
    for (int j = 0; j < g_size; j++) {
        sc[j] = (int)(sz + (size_t)((7 * j) % 4096));
        sd[j] = (int)st;
        st += (size_t)sc[j];
    }
    unsigned char *out = malloc(st), *in = malloc((size_t)sc[g_rank]);
    for (int k = 0; k < n; k++) {
        int root = k % g_size;
        for (int j = 0; g_rank == root && j < g_size; j++)
            fill(out + sd[j], (size_t)sc[j], j, k);
        memset(in, 0, (size_t)sc[g_rank]);
        MPI_Scatterv(out, sc, sd, MPI_BYTE, in, sc[g_rank], MPI_BYTE, root, MPI_COMM_WORLD);
        bad |= check(in, (size_t)sc[g_rank], g_rank, k);
    }
    free(out);
    free(in);
    free(sc);
    free(sd);
    return bad;
}

static int self(int n, size_t sz)
{
    int bad = 0;
    unsigned char *b = malloc(sz);
    for (int k = 0; k < n; k++) {
        fill(b, sz, g_rank, k);
        MPI_Send(b, (int)sz, MPI_BYTE, g_rank, k, MPI_COMM_WORLD);
    }
    for (int k = 0; k < n; k++) {
        MPI_Recv(b, (int)sz, MPI_BYTE, g_rank, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        bad |= check(b, sz, g_rank, k);
    }
    free(b);
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    if (argc < 4 || g_size < 3) {
        if (g_rank == 0)
            fprintf(stderr, "usage: flow "
                            "burst|isends|ring|blocked|a2a|a2az|a2af|a2ai|a2aif|a2a_trunc|a2a_"
                            "refuse|gather|scatter|self|unsafe N SIZE (at "
                            "least 3 ranks)\n");
        MPI_Finalize();
        return 1;
    }
    int n = atoi(argv[2]);
    size_t sz = (size_t)atol(argv[3]);
    int bad;
    if (!strcmp(argv[1], "burst"))
        bad = burst(n, sz);
    else if (!strcmp(argv[1], "isends"))
        bad = isends(n, sz);
    else if (!strcmp(argv[1], "ring"))
        bad = ring(n, sz);
    else if (!strcmp(argv[1], "blocked"))
        bad = blocked(n, sz);
    else if (!strcmp(argv[1], "a2a"))
        bad = a2a(n, sz);
    else if (!strcmp(argv[1], "a2az") && (g_zeros = 1))
        bad = a2a(n, sz);
    else if (!strcmp(argv[1], "a2af") && (g_fixed = 1))
        bad = a2a(n, sz);
    else if (!strcmp(argv[1], "a2ai") && (g_inplace = 1))
        bad = a2a(n, sz);
    else if (!strcmp(argv[1], "a2aif") && (g_inplace = g_fixed = 1))
        bad = a2a(n, sz);
    else if (!strcmp(argv[1], "a2a_trunc"))
        bad = a2a_trunc(sz);
    else if (!strcmp(argv[1], "a2a_refuse") && (g_refuse = 1) && g_size >= 4)
        bad = a2a_trunc(sz);
    else if (!strcmp(argv[1], "gather"))
        bad = gather(n, sz);
    else if (!strcmp(argv[1], "scatter"))
        bad = scatter(n, sz);
    else if (!strcmp(argv[1], "self"))
        bad = self(n, sz);
    else if (!strcmp(argv[1], "unsafe"))
        bad = unsafe(n, sz);
    else {
        fprintf(stderr, "flow: unknown mode %s\n", argv[1]);
        bad = 1;
    }
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("flow %s: %s\n", argv[1], any ? "FAILED" : "ok");
    MPI_Finalize();
    return any;
}
