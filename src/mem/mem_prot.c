/* mem_prot.c - mprotect + SIGSEGV tracking back end (fallback).
 *
 * The arena is a shared mapping of one memfd; a second read-write view of the
 * same memfd ("staging") lets the manager fill and write back pages while the
 * application's view of them stays inaccessible.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "bd_fault.h"
#include "mem_internal.h"

#define G bdm_g

static struct sigaction old_segv;

static void chain(int sig, siginfo_t *si, void *uc)
{
    if (old_segv.sa_flags & SA_SIGINFO) {
        if (old_segv.sa_sigaction) {
            old_segv.sa_sigaction(sig, si, uc);
            return;
        }
    } else if (old_segv.sa_handler != SIG_DFL && old_segv.sa_handler != SIG_IGN) {
        old_segv.sa_handler(sig);
        return;
    }
    /* Default action: restore it and let the access fault again. */
    signal(sig, SIG_DFL);
}

static void segv_handler(int sig, siginfo_t *si, void *ucv)
{
    int saved = errno;
    uintptr_t addr = (uintptr_t)si->si_addr;
    int write = -1;
#if defined(__x86_64__)
    ucontext_t *uc = ucv;
    write = (uc->uc_mcontext.gregs[REG_ERR] & 2) ? 1 : 0;
#endif
    if (si->si_code != SEGV_ACCERR || addr - G.arena_lo >= G.arena_len || !G.active ||
        bdm_fault(addr & ~(uintptr_t)(G.page - 1), write) != 0) {
        chain(sig, si, ucv);
    }
    errno = saved;
}

int bdm_prot_setup(void)
{
    int fd = memfd_create("bdmem-arena", MFD_CLOEXEC);
    if (fd < 0)
        return -errno;
    if ((BD_FAULT_SYS(BD_FAULT_MEM_FTRUNCATE) ?: ftruncate(fd, (off_t)G.arena_len)) != 0) {
        int err = errno;
        G.st.err_call = "ftruncate";
        close(fd);
        return -err;
    }
    void *u = mmap((void *)G.arena_lo, G.arena_len, PROT_NONE,
                   MAP_SHARED | MAP_FIXED | MAP_NORESERVE, fd, 0);
    if (u == MAP_FAILED) {
        int err = errno;
        close(fd);
        return -err;
    }
    void *s = mmap(NULL, G.arena_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    if (s == MAP_FAILED) {
        int err = errno;
        mmap((void *)G.arena_lo, G.arena_len, PROT_NONE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
        close(fd);
        return -err;
    }
    /* A child must not write through the shared mappings into our memory. */
    madvise(u, G.arena_len, MADV_DONTFORK);
    madvise(s, G.arena_len, MADV_DONTFORK);
    G.memfd = fd;
    G.stage_lo = (uintptr_t)s;
    G.kernel_faults = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = segv_handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, &old_segv) != 0) {
        int err = errno;
        bdm_prot_teardown();
        return -err;
    }
    G.segv_installed = 1;
    return 0;
}

void bdm_prot_teardown(void)
{
    if (G.segv_installed) {
        sigaction(SIGSEGV, &old_segv, NULL);
        G.segv_installed = 0;
    }
    if (G.stage_lo)
        munmap((void *)G.stage_lo, G.arena_len);
    G.stage_lo = 0;
    if (G.memfd >= 0)
        close(G.memfd);
    G.memfd = -1;
}

int bdm_prot_set(uintptr_t addr, size_t len, int prot)
{
    if (len == 0)
        return 0;
    return mprotect((void *)addr, len, prot) == 0 ? 0 : -errno;
}

/* Drop the memory behind [addr, addr+len): later reads of the staging view
 * return zeros. */
int bdm_prot_punch(uintptr_t addr, size_t len)
{
    if (len == 0)
        return 0;
    if ((BD_FAULT_SYS(BD_FAULT_MEM_FALLOCATE)
             ?: fallocate(G.memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                          (off_t)(addr - G.arena_lo), (off_t)len)) != 0) {
        G.st.err_call = "fallocate (punching a hole in the arena's memfd)";
        return -errno;
    }
    return 0;
}
