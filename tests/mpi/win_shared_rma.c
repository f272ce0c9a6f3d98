/* RMA on a shared-memory window sees the same memory as loads and stores:
 * puts under fence land where the target's neighbours read them directly;
 * accumulates under exclusive locks on one rank's counter add up to what a
 * plain load then reads; values stored directly are what gets fetch;
 * post/start/complete/wait; flush in a lock_all epoch; fetch-and-op and
 * compare-and-swap against direct reads. */
#include "mtest.h"

enum { SLOTS = 8 };

/* Outside an epoch: wait for everyone, then make the others' stores and
 * completed operations visible to this rank's loads (MPI_Win_sync belongs
 * in a passive-target epoch). */
static void settle(MPI_Win win, MPI_Comm node)
{
    MPI_Barrier(node);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    MPI_Win_sync(win);
    MPI_Win_unlock_all(win);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "win_shared_rma");
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int rank, size;
    MPI_Comm_rank(node, &rank);
    MPI_Comm_size(node, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int *mine;
    MPI_Win win;
    CHECK_MPI(MPI_Win_allocate_shared(SLOTS * sizeof(int), sizeof(int), MPI_INFO_NULL, node, &mine,
                                      &win));
    int *seg[64];
    int nseg = size < 64 ? size : 64;
    for (int r = 0; r < nseg; r++) {
        MPI_Aint sz;
        int du;
        MPI_Win_shared_query(win, r, &sz, &du, &seg[r]);
    }
    for (int i = 0; i < SLOTS; i++)
        mine[i] = -1;
    MPI_Win_fence(0, win);

    /* Fence: a put to the right neighbour, read by a load of its segment. */
    int v = rank + 1;
    CHECK_MPI(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    MPI_Win_fence(0, win);
    CHECK_INT(mine[0], left + 1, "my slot 0 after the left neighbour's put");
    if (right < nseg)
        CHECK_INT(seg[right][0], rank + 1, "right neighbour's slot 0 read directly");

    /* Exclusive locks: everyone adds rank + 1 to rank 0's slot 1. */
    if (rank == 0)
        mine[1] = 0;
    MPI_Win_fence(0, win);
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    CHECK_MPI(MPI_Accumulate(&v, 1, MPI_INT, 0, 1, 1, MPI_INT, MPI_SUM, win));
    CHECK_MPI(MPI_Win_unlock(0, win));
    settle(win, node);
    CHECK_INT(seg[0][1], size * (size + 1) / 2, "rank 0's counter read directly");

    /* A direct store, then a get of it by the left neighbour. */
    MPI_Win_lock_all(0, win);
    mine[2] = rank * 7;
    MPI_Win_sync(win);
    MPI_Barrier(node);
    MPI_Win_sync(win);
    int got = -1;
    CHECK_MPI(MPI_Get(&got, 1, MPI_INT, right, 2, 1, MPI_INT, win));
    CHECK_MPI(MPI_Win_flush(right, win));
    CHECK_INT(got, right * 7, "get of the right neighbour's direct store");

    /* Flush: a put completed at the target is visible to its loads. */
    v = 100 + rank;
    CHECK_MPI(MPI_Put(&v, 1, MPI_INT, right, 3, 1, MPI_INT, win));
    CHECK_MPI(MPI_Win_flush(right, win));
    MPI_Barrier(node);
    MPI_Win_sync(win);
    CHECK_INT(mine[3], 100 + left, "slot 3 after the left neighbour's flushed put");

    /* Fetch-and-op and compare-and-swap on rank 0's slot 4. */
    if (rank == 0)
        mine[4] = 0;
    MPI_Win_sync(win);
    MPI_Barrier(node);
    int one = 1, old = -1;
    CHECK_MPI(MPI_Fetch_and_op(&one, &old, MPI_INT, 0, 4, MPI_SUM, win));
    CHECK_MPI(MPI_Win_flush(0, win));
    CHECK(old >= 0 && old < size, "fetch-and-op returned %d", old);
    MPI_Barrier(node);
    MPI_Win_sync(win);
    CHECK_INT(seg[0][4], size, "rank 0's slot 4 after every fetch-and-op");
    int cmp = size, nv = -7, res = 0;
    MPI_Barrier(node);
    if (rank == size - 1) {
        CHECK_MPI(MPI_Compare_and_swap(&nv, &cmp, &res, MPI_INT, 0, 4, win));
        CHECK_MPI(MPI_Win_flush(0, win));
        CHECK_INT(res, size, "compare-and-swap's old value");
    }
    MPI_Win_unlock_all(win);
    settle(win, node);
    CHECK_INT(seg[0][4], -7, "rank 0's slot 4 after the compare-and-swap");

    /* Post/start/complete/wait around the ring: slot 5. */
    MPI_Group g, gl, gr;
    MPI_Win_get_group(win, &g);
    MPI_Group_incl(g, 1, &left, &gl);
    MPI_Group_incl(g, 1, &right, &gr);
    CHECK_MPI(MPI_Win_post(gl, 0, win));
    CHECK_MPI(MPI_Win_start(gr, 0, win));
    v = 500 + rank;
    CHECK_MPI(MPI_Put(&v, 1, MPI_INT, right, 5, 1, MPI_INT, win));
    CHECK_MPI(MPI_Win_complete(win));
    CHECK_MPI(MPI_Win_wait(win));
    CHECK_INT(mine[5], 500 + left, "slot 5 after the PSCW epoch");
    MPI_Group_free(&gl);
    MPI_Group_free(&gr);
    MPI_Group_free(&g);

    CHECK_MPI(MPI_Win_free(&win));
    MPI_Comm_free(&node);
    return mtest_finalize();
}
