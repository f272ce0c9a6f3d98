/*
 * coll_nb_errors: erroneous arguments to nonblocking collectives.
 *
 * With MPI_ERRORS_RETURN on MPI_COMM_WORLD, each of these calls (made
 * identically by every process, detectable locally from the arguments,
 * each with one error only, since the order of the checks is not defined)
 * must return an error of the class the standard names, and the program
 * must go on with nonblocking and blocking collectives afterwards:
 *
 *   MPI_Ibarrier / MPI_Iallreduce on MPI_COMM_NULL        MPI_ERR_COMM
 *   MPI_Ibcast, MPI_Ireduce, MPI_Iscatter, MPI_Igather
 *     with root == size or root == -2                     MPI_ERR_ROOT
 *   negative count (Ibcast, Ialltoall, Iallgather send
 *     count, Iscatter receive count)                      MPI_ERR_COUNT
 *   MPI_DATATYPE_NULL (Ibcast, Iallgather receive type,
 *     Igather send type)                                  MPI_ERR_TYPE
 *   MPI_OP_NULL (Iallreduce, Ireduce, Iscan, Iexscan)     MPI_ERR_OP
 *
 * After each group: an MPI_Iallreduce + MPI_Wait and an MPI_Ibcast with a
 * pending MPI_Ibarrier, completed with MPI_Waitall, must give the right
 * answers.
 */
#include "mtest.h"

static int rank, size;

static const char *class_name(int c)
{
    if (c == MPI_SUCCESS)
        return "MPI_SUCCESS";
    if (c == MPI_ERR_COUNT)
        return "MPI_ERR_COUNT";
    if (c == MPI_ERR_TYPE)
        return "MPI_ERR_TYPE";
    if (c == MPI_ERR_OP)
        return "MPI_ERR_OP";
    if (c == MPI_ERR_COMM)
        return "MPI_ERR_COMM";
    if (c == MPI_ERR_ROOT)
        return "MPI_ERR_ROOT";
    if (c == MPI_ERR_ARG)
        return "MPI_ERR_ARG";
    if (c == MPI_ERR_BUFFER)
        return "MPI_ERR_BUFFER";
    if (c == MPI_ERR_REQUEST)
        return "MPI_ERR_REQUEST";
    return "(other class)";
}

static void expect_class(int rc, int cls, const char *what)
{
    int ec = -1, len = 0;
    char str[MPI_MAX_ERROR_STRING];
    if (rc == MPI_SUCCESS) {
        CHECK(0, "%s: succeeded, expected %s", what, class_name(cls));
        return;
    }
    MPI_Error_class(rc, &ec);
    CHECK(ec == cls, "%s: error class %d (%s), expected %s", what, ec, class_name(ec),
          class_name(cls));
    str[0] = 0;
    MPI_Error_string(rc, str, &len);
    CHECK(len > 0 && len < MPI_MAX_ERROR_STRING, "%s: error string of length %d", what, len);
}

