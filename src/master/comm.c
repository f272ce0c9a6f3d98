/* The communicator table of the master: every communicator with members on
 * this node, by context id, and the allocation of context ids.  Members
 * register and free them through requests; collectives (coll.c) create
 * them by splits and hold them while an instance on them lives. */
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "mpi.h"

static int comm_register(comm_t *c)
{
    if (g_m.ncomms == g_m.capcomms) {
        int n = g_m.capcomms ? 2 * g_m.capcomms : 64;
        comm_t **t = realloc(g_m.comms, (size_t)n * sizeof *t);
        if (!t)
            return -1;
        g_m.comms = t;
        g_m.capcomms = n;
    }
    g_m.comms[g_m.ncomms++] = c;
    return 0;
}

comm_t *bdr_comm_lookup(int ctx)
{
    for (int i = 0; i < g_m.ncomms; i++)
        if (g_m.comms[i]->ctx == ctx)
            return g_m.comms[i];
    return NULL;
}

static void comm_remove(comm_t *c)
{
    for (int i = 0; i < g_m.ncomms; i++)
        if (g_m.comms[i] == c) {
            g_m.comms[i] = g_m.comms[--g_m.ncomms];
            break;
        }
    free(c->world);
    free(c);
}

/* Context ids are unique across nodes without talking: the node is in the id. */
int bdr_comm_alloc_ctx(void) { return (g_m.node << 20) + g_m.next_ctx++; }

/* Revokes of communicators not known here yet: a dup from a reserved
 * range does not synchronize, so a member elsewhere may make and revoke
 * it before a member here makes it (bdr_comm_req_dup).  Few: kept. */
static int *g_early, g_nearly;

static int revoked_early(int ctx)
{
    for (int i = 0; i < g_nearly; i++)
        if (g_early[i] == ctx) {
            g_early[i] = g_early[--g_nearly];
            return 1;
        }
    return 0;
}

/* A communicator of `size` members with the given world ranks (copied). */
comm_t *bdr_comm_new(int ctx, int size, const int *world)
{
    comm_t *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->world = calloc((size_t)(size ? size : 1), sizeof(int));
    if (!c->world) {
        free(c);
        return NULL;
    }
    c->ctx = ctx;
    c->size = size;
    memcpy(c->world, world, (size_t)size * sizeof(int));
    for (int i = 0; i < size; i++)
        c->nlocal += bdr_master_slave_by_world(world[i]) != NULL;
    c->refs = c->nlocal;
    c->revoked = revoked_early(ctx);
    if (comm_register(c) < 0) {
        free(c->world);
        free(c);
        return NULL;
    }
    bdr_coll_replay_orphans(ctx);
    return c;
}

void bdr_comm_init_predefined(void)
{
    int n = (int)g_m.hdr->world_size, nn = g_m.nnodes, ns = g_m.ns;
    int *w = calloc((size_t)n, sizeof(int));
    if (!w) {
        bdr_master_fail(1, "master out of memory");
        return;
    }
    g_m.next_ctx = 16;
    for (int i = 0; i < n; i++)
        w[i] = i;
    comm_t *world = bdr_comm_new(MPI_COMM_WORLD, n, w);
    /* NODE: this node's ranks.  CWORLD: rank k is local rank k/nn of node k%nn. */
    comm_t *node = bdr_comm_new(BDMPI_COMM_NODE, ns, w + (size_t)g_m.node * (size_t)ns);
    for (int k = 0; k < n; k++)
        w[k] = (k % nn) * ns + k / nn;
    comm_t *cworld = bdr_comm_new(BDMPI_COMM_CWORLD, n, w);
    free(w);
    if (!world || !node || !cworld) {
        bdr_master_fail(1, "master out of memory");
        return;
    }
    world->refs = node->refs = cworld->refs = -1; /* never freed */
}

/* Does a live collective instance use comm? */
static int comm_busy(const comm_t *comm)
{
    for (const coll_t *c = g_m.colls; c; c = c->next)
        if (c->comm == comm)
            return 1;
    return 0;
}

void bdr_comm_drop_if_unused(comm_t *c)
{
    if (c->refs == 0 && !comm_busy(c))
        comm_remove(c);
}

/* MPI_Comm_create_group is called by the group's members only, so it runs
 * its split on a temporary communicator of exactly those members, whose
 * context every member computes alike (a negative id, never allocated).  Each
 * member registers it before the split and frees it after.  The hidden
 * communicators of intercommunicators (BD_CTX_DERIVED) are registered the
 * same way, by each member, and freed with the intercommunicator. */
static void comm_register_temp(slave_t *s, const bd_req_t *r)
{
    int64_t n = r->arg[0];
    if ((r->ctx >= 0 && !(r->ctx & BD_CTX_DERIVED)) || n < 1 ||
        (uint64_t)n > g_m.hdr->world_size + (uint64_t)g_m.nnodes * g_m.hdr->nspawn ||
        (uint64_t)n * sizeof(int32_t) > g_m.hdr->window) {
        bdr_master_fail(1, "rank %d: invalid temporary communicator (context %d, %lld ranks)",
                        s->world, r->ctx, (long long)n);
        return;
    }
    int *w = malloc((size_t)n * sizeof(int));
    if (!w) {
        bdr_master_fail(1, "master out of memory");
        return;
    }
    int mine = 0;
    for (int64_t i = 0; i < n; i++) {
        int32_t x;
        memcpy(&x, s->win + i * 4, 4);
        w[i] = x;
        mine |= x == s->world;
    }
    comm_t *c = bdr_comm_lookup(r->ctx);
    if (!mine || (c && (c->size != n || memcmp(c->world, w, (size_t)n * sizeof(int))))) {
        free(w);
        bdr_master_fail(1, "rank %d: %s context %d %s", s->world,
                        r->ctx < 0 ? "MPI_Comm_create_group's temporary communicator"
                                   : "an intercommunicator's hidden communicator",
                        r->ctx, mine ? "is in use by another group" : "does not hold the caller");
        return;
    }
    if (!c && !bdr_comm_new(r->ctx, (int)n, w))
        bdr_master_fail(1, "master out of memory");
    free(w);
    bdr_sched_respond(s);
}

