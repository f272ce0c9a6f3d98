/*
 * io_file: file handling and file error handlers (MPI 3.1 13.2, 13.7, 8.3.3).
 *
 *  1. The default error handler of files (MPI_FILE_NULL's) is
 *     MPI_ERRORS_RETURN, and a new file starts with it.
 *  2. A collective open with MPI_MODE_CREATE | MPI_MODE_EXCL over
 *     MPI_COMM_WORLD: get_amode gives the amode back, get_group the group
 *     of the communicator, get_size 0.
 *  3. set_size grows and shrinks the file for every process;
 *     preallocate grows it and never shrinks it.
 *  4. set_info/get_info: get_info gives a new info object each time.
 *  5. A second open with MPI_MODE_EXCL fails with MPI_ERR_FILE_EXISTS on
 *     every process; MPI_MODE_RDONLY opens it; MPI_File_delete removes it,
 *     after which an open fails with MPI_ERR_NO_SUCH_FILE.
 *  6. MPI_MODE_DELETE_ON_CLOSE removes the file at close.
 *  7. A user file error handler set on MPI_FILE_NULL is called for a
 *     failing open with MPI_FILE_NULL; one set on a file is called by
 *     MPI_File_call_errhandler with that file, and get_errhandler returns it.
 *  8. Every process opens a file of its own over MPI_COMM_SELF.
 */
#include "mtest.h"

static int g_calls;
static MPI_File g_seen;
static int g_code;

static void handler(MPI_File *fh, int *code, ...)
{
    g_calls++;
    g_seen = *fh;
    g_code = *code;
}

