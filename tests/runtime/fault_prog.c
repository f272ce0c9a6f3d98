/* The representative program of the fault-injection driver (fault.sh): in
 * a few rounds it goes through every path a fault site sits on, and checks
 * every byte it gets back.
 *   - managed memory: MIB MiB per rank (argv[1], default 6) in two
 *     allocations, rewritten in part and verified each round, so under a
 *     small -mem ranks unload and reload it (backing files);
 *   - a large message around the ring (spill files: with -nr 1 the
 *     receiver does not run when it is sent), and across nodes with -nn;
 *   - a large broadcast and allgather (the master's collective pieces,
 *     in spill files when the budget is short);
 *   - MPI-IO on the file argv[2] (if given): each rank writes a block,
 *     reads its neighbour's, resizes, deletes.
 * Prints "PASS fault_prog <checksum>" on rank 0 when everything matched.
 * A mismatch prints "WRONG ANSWER" with where, and aborts with status 3:
 * the driver counts that as a wrong answer, the one result never allowed.
 * MPI-IO errors are made fatal, so that a failed call names itself. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_rank;

static uint64_t pat(int rank, uint64_t i, int round)
{
    return ((uint64_t)(rank + 1) << 48) ^ (i * 0x9E3779B97F4A7C15ull) ^ (uint64_t)round << 40;
}

static void wrong(const char *what, uint64_t i, uint64_t got, uint64_t want)
{
    fprintf(stderr, "fault_prog: rank %d: WRONG ANSWER in %s at word %llu: %llx, expected %llx\n",
            g_rank, what, (unsigned long long)i, (unsigned long long)got, (unsigned long long)want);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

static void check_words(const char *what, const uint64_t *v, uint64_t n, int rank, int round)
{
    for (uint64_t i = 0; i < n; i++)
        if (v[i] != pat(rank, i, round))
            wrong(what, i, v[i], pat(rank, i, round));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    uint64_t mib = argc > 1 ? strtoull(argv[1], NULL, 10) : 6;
    const char *file = argc > 2 ? argv[2] : NULL;
    const int rounds = 3;
    uint64_t n = mib << 17, half = n / 2; /* words */
    uint64_t *a = malloc(half * 8), *b = malloc((n - half) * 8);
    const uint64_t nmsg = 32768; /* 256 KiB */
    uint64_t *msg = malloc(nmsg * 8), *in = malloc(nmsg * 8);
    uint64_t *all = malloc(nmsg * 8 * (uint64_t)size);
    if (!a || !b || !msg || !in || !all) {
        fprintf(stderr, "fault_prog: rank %d: out of memory\n", g_rank);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (uint64_t i = 0; i < half; i++)
        a[i] = pat(g_rank, i, 0);
    for (uint64_t i = 0; i < n - half; i++)
        b[i] = pat(g_rank, half + i, 0);
    uint64_t sum = 0;
    int right = (g_rank + 1) % size, left = (g_rank + size - 1) % size;
    for (int r = 1; r <= rounds; r++) {
        /* a keeps the pattern of round r-1; b the one of round 0 */
        check_words("managed memory a", a, half, g_rank, r - 1);
        for (uint64_t i = 0; i < n - half; i++)
            if (b[i] != pat(g_rank, half + i, 0))
                wrong("managed memory b", i, b[i], pat(g_rank, half + i, 0));
        for (uint64_t i = 0; i < half; i++)
            a[i] = pat(g_rank, i, r);
        /* a large message around the ring: even ranks send first */
        for (uint64_t i = 0; i < nmsg; i++)
            msg[i] = pat(g_rank, i, 100 + r);
        if (size > 1) {
            if (g_rank % 2 == 0) {
                MPI_Send(msg, (int)nmsg, MPI_UINT64_T, right, r, MPI_COMM_WORLD);
                MPI_Recv(in, (int)nmsg, MPI_UINT64_T, left, r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(in, (int)nmsg, MPI_UINT64_T, left, r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(msg, (int)nmsg, MPI_UINT64_T, right, r, MPI_COMM_WORLD);
            }
            check_words("ring message", in, nmsg, left, 100 + r);
        }
        /* collectives with large pieces */
        int root = r % size;
        for (uint64_t i = 0; i < nmsg; i++)
            in[i] = g_rank == root ? pat(root, i, 200 + r) : 0;
        MPI_Bcast(in, (int)nmsg, MPI_UINT64_T, root, MPI_COMM_WORLD);
        check_words("broadcast", in, nmsg, root, 200 + r);
        MPI_Allgather(msg, (int)nmsg, MPI_UINT64_T, all, (int)nmsg, MPI_UINT64_T, MPI_COMM_WORLD);
        for (int k = 0; k < size; k++)
            check_words("allgather", all + (uint64_t)k * nmsg, nmsg, k, 100 + r);
        sum += a[half - 1] ^ in[nmsg - 1];
    }
    if (file) {
        MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_ARE_FATAL);
        MPI_File fh;
        MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
        MPI_File_set_errhandler(fh, MPI_ERRORS_ARE_FATAL);
        MPI_Offset blk = (MPI_Offset)nmsg * 8;
        MPI_File_write_at(fh, blk * g_rank, msg, (int)nmsg, MPI_UINT64_T, MPI_STATUS_IGNORE);
        MPI_File_sync(fh);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_File_sync(fh);
        MPI_File_read_at(fh, blk * left, in, (int)nmsg, MPI_UINT64_T, MPI_STATUS_IGNORE);
        check_words("MPI-IO read", in, nmsg, left, 100 + rounds);
        MPI_File_set_size(fh, blk * size / 2);
        MPI_File_close(&fh);
        MPI_Barrier(MPI_COMM_WORLD);
        if (g_rank == 0)
            MPI_File_delete(file, MPI_INFO_NULL);
    }
    uint64_t total = 0;
    MPI_Reduce(&sum, &total, 1, MPI_UINT64_T, MPI_BXOR, 0, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("PASS fault_prog %llx\n", (unsigned long long)total);
    free(a);
    free(b);
    free(msg);
    free(in);
    free(all);
    MPI_Finalize();
    return 0;
}
