/* Bounded staging of broadcasts and allgathers (issue 17, session 18), and
 * of collectives on two communicators at once.  Every byte received is
 * checked against a pattern that differs at every offset of a buffer (so a
 * part put at the wrong place shows).  Modes (argv[1]), sizes in bytes:
 *   bcast N SIZE      N rounds of MPI_Bcast of SIZE + 3k bytes from rank
 *                     k % size;
 *   bcast_vec N SIZE  the same through a vector type (3 ints every 4), so
 *                     the parts cut the packed stream, not the buffer;
 *   allgather N SIZE  N rounds of MPI_Allgather of SIZE bytes per rank;
 *   allgatherv N SIZE N rounds of MPI_Allgatherv, rank i's block SIZE +
 *                     7i bytes, none from rank 1, blocks in reverse order
 *                     in the receive buffer;
 *   allgather_ip N SIZE  MPI_Allgather in place;
 *   two N SIZE        the ranks split in two communicators (even, odd),
 *                     each does N rounds of MPI_Alltoallv of SIZE-byte
 *                     pieces, and with N > 1 as many MPI_Allgather of SIZE
 *                     bytes, at the same time;
 *   two_dep N SIZE    the even ranks' communicator does an MPI_Alltoallv,
 *                     then world rank 0 sends rank 1 a message rank 1
 *                     waits for before its own communicator's all-to-all
 *                     (a rank of one instance waits in another call while
 *                     pieces of the other are staged for it).
 * Exit 0 pass, 1 fail. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_rank, g_size;

static unsigned char pat(int src, int k, size_t i)
{
    uint64_t x =
        (uint64_t)i * 0x9E3779B97F4A7C15ull + (uint64_t)src * 1000003u + (uint64_t)k * 7919u;
    x ^= x >> 29;
    return (unsigned char)(x ^ (x >> 17));
}

static void fill(unsigned char *b, size_t n, int src, int k)
{
    for (size_t i = 0; i < n; i++)
        b[i] = pat(src, k, i);
}

static int check(const char *what, const unsigned char *b, size_t n, int src, int k)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != pat(src, k, i)) {
            fprintf(stderr, "rank %d: %s round %d from %d: byte %zu of %zu is %u, expected %u\n",
                    g_rank, what, k, src, i, n, b[i], pat(src, k, i));
            return 1;
        }
    return 0;
}

static unsigned char *xmalloc(size_t n)
{
    unsigned char *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory (%zu bytes)\n", n);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

static int bcast(int n, size_t sz)
{
    int bad = 0;
    for (int k = 0; k < n && !bad; k++) {
        int root = k % g_size;
        size_t len = sz + 3 * (size_t)k;
        unsigned char *b = xmalloc(len);
        if (g_rank == root)
            fill(b, len, root, k);
        else
            memset(b, 0xEE, len);
        MPI_Bcast(b, (int)len, MPI_BYTE, root, MPI_COMM_WORLD);
        bad |= check("MPI_Bcast", b, len, root, k);
        free(b);
    }
    return bad;
}

/* 3 ints of every 4 carry data: elements of ne ints packed. */
static int bcast_vec(int n, size_t sz)
{
    int bad = 0, nv = (int)(sz / 12) + 1;
    MPI_Datatype v;
    MPI_Type_vector(nv, 3, 4, MPI_INT, &v);
    MPI_Type_commit(&v);
    size_t packed = (size_t)nv * 12;
    unsigned char *flat = xmalloc(packed);
    for (int k = 0; k < n && !bad; k++) {
        int root = (k + 1) % g_size;
        int *b = (int *)xmalloc((size_t)nv * 16);
        memset(b, 0xEE, (size_t)nv * 16);
        if (g_rank == root) {
            fill(flat, packed, root, k);
            for (int e = 0; e < nv; e++)
                memcpy(&b[4 * e], flat + 12 * (size_t)e, 12);
        }
        MPI_Bcast(b, 1, v, root, MPI_COMM_WORLD);
        for (int e = 0; e < nv; e++) {
            memcpy(flat + 12 * (size_t)e, &b[4 * e], 12);
            if (b[4 * e + 3] != (int)0xEEEEEEEE) {
                fprintf(stderr, "rank %d: the gap of element %d was written\n", g_rank, e);
                bad = 1;
            }
        }
        bad |= check("MPI_Bcast (vector)", flat, packed, root, k);
        free(b);
    }
    free(flat);
    MPI_Type_free(&v);
    return bad;
}

