/*
 * errors_return: errors returned, not fatal, once MPI_COMM_WORLD has
 * MPI_ERRORS_RETURN.
 *
 *  1. A communicator created before MPI_COMM_WORLD's handler was changed,
 *     and never given one of its own, reports through MPI_COMM_WORLD's
 *     current handler (what MPICH does, and what test suites written for it
 *     expect): NULL output arguments of Comm_size, Comm_rank, Comm_split,
 *     Comm_create return MPI_ERR_ARG instead of ending the job.
 *  2. NULL output arguments of the group calls return MPI_ERR_ARG.
 *  3. A copy callback failing with an error class the program added makes
 *     MPI_Comm_dup return that class, and MPI_COMM_NULL.
 *  4. A communicator given MPI_ERRORS_ARE_FATAL explicitly is not affected
 *     by MPI_COMM_WORLD's handler (checked only through get_errhandler).
 */
#include "mtest.h"

static int my_class;

static int failing_copy(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)oldcomm, (void)keyval, (void)extra, (void)in, (void)out;
    *flag = 0;
    return my_class;
}

static int class_of(int rc)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
    return cls;
}

int main(int argc, char **argv)
{
    MPI_Comm comm, fatal, out;
    MPI_Group g, ng;
    int rc, range[1][3] = {{0, 0, 1}}, zero = 0;

    mtest_init(&argc, &argv, "errors_return");
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_dup(MPI_COMM_WORLD, &fatal);
    MPI_Comm_set_errhandler(fatal, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_group(comm, &g);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* 1 */
    rc = MPI_Comm_size(comm, NULL);
    CHECK(class_of(rc) == MPI_ERR_ARG, "Comm_size(NULL): class %d", class_of(rc));
    rc = MPI_Comm_rank(comm, NULL);
    CHECK(class_of(rc) == MPI_ERR_ARG, "Comm_rank(NULL): class %d", class_of(rc));
    rc = MPI_Comm_split(comm, 0, 0, NULL);
    CHECK(class_of(rc) == MPI_ERR_ARG, "Comm_split(NULL): class %d", class_of(rc));
    rc = MPI_Comm_create(comm, g, NULL);
    CHECK(class_of(rc) == MPI_ERR_ARG, "Comm_create(NULL): class %d", class_of(rc));

    /* 2 */
    rc = MPI_Group_size(g, NULL);
    CHECK(class_of(rc) == MPI_ERR_ARG, "Group_size(NULL): class %d", class_of(rc));
    rc = MPI_Group_rank(g, NULL);
    CHECK(class_of(rc) == MPI_ERR_ARG, "Group_rank(NULL): class %d", class_of(rc));
    rc = MPI_Group_incl(g, 1, &zero, NULL);
    CHECK(class_of(rc) == MPI_ERR_ARG, "Group_incl(NULL): class %d", class_of(rc));
    rc = MPI_Group_excl(g, 1, &zero, NULL);
    CHECK(class_of(rc) == MPI_ERR_ARG, "Group_excl(NULL): class %d", class_of(rc));
    rc = MPI_Group_range_incl(g, 1, range, NULL);
    CHECK(class_of(rc) == MPI_ERR_ARG, "Group_range_incl(NULL): class %d", class_of(rc));
    rc = MPI_Group_range_excl(g, 1, range, NULL);
    CHECK(class_of(rc) == MPI_ERR_ARG, "Group_range_excl(NULL): class %d", class_of(rc));
    rc = MPI_Group_incl(g, 1, &zero, &ng);
    CHECK(rc == MPI_SUCCESS, "Group_incl after the errors: %d", rc);
    MPI_Group_free(&ng);

    /* 3 */
    int key;
    MPI_Add_error_class(&my_class);
    MPI_Comm_create_keyval(failing_copy, MPI_COMM_NULL_DELETE_FN, &key, NULL);
    MPI_Comm_set_attr(comm, key, &zero);
    out = MPI_COMM_WORLD;
    rc = MPI_Comm_dup(comm, &out);
    CHECK(class_of(rc) == my_class, "Comm_dup with a failing copy: class %d, want %d", class_of(rc),
          my_class);
    CHECK(out == MPI_COMM_NULL, "failed Comm_dup did not give MPI_COMM_NULL");
    MPI_Comm_delete_attr(comm, key);
    MPI_Comm_free_keyval(&key);

    /* 4 */
    MPI_Errhandler eh;
    MPI_Comm_get_errhandler(fatal, &eh);
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "an explicit handler changed with WORLD's");
    if (eh != MPI_ERRHANDLER_NULL && eh != MPI_ERRORS_ARE_FATAL)
        MPI_Errhandler_free(&eh);

    MPI_Group_free(&g);
    MPI_Comm_free(&fatal);
    MPI_Comm_free(&comm);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return mtest_finalize();
}
