/* Collectives in the master (bdmpi.txt 5.4).  Every collective follows one
 * two-phase protocol: each rank BEGINs (describing the call), PUTs its
 * outgoing pieces, WAITs until what it needs is there (only the ranks that
 * receive something wait), GETs its incoming pieces and ENDs.  Pieces are
 * addressed by (source, destination); reductions with predefined ops are
 * folded here in rank order, so results do not depend on scheduling.
 * Communicator creation (split, dup) is one more kind of collective. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bd_dtype.h"
#include "bd_log.h"
#include "master.h"
#include "mpi.h"

static const char *const g_kind_names[BD_COLL__COUNT] = {
    [BD_COLL_BARRIER] = "MPI_Barrier",     [BD_COLL_BCAST] = "MPI_Bcast",
    [BD_COLL_REDUCE] = "MPI_Reduce",       [BD_COLL_ALLREDUCE] = "MPI_Allreduce",
    [BD_COLL_SCAN] = "MPI_Scan",           [BD_COLL_EXSCAN] = "MPI_Exscan",
    [BD_COLL_REDSCAT] = "MPI_Reduce_scatter", [BD_COLL_GATHER] = "MPI_Gather",
    [BD_COLL_SCATTER] = "MPI_Scatter",     [BD_COLL_ALLGATHER] = "MPI_Allgather",
    [BD_COLL_ALLTOALL] = "MPI_Alltoall",   [BD_COLL_SPLIT] = "MPI_Comm_split",
};

static const char *kind_name(int k)
{
    return k > 0 && k < BD_COLL__COUNT && g_kind_names[k] ? g_kind_names[k] : "collective";
}

static int is_fold(int k)
{
    return k == BD_COLL_REDUCE || k == BD_COLL_ALLREDUCE || k == BD_COLL_SCAN ||
           k == BD_COLL_EXSCAN || k == BD_COLL_REDSCAT;
}

/* ---------------------------------------------------------------- communicators */

static int comm_register(comm_t *c)
{
    if (c->ctx >= g_m.ncomms) {
        int n = g_m.ncomms ? g_m.ncomms : 64;
        while (n <= c->ctx)
            n *= 2;
        comm_t **t = realloc(g_m.comms, (size_t)n * sizeof *t);
        if (!t)
            return -1;
        memset(t + g_m.ncomms, 0, (size_t)(n - g_m.ncomms) * sizeof *t);
        g_m.comms = t;
        g_m.ncomms = n;
    }
    g_m.comms[c->ctx] = c;
    return 0;
}

comm_t *bd_comm_lookup(int ctx)
{
    return ctx > 0 && ctx < g_m.ncomms ? g_m.comms[ctx] : NULL;
}

int bd_comm_alloc_ctx(void)
{
    return g_m.next_ctx++;
}

static comm_t *comm_new(int ctx, int size)
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
    c->refs = size;
    if (comm_register(c) < 0) {
        free(c->world);
        free(c);
        return NULL;
    }
    return c;
}

void bd_comm_init_predefined(void)
{
    int n = (int)g_m.hdr->world_size;
    /* WORLD, NODE and CWORLD all hold every rank in world order on one node. */
    int ctxs[3] = {MPI_COMM_WORLD, BDMPI_COMM_NODE, BDMPI_COMM_CWORLD};
    for (int k = 0; k < 3; k++) {
        comm_t *c = comm_new(ctxs[k], n);
        if (!c) {
            bd_master_fail(1, "master out of memory");
            return;
        }
        for (int i = 0; i < n; i++)
            c->world[i] = i;
        c->refs = -1; /* never freed */
    }
    g_m.next_ctx = 16;
}

/* ---------------------------------------------------------------- instances */

static size_t npieces_for(int kind, int size)
{
    if (kind == BD_COLL_ALLTOALL)
        return (size_t)size * (size_t)size;
    if (kind == BD_COLL_BCAST)
        return 1;
    if (kind == BD_COLL_BARRIER)
        return 0;
    return (size_t)size;
}

/* The piece a rank PUTs with segment peer `peer`. */
static piece_t *put_piece(coll_t *c, int me, int peer)
{
    size_t i;
    int size = c->comm->size;
    switch (c->d.kind) {
    case BD_COLL_BCAST: i = 0; break;
    case BD_COLL_SCATTER: i = (size_t)peer; break;
    case BD_COLL_ALLTOALL: i = (size_t)me * (size_t)size + (size_t)peer; break;
    default: i = (size_t)me; break;
    }
    if (peer < -1 || peer >= size || i >= c->npieces)
        return NULL;
    return &c->pieces[i];
}

