/* Bounded collective staging (issue 17 part 2, -coll-stage): a blocking
 * MPI_Alltoall(v,w), MPI_Gather(v) or MPI_Scatter(v), on one node or
 * across nodes (pieces for other nodes go as their masters give credit),
 * or a nonblocking MPI_Ialltoall(v,w), no longer lives whole in the master (its memory or its spill file) between the
 * first PUT and the last GET.  Its ranks (src/lib/mpi/coll_gather.c) PUT
 * their pieces in order, and before a piece, when the last answer (BEGIN's
 * or a PUT's) said the instance's staged bytes are past the bound, they
 * ask COLL_TAKE instead of putting more: the master answers when the
 * staged bytes are under the bound again, or at once with the pieces sent
 * to that rank that are complete, which it GETs whole.  When a piece's one
 * reader has read all of it, its memory (or its blocks in the spill file)
 * goes back at once (bdr_pipe_read).  After its last PUT a rank that
 * receives asks COLL_TAKE until it may GET the rest.  In place, a piece
 * is offered only once its reader's block for its sender is PUT (across
 * nodes it leaves its sender's node only then, bdr_pipe_ready), and a rank
 * may be told to put such a block next (inplace_hint).  docs/design.md,
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
    if (!g_m.hdr->job.coll_stage)
        return 0;
    /* Across nodes too (pieces for other nodes go as their masters give
     * credit, bdr_pipe_ship), and nonblocking ones (their ranks put and
     * take in MPI_Test and MPI_Wait, and before they wait in any other
     * call; see away(); a piece from another node whose reader waits
     * elsewhere gives its credit back at once, credit_away). */
    if (k == BD_COLL_ALLGATHER || k == BD_COLL_BCAST) /* see bdr_pipe_multi */
        return g_m.nnodes <= 64 && (k != BD_COLL_BCAST || c->d.count);
    return k == BD_COLL_ALLTOALL || k == BD_COLL_GATHER || k == BD_COLL_SCATTER;
}

int bdr_pipe_multi(const coll_t *c)
{
    return c->d.kind == BD_COLL_ALLGATHER || (c->d.kind == BD_COLL_BCAST && c->d.count);
}

/* The index of the piece of c that src sends dst, or -1 (gathers: every
 * piece goes to the root; scatters: every piece comes from it). */
static int piece_idx(const coll_t *c, int src, int dst)
{
    int size = c->comm->size, root = c->d.root;
    switch (c->d.kind) {
    case BD_COLL_ALLTOALL: return src * size + dst;
    case BD_COLL_GATHER: return dst == root ? src : -1;
    case BD_COLL_SCATTER: return src == root ? dst : -1;
    default: return -1;
    }
}

/* Who sends piece p of c (a pipelined kind), and who reads it. */
static void piece_ends(const coll_t *c, const piece_t *p, int *src, int *dst)
{
    int i = (int)(p - c->pieces), size = c->comm->size;
    switch (c->d.kind) {
    case BD_COLL_ALLTOALL:
        *src = i / size;
        *dst = i % size;
        break;
    case BD_COLL_GATHER:
        *src = i;
        *dst = c->d.root;
        break;
    case BD_COLL_SCATTER:
        *src = c->d.root;
        *dst = i;
        break;
    case BD_COLL_BCAST: /* several readers: every rank but the sender */
        *src = c->d.root;
        *dst = -1;
        break;
    case BD_COLL_ALLGATHER: /* in d.count parts per block (session 21), or whole */
        *src = c->d.count > 1 ? i / (int)c->d.count : i;
        *dst = -1;
        break;
    default: *src = *dst = -1; break;
    }
}

static int nb_pipe(const coll_t *c) { return c->pipe && (c->d.api & BD_API_NB); }

/* Is the (local) reader r of nonblocking c waiting in another call: blocked
 * in the master, and not in COLL_TAKE for c?  Before such a wait it put all
 * its pieces of c and took those offered (bdl_nbc_pipe_settle), so nothing
 * of c waits for it; but it takes no more until it runs again, and a
 * sender of c that waited for room held by pieces for r could be the very
 * rank r waits for (r: MPI_Recv from s, then MPI_Wait; s: MPI_Wait, then
 * MPI_Send to r; MPI says both complete).  So the pieces for r do not count
 * against the bound meanwhile. */
