/* More system calls on managed memory (syscall-override.c): recvmmsg,
 * sendmmsg, recvmsg and recvfrom whose headers or addresses (written back
 * by the kernel) are managed, getrandom, getentropy and vmsplice in both
 * directions, into and from managed buffers that are unloaded or resident
 * but clean.  Data is checked byte for byte after an unload, so what the
 * kernel wrote must also have been tracked as written.
 * usage: mem_syscalls2 <araw|arlw|lrlw> <uffd|mprotect|uffd-user>
 * uffd-user: the userfaultfd path with a user-mode-only descriptor; run as
 * root, the test drops to nobody to get one (skips where it cannot). */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>

#include "sysctest.h"

#define STEP ((size_t)8 << 20) /* as in syscall-override.c */
#define SB ((size_t)64 << 10)
#define NMSG 3

extern int bd_mem_syscall_override_linked;

static int kernel_faults;

/* Leave a managed allocation unloaded (clean = 0) or resident but clean
 * (read-only on the mprotect path). */
static void settle(const uint8_t *p, size_t n, int clean)
{
    mt_unload();
    if (clean) {
        volatile uint8_t s = 0;
        for (size_t i = 0; i < n; i += 4096)
            s ^= p[i];
        (void)s;
    }
}

static const char *state[2] = {"unloaded", "clean"};

/* Hang guard: a call that blocks where it should have returned. */
static void on_alarm(int sig)
{
    (void)sig;
    static const char m[] = "mem_syscalls2: a call blocked that should have returned\n";
    if (syscall(SYS_write, 2, m, sizeof m - 1) < 0) {
    }
    _exit(1);
}

/* ------------------------------------------------------------------------ */
/* datagrams: recvmmsg, sendmmsg, recvmsg, recvfrom                          */

static const size_t msz[NMSG] = {100000, 4097, 60000};

/* Layout inside one managed allocation: the header array, the iovecs, the
 * timeout and the data, so every piece the kernel reads or writes is
 * managed.  Each message has a managed entry and a small unmanaged one. */
typedef struct {
    struct mmsghdr h[NMSG];
    struct iovec iov[NMSG][2];
    struct timespec tmo;
} hdrs_t;