/* The piece a rank GETs with segment peer `peer`. */
static piece_t *get_piece(coll_t *c, int me, int peer)
{
    size_t i;
    int size = c->comm->size;
    switch (c->d.kind) {
    case BD_COLL_BCAST: i = 0; break;
    case BD_COLL_SCATTER: i = (size_t)me; break;
    case BD_COLL_GATHER:
    case BD_COLL_ALLGATHER: i = (size_t)peer; break;
    case BD_COLL_ALLTOALL: i = (size_t)peer * (size_t)size + (size_t)me; break;
    case BD_COLL_REDUCE:
    case BD_COLL_ALLREDUCE:
    case BD_COLL_REDSCAT: return NULL; /* the fold, see coll_get */
    default: return &c->results[me];
    }
    if (peer < -1 || peer >= size || i >= c->npieces)
        return NULL;
    return &c->pieces[i];
}

static void coll_free(coll_t *c)
{
    coll_t **pp = &g_m.colls;
    while (*pp && *pp != c)
        pp = &(*pp)->next;
    if (*pp)
        *pp = c->next;
    for (size_t i = 0; i < c->npieces; i++)
        free(c->pieces[i].data);
    if (c->results)
        for (int i = 0; i < c->comm->size; i++)
            free(c->results[i].data);
    free(c->results);
    free(c->pieces);
    if (c->fd >= 0)
        close(c->fd);
    free(c->rank_arrived);
    free(c->acc);
    free(c);
}

static coll_t *coll_find(int ctx, uint64_t seq)
{
    for (coll_t *c = g_m.colls; c; c = c->next)
        if (c->ctx == ctx && c->seq == seq)
            return c;
    return NULL;
}

static coll_t *coll_new(comm_t *comm, uint64_t seq, const bd_coll_desc_t *d)
{
    coll_t *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->comm = comm;
    c->ctx = comm->ctx;
    c->seq = seq;
    c->d = *d;
    c->fd = -1;
    c->npieces = npieces_for(d->kind, comm->size);
    c->pieces = calloc(c->npieces ? c->npieces : 1, sizeof(piece_t));
    c->rank_arrived = calloc((size_t)comm->size, sizeof(int));
    c->results = calloc((size_t)comm->size, sizeof(piece_t));
    if (is_fold(d->kind)) {
        const bd_dtype_info_t *t = bd_dtype_info(d->dtype);
        c->elem_size = t ? t->size : 0;
    }
    if (!c->pieces || !c->rank_arrived || !c->results) {
        free(c->pieces);
        free(c->rank_arrived);
        free(c->results);
        free(c);
        return NULL;
    }
    c->next = g_m.colls;
    g_m.colls = c;
    return c;
}

/* Large pieces of data-moving collectives go to a spill file, so an
 * all-to-all of big buffers does not live in the master's memory.  The file
 * is unlinked as soon as it is made: nothing can outlive the master. */
static int piece_place(coll_t *c, piece_t *p, uint64_t total)
{
    p->total = total;
    if (!total)
        return 0;
    if (total > g_m.hdr->msg_threshold && !is_fold(c->d.kind) && c->d.kind != BD_COLL_SPLIT) {
        if (c->fd < 0) {
            char path[BD_PATH_MAX + 64];
            snprintf(path, sizeof path, "%s/coll-%d-%llu", g_m.jobdir, c->ctx,
                     (unsigned long long)c->seq);
            c->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
            if (c->fd < 0) {
                bd_master_fail(1, "cannot create collective spill file %s: %s", path,
                               strerror(errno));
                return -1;
            }
            unlink(path);
        }
        p->in_file = 1;
        p->file_off = c->file_end;
        c->file_end += (total + 4095) & ~4095ull;
        g_m.coll_file_bytes += total;
        return 0;
    }
    p->data = malloc(total);
    return p->data ? 0 : -1;
}

static int piece_write(coll_t *c, piece_t *p, uint64_t total, uint64_t off, const char *src,
                       uint32_t len)
{
    if (!p->data && !p->in_file && total && piece_place(c, p, total) < 0)
        return -1;
    if (total != p->total || off + len > p->total)
        return -1;
    if (p->in_file) {
        int rc = bd_pwrite_full(c->fd, src, len, p->file_off + off);
        if (rc < 0) {
            bd_master_fail(1, "cannot write %u bytes of %s data to the spill file in %s: %s",
                           len, kind_name(c->d.kind), g_m.jobdir, strerror(-rc));
            return -1;
        }
    } else {
        memcpy(p->data + off, src, len);
    }
    p->filled += len;
    return 0;
}

