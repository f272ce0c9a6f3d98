/*
 * rma_ring_full: a passive-target epoch whose answers do not fit the
 * origin's mailbox, then a collective.
 *
 * Rank 0 locks the last rank's window and issues 64 MPI_Get of 8 KiB and
 * then of 32 KiB (512 KiB and 2 MiB of answers, more than a ring holds)
 * while every other rank already waits in MPI_Bcast; after the unlock it
 * broadcasts.  BDMPI's target serves the gets while blocked in the
 * broadcast and must itself wait for room in the origin's ring: it then
 * came back blocked in a wait the broadcast's completion never ended, and
 * the job deadlocked (rank 0 in the next MPI_Barrier, the target in
 * MPI_Bcast).  Checks every get's data and the broadcast value.
 */
#include "mtest.h"

enum { NOPS = 64 };

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "rma_ring_full");
    int rank = mtest_rank_, size = mtest_size_, target = size - 1;
    const int sizes[2] = {1024, 4096}; /* doubles per get */
    int maxn = sizes[1];
    double *base, *dst = malloc((size_t)NOPS * maxn * sizeof(double));
    MPI_Win w;
    MPI_Win_allocate((MPI_Aint)(maxn * sizeof(double)), sizeof(double), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &base, &w);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w);
    for (int i = 0; i < maxn; i++)
        base[i] = rank * 100000.0 + i;
    MPI_Win_unlock(rank, w);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int round = 0; round < 4; round++) {
        int n = sizes[round % 2];
        if (rank == 0) {
            for (size_t k = 0; k < (size_t)NOPS * n; k++)
                dst[k] = -1;
            MPI_Win_lock(MPI_LOCK_SHARED, target, 0, w);
            for (int i = 0; i < NOPS; i++)
                MPI_Get(dst + (size_t)i * n, n - 7, MPI_DOUBLE, target, i % 7, n - 7, MPI_DOUBLE,
                        w);
            MPI_Win_unlock(target, w);
            int bad = 0;
            for (int i = 0; i < NOPS && !bad; i++)
                for (int k = 0; k < n - 7; k++)
                    if (dst[(size_t)i * n + k] != target * 100000.0 + i % 7 + k) {
                        CHECK(0, "round %d get %d element %d: %g, expected %g", round, i, k,
                              dst[(size_t)i * n + k], target * 100000.0 + i % 7 + k);
                        bad = 1;
                        break;
                    }
        }
        double x = rank == 0 ? 42.0 + round : 0;
        MPI_Bcast(&x, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        CHECK(x == 42.0 + round, "round %d: broadcast gave %g", round, x);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Win_free(&w);
    free(dst);
    return mtest_finalize();
}
