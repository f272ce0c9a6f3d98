/* libbdmpi, core: the queue of unexpected messages (match.c), in arrival
 * order twice: all messages, which a receive from MPI_ANY_SOURCE searches,
 * and the messages of each (context, source), which a receive that names
 * its source searches.  One list made such a receive pass every queued
 * message of other sources: ranks that run ahead (the senders of a
 * nonblocking reduction or scan in a loop, a root's broadcasts) left
 * thousands queued, and 16 ranks' MPI_Ireduce loop at -nr 1 took 40, 104
 * and 329 us a call over 300, 1000 and 3000 calls (12 at each with the
 * buckets). */
#ifndef BDL_UNEXP_H
#define BDL_UNEXP_H

#include <stdint.h>

#include "bd_mbox.h"

/* A message drained from the mailbox before a receive matched it. */
typedef struct bdl_umsg {
    struct bdl_umsg *next, *prev;   /* all, in arrival order; next also links match.c's
                                       messages taken by MPI_Mprobe */
    struct bdl_umsg *bnext, *bprev; /* its (context, source)'s, in arrival order */
    struct bdl_ubucket *b;          /* that bucket while queued */
    bd_mentry_t e;
    uint64_t match_id; /* taken by MPI_Mprobe: the id MPI_Mrecv names */
    int ux;            /* its slot in the mailbox's cancellable table, or -1 */
    char data[];       /* the inline payload */
} bdl_umsg_t;

/* Queue u (its envelope e set) last. */
void bdl_unexp_append(bdl_umsg_t *u);
/* Take u out of the queue (its links are cleared). */
void bdl_unexp_unlink(bdl_umsg_t *u);
/* The first queued message from src (MPI_ANY_SOURCE: from any) that may
 * be on ctx, and the one after u in the same order (the caller checks the
 * envelope). */
bdl_umsg_t *bdl_unexp_first(int ctx, int src);
bdl_umsg_t *bdl_unexp_next(const bdl_umsg_t *u, int src);

#endif