static int piece_read(coll_t *c, const piece_t *p, uint64_t off, char *dst, uint32_t len)
{
    if (!len)
        return 0;
    if (!p->in_file) {
        memcpy(dst, p->data + off, len);
        return 0;
    }
    int rc = bd_pread_full(c->fd, dst, len, p->file_off + off);
    if (rc < 0)
        bd_master_fail(1, "cannot read %u bytes of %s data from the spill file in %s: %s", len,
                       kind_name(c->d.kind), g_m.jobdir, strerror(-rc));
    return rc;
}

/* Fold arrived contributions in rank order: acc = v0 op v1 op ... */
static void try_fold(coll_t *c)
{
    uint64_t nbytes = c->d.count * c->elem_size;
    while (c->next_fold < c->comm->size && c->rank_arrived[c->next_fold]) {
        int k = c->next_fold;
        piece_t *p = &c->pieces[k];
        if (c->d.kind == BD_COLL_EXSCAN && k > 0 && nbytes) {
            c->results[k].data = malloc(nbytes);
            if (c->results[k].data)
                memcpy(c->results[k].data, c->acc, nbytes);
            c->results[k].total = c->results[k].filled = nbytes;
        }
        if (k == 0) {
            c->acc = p->data;
            p->data = NULL;
        } else if (nbytes) {
            /* Predefined ops are commutative, so in op acc gives acc op in exactly. */
            bd_op_apply(c->d.op, c->d.dtype, p->data, c->acc, c->d.count);
            free(p->data);
            p->data = NULL;
        }
        if (c->d.kind == BD_COLL_SCAN && nbytes) {
            c->results[k].data = malloc(nbytes);
            if (c->results[k].data)
                memcpy(c->results[k].data, c->acc, nbytes);
            c->results[k].total = c->results[k].filled = nbytes;
        }
        c->next_fold++;
    }
}

typedef struct split_ent {
    int color, key, rank;
} split_ent_t;

static int split_cmp(const void *a, const void *b)
{
    const split_ent_t *x = a, *y = b;
    if (x->color != y->color)
        return x->color < y->color ? -1 : 1;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Every rank has given {color, key}: make the new communicators and leave
 * each rank {ctx, rank, size, world ranks...} in its result. */
static int split_complete(coll_t *c)
{
    int n = c->comm->size;
    split_ent_t *e = calloc((size_t)n, sizeof *e);
    if (!e)
        return -1;
    for (int r = 0; r < n; r++) {
        int32_t v[2] = {MPI_UNDEFINED, 0};
        if (c->pieces[r].data && c->pieces[r].total >= sizeof v)
            memcpy(v, c->pieces[r].data, sizeof v);
        e[r] = (split_ent_t){v[0], v[1], r};
    }
    qsort(e, (size_t)n, sizeof *e, split_cmp);
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && e[j].color == e[i].color)
            j++;
        int sz = j - i;
        comm_t *nc = NULL;
        if (e[i].color != MPI_UNDEFINED) {
            nc = comm_new(bd_comm_alloc_ctx(), sz);
            if (!nc) {
                free(e);
                return -1;
            }
            for (int k = 0; k < sz; k++)
                nc->world[k] = c->comm->world[e[i + k].rank];
        }
        for (int k = 0; k < sz; k++) {
            piece_t *res = &c->results[e[i + k].rank];
            size_t bytes = (3 + (size_t)(nc ? sz : 0)) * sizeof(int32_t);
            int32_t *out = malloc(bytes);
            if (!out) {
                free(e);
                return -1;
            }
            out[0] = nc ? nc->ctx : 0;
            out[1] = nc ? k : MPI_UNDEFINED;
            out[2] = nc ? sz : 0;
            for (int q = 0; nc && q < sz; q++)
                out[3 + q] = nc->world[q];
            res->data = (char *)out;
            res->total = res->filled = bytes;
        }
        i = j;
    }
    free(e);
    return 0;
}

static int rank_ready(coll_t *c, int r)
{
    int all = c->arrived == c->comm->size;
    switch (c->d.kind) {
    case BD_COLL_BCAST:
    case BD_COLL_SCATTER: return c->rank_arrived[c->d.root];
    case BD_COLL_REDUCE:
    case BD_COLL_GATHER: return r != c->d.root || all;
    case BD_COLL_SCAN: return c->next_fold > r;
    case BD_COLL_EXSCAN: return c->next_fold >= r;
    default: return all;
    }
}

int bd_coll_ready(slave_t *s)
{
    return s->coll && rank_ready(s->coll, s->coll_rank);
}

