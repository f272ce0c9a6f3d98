/*
 * handles_c2f: language interoperability helpers and small leftovers
 * (MPI 3.1 17.2.4-17.2.5, 14.2.4, 8.3.4).
 *
 *  1. Handle conversion round trips (c2f then f2c gives the same handle)
 *     for communicators, datatypes, groups, requests, ops, infos and error
 *     handlers, predefined and user-created; the converted handles work.
 *  2. MPI_Status_c2f / MPI_Status_f2c keep source, tag, error and the
 *     count.
 *  3. MPI_Pcontrol accepts any level.
 *  4. Deprecated MPI_Errhandler_create / _set / _get: a handler created
 *     with the old name is called for an error and can be read back.
 *  5. MPI_Info_get_string: the value, its length with the terminator,
 *     truncation to a short buffer, an absent key.
 *  6. The mpi_f08 status (MPI 4.0 19.3.5): MPI_Status_c2f08 and _f082c keep
 *     source, tag, error and the count; MPI_F08_status has the three public
 *     fields.  (MPI_Status_f082f and _f2f08, which MPICH 4.0 declares but
 *     does not define in C, are tested through Fortran: f08_ext.)
 */
#include "mtest.h"

static int handler_calls;

static void handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm, (void)code;
    handler_calls++;
}

