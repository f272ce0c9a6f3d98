/* System calls and stdio on managed memory (syscall-override.c): every
 * wrapped call reads into or writes from managed buffers that are unloaded
 * (not resident) or resident but clean, and the data must be right, with no
 * EFAULT, on every tracking path.  Also: large transfers cut into steps keep
 * the call's meaning (short reads, pipes and stream sockets that must not
 * block, datagrams and MSG_PEEK that must not be cut, O_DIRECT alignment),
 * errno is preserved, bad descriptors still fail.
 * usage: mem_syscalls <araw|arlw|lrlw> <uffd|mprotect|uffd-user>
 * uffd-user: the userfaultfd path with a user-mode-only descriptor (the
 * kernel's own faults are not handled); run as root, the test drops to
 * nobody to get one. */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "sysctest.h"

#define STEP ((size_t)8 << 20) /* as in syscall-override.c */
#define SB ((size_t)64 << 10)

extern int bd_mem_syscall_override_linked;
extern ssize_t __read_chk(int, void *, size_t, size_t);
extern ssize_t __pread64_chk(int, void *, size_t, off64_t, size_t);
extern ssize_t __recv_chk(int, void *, size_t, size_t, int);
extern size_t __fread_chk(void *, size_t, size_t, size_t, FILE *);

static const size_t N = (3u << 20) + 12345; /* bytes per transfer */
static const size_t OFF = 1000;             /* buffers start mid-sbpage */
static const size_t FOFF = 5000;            /* file offset for positional calls */
static char path[300];
static int kernel_faults;
static bd_mem_strategy_t strategy;

static void cleanup_file(void)
{
    if (path[0])
        unlink(path);
}

/* The test file holds pattern seed 1 over [0, len). */
static int make_file(size_t len)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    uint8_t *t = mt_plain(len);
    mt_fill(t, len, 0, 1);
    CHECK(write(fd, t, len) == (ssize_t)len);
    munmap(t, len);
    CHECK(lseek(fd, 0, SEEK_SET) == 0);
    return fd;
}

/* Hang guard: a read that blocks where it should have returned is fed one
 * more byte through unblock_fd, so it returns, the CHECK after it fails and
 * the test exits normally (cleaning up its files). */
static volatile sig_atomic_t unblock_fd = -1;
static void on_alarm(int sig)
{
    (void)sig;
    static const char m[] = "mem_syscalls: a call blocked that should have returned\n";
    if (syscall(SYS_write, 2, m, sizeof m - 1) < 0 || unblock_fd < 0 ||
        syscall(SYS_write, unblock_fd, m, 1) != 1) {
        unlink(path);
        _exit(1);
    }
}

/* ------------------------------------------------------------------------ */
/* socket peers (threads with unmanaged buffers)                             */

typedef struct {
    int fd;
    size_t n;
    int seed;
    long badpos;
} peer_t;

