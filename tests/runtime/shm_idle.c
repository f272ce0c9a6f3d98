/* shm_idle.c - the windows and rings of ranks that do not run are given
 * back, and no message is lost or changed by it (issue 13).
 *
 * usage: shm_idle ROUNDS MAX_KIB [allgatherv]
 *
 * Run with more ranks than -nr and a budget (-mem): only then does the
 * master give back the pages of the shared-memory file that hold nothing
 * (src/master/mbox.c, bdr_mbox_stopped).  Each round:
 *   - every rank sends 3000 small messages (152 bytes of payload, inline in
 *     the ring) to the next rank and receives as many from the previous
 *     one, half of them before it receives anything, so that the rings
 *     fill while their owners wait (the master drains a full ring of a
 *     waiting rank) and their tails move across every page;
 *   - an MPI_Alltoall of 16 KiB a pair (in the ranks' own messages since
 *     they run such small collectives themselves; with "allgatherv" an
 *     MPI_Alltoallv, which goes through every rank's window and fills it
 *     whole);
 *   - every rank touches 1 MiB of managed memory of its own, so that under
 *     the budget ranks are unloaded while others send to them.
 * Every byte received is checked against what its sender computed.
 * Then rank 0 reads how much of the shared-memory file (BDMPI_SHM_FD, the
 * memfd every rank inherits) is resident, with mincore, while all the
 * other ranks wait in a barrier, and fails when it is more than MAX_KIB
 * (without the give-back: a 256 KiB window and a 256 KiB ring a rank).
 * With "allgatherv" the others wait in an MPI_Allgatherv of one int a rank
 * instead, which goes through the master in one request
 * (BD_REQ_COLL_SMALL) where a barrier runs in the ranks: its data is all
 * in the window's first page, so the rest goes back too (session 29; it
 * stayed resident before: 5980-6012 KiB).  There every wait is one, the
 * first too, so that no barrier in the ranks gives the windows back
 * before.
 * Prints "SHM_RESIDENT_KIB n". */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define NMSG 3000
#define MSGW 19 /* 8-byte words a message: 152 bytes */
#define A2A 16384

static uint64_t word(int src, int round, int i, int w)
{
    return ((uint64_t)src << 40) ^ ((uint64_t)round << 32) ^ ((uint64_t)i << 8) ^ (uint64_t)w;
}

static long shm_resident_kib(void)
{
    const char *e = getenv("BDMPI_SHM_FD");
    if (!e)
        return -1;
    int fd = atoi(e);
    struct stat st;
    if (fstat(fd, &st) < 0)
        return -1;
    size_t len = (size_t)st.st_size, np = (len + 4095) / 4096;
    void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    unsigned char *v = malloc(np);
    if (m == MAP_FAILED || !v || mincore(m, len, v) < 0) {
        free(v);
        return -1;
    }
    long n = 0;
    for (size_t i = 0; i < np; i++)
        n += v[i] & 1;
    munmap(m, len);
    free(v);
    return n * 4;
}

/* A barrier, or (gv) an MPI_Allgatherv of one int a rank, which nobody
 * leaves before every rank has joined either. */