static void test_recvmmsg(void)
{
    for (int clean = 0; clean < 2; clean++) {
        size_t len = (2u << 20) + 3 * SB;
        uint8_t *m = malloc(len);
        CHECK(m && bd_mem_owns(m));
        memset(m, 0x5A, len);
        hdrs_t *hd = (hdrs_t *)(m + 1000);
        uint8_t *data = m + (1u << 20) + 777;
        uint8_t *tail = mt_plain(NMSG * 16);
        size_t off = 0;
        for (int i = 0; i < NMSG; i++) {
            hd->iov[i][0] = (struct iovec){data + off, msz[i] - 16};
            hd->iov[i][1] = (struct iovec){tail + 16 * i, 16};
            hd->h[i] = (struct mmsghdr){.msg_hdr = {.msg_iov = hd->iov[i], .msg_iovlen = 2}};
            off += msz[i];
        }
        hd->tmo = (struct timespec){30, 0};
        int sv[2];
        CHECK(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) == 0);
        int sz = 1 << 20;
        setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
        setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
        uint8_t *src = mt_plain(off);
        mt_fill(src, off, 0, 3);
        for (size_t i = 0, o = 0; i < NMSG; o += msz[i], i++)
            CHECKF(send(sv[1], src + o, msz[i], 0) == (ssize_t)msz[i], "send datagram %zu: %s", i,
                   strerror(errno));
        settle(m, len, clean);
        errno = 4242;
        int r = recvmmsg(sv[0], hd->h, NMSG, 0, &hd->tmo);
        CHECKF(r == NMSG, "recvmmsg (%s) returned %d (%s)", state[clean], r, strerror(errno));
        CHECKF(errno == 4242, "recvmmsg changed errno on success to %d", errno);
        mt_unload();
        off = 0;
        for (int i = 0; i < NMSG; i++) {
            CHECKF(hd->h[i].msg_len == msz[i], "recvmmsg: message %d has msg_len %u, expected %zu",
                   i, hd->h[i].msg_len, msz[i]);
            CHECKF(hd->h[i].msg_hdr.msg_flags == 0, "recvmmsg: message %d flags %d", i,
                   hd->h[i].msg_hdr.msg_flags);
            long b = mt_bad(data + off, msz[i] - 16, off, 3);
            CHECKF(b < 0, "recvmmsg (%s): message %d byte %ld wrong", state[clean], i, b);
            CHECK(mt_bad(tail + 16 * i, 16, off + msz[i] - 16, 3) < 0);
            off += msz[i];
        }
        CHECKF(hd->tmo.tv_sec <= 30 && hd->tmo.tv_sec >= 25,
               "recvmmsg: time left %ld s not written back", (long)hd->tmo.tv_sec);
        CHECK(data[-1] == 0x5A && data[off] == 0x5A);

        /* MSG_DONTWAIT with fewer messages queued than asked: what is there. */
        CHECK(send(sv[1], src, msz[0], 0) == (ssize_t)msz[0]);
        settle(m, len, clean);
        r = recvmmsg(sv[0], hd->h, NMSG, MSG_DONTWAIT, NULL);
        CHECKF(r == 1 && hd->h[0].msg_len == msz[0], "recvmmsg with one queued returned %d", r);
        errno = 0;
        r = recvmmsg(sv[0], hd->h, NMSG, MSG_DONTWAIT, NULL);
        CHECKF(r == -1 && errno == EAGAIN, "recvmmsg with none queued returned %d (%s)", r,
               strerror(errno));
        mt_unload();
        CHECK(mt_bad(data, msz[0] - 16, 0, 3) < 0);
        errno = 0;
        CHECK(recvmmsg(-1, hd->h, NMSG, 0, NULL) == -1 && errno == EBADF);

        /* sendmmsg: the same layout, the data sent from managed memory. */
        mt_fill(data, off, 0, 4);
        off = 0;
        for (int i = 0; i < NMSG; i++) {
            hd->h[i].msg_len = 0;
            hd->iov[i][0] = (struct iovec){data + off, msz[i]};
            hd->h[i].msg_hdr.msg_iovlen = 1;
            off += msz[i];
        }
        settle(m, len, clean);
        errno = 4242;
        r = sendmmsg(sv[1], hd->h, NMSG, 0);
        CHECKF(r == NMSG, "sendmmsg (%s) returned %d (%s)", state[clean], r, strerror(errno));
        CHECK(errno == 4242);
        mt_unload();
        off = 0;
        for (int i = 0; i < NMSG; i++) {
            CHECKF(hd->h[i].msg_len == msz[i], "sendmmsg: message %d msg_len %u", i,
                   hd->h[i].msg_len);
            CHECK(recv(sv[0], src, msz[i] + 10, 0) == (ssize_t)msz[i]);
            long b = mt_bad(src, msz[i], off, 4);
            CHECKF(b < 0, "sendmmsg (%s): message %d byte %ld wrong", state[clean], i, b);
            off += msz[i];
        }
        munmap(src, off);
        munmap(tail, NMSG * 16);
        close(sv[0]);
        close(sv[1]);
        free(m);
    }
}

/* recvmsg with the header and the control buffer managed (the kernel
 * writes msg_controllen, msg_flags and the control data), and recvfrom
 * with the address and its length managed. */
