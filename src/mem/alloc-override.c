/* alloc-override.c - route the C allocation functions through the manager.
 *
 * Linked (as the static library bdmem_override) only into programs that want
 * it.  While the manager is inactive, and for requests below its threshold,
 * everything goes to glibc's own implementation (__libc_*).  Managed pointers
 * are recognized by address (bd_mem_owns: one range comparison, no locking,
 * no allocation).  C++ operator new/delete use malloc/free and follow.
 */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bd_mem.h"

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

/* Referenced through the link option of bdmem_override so that this object
 * is always pulled out of the archive. */
int bd_mem_override_linked = 1;

static size_t libc_usable(void *p)
{
    static size_t (*fn)(void *);
    if (!fn) {
        fn = (size_t(*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
        if (!fn)
            return 0;
    }
    return fn(p);
}

BD_MEM_EXPORT void *malloc(size_t n)
{
    if (n >= bd_mem_threshold()) {
        void *p = bd_mem_alloc(n, 0);
        if (p)
            return p;
    }
    return __libc_malloc(n);
}

BD_MEM_EXPORT void free(void *p)
{
    if (bd_mem_owns(p))
        bd_mem_free(p);
    else
        __libc_free(p);
}

BD_MEM_EXPORT void *calloc(size_t n, size_t m)
{
    size_t t;
    if (__builtin_mul_overflow(n, m, &t)) {
        errno = ENOMEM;
        return NULL;
    }
    if (t >= bd_mem_threshold()) {
        void *p = bd_mem_alloc(t, 0); /* fresh managed memory reads as zero */
        if (p)
            return p;
    }
    return __libc_calloc(n, m);
}

BD_MEM_EXPORT void *realloc(void *p, size_t n)
{
    if (!p)
        return malloc(n);
    if (n == 0) {
        free(p);
        return NULL;
    }
    size_t thr = bd_mem_threshold();
    if (bd_mem_owns(p)) {
        if (n >= thr)
            return bd_mem_realloc(p, n);
        /* shrinking below the threshold: move to libc */
        void *q = __libc_malloc(n);
        if (!q)
            return NULL;
        size_t old = bd_mem_usable_size(p);
        memcpy(q, p, old < n ? old : n);
        bd_mem_free(p);
        return q;
    }
    if (n >= thr) {
        size_t old = libc_usable(p);
        if (old) {
            void *q = bd_mem_alloc(n, 0);
            if (q) {
                memcpy(q, p, old < n ? old : n);
                __libc_free(p);
                return q;
            }
        }
    }
    return __libc_realloc(p, n);
}

static void *aligned(size_t align, size_t n)
{
    if (n >= bd_mem_threshold()) {
        void *p = bd_mem_alloc(n, align);
        if (p)
            return p;
    }
    return __libc_memalign(align, n);
}

BD_MEM_EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
    if (align < sizeof(void *) || (align & (align - 1)))
        return EINVAL;
    void *p = aligned(align, n);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

BD_MEM_EXPORT void *aligned_alloc(size_t align, size_t n)
{
    if (align == 0 || (align & (align - 1))) {
        errno = EINVAL;
        return NULL;
    }
    return aligned(align, n);
}

BD_MEM_EXPORT void *memalign(size_t align, size_t n)
{
    if (align & (align - 1)) {
        errno = EINVAL;
        return NULL;
    }
    return aligned(align ? align : 1, n);
}

BD_MEM_EXPORT void *valloc(size_t n) { return aligned((size_t)sysconf(_SC_PAGESIZE), n); }

BD_MEM_EXPORT void *pvalloc(size_t n)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    size_t r = (n + pg - 1) / pg * pg;
    if (r < n) {
        errno = ENOMEM;
        return NULL;
    }
    return aligned(pg, r ? r : pg);
}

BD_MEM_EXPORT size_t malloc_usable_size(void *p)
{
    if (!p)
        return 0;
    if (bd_mem_owns(p))
        return bd_mem_usable_size(p);
    return libc_usable(p);
}
