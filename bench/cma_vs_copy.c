/* cma_vs_copy: what moving a message of n bytes costs here, two ways --
 * one process_vm_readv from another process (BDMPI's single copy), or two
 * memcpy (into a mailbox ring and out of it).  The reason mid-size
 * messages go inline through the ring (docs/performance.md, session 6).
 * Plain C, no MPI; prints one line per size from 4 KiB to 1 MiB. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* process_vm_readv */
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(void)
{
    size_t max = 1 << 20;
    char *src = malloc(max), *ring = malloc(max), *dst = malloc(max);
    memset(src, 1, max);
    memset(ring, 2, max);
    memset(dst, 3, max);
    pid_t c = fork(); /* the other process: holds src, sleeps */
    if (c < 0) {
        perror("cma_vs_copy: fork");
        return 1;
    }
    if (!c) {
        pause();
        _exit(0);
    }
    for (size_t n = 4096; n <= max; n *= 2) {
        int it = (int)(200000000 / n);
        if (it > 100000)
            it = 100000;
        double t0 = now();
        for (int i = 0; i < it; i++) {
            struct iovec l = {dst, n}, r = {src, n};
            if (process_vm_readv(c, &l, 1, &r, 1, 0) != (ssize_t)n) {
                perror("cma_vs_copy: process_vm_readv");
                kill(c, SIGKILL);
                return 1;
            }
        }
        double t1 = now();
        for (int i = 0; i < it; i++) {
            memcpy(ring, src, n);
            __asm__ volatile("" ::"r"(ring) : "memory");
            memcpy(dst, ring, n);
            __asm__ volatile("" ::"r"(dst) : "memory");
        }
        double t2 = now();
        printf("%7zu B: cma %.2f us  2xmemcpy %.2f us\n", n, (t1 - t0) / it * 1e6,
               (t2 - t1) / it * 1e6);
    }
    kill(c, SIGKILL);
    wait(NULL);
    return 0;
}
