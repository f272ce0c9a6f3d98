/*
 * io_access: data access with explicit offsets and individual file
 * pointers, blocking, collective and nonblocking (MPI 3.1 13.4.2-13.4.3),
 * with the default view (etype MPI_BYTE: offsets are bytes).
 *
 *  1. Every process writes its block with write_at, then (after
 *     sync-barrier-sync) reads its neighbour's with read_at_all;
 *     MPI_Get_count and MPI_Get_elements on the status count the data.
 *  2. Individual file pointers: seek, two writes, get_position,
 *     get_byte_offset, read back with read_all after a seek.
 *  3. Reads at the end of the file are short: the status counts what was
 *     read (MPI_Get_count and MPI_Get_elements give MPI_UNDEFINED for a
 *     partial int), and a
 *     read past the end counts 0.
 *  4. A noncontiguous memory datatype (every other int) written and read.
 *  5. Nonblocking forms: iwrite_at/iread_at/iwrite/iread and their _all
 *     variants complete through MPI_Wait, MPI_Test and MPI_Waitall, with
 *     counts in the statuses.
 *  6. seek with MPI_SEEK_END and MPI_SEEK_CUR; MPI_MODE_APPEND starts the
 *     individual pointer at the end of the file.
 *  7. Atomic mode: every process writes the same region at once; the
 *     region then holds one process's data whole.
 */
#include "mtest.h"

#define N 1000

