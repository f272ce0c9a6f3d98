/* Collectives across nodes (bdmpi.txt 5.4): every node's master first
 * gathers its own ranks' data, then nodes exchange what the others need,
 * each ending its part with a DONE message; messages between two masters
 * keep their order, so DONE means everything that node sends us has
 * arrived.  Reductions, scans and splits are computed by one coordinator
 * node (the root's, or rank 0's) in rank order, which keeps results
 * identical for any number of nodes, and it sends the results back.  Data
 * for a communicator not known here yet is kept (an orphan) and replayed
 * when the communicator is made. */
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "net.h"

/* CM_CREDIT (bounded all-to-alls, coll_pipe.c): the receiver has read
 * piece idx, u[2] bytes: its sender may ship more.  CM_READY (in-place
 * all-to-alls, coll_pipe.c): piece idx is complete at its sender's node. */
enum { CM_PIECE = 1, CM_RESULT, CM_ACC, CM_DONE, CM_CREDIT, CM_READY };

static void coll_hdr(const coll_t *c, bdr_net_hdr_t *h, int what, int idx)
{
    memset(h, 0, sizeof *h);
    h->type = BDR_NH_COLL;
    h->a[0] = c->ctx;
    h->a[1] = what;
    h->a[2] = idx;
    h->a[3] = c->d.kind;
    h->a[4] = c->d.root;
    h->a[5] = c->d.dtype;
    h->a[6] = c->d.op;
    h->u[0] = c->seq;
    h->u[1] = c->d.count;
    h->u[3] = (uint64_t)(uint32_t)c->d.api;
}

static void ship_piece(coll_t *c, int dst, int what, int idx, const piece_t *p)
{
    bdr_net_hdr_t h;
    coll_hdr(c, &h, what, idx);
    h.u[2] = p->total;
    if (p->in_file) {
        h.a[7] = 1;
        h.u[5] = p->total;
        int fd = bdr_stage_ship_fd(c); /* its writes are on storage: so are their sums */
        bdr_node_send_file(dst, &h, fd, p->file_off, p->total, NULL, bdr_stage_piece_ck(c, p));
    } else {
        bdr_node_send(dst, &h, p->data, p->data ? p->filled : 0);
    }
}

static void ship_done(coll_t *c, int dst)
{
    bdr_net_hdr_t h;
    coll_hdr(c, &h, CM_DONE, 0);
    bdr_node_send(dst, &h, NULL, 0);
}

void bdr_coll_ship_piece(coll_t *c, int n, int idx)
{
    ship_piece(c, n, CM_PIECE, idx, &c->pieces[idx]);
}

void bdr_coll_ship_done(coll_t *c, int n) { ship_done(c, n); }

void bdr_coll_ship_credit(coll_t *c, int n, int idx, uint64_t bytes)
{
    bdr_net_hdr_t h;
    coll_hdr(c, &h, CM_CREDIT, idx);
    h.u[2] = bytes;
    bdr_node_send(n, &h, NULL, 0);
}

void bdr_coll_ship_ready(coll_t *c, int n, int idx)
{
    bdr_net_hdr_t h;
    coll_hdr(c, &h, CM_READY, idx);
    bdr_node_send(n, &h, NULL, 0);
}

/* This node's ranks have given what the other nodes need: send it. */
void bdr_coll_ship_local(coll_t *c)
{
    int me = g_m.node, size = c->comm->size;
    if (c->pipe_net) { /* bounded: as the receivers give credit */
        bdr_pipe_ship(c);
        return;
    }
    c->shipped = 1;
    for (int n = 0; n < g_m.nnodes; n++) {
        if (!bdr_coll_sends_to(c, me, n))
            continue;
        if (bdr_coll_is_coord_kind(c->d.kind) && me == bdr_coll_coord_node(c))
            continue; /* the coordinator sends results once it has computed them */
        switch (c->d.kind) {
        case BD_COLL_BCAST: /* in parts when its ranks pipelined it (coll_pipe.c) */
            for (size_t i = 0; i < c->npieces; i++)
                ship_piece(c, n, CM_PIECE, (int)i, &c->pieces[i]);
            break;
        case BD_COLL_SCATTER:
            for (int r = 0; r < size; r++)
                if (bdr_coll_rank_node(c, r) == n && c->pieces[r].total)
                    ship_piece(c, n, CM_PIECE, r, &c->pieces[r]);
            break;
        case BD_COLL_ALLTOALL:
            for (int src = 0; src < size; src++) {
                if (bdr_coll_rank_node(c, src) != me)
                    continue;
                for (int dst = 0; dst < size; dst++) {
                    size_t i = (size_t)src * (size_t)size + (size_t)dst;
                    if (bdr_coll_rank_node(c, dst) == n && c->pieces[i].total)
                        ship_piece(c, n, CM_PIECE, (int)i, &c->pieces[i]);
                }
            }
            break;
        case BD_COLL_BARRIER: break;
        case BD_COLL_ALLGATHER:
            if (c->d.count > 1) { /* in parts (pipelined, but not bounded here) */
                for (size_t i = 0; i < c->npieces; i++)
                    if (bdr_coll_rank_node(c, (int)(i / c->d.count)) == me && c->pieces[i].total)
                        ship_piece(c, n, CM_PIECE, (int)i, &c->pieces[i]);
                break;
            }
            /* fall through */
        default: /* gather, allgather, and raw contributions to the coordinator */
            for (int r = 0; r < size; r++)
                if (bdr_coll_rank_node(c, r) == me &&
                    (c->pieces[r].total || bdr_coll_is_coord_kind(c->d.kind)))
                    ship_piece(c, n, CM_PIECE, r, &c->pieces[r]);
            break;
        }
        ship_done(c, n);
    }
}