static void test_headers(void)
{
    for (int clean = 0; clean < 2; clean++) {
        size_t len = (1u << 20) + SB;
        uint8_t *m = malloc(len);
        CHECK(m && bd_mem_owns(m));
        memset(m, 0, len);
        struct msghdr *h = (struct msghdr *)(m + 100);
        uint8_t *ctl = m + 70000; /* another sbpage */
        uint8_t data[64];
        struct iovec v = {data, sizeof data};
        int sv[2];
        CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
        int sent_fd = open("/dev/null", O_RDONLY);
        CHECK(sent_fd >= 0);
        union {
            struct cmsghdr c;
            char b[CMSG_SPACE(sizeof(int))];
        } u;
        memset(&u, 0, sizeof u);
        struct msghdr out = {.msg_iov = &(struct iovec){"hello", 5},
                             .msg_iovlen = 1,
                             .msg_control = u.b,
                             .msg_controllen = sizeof u.b};
        struct cmsghdr *c = CMSG_FIRSTHDR(&out);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &sent_fd, sizeof(int));
        CHECK(sendmsg(sv[1], &out, 0) == 5);
        *h = (struct msghdr){.msg_iov = &v,
                             .msg_iovlen = 1,
                             .msg_control = ctl,
                             .msg_controllen = 256,
                             .msg_flags = 12345};
        settle(m, len, clean);
        ssize_t r = recvmsg(sv[0], h, 0);
        CHECKF(r == 5, "recvmsg (%s) returned %zd (%s)", state[clean], r, strerror(errno));
        mt_unload();
        CHECKF(h->msg_flags == 0, "recvmsg: msg_flags %d not written back", h->msg_flags);
        CHECKF(h->msg_controllen == CMSG_SPACE(sizeof(int)), "recvmsg: msg_controllen %zu",
               (size_t)h->msg_controllen);
        struct cmsghdr *rc = CMSG_FIRSTHDR(h);
        CHECK(rc && rc->cmsg_type == SCM_RIGHTS);
        int got_fd;
        memcpy(&got_fd, CMSG_DATA(rc), sizeof got_fd);
        struct stat a, b;
        CHECK(fstat(got_fd, &a) == 0 && fstat(sent_fd, &b) == 0 && a.st_ino == b.st_ino);
        close(got_fd);
        close(sent_fd);
        CHECK(memcmp(data, "hello", 5) == 0);
        close(sv[0]);
        close(sv[1]);

        /* recvfrom: unmanaged data, managed address and length. */
        CHECK(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) == 0);
        struct sockaddr_un me = {.sun_family = AF_UNIX}; /* autobind: an abstract name */
        CHECK(bind(sv[1], (struct sockaddr *)&me, sizeof(sa_family_t)) == 0);
        struct sockaddr_storage *from = (struct sockaddr_storage *)(m + 200000);
        socklen_t *fromlen = (socklen_t *)(m + 300000);
        *fromlen = sizeof *from;
        memset(from, 0x77, sizeof *from);
        CHECK(send(sv[1], "abc", 3, 0) == 3);
        settle(m, len, clean);
        r = recvfrom(sv[0], data, sizeof data, 0, (struct sockaddr *)from, fromlen);
        CHECKF(r == 3, "recvfrom (%s, managed address) returned %zd (%s)", state[clean], r,
               strerror(errno));
        mt_unload();
        CHECKF(*fromlen > sizeof(sa_family_t) && *fromlen < sizeof *from,
               "recvfrom: address length %u not written back", *fromlen);
        CHECKF(from->ss_family == AF_UNIX && ((struct sockaddr_un *)from)->sun_path[0] == 0,
               "recvfrom: address not written back");
        close(sv[0]);
        close(sv[1]);
        free(m);
    }
}

/* ------------------------------------------------------------------------ */
/* getrandom, getentropy                                                     */

/* Random bytes cannot be predicted: the call must succeed, change the
 * buffer (about 1 byte in 256 keeps its old value), and what it wrote
 * must survive an unload. */
static void check_random(const char *what, const uint8_t *p, size_t n, int seed, int clean)
{
    uint8_t *copy = mt_plain(n);
    memcpy(copy, p, n);
    size_t same = 0;
    for (size_t i = 0; i < n; i++)
        same += p[i] == mt_pat(i, seed);
    CHECKF(same < n / 64 + 8, "%s (%s): %zu of %zu bytes unchanged", what, state[clean], same, n);
    mt_unload();
    CHECKF(memcmp(copy, p, n) == 0, "%s (%s): the data did not survive an unload", what,
           state[clean]);
    munmap(copy, n);
}

