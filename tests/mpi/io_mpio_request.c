/*
 * io_mpio_request: ROMIO's names for the requests of nonblocking file
 * access, which MPICH's mpi.h (through mpio.h) provides and programs
 * written for ROMIO use: MPIO_Request, MPIO_Wait, MPIO_Test, PMPIO_Wait,
 * PMPIO_Test, with mpio.h included as such programs do.
 *
 * Every process writes its block of the file with MPI_File_iwrite_at into
 * an MPIO_Request and completes it with MPIO_Wait (the status counts the
 * bytes); after a barrier it reads its neighbour's block with
 * MPI_File_iread_at, completed by polling MPIO_Test, and the individual
 * pointer's MPI_File_iread/iwrite completed by PMPIO_Test and PMPIO_Wait.
 * A completed request is MPI_REQUEST_NULL, and MPIO_Test of it says done.
 */
#include "mtest.h"
#include <mpio.h>

#define N 4096

int main(int argc, char **argv)
{
    char name[512];
    MPI_File fh;
    MPI_Status st;
    static int out[N], in[N];
    int count, flag;

    mtest_init(&argc, &argv, "io_mpio_request");
    int me = mtest_rank_, np = mtest_size_;
    mtest_tmpname(name, sizeof name, "io_mpio_request", MPI_COMM_WORLD);
    int rc = MPI_File_open(MPI_COMM_WORLD, name,
                           MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh);
    CHECK(rc == MPI_SUCCESS, "open %s: class %d", name, mtest_class(rc));
    if (rc)
        return mtest_finalize();
    const MPI_Offset B = (MPI_Offset)sizeof out;

    for (int i = 0; i < N; i++)
        out[i] = me * 100003 + i;
    MPIO_Request req;
    CHECK_MPI(MPI_File_iwrite_at(fh, me * B, out, N, MPI_INT, &req));
    CHECK_MPI(MPIO_Wait(&req, &st));
    CHECK(req == MPI_REQUEST_NULL, "MPIO_Wait left the request active");
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_INT(count, N, "ints written by iwrite_at (MPIO_Wait's status)");
    CHECK_MPI(MPI_File_sync(fh));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_File_sync(fh));

    int peer = (me + 1) % np;
    memset(in, 0xff, sizeof in);
    CHECK_MPI(MPI_File_iread_at(fh, peer * B, in, N, MPI_INT, &req));
    flag = 0;
    for (long spins = 0; !flag && spins < 100000000L; spins++)
        CHECK_MPI(MPIO_Test(&req, &flag, &st));
    CHECK(flag, "MPIO_Test never completed the iread_at");
    if (flag) {
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK_INT(count, N, "ints read by iread_at (MPIO_Test's status)");
        int bad = -1;
        for (int i = 0; i < N && bad < 0; i++)
            if (in[i] != peer * 100003 + i)
                bad = i;
        CHECK(bad < 0, "block of rank %d read back wrong at int %d", peer, bad);
    }
    /* A null request is complete: MPIO_Test says so at once. */
    flag = 0;
    CHECK_MPI(MPIO_Test(&req, &flag, MPI_STATUS_IGNORE));
    CHECK(flag, "MPIO_Test of MPI_REQUEST_NULL: flag 0");

    /* The individual file pointer, through the PMPI names. */
    CHECK_MPI(MPI_File_seek(fh, peer * B + 8, MPI_SEEK_SET));
    CHECK_MPI(MPI_File_iread(fh, in, 2, MPI_INT, &req));
    flag = 0;
    for (long spins = 0; !flag && spins < 100000000L; spins++)
        CHECK_MPI(PMPIO_Test(&req, &flag, &st));
    CHECK(flag && in[0] == peer * 100003 + 2 && in[1] == peer * 100003 + 3,
          "iread at the individual pointer: flag %d, %d %d", flag, in[0], in[1]);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    out[0] = -me;
    CHECK_MPI(MPI_File_seek(fh, me * B, MPI_SEEK_SET));
    CHECK_MPI(MPI_File_iwrite(fh, out, 1, MPI_INT, &req));
    CHECK_MPI(PMPIO_Wait(&req, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_INT(count, 1, "ints written by iwrite (PMPIO_Wait's status)");
    CHECK_MPI(MPI_File_read_at(fh, me * B, in, 1, MPI_INT, &st));
    CHECK_INT(in[0], -me, "int read back after iwrite");

    CHECK_MPI(MPI_File_close(&fh));
    return mtest_finalize();
}
