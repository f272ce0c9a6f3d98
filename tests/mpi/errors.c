/*
 * errors: error handling with MPI_ERRORS_RETURN.
 *
 * MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); then each of
 * these erroneous calls must return an error code whose class
 * (MPI_Error_class) is the one the standard names, and the program must be
 * able to go on communicating normally afterwards (checked after each one
 * with a ring exchange and an Allreduce):
 *
 *   invalid destination/source rank (size, -7)      MPI_ERR_RANK
 *   invalid tag (-5; MPI_TAG_UB + 1 if representable) MPI_ERR_TAG
 *   negative count                                   MPI_ERR_COUNT
 *   MPI_DATATYPE_NULL                                MPI_ERR_TYPE
 *   MPI_OP_NULL in MPI_Allreduce / MPI_Reduce        MPI_ERR_OP
 *   MPI_COMM_NULL in MPI_Send / MPI_Barrier          MPI_ERR_COMM
 *   invalid root in MPI_Bcast / MPI_Reduce           MPI_ERR_ROOT
 *   message longer than the receive buffer           MPI_ERR_TRUNCATE
 *     (MPI_Recv, and MPI_Irecv + MPI_Wait); the truncated message is
 *     consumed: the next receive gets the next message;
 *     MPI_Waitall with one truncated receive returns MPI_ERR_IN_STATUS with
 *     the per-request error in each status's MPI_ERROR field.
 *
 * Also: MPI_Error_string gives a non-empty string shorter than
 * MPI_MAX_ERROR_STRING for every code seen, MPI_Error_class(MPI_SUCCESS) is
 * MPI_SUCCESS, MPI_Comm_get_errhandler returns what was set, and a
 * communicator duplicated after the handler was set inherits it.
 *
 * All the erroneous calls are made identically by every process (for the
 * collective ones) and are detectable locally from the arguments.
 */
#include "mtest.h"

#include <limits.h>

static int rank, size, right, left;

static const char *class_name(int c)
{
    if (c == MPI_SUCCESS)
        return "MPI_SUCCESS";
    if (c == MPI_ERR_RANK)
        return "MPI_ERR_RANK";
    if (c == MPI_ERR_TAG)
        return "MPI_ERR_TAG";
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
    if (c == MPI_ERR_TRUNCATE)
        return "MPI_ERR_TRUNCATE";
    if (c == MPI_ERR_IN_STATUS)
        return "MPI_ERR_IN_STATUS";
    if (c == MPI_ERR_ARG)
        return "MPI_ERR_ARG";
    if (c == MPI_ERR_OTHER)
        return "MPI_ERR_OTHER";
    if (c == MPI_ERR_INTERN)
        return "MPI_ERR_INTERN";
    return "(other class)";
}

/* rc must be an error of class cls; its error string must be sane. */
static void expect_class(int rc, int cls, const char *what)
{
    int ec = -12345, len = -1;
    char str[MPI_MAX_ERROR_STRING];

    CHECK(rc != MPI_SUCCESS, "%s: returned MPI_SUCCESS, expected %s", what, class_name(cls));
    if (rc == MPI_SUCCESS)
        return;
    MPI_Error_class(rc, &ec);
    CHECK(ec == cls, "%s: error class %d (%s), expected %d (%s)", what, ec, class_name(ec), cls,
          class_name(cls));
    memset(str, 0, sizeof str);
    MPI_Error_string(rc, str, &len);
    CHECK(len > 0 && len < MPI_MAX_ERROR_STRING && (int)strlen(str) == len,
          "%s: MPI_Error_string gave length %d for code %d", what, len, rc);
    len = -1;
    MPI_Error_string(ec, str, &len);
    CHECK(len > 0 && len < MPI_MAX_ERROR_STRING, "%s: MPI_Error_string of the class gave length %d",
          what, len);
}

/* Normal communication must still work. */
static void still_works(const char *after)
{
    int out = rank * 3 + 1, in = -1, sum = 0, rc;
    rc = MPI_Sendrecv(&out, 1, MPI_INT, right, 77, &in, 1, MPI_INT, left, 77, MPI_COMM_WORLD,
                      MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS && in == left * 3 + 1, "after %s: ring exchange rc %d value %d", after,
          rc, in);
    rc = MPI_Allreduce(&out, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS && sum == 3 * size * (size - 1) / 2 + size,
          "after %s: allreduce rc %d sum %d", after, rc, sum);
}

