/* sysctest.h - what the tests of system calls on managed memory share
 * (mem_syscalls, mem_syscalls2, mem_setvbuf, mem_async): a byte pattern,
 * unmanaged scratch memory, and the start-up that runs a test on the uffd
 * path, the mprotect path or, as "uffd-user", with a user-mode-only
 * userfaultfd (as root the test drops to nobody to get one). */
#ifndef SYSCTEST_H
#define SYSCTEST_H

#include <grp.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include "memtest.h"

static inline uint8_t mt_pat(size_t i, int seed)
{
    return (uint8_t)(((i * 2654435761u) >> 11) ^ (i >> 20) ^ (unsigned)seed);
}

static inline void mt_fill(uint8_t *p, size_t n, size_t from, int seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = mt_pat(from + i, seed);
}

/* Index of the first byte of p[0..n) that differs from the pattern, or -1. */
static inline long mt_bad(const uint8_t *p, size_t n, size_t from, int seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != mt_pat(from + i, seed))
            return (long)i;
    return -1;
}

/* Unmanaged scratch memory (malloc of this size would be managed). */
static inline uint8_t *mt_plain(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED);
    CHECK(!bd_mem_owns(p));
    return p;
}

static inline void mt_unload(void) { CHECKF(bd_mem_unload_all() == 0, "unload failed"); }

static inline void mt_drop_privileges(void)
{
    if (geteuid() != 0)
        return;
    CHECK(setgroups(0, NULL) == 0);
    CHECK(setgid(65534) == 0 && setuid(65534) == 0);
    /* changing credentials made /proc/self root's; the manager needs pagemap */
    CHECK(prctl(PR_SET_DUMPABLE, 1) == 0);
    setenv("TMPDIR", "/tmp", 1);
}

/* Start the manager for "<araw|arlw|lrlw> <uffd|mprotect|uffd-user>"
 * (argv[1], argv[2]).  Returns whether the kernel's own faults on managed
 * memory are handled, or -1 when uffd-user cannot be tested because they
 * are (the caller returns SKIP). */
static inline int mt_syscall_setup(char **argv, size_t sbpage, bd_mem_config_t *cfg)
{
    const char *track = argv[2];
    int user_only = !strcmp(track, "uffd-user");
    if (user_only) {
        mt_drop_privileges();
        track = "uffd";
    }
    mt_setup(cfg, argv[1], sbpage, track);
    bd_mem_stats_t st;
    bd_mem_stats(&st);
    if (user_only && st.kernel_faults) {
        fprintf(
            stderr,
            "userfaultfd handles kernel faults for this user: no user-mode-only path to test\n");
        mt_rmdir();
        return -1;
    }
    return st.kernel_faults;
}

#endif
