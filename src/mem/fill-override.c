/* fill-override.c - memset on managed memory.
 *
 * Programs clear their large buffers at the top of every iteration
 * (PageRank's send buffer and accumulator, K-means' sums): memset(p, 0, n).
 * On an unloaded allocation the C library's memset faults every sbpage in,
 * so the manager reads from storage the data it is about to zero.  Here a
 * zeroing memset that covers whole sbpages first drops the stored copies of
 * those that are not resident (bd_mem_discard_stored: they read as zeros
 * from then on, with no I/O), and then calls the C library's memset, which
 * finds zero-filled pages to write.  Resident sbpages are cleared in place.
 *
 * Fast path: anything else (a non-zero byte, less than one sbpage, an
 * unmanaged buffer) costs one range comparison and goes straight to the C
 * library, so this is safe wherever memset is: inside malloc, in signal
 * handlers, in the manager itself (which never clears managed memory while
 * holding its lock).  Calls the C library makes internally do not come here.
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>

#include "bd_mem.h"

/* Referenced through the link option of bdmem_override so that this object
 * is always taken from the archive. */
int bd_mem_fill_override_linked = 1;

typedef void *(*memset_fn)(void *, int, size_t);
static memset_fn g_real;

/* Used only until the C library's memset is known (dlsym itself may clear
 * memory).  The volatile store keeps the compiler from turning the loop back
 * into a call to memset. */
static void *fill_bytes(void *s, int c, size_t n)
{
    volatile unsigned char *p = s;
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)c;
    return s;
}

static memset_fn real_memset(void)
{
    memset_fn f = __atomic_load_n(&g_real, __ATOMIC_RELAXED);
    if (f)
        return f;
    static int resolving;
    if (__atomic_exchange_n(&resolving, 1, __ATOMIC_ACQ_REL))
        return fill_bytes;
    f = (memset_fn)dlsym(RTLD_NEXT, "memset");
    if (!f)
        f = fill_bytes;
    __atomic_store_n(&g_real, f, __ATOMIC_RELAXED);
    return f;
}

__attribute__((constructor)) static void fill_override_init(void) { (void)real_memset(); }

__attribute__((visibility("default"))) void *memset(void *s, int c, size_t n)
{
    if (c == 0 && n >= bd_mem_threshold() && bd_mem_owns(s))
        bd_mem_discard_stored(s, n);
    return real_memset()(s, c, n);
}
