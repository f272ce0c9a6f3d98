/* Bad input to RMA calls, with MPI_ERRORS_RETURN on the window (and on
 * MPI_COMM_WORLD for calls without a valid window): each error comes back
 * with its MPI error class, and the window stays usable afterwards. */
#include "mtest.h"

static int cls(int rc)
{
    int c = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    return c;
}

#define EXPECT(call, klass) CHECK_INT(cls(call), klass, #call)

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "rma_errors");
    int rank = mtest_rank_, size = mtest_size_;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int buf[8] = {0};
    MPI_Win win, bad;
    EXPECT(MPI_Win_create(buf, -1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &bad), MPI_ERR_SIZE);
    EXPECT(MPI_Win_create(buf, sizeof buf, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &bad), MPI_ERR_DISP);
    CHECK_MPI(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    int v = 1, next = (rank + 1) % size;

    /* No epoch open. */
    if (!mtest_is_mpich()) /* MPICH 4.0 accepts it silently */
        EXPECT(MPI_Put(&v, 1, MPI_INT, next, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_unlock(next, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_complete(win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_wait(win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_flush(next, win), MPI_ERR_RMA_SYNC);

    /* Bad arguments inside a fence epoch. */
    CHECK_MPI(MPI_Win_fence(0, win));
    if (!mtest_is_mpich()) { /* MPICH 4.0 does not check target ranges */
        EXPECT(MPI_Put(&v, 1, MPI_INT, next, 8, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
        EXPECT(MPI_Get(buf, 2, MPI_INT, next, 7, 2, MPI_INT, win), MPI_ERR_RMA_RANGE);
        EXPECT(MPI_Put(&v, 1, MPI_INT, next, -1, 1, MPI_INT, win), MPI_ERR_DISP);
    }
    EXPECT(MPI_Put(&v, 1, MPI_INT, size, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    EXPECT(MPI_Put(&v, -1, MPI_INT, next, 0, -1, MPI_INT, win), MPI_ERR_COUNT);
    EXPECT(MPI_Put(&v, 1, MPI_DATATYPE_NULL, next, 0, 1, MPI_INT, win), MPI_ERR_TYPE);
    EXPECT(MPI_Accumulate(&v, 1, MPI_INT, next, 0, 1, MPI_INT, MPI_OP_NULL, win), MPI_ERR_OP);
    /* The window still works. */
    CHECK_MPI(MPI_Put(&v, 1, MPI_INT, next, 7, 1, MPI_INT, win));
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    CHECK_INT(buf[7], 1, "put after the errors");

    /* Locks. */
    /* (MPICH 4.0 reports both as MPI_ERR_ARG) */
    int mp = mtest_is_mpich();
    EXPECT(MPI_Win_lock(12345, next, 0, win), mp ? MPI_ERR_ARG : MPI_ERR_LOCKTYPE);
    EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, next, 1 << 30, win), mp ? MPI_ERR_ARG : MPI_ERR_ASSERT);
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win));
    if (!mtest_is_mpich()) /* MPICH 4.0 only detects this with a debug build */
        EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win), MPI_ERR_RMA_SYNC);
    CHECK_MPI(MPI_Win_unlock(next, win));

    /* Attaching to a window that is not dynamic. */
    EXPECT(MPI_Win_attach(win, buf, sizeof buf), MPI_ERR_RMA_FLAVOR);
    /* Invalid window handles (reported on MPI_COMM_WORLD). */
    MPI_Win nul = MPI_WIN_NULL;
    EXPECT(MPI_Win_fence(0, nul), MPI_ERR_WIN);
    EXPECT(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, nul), MPI_ERR_WIN);
    CHECK_MPI(MPI_Win_free(&win));
    EXPECT(MPI_Win_free(&nul), MPI_ERR_WIN);
    return mtest_finalize();
}
