/*
 * io_coll: collective data access through interleaved views (MPI 3.1
 * 13.4.3), the case two-phase aggregation is for: every process's view is
 * blocks of K ints every np*K ints, from its own displacement, so the
 * processes' small pieces interleave in the file.
 *
 *  1. write_all from contiguous memory; the whole file, read back
 *     independently through the default view, holds every block in place.
 *  2. read_all through the view into noncontiguous memory (every other
 *     int) gives each process its own blocks; the individual file pointer
 *     advances by what was read.
 *  3. write_at_all from noncontiguous memory, read_at_all into contiguous
 *     memory: the new values.
 *  4. A read_at_all that runs past the end of the file counts only what is
 *     there, on every process.
 *  5. Hints: cb_buffer_size 4096 (many rounds), cb_nodes 2 (two
 *     aggregators) and collective_buffering false each give the same file;
 *     a process that writes nothing leaves its blocks as they were.
 *  6. The split forms: write_at_all_begin/end from contiguous memory and
 *     read_all_begin/end into noncontiguous memory give the new values,
 *     the counts at end, and the file pointer advanced.
 */
#include "mtest.h"

#define K 25   /* ints per block: 100-byte pieces */
#define NB 160 /* blocks per process */

static int g_rank, g_np;

static int value(int gen, int r, int i) { return gen * 1000000 + r * 10000 + i; }

static void set_view(MPI_File fh)
{
    MPI_Datatype blk, ft;
    MPI_Type_contiguous(K, MPI_INT, &blk);
    MPI_Type_create_resized(blk, 0, (MPI_Aint)g_np * K * (MPI_Aint)sizeof(int), &ft);
    MPI_Type_commit(&ft);
    CHECK_MPI(MPI_File_set_view(fh, (MPI_Offset)g_rank * K * (MPI_Offset)sizeof(int), MPI_INT, ft,
                                "native", MPI_INFO_NULL));
    MPI_Type_free(&blk);
    MPI_Type_free(&ft);
}

/* The whole file through the default view: block b of process r holds
 * gen's values (gens[r]: the generation each process last wrote). */
