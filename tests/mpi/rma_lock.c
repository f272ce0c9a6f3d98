/* Passive-target RMA: exclusive locks make a get-increment-put sequence
 * atomic (no lost updates) while the target itself waits in MPI_Recv for
 * the end; shared lock_all with flush; request-based operations; a lock on
 * the rank itself with local access; MPI_MODE_NOCHECK; MPI_Win_sync in a
 * polling loop sees a flag put by another rank. */
#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "rma_lock");
    int rank = mtest_rank_, size = mtest_size_;
    const int reps = 5;
    int *mem = NULL;
    MPI_Win win;
    /* (MPI_Alloc_mem + MPI_Win_create rather than MPI_Win_allocate: MPICH 4.0
     * returns a wrong base pointer from the latter on ranks > 0.) */
    MPI_Aint bytes = (MPI_Aint)((4 + size) * sizeof(int));
    CHECK_MPI(MPI_Alloc_mem(bytes, MPI_INFO_NULL, &mem));
    CHECK_MPI(MPI_Win_create(mem, bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    for (int i = 0; i < 4 + size; i++)
        mem[i] = 0;
    MPI_Barrier(MPI_COMM_WORLD);

    /* Non-atomic read-modify-write of a counter at the last rank, under an
     * exclusive lock: no update may be lost.  The last rank waits in a
     * receive meanwhile (it serves the others from inside it). */
    int target = size - 1;
    if (rank != target || size == 1) {
        for (int k = 0; k < reps; k++) {
            int v = -1;
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
            CHECK_MPI(MPI_Get(&v, 1, MPI_INT, target, 0, 1, MPI_INT, win));
            CHECK_MPI(MPI_Win_flush(target, win));
            v++;
            CHECK_MPI(MPI_Put(&v, 1, MPI_INT, target, 0, 1, MPI_INT, win));
            CHECK_MPI(MPI_Win_unlock(target, win));
        }
        if (size > 1)
            MPI_Send(NULL, 0, MPI_INT, target, 1, MPI_COMM_WORLD);
    } else {
        for (int r = 0; r < size - 1; r++)
            MPI_Recv(NULL, 0, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == target) {
        /* Local access to the window: lock it ourselves. */
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
        int n = size == 1 ? reps : reps * (size - 1);
        CHECK_INT(mem[0], n, "counter incremented under exclusive locks");
        CHECK_MPI(MPI_Win_unlock(rank, win));
    }

    /* lock_all: everyone puts its rank into slot rank of everyone, flushes,
     * and reads its own slot back from each target. */
    CHECK_MPI(MPI_Win_lock_all(0, win));
    int me = rank + 1;
    for (int t = 0; t < size; t++)
        CHECK_MPI(MPI_Put(&me, 1, MPI_INT, t, 4 + rank, 1, MPI_INT, win));
    CHECK_MPI(MPI_Win_flush_all(win));
    int *back = calloc(size > 0 ? (size_t)size : 1, sizeof(int));
    for (int t = 0; t < size; t++)
        CHECK_MPI(MPI_Get(&back[t], 1, MPI_INT, t, 4 + rank, 1, MPI_INT, win));
    CHECK_MPI(MPI_Win_flush_local_all(win));
    for (int t = 0; t < size; t++)
        CHECK_INT(back[t], rank + 1, "own slot read back after flush");
    CHECK_MPI(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    for (int r = 0; r < size; r++)
        CHECK_INT(mem[4 + r], r + 1, "slot r after lock_all epoch");
    CHECK_MPI(MPI_Win_unlock(rank, win));

    /* Request-based operations inside lock_all. */
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_lock_all(0, win));
    int next = (rank + 1) % size, val = 1000 + rank, rb = -1;
    MPI_Request rq[2];
    CHECK_MPI(MPI_Rput(&val, 1, MPI_INT, next, 1, 1, MPI_INT, win, &rq[0]));
    CHECK_MPI(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Win_flush(next, win));
    CHECK_MPI(MPI_Rget(&rb, 1, MPI_INT, next, 1, 1, MPI_INT, win, &rq[1]));
    CHECK_MPI(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
    CHECK_INT(rb, 1000 + rank, "Rget after Rput and flush");
    CHECK_MPI(MPI_Win_unlock_all(win));

    /* NOCHECK lock (no conflicting lock by construction), and a flag
     * polled with MPI_Win_sync: rank 0 waits for rank size-1's put. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == size - 1) {
        int one = 1;
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, MPI_MODE_NOCHECK, win));
        CHECK_MPI(MPI_Put(&one, 1, MPI_INT, 0, 2, 1, MPI_INT, win));
        CHECK_MPI(MPI_Win_unlock(0, win));
    }
    if (rank == 0) {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        for (;;) {
            /* (MPI_Iprobe too: MPICH progresses passive targets in it) */
            int f;
            CHECK_MPI(MPI_Win_sync(win));
            if (((volatile int *)mem)[2] == 1)
                break;
            MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &f, MPI_STATUS_IGNORE);
        }
        CHECK_MPI(MPI_Win_unlock(0, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(back);
    CHECK_MPI(MPI_Win_free(&win));
    MPI_Free_mem(mem);
    return mtest_finalize();
}
