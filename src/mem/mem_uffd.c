/* mem_uffd.c - userfaultfd tracking back end.
 *
 * MISSING faults are delivered to a handler thread which loads the chunk and
 * installs it write-protected with UFFDIO_COPY; writes are tracked by the
 * kernel (UFFD_FEATURE_WP_ASYNC) and collected with the PAGEMAP_SCAN ioctl.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/fs.h>
#include <linux/userfaultfd.h>

#include "bd_fault.h"
#include "mem_internal.h"

/* Debian 12 ships kernel headers older than the running kernel.  The values
 * below are the kernel UAPI (include/uapi/linux/userfaultfd.h and
 * include/uapi/linux/fs.h, documented in
 * Documentation/admin-guide/mm/userfaultfd.rst, Documentation/admin-guide/mm/
 * pagemap.rst and the PAGEMAP_SCAN(2const) / ioctl_userfaultfd(2) man pages). */
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1ULL << 15)
#endif
#ifndef UFFDIO_COPY_MODE_WP
#define UFFDIO_COPY_MODE_WP ((__u64)1 << 1)
#endif
#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC_NEW _IO(0xAA, 0x00)
#endif
#ifndef PAGEMAP_SCAN
struct page_region {
    __u64 start;
    __u64 end;
    __u64 categories;
};
struct pm_scan_arg {
    __u64 size;
    __u64 flags;
    __u64 start;
    __u64 end;
    __u64 walk_end;
    __u64 vec;
    __u64 vec_len;
    __u64 max_pages;
    __u64 category_inverted;
    __u64 category_mask;
    __u64 category_anyof_mask;
    __u64 return_mask;
};
#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#endif
#ifndef PAGE_IS_WRITTEN
#define PAGE_IS_WRITTEN (1 << 1)
#endif
#ifndef PAGE_IS_PRESENT
#define PAGE_IS_PRESENT (1 << 3)
#endif

#ifndef PM_SCAN_WP_MATCHING
#define PM_SCAN_WP_MATCHING (1 << 0)
#endif
#ifndef PM_SCAN_CHECK_WPASYNC
#define PM_SCAN_CHECK_WPASYNC (1 << 1)
#endif

#define G bdm_g
#define SCAN_VEC 512

static int open_uffd(int *kernel_faults)
{
    int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
    if (fd >= 0) {
        *kernel_faults = 1;
        return fd;
    }
    int err = errno;
    /* /dev/userfaultfd grants full descriptors to whoever may open it. */
    int dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
    if (dev >= 0) {
        fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
        close(dev);
        if (fd >= 0) {
            *kernel_faults = 1;
            return fd;
        }
    }
    if (err == EPERM) {
        fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
        if (fd >= 0) {
            *kernel_faults = 0;
            return fd;
        }
    }
    return -err;
}

static void *handler_main(void *arg)
{
    (void)arg;
    struct uffd_msg msgs[16];
    struct pollfd pfd[3] = {{G.uffd, POLLIN, 0}, {G.stop_fd, POLLIN, 0}, {G.io_evfd, POLLIN, 0}};
    for (;;) {
        int r = poll(pfd, 3, -1);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            bdm_die("userfaultfd handler: poll failed", errno, 0);
        }
        if (pfd[1].revents)
            break;
        if (pfd[2].revents & POLLIN) {
            uint64_t cnt;
            if (read(G.io_evfd, &cnt, sizeof cnt) > 0)
                bdm_io_progress();
        }
        if (!(pfd[0].revents & POLLIN)) {
            if (pfd[0].revents & (POLLERR | POLLHUP))
                bdm_die("userfaultfd handler: descriptor error", 0, 0);
            continue;
        }
        ssize_t n = read(G.uffd, msgs, sizeof msgs);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR)
                continue;
            bdm_die("userfaultfd handler: read failed", errno, 0);
        }
        for (size_t i = 0; i < (size_t)n / sizeof msgs[0]; i++) {
            if (msgs[i].event != UFFD_EVENT_PAGEFAULT)
                continue;
            (void)BD_FAULT_HIT(BD_FAULT_MEM_UFFD_EVENT); /* tests: events served late */
            uintptr_t addr = (uintptr_t)msgs[i].arg.pagefault.address & ~(uintptr_t)(G.page - 1);
            int write = (msgs[i].arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WRITE) ? 1 : 0;
            if (msgs[i].arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WP) {
                /* sync mode: unprotecting the sbpage wakes the thread */
                if (bdm_wp_fault(addr) != 0)
                    bdm_uffd_wake(addr, G.page);
                continue;
            }
            /* Unless the data is still being read (the worker's UFFDIO_COPY wakes
       * the thread), let the faulting thread retry: if the page is now
       * present it proceeds, if the range was freed it gets SIGSEGV. */
            if (bdm_fault(addr, write) != 2)
                bdm_uffd_wake(addr, G.page);
        }
    }
    return NULL;
}

