/* General active-target synchronization (post/start/complete/wait): a ring
 * where every rank exposes its window to its left neighbour and accesses
 * its right neighbour's, several epochs in a row, gets and accumulates
 * included; MPI_Win_test polled until the epoch ends; a rank that both
 * posts and starts toward itself; empty groups. */
#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "rma_pscw");
    int rank = mtest_rank_, size = mtest_size_;
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    int buf[4] = {0, 0, 0, 0};
    MPI_Win win;
    CHECK_MPI(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Group world, gl, gr;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &left, &gl);
    MPI_Group_incl(world, 1, &right, &gr);

    for (int epoch = 1; epoch <= 3; epoch++) {
        CHECK_MPI(MPI_Win_post(gl, 0, win));
        CHECK_MPI(MPI_Win_start(gr, 0, win));
        int v = rank * 10 + epoch, got = -1;
        CHECK_MPI(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win));
        CHECK_MPI(MPI_Accumulate(&v, 1, MPI_INT, right, 1, 1, MPI_INT, MPI_SUM, win));
        CHECK_MPI(MPI_Get(&got, 1, MPI_INT, right, 2, 1, MPI_INT, win));
        CHECK_MPI(MPI_Win_complete(win));
        CHECK_INT(got, epoch == 1 ? 0 : right * 100 + epoch - 1, "get of the target's slot 2");
        if (epoch % 2) {
            CHECK_MPI(MPI_Win_wait(win));
        } else {
            int flag = 0;
            while (!flag)
                CHECK_MPI(MPI_Win_test(win, &flag));
        }
        CHECK_INT(buf[0], left * 10 + epoch, "put by the left neighbour");
        int sum = 0;
        for (int e = 1; e <= epoch; e++)
            sum += left * 10 + e;
        CHECK_INT(buf[1], sum, "accumulated by the left neighbour");
        buf[2] = rank * 100 + epoch; /* read by the left neighbour next epoch */
        MPI_Barrier(MPI_COMM_WORLD);
    }

    /* Toward itself. */
    MPI_Group self;
    MPI_Group_incl(world, 1, &rank, &self);
    CHECK_MPI(MPI_Win_post(self, 0, win));
    CHECK_MPI(MPI_Win_start(self, 0, win));
    int nine = 9;
    CHECK_MPI(MPI_Put(&nine, 1, MPI_INT, rank, 3, 1, MPI_INT, win));
    CHECK_MPI(MPI_Win_complete(win));
    CHECK_MPI(MPI_Win_wait(win));
    CHECK_INT(buf[3], 9, "put to itself");

    /* Empty groups: nothing to wait for. */
    CHECK_MPI(MPI_Win_post(MPI_GROUP_EMPTY, 0, win));
    CHECK_MPI(MPI_Win_start(MPI_GROUP_EMPTY, 0, win));
    CHECK_MPI(MPI_Win_complete(win));
    CHECK_MPI(MPI_Win_wait(win));

    MPI_Group_free(&self);
    MPI_Group_free(&gl);
    MPI_Group_free(&gr);
    MPI_Group_free(&world);
    CHECK_MPI(MPI_Win_free(&win));
    return mtest_finalize();
}