void bdr_comm_req_ctx_alloc(slave_t *s, const bd_req_t *r)
{
    (void)r;
    s->slot->resp.arg[0] = bdr_comm_alloc_ctx();
    bdr_sched_respond(s);
}

void bdr_comm_req_register(slave_t *s, const bd_req_t *r) { comm_register_temp(s, r); }

/* MPI_Comm_dup without a collective: the members take the new context, all
 * alike, from a range the parent's last dup through the master reserved
 * (coll.c split_complete, a dup's desc.count); the first of this node to
 * tell makes it known here with the parent's members, the others find it.
 * Nobody waits: a dup need not synchronize.  Any rank of this node that
 * uses the new communicator has told first (its notices are taken before
 * its requests); another node's collective on it waits as an orphan. */
static int comm_dup_known(slave_t *s, int ctx, int parent)
{
    if (bdr_comm_lookup(ctx))
        return 0;
    comm_t *p = bdr_comm_lookup(parent);
    if (!p) {
        bdr_master_fail(1, "rank %d: MPI_Comm_dup of an unknown communicator (context %d)",
                        s->world, parent);
        return -1;
    }
    if (!bdr_comm_new(ctx, p->size, p->world)) {
        bdr_master_fail(1, "master out of memory");
        return -1;
    }
    return 0;
}

static void comm_unref(int ctx)
{
    comm_t *c = bdr_comm_lookup(ctx);
    if (c && c->refs > 0 && --c->refs == 0)
        bdr_comm_drop_if_unused(c);
}

void bdr_comm_req_dup(slave_t *s, const bd_req_t *r)
{
    if (comm_dup_known(s, r->ctx, (int)r->arg[0]) == 0)
        bdr_sched_respond(s);
}

void bdr_comm_notes_take(slave_t *s)
{
    bd_slot_t *sl = s->slot;
    uint32_t head = atomic_load_explicit(&sl->cn_head, memory_order_acquire);
    uint32_t tail = atomic_load_explicit(&sl->cn_tail, memory_order_relaxed);
    for (; tail != head; tail++) {
        bd_cnote_t n = sl->cnotes[tail % BD_CNOTE_N];
        if (n.kind == BD_CNOTE_DUP) {
            if (comm_dup_known(s, n.ctx, n.parent) < 0)
                break;
        } else if (n.kind == BD_CNOTE_FREE) {
            comm_unref(n.ctx);
        } else {
            bdr_master_fail(1, "rank %d: invalid communicator notice %d (context %d)", s->world,
                            n.kind, n.ctx);
            break;
        }
    }
    atomic_store_explicit(&sl->cn_tail, head, memory_order_release);
}

void bdr_comm_req_free(slave_t *s, const bd_req_t *r)
{
    comm_unref(r->ctx);
    bdr_sched_respond(s);
}

void bdr_comm_revoke(int ctx)
{
    comm_t *cm = bdr_comm_lookup(ctx);
    if (cm) {
        cm->revoked = 1;
    } else if (ctx > 0) {
        int *t = realloc(g_early, (size_t)(g_nearly + 1) * sizeof *t);
        if (t) {
            g_early = t;
            g_early[g_nearly++] = ctx;
        }
    }
    for (int i = 0; i < g_m.ns; i++) {
        slave_t *s = &g_m.slaves[i];
        /* A wait names its instance (BD_COLL_ADDR), or it is the one the
         * rank began (a communicator creation's, comm.c split_rpc). */
        if (s->state == SL_BLOCKED && s->blk == BLK_COLL && !s->revoked &&
            (s->slot->req.code == BD_REQ_COLL_WAIT || s->slot->req.code == BD_REQ_COLL_SMALL) &&
            s->coll && s->coll->ctx == ctx) {
            s->revoked = 1;
            bdr_sched_make_runnable(s);
        } else if (s->state == SL_BLOCKED && s->blk == BLK_COLL &&
                   s->slot->req.code == BD_REQ_COLL_WAITANY) {
            /* it looks at its instances again: one on this communicator
             * that cannot complete now counts as done (revoked) */
            bdr_sched_poke(s);
        }
    }
}

/* Not answered: the rank goes on at once (it only tells). */
void bdr_comm_req_revoke(slave_t *s, const bd_req_t *r)
{
    bdr_comm_revoke(r->ctx);
    bdr_sched_respond(s);
}

void bdr_comm_req_coll_wait(slave_t *s, const bd_req_t *r)
{
    /* A rank that starts waiting after the revoke came (it checked for
     * notices before the revoke was made) fails at once too. */
    coll_t *k = (r->flags & BD_COLL_ADDR) ? bdr_coll_find(r->ctx, r->rid) : s->coll;
    if (k && k->comm && k->comm->revoked) {
        s->slot->resp.status = BD_RESP_REVOKED;
        bdr_sched_respond(s);
        return;
    }
    bdr_coll_req_wait(s, r);
}
