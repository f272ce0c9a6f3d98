/*
 * evict_recent: whose memory the budget takes when a grant needs room
 * (src/master/memacct.c evict_before).  Three ranks, each with one managed
 * array of MIB MiB, under a budget with room for two of them (-nr 1):
 *  - rank 2 fills its array first, tells ranks 0 and 1 to start, and waits
 *    in MPI_Barrier until the end;
 *  - ranks 0 and 1 then fill theirs and exchange a token ROUNDS times, each
 *    adding 1 to every element of its array in its turn (HPL's panel
 *    factorization down a process column is such an exchange, while the
 *    other ranks wait).
 * The two exchanging ranks fit beside each other once rank 2's array is
 * stored; taking the other exchanging rank's memory instead (the largest
 * first, on a tie the lowest index) makes each turn load a whole array
 * back.  The test (evict_recent.sh) bounds MEM_READ from --stats.
 * Checked here: every element of every array at the end.
 * Usage: evict_recent [ROUNDS] [MIB]; prints "PASS evict_recent" on rank 0.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = argc > 1 ? atoi(argv[1]) : 20;
    size_t n = (size_t)(argc > 2 ? atoi(argv[2]) : 4) << 20;
    n /= sizeof(uint64_t);
    if (size < 3) {
        if (rank == 0)
            fprintf(stderr, "evict_recent: needs at least 3 ranks\n");
        MPI_Finalize();
        return 1;
    }
    uint64_t *a = NULL, add = 0;
    int token = 0, bad = 0;
    if (rank == 2 || rank > 2) {
        if (rank == 2) {
            a = malloc(n * sizeof *a);
            if (!a)
                MPI_Abort(MPI_COMM_WORLD, 1);
            for (size_t i = 0; i < n; i++)
                a[i] = i * 3 + 2;
            MPI_Send(&token, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
            MPI_Send(&token, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
        }
    } else {
        MPI_Recv(&token, 1, MPI_INT, 2, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        a = malloc(n * sizeof *a);
        if (!a)
            MPI_Abort(MPI_COMM_WORLD, 1);
        for (size_t i = 0; i < n; i++)
            a[i] = i * 3 + (uint64_t)rank;
        int peer = 1 - rank;
        for (int r = 0; r < rounds; r++) {
            if (rank == 1)
                MPI_Recv(&token, 1, MPI_INT, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (size_t i = 0; i < n; i++)
                a[i]++;
            add++;
            token++;
            MPI_Send(&token, 1, MPI_INT, peer, 2, MPI_COMM_WORLD);
            if (rank == 0)
                MPI_Recv(&token, 1, MPI_INT, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (a) {
        for (size_t i = 0; i < n && !bad; i++)
            if (a[i] != i * 3 + (uint64_t)rank + add) {
                fprintf(stderr, "evict_recent: rank %d: element %zu is %llu, not %llu\n", rank, i,
                        (unsigned long long)a[i], (unsigned long long)(i * 3 + rank + add));
                bad = 1;
            }
        free(a);
    }
    int anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && !anybad)
        printf("PASS evict_recent %d rounds, %zu MiB arrays\n", rounds, n * sizeof(uint64_t) >> 20);
    MPI_Finalize();
    return anybad;
}
