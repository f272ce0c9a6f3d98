/* Storage watch: every storage call of a process (the memory manager's
 * backing files, the spill files, MPI-IO) is counted while it is in
 * progress, so that the master can tell storage that makes no progress
 * (src/master/stall.c).  A rank's counters live in its slot of the shared
 * memory (bd_slot_t.io), where the master reads them; before a rank has its
 * slot, and in the master and the launcher, in a private bd_iowatch_t.
 *
 * Contract of a site: the call, with its fault-injection hook, is wrapped
 *   r = BD_IO_SYS(site, call(...));   (BD_IO(site, BD_FAULT_SYS(site) ?: call(...)))
 * so that an injected delay counts as storage time.  Lock-free and
 * async-signal-safe (I/O threads, fault handlers). */
#ifndef BD_IOWATCH_H
#define BD_IOWATCH_H

#include <stdatomic.h>
#include <stdint.h>

#include "bd_fault.h"

typedef struct bd_iowatch {
    _Atomic uint32_t busy; /* storage calls in progress (all threads) */
    _Atomic uint32_t site; /* bd_fault_site_t of the last one started */
    _Atomic uint64_t done; /* storage calls completed */
} bd_iowatch_t;

/* Where this process counts: never NULL. */
extern bd_iowatch_t *_Atomic bd_iowatch;

/* Count from now on in w (a rank's slot); NULL: the private one again. */
void bd_iowatch_attach(bd_iowatch_t *w);

static inline bd_iowatch_t *bd_io_begin(unsigned site)
{
    bd_iowatch_t *w = atomic_load_explicit(&bd_iowatch, memory_order_acquire);
    atomic_store_explicit(&w->site, site, memory_order_relaxed);
    atomic_fetch_add_explicit(&w->busy, 1, memory_order_release);
    return w;
}

static inline void bd_io_end(bd_iowatch_t *w)
{
    atomic_fetch_add_explicit(&w->done, 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&w->busy, 1, memory_order_release);
}

/* Evaluate the storage call expr (its fault hook included) as one storage
 * call at site; its value is expr's. */
#define BD_IO(site, expr)                                                                          \
    __extension__({                                                                                \
        bd_iowatch_t *bd_io_w_ = bd_io_begin(site);                                                \
        __typeof__(expr) bd_io_r_ = (expr);                                                        \
        bd_io_end(bd_io_w_);                                                                       \
        bd_io_r_;                                                                                  \
    })

/* The usual forms, with the fault hook of bd_fault.h: */
#define BD_IO_SYS(site, call) BD_IO(site, BD_FAULT_SYS(site) ?: (call))
#define BD_IO_NEG(site, call) BD_IO(site, BD_FAULT_NEG(site) ?: (call))

#endif
