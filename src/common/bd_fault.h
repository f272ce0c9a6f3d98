/* Fault injection: BDMPI_FAULT=site:nth[:errno] (also bdmpiexec -fault)
 * makes the nth call at a named site of every process of the job fail, so
 * that tests can drive each error path on purpose (SQLite's approach).
 *
 * Contract of a site: its hook is one line in front of the call it stands
 * for, and costs one load and one predictable branch when nothing is
 * armed.  The forms:
 *   rc = BD_FAULT_NEG(site) ?: call_returning_minus_errno(...);
 *   fd = BD_FAULT_SYS(site) ?: syscall_returning_minus_1_and_errno(...);
 *   if (BD_FAULT_HIT(site)) <fail with errno as if the call had>;
 * The spec:
 *   site    one of the names of bd_fault_names (mem.pwrite, spill.open, ...)
 *   nth     the call to fail, counted per process from 1; "nth+" fails
 *           that call and every later one (storage that stays broken)
 *   errno   a name (EIO, ENOSPC, ...) or a number; default EIO (ENOMEM for
 *           master.alloc and master.memalign).  rpc.die ignores it: the rank kills itself;
 *           master.grant too: the grant is not given (yet), as when the budget has no room;
 *           master.loop too: the master's event loop stops turning (a hung master).
 *   delay=T instead of an errno: the call is made T later (50ms, 2s, 500us; from 1 us to
 *           1 h) and succeeds, slow storage rather than broken storage; with
 *           "nth+" every call from the nth on (one line on stderr for the first).
 * Several specs may be given, separated by commas.  Each hit writes one
 * line "bdmpi-fault: injected E into call N of SITE (pid P)" to stderr, so
 * a test driver knows the fault was reached.
 *
 * Everything here is async-signal-safe and lock-free: sites sit in I/O
 * worker threads, fault handlers and the SIGSEGV path of the memory
 * manager.  The spec is read once, by a constructor, from the environment
 * (the launcher exports -fault as BDMPI_FAULT to the master and ranks). */
#ifndef BD_FAULT_H
#define BD_FAULT_H

#include <stddef.h>

typedef enum {
    BD_FAULT_MEM_OPEN,       /* memory manager: open of a backing file */
    BD_FAULT_MEM_PWRITE,     /* memory manager: each pwrite system call to a backing file */
    BD_FAULT_MEM_PREAD,      /* memory manager: each pread system call from a backing file */
    BD_FAULT_MEM_FALLOCATE,  /* memory manager: hole punching (backing file, memfd) */
    BD_FAULT_MEM_FTRUNCATE,  /* memory manager: ftruncate (memfd at start, shrinking realloc) */
    BD_FAULT_SPILL_OPEN,     /* message and collective spill files: create or open */
    BD_FAULT_SPILL_WRITE,    /* ... writing a spill file */
    BD_FAULT_SPILL_READ,     /* ... reading a spill file back */
    BD_FAULT_IO_OPEN,        /* MPI-IO: open(2) of MPI_File_open */
    BD_FAULT_IO_WRITE,       /* MPI-IO: each pwrite of a data access */
    BD_FAULT_IO_READ,        /* MPI-IO: each pread of a data access */
    BD_FAULT_IO_RESIZE,      /* MPI-IO: ftruncate/posix_fallocate of set_size, preallocate */
    BD_FAULT_MASTER_ALLOC,   /* the master's malloc, calloc, realloc */
    BD_FAULT_MASTER_ALIGN,   /* the master's posix_memalign (buffers for direct I/O) */
    BD_FAULT_NET_SEND,       /* the master's sends to other nodes' masters */
    BD_FAULT_NET_RECV,       /* the master's receives from other nodes' masters */
    BD_FAULT_RPC_DIE,        /* a rank kills itself (SIGKILL) after posting its nth request */
    BD_FAULT_MASTER_GRANT,   /* the master withholds a memory grant it would give (a stall) */
    BD_FAULT_MASTER_LOOP,    /* the master's event loop stops at its nth turn (delay=T: T late) */
    BD_FAULT_RMT_CMA,        /* the master's copy to or from a rank's memory for -mem-remote */
    BD_FAULT_RMT_REFUSE,     /* a holder refuses a chunk of another node's data as if full */
    BD_FAULT_MEM_UFFD_EVENT, /* memory manager: its userfaultfd handler before each fault event
                                it serves (delay=T: served late, as on a loaded machine; an
                                errno is ignored) */
    BD_FAULT__COUNT
} bd_fault_site_t;

extern const char *const bd_fault_names[BD_FAULT__COUNT];

/* Bit s set: site s is armed.  Written only by the constructor (and by
 * bd_fault_arm); every hook tests it first. */
extern unsigned bd_fault_armed;

/* Slow paths: count the call; if it is the one to fail, report it and
 * return its errno (0 otherwise). */
int bd_fault_fire(bd_fault_site_t site);

#define BD_FAULT_HIT(site)                                                                         \
    (__builtin_expect((bd_fault_armed >> (site)) & 1u, 0) ? bd_fault_fire(site) : 0)
/* -errno when the call is to fail, else 0 */
#define BD_FAULT_NEG(site) (-BD_FAULT_HIT(site))
/* -1 with errno set when the call is to fail, else 0 */
#define BD_FAULT_SYS(site)                                                                         \
    (__builtin_expect((bd_fault_armed >> (site)) & 1u, 0) ? bd_fault_sys(site) : 0)
int bd_fault_sys(bd_fault_site_t site);

/* Parse spec (the format above) and arm it in this process, replacing what
 * was armed; NULL or "" disarms.  Returns 0, or -1 with a message in err.
 * The launcher calls it to check -fault before starting anything. */
int bd_fault_arm(const char *spec, char *err, size_t errlen);

#endif
