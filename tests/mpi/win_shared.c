/* Shared-memory windows (MPI_Win_allocate_shared, MPI_Win_shared_query) on
 * the communicator of a node's ranks (MPI_Comm_split_type with
 * MPI_COMM_TYPE_SHARED): each rank writes its own segment with plain
 * stores and reads every other rank's through the pointer the query gives;
 * segments of the default layout follow each other contiguously; with
 * alloc_shared_noncontig they need not; zero-sized segments, and
 * MPI_PROC_NULL naming the first non-empty one; the flavor and memory model
 * attributes.  A communicator spanning nodes cannot share memory: the call
 * fails with MPI_ERR_RMA_SHARED. */
#include "mtest.h"

static void check_window(MPI_Comm node, int noncontig, int zero_first)
{
    int rank, size;
    MPI_Comm_rank(node, &rank);
    MPI_Comm_size(node, &size);
    MPI_Info info = MPI_INFO_NULL;
    if (noncontig) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "alloc_shared_noncontig", "true");
    }
    int n = zero_first && rank == 0 ? 0 : rank + 2; /* ints in my segment */
    int *mine = NULL;
    MPI_Win win;
    CHECK_MPI(MPI_Win_allocate_shared((MPI_Aint)n * (MPI_Aint)sizeof(int), sizeof(int), info, node,
                                      &mine, &win));
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    for (int i = 0; i < n; i++)
        mine[i] = rank * 1000 + i;
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    MPI_Win_sync(win);
    MPI_Barrier(node);
    MPI_Win_sync(win);
    char *prev_end = NULL;
    for (int r = 0; r < size; r++) {
        MPI_Aint sz = -1;
        int du = -1;
        int *base = NULL;
        CHECK_MPI(MPI_Win_shared_query(win, r, &sz, &du, &base));
        int rn = zero_first && r == 0 ? 0 : r + 2;
        CHECK_INT(sz, (long long)rn * (long long)sizeof(int), "segment size from the query");
        CHECK_INT(du, sizeof(int), "displacement unit from the query");
        if (r == rank)
            CHECK(base == mine, "rank %d's query of itself gives %p, MPI gave %p", r, (void *)base,
                  (void *)mine);
        for (int i = 0; i < rn; i++)
            CHECK(base[i] == r * 1000 + i, "rank %d's segment [%d] reads %d, expected %d", r, i,
                  base[i], r * 1000 + i);
        if (!noncontig && rn > 0 && prev_end)
            CHECK((char *)base == prev_end,
                  "segment of rank %d starts at %p, not right after the "
                  "previous one (%p)",
                  r, (void *)base, (void *)prev_end);
        if (rn > 0)
            prev_end = (char *)base + sz;
    }
    /* MPI_PROC_NULL: the first rank with a non-empty segment. */
    MPI_Aint sz = -1;
    int du = -1;
    int *base = NULL;
    CHECK_MPI(MPI_Win_shared_query(win, MPI_PROC_NULL, &sz, &du, &base));
    int first = zero_first && size > 1 ? 1 : 0;
    CHECK_INT(sz, (long long)((zero_first && first == 0) ? 0 : first + 2) * (long long)sizeof(int),
              "size of MPI_PROC_NULL's segment");
    if (sz > 0)
        CHECK_INT(base[0], first * 1000, "first element of MPI_PROC_NULL's segment");
    MPI_Win_unlock_all(win);

    int *flavor = NULL, *model = NULL, flag = 0;
    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_SHARED, "the flavor attribute");
    MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag);
    CHECK(flag && *model == MPI_WIN_UNIFIED, "the memory model attribute");
    CHECK_MPI(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "win_shared");
    MPI_Comm node;
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int nsize;
    MPI_Comm_size(node, &nsize);
    check_window(node, 0, 0);
    check_window(node, 1, 0);
    check_window(node, 0, 1);
    check_window(node, 1, 1);

    /* A window spanning nodes cannot be shared memory. */
    if (nsize < mtest_size_) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int *p = NULL;
        MPI_Win win = MPI_WIN_NULL;
        int rc = MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                                         &p, &win);
        int cls = rc;
        MPI_Error_class(rc, &cls);
        CHECK_INT(cls, MPI_ERR_RMA_SHARED, "MPI_Win_allocate_shared across nodes");
        if (rc == MPI_SUCCESS)
            MPI_Win_free(&win);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    }
    /* MPI_COMM_TYPE_SHARED splits an intercommunicator too: the result
     * pairs each group's ranks of one node (or is MPI_COMM_NULL). */
    if (mtest_size_ >= 2) {
        int rank = mtest_rank_, size = mtest_size_, color = rank < size / 2;
        MPI_Comm half, inter, sub = MPI_COMM_NULL;
        MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color ? size / 2 : 0, 9, &inter);
        CHECK_MPI(MPI_Comm_split_type(inter, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &sub));
        if (sub != MPI_COMM_NULL) {
            int flag = 0;
            MPI_Comm_test_inter(sub, &flag);
            CHECK(flag, "MPI_Comm_split_type of an intercommunicator gave an intracommunicator");
            MPI_Comm_free(&sub);
        }
        CHECK_MPI(MPI_Comm_split_type(inter, MPI_UNDEFINED, 0, MPI_INFO_NULL, &sub));
        CHECK(sub == MPI_COMM_NULL, "MPI_Comm_split_type(MPI_UNDEFINED) gave a communicator");
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }
    MPI_Comm_free(&node);
    return mtest_finalize();
}
