/* System calls on managed memory, end to end: each rank holds three
 * managed buffers of argv[1] MiB (default 4) and, with a blocking MPI call
 * between every two steps (so that under a tight -mem other ranks run and
 * the buffers are unloaded), writes one to a file with write() and fwrite(),
 * reads the file back into the others with read(), pread() and fread(),
 * sends it through a socketpair with send() and recv(), and checks every
 * byte after the next blocking call (so what the kernel wrote must have been
 * tracked as written, or it is lost at the unload).
 * usage: syscall_io MIB EXPECT
 *   EXPECT  none | uffd | mprotect | uffd-user: the tracking path the job
 *           must run on (prints SKIP and exits 0 if it runs on another one);
 *           except for none, some of the calls must find their buffer
 *           unloaded, or the test proves nothing and fails. */
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int rank, bad, evicted, calls;
static size_t n;

static uint8_t pat(size_t i, int seed)
{
    return (uint8_t)((i * 2654435761u >> 9) ^ (i >> 16) ^ (unsigned)(rank * 7 + seed));
}

static void fill(uint8_t *p, int seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = pat(i, seed);
}

static void check(const uint8_t *p, int seed, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != pat(i, seed)) {
            if (bad++ < 5)
                fprintf(stderr, "rank %d: after %s, byte %zu is %u, expected %u\n", rank, what, i,
                        p[i], pat(i, seed));
            return;
        }
}

/* Called right before a system call on a managed buffer: count the calls
 * that find this rank's managed memory unloaded. */
static void before(void)
{
    calls++;
    int managed;
    unsigned long long resident;
    BDMPI_Mem_info(&managed, &resident, NULL);
    if (managed && resident == 0)
        evicted++;
}

static void fail_call(const char *what, ssize_t r)
{
    fprintf(stderr, "rank %d: %s returned %zd (%s), expected %zu\n", rank, what, r, strerror(errno),
            n);
    bad++;
}

/* Other ranks run (and take the memory) while this one waits here. */
static void block(void) { MPI_Barrier(MPI_COMM_WORLD); }

typedef struct {
    int fd;
    const uint8_t *src;
    ssize_t r;
    int err;
} sender_t;

static void *sender(void *arg)
{
    sender_t *s = arg;
    s->r = send(s->fd, s->src, n, 0); /* one call for all of it, blocking */
    s->err = errno;
    shutdown(s->fd, SHUT_WR); /* a receiver still waiting sees the end */
    return NULL;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    n = (size_t)(argc > 1 ? atoi(argv[1]) : 4) << 20;
    const char *expect = argc > 2 ? argv[2] : "none";

    /* Which path are we on? */
    const char *path = "none";
    int track;
    BDMPI_Mem_info(NULL, NULL, &track);
    if (track != BDMPI_MEM_TRACK_NONE)
        path = track == BDMPI_MEM_TRACK_MPROTECT ? "mprotect"
               : track == BDMPI_MEM_TRACK_UFFD   ? "uffd"
                                                 : "uffd-user";
    int skip = strcmp(path, expect) != 0, anyskip;
    MPI_Allreduce(&skip, &anyskip, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (anyskip) {
        if (rank == 0)
            printf("SKIP syscall_io: the job runs on the %s path, not %s\n", path, expect);
        MPI_Finalize();
        return 0;
    }

    uint8_t *a = malloc(n), *b = malloc(n), *c = malloc(n);
    if (!a || !b || !c)
        MPI_Abort(MPI_COMM_WORLD, 2);
    fill(a, 1);
    memset(b, 0xB0, n);
    memset(c, 0xC0, n);

    /* The file: unlinked at once, so nothing is left whatever happens. */
    const char *tmp = getenv("TMPDIR");
    char fname[512];
    snprintf(fname, sizeof fname, "%s/bdmpi-syscall-io-%d-XXXXXX", tmp && *tmp ? tmp : "/tmp",
             (int)getpid());
    int fd = mkstemp(fname);
    if (fd < 0) {
        perror("mkstemp");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    unlink(fname);
    FILE *f = fdopen(dup(fd), "r+b");
    if (!f)
        MPI_Abort(MPI_COMM_WORLD, 2);
    ssize_t r;

    /* write() and fwrite() from a (unloaded) managed buffer: the file holds a twice. */
    block();
    before();
    if ((r = write(fd, a, n)) != (ssize_t)n)
        fail_call("write", r);
    block();
    before();
    if (fseek(f, (long)n, SEEK_SET) != 0 || fwrite(a, 1, n, f) != n || fflush(f) != 0)
        fail_call("fwrite", -1);
    block();

    /* read(), pread() and fread() into managed buffers, checked after the
   * next blocking call. */
    before();
    if (lseek(fd, 0, SEEK_SET) != 0 || (r = read(fd, b, n)) != (ssize_t)n)
        fail_call("read", r);
    block();
    check(b, 1, "read");
    block();
    before();
    if ((r = pread(fd, c, n, (off_t)n)) != (ssize_t)n)
        fail_call("pread", r);
    block();
    check(c, 1, "pread");
    memset(b, 0xB1, n);
    block();
    before();
    if (fseek(f, 0, SEEK_SET) != 0 || fread(b, 1, n, f) != n)
        fail_call("fread", -1);
    block();
    check(b, 1, "fread");

    /* send() from a managed buffer in another thread, recv() into one here. */
    fill(a, 2);
    memset(c, 0xC2, n);
    block();
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        MPI_Abort(MPI_COMM_WORLD, 2);
    before();
    sender_t s = {sv[0], a, 0, 0};
    pthread_t th;
    if (pthread_create(&th, NULL, sender, &s) != 0)
        MPI_Abort(MPI_COMM_WORLD, 2);
    size_t got = 0;
    while (got < n) {
        r = recv(sv[1], c + got, n - got, 0);
        if (r <= 0) {
            fail_call("recv", r);
            shutdown(sv[1], SHUT_RDWR); /* a sender still waiting gets an error */
            break;
        }
        got += (size_t)r;
    }
    pthread_join(th, NULL);
    errno = s.err;
    if (s.r != (ssize_t)n)
        fail_call("send", s.r);
    close(sv[0]);
    close(sv[1]);
    block();
    check(c, 2, "send/recv");

    fclose(f);
    close(fd);
    free(a);
    free(b);
    free(c);

    int mine[3] = {bad, evicted, calls}, tot[3];
    MPI_Reduce(mine, tot, 3, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    int rc = 0;
    if (rank == 0) {
        printf("syscall_io on the %s path: %d of %d calls found their buffers unloaded\n", path,
               tot[1], tot[2]);
        if (tot[0]) {
            printf("FAIL syscall_io: %d errors\n", tot[0]);
            rc = 1;
        } else if (strcmp(path, "none") != 0 && tot[1] == 0) {
            printf("FAIL syscall_io: no call found its buffer unloaded: -mem is not tight enough "
                   "to test anything\n");
            rc = 1;
        } else {
            printf("PASS syscall_io on %d ranks x 3 x %zu MiB\n", size, n >> 20);
        }
    }
    MPI_Finalize();
    return rc;
}
