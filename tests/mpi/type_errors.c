/*
 * type_errors: datatype errors are reported with the right error class when
 * MPI_COMM_WORLD has MPI_ERRORS_RETURN, and the program goes on.
 *
 *   uncommitted type in MPI_Send / MPI_Recv / MPI_Bcast      MPI_ERR_TYPE
 *   MPI_DATATYPE_NULL as old type, in commit, in free        MPI_ERR_TYPE
 *   freeing a predefined type                                MPI_ERR_TYPE
 *   negative count in a constructor                          MPI_ERR_COUNT
 *   negative block length                                    MPI_ERR_ARG or MPI_ERR_COUNT
 *   message longer than the receive type's signature         MPI_ERR_TRUNCATE
 *     (MPI_Recv, and MPI_Wait on MPI_Irecv)
 *   Get_contents of a predefined type                        an error
 *
 * Only when built against BDMPI (guarantees beyond the standard, which
 * leaves erroneous programs undefined; MPICH 4.0 detects none of these):
 * invalid subarrays, MPI_Pack past the end of the buffer and MPI_Unpack
 * past the end of the input fail; a freed handle is reported as
 * MPI_ERR_TYPE, and a predefined op on a struct of mixed basic types as
 * MPI_ERR_OP, even on one rank.
 */
#include "mtest.h"

static int rank, size;

static void expect(int rc, int cls, const char *what)
{
    int c = -1;
    if (rc == MPI_SUCCESS) {
        CHECK(0, "%s: succeeded, expected error class %d", what, cls);
        return;
    }
    MPI_Error_class(rc, &c);
    CHECK(c == cls, "%s: error class %d, expected %d", what, c, cls);
}

static void expect2(int rc, int cls1, int cls2, const char *what)
{
    int c = -1;
    if (rc == MPI_SUCCESS) {
        CHECK(0, "%s: succeeded, expected an error", what);
        return;
    }
    MPI_Error_class(rc, &c);
    CHECK(c == cls1 || c == cls2, "%s: error class %d, expected %d or %d", what, c, cls1, cls2);
}