static void test_random(void)
{
    const size_t n = (3u << 20) + 12345, big = 2 * STEP + 4321;
    for (int clean = 0; clean < 2; clean++) {
        uint8_t *m = aligned_alloc(STEP, 4 * STEP);
        CHECK(m && bd_mem_owns(m));
        uint8_t *p = m + STEP - 1000; /* the first step is 1000 bytes */
        mt_fill(p, n, 0, 5);
        settle(m, 4 * STEP, clean);
        errno = 4242;
        ssize_t r = getrandom(p, n, 0);
        CHECKF(r == (ssize_t)n, "getrandom (%s) returned %zd (%s)", state[clean], r,
               strerror(errno));
        CHECK(errno == 4242);
        check_random("getrandom", p, n, 5, clean);

        /* Over several steps. */
        mt_fill(p, big, 0, 6);
        settle(m, 4 * STEP, clean);
        r = getrandom(p, big, GRND_NONBLOCK);
        CHECKF(r == (ssize_t)big, "getrandom of %zu bytes returned %zd (%s)", big, r,
               strerror(errno));
        check_random("getrandom (steps)", p, big, 6, clean);

        mt_fill(p, 256, 0, 7);
        settle(m, 4 * STEP, clean);
        errno = 4242;
        CHECKF(getentropy(p, 256) == 0, "getentropy (%s): %s", state[clean], strerror(errno));
        CHECK(errno == 4242);
        check_random("getentropy", p, 256, 7, clean);
        errno = 0;
        CHECK(getentropy(p, 257) == -1 && errno == EIO);
        errno = 0;
        CHECK(getrandom(p, 100, ~0u) == -1 && errno == EINVAL);
        free(m);
    }
}

/* ------------------------------------------------------------------------ */
/* vmsplice                                                                  */

typedef struct {
    int fd;
    size_t n;
    int seed;
    long badpos;
} peer_t;

static void *pipe_reader(void *arg)
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

static void *pipe_writer(void *arg)
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

