/* Two running ranks under a tight budget, one sending large messages to
 * the other (issue 18): the receiver reads the sender's buffer once with
 * process_vm_readv (single copy) into a receive buffer that is not
 * resident, while the sender goes on touching new memory.  Both may then
 * wait for memory at once, the sender with its buffer being read.  Every
 * word received is checked.  Arguments: MiB per buffer (default 2),
 * rounds (default 8).  The receiver's second buffer is twice as large. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t pat(int round, uint64_t i) { return (i * 0x9E3779B97F4A7C15ull) ^ (uint64_t)round; }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0, tot = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    uint64_t mib = argc > 1 ? strtoull(argv[1], NULL, 10) : 2;
    int rounds = argc > 2 ? atoi(argv[2]) : 8;
    uint64_t n = mib << 17; /* 8-byte words */
    /* the receiver holds more than the sender: it is the one kept when
     * both wait for memory with nothing else to unload */
    uint64_t no = rank % 2 ? 2 * n : n;
    uint64_t *buf = malloc(n * 8), *other = malloc(no * 8);
    if (!buf || !other) {
        fprintf(stderr, "rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int peer = rank ^ 1;
    for (int r = 0; r < rounds && peer < size; r++) {
        if (rank % 2 == 0) {
            for (uint64_t i = 0; i < n; i++)
                buf[i] = pat(r, i);
            MPI_Request q;
            MPI_Isend(buf, (int)n, MPI_UINT64_T, peer, r, MPI_COMM_WORLD, &q);
            /* new memory while the receiver may still read buf */
            for (uint64_t i = 0; i < n; i++)
                other[i] = i + (uint64_t)r;
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        } else {
            /* the receive buffer goes out of memory first */
            for (uint64_t i = 0; i < no; i++)
                other[i] = i ^ (uint64_t)r;
            MPI_Recv(buf, (int)n, MPI_UINT64_T, peer, r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (uint64_t i = 0; i < n; i++)
                if (buf[i] != pat(r, i)) {
                    bad++;
                    break;
                }
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    for (uint64_t i = 0; rank % 2 && i < no; i++)
        bad += other[i] != (i ^ (uint64_t)(rounds - 1));
    MPI_Allreduce(&bad, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s grant_cma: %d ranks x 2 x %llu MiB, %d rounds\n", tot ? "FAIL" : "PASS", size,
               (unsigned long long)mib, rounds);
    free(buf);
    free(other);
    MPI_Finalize();
    return tot ? 1 : 0;
}
