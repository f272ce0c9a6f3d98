/* MPI-IO on managed memory and a file larger than the memory budget
 * (BDMPI-specific; run as -ns 4 -nr 1 -mem 16M): each rank holds two
 * managed 4 MiB buffers (32 MiB over the four ranks), writes a 16 MiB
 * region of one shared 64 MiB file from them in four writes, and reads its
 * neighbour's region back, a barrier between every two steps so that the
 * other ranks run and the buffers are unloaded meanwhile.  Reads go into
 * the buffers while they are unloaded, contiguous (straight to the kernel)
 * and through a noncontiguous datatype (the bounce buffer); every byte is
 * checked after the next barrier, so what the reads wrote must have been
 * tracked as written.  Last, every other 4 KiB of a piece is read through a
 * file view (sieved: one pread of the span, copied out) into a, and a
 * piece in atomic mode into b.  Some reads must find the rank's memory unloaded
 * (unless the manager is off: argv[1] "none"), and the buffers must have
 * counted as resident managed memory once, or the test proves nothing.
 * Exit 0 pass, 1 fail. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../mpi/mtest.h"

#define MIB ((size_t)1 << 20)
#define BUF (4 * MIB)
#define PIECES 4

static uint8_t pat(size_t i, int rank, int piece)
{
    return (uint8_t)((i * 2654435761u >> 11) ^ (unsigned)(rank * 31 + piece * 7));
}

int main(int argc, char **argv)
{
    char name[512];
    int rank, np, evicted = 0, loaded = 0;
    MPI_File fh;
    MPI_Status st;

    mtest_init(&argc, &argv, "io_budget");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int expect_evict = !(argc > 1 && !strcmp(argv[1], "none"));
    uint8_t *a = malloc(BUF), *b = malloc(BUF);
    CHECK(a && b, "malloc");
    mtest_tmpname(name, sizeof name, "io_budget", MPI_COMM_WORLD);
    int rc = MPI_File_open(MPI_COMM_WORLD, name,
                           MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh);
    CHECK(rc == MPI_SUCCESS, "open: class %d", mtest_class(rc));
    if (rc)
        return mtest_finalize();
    const MPI_Offset region = (MPI_Offset)PIECES * BUF;

    for (int k = 0; k < PIECES; k++) {
        uint8_t *p = k % 2 ? b : a;
        for (size_t i = 0; i < BUF; i++)
            p[i] = pat(i, rank, k);
        int managed;
        unsigned long long resident;
        BDMPI_Mem_info(&managed, &resident, NULL);
        if (managed && resident >= BUF)
            loaded++; /* the buffers are managed memory: they count as resident */
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_MPI(
            MPI_File_write_at(fh, rank * region + k * (MPI_Offset)BUF, p, (int)BUF, MPI_BYTE, &st));
    }
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    MPI_Offset size;
    MPI_File_get_size(fh, &size);
    CHECK(size == np * region, "file size %lld, expected %lld", (long long)size,
          (long long)(np * region));

    /* every other 4 KiB of the file piece lands in every other 4 KiB of b */
    MPI_Datatype half;
    MPI_Type_vector((int)(BUF / 8192), 4096, 8192, MPI_BYTE, &half);
    MPI_Type_commit(&half);
    int nb = (rank + 1) % np;
    for (int k = 0; k < PIECES; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        int managed;
        unsigned long long resident;
        BDMPI_Mem_info(&managed, &resident, NULL);
        if (managed && resident == 0)
            evicted++;
        MPI_Offset at = nb * region + k * (MPI_Offset)BUF;
        CHECK_MPI(MPI_File_read_at(fh, at, a, (int)BUF, MPI_BYTE, &st));
        memset(b, 0xee, 64); /* b's old content shows through the gaps */
        CHECK_MPI(MPI_File_read_at(fh, at, b, 1, half, &st));
        int cnt = -1;
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        CHECK(cnt == (int)(BUF / 2), "noncontiguous read: %d bytes", cnt);
        MPI_Barrier(MPI_COMM_WORLD);
        for (size_t i = 0; i < BUF; i++)
            if (a[i] != pat(i, nb, k)) {
                CHECK(0, "piece %d byte %zu: %u, expected %u", k, i, a[i], pat(i, nb, k));
                break;
            }
        for (size_t i = 0; i < BUF / 2; i++) {
            size_t m = (i / 4096) * 8192 + i % 4096;
            if (b[m] != pat(i, nb, k)) {
                CHECK(0, "piece %d, noncontiguous byte %zu: %u, expected %u", k, m, b[m],
                      pat(i, nb, k));
                break;
            }
        }
    }
    /* the same the other way round: every other 4 KiB of the neighbour's
     * first piece through a file view (read sieved), into contiguous a */
    MPI_Datatype every2;
    MPI_Type_vector(1, 4096, 8192, MPI_BYTE, &every2);
    MPI_Datatype tile;
    MPI_Type_create_resized(every2, 0, 8192, &tile);
    MPI_Type_commit(&tile);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_set_view(fh, nb * region, MPI_BYTE, tile, "native", MPI_INFO_NULL));
    {
        int managed;
        unsigned long long resident;
        BDMPI_Mem_info(&managed, &resident, NULL);
        if (managed && resident == 0)
            evicted++;
    }
    CHECK_MPI(MPI_File_read_at(fh, 0, a, (int)(BUF / 2), MPI_BYTE, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    for (size_t i = 0; i < BUF / 2; i++) {
        size_t m = (i / 4096) * 8192 + i % 4096;
        if (a[i] != pat(m, nb, 0)) {
            CHECK(0, "through a view, byte %zu: %u, expected %u", i, a[i], pat(m, nb, 0));
            break;
        }
    }
    /* atomic mode (the buffer is made resident before the range lock):
     * this rank's first piece read back into b after the others ran */
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    CHECK_MPI(MPI_File_set_atomicity(fh, 1));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_read_at(fh, rank * region, b, (int)BUF, MPI_BYTE, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    for (size_t i = 0; i < BUF; i++)
        if (b[i] != pat(i, rank, 0)) {
            CHECK(0, "atomic read, byte %zu: %u, expected %u", i, b[i], pat(i, rank, 0));
            break;
        }
    CHECK_MPI(MPI_File_set_atomicity(fh, 0));
    MPI_Type_free(&every2);
    MPI_Type_free(&tile);
    MPI_Type_free(&half);
    CHECK_MPI(MPI_File_close(&fh));
    int any = 0;
    MPI_Allreduce(&evicted, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (expect_evict) {
        CHECK(loaded > 0, "the buffers never counted as resident managed memory");
        CHECK(rank != 0 || any > 0, "no read found its buffer unloaded: the test proves nothing");
    }
    free(a);
    free(b);
    return mtest_finalize();
}