static int away(const coll_t *c, int r)
{
    slave_t *s = bdr_master_slave_by_world(c->comm->world[r]);
    if (!s)
        return 0;
    uint32_t code = s->slot->req.code;
    int here = s->coll == c && code == BD_REQ_COLL_TAKE;
    if (s->state == SL_BLOCKED)
        return !(s->blk == BLK_COLL && here);
    /* Polling in another call in this turn (MPI_Test, MPI_Iprobe loops):
     * it may be waiting, without blocking, for a rank that waits for room
     * (node-wide bound, below).  Not when its last request is a step of c
     * itself: an MPI_Test of c, or a failed poll of another call (which
     * steps every pending pipelined instance, bdl_nbc_pipe_poll), puts,
     * takes and GETs what is offered to it, so its pieces do not stay.
     * Counting a rank between those steps away (session 19: in its GETs)
     * gave credit back early (credit_away) and the other node shipped
     * more: flow.ia2a_nodes_nr2 staged 5 or 6 pieces against a bound of
     * 4.5.  Nor while it matches its posted receives between a blocking
     * take of c answered NOTYET and the next one (bdl_xfer_take): it takes
     * again at once. */
    if (s->coll == c && (code == BD_REQ_COLL_BEGIN || code == BD_REQ_COLL_PUT ||
                         code == BD_REQ_COLL_ARRIVE || code == BD_REQ_COLL_GET))
        here = 1;
    if (s->take_notyet == c && (code == BD_REQ_MBOX_FETCH || code == BD_REQ_SYNC_ACK))
        here = 1;
    return s->state == SL_RUNNING && s->polled && !here;
}

/* For the node-wide bound, also: is the local reader r of c inside another
 * pipelined instance (blocked, runnable or running in it)?  It takes
 * nothing of c before that one returns, and that one may wait for room: a
 * rank that went on to a later gather or all-to-all left pieces there for
 * ranks still in this one, which would wait for room those pieces hold. */
static int away_node(const coll_t *c, int r)
{
    if (away(c, r))
        return 1;
    slave_t *s = bdr_master_slave_by_world(c->comm->world[r]);
    uint32_t code = s ? s->slot->req.code : 0;
    if (!s || !s->coll || s->coll == c ||
        !(code == BD_REQ_COLL_BEGIN || code == BD_REQ_COLL_PUT || code == BD_REQ_COLL_TAKE ||
          code == BD_REQ_COLL_WAIT || code == BD_REQ_COLL_GET))
        return 0;
    for (const coll_t *d = g_m.colls; d; d = d->next) /* s->coll may be gone */
        if (d == s->coll)
            return d->pipe && bdr_pipe_bounded(d);
    return 0;
}

/* The bytes of c's staged pieces for readers that wait elsewhere (node:
 * as the node-wide bound sees them, away_node). */
static uint64_t away_bytes(const coll_t *c, int node)
{
    uint64_t b = 0;
    for (int r = 0; c->held_for && r < c->comm->size; r++)
        if (c->held_for[r] && (node ? away_node(c, r) : away(c, r)))
            b += c->held_for[r];
    return b;
}

/* Credit a receiving master gives each other node of an all-to-all: bytes
 * of its pieces shipped and not yet read.  Both masters compute it from
 * the same bound and communicator.  Together the nodes that send to this
 * one get half the bound; the other half is for this node's own ranks'
 * pieces (pipe_limit), so the two together stay within the bound. */
static uint64_t pipe_window(const coll_t *c)
{
    int nodes = 0;
    for (int n = 0; n < g_m.nnodes; n++)
        nodes += c->node_in[n] != 0;
    uint64_t w = nodes > 1 ? g_m.hdr->job.coll_stage / (2 * (uint64_t)(nodes - 1)) : 0;
    return w ? w : 1;
}

/* The bound on the staged bytes of this node's own ranks' pieces. */
static uint64_t pipe_limit(const coll_t *c)
{
    uint64_t b = g_m.hdr->job.coll_stage;
    return c->nlocal == c->comm->size ? b : b - b / 2;
}

/* Is the local reader r of c yet to read piece p (several readers)? */
static int unread_by(coll_t *c, const piece_t *p, int r);
static int local_readers(const coll_t *c, const piece_t *p);
static int remote_origin(const coll_t *c, const piece_t *p);

/* The bytes of c's own staged pieces that count in the node-wide bound:
 * those some local reader has still to read, when none of those readers
 * waits elsewhere (away_node).  Pieces only other nodes' readers still
 * read do not count: this master cannot see whether those readers wait in
 * an earlier instance for a rank of this node that would wait for that
 * room (MPI_Gather roots on another node, at BDMPI_COLL_STAGE=1K, did);
 * each instance's own bound and credit hold them. */