static void expect_fail(int rc, const char *what)
{
    CHECK(rc != MPI_SUCCESS, "%s: succeeded, expected an error", what);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "type_errors");
    rank = mtest_rank_;
    size = mtest_size_;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int buf[16] = {0};
    MPI_Datatype t, u, n = MPI_DATATYPE_NULL;

    /* Uncommitted types in communication. */
    CHECK_MPI(MPI_Type_contiguous(2, MPI_INT, &u));
    expect(MPI_Send(buf, 1, u, rank, 1, MPI_COMM_WORLD), MPI_ERR_TYPE, "Send, uncommitted");
    expect(MPI_Recv(buf, 1, u, MPI_PROC_NULL, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_TYPE,
           "Recv, uncommitted");
    expect(MPI_Bcast(buf, 1, u, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "Bcast, uncommitted");
    int pos = 0;
    expect(MPI_Pack(buf, 1, u, buf + 8, 32, &pos, MPI_COMM_WORLD), MPI_ERR_TYPE,
           "Pack, uncommitted");
    /* Committed, the same calls work. */
    CHECK_MPI(MPI_Type_commit(&u));
    CHECK_MPI(MPI_Bcast(buf, 1, u, 0, MPI_COMM_WORLD));

    /* MPI_DATATYPE_NULL. */
    expect(MPI_Type_contiguous(1, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE, "contiguous of NULL");
    expect(MPI_Type_vector(2, 1, 2, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE, "vector of NULL");
    expect(MPI_Type_commit(&n), MPI_ERR_TYPE, "commit MPI_DATATYPE_NULL");
    n = MPI_DATATYPE_NULL;
    expect(MPI_Type_free(&n), MPI_ERR_TYPE, "free MPI_DATATYPE_NULL");
    {
        int bl[2] = {1, 1};
        MPI_Aint dp[2] = {0, 8};
        MPI_Datatype ty[2] = {MPI_INT, MPI_DATATYPE_NULL};
        expect(MPI_Type_create_struct(2, bl, dp, ty, &t), MPI_ERR_TYPE, "struct with NULL");
    }
    MPI_Datatype pre = MPI_INT;
    expect(MPI_Type_free(&pre), MPI_ERR_TYPE, "free MPI_INT");
    CHECK(pre == MPI_INT, "failed MPI_Type_free changed the handle");

    /* Negative counts and block lengths. */
    expect(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT, "contiguous count -1");
    expect(MPI_Type_vector(-2, 1, 1, MPI_INT, &t), MPI_ERR_COUNT, "vector count -2");
    expect2(MPI_Type_vector(2, -1, 1, MPI_INT, &t), MPI_ERR_ARG, MPI_ERR_COUNT,
            "vector blocklength -1");
    {
        int bl[2] = {1, -3}, dp[2] = {0, 4};
        expect2(MPI_Type_indexed(2, bl, dp, MPI_INT, &t), MPI_ERR_ARG, MPI_ERR_COUNT,
                "indexed blocklength -3");
    }
    expect(MPI_Send(buf, -1, u, rank, 1, MPI_COMM_WORLD), MPI_ERR_COUNT, "Send count -1");

    /* Truncation: 5 ints into 2 elements of 2 ints. */
    {
        int out[5] = {1, 2, 3, 4, 5}, in[4] = {0};
        MPI_Request rq;
        MPI_Status st;
        CHECK_MPI(MPI_Isend(out, 5, MPI_INT, rank, 2, MPI_COMM_WORLD, &rq));
        expect(MPI_Recv(in, 2, u, rank, 2, MPI_COMM_WORLD, &st), MPI_ERR_TRUNCATE,
               "Recv truncated");
        CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        MPI_Request r2[2];
        CHECK_MPI(MPI_Irecv(in, 2, u, rank, 3, MPI_COMM_WORLD, &r2[0]));
        CHECK_MPI(MPI_Isend(out, 5, MPI_INT, rank, 3, MPI_COMM_WORLD, &r2[1]));
        CHECK_MPI(MPI_Wait(&r2[1], MPI_STATUS_IGNORE));
        expect(MPI_Wait(&r2[0], &st), MPI_ERR_TRUNCATE, "Wait on a truncated Irecv");
        /* Exactly as long as the signature: no error. */
        CHECK_MPI(MPI_Sendrecv(out, 4, MPI_INT, rank, 4, in, 2, u, rank, 4, MPI_COMM_WORLD, &st));
        CHECK(in[3] == 4, "exact-length receive");
    }

    /* Get_contents of a predefined type. */
    {
        int ints[1];
        MPI_Aint aints[1];
        MPI_Datatype types[1];
        expect_fail(MPI_Type_get_contents(MPI_DOUBLE, 1, 1, 1, ints, aints, types),
                    "Get_contents of MPI_DOUBLE");
    }

#ifdef BDMPI_VERSION_STRING
    /* Invalid subarrays. */
    {
        int sz[2] = {4, 4}, sub[2] = {2, 5}, st[2] = {0, 0};
        expect_fail(MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, MPI_INT, &t),
                    "subarray larger than the array");
        int sub2[2] = {2, 2}, st2[2] = {3, 0};
        expect_fail(MPI_Type_create_subarray(2, sz, sub2, st2, MPI_ORDER_C, MPI_INT, &t),
                    "subarray past the end");
        expect_fail(MPI_Type_create_subarray(2, sz, sub2, st, 12345, MPI_INT, &t),
                    "subarray with a bad order");
    }

    /* Pack and Unpack past the end. */
    {
        char pb[8];
        int vals[4] = {1, 2, 3, 4};
        pos = 0;
        expect_fail(MPI_Pack(vals, 4, MPI_INT, pb, (int)sizeof pb, &pos, MPI_COMM_WORLD),
                    "Pack past the end of the buffer");
        pos = 0;
        CHECK_MPI(MPI_Pack(vals, 2, MPI_INT, pb, (int)sizeof pb, &pos, MPI_COMM_WORLD));
        int o[4];
        pos = 0;
        expect_fail(MPI_Unpack(pb, (int)sizeof pb, &pos, o, 3, MPI_INT, MPI_COMM_WORLD),
                    "Unpack past the end of the input");
    }

    {
        MPI_Datatype f, stale;
        MPI_Type_contiguous(3, MPI_INT, &f);
        MPI_Type_commit(&f);
        stale = f;
        CHECK_MPI(MPI_Type_free(&f));
        expect(MPI_Send(buf, 1, stale, rank, 5, MPI_COMM_WORLD), MPI_ERR_TYPE,
               "Send with a freed type");
        expect(MPI_Type_free(&stale), MPI_ERR_TYPE, "double free");
        MPI_Aint lb, ext;
        stale = f = MPI_DATATYPE_NULL;
        expect(MPI_Type_get_extent(MPI_DATATYPE_NULL, &lb, &ext), MPI_ERR_TYPE,
               "extent of MPI_DATATYPE_NULL");

        struct {
            int i;
            double d;
        } s = {1, 2.0};
        MPI_Aint d[2] = {0, (char *)&s.d - (char *)&s};
        int bl[2] = {1, 1};
        MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE}, mixed;
        MPI_Type_create_struct(2, bl, d, ty, &mixed);
        MPI_Type_commit(&mixed);
        expect(MPI_Allreduce(&s, buf, 1, mixed, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP,
               "MPI_SUM on a struct of int and double");
        MPI_Type_free(&mixed);
    }
#endif

    MPI_Type_free(&u);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return mtest_finalize();
}
