/* Bounded collective staging (issue 17 part 2, -coll-stage): a blocking
 * MPI_Alltoall(v,w), MPI_Gather(v) or MPI_Scatter(v) among ranks of this node no longer
 * lives whole in the master (its memory or its spill file) between the
 * first PUT and the last GET.  Its ranks (src/lib/mpi/coll_gather.c) PUT
 * their pieces in order, and before a piece, when the last answer (BEGIN's
 * or a PUT's) said the instance's staged bytes are past the bound, they
 * ask COLL_TAKE instead of putting more: the master answers when the
 * staged bytes are under the bound again, or at once with the pieces sent
 * to that rank that are complete, which it GETs whole.  When a piece's one
 * reader has read all of it, its memory (or its blocks in the spill file)
 * goes back at once (bdr_pipe_read).  After its last PUT a rank that
 * receives asks COLL_TAKE until it may GET the rest.  docs/design.md,
 * "Transient memory of communication", has the bound and why it cannot
 * deadlock. */
#include <stdlib.h>
#include <string.h>

#include "coll.h"

static uint64_t g_staged, g_staged_peak; /* the node's collective pieces placed */

uint64_t bdr_coll_stage_peak(void) { return g_staged_peak; }

int bdr_pipe_bounded(const coll_t *c)
{
    int k = c->d.kind;
    return g_m.hdr->job.coll_stage &&
           (k == BD_COLL_ALLTOALL || k == BD_COLL_GATHER || k == BD_COLL_SCATTER) &&
           !(c->d.api & BD_API_NB) && c->nlocal == c->comm->size;
}

/* Data-moving kinds: their pieces stay until their readers GET them (a
 * reduction's contributions are folded and freed as they come). */
static int moves(const coll_t *c)
{
    int k = c->d.kind;
    return k == BD_COLL_BCAST || k == BD_COLL_GATHER || k == BD_COLL_SCATTER ||
           k == BD_COLL_ALLGATHER || k == BD_COLL_ALLTOALL;
}

void bdr_pipe_placed(coll_t *c, uint64_t total)
{
    if (!moves(c))
        return;
    c->staged += total;
    g_staged += total;
    if (g_staged > g_staged_peak)
        g_staged_peak = g_staged;
}

void bdr_pipe_dropped(coll_t *c, const piece_t *p)
{
    if (!moves(c) || p->taken || !p->total || (!p->data && !p->in_file))
        return;
    c->staged -= p->total;
    g_staged -= p->total;
}

int bdr_pipe_read(coll_t *c, piece_t *p, uint64_t len, uint64_t want)
{
    p->got += len;
    uint64_t end = want && want < p->total ? want : p->total;
    if (p->got < end || p->filled != p->total || p->taken)
        return 0;
    if (p->in_file) {
        int rc = bdr_stage_release(c, p);
        if (rc < 0) {
            bdr_master_fail(1, "cannot give back %llu bytes of %s data in the spill file in %s: %s",
                            (unsigned long long)p->total, bdr_coll_call_name(&c->d), g_m.jobdir,
                            strerror(-rc));
            return -1;
        }
        bd_spill_uncharge(g_m.hdr, p->total);
        c->spill_charged -= p->total;
    } else {
        free(p->data);
        p->data = NULL;
    }
    c->staged -= p->total;
    g_staged -= p->total;
    p->taken = 1;
    bdr_coll_poke(c); /* ranks waiting for room */
    return 0;
}

/* The complete pieces for rank me not offered yet: into out (n at most),
 * marked offered; returns how many. */
static int offer(coll_t *c, int me, int32_t *out, int n, int mark)
{
    int k = 0, q0 = 0, q1 = c->comm->size;
    if (c->d.kind == BD_COLL_GATHER && me != c->d.root)
        return 0;                       /* only the root reads a gather's pieces */
    if (c->d.kind == BD_COLL_SCATTER) { /* one piece per reader, from the root */
        if (me == c->d.root)
            return 0;
        q0 = c->d.root;
        q1 = q0 + 1;
    }
    for (int q = q0; q < q1 && k < n; q++) {
        piece_t *p = q == me ? NULL : bdr_coll_get_piece(c, me, q);
        if (!p || p->offered || p->taken || !p->total || p->filled != p->total)
            continue;
        if (out)
            out[k] = q;
        if (mark)
            p->offered = 1;
        k++;
    }
    return k;
}

static int may_go(slave_t *s, coll_t *c)
{
    if (s->slot->req.arg[0])
        return bdr_coll_rank_ready(c, s->coll_rank);
    return c->staged <= g_m.hdr->job.coll_stage;
}

int bdr_pipe_take_ready(slave_t *s)
{
    coll_t *c = s->coll;
    return c && (may_go(s, c) || offer(c, s->coll_rank, NULL, 1, 0) > 0);
}

void bdr_coll_req_take(slave_t *s, const bd_req_t *r)
{
    coll_t *c = bdr_coll_instance(s, r);
    if (!c)
        return;
    if (c->d.kind != BD_COLL_ALLTOALL && c->d.kind != BD_COLL_GATHER &&
        c->d.kind != BD_COLL_SCATTER) {
        bdr_master_fail(1,
                        "rank %d asked for pieces of %s, which is not an all-to-all, a gather or "
                        "a scatter",
                        s->world, bdr_coll_call_name(&c->d));
        return;
    }
    c->pipe = 1;
    if (r->arg[0] && bdr_coll_arrive(s, c) < 0) /* after its last PUT */
        return;
    int go = may_go(s, c);
    int max = (int)(g_m.hdr->window / sizeof(int32_t));
    int n = offer(c, s->coll_rank, (int32_t *)s->win, max, 1);
    if (!go && !n) {
        bdr_sched_block(s, BLK_COLL); /* redone when poked */
        return;
    }
    s->slot->resp.flag = go;
    s->slot->resp.arg[0] = n;
    bdr_sched_respond(s);
}
