/* Asynchronous I/O on managed memory, which is not wrapped: what
 * docs/design.md says happens.  POSIX aio (glibc's threads call pread and
 * pwrite internally) and io_uring reads and writes (inline and, with
 * IOSQE_ASYNC, in io-wq workers) into and from unloaded managed buffers:
 *   - where the kernel's faults are handled (full userfaultfd), they
 *     succeed, and what the kernel wrote survives an unload;
 *   - elsewhere (mprotect path, user-mode-only userfaultfd) they fail with
 *     EFAULT, and succeed once the program has touched the buffer.
 * usage: mem_async <araw|arlw|lrlw> <uffd|mprotect|uffd-user> */
#include <aio.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "sysctest.h"

#define N ((size_t)1 << 20)
#define OFF 3000

static int kernel_faults, fd;

/* The expected outcome of one operation: bytes transferred, or -EFAULT. */
static void expect(const char *what, long res)
{
    if (kernel_faults)
        CHECKF(res == (long)N, "%s returned %ld (%s), expected %zu", what, res, strerror((int)-res),
               N);
    else
        CHECKF(res == -EFAULT, "%s returned %ld, expected EFAULT", what, res);
}

/* ------------------------------------------------------------------------ */
/* a minimal io_uring: one operation at a time                               */

static struct {
    int fd;
    unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_mask;
    struct io_uring_sqe *sqes;
    struct io_uring_cqe *cqes;
} ring = {.fd = -1};

static int ring_init(void)
{
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    ring.fd = (int)syscall(SYS_io_uring_setup, 4, &p);
    if (ring.fd < 0)
        return -1;
    size_t sqsz = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    size_t cqsz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    char *sq = mmap(NULL, sqsz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring.fd,
                    IORING_OFF_SQ_RING);
    char *cq = mmap(NULL, cqsz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring.fd,
                    IORING_OFF_CQ_RING);
    ring.sqes = mmap(NULL, p.sq_entries * sizeof *ring.sqes, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_POPULATE, ring.fd, IORING_OFF_SQES);
    CHECK(sq != MAP_FAILED && cq != MAP_FAILED && ring.sqes != MAP_FAILED);
    ring.sq_tail = (unsigned *)(sq + p.sq_off.tail);
    ring.sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
    ring.sq_array = (unsigned *)(sq + p.sq_off.array);
    ring.cq_head = (unsigned *)(cq + p.cq_off.head);
    ring.cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
    ring.cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
    return 0;
}

/* One read or write at file offset 0; the completion's result. */
static long ring_rw(int op, void *buf, unsigned flags)
{
    unsigned t = *ring.sq_tail, i = t & *ring.sq_mask;
    memset(&ring.sqes[i], 0, sizeof ring.sqes[i]);
    ring.sqes[i].opcode = (uint8_t)op;
    ring.sqes[i].flags = (uint8_t)flags;
    ring.sqes[i].fd = fd;
    ring.sqes[i].addr = (uintptr_t)buf;
    ring.sqes[i].len = (unsigned)N;
    ring.sq_array[i] = i;
    __atomic_store_n(ring.sq_tail, t + 1, __ATOMIC_RELEASE);
    CHECKF(syscall(SYS_io_uring_enter, ring.fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) == 1,
           "io_uring_enter: %s", strerror(errno));
    unsigned h = *ring.cq_head;
    long res = ring.cqes[h & *ring.cq_mask].res;
    __atomic_store_n(ring.cq_head, h + 1, __ATOMIC_RELEASE);
    return res;
}

static long aio_rw(int write, void *buf)
{
    struct aiocb cb;
    memset(&cb, 0, sizeof cb);
    cb.aio_fildes = fd;
    cb.aio_buf = buf;
    cb.aio_nbytes = N;
    CHECK((write ? aio_write(&cb) : aio_read(&cb)) == 0);
    const struct aiocb *l[1] = {&cb};
    while (aio_error(&cb) == EINPROGRESS)
        aio_suspend(l, 1, NULL);
    int e = aio_error(&cb);
    ssize_t r = aio_return(&cb);
    return e ? -e : (long)r;
}

