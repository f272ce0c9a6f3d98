/*
 * spawn_multiple: MPI_Comm_spawn_multiple (MPI 4.1 section 11.8.3) and the
 * "path" and "wdir" info keys.
 *
 * Rank 0 of the parents spawns two commands of this program as one
 * MPI_COMM_WORLD: command 0 names the program by its base name with the
 * "path" info set to its directory (1 process, argument "a"); command 1 by
 * its full path with "wdir" set to "/" (2 processes, argument "b").  The
 * children check that they are ranks 0 (a) and 1-2 (b) of a world of 3,
 * that MPI_APPNUM is their command's index, that "b" runs in "/", and that
 * the parent group has the parents' size; they report their failures to
 * the parents, which check the error codes and the remote group's size.
 */
#include <limits.h>

#include "mtest.h"

static int child_main(MPI_Comm parent, int argc, char **argv)
{
    int rank, size, psize, flag = 0, *appnum = NULL;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_remote_size(parent, &psize);
    CHECK_INT(size, 3, "children's world size");
    const char *want = rank == 0 ? "a" : "b";
    CHECK(argc == 2 && !strcmp(argv[1], want), "rank %d: argv[1] is \"%s\", expected \"%s\"", rank,
          argc > 1 ? argv[1] : "(none)", want);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
    CHECK(flag && *appnum == (rank == 0 ? 0 : 1), "MPI_APPNUM: flag %d value %d", flag,
          flag ? *appnum : -1);
    if (rank > 0) {
        char cwd[PATH_MAX];
        CHECK(getcwd(cwd, sizeof cwd) && !strcmp(cwd, "/"), "wdir \"/\" not honoured: in %s", cwd);
    }
    int errs = mtest_errors();
    MPI_Reduce(&errs, NULL, 1, MPI_INT, MPI_SUM, 0, parent);
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Comm parent;
    MPI_Init(&argc, &argv);
    mtest_begin("spawn_multiple");
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL)
        return child_main(parent, argc, argv);
    int rank = mtest_rank_;

    char full[PATH_MAX], dir[PATH_MAX];
    CHECK(realpath(argv[0], full) != NULL, "realpath of %s failed", argv[0]);
    snprintf(dir, sizeof dir, "%s", full);
    char *slash = strrchr(dir, '/');
    *slash = 0;
    char *cmds[2] = {slash + 1, full};
    char *args_a[] = {"a", NULL}, *args_b[] = {"b", NULL};
    char **argvs[2] = {args_a, args_b};
    int maxprocs[2] = {1, 2};
    MPI_Info infos[2];
    MPI_Info_create(&infos[0]);
    MPI_Info_set(infos[0], "path", dir);
    MPI_Info_create(&infos[1]);
    MPI_Info_set(infos[1], "wdir", "/");
    int errcodes[3] = {-1, -1, -1};
    MPI_Comm ic;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc =
        MPI_Comm_spawn_multiple(2, cmds, argvs, maxprocs, infos, 0, MPI_COMM_WORLD, &ic, errcodes);
    mtest_dynproc_unavailable(rc);
    CHECK_INT(rc, MPI_SUCCESS, "MPI_Comm_spawn_multiple");
    MPI_Info_free(&infos[0]);
    MPI_Info_free(&infos[1]);
    for (int i = 0; i < 3; i++)
        CHECK_INT(errcodes[i], MPI_SUCCESS, "errcode");
    int rs = -1;
    MPI_Comm_remote_size(ic, &rs);
    CHECK_INT(rs, 3, "remote size");
    int cerrs = 0;
    MPI_Reduce(NULL, &cerrs, 1, MPI_INT, MPI_SUM, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, ic);
    if (rank == 0)
        CHECK(cerrs == 0, "the children reported %d failures", cerrs);
    MPI_Comm_disconnect(&ic);
    return mtest_finalize();
}