int bdm_uffd_setup(int forced)
{
    int kf = 0;
    int fd = open_uffd(&kf);
    if (fd < 0)
        return forced ? -ENOTSUP : fd;
    struct uffdio_api api;
    memset(&api, 0, sizeof api);
    api.api = UFFD_API;
    /* sync mode: write-protect faults come to the handler, which unprotects
   * a whole sbpage at a time (see bd_mem.h) */
    api.features = G.wp_sync ? 0 : UFFD_FEATURE_WP_ASYNC;
    if (ioctl(fd, UFFDIO_API, &api) != 0 ||
        (!G.wp_sync && !(api.features & UFFD_FEATURE_WP_ASYNC))) {
        close(fd);
        return -ENOTSUP;
    }
    int pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (pm < 0) {
        close(fd);
        return -ENOTSUP;
    }
    /* Probe PAGEMAP_SCAN with an empty range. */
    struct pm_scan_arg sa;
    memset(&sa, 0, sizeof sa);
    sa.size = sizeof sa;
    sa.start = sa.end = G.arena_lo;
    if (ioctl(pm, PAGEMAP_SCAN, &sa) < 0) {
        close(pm);
        close(fd);
        return -ENOTSUP;
    }
    G.uffd = fd;
    G.pagemap_fd = pm;
    G.kernel_faults = kf;
    G.scanbuf_n = SCAN_VEC;
    G.scanbuf = bdm_map(SCAN_VEC * sizeof(struct page_region));
    G.zeros_len = G.bounce_len;
    G.zeros = mmap(NULL, G.zeros_len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    G.stop_fd = eventfd(0, EFD_CLOEXEC);
    if (!G.scanbuf || G.zeros == MAP_FAILED || G.stop_fd < 0) {
        int err = errno ? errno : ENOMEM;
        if (G.zeros == MAP_FAILED)
            G.zeros = NULL;
        bdm_uffd_teardown();
        return -err;
    }
    /* The handler thread must never take signals meant for the program. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&G.thread, NULL, handler_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        bdm_uffd_teardown();
        return -rc;
    }
    G.thread_started = 1;
    return 0;
}

void bdm_uffd_teardown(void)
{
    if (G.thread_started) {
        uint64_t one = 1;
        if (write(G.stop_fd, &one, sizeof one) < 0) { /* cannot happen for eventfd */
        }
        pthread_join(G.thread, NULL);
        G.thread_started = 0;
    }
    if (G.stop_fd >= 0)
        close(G.stop_fd);
    if (G.uffd >= 0)
        close(G.uffd);
    if (G.pagemap_fd >= 0)
        close(G.pagemap_fd);
    G.stop_fd = G.uffd = G.pagemap_fd = -1;
    if (G.scanbuf)
        bdm_unmap(G.scanbuf, G.scanbuf_n * sizeof(struct page_region));
    G.scanbuf = NULL;
    if (G.zeros)
        munmap(G.zeros, G.zeros_len);
    G.zeros = NULL;
}

