/*
 * io_errors: the error classes of file calls (MPI 3.1 13.2.1, 13.7), all
 * returned (files default to MPI_ERRORS_RETURN) and the same on every
 * process of a collective call.
 *
 *  1. Bad amodes: none or two of RDONLY/RDWR/WRONLY, RDONLY with CREATE or
 *     EXCL, RDWR with SEQUENTIAL: MPI_ERR_AMODE.
 *  2. Opening a file that does not exist without MPI_MODE_CREATE:
 *     MPI_ERR_NO_SUCH_FILE; deleting one: MPI_ERR_NO_SUCH_FILE.
 *  3. MPI_MODE_EXCL on an existing file: MPI_ERR_FILE_EXISTS.
 *  4. A file without read permission (unless running as root):
 *     MPI_ERR_ACCESS.
 *  5. Calls on an invalid file handle: MPI_ERR_FILE.
 *  6. set_size with a negative size: MPI_ERR_ARG.
 *  7. Writing to a file opened MPI_MODE_RDONLY: MPI_ERR_READ_ONLY (what
 *     MPICH gives); reading one opened MPI_MODE_WRONLY: MPI_ERR_ACCESS; explicit offsets on a file opened
 *     MPI_MODE_SEQUENTIAL: MPI_ERR_UNSUPPORTED_OPERATION; a negative
 *     offset: MPI_ERR_ARG; a negative count: MPI_ERR_COUNT.
 *  8. Views and positions: an uncommitted filetype, MPI_ERR_TYPE; a
 *     filetype not made of whole etypes, MPI_ERR_ARG (MPICH's class); an
 *     unknown data representation, MPI_ERR_UNSUPPORTED_DATAREP; seek with
 *     a bad whence or to a negative position, MPI_ERR_ARG; ending a split
 *     collective never begun and beginning a second one, MPI_ERR_IO (what
 *     MPICH gives); seek on an MPI_MODE_SEQUENTIAL file,
 *     MPI_ERR_UNSUPPORTED_OPERATION; a shared-pointer read of a write-only
 *     file, MPI_ERR_ACCESS.
 *  9. Type maps of views (MPI 3.1 13.1.1, 13.3): a filetype with a negative
 *     or a decreasing displacement, or (the file open for writing) with
 *     overlapping blocks: MPI_ERR_IO (MPICH's class; its test
 *     io/tst_fileview gives etypes such type maps too, which this test
 *     does not, as MPICH 4.0.2 then aborts in MPI_File_close); overlapping
 *     blocks in a file opened read-only are allowed.
 * 10. A split collective begun on one process only while another is in
 *     progress there (erroneous): that process gets MPI_ERR_IO, the others
 *     do their access and do not wait for it; all end their splits.  Not
 *     under MPICH, whose other processes then wait for ever in ROMIO.
 */
#include <sys/stat.h>

#include "mtest.h"

#define EXPECT(call, cls)                                                                          \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        CHECK(mtest_class(rc_) == (cls), "%s: class %d, expected %s (%d)", #call,                  \
              mtest_class(rc_), #cls, (cls));                                                      \
    } while (0)