static void check_file(MPI_File fh, const int *gens, const char *what)
{
    size_t n = (size_t)g_np * NB * K;
    int *all = malloc(n * sizeof *all);
    MPI_Status st;
    int count;
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    CHECK_MPI(MPI_File_read_at(fh, 0, all, (int)n, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_INT(count, (int)n, what);
    int bad = 0;
    for (int b = 0; b < NB && !bad; b++)
        for (int r = 0; r < g_np && !bad; r++)
            for (int i = 0; i < K; i++) {
                int got = all[((size_t)b * g_np + r) * K + i], want = value(gens[r], r, b * K + i);
                if (got != want) {
                    CHECK(0, "%s: block %d of rank %d [%d] = %d, expected %d", what, b, r, i, got,
                          want);
                    bad = 1;
                    break;
                }
            }
    free(all);
    set_view(fh);
}

static void sync_all(MPI_File fh)
{
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
}

int main(int argc, char **argv)
{
    char name[512];
    MPI_File fh;
    MPI_Status st;
    MPI_Offset pos;
    int count;
    const int n = NB * K;
    int *out = malloc(2 * n * sizeof(int)), *in = malloc(2 * n * sizeof(int));
    int *gens = malloc(64 * sizeof(int));

    mtest_init(&argc, &argv, "io_coll");
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_np);
    if (g_np > 64)
        return mtest_finalize();
    mtest_tmpname(name, sizeof name, "io_coll", MPI_COMM_WORLD);
    int rc =
        MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    CHECK(rc == MPI_SUCCESS, "open %s: class %d", name, mtest_class(rc));
    if (rc)
        return mtest_finalize();
    set_view(fh);
    MPI_Datatype every_other;
    MPI_Type_vector(n, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);

    /* 1 */
    for (int i = 0; i < n; i++)
        out[i] = value(1, g_rank, i);
    CHECK_MPI(MPI_File_write_all(fh, out, n, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_INT(count, n, "write_all count");
    sync_all(fh);
    for (int r = 0; r < g_np; r++)
        gens[r] = 1;
    check_file(fh, gens, "after write_all");

    /* 2 */
    memset(in, 0xff, 2 * n * sizeof(int));
    CHECK_MPI(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    CHECK_MPI(MPI_File_read_all(fh, in, 1, every_other, &st));
    MPI_Get_count(&st, every_other, &count);
    CHECK_INT(count, 1, "read_all count");
    for (int i = 0; i < n; i++)
        if (in[2 * i] != value(1, g_rank, i) || in[2 * i + 1] != -1) {
            CHECK(0, "read_all [%d] = %d/%d, expected %d/-1", i, in[2 * i], in[2 * i + 1],
                  value(1, g_rank, i));
            break;
        }
    MPI_File_get_position(fh, &pos);
    CHECK_INT((int)pos, n, "position after read_all");

    /* 3 */
    for (int i = 0; i < n; i++) {
        out[2 * i] = value(2, g_rank, i);
        out[2 * i + 1] = -7;
    }
    sync_all(fh);
    CHECK_MPI(MPI_File_write_at_all(fh, 0, out, 1, every_other, &st));
    sync_all(fh);
    memset(in, 0, n * sizeof(int));
    CHECK_MPI(MPI_File_read_at_all(fh, 0, in, n, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_INT(count, n, "read_at_all count");
    for (int i = 0; i < n; i++)
        if (in[i] != value(2, g_rank, i)) {
            CHECK(0, "read_at_all [%d] = %d, expected %d", i, in[i], value(2, g_rank, i));
            break;
        }

    /* 4 */
    CHECK_MPI(MPI_File_read_at_all(fh, (MPI_Offset)(NB - 10) * K, in, 20 * K, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    /* MPICH's ROMIO counts the whole request of a noncontiguous read that
     * meets the end of the file (np > 1), not what was there (MPI 3.1
     * 13.4.1): excused there only, as in io_view */
    if (!(mtest_is_mpich() && g_np > 1))
        CHECK_INT(count, 10 * K, "read_at_all past the end: count");
    for (int i = 0; i < 10 * K; i++)
        if (in[i] != value(2, g_rank, (NB - 10) * K + i)) {
            CHECK(0, "read past the end [%d] = %d, expected %d", i, in[i],
                  value(2, g_rank, (NB - 10) * K + i));
            break;
        }
    MPI_File_close(&fh);

    /* 5 */
    const char *hints[][2] = {
        {"cb_buffer_size", "4096"}, {"cb_nodes", "2"}, {"collective_buffering", "false"}};
    for (int h = 0; h < 3; h++) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, hints[h][0], hints[h][1]);
        CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR, info, &fh));
        MPI_Info_free(&info);
        set_view(fh);
        int gen = 3 + h, mine = g_rank == 0 && g_np > 1 ? 0 : n;
        for (int i = 0; i < n; i++)
            out[i] = value(gen, g_rank, i);
        CHECK_MPI(MPI_File_write_at_all(fh, 0, out, mine, MPI_INT, &st));
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK_INT(count, mine, "write_at_all count with a hint");
        sync_all(fh);
        for (int r = 0; r < g_np; r++)
            gens[r] = r == 0 && g_np > 1 ? 2 : gen;
        check_file(fh, gens, hints[h][0]);
        MPI_File_close(&fh);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    /* 6 */
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    set_view(fh);
    for (int i = 0; i < n; i++)
        out[i] = value(9, g_rank, i);
    CHECK_MPI(MPI_File_write_at_all_begin(fh, 0, out, n, MPI_INT));
    CHECK_MPI(MPI_File_write_at_all_end(fh, out, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_INT(count, n, "write_at_all_end count");
    sync_all(fh);
    memset(in, 0xff, 2 * n * sizeof(int));
    CHECK_MPI(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    CHECK_MPI(MPI_File_read_all_begin(fh, in, 1, every_other));
    CHECK_MPI(MPI_File_read_all_end(fh, in, &st));
    MPI_Get_count(&st, every_other, &count);
    CHECK_INT(count, 1, "read_all_end count");
    for (int i = 0; i < n; i++)
        if (in[2 * i] != value(9, g_rank, i) || in[2 * i + 1] != -1) {
            CHECK(0, "split read_all [%d] = %d/%d, expected %d/-1", i, in[2 * i], in[2 * i + 1],
                  value(9, g_rank, i));
            break;
        }
    MPI_File_get_position(fh, &pos);
    CHECK_INT((int)pos, n, "position after the split read_all");
    MPI_File_close(&fh);

    MPI_Type_free(&every_other);
    if (g_rank == 0)
        MPI_File_delete(name, MPI_INFO_NULL);
    free(out);
    free(in);
    free(gens);
    return mtest_finalize();
}
