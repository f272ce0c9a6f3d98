/* User error handlers and user error codes: MPI_Comm_create_errhandler,
 * handlers called for errors on the communicator (and inherited by a dup),
 * MPI_Comm_call_errhandler, MPI_Add_error_class/code/string; a thousand
 * handlers created and freed, a freed one still used by its communicator. */
#include "mtest.h"
#include <string.h>

static int g_calls, g_last_code;
static MPI_Comm g_last_comm;

static void handler(MPI_Comm *comm, int *code, ...)
{
    g_calls++;
    g_last_code = *code;
    g_last_comm = *comm;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "errhandler_user");
    int mt_size = mtest_size_;
    MPI_Errhandler eh, got;
    MPI_Comm_create_errhandler(handler, &eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got);
    CHECK(got == eh, "get_errhandler returned another handler");
    if (got != MPI_ERRHANDLER_NULL && got != eh)
        MPI_Errhandler_free(&got);

    int x = 0, rc = MPI_Send(&x, 1, MPI_INT, mt_size + 3, 0, MPI_COMM_WORLD);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(g_calls == 1, "handler called %d times for a bad rank, expected 1", g_calls);
    CHECK(cls == MPI_ERR_RANK, "bad rank gave class %d", cls);
    CHECK(g_last_comm == MPI_COMM_WORLD, "handler got another communicator");

    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    rc = MPI_Send(&x, -1, MPI_INT, 0, 0, dup);
    CHECK(g_calls == 2, "the dup did not inherit the handler (%d calls)", g_calls);
    CHECK(g_last_comm == dup, "handler did not get the dup");
    MPI_Comm_free(&dup);

    int myclass, mycode;
    MPI_Add_error_class(&myclass);
    MPI_Add_error_code(myclass, &mycode);
    MPI_Add_error_string(mycode, "my own error");
    MPI_Comm_call_errhandler(MPI_COMM_WORLD, mycode);
    CHECK(g_calls == 3 && g_last_code == mycode, "call_errhandler: %d calls, code %d", g_calls,
          g_last_code);
    MPI_Error_class(mycode, &cls);
    CHECK(cls == myclass, "class of the added code is %d, expected %d", cls, myclass);
    char str[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(mycode, str, &len);
    CHECK(!strcmp(str, "my own error"), "string of the added code is '%s'", str);

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Errhandler_free(&eh);
    CHECK(eh == MPI_ERRHANDLER_NULL, "Errhandler_free did not reset the handle");
    /* Freeing MPI_ERRHANDLER_NULL is an error (mpi4py expects one). */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    CHECK(MPI_Errhandler_free(&eh) != MPI_SUCCESS, "freeing MPI_ERRHANDLER_NULL succeeded");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);

    /* Many handlers created and freed over a program's life; a freed
     * handler keeps working for the communicators (and their dups) using it. */
    MPI_Comm keep = MPI_COMM_NULL;
    for (int i = 0; i < 1000; i++) {
        MPI_Comm c, d;
        MPI_Comm_dup(MPI_COMM_SELF, &c);
        MPI_Comm_create_errhandler(handler, &eh);
        MPI_Comm_set_errhandler(c, eh);
        MPI_Errhandler_free(&eh);
        MPI_Comm_dup(c, &d);
        g_calls = 0;
        MPI_Comm_call_errhandler(d, MPI_ERR_OTHER);
        CHECK(g_calls == 1 && g_last_comm == d && g_last_code == MPI_ERR_OTHER,
              "iteration %d: handler of a dup: %d calls, code %d", i, g_calls, g_last_code);
        MPI_Comm_free(&d);
        if (i == 0)
            keep = c; /* its handler is freed but must stay usable to the end */
        else
            MPI_Comm_free(&c);
    }
    g_calls = 0;
    MPI_Comm_call_errhandler(keep, MPI_ERR_ARG);
    CHECK(g_calls == 1 && g_last_comm == keep && g_last_code == MPI_ERR_ARG,
          "the first freed handler after 1000 others: %d calls", g_calls);
    MPI_Comm_free(&keep);
    return mtest_finalize();
}