/* Coordinator: everything has come; send every node its results. */
void bdr_coll_ship_results(coll_t *c)
{
    int me = g_m.node, size = c->comm->size;
    uint64_t nbytes = c->d.count * c->elem_size;
    for (int n = 0; n < g_m.nnodes; n++) {
        if (!bdr_coll_sends_to(c, me, n))
            continue;
        if (c->d.kind == BD_COLL_ALLREDUCE || c->d.kind == BD_COLL_REDSCAT) {
            piece_t acc = {.total = nbytes, .filled = c->acc ? nbytes : 0, .data = c->acc};
            ship_piece(c, n, CM_ACC, 0, &acc);
        } else {
            for (int r = 0; r < size; r++)
                if (bdr_coll_rank_node(c, r) == n && c->results[r].total)
                    ship_piece(c, n, CM_RESULT, r, &c->results[r]);
        }
        ship_done(c, n);
    }
}

/* ---------------------------------------------------------------- data from other nodes */

typedef struct orphan {
    bdr_net_hdr_t h;
    uint64_t total, got;
    char *data;
} orphan_t;

static orphan_t *g_orph;
static int g_norph, g_caporph;
static int g_orph_filling = -1; /* index of large data for an unknown communicator, arriving */

static orphan_t *orphan_add(const bdr_net_hdr_t *h, const char *data, uint64_t len, uint64_t total)
{
    if (g_norph == g_caporph) {
        int n = g_caporph ? 2 * g_caporph : 16;
        orphan_t *t = realloc(g_orph, (size_t)n * sizeof *t);
        if (!t)
            return NULL;
        g_orph = t;
        g_caporph = n;
    }
    orphan_t *o = &g_orph[g_norph];
    o->h = *h;
    o->total = total;
    o->got = len;
    o->data = malloc(total ? total : 1);
    if (!o->data)
        return NULL;
    if (len)
        memcpy(o->data, data, len);
    g_norph++;
    return o;
}

static void coll_remote_apply(const bdr_net_hdr_t *h, const char *data, uint64_t len);

/* Data that came for a communicator before we knew it, replayed in the
 * order it arrived (a DONE must not overtake the pieces before it). */
void bdr_coll_replay_orphans(int ctx)
{
    int keep = 0, n = g_norph;
    orphan_t *mine = NULL;
    int nmine = 0;
    for (int i = 0; i < n; i++)
        nmine += g_orph[i].h.a[0] == ctx && i != g_orph_filling;
    if (!nmine)
        return;
    mine = malloc((size_t)nmine * sizeof *mine);
    if (!mine) {
        bdr_master_fail(1, "master out of memory");
        return;
    }
    nmine = 0;
    for (int i = 0; i < n; i++) {
        if (g_orph[i].h.a[0] == ctx && i != g_orph_filling) {
            mine[nmine++] = g_orph[i];
            continue;
        }
        if (i == g_orph_filling)
            g_orph_filling = keep;
        g_orph[keep++] = g_orph[i];
    }
    g_norph = keep;
    for (int i = 0; i < nmine; i++) {
        coll_remote_apply(&mine[i].h, mine[i].data, mine[i].total);
        free(mine[i].data);
    }
    free(mine);
}

static coll_t *remote_instance(const bdr_net_hdr_t *h)
{
    comm_t *comm = bdr_comm_lookup(h->a[0]);
    if (!comm)
        return NULL;
    coll_t *c = bdr_coll_find(h->a[0], h->u[0]);
    if (c)
        return c;
    bd_coll_desc_t d = {.kind = h->a[3],
                        .root = h->a[4],
                        .dtype = h->a[5],
                        .op = h->a[6],
                        .count = h->u[1],
                        .seq = h->u[0],
                        .api = (int32_t)h->u[3]};
    c = bdr_coll_new(comm, d.seq, &d);
    if (!c)
        bdr_master_fail(1, "master out of memory starting %s", bdr_coll_call_name(&d));
    return c;
}

static int install_piece(coll_t *c, piece_t *p, uint64_t total, uint64_t off, const char *data,
                         uint64_t len)
{
    if (!p->data && !p->in_file && total) {
        if (p->taken || bdr_coll_piece_place(c, p, total) < 0)
            return -1;
        if (bdr_pipe_from_node(c, p) >= 0) /* from another node: its own share of the bound */
            c->staged_in += total;
    }
    while (len) {
        uint32_t n = len > (1u << 30) ? (1u << 30) : (uint32_t)len;
        if (bdr_coll_piece_write(c, p, total, off, data, n) < 0)
            return -1;
        off += n;
        data += n;
        len -= n;
    }
    return 0;
}

