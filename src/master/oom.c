/* The master's allocations.  bdmprun is linked with --wrap for malloc,
 * calloc, realloc and posix_memalign (src/master/CMakeLists.txt), so every
 * allocation of its own code (and of src/common's, linked into it) comes
 * here; MPICH's and libc's own allocations do not.
 *
 * Policy: a master that cannot allocate cannot go on correctly (a dropped
 * message, a collective without its buffer), so malloc, calloc and realloc
 * never return NULL to it: the job ends with one message naming the call,
 * the size and the errno, and every rank is killed.  posix_memalign is the
 * exception: some of its callers (a piece's last bytes, a read ahead) have
 * a fallback, so it fails as usual, and those without one call
 * bdr_master_oom themselves.  The fault sites (bd_fault.h): master.alloc
 * for malloc, calloc and realloc, master.memalign for posix_memalign. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bd_fs.h"
#include "bd_log.h"
#include "master.h"
#include "net.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
int __real_posix_memalign(void **p, size_t align, size_t n);

_Noreturn void bdr_master_oom(const char *fn, size_t n, int err)
{
    static int nested;
    if (nested++) /* the report itself could not allocate */
        _exit(1);
    bdr_master_fail(1, "out of memory: %s of %zu bytes failed: %s: ending the job", fn, n,
                    strerror(err));
    bdr_master_kill_all(); /* also when the job was ending already */
    if (g_m.nnodes > 1)
        bdr_net_abort(1); /* the other masters were told; MPI_Abort ends them all */
    bd_fs_remove_tree(g_m.jobdir);
    _exit(1);
}

/* The errno of an injected failure, or 0. */
static int injected(void) { return BD_FAULT_HIT(BD_FAULT_MASTER_ALLOC); }

void *__wrap_malloc(size_t n)
{
    int e = injected();
    void *p = e ? NULL : __real_malloc(n);
    if (!p && n)
        bdr_master_oom("malloc", n, e ? e : errno);
    return p;
}

void *__wrap_calloc(size_t k, size_t n)
{
    int e = injected();
    void *p = e ? NULL : __real_calloc(k, n);
    if (!p && k && n)
        bdr_master_oom("calloc", k * n, e ? e : errno);
    return p;
}

void *__wrap_realloc(void *p, size_t n)
{
    int e = injected();
    void *q = e ? NULL : __real_realloc(p, n);
    if (!q && n)
        bdr_master_oom("realloc", n, e ? e : errno);
    return q;
}

int __wrap_posix_memalign(void **p, size_t align, size_t n)
{
    int e = BD_FAULT_HIT(BD_FAULT_MASTER_ALIGN);
    return e ? e : __real_posix_memalign(p, align, n);
}