int main(int argc, char **argv)
{
    char name[512];
    MPI_File fh;
    MPI_Status st;
    MPI_Offset pos, disp, size;
    int rank, np, count;
    static int out[N], in[2 * N];

    mtest_init(&argc, &argv, "io_access");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    mtest_tmpname(name, sizeof name, "io_access", MPI_COMM_WORLD);
    int rc = MPI_File_open(MPI_COMM_WORLD, name,
                           MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh);
    CHECK(rc == MPI_SUCCESS, "open %s: class %d", name, mtest_class(rc));
    if (rc)
        return mtest_finalize();
    const MPI_Offset B = (MPI_Offset)N * sizeof(int); /* one block */

    /* 1 */
    for (int i = 0; i < N; i++)
        out[i] = rank * N + i;
    CHECK_MPI(MPI_File_write_at(fh, rank * B, out, N, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_INT(count, N, "write_at count");
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    int nb = (rank + 1) % np;
    memset(in, 0xff, sizeof in);
    CHECK_MPI(MPI_File_read_at_all(fh, nb * B, in, N, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_INT(count, N, "read_at_all count");
    MPI_Get_elements(&st, MPI_INT, &count);
    CHECK_INT(count, N, "read_at_all elements");
    for (int i = 0, bad = 0; i < N && bad < 3; i++)
        if (in[i] != nb * N + i) {
            CHECK(0, "read_at_all [%d] = %d, expected %d", i, in[i], nb * N + i);
            bad++;
        }

    /* 2: region 2 (after every block): each process writes its block in two halves */
    MPI_Offset base = np * B;
    CHECK_MPI(MPI_File_seek(fh, base + rank * B, MPI_SEEK_SET));
    CHECK_MPI(MPI_File_write(fh, out, N / 2, MPI_INT, &st));
    CHECK_MPI(MPI_File_write_all(fh, out + N / 2, N - N / 2, MPI_INT, &st));
    CHECK_MPI(MPI_File_get_position(fh, &pos));
    CHECK_INT(pos, base + (rank + 1) * B, "position after two writes");
    CHECK_MPI(MPI_File_get_byte_offset(fh, pos, &disp));
    CHECK_INT(disp, pos, "byte offset in the default view");
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    CHECK_MPI(MPI_File_seek(fh, base + nb * B, MPI_SEEK_SET));
    memset(in, 0, sizeof in);
    CHECK_MPI(MPI_File_read_all(fh, in, N, MPI_INT, &st));
    for (int i = 0, bad = 0; i < N && bad < 3; i++)
        if (in[i] != nb * N + i) {
            CHECK(0, "read_all [%d] = %d, expected %d", i, in[i], nb * N + i);
            bad++;
        }

    /* 3: the file is 2 * np blocks long */
    CHECK_MPI(MPI_File_get_size(fh, &size));
    CHECK_INT(size, 2 * np * B, "file size");
    CHECK_MPI(MPI_File_read_at(fh, size - 6, in, 4, MPI_INT, &st));
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK_INT(count, 6, "bytes of a read at the end");
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_INT(count, MPI_UNDEFINED, "ints of a read of 6 bytes");
    MPI_Get_elements(&st, MPI_INT, &count);
    CHECK_INT(count, MPI_UNDEFINED, "int elements of a read of 6 bytes");
    CHECK_MPI(MPI_File_read_at(fh, size + 100, in, 4, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_INT(count, 0, "ints read past the end");

    /* 4: every other int of out, N / 2 of them, into region 1 of this rank */
    MPI_Datatype every2;
    MPI_Type_vector(N / 2, 1, 2, MPI_INT, &every2);
    MPI_Type_commit(&every2);
    CHECK_MPI(MPI_File_write_at(fh, rank * B, out, 1, every2, &st));
    MPI_Get_count(&st, every2, &count);
    CHECK_INT(count, 1, "vector write count");
    memset(in, 0, sizeof in);
    CHECK_MPI(MPI_File_read_at(fh, rank * B, in, N / 2, MPI_INT, &st));
    for (int i = 0, bad = 0; i < N / 2 && bad < 3; i++)
        if (in[i] != out[2 * i]) {
            CHECK(0, "vector write: [%d] = %d, expected %d", i, in[i], out[2 * i]);
            bad++;
        }
    memset(in, 0, sizeof in);
    CHECK_MPI(MPI_File_read_at(fh, rank * B, in, 1, every2, &st));
    for (int i = 0, bad = 0; i < N && bad < 3; i++) {
        int want = i % 2 ? 0 : out[i];
        if (in[i] != want) {
            CHECK(0, "vector read: [%d] = %d, expected %d", i, in[i], want);
            bad++;
        }
    }
    MPI_Type_free(&every2);

    /* 5 */
    MPI_Request r[4];
    int flag = 0;
    CHECK_MPI(MPI_File_iwrite_at(fh, rank * B, out, N, MPI_INT, &r[0]));
    CHECK_MPI(MPI_Wait(&r[0], &st));
    CHECK(r[0] == MPI_REQUEST_NULL, "Wait left the request");
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_INT(count, N, "iwrite_at count");
    memset(in, 0, sizeof in);
    CHECK_MPI(MPI_File_iread_at(fh, rank * B, in, N, MPI_INT, &r[0]));
    for (int k = 0; k < 1000000 && !flag; k++)
        CHECK_MPI(MPI_Test(&r[0], &flag, &st));
    CHECK(flag, "iread_at never completed");
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_INT(count, N, "iread_at count");
    CHECK(in[N - 1] == out[N - 1] && in[0] == out[0], "iread_at data");
    CHECK_MPI(MPI_File_seek(fh, rank * B, MPI_SEEK_SET));
    CHECK_MPI(MPI_File_iwrite(fh, out, N / 2, MPI_INT, &r[0]));
    CHECK_MPI(MPI_File_iwrite_all(fh, out + N / 2, N - N / 2, MPI_INT, &r[1]));
    CHECK_MPI(MPI_File_iwrite_at_all(fh, base + rank * B, out, N, MPI_INT, &r[2]));
    MPI_Status sts[4];
    CHECK_MPI(MPI_Waitall(3, r, sts));
    MPI_Get_count(&sts[1], MPI_INT, &count);
    CHECK_INT(count, N - N / 2, "iwrite_all count");
    CHECK_MPI(MPI_File_get_position(fh, &pos));
    CHECK_INT(pos, (rank + 1) * B, "position after iwrite and iwrite_all");
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    memset(in, 0, sizeof in);
    CHECK_MPI(MPI_File_seek(fh, nb * B, MPI_SEEK_SET));
    CHECK_MPI(MPI_File_iread(fh, in, N / 2, MPI_INT, &r[0]));
    CHECK_MPI(MPI_File_iread_all(fh, in + N / 2, N - N / 2, MPI_INT, &r[1]));
    CHECK_MPI(MPI_File_iread_at_all(fh, base + nb * B, in + N, N, MPI_INT, &r[2]));
    CHECK_MPI(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
    for (int i = 0, bad = 0; i < 2 * N && bad < 3; i++)
        if (in[i] != nb * N + i % N) {
            CHECK(0, "nonblocking reads: [%d] = %d, expected %d", i, in[i], nb * N + i % N);
            bad++;
        }

    /* 6 */
    CHECK_MPI(MPI_File_seek(fh, -B, MPI_SEEK_END));
    CHECK_MPI(MPI_File_get_position(fh, &pos));
    CHECK_INT(pos, size - B, "position after seek(-B, SEEK_END)");
    CHECK_MPI(MPI_File_seek(fh, -4, MPI_SEEK_CUR));
    CHECK_MPI(MPI_File_get_position(fh, &pos));
    CHECK_INT(pos, size - B - 4, "position after seek(-4, SEEK_CUR)");
    MPI_File app;
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_WRONLY | MPI_MODE_APPEND, MPI_INFO_NULL,
                            &app));
    CHECK_MPI(MPI_File_get_position(app, &pos));
    CHECK_INT(pos, size, "position of an MPI_MODE_APPEND open");
    CHECK_MPI(MPI_File_close(&app));

    /* 7 */
    int atom = -1;
    CHECK_MPI(MPI_File_set_atomicity(fh, 1));
    CHECK_MPI(MPI_File_get_atomicity(fh, &atom));
    CHECK_INT(atom, 1, "atomicity");
    for (int i = 0; i < N; i++)
        out[i] = rank;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_write_at_all(fh, 0, out, N, MPI_INT, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_read_at(fh, 0, in, N, MPI_INT, &st));
    for (int i = 1, bad = 0; i < N && bad < 3; i++)
        if (in[i] != in[0]) {
            CHECK(0, "atomic writes mixed: [%d] = %d, [0] = %d", i, in[i], in[0]);
            bad++;
        }
    CHECK(in[0] >= 0 && in[0] < np, "atomic region holds %d", in[0]);
    CHECK_MPI(MPI_File_set_atomicity(fh, 0));

    CHECK_MPI(MPI_File_close(&fh));
    return mtest_finalize();
}
