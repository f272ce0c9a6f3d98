/* Storage that returns something else than was written, and a planted
 * symlink (issue 18).  Run with -ns 2 -nr 1; rank 0 plays the storage (or
 * the attacker) while rank 1 waits:
 *   backing  rank 1 fills 8 MiB of managed memory and waits; rank 0 needs
 *            8 MiB itself (run with -mem 12M -mem-strategy arlw), so rank 1
 *            is unloaded, all of it on storage before rank 0 gets its
 *            memory; rank 0 flips one byte at offset 3*64K+100 of rank 1's
 *            backing file and wakes it; rank 1 reads its memory back.
 *            Expected: the job stops with "storage returned corrupted data
 *            for rank 1 at offset 196608 in .../bdmem.*" (with -sbpage 64K).
 *   spill    rank 0 sends rank 1 (which waits for another message) 1 MiB,
 *            which goes to a spill file; rank 0 flips a byte at offset
 *            300000 of it, then sends the message rank 1 waits for; rank 1
 *            receives both.  Expected: "... corrupted data for rank 1 at
 *            offset 0 in .../msg-0-*".
 *   symlink  rank 1 fills 8 MiB and waits; rank 0 plants symlinks named as
 *            rank 1's backing files would be, pointing at the file argv[2],
 *            then needs memory, so rank 1 must unload (run with -mem 12M
 *            -mem-strategy arlw).  Expected: rank 1 stops ("File exists"),
 *            the file argv[2] is untouched (the test checks it).
 * If rank 1 gets its data back without a word, it checks it and prints
 * "WRONG ANSWER: ..." (the corruption went unnoticed).
 * The job directory is $BDMPI_JOBDIR (set by bdmpiexec for one node). */
#include <dirent.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MIB (1u << 20)

/* The first file of dir whose name starts with prefix, into out. */
static int find_file(const char *dir, const char *prefix, char *out, size_t len)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *e;
    int rc = -1;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, prefix, strlen(prefix))) {
            snprintf(out, len, "%s/%s", dir, e->d_name);
            rc = 0;
            break;
        }
    closedir(d);
    return rc;
}

/* Spill and backing files are 0600, the job directory 0700, both ours. */
static void check_mode(const char *path, unsigned want)
{
    struct stat st;
    if (lstat(path, &st) != 0 || (st.st_mode & 0777) != want || st.st_uid != geteuid()) {
        printf("WRONG ANSWER: %s is mode %o (owner %d), not %o\n", path,
               (unsigned)(st.st_mode & 0777), (int)st.st_uid, want);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
}

static void flip(const char *path, off_t off)
{
    check_mode(path, 0600);
    int fd = open(path, O_RDWR);
    unsigned char c;
    if (fd < 0 || pread(fd, &c, 1, off) != 1) {
        fprintf(stderr, "corrupt: cannot read %s at %lld\n", path, (long long)off);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    c ^= 0x20;
    if (pwrite(fd, &c, 1, off) != 1 || fsync(fd) != 0) {
        fprintf(stderr, "corrupt: cannot write %s\n", path);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    close(fd);
    fprintf(stderr, "corrupt: flipped the byte at offset %lld of %s\n", (long long)off, path);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "backing";
    const char *dir = getenv("BDMPI_JOBDIR");
    if (size != 2 || !dir) {
        if (rank == 0)
            fprintf(stderr, "corrupt: run with -ns 2 under bdmpiexec (one node)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int spill = !strcmp(mode, "spill");
    size_t n = (spill ? MIB : 8 * MIB) / 8;
    uint64_t *a = malloc(n * 8);
    if (!a)
        MPI_Abort(MPI_COMM_WORLD, 2);
    int pid = 0, go = 1;
    if (rank == 1) {
        if (spill) {
            MPI_Recv(&go, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Recv(a, (int)n, MPI_UINT64_T, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            for (size_t i = 0; i < n; i++)
                a[i] = i * 0x9E3779B97F4A7C15ull;
            pid = (int)getpid();
            MPI_Send(&pid, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
            MPI_Recv(&go, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        for (size_t i = 0; i < n; i++)
            if (a[i] != i * 0x9E3779B97F4A7C15ull) {
                printf("WRONG ANSWER: rank 1 read word %zu back changed, and nothing noticed\n", i);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
    } else if (spill) {
        for (size_t i = 0; i < n; i++)
            a[i] = i * 0x9E3779B97F4A7C15ull;
        MPI_Send(a, (int)n, MPI_UINT64_T, 1, 2, MPI_COMM_WORLD);
        char path[4096];
        if (find_file(dir, "msg-0-", path, sizeof path) < 0) {
            fprintf(stderr, "corrupt: the 1 MiB message is in no spill file of %s\n", dir);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        flip(path, 300000);
        MPI_Send(&go, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&pid, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        char prefix[64], path[4096];
        if (strcmp(mode, "symlink") != 0) /* rank 1 must store its memory, all of it */
            for (size_t i = 0; i < n; i++)
                a[i] = i;
        if (!strcmp(mode, "symlink")) {
            check_mode(dir, 0700);
            for (int id = 1; id <= 16; id++) {
                snprintf(path, sizeof path, "%s/bdmem.%d.%d", dir, pid, id);
                if (symlink(argv[2], path) != 0) {
                    perror("corrupt: symlink");
                    MPI_Abort(MPI_COMM_WORLD, 2);
                }
            }
            /* rank 0 needs the memory rank 1 holds: rank 1 must store it */
            for (size_t i = 0; i < n; i++)
                a[i] = i;
        } else {
            snprintf(prefix, sizeof prefix, "bdmem.%d.", pid);
            if (find_file(dir, prefix, path, sizeof path) < 0) {
                fprintf(stderr, "corrupt: rank 1 (pid %d) has no backing file in %s\n", pid, dir);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            flip(path, 3 * 65536 + 100);
        }
        MPI_Send(&go, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("corrupt %s: the job ended normally\n", mode);
    free(a);
    MPI_Finalize();
    return 0;
}