static uint64_t node_counted(coll_t *c)
{
    int size = c->comm->size;
    uint64_t b = 0;
    if (!bdr_pipe_multi(c)) {
        for (int r = 0; c->held_for && r < size; r++)
            if (c->held_for[r] && !away_node(c, r))
                b += c->held_for[r];
        return b;
    }
    char *aw = calloc((size_t)size, 1);
    if (!aw)
        return 0; /* out of memory: the instance's own bound only */
    for (int r = 0; r < size; r++)
        aw[r] = bdr_coll_rank_node(c, r) != g_m.node ? 2 : away_node(c, r);
    for (size_t i = 0; i < c->npieces; i++) {
        piece_t *p = &c->pieces[i];
        if (p->taken || !p->total || (!p->data && !p->in_file) || remote_origin(c, p) >= 0)
            continue;
        int want = 0, off = 0;
        for (int r = 0; r < size; r++)
            if (aw[r] != 2 && unread_by(c, p, r)) {
                want = 1;
                off |= aw[r];
            }
        if (want && !off)
            b += p->total;
    }
    free(aw);
    return b;
}

/* The node-wide bound (session 18): the own staged bytes of every
 * pipelined instance on this node that local readers not waiting
 * elsewhere have still to read (node_counted), against the bound of the
 * asking instance.  Why that cannot deadlock: design.md, "One bound for
 * the node". */
static int node_over(const coll_t *c)
{
    uint64_t lim = pipe_limit(c), raw = 0;
    int n = 0;
    for (coll_t *d = g_m.colls; d; d = d->next)
        if (d->pipe && bdr_pipe_bounded(d)) {
            raw += d->staged - d->staged_in;
            n++;
        }
    if (n < 2 || raw <= lim)
        return 0; /* one instance: its own bound says it */
    uint64_t counted = 0;
    for (coll_t *d = g_m.colls; d; d = d->next)
        if (d->pipe && bdr_pipe_bounded(d)) {
            counted += node_counted(d);
        }
    return counted > lim;
}

/* away_bytes for pieces with several readers (a nonblocking allgather's
 * blocks, broadcast's parts): the bytes of this node's own staged pieces
 * that some local reader that has not read them waits elsewhere (away()).
 * Such a piece stays until that reader runs again, so a sender waiting for
 * its room could be the rank that reader waits for. */
static uint64_t multi_away_bytes(coll_t *c)
{
    int size = c->comm->size;
    uint64_t b = 0;
    char *aw = calloc((size_t)size, 1);
    if (!aw)
        return 0; /* out of memory: the bound is kept as it is */
    for (int r = 0; r < size; r++)
        aw[r] = bdr_coll_rank_node(c, r) == g_m.node && away(c, r);
    for (size_t i = 0; i < c->npieces; i++) {
        piece_t *p = &c->pieces[i];
        if (p->taken || !p->total || (!p->data && !p->in_file) || remote_origin(c, p) >= 0)
            continue;
        for (int r = 0; r < size; r++)
            if (aw[r] && unread_by(c, p, r)) {
                b += p->total;
                break;
            }
    }
    free(aw);
    return b;
}

int bdr_pipe_over(const coll_t *c)
{
    if (!bdr_pipe_bounded(c))
        return 0;
    uint64_t own = c->staged - c->staged_in;
    if (nb_pipe(c) && own > pipe_limit(c)) {
        uint64_t aw = bdr_pipe_multi(c) ? multi_away_bytes((coll_t *)c) : away_bytes(c, 0);
        own -= aw < own ? aw : own;
    }
    return own > pipe_limit(c) || (c->pipe && node_over(c));
}

/* Data-moving kinds: their pieces stay until their readers GET them (a
 * reduction's contributions are folded and freed as they come). */
static int moves(const coll_t *c)
{
    int k = c->d.kind;
    return k == BD_COLL_BCAST || k == BD_COLL_GATHER || k == BD_COLL_SCATTER ||
           k == BD_COLL_ALLGATHER || k == BD_COLL_ALLTOALL;
}

/* The node whose rank sent piece p of all-to-all c, when not this one; else -1. */
static int remote_origin(const coll_t *c, const piece_t *p)
{
    int src, dst;
    piece_ends(c, p, &src, &dst);
    if (src < 0)
        return -1;
    int n = bdr_coll_rank_node(c, src);
    return n == g_m.node ? -1 : n;
}

