/*
 * io_shared: shared file pointers, ordered and split collective access
 * (MPI 3.1 13.4.4, 13.4.5).
 *
 *  1. Every process appends R records with write_shared (and one with
 *     iwrite_shared): afterwards the file holds every record exactly once,
 *     whole, and the shared pointer is past them all.
 *  2. After seek_shared(0), processes read records with read_shared (and
 *     iread_shared) until the end of the file: together they read every
 *     record exactly once.
 *  3. write_ordered: process r writes r + 1 ints; the file holds them in
 *     rank order; read_ordered gives each process its own back.
 *  4. Split collectives: write_at_all_begin/end, read_at_all_begin/end,
 *     write_all_begin/end, read_all_begin/end, write_ordered_begin/end and
 *     read_ordered_begin/end move the data and give the status at end.
 *  5. A file opened MPI_MODE_SEQUENTIAL: write_ordered, then set_view with
 *     MPI_DISPLACEMENT_CURRENT puts the view's start where the shared
 *     pointer was.
 */
#include "mtest.h"

#define R 5
#define W 4 /* ints per record */

int main(int argc, char **argv)
{
    char name[512];
    MPI_File fh;
    MPI_Status st;
    MPI_Request req;
    MPI_Offset pos;
    int rank, np, rc, cnt;

    mtest_init(&argc, &argv, "io_shared");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    mtest_tmpname(name, sizeof name, "io_shared", MPI_COMM_WORLD);
    rc = MPI_File_open(MPI_COMM_WORLD, name,
                       MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                       &fh);
    CHECK(rc == MPI_SUCCESS, "open: class %d", mtest_class(rc));
    if (rc)
        return mtest_finalize();
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    const int nrec = np * (R + 1);

    /* 1: record j of rank r is {r, j, r * 1000 + j, -1 - r} */
    int rec[W];
    for (int j = 0; j <= R; j++) {
        rec[0] = rank, rec[1] = j, rec[2] = rank * 1000 + j, rec[3] = -1 - rank;
        if (j < R) {
            CHECK_MPI(MPI_File_write_shared(fh, rec, W, MPI_INT, &st));
        } else {
            CHECK_MPI(MPI_File_iwrite_shared(fh, rec, W, MPI_INT, &req));
            CHECK_MPI(MPI_Wait(&req, &st));
        }
        MPI_Get_count(&st, MPI_INT, &cnt);
        CHECK_INT(cnt, W, "write_shared count");
    }
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    CHECK_MPI(MPI_File_get_position_shared(fh, &pos));
    CHECK_INT(pos, nrec * W, "shared position after every record");
    /* get_position_shared is not collective: nobody moves the pointer
     * (seek_shared below may on rank 0 before it synchronizes) until every
     * process has read it */
    MPI_Barrier(MPI_COMM_WORLD);
    int *all = malloc((size_t)nrec * W * sizeof(int)), *seen = calloc((size_t)nrec, sizeof(int)),
        *sum = calloc((size_t)nrec, sizeof(int));
    CHECK_MPI(MPI_File_read_at(fh, 0, all, nrec * W, MPI_INT, &st));
    for (int i = 0; i < nrec; i++) {
        int *p = all + i * W;
        int ok = p[0] >= 0 && p[0] < np && p[1] >= 0 && p[1] <= R && p[2] == p[0] * 1000 + p[1] &&
                 p[3] == -1 - p[0];
        CHECK(ok, "record %d is torn: %d %d %d %d", i, p[0], p[1], p[2], p[3]);
        if (ok)
            seen[p[0] * (R + 1) + p[1]]++;
    }
    for (int k = 0; k < nrec; k++)
        CHECK(seen[k] == 1, "record of rank %d, number %d written %d times", k / (R + 1),
              k % (R + 1), seen[k]);

    /* 2 */
    CHECK_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    memset(seen, 0, (size_t)nrec * sizeof(int));
    for (int k = 0;; k++) {
        if (k % 2) {
            CHECK_MPI(MPI_File_iread_shared(fh, rec, W, MPI_INT, &req));
            CHECK_MPI(MPI_Wait(&req, &st));
        } else {
            CHECK_MPI(MPI_File_read_shared(fh, rec, W, MPI_INT, &st));
        }
        MPI_Get_count(&st, MPI_INT, &cnt);
        if (cnt == 0)
            break;
        CHECK_INT(cnt, W, "read_shared count");
        if (cnt == W && rec[0] >= 0 && rec[0] < np && rec[1] >= 0 && rec[1] <= R)
            seen[rec[0] * (R + 1) + rec[1]]++;
        if (k > nrec) {
            CHECK(0, "read_shared never reached the end of the file");
            break;
        }
    }
    MPI_Allreduce(seen, sum, nrec, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int k = 0; k < nrec; k++)
        CHECK(sum[k] == 1, "record %d read %d times by read_shared", k, sum[k]);

    /* 3 */
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_set_size(fh, 0));
    CHECK_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    int mine[64], back[64];
    int n = rank + 1 < 64 ? rank + 1 : 64;
    for (int i = 0; i < n; i++)
        mine[i] = rank * 100 + i;
    CHECK_MPI(MPI_File_write_ordered(fh, mine, n, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK_INT(cnt, n, "write_ordered count");
    int total = 0;
    for (int r = 0; r < np; r++)
        total += r + 1 < 64 ? r + 1 : 64;
    CHECK_MPI(MPI_File_get_position_shared(fh, &pos));
    CHECK_INT(pos, total, "shared position after write_ordered");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    int *file = malloc((size_t)total * sizeof(int));
    CHECK_MPI(MPI_File_read_at(fh, 0, file, total, MPI_INT, &st));
    for (int r = 0, at = 0, bad = 0; r < np && !bad; r++)
        for (int i = 0; i < (r + 1 < 64 ? r + 1 : 64) && !bad; i++, at++)
            if (file[at] != r * 100 + i) {
                CHECK(0, "write_ordered: int %d is %d, expected %d", at, file[at], r * 100 + i);
                bad = 1;
            }
    CHECK_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    memset(back, 0, sizeof back);
    CHECK_MPI(MPI_File_read_ordered(fh, back, n, MPI_INT, &st));
    CHECK(!memcmp(back, mine, (size_t)n * sizeof(int)), "read_ordered did not give my ints");

    /* 4 */
    int blk[8], got[8];
    for (int i = 0; i < 8; i++)
        blk[i] = rank * 8 + i;
    MPI_Offset at = (MPI_Offset)total + rank * 8;
    CHECK_MPI(MPI_File_write_at_all_begin(fh, at, blk, 8, MPI_INT));
    CHECK_MPI(MPI_File_write_at_all_end(fh, blk, &st));
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK_INT(cnt, 8, "write_at_all_end count");
    memset(got, 0, sizeof got);
    CHECK_MPI(MPI_File_read_at_all_begin(fh, at, got, 8, MPI_INT));
    CHECK_MPI(MPI_File_read_at_all_end(fh, got, &st));
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK_INT(cnt, 8, "read_at_all_end count");
    CHECK(!memcmp(got, blk, sizeof blk), "split read_at_all gave other data");
    MPI_Offset end = (MPI_Offset)total + np * 8;
    CHECK_MPI(MPI_File_seek(fh, end + rank * 8, MPI_SEEK_SET));
    CHECK_MPI(MPI_File_write_all_begin(fh, blk, 8, MPI_INT));
    CHECK_MPI(MPI_File_write_all_end(fh, blk, &st));
    CHECK_MPI(MPI_File_seek(fh, end + rank * 8, MPI_SEEK_SET));
    memset(got, 0, sizeof got);
    CHECK_MPI(MPI_File_read_all_begin(fh, got, 8, MPI_INT));
    CHECK_MPI(MPI_File_read_all_end(fh, got, &st));
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK_INT(cnt, 8, "read_all_end count");
    CHECK(!memcmp(got, blk, sizeof blk), "split read_all gave other data");
    CHECK_MPI(MPI_File_seek_shared(fh, end + np * 8, MPI_SEEK_SET));
    CHECK_MPI(MPI_File_write_ordered_begin(fh, blk, 8, MPI_INT));
    CHECK_MPI(MPI_File_write_ordered_end(fh, blk, &st));
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK_INT(cnt, 8, "write_ordered_end count");
    CHECK_MPI(MPI_File_seek_shared(fh, end + np * 8, MPI_SEEK_SET));
    memset(got, 0, sizeof got);
    CHECK_MPI(MPI_File_read_ordered_begin(fh, got, 8, MPI_INT));
    CHECK_MPI(MPI_File_read_ordered_end(fh, got, &st));
    CHECK(!memcmp(got, blk, sizeof blk), "split read_ordered gave other data");
    CHECK_MPI(MPI_File_close(&fh));

    /* 5 */
    char seq[600];
    snprintf(seq, sizeof seq, "%s.seq", name);
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, seq,
                            MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL |
                                MPI_MODE_DELETE_ON_CLOSE,
                            MPI_INFO_NULL, &fh));
    CHECK_MPI(MPI_File_write_ordered(fh, mine, n, MPI_INT, &st));
    CHECK_MPI(
        MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    MPI_Offset disp;
    MPI_Datatype e, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    CHECK_MPI(MPI_File_get_view(fh, &disp, &e, &ft, rep));
    CHECK_INT(disp, (MPI_Offset)total * (MPI_Offset)sizeof(int),
              "disp of MPI_DISPLACEMENT_CURRENT");
    CHECK_MPI(MPI_File_close(&fh));

    free(all);
    free(seen);
    free(sum);
    free(file);
    return mtest_finalize();
}