static int desc_matches(const bd_coll_desc_t *a, const bd_coll_desc_t *b)
{
    if (a->kind != b->kind || a->root != b->root)
        return 0;
    if (is_fold(a->kind))
        return a->op == b->op && a->dtype == b->dtype && a->count == b->count;
    return 1;
}

static void coll_begin(slave_t *s, bd_req_t *r)
{
    bd_coll_desc_t d;
    memcpy(&d, s->win, sizeof d);
    comm_t *comm = bd_comm_lookup(r->ctx);
    if (!comm || r->myrank < 0 || r->myrank >= comm->size ||
        comm->world[r->myrank] != s->world) {
        bd_master_fail(1, "rank %d called %s on unknown communicator context %d", s->world,
                       kind_name(d.kind), r->ctx);
        return;
    }
    if (d.kind <= 0 || d.kind >= BD_COLL__COUNT || d.root < 0 || d.root >= comm->size ||
        (is_fold(d.kind) && (!bd_op_valid_for(d.op, d.dtype)))) {
        bd_master_fail(1, "rank %d called %s with an invalid description", s->world,
                       kind_name(d.kind));
        return;
    }
    coll_t *c = coll_find(r->ctx, d.seq);
    if (!c) {
        c = coll_new(comm, d.seq, &d);
        if (!c) {
            bd_master_fail(1, "master out of memory starting %s", kind_name(d.kind));
            return;
        }
    } else if (!desc_matches(&c->d, &d)) {
        bd_master_fail(1,
                       "collective mismatch on communicator context %d: rank %d called %s "
                       "(root %d) where another rank called %s (root %d)",
                       r->ctx, s->world, kind_name(d.kind), d.root, kind_name(c->d.kind),
                       c->d.root);
        return;
    }
    c->began++;
    s->coll = c;
    s->coll_rank = r->myrank;
    atomic_fetch_add_explicit(&s->slot->stats[BD_STAT_COLLS], 1, memory_order_relaxed);
    bd_master_respond(s);
}

/* PUT window: u32 nseg, u32 pad, then nseg times {bd_seg_t, len data bytes
 * padded to 8}. */
static void coll_put(slave_t *s)
{
    coll_t *c = s->coll;
    uint32_t nseg;
    memcpy(&nseg, s->win, sizeof nseg);
    uint64_t pos = 8;
    for (uint32_t i = 0; i < nseg; i++) {
        bd_seg_t seg;
        if (pos + sizeof seg > g_m.hdr->window)
            goto bad;
        memcpy(&seg, s->win + pos, sizeof seg);
        pos += sizeof seg;
        piece_t *p = put_piece(c, s->coll_rank, seg.peer);
        if (pos + seg.len > g_m.hdr->window || !p ||
            piece_write(c, p, seg.total, seg.off, s->win + pos, seg.len) < 0) {
            bd_master_fail(1, "rank %d: bad data segment in %s (peer %d, %u bytes at %llu)",
                           s->world, kind_name(c->d.kind), seg.peer, seg.len,
                           (unsigned long long)seg.off);
            return;
        }
        pos += (seg.len + 7u) & ~7u;
        atomic_fetch_add_explicit(&s->slot->stats[BD_STAT_COLL_BYTES_UP], seg.len,
                                  memory_order_relaxed);
    }
    bd_master_respond(s);
    return;
bad:
    bd_master_fail(1, "rank %d: malformed collective PUT", s->world);
}

static void poke_members(coll_t *c)
{
    for (int i = 0; i < g_m.ns; i++)
        if (g_m.slaves[i].coll == c)
            bd_master_poke(&g_m.slaves[i]);
}

static void coll_wait(slave_t *s)
{
    coll_t *c = s->coll;
    if (!c->rank_arrived[s->coll_rank]) {
        c->rank_arrived[s->coll_rank] = 1;
        c->arrived++;
        if (is_fold(c->d.kind)) {
            piece_t *p = &c->pieces[s->coll_rank];
            if (p->filled != c->d.count * c->elem_size) {
                bd_master_fail(1, "rank %d gave %llu bytes to %s, expected %llu", s->world,
                               (unsigned long long)p->filled, kind_name(c->d.kind),
                               (unsigned long long)(c->d.count * c->elem_size));
                return;
            }
            try_fold(c);
        }
        if (c->arrived == c->comm->size && c->d.kind == BD_COLL_SPLIT &&
            split_complete(c) < 0) {
            bd_master_fail(1, "master out of memory creating communicators");
            return;
        }
        poke_members(c);
    }
    if (rank_ready(c, s->coll_rank))
        bd_master_respond(s);
    else
        bd_master_block(s, BLK_COLL);
}