int bdr_pipe_from_node(const coll_t *c, const piece_t *p) { return remote_origin(c, p); }

/* The local reader of piece p of c (one reader: an all-to-all, gather or
 * scatter) that a local rank sent, or -1. */
static int local_reader(const coll_t *c, const piece_t *p)
{
    int src, dst;
    piece_ends(c, p, &src, &dst);
    if (src < 0 || dst < 0)
        return -1;
    return bdr_coll_rank_node(c, src) == g_m.node && bdr_coll_rank_node(c, dst) == g_m.node ? dst
                                                                                            : -1;
}

/* Count p's bytes (sign 1) or no longer (-1) in its reader's held_for. */
static void held(coll_t *c, const piece_t *p, int sign)
{
    int r = local_reader(c, p);
    if (r < 0)
        return;
    if (!c->held_for && sign > 0 && !(c->held_for = calloc((size_t)c->comm->size, 8)))
        return; /* out of memory: nothing is counted away, the bound is kept */
    if (c->held_for)
        c->held_for[r] += sign > 0 ? p->total : (uint64_t)0 - p->total;
}

void bdr_pipe_placed(coll_t *c, const piece_t *p, uint64_t total)
{
    if (!moves(c))
        return;
    held(c, p, 1);
    c->staged += total;
    g_staged += total;
    if (g_staged > g_staged_peak)
        g_staged_peak = g_staged;
}

void bdr_pipe_dropped(coll_t *c, const piece_t *p)
{
    if (!moves(c) || p->taken || !p->total || (!p->data && !p->in_file))
        return;
    held(c, p, -1);
    c->staged -= p->total;
    g_staged -= p->total;
    if (remote_origin(c, p) >= 0)
        c->staged_in -= p->total;
    for (coll_t *d = g_m.colls; c->pipe && d; d = d->next)
        if (d != c && d->pipe && bdr_pipe_bounded(d))
            bdr_coll_poke(d); /* c goes: room for the others (node-wide bound) */
}

/* Room was given back in c: wake its ranks waiting for it, and, with
 * other pipelined instances here (the node-wide bound), theirs too. */
static void poke_room(coll_t *c)
{
    bdr_coll_poke(c);
    for (coll_t *d = g_m.colls; d; d = d->next)
        if (d != c && d->pipe && bdr_pipe_bounded(d))
            bdr_coll_poke(d);
}

/* Piece p's bytes leave the staging: its memory is freed, or its blocks in
 * the spill file are punched out (the spill quota gets them back).  0, or
 * -1 when the job fails. */
static int give_back(coll_t *c, piece_t *p)
{
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
    held(c, p, -1);
    c->staged -= p->total;
    g_staged -= p->total;
    p->taken = 1;
    poke_room(c); /* ranks waiting for room, in c or (node-wide) any other */
    return 0;
}

/* ---------------------------------------------------------------- several readers */

/* Pieces of MPI_Allgather (block r, read by every other rank) and parts of
 * MPI_Bcast (read by every rank but the root) have several readers: such a
 * piece stays until every local reader has read it whole and, when its
 * sender is here, it has been shipped to every other node of the
 * communicator (and, in the spill file, read there: its credit came back
 * from each, since the transport reads it from the file). */

/* The state of piece p for reader r (1 offered, 2 read), or NULL when the
 * job fails (out of memory). */
static uint8_t *rd_at(coll_t *c, const piece_t *p, int r)
{
    size_t size = (size_t)c->comm->size;
    if (!c->rd && !(c->rd = calloc(c->npieces * size, 1))) {
        bdr_master_fail(1, "master out of memory staging %s", bdr_coll_call_name(&c->d));
        return NULL;
    }
    return &c->rd[(size_t)(p - c->pieces) * size + (size_t)r];
}

static int unread_by(coll_t *c, const piece_t *p, int r)
{
    int src, dst;
    piece_ends(c, p, &src, &dst);
    if (r == src)
        return 0;
    return !c->rd || c->rd[(size_t)(p - c->pieces) * (size_t)c->comm->size + (size_t)r] != 2;
}

/* Local ranks that read piece p: all but its sender. */
static int local_readers(const coll_t *c, const piece_t *p)
{
    int src, dst;
    piece_ends(c, p, &src, &dst);
    return c->nlocal - (src >= 0 && bdr_coll_rank_node(c, src) == g_m.node);
}

static int other_nodes(const coll_t *c)
{
    int n = 0;
    for (int k = 0; k < g_m.nnodes; k++)
        n += c->node_in[k] && k != g_m.node;
    return n;
}

