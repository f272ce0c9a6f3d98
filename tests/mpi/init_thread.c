/*
 * init_thread: MPI_Init_thread(MPI_THREAD_FUNNELED).
 *
 * "provided" must be one of the four levels (it may be lower or higher than
 * the requested level), MPI_Query_thread must report the same level,
 * MPI_Is_thread_main is true on the calling thread, and MPI works normally
 * afterwards (point-to-point and a collective).
 */
#include "mtest.h"

static int valid_level(int l)
{
    return l == MPI_THREAD_SINGLE || l == MPI_THREAD_FUNNELED || l == MPI_THREAD_SERIALIZED ||
           l == MPI_THREAD_MULTIPLE;
}

int main(int argc, char **argv)
{
    int provided = -1, queried = -1, flag = -1, rank, size;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    mtest_begin("init_thread");
    rank = mtest_rank_;
    size = mtest_size_;

    CHECK(valid_level(provided), "MPI_Init_thread provided invalid level %d", provided);
    MPI_Query_thread(&queried);
    CHECK(queried == provided, "MPI_Query_thread %d != provided %d", queried, provided);
    MPI_Is_thread_main(&flag);
    CHECK(flag == 1, "MPI_Is_thread_main gave %d on the main thread", flag);
    flag = -1;
    MPI_Initialized(&flag);
    CHECK(flag == 1, "MPI_Initialized after MPI_Init_thread gave %d", flag);

    /* Every rank must report the same level. */
    {
        int mn = -1, mx = -1;
        MPI_Allreduce(&provided, &mn, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(&provided, &mx, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        CHECK(mn == mx, "ranks disagree on provided level (%d..%d)", mn, mx);
    }

    /* Ordinary communication still works. */
    {
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        int out = rank * 3 + 1, in = -1;
        MPI_Status st;
        MPI_Sendrecv(&out, 1, MPI_INT, right, 11, &in, 1, MPI_INT, left, 11, MPI_COMM_WORLD, &st);
        CHECK_INT(in, left * 3 + 1, "ring value from left");
        CHECK_INT(st.MPI_SOURCE, left, "status source");
    }

    return mtest_finalize();
}
