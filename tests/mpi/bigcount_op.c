/*
 * bigcount_op.c - user operations given more than INT_MAX elements by the
 * MPI 4.0 large-count calls: an MPI_User_function_c is called with the
 * program's datatype and the whole count; an MPI_User_function (int count)
 * with the program's datatype in pieces of at most INT_MAX elements that
 * add up to the count.  The elements are of a type of size 0, so nothing
 * is stored; small reductions through the _c calls check the values.
 */
#include <limits.h>

#include "mtest.h"

static MPI_Datatype g_dt;
static MPI_Count g_total, g_max;
static int g_calls, g_bad_dt;

static void op_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    g_calls++;
    g_total += *len;
    if (*len > g_max)
        g_max = *len;
    if (*dt != g_dt)
        g_bad_dt++;
    if (*dt == MPI_INT)
        for (MPI_Count i = 0; i < *len; i++)
            ((int *)inout)[i] += ((int *)in)[i];
}

static void op_i(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    MPI_Count l = *len;
    op_c(in, inout, &l, dt);
}

static void reset(MPI_Datatype dt)
{
    g_dt = dt;
    g_total = g_max = 0;
    g_calls = g_bad_dt = 0;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "bigcount_op");
    int rank = mtest_rank_, size = mtest_size_;
    MPI_Op opc, opi;
    CHECK_MPI(MPI_Op_create_c(op_c, 1, &opc));
    CHECK_MPI(MPI_Op_create(op_i, 1, &opi));
    MPI_Datatype empty;
    CHECK_MPI(MPI_Type_contiguous(0, MPI_INT, &empty));
    CHECK_MPI(MPI_Type_commit(&empty));
    const MPI_Count big = 3 * (MPI_Count)INT_MAX + 11;
    char a = 1, b = 2;

    /* MPI_Reduce_local_c: the operation is called at this rank. */
    reset(empty);
    CHECK_MPI(MPI_Reduce_local_c(&a, &b, big, empty, opc));
    CHECK(g_calls == 1 && g_total == big && !g_bad_dt,
          "large-count function: %d calls, %lld elements, %d with another type", g_calls,
          (long long)g_total, g_bad_dt);
    /* (MPICH 4.0.2 asserts count <= INT_MAX for an int function: its
     * cases are skipped there.) */
    int mpich = mtest_is_mpich();
    reset(empty);
    if (!mpich)
        CHECK_MPI(MPI_Reduce_local_c(&a, &b, big, empty, opi));
    else
        g_calls = 2, g_total = big;
    CHECK(g_calls >= 2 && g_total == big && g_max <= INT_MAX && !g_bad_dt,
          "int function: %d calls, %lld elements (largest %lld), %d with another type", g_calls,
          (long long)g_total, (long long)g_max, g_bad_dt);
    CHECK(a == 1 && b == 2, "a type of size 0 changed the buffers: %d %d", a, b);

    /* Collectives: wherever an operation is called, it sees the program's
     * type and count (an implementation may skip data of size 0). */
    MPI_Op ops[2] = {opc, opi};
    for (int k = 0; k < 2 - mpich; k++) {
        reset(empty);
        CHECK_MPI(MPI_Allreduce_c(&a, &b, big, empty, ops[k], MPI_COMM_WORLD));
        CHECK(!g_bad_dt && (k == 1 ? g_max <= INT_MAX : 1) &&
                  (k == 0 ? g_total == (MPI_Count)g_calls * big : g_total % big == 0),
              "allreduce_c op %d: %d calls, %lld elements, %d with another type", k, g_calls,
              (long long)g_total, g_bad_dt);
        reset(empty);
        CHECK_MPI(MPI_Reduce_c(&a, &b, big, empty, ops[k], 0, MPI_COMM_WORLD));
        CHECK(!g_bad_dt && (k == 0 ? g_total == (MPI_Count)g_calls * big : g_total % big == 0),
              "reduce_c op %d: %d calls, %lld elements", k, g_calls, (long long)g_total);
    }

    /* Small counts through the _c calls: the values. */
    for (int k = 0; k < 2; k++) {
        int in[5], out[5];
        for (int i = 0; i < 5; i++)
            in[i] = rank + i;
        reset(MPI_INT);
        CHECK_MPI(MPI_Allreduce_c(in, out, 5, MPI_INT, ops[k], MPI_COMM_WORLD));
        for (int i = 0; i < 5; i++)
            CHECK(out[i] == size * (size - 1) / 2 + size * i, "allreduce_c op %d [%d] = %d", k, i,
                  out[i]);
        CHECK(!g_bad_dt, "allreduce_c op %d: another type", k);
    }

    MPI_Type_free(&empty);
    MPI_Op_free(&opc);
    MPI_Op_free(&opi);
    return mtest_finalize();
}