int main(int argc, char **argv)
{
    char name[512], missing[600];
    MPI_File fh = MPI_FILE_NULL;
    MPI_Offset size;
    int rank;

    mtest_init(&argc, &argv, "io_errors");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    mtest_tmpname(name, sizeof name, "io_errors", MPI_COMM_WORLD);
    snprintf(missing, sizeof missing, "%s.missing", name);

    /* 1 */
    EXPECT(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE, MPI_INFO_NULL, &fh), MPI_ERR_AMODE);
    EXPECT(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
           MPI_ERR_AMODE);
    EXPECT(
        MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh),
        MPI_ERR_AMODE);
    EXPECT(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY | MPI_MODE_EXCL, MPI_INFO_NULL, &fh),
           MPI_ERR_AMODE);
    EXPECT(MPI_File_open(MPI_COMM_WORLD, name,
                         MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL, &fh),
           MPI_ERR_AMODE);

    /* 2 */
    EXPECT(MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
           MPI_ERR_NO_SUCH_FILE);
    EXPECT(MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
           MPI_ERR_NO_SUCH_FILE);
    if (rank == 0)
        EXPECT(MPI_File_delete(missing, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE);

    /* 3 */
    CHECK_MPI(
        MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    CHECK_MPI(MPI_File_close(&fh));
    EXPECT(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY,
                         MPI_INFO_NULL, &fh),
           MPI_ERR_FILE_EXISTS);

    /* 4 */
    if (geteuid() != 0) {
        if (rank == 0)
            chmod(name, 0);
        MPI_Barrier(MPI_COMM_WORLD);
        EXPECT(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
               MPI_ERR_ACCESS);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            chmod(name, 0600);
        MPI_Barrier(MPI_COMM_WORLD);
    }

    /* 5 */
    EXPECT(MPI_File_get_size(MPI_FILE_NULL, &size), MPI_ERR_FILE);

    /* 6 */
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    EXPECT(MPI_File_set_size(fh, -5), MPI_ERR_ARG);
    CHECK_MPI(MPI_File_close(&fh));

    /* 7 */
    int buf[4] = {1, 2, 3, 4};
    MPI_Status st;
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    EXPECT(MPI_File_write_at(fh, 0, buf, 4, MPI_INT, &st), MPI_ERR_READ_ONLY);
    EXPECT(MPI_File_write(fh, buf, 4, MPI_INT, &st), MPI_ERR_READ_ONLY);
    EXPECT(MPI_File_read_at(fh, -1, buf, 4, MPI_INT, &st), MPI_ERR_ARG);
    EXPECT(MPI_File_read_at(fh, 0, buf, -1, MPI_INT, &st), MPI_ERR_COUNT);
    CHECK_MPI(MPI_File_close(&fh));
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    EXPECT(MPI_File_read_at(fh, 0, buf, 4, MPI_INT, &st), MPI_ERR_ACCESS);
    EXPECT(MPI_File_read(fh, buf, 4, MPI_INT, &st), MPI_ERR_ACCESS);
    CHECK_MPI(MPI_File_close(&fh));
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL,
                            MPI_INFO_NULL, &fh));
    EXPECT(MPI_File_write_at(fh, 0, buf, 4, MPI_INT, &st), MPI_ERR_UNSUPPORTED_OPERATION);
    CHECK_MPI(MPI_File_close(&fh));

    /* 8 */
    MPI_Datatype loose, three;
    MPI_Type_contiguous(2, MPI_INT, &loose); /* never committed */
    MPI_Type_contiguous(3, MPI_BYTE, &three);
    MPI_Type_commit(&three);
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    EXPECT(MPI_File_set_view(fh, 0, MPI_INT, loose, "native", MPI_INFO_NULL), MPI_ERR_TYPE);
    EXPECT(MPI_File_set_view(fh, 0, MPI_INT, three, "native", MPI_INFO_NULL), MPI_ERR_ARG);
    EXPECT(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "bogus-rep", MPI_INFO_NULL),
           MPI_ERR_UNSUPPORTED_DATAREP);
    EXPECT(MPI_File_seek(fh, 0, 12345), MPI_ERR_ARG);
    EXPECT(MPI_File_seek(fh, -1, MPI_SEEK_SET), MPI_ERR_ARG);
    EXPECT(MPI_File_read_all_end(fh, buf, &st), MPI_ERR_IO);
    CHECK_MPI(MPI_File_read_at_all_begin(fh, 0, buf, 1, MPI_INT));
    EXPECT(MPI_File_read_at_all_begin(fh, 0, buf, 1, MPI_INT), MPI_ERR_IO);
    CHECK_MPI(MPI_File_read_at_all_end(fh, buf, &st));
    CHECK_MPI(MPI_File_close(&fh));
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL,
                            MPI_INFO_NULL, &fh));
    EXPECT(MPI_File_seek(fh, 0, MPI_SEEK_SET), MPI_ERR_UNSUPPORTED_OPERATION);
    EXPECT(MPI_File_read_shared(fh, buf, 1, MPI_INT, &st), MPI_ERR_ACCESS);
    CHECK_MPI(MPI_File_close(&fh));
    MPI_Type_free(&loose);
    MPI_Type_free(&three);

    /* 9 */
    static const int dneg[2] = {-2, 2}, ddec[2] = {3, 0}, dovl[2] = {0, 1};
    static const int bone[2] = {1, 1}, bovl[2] = {3, 1};
    MPI_Datatype neg, dec, ovl;
    MPI_Type_indexed(2, bone, dneg, MPI_INT, &neg);
    MPI_Type_indexed(2, bone, ddec, MPI_INT, &dec);
    MPI_Type_indexed(2, bovl, dovl, MPI_INT, &ovl);
    MPI_Type_commit(&neg);
    MPI_Type_commit(&dec);
    MPI_Type_commit(&ovl);
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    EXPECT(MPI_File_set_view(fh, 0, MPI_INT, neg, "native", MPI_INFO_NULL), MPI_ERR_IO);
    EXPECT(MPI_File_set_view(fh, 0, MPI_INT, dec, "native", MPI_INFO_NULL), MPI_ERR_IO);
    EXPECT(MPI_File_set_view(fh, 0, MPI_INT, ovl, "native", MPI_INFO_NULL), MPI_ERR_IO);
    CHECK_MPI(MPI_File_close(&fh));
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    EXPECT(MPI_File_set_view(fh, 0, MPI_INT, dec, "native", MPI_INFO_NULL), MPI_ERR_IO);
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, ovl, "native", MPI_INFO_NULL));
    CHECK_MPI(MPI_File_close(&fh));
    MPI_Type_free(&neg);
    MPI_Type_free(&dec);
    MPI_Type_free(&ovl);

    /* 10 */
    if (!mtest_is_mpich()) {
        int one = 1000 + rank, two = -1, got = -1;
        CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
        if (rank == 0)
            CHECK_MPI(MPI_File_write_at_all_begin(fh, 0, &two, 1, MPI_INT));
        else
            CHECK_MPI(MPI_File_write_at_all(fh, rank * 4, &one, 1, MPI_INT, &st));
        /* every process's second collective call on the file */
        if (rank == 0) {
            EXPECT(MPI_File_read_at_all_begin(fh, 0, &got, 1, MPI_INT), MPI_ERR_IO);
            CHECK_MPI(MPI_File_write_at_all_end(fh, &two, &st));
        } else {
            CHECK_MPI(MPI_File_read_at_all_begin(fh, rank * 4, &got, 1, MPI_INT));
            CHECK_MPI(MPI_File_read_at_all_end(fh, &got, &st));
            CHECK_INT(got, 1000 + rank, "the read of a process beside the refused one");
        }
        CHECK_MPI(MPI_File_close(&fh));
    }

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK_MPI(MPI_File_delete(name, MPI_INFO_NULL));
    return mtest_finalize();
}
