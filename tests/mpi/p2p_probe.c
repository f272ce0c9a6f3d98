/*
 * p2p_probe: MPI_Probe and MPI_Iprobe.
 *
 *  1. Each rank sends its right neighbour a message with tag 1 (3 ints) and
 *     one with tag 2 (1 + rank % 50 ints), nonblocking.  The neighbour
 *     probes (left, 2) and checks source/tag/count, probes again (the probe
 *     does not consume the message), receives it with exactly the probed
 *     count; then loops on Iprobe(ANY_SOURCE, ANY_TAG) until it sees the
 *     tag-1 message and receives it using the status fields.
 *  2. Zero-length message: Probe gives count 0.
 *  3. Iprobe for a tag nobody ever sends returns flag 0.
 *  4. Probe/Iprobe on MPI_PROC_NULL: return at once, source MPI_PROC_NULL,
 *     tag MPI_ANY_TAG, count 0.
 *  5. Rank 0 probes ANY_SOURCE for messages of unknown length from every
 *     rank, allocates from MPI_Get_count, and receives from
 *     status.MPI_SOURCE: the classic dynamic-receive pattern.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    int rank, size, right, left, i, cnt, flag;
    MPI_Status st;

    mtest_init(&argc, &argv, "p2p_probe");
    rank = mtest_rank_;
    size = mtest_size_;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;

    /* ---- 1 ---- */
    {
        int a[3] = {rank, rank + 1, rank + 2}, b[64], n = 1 + rank % 50;
        int nl = 1 + left % 50, got[64];
        MPI_Request req[2];
        for (i = 0; i < n; i++)
            b[i] = rank * 100 + i;
        MPI_Isend(a, 3, MPI_INT, right, 1, MPI_COMM_WORLD, &req[0]);
        MPI_Isend(b, n, MPI_INT, right, 2, MPI_COMM_WORLD, &req[1]);

        MPI_Probe(left, 2, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_INT, &cnt);
        CHECK_INT(st.MPI_SOURCE, left, "Probe(left,2) source");
        CHECK_INT(st.MPI_TAG, 2, "Probe(left,2) tag");
        CHECK_INT(cnt, nl, "Probe(left,2) count");
        MPI_Probe(MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_INT, &cnt);
        CHECK(st.MPI_SOURCE == left && cnt == nl,
              "second Probe(ANY_SOURCE,2) saw source %d count %d", st.MPI_SOURCE, cnt);
        for (i = 0; i < 64; i++)
            got[i] = -1;
        MPI_Recv(got, cnt, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
        for (i = 0; i < nl; i++)
            CHECK(got[i] == left * 100 + i, "probed message [%d]=%d", i, got[i]);
        CHECK_INT(got[nl], -1, "receive wrote past the probed count");

        flag = 0;
        while (!flag)
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        MPI_Get_count(&st, MPI_INT, &cnt);
        CHECK_INT(st.MPI_SOURCE, left, "Iprobe(ANY,ANY) source");
        CHECK_INT(st.MPI_TAG, 1, "Iprobe(ANY,ANY) tag");
        CHECK_INT(cnt, 3, "Iprobe(ANY,ANY) count");
        MPI_Recv(got, cnt, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(got[0] == left && got[1] == left + 1 && got[2] == left + 2,
              "Iprobe'd message: %d %d %d", got[0], got[1], got[2]);
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- 2. zero-length ---- */
    {
        MPI_Request req;
        MPI_Isend(NULL, 0, MPI_BYTE, right, 3, MPI_COMM_WORLD, &req);
        MPI_Probe(left, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        CHECK_INT(cnt, 0, "zero-length Probe count");
        CHECK_INT(st.MPI_TAG, 3, "zero-length Probe tag");
        MPI_Recv(NULL, 0, MPI_BYTE, left, 3, MPI_COMM_WORLD, &st);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- 3. nothing pending for this tag ---- */
    flag = -1;
    MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, &st);
    CHECK_INT(flag, 0, "Iprobe for a tag never sent");
    flag = -1;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    CHECK_INT(flag, 0, "Iprobe with nothing pending");

    /* ---- 4. MPI_PROC_NULL ---- */
    st.MPI_SOURCE = -5;
    MPI_Probe(MPI_PROC_NULL, 4, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && cnt == 0,
          "Probe(MPI_PROC_NULL): source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, cnt);
    flag = 0;
    st.MPI_SOURCE = -5;
    MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(flag && st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && cnt == 0,
          "Iprobe(MPI_PROC_NULL): flag %d source %d tag %d count %d", flag, st.MPI_SOURCE,
          st.MPI_TAG, cnt);

    /* Rank 0 must finish its "nothing pending" checks before anyone sends. */
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- 5. dynamic receive at rank 0 ---- */
    {
        int n = 1 + (rank * 7) % 17, *buf = malloc(sizeof(int) * (size_t)n);
        MPI_Request req;
        for (i = 0; i < n; i++)
            buf[i] = rank ^ (i << 12);
        MPI_Isend(buf, n, MPI_INT, 0, 5, MPI_COMM_WORLD, &req);
        if (rank == 0) {
            char *seen = calloc((size_t)size, 1);
            for (int m = 0; m < size; m++) {
                int src, *rb;
                MPI_Probe(MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &st);
                src = st.MPI_SOURCE;
                MPI_Get_count(&st, MPI_INT, &cnt);
                if (src < 0 || src >= size || seen[src]) {
                    CHECK(0, "Probe(ANY_SOURCE) gave bad/repeated source %d", src);
                    break;
                }
                seen[src] = 1;
                CHECK_INT(cnt, 1 + (src * 7) % 17, "probed count");
                rb = malloc(sizeof(int) * (size_t)(cnt > 0 ? cnt : 1));
                MPI_Recv(rb, cnt, MPI_INT, src, st.MPI_TAG, MPI_COMM_WORLD, &st);
                CHECK_INT(st.MPI_SOURCE, src, "receive after probe: source");
                for (i = 0; i < cnt; i++)
                    CHECK(rb[i] == (src ^ (i << 12)), "from %d [%d]=%d", src, i, rb[i]);
                free(rb);
            }
            free(seen);
        }
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        free(buf);
    }

    return mtest_finalize();
}