static void coll_get(slave_t *s)
{
    coll_t *c = s->coll;
    uint32_t nseg;
    memcpy(&nseg, s->win, sizeof nseg);
    if (nseg > 4096) {
        bd_master_fail(1, "rank %d: too many segments in a collective GET", s->world);
        return;
    }
    bd_seg_t segs[nseg ? nseg : 1];
    memcpy(segs, s->win + 8, (size_t)nseg * sizeof(bd_seg_t));
    char *out = s->win;
    uint64_t used = 0;
    uint64_t fold_bytes = c->d.count * c->elem_size;
    for (uint32_t i = 0; i < nseg; i++) {
        const piece_t *p = NULL;
        piece_t acc = {0};
        if (is_fold(c->d.kind) && c->d.kind != BD_COLL_SCAN && c->d.kind != BD_COLL_EXSCAN) {
            acc.data = c->acc;
            acc.filled = c->acc ? fold_bytes : 0;
            p = &acc;
        } else {
            p = get_piece(c, s->coll_rank, segs[i].peer);
        }
        uint64_t avail = p ? p->filled : 0;
        used += segs[i].len;
        if (used > g_m.hdr->window || segs[i].off + segs[i].len > avail) {
            bd_master_fail(1,
                           "rank %d: %s asked for %u bytes at offset %llu of a %llu-byte piece "
                           "from peer %d (do the counts of all ranks agree?)",
                           s->world, kind_name(c->d.kind), segs[i].len,
                           (unsigned long long)segs[i].off, (unsigned long long)avail,
                           segs[i].peer);
            return;
        }
        if (piece_read(c, p, segs[i].off, out, segs[i].len) < 0)
            return;
        out += segs[i].len;
        atomic_fetch_add_explicit(&s->slot->stats[BD_STAT_COLL_BYTES_DOWN], segs[i].len,
                                  memory_order_relaxed);
    }
    bd_master_respond(s);
}

static void coll_end(slave_t *s)
{
    coll_t *c = s->coll;
    s->coll = NULL;
    if (++c->ended == c->comm->size)
        coll_free(c);
    bd_master_respond(s);
}

int bd_coll_handle(slave_t *s)
{
    bd_req_t *r = &s->slot->req;
    switch (r->code) {
    case BD_REQ_COLL_BEGIN:
        if (s->coll) {
            bd_master_fail(1, "rank %d began a collective inside another", s->world);
            return 1;
        }
        coll_begin(s, r);
        return 1;
    case BD_REQ_CTX_ALLOC:
        s->slot->resp.arg[0] = bd_comm_alloc_ctx();
        bd_master_respond(s);
        return 1;
    case BD_REQ_COMM_FREE: {
        comm_t *c = bd_comm_lookup(r->ctx);
        if (c && c->refs > 0 && --c->refs == 0) {
            g_m.comms[c->ctx] = NULL;
            free(c->world);
            free(c);
        }
        bd_master_respond(s);
        return 1;
    }
    default:
        break;
    }
    if (!s->coll) {
        bd_master_fail(1, "rank %d sent collective request %u outside a collective", s->world,
                       r->code);
        return 1;
    }
    switch (r->code) {
    case BD_REQ_COLL_PUT: coll_put(s); return 1;
    case BD_REQ_COLL_WAIT: coll_wait(s); return s->state == SL_RUNNING;
    case BD_REQ_COLL_GET: coll_get(s); return 1;
    case BD_REQ_COLL_END: coll_end(s); return 1;
    default: return 1;
    }
}

void bd_coll_resume(slave_t *s)
{
    bd_master_respond(s);
}

void bd_coll_describe(slave_t *s, char *buf, size_t len)
{
    coll_t *c = s->coll;
    if (!c) {
        snprintf(buf, len, "waits in a collective");
        return;
    }
    char missing[256] = "";
    size_t m = 0;
    int shown = 0;
    for (int r = 0; r < c->comm->size && m + 16 < sizeof missing; r++) {
        if (c->rank_arrived[r])
            continue;
        if (shown++ == 16) {
            m += (size_t)snprintf(missing + m, sizeof missing - m, " ...");
            break;
        }
        m += (size_t)snprintf(missing + m, sizeof missing - m, " %d", c->comm->world[r]);
    }
    snprintf(buf, len,
             "waits in %s (root %d) on communicator context %d: %d of %d ranks arrived; "
             "missing world ranks:%s",
             kind_name(c->d.kind), c->d.root, c->ctx, c->arrived, c->comm->size, missing);
}