static int allgather(int n, size_t sz, int vec, int inplace, MPI_Comm comm, int kbase)
{
    int rank, size, bad = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int *counts = malloc((size_t)size * sizeof(int)), *displs = malloc((size_t)size * sizeof(int));
    size_t tot = 0;
    for (int i = size - 1; i >= 0; i--) { /* blocks in reverse order when vec */
        counts[i] = vec ? (i == 1 ? 0 : (int)(sz + 7 * (size_t)i)) : (int)sz;
        displs[i] = vec ? (int)tot : (int)(sz * (size_t)i);
        tot += (size_t)counts[i];
    }
    for (int k = kbase; k < kbase + n && !bad; k++) {
        unsigned char *mine = xmalloc((size_t)counts[rank]), *all = xmalloc(tot);
        memset(all, 0xEE, tot);
        fill(inplace ? all + displs[rank] : mine, (size_t)counts[rank], rank, k);
        if (vec)
            MPI_Allgatherv(mine, counts[rank], MPI_BYTE, all, counts, displs, MPI_BYTE, comm);
        else
            MPI_Allgather(inplace ? MPI_IN_PLACE : mine, (int)sz, MPI_BYTE, all, (int)sz, MPI_BYTE,
                          comm);
        for (int i = 0; i < size && !bad; i++)
            bad |= check("MPI_Allgather", all + displs[i], (size_t)counts[i], i, k);
        free(mine);
        free(all);
    }
    free(counts);
    free(displs);
    return bad;
}

static int a2a(int n, size_t sz, MPI_Comm comm, int kbase)
{
    int rank, size, bad = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int *sc = malloc((size_t)size * sizeof(int)), *sd = malloc((size_t)size * sizeof(int));
    int *rc = malloc((size_t)size * sizeof(int)), *rd = malloc((size_t)size * sizeof(int));
    for (int i = 0; i < size; i++) {
        sc[i] = rc[i] = (int)sz;
        sd[i] = rd[i] = (int)(sz * (size_t)i);
    }
    for (int k = kbase; k < kbase + n && !bad; k++) {
        unsigned char *s = xmalloc(sz * (size_t)size), *r = xmalloc(sz * (size_t)size);
        for (int j = 0; j < size; j++)
            fill(s + sd[j], sz, rank * 1000 + j, k);
        memset(r, 0xEE, sz * (size_t)size);
        MPI_Alltoallv(s, sc, sd, MPI_BYTE, r, rc, rd, MPI_BYTE, comm);
        for (int i = 0; i < size && !bad; i++)
            bad |= check("MPI_Alltoallv", r + rd[i], sz, i * 1000 + rank, k);
        free(s);
        free(r);
    }
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    if (argc < 4) {
        if (!g_rank)
            fprintf(stderr, "usage: flow_bcast bcast|bcast_vec|allgather|allgatherv|allgather_ip|"
                            "two|two_dep N SIZE\n");
        MPI_Finalize();
        return 1;
    }
    int n = atoi(argv[2]);
    size_t sz = strtoull(argv[3], NULL, 10);
    const char *m = argv[1];
    int bad = 0;
    if (!strcmp(m, "bcast"))
        bad = bcast(n, sz);
    else if (!strcmp(m, "bcast_vec"))
        bad = bcast_vec(n, sz);
    else if (!strcmp(m, "allgather"))
        bad = allgather(n, sz, 0, 0, MPI_COMM_WORLD, 0);
    else if (!strcmp(m, "allgatherv"))
        bad = allgather(n, sz, 1, 0, MPI_COMM_WORLD, 0);
    else if (!strcmp(m, "allgather_ip"))
        bad = allgather(n, sz, 0, 1, MPI_COMM_WORLD, 0);
    else if (!strcmp(m, "two") || !strcmp(m, "two_dep")) {
        MPI_Comm half;
        MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_rank, &half);
        if (!strcmp(m, "two")) {
            bad = a2a(n, sz, half, 0);
            if (n > 1)
                bad |= allgather(n, sz, 0, 0, half, 100);
        } else if (g_rank % 2 == 0) {
            bad = a2a(n, sz, half, 0);
            if (g_rank == 0)
                MPI_Send(&bad, 1, MPI_INT, 1, 5, MPI_COMM_WORLD);
        } else {
            int x;
            if (g_rank == 1)
                MPI_Recv(&x, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            bad = a2a(n, sz, half, 0);
        }
        MPI_Comm_free(&half);
    } else {
        if (!g_rank)
            fprintf(stderr, "unknown mode %s\n", m);
        bad = 1;
    }
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (!g_rank && !any)
        printf("flow_bcast %s: ok\n", m);
    MPI_Finalize();
    return any;
}