/* May piece p (several readers) leave the staging? */
static int multi_gone(const coll_t *c, const piece_t *p)
{
    if (p->taken || !p->total || p->filled != p->total || p->nread < local_readers(c, p))
        return 0;
    if (remote_origin(c, p) >= 0)
        return 1;
    int others = other_nodes(c);
    if (others && !c->pipe_net)
        return 0; /* shipped whole at the end (bdr_coll_ship_local) */
    if (__builtin_popcountll(p->sent_to) < others)
        return 0;
    return !p->in_file || p->ncred >= others;
}

/* Give piece p back once it may go (0; -1 when the job fails); a piece
 * from another node gives its sender's master the credit back. */
static int multi_release(coll_t *c, piece_t *p)
{
    if (!multi_gone(c, p))
        return 0;
    int from = remote_origin(c, p);
    if (give_back(c, p) < 0)
        return -1;
    p->got = p->total; /* a reader that asks for it again is caught (coll_get) */
    if (from >= 0) {
        c->staged_in -= p->total;
        if (!p->credited) /* else credit_away gave it back */
            bdr_coll_ship_credit(c, from, (int)(p - c->pieces), p->total);
    }
    poke_room(c); /* ranks waiting for room */
    return 0;
}

void bdr_pipe_filled(coll_t *c, piece_t *p)
{
    if (c->pipe && bdr_pipe_multi(c))
        multi_release(c, p); /* its readers may have read what they expect already */
}

int bdr_pipe_read(coll_t *c, piece_t *p, int reader, uint64_t off, uint64_t len, uint64_t want)
{
    if (bdr_pipe_multi(c)) {
        uint64_t end = want && want < p->total ? want : p->total;
        if (off + len < end || reader < 0 || reader >= c->comm->size)
            return 0;
        uint8_t *st = rd_at(c, p, reader);
        if (!st)
            return -1;
        if (*st == 2)
            return 0;
        *st = 2;
        p->nread++;
        return multi_release(c, p);
    }
    p->got += len;
    uint64_t end = want && want < p->total ? want : p->total;
    if (p->got < end || p->filled != p->total || p->taken)
        return 0;
    int from = remote_origin(c, p);
    if (give_back(c, p) < 0)
        return -1;
    if (from >= 0) { /* its sending master may ship more */
        c->staged_in -= p->total;
        if (!p->credited)
            bdr_coll_ship_credit(c, from, (int)(p - c->pieces), p->total);
    }
    poke_room(c); /* ranks waiting for room */
    return 0;
}

/* bdr_pipe_ship for pieces with several readers: each of this node's
 * complete pieces to every other node whose master has credit for it. */
static void ship_multi(coll_t *c)
{
    uint64_t w = pipe_window(c);
    int pending = 0, root = c->d.root;
    for (size_t i = 0; i < c->npieces; i++) {
        piece_t *p = &c->pieces[i];
        int src, dst;
        piece_ends(c, p, &src, &dst);
        if (src < 0 || bdr_coll_rank_node(c, src) != g_m.node || !p->total || p->taken)
            continue;
        for (int n = 0; n < g_m.nnodes; n++) {
            if (n == g_m.node || !c->node_in[n] || (p->sent_to >> n & 1))
                continue;
            if (p->filled != p->total || (c->credit_out[n] && c->credit_out[n] + p->total > w)) {
                pending = 1; /* not complete, or no credit: later */
                continue;
            }
            bdr_coll_ship_piece(c, n, (int)i);
            p->sent_to |= 1ull << n;
            c->credit_out[n] += p->total;
        }
        if (multi_release(c, p) < 0)
            return;
    }
    /* a broadcast's node has put all once its root has (its other ranks
     * only read); an allgather's once every local rank has */
    int all_put = c->d.kind != BD_COLL_BCAST                ? c->arrived == c->nlocal
                  : bdr_coll_rank_node(c, root) == g_m.node ? c->rank_arrived[root]
                                                            : c->arrived == c->nlocal;
    if (pending || !all_put)
        return;
    c->shipped = 1;
    for (int n = 0; n < g_m.nnodes; n++)
        if (bdr_coll_sends_to(c, g_m.node, n))
            bdr_coll_ship_done(c, n);
}

