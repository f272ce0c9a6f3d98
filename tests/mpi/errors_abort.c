/* MPI_ERRORS_ABORT (MPI 4.0 9.3): a predefined error handler distinct from
 * the others and from the program's own, that communicators, windows,
 * files and sessions accept and report back; a communicator made from one
 * that has it inherits it.  Handlers the program creates afterwards are
 * none of the predefined ones.
 *
 * With the argument "abort", rank 0 then makes an error on a communicator
 * whose handler is MPI_ERRORS_ABORT: the job must end (status non-zero,
 * the error reported), while MPI_COMM_WORLD keeps MPI_ERRORS_RETURN, so a
 * library that ignored the handler would return and print "survived". */
#include "mtest.h"

static void user_eh(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    (void)code;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "errors_abort");
    int abort_mode = argc > 1 && strcmp(argv[1], "abort") == 0;
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40100000
    /* MPICH 4.0 asserts when MPI_ERRORS_ABORT is set (pmodels/mpich#6028,
     * fixed in 4.1). */
    if (mtest_rank_ == 0)
        printf("SKIP %s: MPICH before 4.1 asserts in MPI_Comm_set_errhandler(MPI_ERRORS_ABORT)\n",
               mtest_name_);
    MPI_Finalize();
    return 77;
#endif
    CHECK(MPI_ERRORS_ABORT != MPI_ERRORS_ARE_FATAL && MPI_ERRORS_ABORT != MPI_ERRORS_RETURN &&
              MPI_ERRORS_ABORT != MPI_ERRHANDLER_NULL,
          "MPI_ERRORS_ABORT equals another predefined handler");

    /* communicators */
    MPI_Comm c, d;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    CHECK_MPI(MPI_Comm_set_errhandler(c, MPI_ERRORS_ABORT));
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    CHECK_MPI(MPI_Comm_get_errhandler(c, &eh));
    CHECK(eh == MPI_ERRORS_ABORT, "MPI_Comm_get_errhandler did not give MPI_ERRORS_ABORT");
    MPI_Errhandler_free(&eh);
    MPI_Comm_dup(c, &d);
    eh = MPI_ERRHANDLER_NULL;
    MPI_Comm_get_errhandler(d, &eh);
    CHECK(eh == MPI_ERRORS_ABORT, "MPI_Comm_dup did not inherit MPI_ERRORS_ABORT");
    MPI_Errhandler_free(&eh);
    MPI_Comm_free(&d);

    /* a user handler is none of the predefined ones */
    MPI_Errhandler mine = MPI_ERRHANDLER_NULL;
    CHECK_MPI(MPI_Comm_create_errhandler(user_eh, &mine));
    CHECK(mine != MPI_ERRORS_ABORT && mine != MPI_ERRORS_RETURN && mine != MPI_ERRORS_ARE_FATAL,
          "a created handler equals a predefined one");
    MPI_Errhandler_free(&mine);

    /* windows */
    int buf[4] = {0};
    MPI_Win win;
    CHECK_MPI(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_ABORT));
    eh = MPI_ERRHANDLER_NULL;
    CHECK_MPI(MPI_Win_get_errhandler(win, &eh));
    CHECK(eh == MPI_ERRORS_ABORT, "MPI_Win_get_errhandler did not give MPI_ERRORS_ABORT");
    MPI_Errhandler_free(&eh);
    MPI_Win_free(&win);

    /* files (MPI_FILE_NULL's handler: the default of files) */
    MPI_Errhandler old = MPI_ERRHANDLER_NULL;
    CHECK_MPI(MPI_File_get_errhandler(MPI_FILE_NULL, &old));
    CHECK_MPI(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_ABORT));
    eh = MPI_ERRHANDLER_NULL;
    CHECK_MPI(MPI_File_get_errhandler(MPI_FILE_NULL, &eh));
    CHECK(eh == MPI_ERRORS_ABORT, "MPI_File_get_errhandler did not give MPI_ERRORS_ABORT");
    MPI_Errhandler_free(&eh);
    CHECK_MPI(MPI_File_set_errhandler(MPI_FILE_NULL, old));
    MPI_Errhandler_free(&old);

    /* sessions */
    MPI_Session s = MPI_SESSION_NULL;
    CHECK_MPI(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_ABORT, &s));
    eh = MPI_ERRHANDLER_NULL;
    CHECK_MPI(MPI_Session_get_errhandler(s, &eh));
    CHECK(eh == MPI_ERRORS_ABORT, "MPI_Session_get_errhandler did not give MPI_ERRORS_ABORT");
    MPI_Errhandler_free(&eh);
    CHECK_MPI(MPI_Session_finalize(&s));

    if (abort_mode) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        if (mtest_rank_ == 0) {
            int x = 0;
            MPI_Send(&x, 1, MPI_INT, mtest_size_ + 5, 0, c); /* an invalid rank */
            printf("survived an error under MPI_ERRORS_ABORT\n");
            fflush(stdout);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Comm_free(&c);
    return mtest_finalize();
}