static int sum_fn_calls;
static void my_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    sum_fn_calls++;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "handles_c2f");
    int rank = mtest_rank_, size = mtest_size_;

    /* 1. */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_WORLD)) == MPI_COMM_WORLD, "MPI_COMM_WORLD");
    CHECK(MPI_Comm_f2c(MPI_Comm_c2f(dup)) == dup, "a duplicate communicator");
    MPI_Comm back = MPI_Comm_f2c(MPI_Comm_c2f(dup));
    int n = -1;
    MPI_Comm_size(back, &n);
    CHECK_INT(n, size, "size through the converted communicator");
    MPI_Comm_free(&dup);

    MPI_Datatype v;
    MPI_Type_contiguous(3, MPI_INT, &v);
    MPI_Type_commit(&v);
    CHECK(MPI_Type_f2c(MPI_Type_c2f(MPI_DOUBLE)) == MPI_DOUBLE, "MPI_DOUBLE");
    CHECK(MPI_Type_f2c(MPI_Type_c2f(v)) == v, "a derived datatype");
    int tsz = -1;
    MPI_Type_size(MPI_Type_f2c(MPI_Type_c2f(v)), &tsz);
    CHECK_INT(tsz, 3 * (int)sizeof(int), "size through the converted datatype");
    MPI_Type_free(&v);

    MPI_Group g;
    MPI_Comm_group(MPI_COMM_WORLD, &g);
    CHECK(MPI_Group_f2c(MPI_Group_c2f(g)) == g, "a group");
    CHECK(MPI_Group_f2c(MPI_Group_c2f(MPI_GROUP_EMPTY)) == MPI_GROUP_EMPTY, "MPI_GROUP_EMPTY");
    MPI_Group_free(&g);

    MPI_Request rq;
    int x = rank, y = -1;
    MPI_Irecv(&y, 1, MPI_INT, rank, 1, MPI_COMM_WORLD, &rq);
    MPI_Fint frq = MPI_Request_c2f(rq);
    MPI_Send(&x, 1, MPI_INT, rank, 1, MPI_COMM_WORLD);
    MPI_Request rq2 = MPI_Request_f2c(frq);
    CHECK(rq2 == rq, "a request");
    MPI_Wait(&rq2, MPI_STATUS_IGNORE);
    CHECK_INT(y, rank, "received through the converted request");
    CHECK(MPI_Request_f2c(MPI_Request_c2f(MPI_REQUEST_NULL)) == MPI_REQUEST_NULL,
          "MPI_REQUEST_NULL");

    MPI_Op op;
    MPI_Op_create(my_sum, 1, &op);
    CHECK(MPI_Op_f2c(MPI_Op_c2f(MPI_SUM)) == MPI_SUM, "MPI_SUM");
    CHECK(MPI_Op_f2c(MPI_Op_c2f(op)) == op, "a user op");
    int one = 1, tot = 0;
    MPI_Allreduce(&one, &tot, 1, MPI_INT, MPI_Op_f2c(MPI_Op_c2f(op)), MPI_COMM_WORLD);
    CHECK_INT(tot, size, "Allreduce with the converted op");
    MPI_Op_free(&op);

    MPI_Info info;
    MPI_Info_create(&info);
    CHECK(MPI_Info_f2c(MPI_Info_c2f(info)) == info, "an info");
    CHECK(MPI_Info_f2c(MPI_Info_c2f(MPI_INFO_NULL)) == MPI_INFO_NULL, "MPI_INFO_NULL");
    CHECK(MPI_Errhandler_f2c(MPI_Errhandler_c2f(MPI_ERRORS_RETURN)) == MPI_ERRORS_RETURN,
          "MPI_ERRORS_RETURN");

    /* 2. */
    {
        MPI_Status cs, cs2;
        MPI_Fint fs[MPI_F_STATUS_SIZE];
        int a[4] = {1, 2, 3, 4}, b[4], cnt = -1;
        MPI_Sendrecv(a, 4, MPI_INT, rank, 33, b, 4, MPI_INT, rank, 33, MPI_COMM_WORLD, &cs);
        cs.MPI_ERROR = MPI_ERR_TAG;
        CHECK_MPI(MPI_Status_c2f(&cs, fs));
        memset(&cs2, 0, sizeof cs2);
        CHECK(fs[MPI_F_SOURCE] == rank && fs[MPI_F_TAG] == 33 && fs[MPI_F_ERROR] == MPI_ERR_TAG,
              "Fortran status: source %d tag %d error %d", (int)fs[MPI_F_SOURCE],
              (int)fs[MPI_F_TAG], (int)fs[MPI_F_ERROR]);
        CHECK_MPI(MPI_Status_f2c(fs, &cs2));
        MPI_Get_count(&cs2, MPI_INT, &cnt);
        CHECK(cs2.MPI_SOURCE == rank && cs2.MPI_TAG == 33 && cs2.MPI_ERROR == MPI_ERR_TAG &&
                  cnt == 4,
              "status round trip: source %d tag %d error %d count %d", cs2.MPI_SOURCE, cs2.MPI_TAG,
              cs2.MPI_ERROR, cnt);
    }

    /* 3. */
    CHECK_MPI(MPI_Pcontrol(0));
    CHECK_MPI(MPI_Pcontrol(2));
    CHECK_MPI(MPI_Pcontrol(1));

    /* 4. */
    {
        MPI_Errhandler eh, got;
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        CHECK_MPI(MPI_Errhandler_create(handler, &eh));
        CHECK_MPI(MPI_Errhandler_set(c, eh));
        CHECK_MPI(MPI_Errhandler_get(c, &got));
        CHECK(got == eh, "Errhandler_get gave a different handler");
        MPI_Errhandler_free(&got);
        int z = 0;
        MPI_Send(&z, 1, MPI_INT, size + 5, 0, c); /* invalid rank: the handler runs */
        CHECK_INT(handler_calls, 1, "handler calls");
        MPI_Errhandler_free(&eh);
        MPI_Comm_free(&c);
    }

    /* 5. */
    {
        char val[64];
        int len, flag;
        MPI_Info_set(info, "color", "blue-green");
        len = sizeof val;
        flag = 0;
        CHECK_MPI(MPI_Info_get_string(info, "color", &len, val, &flag));
        CHECK(flag && !strcmp(val, "blue-green") && len == 11, "get_string: %d \"%s\" %d", flag,
              val, len);
        len = 5;
        MPI_Info_get_string(info, "color", &len, val, &flag);
        CHECK(flag && !strcmp(val, "blue") && len == 11, "short buffer: \"%s\" %d", val, len);
        flag = 1;
        len = sizeof val;
        MPI_Info_get_string(info, "shape", &len, val, &flag);
        CHECK(!flag, "absent key found");
    }
    MPI_Info_free(&info);

    /* 6. */
    {
        MPI_Status cs, back;
        MPI_F08_status f08;
        int a[3] = {7, 8, 9}, b[3], cnt = -1;
        MPI_Sendrecv(a, 3, MPI_INT, rank, 44, b, 3, MPI_INT, rank, 44, MPI_COMM_WORLD, &cs);
        cs.MPI_ERROR = MPI_ERR_OTHER;
        CHECK_MPI(MPI_Status_c2f08(&cs, &f08));
        CHECK(f08.MPI_SOURCE == rank && f08.MPI_TAG == 44 && f08.MPI_ERROR == MPI_ERR_OTHER,
              "mpi_f08 status: source %d tag %d error %d", (int)f08.MPI_SOURCE, (int)f08.MPI_TAG,
              (int)f08.MPI_ERROR);
        memset(&back, 0, sizeof back);
        CHECK_MPI(MPI_Status_f082c(&f08, &back));
        MPI_Get_count(&back, MPI_INT, &cnt);
        CHECK(back.MPI_SOURCE == rank && back.MPI_TAG == 44 && back.MPI_ERROR == MPI_ERR_OTHER &&
                  cnt == 3,
              "f08 status round trip: source %d tag %d error %d count %d", back.MPI_SOURCE,
              back.MPI_TAG, back.MPI_ERROR, cnt);
    }
    return mtest_finalize();
}