int main(int argc, char **argv)
{
    char name[512], own[600];
    MPI_File fh, fh2;
    MPI_Errhandler eh, got;
    MPI_Offset size;
    int rc, amode, rank, nprocs, result;

    mtest_init(&argc, &argv, "io_file");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    mtest_tmpname(name, sizeof name, "io_file", MPI_COMM_WORLD);

    /* 1 */
    CHECK_MPI(MPI_File_get_errhandler(MPI_FILE_NULL, &got));
    CHECK(got == MPI_ERRORS_RETURN, "MPI_FILE_NULL's handler is not MPI_ERRORS_RETURN");

    /* 2 */
    amode = MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR;
    rc = MPI_File_open(MPI_COMM_WORLD, name, amode, MPI_INFO_NULL, &fh);
    CHECK(rc == MPI_SUCCESS, "open(CREATE|EXCL|RDWR) of %s: class %d", name, mtest_class(rc));
    if (rc != MPI_SUCCESS)
        return mtest_finalize();
    CHECK_MPI(MPI_File_get_errhandler(fh, &got));
    CHECK(got == MPI_ERRORS_RETURN, "a new file's handler is not MPI_ERRORS_RETURN");
    int am = -1;
    CHECK_MPI(MPI_File_get_amode(fh, &am));
    CHECK_INT(am, amode, "get_amode");
    MPI_Group g, wg;
    CHECK_MPI(MPI_File_get_group(fh, &g));
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_compare(g, wg, &result);
    CHECK(result == MPI_IDENT, "get_group: compare gives %d, not MPI_IDENT", result);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    CHECK_MPI(MPI_File_get_size(fh, &size));
    CHECK_INT(size, 0, "size of a new file");

    /* 3 */
    CHECK_MPI(MPI_File_set_size(fh, 1000));
    CHECK_MPI(MPI_File_get_size(fh, &size));
    CHECK_INT(size, 1000, "size after set_size(1000)");
    CHECK_MPI(MPI_File_set_size(fh, 10));
    CHECK_MPI(MPI_File_get_size(fh, &size));
    CHECK_INT(size, 10, "size after set_size(10)");
    CHECK_MPI(MPI_File_preallocate(fh, 4096));
    CHECK_MPI(MPI_File_get_size(fh, &size));
    CHECK_INT(size, 4096, "size after preallocate(4096)");
    CHECK_MPI(MPI_File_preallocate(fh, 100));
    CHECK_MPI(MPI_File_get_size(fh, &size));
    CHECK_INT(size, 4096, "size after preallocate(100)");

    /* 4 */
    MPI_Info info, used1, used2;
    MPI_Info_create(&info);
    MPI_Info_set(info, "access_style", "read_mostly");
    CHECK_MPI(MPI_File_set_info(fh, info));
    MPI_Info_free(&info);
    CHECK_MPI(MPI_File_get_info(fh, &used1));
    CHECK_MPI(MPI_File_get_info(fh, &used2));
    CHECK(used1 != MPI_INFO_NULL && used2 != MPI_INFO_NULL && used1 != used2, "get_info: %d and %d",
          (int)used1, (int)used2);
    int nkeys = -1;
    CHECK_MPI(MPI_Info_get_nkeys(used1, &nkeys));
    CHECK(nkeys >= 0, "get_nkeys of info_used: %d", nkeys);
    MPI_Info_free(&used1);
    MPI_Info_free(&used2);
    CHECK_MPI(MPI_File_close(&fh));
    CHECK(fh == MPI_FILE_NULL, "close did not set fh to MPI_FILE_NULL");

    /* 5 */
    rc = MPI_File_open(MPI_COMM_WORLD, name, amode, MPI_INFO_NULL, &fh);
    CHECK(mtest_class(rc) == MPI_ERR_FILE_EXISTS, "second open with EXCL: class %d",
          mtest_class(rc));
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    CHECK_MPI(MPI_File_get_size(fh, &size));
    CHECK_INT(size, 4096, "size seen by a new open");
    CHECK_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK_MPI(MPI_File_delete(name, MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    rc = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(mtest_class(rc) == MPI_ERR_NO_SUCH_FILE, "open of a deleted file: class %d",
          mtest_class(rc));

    /* 6 */
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name,
                            MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE,
                            MPI_INFO_NULL, &fh));
    CHECK_MPI(MPI_File_close(&fh));
    rc = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(mtest_class(rc) == MPI_ERR_NO_SUCH_FILE, "open after DELETE_ON_CLOSE: class %d",
          mtest_class(rc));

    /* 7 */
    CHECK_MPI(MPI_File_create_errhandler(handler, &eh));
    CHECK_MPI(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
    CHECK_MPI(MPI_File_get_errhandler(MPI_FILE_NULL, &got));
    CHECK(got == eh, "MPI_FILE_NULL's handler is not the one set");
    g_calls = 0;
    g_seen = (MPI_File)-1;
    rc = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(g_calls == 1 && g_seen == MPI_FILE_NULL, "handler: %d calls, file %d", g_calls,
          (int)(g_seen == MPI_FILE_NULL));
    CHECK(mtest_class(g_code) == MPI_ERR_NO_SUCH_FILE, "handler got class %d", mtest_class(g_code));
    CHECK_MPI(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name,
                            MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                            MPI_INFO_NULL, &fh));
    CHECK_MPI(MPI_File_set_errhandler(fh, eh));
    CHECK_MPI(MPI_File_get_errhandler(fh, &got));
    CHECK(got == eh, "the file's handler is not the one set");
    MPI_Errhandler_free(&got);
    g_calls = 0;
    MPI_File_call_errhandler(fh, MPI_ERR_OTHER);
    CHECK(g_calls == 1 && g_seen == fh && g_code == MPI_ERR_OTHER,
          "call_errhandler: %d calls, code %d", g_calls, g_code);
    CHECK_MPI(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
    MPI_Errhandler_free(&eh);
    CHECK_MPI(MPI_File_close(&fh));

    /* 8 */
    snprintf(own, sizeof own, "%s.%d", name, rank);
    CHECK_MPI(
        MPI_File_open(MPI_COMM_SELF, own, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh2));
    CHECK_MPI(MPI_File_set_size(fh2, 100 + rank));
    CHECK_MPI(MPI_File_get_size(fh2, &size));
    CHECK_INT(size, 100 + rank, "size of the rank's own file");
    CHECK_MPI(MPI_File_close(&fh2));
    CHECK_MPI(MPI_File_delete(own, MPI_INFO_NULL));
    (void)nprocs;
    return mtest_finalize();
}