static void *peer_send(void *arg)
{
    peer_t *p = arg;
    uint8_t *t = mt_plain(p->n);
    mt_fill(t, p->n, 0, p->seed);
    for (size_t done = 0; done < p->n;) {
        ssize_t w = write(p->fd, t + done, p->n - done);
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    munmap(t, p->n);
    return NULL;
}

static void *peer_recv(void *arg)
{
    peer_t *p = arg;
    uint8_t *t = mt_plain(p->n);
    size_t done = 0;
    while (done < p->n) {
        ssize_t r = read(p->fd, t + done, p->n - done);
        if (r <= 0)
            break;
        done += (size_t)r;
    }
    p->badpos = done < p->n ? (long)done : mt_bad(t, p->n, 0, p->seed);
    munmap(t, p->n);
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* inputs: the kernel (or stdio) fills managed memory                        */

enum {
    I_READ,
    I_READ_CHK,
    I_PREAD,
    I_PREAD_CHK,
    I_READV,
    I_PREADV,
    I_PREADV2,
    I_FREAD,
    I_FREAD_UNLOCKED,
    I_FREAD_CHK,
    I_RECV,
    I_RECV_CHK,
    I_RECVFROM,
    I_RECVMSG,
    I_N
};
static const char *iname[I_N] = {
    "read",  "__read_chk",     "pread",       "__pread64_chk", "readv",      "preadv",   "preadv2",
    "fread", "fread_unlocked", "__fread_chk", "recv",          "__recv_chk", "recvfrom", "recvmsg"};

/* Fill dst[0..N) from the file (offset FOFF for positional calls) or a
 * socket, with the call under test; returns the pattern offset expected. */
static size_t do_input(int kind, uint8_t *dst)
{
    int fd = make_file(N + FOFF);
    size_t from = 0;
    ssize_t r = -1;
    uint8_t small[16];
    struct iovec iov[2] = {{dst, N - sizeof small}, {small, sizeof small}};
    errno = 4242;
    switch (kind) {
    case I_READ: r = read(fd, dst, N); break;
    case I_READ_CHK: r = __read_chk(fd, dst, N, N); break;
    case I_PREAD: r = pread(fd, dst, N, (off_t)FOFF), from = FOFF; break;
    case I_PREAD_CHK: r = __pread64_chk(fd, dst, N, (off64_t)FOFF, N), from = FOFF; break;
    case I_READV:
    case I_PREADV:
    case I_PREADV2:
        /* a managed and an unmanaged entry; the last bytes go to small */
        if (kind == I_READV)
            r = readv(fd, iov, 2);
        if (kind == I_PREADV)
            r = preadv(fd, iov, 2, (off_t)FOFF), from = FOFF;
        if (kind == I_PREADV2)
            r = preadv2(fd, iov, 2, (off_t)FOFF, 0), from = FOFF;
        CHECKF(r == (ssize_t)N, "%s returned %zd (%s)", iname[kind], r, strerror(errno));
        CHECKF(mt_bad(small, sizeof small, from + N - sizeof small, 1) < 0,
               "%s: unmanaged entry wrong", iname[kind]);
        memcpy(dst + N - sizeof small, small, sizeof small); /* for the common check */
        break;
    case I_FREAD:
    case I_FREAD_UNLOCKED:
    case I_FREAD_CHK: {
        FILE *f = fdopen(dup(fd), "rb");
        CHECK(f);
        /* items of 7 bytes, then the remainder */
        size_t items = kind == I_FREAD            ? fread(dst, 7, N / 7, f)
                       : kind == I_FREAD_UNLOCKED ? fread_unlocked(dst, 7, N / 7, f)
                                                  : __fread_chk(dst, N, 7, N / 7, f);
        CHECKF(items == N / 7, "%s returned %zu items, expected %zu (%s)", iname[kind], items,
               N / 7, strerror(errno));
        CHECK(fread(dst + N / 7 * 7, 1, N % 7, f) == N % 7);
        CHECK(!ferror(f));
        fclose(f);
        r = (ssize_t)N;
        break;
    }
    default: {
        int sv[2];
        CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
        peer_t p = {sv[1], N, 1, 0};
        pthread_t th;
        CHECK(pthread_create(&th, NULL, peer_send, &p) == 0);
        size_t done = 0;
        while (done < N) {
            ssize_t k;
            struct iovec v = {dst + done, N - done};
            struct msghdr m = {.msg_iov = &v, .msg_iovlen = 1};
            if (kind == I_RECV)
                k = recv(sv[0], dst + done, N - done, 0);
            else if (kind == I_RECV_CHK)
                k = __recv_chk(sv[0], dst + done, N - done, N - done, 0);
            else if (kind == I_RECVFROM)
                k = recvfrom(sv[0], dst + done, N - done, 0, NULL, NULL);
            else
                k = recvmsg(sv[0], &m, 0);
            CHECKF(k > 0, "%s returned %zd after %zu bytes (%s)", iname[kind], k, done,
                   strerror(errno));
            done += (size_t)k;
        }
        pthread_join(th, NULL);
        close(sv[0]);
        close(sv[1]);
        r = (ssize_t)N;
    }
    }
    CHECKF(r == (ssize_t)N, "%s returned %zd, expected %zu (%s)", iname[kind], r, N,
           strerror(errno));
    if (kind <= I_PREADV2)
        CHECKF(errno == 4242, "%s changed errno on success to %d", iname[kind], errno);
    close(fd);
    return from;
}

static void test_inputs(void)
{
    for (int clean = 0; clean < 2; clean++)
        for (int kind = 0; kind < I_N; kind++) {
            size_t len = N + OFF + 3 * SB;
            uint8_t *buf = malloc(len);
            CHECK(buf && bd_mem_owns(buf));
            mt_fill(buf, len, 0, 9);
            mt_unload();
            if (clean) { /* resident but clean (read-only on the mprotect path) */
                volatile uint8_t s = 0;
                for (size_t i = 0; i < len; i += 4096)
                    s ^= buf[i];
                (void)s;
            }
            size_t from = do_input(kind, buf + OFF);
            mt_unload(); /* what the kernel wrote must have been tracked as dirty */
            long b = mt_bad(buf + OFF, N, from, 1);
            CHECKF(b < 0, "%s (%s buffer): byte %ld wrong", iname[kind],
                   clean ? "clean" : "unloaded", b);
            CHECKF(mt_bad(buf, OFF, 0, 9) < 0 &&
                       mt_bad(buf + OFF + N, len - OFF - N, OFF + N, 9) < 0,
                   "%s: bytes around the buffer changed", iname[kind]);
            free(buf);
        }
}

/* ------------------------------------------------------------------------ */
/* outputs: the kernel (or stdio) reads managed memory                       */

enum {
    O_WRITE,
    O_PWRITE,
    O_WRITEV,
    O_PWRITEV,
    O_PWRITEV2,
    O_FWRITE,
    O_FWRITE_UNLOCKED,
    O_SEND,
    O_SENDTO,
    O_SENDMSG,
    O_N
};
static const char *oname[O_N] = {"write",  "pwrite",          "writev", "pwritev", "pwritev2",
                                 "fwrite", "fwrite_unlocked", "send",   "sendto",  "sendmsg"};

static void test_outputs(void)
{
    for (int kind = 0; kind < O_N; kind++) {
        size_t len = N + OFF + 3 * SB;
        uint8_t *buf = malloc(len);
        CHECK(buf && bd_mem_owns(buf));
        mt_fill(buf + OFF, N, 0, 2);
        mt_unload();
        uint8_t *src = buf + OFF;
        ssize_t r = -1;
        if (kind >= O_SEND) {
            int sv[2];
            CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
            peer_t p = {sv[1], N, 2, 0};
            pthread_t th;
            CHECK(pthread_create(&th, NULL, peer_recv, &p) == 0);
            size_t done = 0;
            while (done < N) {
                struct iovec v = {src + done, N - done};
                struct msghdr m = {.msg_iov = &v, .msg_iovlen = 1};
                ssize_t k = kind == O_SEND     ? send(sv[0], src + done, N - done, 0)
                            : kind == O_SENDTO ? sendto(sv[0], src + done, N - done, 0, NULL, 0)
                                               : sendmsg(sv[0], &m, 0);
                CHECKF(k > 0, "%s returned %zd (%s)", oname[kind], k, strerror(errno));
                done += (size_t)k;
            }
            pthread_join(th, NULL);
            close(sv[0]);
            close(sv[1]);
            CHECKF(p.badpos < 0, "%s: byte %ld received wrong", oname[kind], p.badpos);
            free(buf);
            continue;
        }
        int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
        CHECK(fd >= 0);
        struct iovec iov[2] = {{src, N / 2}, {src + N / 2, N - N / 2}};
        errno = 4242;
        switch (kind) {
        case O_WRITE: r = write(fd, src, N); break;
        case O_PWRITE: r = pwrite(fd, src, N, 0); break;
        case O_WRITEV: r = writev(fd, iov, 2); break;
        case O_PWRITEV: r = pwritev(fd, iov, 2, 0); break;
        case O_PWRITEV2: r = pwritev2(fd, iov, 2, 0, 0); break;
        default: {
            FILE *f = fdopen(dup(fd), "wb");
            CHECK(f);
            size_t items =
                kind == O_FWRITE ? fwrite(src, 5, N / 5, f) : fwrite_unlocked(src, 5, N / 5, f);
            CHECKF(items == N / 5, "%s wrote %zu items (%s)", oname[kind], items, strerror(errno));
            CHECK(fwrite(src + N / 5 * 5, 1, N % 5, f) == N % 5);
            CHECK(fclose(f) == 0);
            r = (ssize_t)N;
            errno = 4242;
        }
        }
        CHECKF(r == (ssize_t)N, "%s returned %zd (%s)", oname[kind], r, strerror(errno));
        CHECKF(errno == 4242, "%s changed errno on success to %d", oname[kind], errno);
        uint8_t *t = mt_plain(N);
        CHECK(pread(fd, t, N, 0) == (ssize_t)N);
        long b = mt_bad(t, N, 0, 2);
        CHECKF(b < 0, "%s: byte %ld of the file wrong", oname[kind], b);
        munmap(t, N);
        close(fd);
        free(buf);
    }
}

/* ------------------------------------------------------------------------ */
/* large transfers: cut into steps without changing their meaning            */

static void test_steps(void)
{
    /* p + 4096 is a step boundary: the first step is one page */
    uint8_t *base = aligned_alloc(STEP, 4 * STEP);
    CHECK(base && bd_mem_owns(base) && ((uintptr_t)base & (STEP - 1)) == 0);
    uint8_t *p = base + STEP - 4096;
    const size_t big = 2 * STEP;
    memset(base, 0xEE, 4 * STEP);

    /* A short read into a huge buffer: LRLW loads only the first step. */
    mt_unload();
    int fd = make_file(100);
    CHECK(read(fd, p + 10, big) == 100);
    CHECK(mt_bad(p + 10, 100, 0, 1) < 0);
    CHECK(p[110] == 0xEE);
    if (strategy == BD_MEM_LRLW)
        CHECKF(bd_mem_resident_bytes() < STEP, "a 100-byte read made %zu bytes resident",
               bd_mem_resident_bytes());
    close(fd);

    /* Across step boundaries, then the rest. */
    mt_unload();
    fd = make_file(big + 333);
    CHECK(read(fd, p, big) == (ssize_t)big);
    CHECK(read(fd, p + big, STEP) == 333);
    mt_unload();
    CHECK(mt_bad(p, big + 333, 0, 1) < 0);
    CHECK(p[big + 333] == 0xEE);

    /* fread in items of 3 (a partial item at the end of the file) */
    mt_unload();
    FILE *f = fdopen(dup(fd), "rb");
    CHECK(f && fseek(f, 0, SEEK_SET) == 0);
    memset(p, 0, big + 400);
    CHECK(fread(p, 3, (big + 400) / 3, f) == (big + 333) / 3);
    CHECK(feof(f) && !ferror(f));
    fclose(f);
    mt_unload();
    CHECK(mt_bad(p, big + 333, 0, 1) < 0);

    /* readv with a huge managed entry and a small unmanaged one */
    mt_unload();
    uint8_t small[10];
    struct iovec iov[2] = {{p, big}, {small, sizeof small}};
    CHECK(lseek(fd, 0, SEEK_SET) == 0); /* fread moved the shared offset */
    CHECK(readv(fd, iov, 2) == (ssize_t)(big + sizeof small));
    CHECK(mt_bad(p, big, 0, 1) < 0 && mt_bad(small, sizeof small, big, 1) < 0);

    /* write and pwrite of a huge unloaded buffer */
    mt_fill(p, big, 0, 3);
    mt_unload();
    CHECK(ftruncate(fd, 0) == 0 && lseek(fd, 0, SEEK_SET) == 0);
    CHECK(write(fd, p, big) == (ssize_t)big);
    mt_unload();
    CHECK(pwrite(fd, p, big, (off_t)big) == (ssize_t)big);
    uint8_t *t = mt_plain(2 * big);
    CHECK(pread(fd, t, 2 * big, 0) == (ssize_t)(2 * big));
    CHECK(mt_bad(t, big, 0, 3) < 0 && mt_bad(t + big, big, 0, 3) < 0);
    munmap(t, 2 * big);
    close(fd);

    /* A pipe holding less than asked must not block the later steps. */
    signal(SIGALRM, on_alarm);
    alarm(60); /* a hang guard, not a time limit on anything measured */
    int pp[2];
    CHECK(pipe(pp) == 0);
    unblock_fd = pp[1];
    uint8_t *src = mt_plain(8192);
    mt_fill(src, 8192, 0, 4);
    mt_unload();
    CHECK(write(pp[1], src, 4096) == 4096);
    CHECK(read(pp[0], p, big) == 4096); /* exactly the first step */
    CHECK(write(pp[1], src, 4196) == 4196);
    CHECK(read(pp[0], p, big) == 4196); /* the first step full, then what is there */
    CHECK(mt_bad(p, 4196, 0, 4) < 0);
    close(pp[0]);
    close(pp[1]);

    /* A stream socket: the same with recv. */
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    unblock_fd = sv[1];
    mt_unload();
    CHECK(send(sv[1], src, 4196, 0) == 4196);
    CHECK(recv(sv[0], p, big, 0) == 4196);
    CHECK(mt_bad(p, 4196, 0, 4) < 0);
    /* MSG_PEEK must not be cut: a cut peek would copy the start twice. */
    memset(p, 0, 8192);
    CHECK(send(sv[1], src, 5000, 0) == 5000);
    CHECK(recv(sv[0], p, big, MSG_PEEK) == 5000);
    CHECK(mt_bad(p, 5000, 0, 4) < 0);
    CHECK(recv(sv[0], p, big, 0) == 5000);
    close(sv[0]);
    close(sv[1]);

    /* A datagram larger than the first step must not be truncated. */
    CHECK(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) == 0);
    unblock_fd = sv[1];
    mt_unload();
    memset(p, 0, 8192);
    CHECK(send(sv[1], src, 5000, 0) == 5000);
    CHECK(recv(sv[0], p, big, 0) == 5000);
    CHECK(mt_bad(p, 5000, 0, 4) < 0);
    alarm(0);
    unblock_fd = -1;
    close(sv[0]);
    close(sv[1]);
    munmap(src, 8192);

    /* O_DIRECT: steps keep the alignment (buffer page aligned, not step aligned). */
    fd = make_file(big);
    close(fd);
    fd = open(path, O_RDONLY | O_DIRECT);
    if (fd >= 0) {
        mt_unload();
        uint8_t *q = base + 3 * 4096;
        ssize_t r = read(fd, q, big);
        CHECKF(r == (ssize_t)big, "O_DIRECT read returned %zd (%s)", r, strerror(errno));
        CHECK(mt_bad(q, big, 0, 1) < 0);
        close(fd);
    } else {
        fprintf(stderr, "O_DIRECT not supported here: %s\n", strerror(errno));
    }

    /* Errors still come from the call. */
    errno = 0;
    CHECK(read(-1, p, 100) == -1 && errno == EBADF);
    errno = 0;
    CHECK(read(-1, p, big) == -1 && errno == EBADF);
    free(base);
}

/* Without the wrappers the kernel would fail: proof that the cases above
 * test something on this path. */
static void test_control(void)
{
    if (kernel_faults)
        return;
    uint8_t *buf = malloc(N);
    memset(buf, 1, N);
    int fd = make_file(4096);
    mt_unload();
    long r = syscall(SYS_read, fd, buf, 4096);
    CHECKF(r == -1 && errno == EFAULT,
           "a raw read into unloaded memory returned %ld (%s): nothing to test", r,
           strerror(errno));
    close(fd);
    free(buf);
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 1;
    (void)bd_mem_syscall_override_linked;
    bd_mem_config_t cfg;
    kernel_faults = mt_syscall_setup(argv, SB, &cfg);
    if (kernel_faults < 0)
        return SKIP;
    strategy = cfg.strategy;
    snprintf(path, sizeof path, "%s/../bdmem-syscalls-%d", cfg.dir, (int)getpid());
    atexit(cleanup_file);

    test_control();
    test_inputs();
    test_outputs();
    test_steps();

    cleanup_file();
    path[0] = 0;
    bd_mem_stats_t st;
    bd_mem_stats(&st);
    fprintf(stderr, "track %d, kernel faults %d, %llu loads, %llu bytes read back\n", st.track,
            kernel_faults, (unsigned long long)st.loads, (unsigned long long)st.bytes_read);
    mt_finish();
    return 0;
}