static void wait_all(int gv)
{
    if (!gv) {
        MPI_Barrier(MPI_COMM_WORLD);
        return;
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *counts = malloc(sizeof(int) * 3 * (size_t)size), *displs = counts + size,
        *got = displs + size;
    for (int r = 0; r < size; r++) {
        counts[r] = 1;
        displs[r] = r;
    }
    MPI_Allgatherv(&rank, 1, MPI_INT, got, counts, displs, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        if (got[r] != r) {
            fprintf(stderr, "rank %d: MPI_Allgatherv gave %d from rank %d\n", rank, got[r], r);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    free(counts);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = argc > 1 ? atoi(argv[1]) : 3;
    long max_kib = argc > 2 ? atol(argv[2]) : 0;
    int gv = argc > 3 && !strcmp(argv[3], "allgatherv");
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    uint64_t *out = malloc((size_t)NMSG * MSGW * sizeof *out);
    uint64_t *in = malloc((size_t)MSGW * sizeof *in);
    uint64_t *sa = malloc((size_t)size * A2A), *ra = malloc((size_t)size * A2A);
    size_t own_n = (1u << 20) / sizeof(uint64_t);
    uint64_t *own = malloc(own_n * sizeof *own); /* managed: above -mem-threshold */
    MPI_Request *rq = malloc(NMSG * sizeof *rq);
    if (!out || !in || !sa || !ra || !own || !rq) {
        fprintf(stderr, "rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < NMSG; i++)
            for (int w = 0; w < MSGW; w++)
                out[(size_t)i * MSGW + w] = word(rank, r, i, w);
        for (int i = 0; i < NMSG / 2; i++)
            MPI_Isend(out + (size_t)i * MSGW, MSGW, MPI_UINT64_T, next, i, MPI_COMM_WORLD, &rq[i]);
        for (int i = 0; i < NMSG; i++) {
            if (i == NMSG / 4) /* the second half while the first is received */
                for (int j = NMSG / 2; j < NMSG; j++)
                    MPI_Isend(out + (size_t)j * MSGW, MSGW, MPI_UINT64_T, next, j, MPI_COMM_WORLD,
                              &rq[j]);
            MPI_Recv(in, MSGW, MPI_UINT64_T, prev, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int w = 0; w < MSGW; w++)
                if (in[w] != word(prev, r, i, w) && bad++ < 5)
                    fprintf(stderr, "rank %d round %d: message %d from %d, word %d wrong\n", rank,
                            r, i, prev, w);
        }
        MPI_Waitall(NMSG, rq, MPI_STATUSES_IGNORE);
        for (int d = 0; d < size; d++)
            for (size_t k = 0; k < A2A / sizeof(uint64_t); k++)
                sa[(size_t)d * (A2A / sizeof(uint64_t)) + k] = word(rank, r, d, (int)k);
        if (gv) {
            int *cnt = malloc(sizeof(int) * 2 * (size_t)size), *dsp = cnt + size;
            for (int d = 0; d < size; d++) {
                cnt[d] = A2A;
                dsp[d] = d * A2A;
            }
            MPI_Alltoallv(sa, cnt, dsp, MPI_BYTE, ra, cnt, dsp, MPI_BYTE, MPI_COMM_WORLD);
            free(cnt);
        } else {
            MPI_Alltoall(sa, A2A, MPI_BYTE, ra, A2A, MPI_BYTE, MPI_COMM_WORLD);
        }
        for (int s = 0; s < size; s++)
            for (size_t k = 0; k < A2A / sizeof(uint64_t); k++)
                if (ra[(size_t)s * (A2A / sizeof(uint64_t)) + k] != word(s, r, rank, (int)k) &&
                    bad++ < 5)
                    fprintf(stderr, "rank %d round %d: all-to-all word %zu from %d wrong\n", rank,
                            r, k, s);
        for (size_t k = 0; k < own_n; k++)
            own[k] = r == 0 ? k ^ (uint64_t)rank : own[k] + 1;
    }
    for (size_t k = 0; k < own_n; k++)
        if (own[k] != (k ^ (uint64_t)rank) + (uint64_t)(rounds - 1) && bad++ < 5)
            fprintf(stderr, "rank %d: own memory word %zu wrong\n", rank, k);
    int fail = bad != 0;
    /* The master gives back only the pages of ranks stopped for 20 ms
     * (mbox.c IDLE_GIVE_BACK_S), when a rank stops: with -nr 1 the ranks
     * run here one after another, 30 ms each, so at each one's stop in
     * the barrier below those stopped before it are old enough. */
    wait_all(gv);
    usleep(30000);
    if (rank == 0)
        wait_all(gv); /* everybody else is in the one after this one */
    else {
        wait_all(gv);
        wait_all(gv);
    }
    if (rank == 0) {
        long kib = shm_resident_kib();
        printf("SHM_RESIDENT_KIB %ld (limit %ld)\n", kib, max_kib);
        if (max_kib > 0 && (kib < 0 || kib > max_kib)) {
            fprintf(stderr, "rank 0: %ld KiB of the shared-memory file resident, over %ld\n", kib,
                    max_kib);
            fail = 1;
        }
        wait_all(gv);
    }
    int any = 0;
    MPI_Allreduce(&fail, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf(any ? "FAIL shm_idle\n" : "PASS shm_idle\n");
    free(out);
    free(in);
    free(sa);
    free(ra);
    free(own);
    free(rq);
    MPI_Finalize();
    return any;
}
