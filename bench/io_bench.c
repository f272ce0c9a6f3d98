/* io_bench: collective MPI-IO through an interleaved view, the access
 * two-phase aggregation is for (bench/io_bench.py runs it with and without).
 *
 *   io_bench [--block B] [--size S] [--cb on|off] [--dir D]
 *
 * Every rank's view is blocks of B bytes every size*B bytes from rank*B; it
 * writes S bytes with MPI_File_write_all, syncs, drops the file's pages
 * from the page cache (posix_fadvise, so the read comes from storage),
 * reads them back with MPI_File_read_all and checks every byte.  The hint
 * collective_buffering is "false" with --cb off.  Prints
 *   RESULT write_s T
 *   RESULT read_s T
 * (the slowest rank's times, from the barrier before each call to the
 * barrier after it), then "PASS io_bench" when every byte came back. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

static long long parse_size(const char *s)
{
    char *e;
    long long v = strtoll(s, &e, 10);
    if (*e == 'K' || *e == 'k')
        v <<= 10;
    else if (*e == 'M' || *e == 'm')
        v <<= 20;
    else if (*e == 'G' || *e == 'g')
        v <<= 30;
    return v;
}

int main(int argc, char **argv)
{
    long long block = 4096, size = 16 << 20;
    const char *cb = "on", *dir = ".";
    MPI_Init(&argc, &argv);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--block"))
            block = parse_size(argv[i + 1]);
        else if (!strcmp(argv[i], "--size"))
            size = parse_size(argv[i + 1]);
        else if (!strcmp(argv[i], "--cb"))
            cb = argv[i + 1];
        else if (!strcmp(argv[i], "--dir"))
            dir = argv[i + 1];
    }
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    size -= size % block;
    if (block <= 0 || size <= 0 || size / block > INT32_MAX) {
        if (rank == 0)
            fprintf(stderr, "io_bench: bad --block or --size\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    unsigned char *buf = malloc((size_t)size);
    if (!buf)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (long long i = 0; i < size; i++)
        buf[i] = (unsigned char)(i * 131 + rank * 7 + 1);

    char path[4096];
    snprintf(path, sizeof path, "%s/io_bench.%d.dat", dir, (int)getppid());
    MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Info info;
    MPI_Info_create(&info);
    if (!strcmp(cb, "off"))
        MPI_Info_set(info, "collective_buffering", "false");
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_WORLD, path,
                      MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, info,
                      &fh) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Info_free(&info);
    MPI_Datatype blk, ft;
    MPI_Type_contiguous((int)block, MPI_BYTE, &blk);
    MPI_Type_commit(&blk);
    MPI_Type_create_resized(blk, 0, (MPI_Aint)np * block, &ft);
    MPI_Type_commit(&ft);
    MPI_File_set_view(fh, (MPI_Offset)rank * block, MPI_BYTE, ft, "native", MPI_INFO_NULL);

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Status st;
    int rc = MPI_File_write_all(fh, buf, (int)(size / block), blk, &st);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    double tw = MPI_Wtime() - t0;
    if (rank == 0) { /* the read must come from storage, not the page cache */
        int fd = open(path, O_RDONLY);
        if (fd >= 0) {
            posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
            close(fd);
        }
    }
    memset(buf, 0, (size_t)size);
    MPI_File_seek(fh, 0, MPI_SEEK_SET); /* write_all moved the pointer to the end */
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    rc |= MPI_File_read_all(fh, buf, (int)(size / block), blk, &st);
    MPI_Barrier(MPI_COMM_WORLD);
    double tr = MPI_Wtime() - t0;
    long long bad = 0;
    for (long long i = 0; i < size; i++)
        bad += buf[i] != (unsigned char)(i * 131 + rank * 7 + 1);
    long long allbad = 0;
    MPI_Reduce(&bad, &allbad, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    int anyrc = 0;
    MPI_Reduce(&rc, &anyrc, 1, MPI_INT, MPI_BOR, 0, MPI_COMM_WORLD);
    MPI_File_close(&fh);
    if (rank == 0) {
        printf("RESULT write_s %.4f\nRESULT read_s %.4f\n", tw, tr);
        if (allbad || anyrc)
            printf("FAIL io_bench: %lld bytes wrong, error %d\n", allbad, anyrc);
        else
            printf("PASS io_bench\n");
    }
    MPI_Type_free(&blk);
    MPI_Type_free(&ft);
    free(buf);
    MPI_Finalize();
    return allbad || anyrc;
}