/* The file holds pattern `seed` (written from unmanaged memory). */
static void set_file(int seed)
{
    uint8_t *t = mmap(NULL, N, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(t != MAP_FAILED);
    for (size_t i = 0; i < N; i++)
        t[i] = mt_pat(i, seed);
    CHECK(pwrite(fd, t, N, 0) == (ssize_t)N);
    munmap(t, N);
}

static void check_file(const char *what, int seed)
{
    uint8_t *t = mmap(NULL, N, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(t != MAP_FAILED && pread(fd, t, N, 0) == (ssize_t)N);
    for (size_t i = 0; i < N; i++)
        CHECKF(t[i] == mt_pat(i, seed), "%s: byte %zu of the file wrong", what, i);
    munmap(t, N);
}

static void check_buf(const char *what, const uint8_t *p, int seed)
{
    for (size_t i = 0; i < N; i++)
        CHECKF(p[i] == mt_pat(i, seed), "%s: byte %zu wrong", what, i);
}

/* op: 0 aio, 1 io_uring inline, 2 io_uring IOSQE_ASYNC */
static long run(int op, int write, void *buf)
{
    if (op == 0)
        return aio_rw(write, buf);
    return ring_rw(write ? IORING_OP_WRITE : IORING_OP_READ, buf, op == 2 ? IOSQE_ASYNC : 0);
}

static void test(int op, const char *name)
{
    char what[64];
    uint8_t *m = bd_mem_alloc(N + OFF, 0);
    CHECK(m && bd_mem_owns(m));
    uint8_t *p = m + OFF;
    int seed = 10 * op;

    /* input into unloaded memory */
    memset(m, 0xAB, N + OFF);
    set_file(seed + 1);
    mt_unload();
    snprintf(what, sizeof what, "%s read", name);
    long r = run(op, 0, p);
    expect(what, r);
    if (r == (long)N) {
        mt_unload();
        check_buf(what, p, seed + 1);
    } else {
        /* touched (written) first, the same call works */
        memset(p, 0, N);
        r = run(op, 0, p);
        CHECKF(r == (long)N, "%s into a touched buffer returned %ld", what, r);
        mt_unload();
        check_buf(what, p, seed + 1);
    }

    /* output from unloaded memory */
    for (size_t i = 0; i < N; i++)
        p[i] = mt_pat(i, seed + 2);
    mt_unload();
    snprintf(what, sizeof what, "%s write", name);
    r = run(op, 1, p);
    expect(what, r);
    if (r != (long)N) {
        volatile uint8_t s = 0;
        for (size_t i = 0; i < N; i += 4096)
            s ^= p[i];
        s ^= p[N - 1]; /* p is not page aligned */
        (void)s;
        r = run(op, 1, p);
        CHECKF(r == (long)N, "%s from a touched buffer returned %ld", what, r);
    }
    check_file(what, seed + 2);
    bd_mem_free(m);
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 1;
    bd_mem_config_t cfg;
    kernel_faults = mt_syscall_setup(argv, 64 << 10, &cfg);
    if (kernel_faults < 0)
        return SKIP;
    char path[300];
    snprintf(path, sizeof path, "%s/../bdmem-async-%d", cfg.dir, (int)getpid());
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    unlink(path);

    test(0, "aio");
    if (ring_init() == 0) {
        test(1, "io_uring");
        test(2, "io_uring (IOSQE_ASYNC)");
    } else {
        fprintf(stderr, "io_uring not available here (%s): only aio tested\n", strerror(errno));
    }
    close(fd);
    fprintf(stderr, "track %s, kernel faults %d: %s\n", argv[2], kernel_faults,
            kernel_faults ? "async I/O works on managed memory"
                          : "async I/O sees EFAULT until touched");
    mt_finish();
    return 0;
}