static void still_works(const char *after)
{
    int in = rank + 1, out = -1, x[3], i;
    MPI_Request r[2];
    CHECK_MPI(MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[0]));
    CHECK_MPI(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    CHECK(out == size * (size + 1) / 2, "after %s: Iallreduce gave %d", after, out);
    for (i = 0; i < 3; i++)
        x[i] = rank == size - 1 ? 40 + i : 0;
    CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &r[0]));
    CHECK_MPI(MPI_Ibcast(x, 3, MPI_INT, size - 1, MPI_COMM_WORLD, &r[1]));
    CHECK_MPI(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    for (i = 0; i < 3; i++)
        CHECK(x[i] == 40 + i, "after %s: Ibcast gave [%d] = %d", after, i, x[i]);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    int buf[8] = {0}, out[8];
    int *big;
    MPI_Request req;

    mtest_init(&argc, &argv, "coll_nb_errors");
    rank = mtest_rank_;
    size = mtest_size_;
    big = calloc((size_t)(8 * size), sizeof(int));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    expect_class(MPI_Ibarrier(MPI_COMM_NULL, &req), MPI_ERR_COMM, "Ibarrier on MPI_COMM_NULL");
    expect_class(MPI_Iallreduce(buf, out, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL, &req), MPI_ERR_COMM,
                 "Iallreduce on MPI_COMM_NULL");
    still_works("MPI_ERR_COMM");

    expect_class(MPI_Ibcast(buf, 1, MPI_INT, size, MPI_COMM_WORLD, &req), MPI_ERR_ROOT,
                 "Ibcast with root == size");
    expect_class(MPI_Ibcast(buf, 1, MPI_INT, -2, MPI_COMM_WORLD, &req), MPI_ERR_ROOT,
                 "Ibcast with root -2");
    expect_class(MPI_Ireduce(buf, out, 1, MPI_INT, MPI_SUM, size, MPI_COMM_WORLD, &req),
                 MPI_ERR_ROOT, "Ireduce with root == size");
    expect_class(MPI_Iscatter(big, 1, MPI_INT, out, 1, MPI_INT, size + 3, MPI_COMM_WORLD, &req),
                 MPI_ERR_ROOT, "Iscatter with root size+3");
    expect_class(MPI_Igather(buf, 1, MPI_INT, big, 1, MPI_INT, -2, MPI_COMM_WORLD, &req),
                 MPI_ERR_ROOT, "Igather with root -2");
    still_works("MPI_ERR_ROOT");

    expect_class(MPI_Ibcast(buf, -1, MPI_INT, 0, MPI_COMM_WORLD, &req), MPI_ERR_COUNT,
                 "Ibcast with count -1");
    expect_class(MPI_Ialltoall(big, -1, MPI_INT, big, -1, MPI_INT, MPI_COMM_WORLD, &req),
                 MPI_ERR_COUNT, "Ialltoall with counts -1");
    expect_class(MPI_Iallgather(buf, -2, MPI_INT, big, 1, MPI_INT, MPI_COMM_WORLD, &req),
                 MPI_ERR_COUNT, "Iallgather with send count -2");
    expect_class(MPI_Iscatter(big, 1, MPI_INT, out, -3, MPI_INT, 0, MPI_COMM_WORLD, &req),
                 MPI_ERR_COUNT, "Iscatter with receive count -3");
    still_works("MPI_ERR_COUNT");

    expect_class(MPI_Ibcast(buf, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD, &req), MPI_ERR_TYPE,
                 "Ibcast of MPI_DATATYPE_NULL");
    expect_class(MPI_Iallgather(buf, 1, MPI_INT, big, 1, MPI_DATATYPE_NULL, MPI_COMM_WORLD, &req),
                 MPI_ERR_TYPE, "Iallgather with receive type MPI_DATATYPE_NULL");
    expect_class(MPI_Igather(buf, 1, MPI_DATATYPE_NULL, big, 1, MPI_INT, 0, MPI_COMM_WORLD, &req),
                 MPI_ERR_TYPE, "Igather with send type MPI_DATATYPE_NULL");
    still_works("MPI_ERR_TYPE");

    expect_class(MPI_Iallreduce(buf, out, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD, &req),
                 MPI_ERR_OP, "Iallreduce with MPI_OP_NULL");
    expect_class(MPI_Ireduce(buf, out, 1, MPI_INT, MPI_OP_NULL, 0, MPI_COMM_WORLD, &req),
                 MPI_ERR_OP, "Ireduce with MPI_OP_NULL");
    expect_class(MPI_Iscan(buf, out, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD, &req), MPI_ERR_OP,
                 "Iscan with MPI_OP_NULL");
    expect_class(MPI_Iexscan(buf, out, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD, &req), MPI_ERR_OP,
                 "Iexscan with MPI_OP_NULL");
    still_works("MPI_ERR_OP");

    free(big);
    return mtest_finalize();
}