void bdr_pipe_ship(coll_t *c)
{
    if (c->shipped || g_m.stopping)
        return;
    if (bdr_pipe_multi(c)) {
        ship_multi(c);
        return;
    }
    int size = c->comm->size, pending = 0;
    uint64_t w = pipe_window(c);
    for (int src = 0; src < size; src++) {
        if (bdr_coll_rank_node(c, src) != g_m.node)
            continue;
        for (int k = 1; k <= size; k++) {
            /* from the piece for the next rank on, as the ranks put them,
             * so the nodes' credit is used evenly */
            int dst = (src + k) % size, n = bdr_coll_rank_node(c, dst);
            int idx = piece_idx(c, src, dst);
            if (idx < 0)
                continue;
            piece_t *p = &c->pieces[idx];
            if (n == g_m.node || !p->total || p->sent)
                continue;
            if (c->inplace && !p->peer_ready) {
                pending = 1; /* its reader's block for src is not PUT yet (bdr_pipe_ready) */
                continue;
            }
            if (p->filled != p->total || (c->credit_out[n] && c->credit_out[n] + p->total > w)) {
                pending = 1; /* not complete, or no credit: later */
                continue;
            }
            bdr_coll_ship_piece(c, n, (int)(p - c->pieces));
            p->sent = 1;
            c->credit_out[n] += p->total;
            /* the transport has copied a piece in memory; one in the file
             * is read from it in chunks, so its blocks stay until the
             * receiver's credit says it was read (bdr_pipe_credit) */
            if (!p->in_file && give_back(c, p) < 0)
                return;
        }
    }
    if (pending || c->arrived != c->nlocal)
        return;
    c->shipped = 1;
    for (int n = 0; n < g_m.nnodes; n++)
        if (bdr_coll_sends_to(c, g_m.node, n))
            bdr_coll_ship_done(c, n);
}

void bdr_pipe_credit(coll_t *c, int node, int idx, uint64_t bytes)
{
    if (node < 0 || node >= g_m.nnodes || idx < 0 || (size_t)idx >= c->npieces ||
        c->credit_out[node] < bytes) {
        bdr_master_fail(1, "bad credit for %s from node %d", bdr_coll_call_name(&c->d), node);
        return;
    }
    c->credit_out[node] -= bytes;
    piece_t *p = &c->pieces[idx];
    if (bdr_pipe_multi(c)) {
        p->ncred++;
        if (multi_release(c, p) < 0)
            return;
    } else if (p->sent && p->in_file && !p->taken && give_back(c, p) < 0) {
        return;
    }
    bdr_pipe_ship(c);
    poke_room(c); /* ranks waiting for room */
    bdr_coll_maybe_free(c);
}

/* In place: has rank me put its whole block for q (the block q's piece
 * overwrites)? */
static int own_put(const coll_t *c, int me, int q)
{
    const piece_t *mine = &c->pieces[(size_t)me * (size_t)c->comm->size + (size_t)q];
    return mine->total && mine->filled == mine->total;
}

/* In place across nodes: bytes of this node's complete pieces for node n
 * that may be shipped (their readers' blocks are PUT) but wait for n's
 * credit. */
static uint64_t ready_unshipped(const coll_t *c, int n)
{
    int size = c->comm->size;
    uint64_t b = 0;
    for (int src = 0; src < size; src++) {
        if (bdr_coll_rank_node(c, src) != g_m.node)
            continue;
        for (int dst = 0; dst < size; dst++) {
            const piece_t *p = &c->pieces[(size_t)src * (size_t)size + (size_t)dst];
            if (bdr_coll_rank_node(c, dst) == n && p->peer_ready && p->total &&
                p->filled == p->total && !p->sent)
                b += p->total;
        }
    }
    return b;
}

void bdr_pipe_ready(coll_t *c, int idx)
{
    int size = c->comm->size, src = idx / size, dst = idx % size;
    c->pieces[(size_t)dst * (size_t)size + (size_t)src].peer_ready = 1;
    if (c->pipe_net)
        bdr_pipe_ship(c);
    poke_room(c); /* dst may be told to put its block for src (inplace_hint) */
}

/* In place, a rank past the bound with nothing to take: a peer q whose
 * piece for me is complete but waits for me's block for q, or -1.  me is
 * told to put that block next, over the bound, after which it takes the
 * piece (otherwise every rank could wait for room that only pieces they
 * may not take yet hold).  Across nodes q's piece stays on q's node until
 * me's block is PUT (bdr_pipe_ship); me is told to put it once q's piece
 * is complete there (peer_ready), as long as this node's pieces for q's
 * node that wait only for its credit stay under one credit window (they
 * leave as that node's readers read, which waits for nothing here). */
