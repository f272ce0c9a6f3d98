/*
 * coll_alias: aliased arguments (MPI 3.1 2.6.2) are detected and returned
 * as MPI_ERR_BUFFER with MPI_ERRORS_RETURN, and the job goes on.
 *
 *  1. Allreduce, Scan, Exscan and Reduce_scatter_block with the same buffer
 *     for input and output on every rank; Allgather and Alltoall whose send
 *     buffer is part of the receive buffer on every rank.
 *  2. Root-only calls (only the root calls them: it must fail before it
 *     communicates): Reduce, Gather and Scatter with aliased buffers.
 *  3. MPI_Reduce_local with MPI_IN_PLACE or aliased buffers.
 *  4. Legal neighbours of those: MPI_IN_PLACE, and a Gatherv whose send
 *     buffer lies in a gap between the receive blocks, still work.
 */
#include "mtest.h"

static int class_of(int rc)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
    return cls;
}

#define EXPECT_BUFFER(rc, what)                                                                    \
    CHECK(class_of(rc) == MPI_ERR_BUFFER, "%s: class %d, expected MPI_ERR_BUFFER", what,           \
          class_of(rc))

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "coll_alias");
    int rank = mtest_rank_, size = mtest_size_, rc, i;
    int *buf = malloc(sizeof(int) * (size_t)(4 * size + 4));
    for (i = 0; i < 4 * size + 4; i++)
        buf[i] = i;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* 1 */
    rc = MPI_Allreduce(buf, buf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_BUFFER(rc, "Allreduce(buf, buf)");
    rc = MPI_Scan(buf, buf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_BUFFER(rc, "Scan(buf, buf)");
    rc = MPI_Exscan(buf, buf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_BUFFER(rc, "Exscan(buf, buf)");
    rc = MPI_Reduce_scatter_block(buf, buf, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_BUFFER(rc, "Reduce_scatter_block(buf, buf)");
    rc = MPI_Allgather(&buf[rank], 1, MPI_INT, buf, 1, MPI_INT, MPI_COMM_WORLD);
    EXPECT_BUFFER(rc, "Allgather(&buf[rank], buf)");
    rc = MPI_Alltoall(buf, 1, MPI_INT, buf, 1, MPI_INT, MPI_COMM_WORLD);
    EXPECT_BUFFER(rc, "Alltoall(buf, buf)");

    /* 2 */
    if (rank == 0) {
        rc = MPI_Reduce(buf, buf, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        EXPECT_BUFFER(rc, "Reduce(buf, buf) at the root");
        rc = MPI_Gather(buf, 1, MPI_INT, buf, 1, MPI_INT, 0, MPI_COMM_WORLD);
        EXPECT_BUFFER(rc, "Gather(buf, buf) at the root");
        rc = MPI_Scatter(buf, 1, MPI_INT, buf, 1, MPI_INT, 0, MPI_COMM_WORLD);
        EXPECT_BUFFER(rc, "Scatter(buf, buf) at the root");
    }

    /* 3 */
    rc = MPI_Reduce_local(MPI_IN_PLACE, buf, 2, MPI_INT, MPI_SUM);
    EXPECT_BUFFER(rc, "Reduce_local(MPI_IN_PLACE, buf)");
    rc = MPI_Reduce_local(buf, MPI_IN_PLACE, 2, MPI_INT, MPI_SUM);
    EXPECT_BUFFER(rc, "Reduce_local(buf, MPI_IN_PLACE)");
    rc = MPI_Reduce_local(buf, buf, 2, MPI_INT, MPI_SUM);
    EXPECT_BUFFER(rc, "Reduce_local(buf, buf)");

    /* 4: the job goes on, and legal calls work */
    int one = rank + 1, sum = 0;
    rc = MPI_Allreduce(MPI_IN_PLACE, &one, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS && one == size * (size + 1) / 2, "Allreduce in place: rc %d, %d", rc,
          one);
    rc = MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS && sum == size * (size - 1) / 2, "Allreduce: rc %d, %d", rc, sum);
    /* Receive blocks at 0, 2, 4, ...; the root's send value sits at 1. */
    int *cnt = malloc(sizeof(int) * (size_t)size), *dsp = malloc(sizeof(int) * (size_t)size);
    for (i = 0; i < size; i++) {
        cnt[i] = 1;
        dsp[i] = 2 * i;
    }
    for (i = 0; i < 2 * size; i++)
        buf[i] = -1;
    buf[1] = rank * 10;
    rc = MPI_Gatherv(&buf[1], 1, MPI_INT, buf, cnt, dsp, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS, "Gatherv with the send value in a gap: rc %d", rc);
    if (rank == 0 && rc == MPI_SUCCESS)
        for (i = 0; i < size; i++)
            CHECK(buf[2 * i] == i * 10, "Gatherv block %d is %d", i, buf[2 * i]);
    free(cnt);
    free(dsp);
    free(buf);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return mtest_finalize();
}
