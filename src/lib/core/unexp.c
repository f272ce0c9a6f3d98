/* libbdmpi, core: the queue of unexpected messages (unexp.h). */
#include <stdlib.h>

#include <mpi.h>

#include "core.h"
#include "unexp.h"

/* The queued messages of one (context, source); freed when empty, so there
 * are never more buckets than queued messages. */
typedef struct bdl_ubucket {
    struct bdl_ubucket *next; /* in its hash chain */
    int ctx, src;
    bdl_umsg_t *head, *tail;
} ubucket_t;

#define UB_HASH 256
static ubucket_t *g_ub[UB_HASH];
static bdl_umsg_t *g_first, *g_last;

static ubucket_t **ub_slot(int ctx, int src)
{
    ubucket_t **pp = &g_ub[((unsigned)ctx * 2654435761u ^ (unsigned)src) % UB_HASH];
    while (*pp && ((*pp)->ctx != ctx || (*pp)->src != src))
        pp = &(*pp)->next;
    return pp;
}

void bdl_unexp_append(bdl_umsg_t *u)
{
    ubucket_t **pp = ub_slot(u->e.ctx, u->e.src), *b = *pp;
    if (!b) {
        if (!(b = calloc(1, sizeof *b)))
            bdl_fatal(MPI_ERR_NO_MEM, "out of memory keeping an unexpected message");
        b->ctx = u->e.ctx;
        b->src = u->e.src;
        *pp = b;
    }
    u->next = u->bnext = NULL;
    u->prev = g_last;
    *(g_last ? &g_last->next : &g_first) = u;
    g_last = u;
    u->bprev = b->tail;
    *(b->tail ? &b->tail->bnext : &b->head) = u;
    b->tail = u;
    u->b = b;
}

void bdl_unexp_unlink(bdl_umsg_t *u)
{
    *(u->prev ? &u->prev->next : &g_first) = u->next;
    *(u->next ? &u->next->prev : &g_last) = u->prev;
    ubucket_t *b = u->b;
    *(u->bprev ? &u->bprev->bnext : &b->head) = u->bnext;
    *(u->bnext ? &u->bnext->bprev : &b->tail) = u->bprev;
    if (!b->head) {
        ubucket_t **pp = ub_slot(b->ctx, b->src);
        *pp = b->next;
        free(b);
    }
    u->next = u->prev = u->bnext = u->bprev = NULL;
    u->b = NULL;
}

bdl_umsg_t *bdl_unexp_first(int ctx, int src)
{
    if (src == MPI_ANY_SOURCE)
        return g_first;
    ubucket_t *b = *ub_slot(ctx, src);
    return b ? b->head : NULL;
}

bdl_umsg_t *bdl_unexp_next(const bdl_umsg_t *u, int src)
{
    return src == MPI_ANY_SOURCE ? u->next : u->bnext;
}