static int inplace_hint(coll_t *c, int me)
{
    int size = c->comm->size, hint = -1;
    /* ready_unshipped per node, computed once a call (UINT64_MAX: not yet;
     * it scans this node's ranks' pieces) */
    uint64_t *ru = NULL;
    for (int k = 1; c->inplace && k < size && hint < 0; k++) {
        int q = (me + k) % size, n = bdr_coll_rank_node(c, q);
        if (n != g_m.node) {
            const piece_t *mine = &c->pieces[(size_t)me * (size_t)size + (size_t)q];
            if (!mine->peer_ready || own_put(c, me, q))
                continue;
            if (!ru && (ru = malloc((size_t)g_m.nnodes * sizeof *ru)))
                for (int i = 0; i < g_m.nnodes; i++)
                    ru[i] = UINT64_MAX;
            if (!ru)
                break; /* out of memory: no hint now (asked again at the next poke) */
            if (ru[n] == UINT64_MAX)
                ru[n] = ready_unshipped(c, n);
            if (ru[n] < pipe_window(c))
                hint = q;
            continue;
        }
        piece_t *p = bdr_coll_get_piece(c, me, q);
        if (p && !p->offered && !p->taken && p->total && p->filled == p->total &&
            !own_put(c, me, q))
            hint = q;
    }
    free(ru);
    return hint;
}

/* The complete pieces for rank me not offered yet: into out (n at most),
 * marked offered; returns how many. */
static int offer(coll_t *c, int me, int32_t *out, int n, int mark)
{
    int k = 0, q0 = 0, q1 = c->comm->size;
    if (bdr_pipe_multi(c)) { /* allgather blocks, or broadcast parts in order */
        if (c->d.kind == BD_COLL_BCAST && me == c->d.root)
            return 0;
        for (size_t i = 0; i < c->npieces && k < n; i++) {
            piece_t *p = &c->pieces[i];
            int src, dst;
            piece_ends(c, p, &src, &dst);
            if ((c->d.kind == BD_COLL_ALLGATHER && src == me) || p->taken || !p->total ||
                p->filled != p->total)
                continue;
            uint8_t *st = rd_at(c, p, me);
            if (!st || *st)
                continue;
            if (out)
                out[k] = (int32_t)i;
            if (mark)
                *st = 1;
            k++;
        }
        return k;
    }
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
        if (c->inplace && !c->rank_arrived[me] && !own_put(c, me, q))
            continue; /* it would overwrite the block me has still to put */
        if (out)
            out[k] = q;
        if (mark)
            p->offered = 1;
        k++;
    }
    return k;
}

/* A final COLL_TAKE (after the last PUT: arg 1, or 3 answered at once)? */
static int take_final(const bd_req_t *r) { return r->arg[0] == 1 || r->arg[0] == 3; }

static int may_go(slave_t *s, coll_t *c)
{
    if (take_final(&s->slot->req))
        return bdr_coll_rank_ready(c, s->coll_rank);
    return !bdr_pipe_over(c);
}

int bdr_pipe_take_ready(slave_t *s)
{
    coll_t *c = s->coll;
    return c && (may_go(s, c) || offer(c, s->coll_rank, NULL, 1, 0) > 0 ||
                 (!take_final(&s->slot->req) && inplace_hint(c, s->coll_rank) >= 0));
}

/* Credit back the complete pieces from other nodes whose readers wait
 * elsewhere (see away()): their senders' masters may ship more meanwhile.
 * Every pipelined kind: a piece with several readers (an allgather's
 * block, a broadcast's part) once any of its local readers that has not
 * read it waits elsewhere; it stays until all have read it, and
 * multi_release then gives no credit a second time. */
static void credit_away(coll_t *c)
{
    int size = c->comm->size;
    if (!c->pipe || !c->pipe_net || !c->pieces)
        return;
    if (c->d.kind != BD_COLL_ALLTOALL && !(c->d.api & BD_API_NB))
        return; /* blocking: its readers wait only in it (see bdr_pipe_bounded) */
    char *aw = calloc((size_t)size, 1);
    if (!aw)
        return; /* out of memory: the credit comes back when read */
    int any = 0;
    for (int r = 0; r < size; r++)
        any |= aw[r] = bdr_coll_rank_node(c, r) == g_m.node && away(c, r);
    for (size_t i = 0; any && i < c->npieces; i++) {
        piece_t *p = &c->pieces[i];
        int from = remote_origin(c, p);
        if (from < 0 || !p->total || p->filled != p->total || p->taken || p->credited)
            continue;
        int src, dst, hit = 0;
        piece_ends(c, p, &src, &dst);
        if (dst >= 0)
            hit = aw[dst];
        for (int r = 0; dst < 0 && r < size && !hit; r++)
            hit = aw[r] && unread_by(c, p, r);
        if (!hit)
            continue;
        p->credited = 1;
        bdr_coll_ship_credit(c, from, (int)(p - c->pieces), p->total);
    }
    free(aw);
}

