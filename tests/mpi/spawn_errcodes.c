/*
 * spawn_errcodes: a spawn whose executable does not exist (MPI 4.1 section
 * 11.8.2): with MPI_ERRORS_RETURN the call returns an error of class
 * MPI_ERR_SPAWN on every rank of the spawning group, every entry of
 * array_of_errcodes is an error (class MPI_ERR_SPAWN), and the job goes on:
 * a later collective on MPI_COMM_WORLD works.
 */
#include "mtest.h"

#define N 2

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "spawn_errcodes");
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        MPI_Comm_disconnect(&parent);
        MPI_Finalize();
        return 0;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm good;
    int rc0 = MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &good,
                             MPI_ERRCODES_IGNORE);
    mtest_dynproc_unavailable(rc0);
    CHECK_INT(rc0, MPI_SUCCESS, "spawn of this program");
    if (rc0 == MPI_SUCCESS)
        MPI_Comm_disconnect(&good);
    char missing[256];
    snprintf(missing, sizeof missing, "%s.does-not-exist", argv[0]);
    int errcodes[N] = {MPI_SUCCESS, MPI_SUCCESS};
    MPI_Comm ic = MPI_COMM_NULL;
    int rc =
        MPI_Comm_spawn(missing, MPI_ARGV_NULL, N, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, errcodes);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS, "spawning a missing executable succeeded");
    CHECK_INT(cls, MPI_ERR_SPAWN, "error class of the spawn");
    for (int i = 0; i < N; i++) {
        int c = -1;
        MPI_Error_class(errcodes[i], &c);
        CHECK(errcodes[i] != MPI_SUCCESS, "errcodes[%d] is MPI_SUCCESS", i);
        CHECK_INT(c, MPI_ERR_SPAWN, "class of errcodes[i]");
    }
    if (ic != MPI_COMM_NULL) {
        int rs = 0;
        MPI_Comm_remote_size(ic, &rs);
        CHECK_INT(rs, 0, "processes started");
    }
    int one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK_INT(sum, mtest_size_, "Allreduce after the failed spawn");
    return mtest_finalize();
}
