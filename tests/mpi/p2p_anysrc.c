/*
 * p2p_anysrc: wildcard receives and the status object.
 *
 *  1. Every rank (rank 0 included, to itself) sends one message to rank 0
 *     with tag 1 + rank % 100 and 1 + rank % 5 ints.  Rank 0 receives them
 *     with MPI_ANY_SOURCE/MPI_ANY_TAG into an 8-int buffer (the message is
 *     smaller than the buffer), and checks MPI_SOURCE, MPI_TAG,
 *     MPI_Get_count, MPI_Get_elements, the data, that each source appears
 *     exactly once, and that MPI_ERROR was not set to an error.
 *  2. Every rank sends tag 2 and then tag 3 to rank 0 (nonblocking).  Rank 0
 *     first receives all tag-3 messages with MPI_ANY_SOURCE (so the later
 *     message is selected by tag), then all tag-2 messages.
 *  3. Specific source with MPI_ANY_TAG: each rank sends tags 10, 20, 30 to
 *     its right neighbour; the neighbour receives (left, ANY_TAG) three times
 *     and must see 10, 20, 30 in order.
 *  4. Zero-byte message via ANY_SOURCE/ANY_TAG: count 0, correct source/tag.
 *  5. MPI_STATUS_IGNORE for Recv/Wait, MPI_STATUSES_IGNORE for Waitall.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    int rank, size, right, left, i;
    MPI_Status st;

    mtest_init(&argc, &argv, "p2p_anysrc");
    rank = mtest_rank_;
    size = mtest_size_;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;

    /* ---- 1. ANY_SOURCE + ANY_TAG at rank 0 ---- */
    {
        int out[5], n = 1 + rank % 5;
        MPI_Request req;
        for (i = 0; i < n; i++)
            out[i] = rank * 100 + i;
        MPI_Isend(out, n, MPI_INT, 0, 1 + rank % 100, MPI_COMM_WORLD, &req);
        if (rank == 0) {
            char *seen = calloc((size_t)size, 1);
            for (int m = 0; m < size; m++) {
                int in[8], cnt = -1, elems = -1, src;
                for (i = 0; i < 8; i++)
                    in[i] = -7;
                st.MPI_SOURCE = -99;
                st.MPI_TAG = -99;
                st.MPI_ERROR = MPI_SUCCESS;
                MPI_Recv(in, 8, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
                src = st.MPI_SOURCE;
                CHECK(src >= 0 && src < size, "ANY_SOURCE status source %d", src);
                if (src < 0 || src >= size)
                    continue;
                CHECK(!seen[src], "source %d received twice", src);
                seen[src] = 1;
                CHECK_INT(st.MPI_TAG, 1 + src % 100, "ANY_TAG status tag");
                CHECK(st.MPI_ERROR == MPI_SUCCESS,
                      "MPI_ERROR field set to %d by a successful receive", st.MPI_ERROR);
                MPI_Get_count(&st, MPI_INT, &cnt);
                CHECK_INT(cnt, 1 + src % 5, "Get_count of short message");
                MPI_Get_elements(&st, MPI_INT, &elems);
                CHECK_INT(elems, 1 + src % 5, "Get_elements of short message");
                for (i = 0; i < 8; i++) {
                    int want = i < 1 + src % 5 ? src * 100 + i : -7;
                    CHECK(in[i] == want, "msg from %d: in[%d]=%d want %d", src, i, in[i], want);
                }
            }
            free(seen);
        }
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }

    /* Wildcard receives below must not see this phase's messages. */
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- 2. ANY_SOURCE with a specific tag picks by tag ---- */
    {
        int out[2] = {rank * 2 + 0, rank * 2 + 1};
        MPI_Request req[2];
        MPI_Isend(&out[0], 1, MPI_INT, 0, 2, MPI_COMM_WORLD, &req[0]);
        MPI_Isend(&out[1], 1, MPI_INT, 0, 3, MPI_COMM_WORLD, &req[1]);
        if (rank == 0) {
            char *seen = calloc((size_t)size, 1);
            for (int tag = 3; tag >= 2; tag--) {
                memset(seen, 0, (size_t)size);
                for (int m = 0; m < size; m++) {
                    int in = -1, src;
                    MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st);
                    src = st.MPI_SOURCE;
                    CHECK_INT(st.MPI_TAG, tag, "tag-selected status tag");
                    if (src < 0 || src >= size) {
                        CHECK(0, "bad source %d", src);
                        continue;
                    }
                    CHECK(!seen[src], "tag %d: source %d twice", tag, src);
                    seen[src] = 1;
                    CHECK_INT(in, src * 2 + (tag - 2), "tag-selected data");
                }
            }
            free(seen);
        }
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
        CHECK(req[0] == MPI_REQUEST_NULL && req[1] == MPI_REQUEST_NULL,
              "requests not freed by Waitall(MPI_STATUSES_IGNORE)");
    }

    /* Wildcard receives below must not see this phase's messages. */
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- 3. specific source, ANY_TAG, order preserved ---- */
    {
        int out[3] = {rank + 10, rank + 20, rank + 30};
        MPI_Request req[3];
        for (i = 0; i < 3; i++)
            MPI_Isend(&out[i], 1, MPI_INT, right, 10 * (i + 1), MPI_COMM_WORLD, &req[i]);
        for (i = 0; i < 3; i++) {
            int in = -1;
            MPI_Recv(&in, 1, MPI_INT, left, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            CHECK_INT(st.MPI_TAG, 10 * (i + 1), "ANY_TAG from left: tag order");
            CHECK_INT(st.MPI_SOURCE, left, "ANY_TAG from left: source");
            CHECK_INT(in, left + 10 * (i + 1), "ANY_TAG from left: data");
        }
        MPI_Waitall(3, req, MPI_STATUSES_IGNORE);
    }

    /* Wildcard receives below must not see this phase's messages. */
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- 4. zero-length message through wildcards ---- */
    {
        MPI_Request req;
        int dummy = 5, in = 77, cnt = -1;
        MPI_Isend(&dummy, 0, MPI_INT, right, 44, MPI_COMM_WORLD, &req);
        MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        CHECK_INT(st.MPI_SOURCE, left, "zero-length: source");
        CHECK_INT(st.MPI_TAG, 44, "zero-length: tag");
        MPI_Get_count(&st, MPI_INT, &cnt);
        CHECK_INT(cnt, 0, "zero-length: count");
        CHECK_INT(in, 77, "zero-length receive modified the buffer");
    }

    /* Wildcard receives below must not see this phase's messages. */
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- 5. STATUS_IGNORE everywhere ---- */
    {
        MPI_Request req[2];
        int out = rank + 1000, in = -1, in2 = -1;
        MPI_Isend(&out, 1, MPI_INT, right, 55, MPI_COMM_WORLD, &req[0]);
        MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, 55, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&req[0], MPI_STATUS_IGNORE);
        CHECK_INT(in, left + 1000, "Recv with MPI_STATUS_IGNORE");

        MPI_Irecv(&in2, 1, MPI_INT, left, MPI_ANY_TAG, MPI_COMM_WORLD, &req[0]);
        MPI_Isend(&out, 1, MPI_INT, right, 56, MPI_COMM_WORLD, &req[1]);
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
        CHECK_INT(in2, left + 1000, "Irecv + Waitall(MPI_STATUSES_IGNORE)");
    }

    /* Wildcard receives below must not see this phase's messages. */
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- 6. every rank receives from ANY_SOURCE in a ring ---- */
    {
        int out = rank * 7 + 3, in = -1;
        MPI_Sendrecv(&out, 1, MPI_INT, right, 66, &in, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                     MPI_COMM_WORLD, &st);
        CHECK_INT(st.MPI_SOURCE, left, "Sendrecv ANY_SOURCE: source");
        CHECK_INT(st.MPI_TAG, 66, "Sendrecv ANY_TAG: tag");
        CHECK_INT(in, left * 7 + 3, "Sendrecv ANY_SOURCE: data");
    }

    return mtest_finalize();
}