int main(int argc, char **argv)
{
    int rc, x = 1, y = 0;
    MPI_Errhandler eh;

    mtest_init(&argc, &argv, "errors");
    rank = mtest_rank_;
    size = mtest_size_;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;

    rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(rc == MPI_SUCCESS, "Comm_set_errhandler returned %d", rc);
    eh = MPI_ERRHANDLER_NULL;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    CHECK(eh == MPI_ERRORS_RETURN, "Comm_get_errhandler did not return "
                                   "MPI_ERRORS_RETURN");
    MPI_Errhandler_free(&eh);
    {
        int ec = -1;
        MPI_Error_class(MPI_SUCCESS, &ec);
        CHECK(ec == MPI_SUCCESS, "Error_class(MPI_SUCCESS) = %d", ec);
        CHECK(MPI_SUCCESS == 0, "MPI_SUCCESS is %d, must be 0", MPI_SUCCESS);
    }

    /* ---- MPI_ERR_RANK ---- */
    rc = MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
    expect_class(rc, MPI_ERR_RANK, "Send to rank == size");
    rc = MPI_Send(&x, 1, MPI_INT, -7, 0, MPI_COMM_WORLD);
    expect_class(rc, MPI_ERR_RANK, "Send to rank -7");
    rc = MPI_Recv(&y, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    expect_class(rc, MPI_ERR_RANK, "Recv from rank size+3");
    still_works("MPI_ERR_RANK");

    /* ---- MPI_ERR_TAG ---- */
    rc = MPI_Send(&x, 1, MPI_INT, right, -5, MPI_COMM_WORLD);
    expect_class(rc, MPI_ERR_TAG, "Send with tag -5");
    {
        int *ub = NULL, flag = 0;
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
        CHECK(flag && ub && *ub >= 32767, "MPI_TAG_UB attribute missing or "
                                          "< 32767");
        if (flag && ub && *ub < INT_MAX) {
            rc = MPI_Send(&x, 1, MPI_INT, right, *ub + 1, MPI_COMM_WORLD);
            expect_class(rc, MPI_ERR_TAG, "Send with tag MPI_TAG_UB + 1");
        }
    }
    still_works("MPI_ERR_TAG");

    /* ---- MPI_ERR_COUNT ---- */
    rc = MPI_Send(&x, -1, MPI_INT, right, 0, MPI_COMM_WORLD);
    expect_class(rc, MPI_ERR_COUNT, "Send with count -1");
    still_works("MPI_ERR_COUNT");

    /* ---- MPI_ERR_TYPE ---- */
    rc = MPI_Send(&x, 1, MPI_DATATYPE_NULL, right, 0, MPI_COMM_WORLD);
    expect_class(rc, MPI_ERR_TYPE, "Send with MPI_DATATYPE_NULL");
    still_works("MPI_ERR_TYPE");

    /* ---- MPI_ERR_OP (collective, same on every process) ---- */
    rc = MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD);
    expect_class(rc, MPI_ERR_OP, "Allreduce with MPI_OP_NULL");
    still_works("MPI_ERR_OP (Allreduce)");
    rc = MPI_Reduce(&x, &y, 1, MPI_INT, MPI_OP_NULL, 0, MPI_COMM_WORLD);
    expect_class(rc, MPI_ERR_OP, "Reduce with MPI_OP_NULL");
    still_works("MPI_ERR_OP (Reduce)");

    /* ---- MPI_ERR_COMM ---- */
    rc = MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_NULL);
    expect_class(rc, MPI_ERR_COMM, "Send on MPI_COMM_NULL");
    rc = MPI_Barrier(MPI_COMM_NULL);
    expect_class(rc, MPI_ERR_COMM, "Barrier on MPI_COMM_NULL");
    still_works("MPI_ERR_COMM");

    /* ---- MPI_ERR_ROOT ---- */
    rc = MPI_Bcast(&x, 1, MPI_INT, size, MPI_COMM_WORLD);
    expect_class(rc, MPI_ERR_ROOT, "Bcast with root == size");
    rc = MPI_Bcast(&x, 1, MPI_INT, -3, MPI_COMM_WORLD);
    expect_class(rc, MPI_ERR_ROOT, "Bcast with root -3");
    rc = MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, size + 1, MPI_COMM_WORLD);
    expect_class(rc, MPI_ERR_ROOT, "Reduce with root size+1");
    still_works("MPI_ERR_ROOT");

    /* ---- MPI_ERR_TRUNCATE ---- */
    {
        int big[10], small[5], next[10], i, cnt = -1;
        MPI_Request sr[2], rr;
        MPI_Status st;
        for (i = 0; i < 10; i++)
            big[i] = rank * 100 + i;
        /* 1. blocking receive that is too small; message still consumed */
        MPI_Isend(big, 10, MPI_INT, right, 7, MPI_COMM_WORLD, &sr[0]);
        MPI_Isend(&x, 1, MPI_INT, right, 7, MPI_COMM_WORLD, &sr[1]);
        rc = MPI_Recv(small, 5, MPI_INT, left, 7, MPI_COMM_WORLD, &st);
        expect_class(rc, MPI_ERR_TRUNCATE, "Recv of 10 ints into 5");
        for (i = 0; i < 10; i++)
            next[i] = -1;
        rc = MPI_Recv(next, 10, MPI_INT, left, 7, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_INT, &cnt);
        CHECK(rc == MPI_SUCCESS && cnt == 1 && next[0] == 1,
              "receive after truncation: rc %d count %d value %d (the "
              "truncated message was not consumed?)",
              rc, cnt, next[0]);
        rc = MPI_Waitall(2, sr, MPI_STATUSES_IGNORE);
        CHECK(rc == MPI_SUCCESS, "sends of the truncated message failed: %d", rc);
        still_works("MPI_ERR_TRUNCATE (Recv)");

        /* 2. Irecv + Wait */
        MPI_Irecv(small, 5, MPI_INT, left, 8, MPI_COMM_WORLD, &rr);
        MPI_Isend(big, 10, MPI_INT, right, 8, MPI_COMM_WORLD, &sr[0]);
        rc = MPI_Wait(&rr, &st);
        expect_class(rc, MPI_ERR_TRUNCATE, "Irecv of 10 ints into 5 + Wait");
        CHECK(rr == MPI_REQUEST_NULL, "Wait with an error did not free the "
                                      "request");
        rc = MPI_Wait(&sr[0], MPI_STATUS_IGNORE);
        CHECK(rc == MPI_SUCCESS, "send of the truncated message failed: %d", rc);
        still_works("MPI_ERR_TRUNCATE (Wait)");

        /* 3. Waitall: one good receive, one truncated */
        {
            MPI_Request q[2];
            MPI_Status sts[2];
            int good = -1, ec = -1;
            sts[0].MPI_ERROR = -999;
            sts[1].MPI_ERROR = -999;
            MPI_Irecv(&good, 1, MPI_INT, left, 9, MPI_COMM_WORLD, &q[0]);
            MPI_Irecv(small, 5, MPI_INT, left, 10, MPI_COMM_WORLD, &q[1]);
            MPI_Isend(&x, 1, MPI_INT, right, 9, MPI_COMM_WORLD, &sr[0]);
            MPI_Isend(big, 10, MPI_INT, right, 10, MPI_COMM_WORLD, &sr[1]);
            rc = MPI_Waitall(2, q, sts);
            expect_class(rc, MPI_ERR_IN_STATUS, "Waitall with a truncation");
            CHECK(sts[0].MPI_ERROR == MPI_SUCCESS, "Waitall: good request's MPI_ERROR is %d",
                  sts[0].MPI_ERROR);
            if (sts[1].MPI_ERROR != MPI_SUCCESS && sts[1].MPI_ERROR != -999)
                MPI_Error_class(sts[1].MPI_ERROR, &ec);
            CHECK(ec == MPI_ERR_TRUNCATE, "Waitall: truncated request's MPI_ERROR is %d (class %d)",
                  sts[1].MPI_ERROR, ec);
            CHECK(good == 1, "Waitall: good receive got %d", good);
            rc = MPI_Waitall(2, sr, MPI_STATUSES_IGNORE);
            CHECK(rc == MPI_SUCCESS, "sends failed: %d", rc);
        }
        still_works("MPI_ERR_TRUNCATE (Waitall)");
    }

    /* ---- a dup inherits the error handler ---- */
    {
        MPI_Comm d;
        MPI_Errhandler e2 = MPI_ERRHANDLER_NULL;
        MPI_Comm_dup(MPI_COMM_WORLD, &d);
        MPI_Comm_get_errhandler(d, &e2);
        CHECK(e2 == MPI_ERRORS_RETURN, "dup did not inherit MPI_ERRORS_RETURN");
        MPI_Errhandler_free(&e2);
        rc = MPI_Send(&x, 1, MPI_INT, size, 0, d);
        expect_class(rc, MPI_ERR_RANK, "Send to rank == size on a dup");
        MPI_Comm_free(&d);
        still_works("error on dup");
    }

    return mtest_finalize();
}