int bdm_uffd_map(uintptr_t base, size_t len)
{
    void *p = mmap((void *)base, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return -errno;
    struct uffdio_register reg;
    memset(&reg, 0, sizeof reg);
    reg.range.start = base;
    reg.range.len = len;
    reg.mode = UFFDIO_REGISTER_MODE_MISSING | UFFDIO_REGISTER_MODE_WP;
    if (ioctl(G.uffd, UFFDIO_REGISTER, &reg) != 0) {
        int err = errno;
        mmap((void *)base, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
             -1, 0);
        return -err;
    }
    return 0;
}

void bdm_uffd_unmap(uintptr_t base, size_t len)
{
    struct uffdio_range r = {base, len};
    ioctl(G.uffd, UFFDIO_UNREGISTER, &r);
    /* Replacing the mapping drops the pages and keeps the reservation. */
    if (mmap((void *)base, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
             -1, 0) == MAP_FAILED)
        bdm_die("cannot release managed address range", errno, len);
}

/* Install len bytes at dst (missing pages) from src, write protected so that
 * later writes are recorded (unless !wp: pages about to be written).  Pages
 * that already exist are left alone. */
void bdm_uffd_install(uintptr_t dst, const void *src, size_t len)
{
    bdm_uffd_install_mode(dst, src, len, 1);
}

void bdm_uffd_install_mode(uintptr_t dst, const void *src, size_t len, int wp)
{
    const uint8_t *s = src;
    while (len > 0) {
        struct uffdio_copy c;
        c.dst = dst;
        c.src = (uintptr_t)s;
        c.len = len;
        c.mode = wp ? UFFDIO_COPY_MODE_WP : 0;
        c.copy = 0;
        if (ioctl(G.uffd, UFFDIO_COPY, &c) == 0)
            return;
        int err = errno;
        size_t done = c.copy > 0 ? (size_t)c.copy : 0;
        if (done == 0) {
            if (err == EEXIST) {
                done = G.page; /* someone else's page; keep it */
            } else if (err == EAGAIN || err == EINTR) {
                continue;
            } else {
                bdm_die("UFFDIO_COPY failed while loading managed memory", err, len);
            }
        }
        if (done > len)
            done = len;
        dst += done;
        s += done;
        len -= done;
    }
}

/* Lift the write protection of [addr, addr+len) (present pages become
 * writable without further faults) and wake threads waiting there. */
void bdm_uffd_unprotect(uintptr_t addr, size_t len)
{
    struct uffdio_writeprotect w;
    w.range.start = addr;
    w.range.len = len;
    w.mode = 0;
    while (ioctl(G.uffd, UFFDIO_WRITEPROTECT, &w) != 0) {
        if (errno == EAGAIN || errno == EINTR)
            continue;
        bdm_die("UFFDIO_WRITEPROTECT failed while tracking writes", errno, len);
    }
}

void bdm_uffd_wake(uintptr_t addr, size_t len)
{
    struct uffdio_range r = {addr, len};
    ioctl(G.uffd, UFFDIO_WAKE, &r);
}

/* Walk the pages of a in [start, end) that are present and written
 * (PAGEMAP_SCAN), calling found once per sbpage holding one; flags are
 * the scan's (PM_SCAN_WP_MATCHING re-arms the protection of what it
 * reports).  Unpopulated pages also carry PAGE_IS_WRITTEN (no wp bit), so
 * the page must be present as well.  With a full vector the walk stops
 * early (walk_end) and goes on from there.  Returns 0 or -errno. */
static int scan_written(alloc_t *a, uint64_t start, uint64_t end, uint64_t flags,
                        void (*found)(alloc_t *, size_t))
{
    struct page_region *vec = G.scanbuf;
    while (start < end) {
        struct pm_scan_arg sa;
        memset(&sa, 0, sizeof sa);
        sa.size = sizeof sa;
        sa.flags = flags;
        sa.start = start;
        sa.end = end;
        sa.vec = (uintptr_t)vec;
        sa.vec_len = G.scanbuf_n;
        sa.category_mask = PAGE_IS_WRITTEN | PAGE_IS_PRESENT;
        sa.return_mask = PAGE_IS_WRITTEN | PAGE_IS_PRESENT;
        long n = ioctl(G.pagemap_fd, PAGEMAP_SCAN, &sa);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        for (long i = 0; i < n; i++) {
            size_t f0 = (vec[i].start - a->base) / G.sbpage;
            size_t f1 = (vec[i].end - 1 - a->base) / G.sbpage + 1;
            for (size_t s = f0; s < f1 && s < a->nsb; s++)
                found(a, s);
        }
        if (sa.walk_end <= start)
            break;
        start = sa.walk_end;
    }
    return 0;
}

/* untracked sbpages are all "written" to the kernel: their hash decides */
static void mark_dirty(alloc_t *a, size_t s)
{
    if ((a->st[s] & (SB_RES | SB_VERIFY)) == SB_RES)
        a->st[s] |= SB_DIRTY;
}

/* Mark SB_DIRTY on resident sbpages of a that contain a written page.
 * Returns 0 or -errno. */
int bdm_uffd_scan_dirty(alloc_t *a)
{
    return scan_written(a, a->base, a->base + a->len, 0, mark_dirty);
}

/* Pre-cleaning: list the written pages of sbpages [s0, s1) of a and
 * write-protect them again in the same walk (PM_SCAN_WP_MATCHING: the kernel
 * reports a page and re-arms it under its page table lock, so a write
 * after the walk passed the page sets its written bit again and the next
 * scan, or the unload's, sees it). */
int bdm_uffd_scan_rearm(alloc_t *a, size_t s0, size_t s1, void (*found)(alloc_t *, size_t))
{
    return scan_written(a, a->base + s0 * G.sbpage, a->base + s1 * G.sbpage,
                        PM_SCAN_WP_MATCHING | PM_SCAN_CHECK_WPASYNC, found);
}

/* Install zeros in sbpages [s, s+n) of a (write-protected if wp); nothing
 * on the mprotect path, whose memfd holes read as zeros. */
void bdm_uffd_zero_run(alloc_t *a, size_t s, size_t n, int wp)
{
    if (!bdm_is_uffd())
        return; /* memfd holes read as zeros */
    uintptr_t dst = a->base + s * G.sbpage;
    size_t len = n * G.sbpage;
    while (len > 0) {
        size_t m = len < G.zeros_len ? len : G.zeros_len;
        bdm_uffd_install_mode(dst, G.zeros, m, wp);
        dst += m;
        len -= m;
    }
}