void bdr_pipe_remote_in(coll_t *c) { credit_away(c); }

void bdr_pipe_blocked(slave_t *s)
{
    int poke_all = 0, n = 0;
    for (coll_t *c = g_m.colls; c; c = c->next) {
        if (!c->pipe || !bdr_pipe_bounded(c) || c->comm->nlocal < 1)
            continue;
        n++;
        int r = -1;
        for (int i = 0; i < c->comm->size && r < 0; i++)
            if (c->comm->world[i] == s->world)
                r = i;
        if (r < 0 || !away(c, r))
            continue;
        credit_away(c);
        if (bdr_pipe_multi(c) ? c->staged > c->staged_in : c->held_for && c->held_for[r]) {
            poke_all = 1; /* held room (node-wide) */
            if (nb_pipe(c))
                bdr_coll_poke(c); /* senders waiting for room may go on */
        }
    }
    /* the node-wide bound: senders of every instance may go on */
    for (coll_t *c = g_m.colls; poke_all && n > 1 && c; c = c->next)
        if (c->pipe && bdr_pipe_bounded(c))
            bdr_coll_poke(c);
}

void bdr_coll_req_take(slave_t *s, const bd_req_t *r)
{
    coll_t *c = bdr_coll_instance(s, r);
    if (!c)
        return;
    if (c->d.kind != BD_COLL_ALLTOALL && c->d.kind != BD_COLL_GATHER &&
        c->d.kind != BD_COLL_SCATTER && !bdr_pipe_multi(c)) {
        bdr_master_fail(1,
                        "rank %d asked for pieces of %s, which is not an all-to-all, a gather, "
                        "a scatter, an allgather or a broadcast in parts",
                        s->world, bdr_coll_call_name(&c->d));
        return;
    }
    c->pipe = 1;
    s->take_notyet = NULL; /* taking again (away) */
    if (r->arg[0] > 3) {
        bdr_master_fail(1, "rank %d: bad COLL_TAKE mode %lld", s->world, (long long)r->arg[0]);
        return;
    }
    if (take_final(r) && bdr_coll_arrive(s, c) < 0) /* after its last PUT */
        return;
    int go = may_go(s, c);
    int max = (int)(g_m.hdr->window / sizeof(int32_t));
    int n = offer(c, s->coll_rank, (int32_t *)s->win, max, 1);
    int hint = !go && !n && !take_final(r) ? inplace_hint(c, s->coll_rank) : -1;
    if (!go && !n && hint < 0 && r->arg[0] == 3) {
        s->slot->resp.flag = 0; /* MPI_Test: not yet (gives the slot away if others wait) */
        s->slot->resp.arg[0] = 0;
        if (r->arg[1])
            bdr_sched_respond(s);
        else
            bdr_sched_poll_failed(s);
        return;
    }
    if (!go && !n && hint < 0 && r->arg[0] == 2) { /* a poll: not yet */
        s->slot->resp.flag = 0;
        s->slot->resp.arg[0] = 0;
        if (r->arg[1])
            bdr_sched_respond(s);
        else
            bdr_sched_poll_failed(s);
        return;
    }
    if (!go && !n && hint < 0 && bdr_mbox_watch_moved(s)) {
        /* receives posted and a message may have come: nothing offered,
         * the rank matches, then takes again (BD_COLL_WATCH) */
        s->slot->resp.status = BD_RESP_NOTYET;
        s->take_notyet = c; /* not away meanwhile */
        s->slot->resp.flag = 0;
        s->slot->resp.arg[0] = 0;
        s->slot->resp.arg[1] = 0;
        bdr_sched_respond(s);
        return;
    }
    if (!go && !n && hint < 0) {
        bdr_sched_block(s, BLK_COLL); /* redone when poked (or its mailbox moves) */
        return;
    }
    s->slot->resp.flag = go || hint >= 0;
    s->slot->resp.arg[0] = n;
    s->slot->resp.arg[1] = hint + 1; /* in place: put the block for this peer next */
    bdr_sched_respond(s);
}