static piece_t *remote_target(coll_t *c, const bdr_net_hdr_t *h)
{
    int what = h->a[1], idx = h->a[2];
    if (what == CM_PIECE && idx >= 0 && (size_t)idx < c->npieces)
        return &c->pieces[idx];
    if (what == CM_RESULT && idx >= 0 && idx < c->comm->size)
        return &c->results[idx];
    return NULL;
}

/* A whole piece (or the end of one that came in chunks) is in. */
static void remote_complete(coll_t *c, const bdr_net_hdr_t *h)
{
    int what = h->a[1], idx = h->a[2];
    if (what == CM_PIECE && bdr_coll_is_coord_kind(c->d.kind) && idx >= 0 && idx < c->comm->size)
        c->rank_arrived[idx] = 1;
    if (what == CM_RESULT && c->d.kind == BD_COLL_SPLIT) {
        const int32_t *res = (const int32_t *)c->results[idx].data;
        if (res && res[0] && !bdr_comm_lookup(res[0]) &&
            !bdr_comm_new(res[0], res[2], (const int *)res + 3))
            bdr_master_fail(1, "master out of memory creating a communicator");
    }
    if (what == CM_PIECE && c->pipe_net)
        bdr_pipe_remote_in(c); /* its reader may wait elsewhere */
    bdr_coll_progress(c);
}

static void coll_remote_apply(const bdr_net_hdr_t *h, const char *data, uint64_t len)
{
    coll_t *c = remote_instance(h);
    if (!c) {
        if (!orphan_add(h, data, len, len))
            bdr_master_fail(1, "master out of memory");
        return;
    }
    switch (h->a[1]) {
    case CM_DONE:
        if (!c->done_from[h->src_node]) {
            c->done_from[h->src_node] = 1;
            c->ndone_in++;
        }
        bdr_coll_progress(c);
        bdr_coll_maybe_free(c);
        return;
    case CM_READY:
        if (h->a[2] < 0 || (size_t)h->a[2] >= c->npieces) {
            bdr_master_fail(1, "bad collective data from node %d", h->src_node);
            return;
        }
        bdr_pipe_ready(c, h->a[2]);
        return;
    case CM_ACC:
        free(c->acc);
        c->acc = len ? malloc(len) : NULL;
        if (len && !c->acc) {
            bdr_master_fail(1, "master out of memory");
            return;
        }
        if (len)
            memcpy(c->acc, data, len);
        c->next_fold = c->comm->size;
        bdr_coll_progress(c);
        return;
    default: {
        piece_t *p = remote_target(c, h);
        if (!p || install_piece(c, p, h->u[2], 0, data, len) < 0) {
            bdr_master_fail(1, "bad collective data from node %d", h->src_node);
            return;
        }
        remote_complete(c, h);
    }
    }
}

void bdr_coll_remote(bdr_net_msg_t *nm)
{
    if (nm->h.a[1] == CM_CREDIT) { /* for an instance that may be gone: then nothing to do */
        coll_t *c = bdr_coll_find(nm->h.a[0], nm->h.u[0]);
        if (c)
            bdr_pipe_credit(c, nm->h.src_node, nm->h.a[2], nm->h.u[2]);
        return;
    }
    if (nm->h.a[7]) { /* the data follows in chunks */
        bdr_node_expect_chunks(&nm->h, nm->h.u[5]);
        return;
    }
    coll_remote_apply(&nm->h, nm->payload, nm->len);
}

void bdr_coll_remote_chunk(const bdr_net_hdr_t *h, uint64_t off, const char *data, size_t len)
{
    coll_t *c = remote_instance(h);
    if (!c) {
        if (off == 0) {
            if (!orphan_add(h, NULL, 0, h->u[5])) {
                bdr_master_fail(1, "master out of memory");
                return;
            }
            g_orph_filling = g_norph - 1;
        }
        orphan_t *o = g_orph_filling >= 0 ? &g_orph[g_orph_filling] : NULL;
        if (!o || off + len > o->total) {
            bdr_master_fail(1, "bad collective data from node %d", h->src_node);
            return;
        }
        memcpy(o->data + off, data, len);
        o->got += len;
        return;
    }
    piece_t *p = remote_target(c, h);
    if (!p || install_piece(c, p, h->u[2], off, data, len) < 0)
        bdr_master_fail(1, "bad collective data from node %d", h->src_node);
}

void bdr_coll_remote_done(const bdr_net_hdr_t *h)
{
    if (g_orph_filling >= 0) {
        g_orph[g_orph_filling].h.a[7] = 0;
        g_orph_filling = -1;
        return;
    }
    coll_t *c = remote_instance(h);
    if (c)
        remote_complete(c, h);
}