static void test_vmsplice(void)
{
    const size_t big = 2 * STEP + 5000;
    for (int clean = 0; clean < 2; clean++) {
        uint8_t *m = aligned_alloc(STEP, 4 * STEP);
        CHECK(m && bd_mem_owns(m));
        uint8_t *p = m + STEP - 4096; /* the first step is one page */

        /* Out of managed memory into a pipe, read by another thread. */
        mt_fill(p, big, 0, 8);
        int pp[2];
        CHECK(pipe(pp) == 0);
        fcntl(pp[1], F_SETPIPE_SZ, 1 << 20);
        peer_t rd = {pp[0], big, 8, 0};
        pthread_t th;
        settle(m, 4 * STEP, clean);
        CHECK(pthread_create(&th, NULL, pipe_reader, &rd) == 0);
        for (size_t done = 0; done < big;) {
            struct iovec v = {p + done, big - done};
            ssize_t r = vmsplice(pp[1], &v, 1, 0);
            CHECKF(r > 0, "vmsplice to a pipe (%s) returned %zd after %zu bytes (%s)", state[clean],
                   r, done, strerror(errno));
            done += (size_t)r;
        }
        pthread_join(th, NULL);
        CHECKF(rd.badpos < 0, "vmsplice to a pipe (%s): byte %ld read wrong", state[clean],
               rd.badpos);

        /* The pipe holds the pages, not a copy: data spliced and not yet read
     * when the rank is unloaded must still be read right. */
        settle(m, 4 * STEP, clean);
        struct iovec v = {p, 200000};
        ssize_t r = vmsplice(pp[1], &v, 1, SPLICE_F_NONBLOCK);
        CHECKF(r > 0, "vmsplice (%s) returned %zd (%s)", state[clean], r, strerror(errno));
        mt_unload();
        uint8_t *t = mt_plain((size_t)r);
        CHECK(read(pp[0], t, (size_t)r) == r);
        long b = mt_bad(t, (size_t)r, 0, 8);
        CHECKF(b < 0, "vmsplice, then unload (%s): byte %ld read wrong", state[clean], b);
        munmap(t, (size_t)r);

        /* A pipe full: the first step already cannot go on. */
        struct iovec w = {p, big};
        for (;;) {
            r = vmsplice(pp[1], &w, 1, SPLICE_F_NONBLOCK);
            if (r < 0)
                break;
        }
        CHECKF(errno == EAGAIN, "vmsplice into a full pipe: %s", strerror(errno));
        close(pp[0]);
        close(pp[1]);

        /* From a pipe into managed memory. */
        CHECK(pipe(pp) == 0);
        fcntl(pp[1], F_SETPIPE_SZ, 1 << 20);
        memset(p, 0xEE, big + 1);
        peer_t wr = {pp[1], big, 9, 0};
        settle(m, 4 * STEP, clean);
        CHECK(pthread_create(&th, NULL, pipe_writer, &wr) == 0);
        for (size_t done = 0; done < big;) {
            struct iovec u = {p + done, big - done};
            r = vmsplice(pp[0], &u, 1, 0);
            CHECKF(r > 0, "vmsplice from a pipe (%s) returned %zd after %zu bytes (%s)",
                   state[clean], r, done, strerror(errno));
            done += (size_t)r;
        }
        pthread_join(th, NULL);
        mt_unload();
        b = mt_bad(p, big, 0, 9);
        CHECKF(b < 0, "vmsplice from a pipe (%s): byte %ld wrong", state[clean], b);
        CHECK(p[big] == 0xEE);

        /* Less in the pipe than asked over several steps: what is there, at
     * once (later steps must not wait). */
        signal(SIGALRM, on_alarm);
        alarm(60);
        uint8_t *src = mt_plain(8192);
        mt_fill(src, 8192, 0, 10);
        settle(m, 4 * STEP, clean);
        CHECK(write(pp[1], src, 4096) == 4096);
        struct iovec u = {p, big};
        r = vmsplice(pp[0], &u, 1, 0);
        CHECKF(r == 4096, "vmsplice from a pipe holding one step returned %zd", r);
        CHECK(write(pp[1], src, 5000) == 5000);
        r = vmsplice(pp[0], &u, 1, 0);
        CHECKF(r == 5000, "vmsplice from a pipe holding a step and a bit returned %zd", r);
        alarm(0);
        mt_unload();
        CHECK(mt_bad(p, 5000, 0, 10) < 0);
        munmap(src, 8192);
        close(pp[0]);
        close(pp[1]);
        errno = 0;
        CHECK(vmsplice(-1, &u, 1, 0) == -1 && errno == EBADF);
        free(m);
    }
}

/* Without the wrappers the kernel would fail: proof that the cases above
 * test something on this path. */
static void test_control(void)
{
    if (kernel_faults)
        return;
    uint8_t *buf = malloc(1u << 20);
    memset(buf, 1, 1u << 20);
    mt_unload();
    long r = syscall(SYS_getrandom, buf, 4096, 0);
    CHECKF(r == -1 && errno == EFAULT,
           "a raw getrandom into unloaded memory returned %ld (%s): nothing to test", r,
           strerror(errno));
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
    test_control();
    test_recvmmsg();
    test_headers();
    test_random();
    test_vmsplice();
    bd_mem_stats_t st;
    bd_mem_stats(&st);
    fprintf(stderr, "track %d, kernel faults %d, %llu loads, %llu bytes read back\n", st.track,
            kernel_faults, (unsigned long long)st.loads, (unsigned long long)st.bytes_read);
    mt_finish();
    return 0;
}
