/* Collectives in the master (bdmpi.txt 5.4).  Every collective follows one
 * two-phase protocol: each rank BEGINs (describing the call), PUTs its
 * outgoing pieces, WAITs until what it needs is there (only the ranks that
 * receive something wait), GETs its incoming pieces and ENDs.  Pieces are
 * addressed by (source, destination); reductions with predefined ops are
 * folded here in rank order, so results do not depend on scheduling.
 * Communicator creation (split, dup) is one more kind of collective. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bd_dtype.h"
#include "bd_fs.h"
#include "coll.h"
#include "mpi.h"

static const char *const g_kind_names[BD_COLL__COUNT] = {
    [BD_COLL_BARRIER] = "MPI_Barrier",
    [BD_COLL_BCAST] = "MPI_Bcast",
    [BD_COLL_REDUCE] = "MPI_Reduce",
    [BD_COLL_ALLREDUCE] = "MPI_Allreduce",
    [BD_COLL_SCAN] = "MPI_Scan",
    [BD_COLL_EXSCAN] = "MPI_Exscan",
    [BD_COLL_REDSCAT] = "MPI_Reduce_scatter",
    [BD_COLL_GATHER] = "MPI_Gather",
    [BD_COLL_SCATTER] = "MPI_Scatter",
    [BD_COLL_ALLGATHER] = "MPI_Allgather",
    [BD_COLL_ALLTOALL] = "MPI_Alltoall",
    [BD_COLL_SPLIT] = "MPI_Comm_split",
};

static const char *kind_name(int k)
{
    return k > 0 && k < BD_COLL__COUNT && g_kind_names[k] ? g_kind_names[k] : "collective";
}

static const char *const g_api_names[BD_API__COUNT] = {
    [BD_API_BARRIER] = "Barrier",
    [BD_API_BCAST] = "Bcast",
    [BD_API_REDUCE] = "Reduce",
    [BD_API_ALLREDUCE] = "Allreduce",
    [BD_API_SCAN] = "Scan",
    [BD_API_EXSCAN] = "Exscan",
    [BD_API_REDUCE_SCATTER] = "Reduce_scatter",
    [BD_API_REDUCE_SCATTER_BLOCK] = "Reduce_scatter_block",
    [BD_API_GATHER] = "Gather",
    [BD_API_GATHERV] = "Gatherv",
    [BD_API_SCATTER] = "Scatter",
    [BD_API_SCATTERV] = "Scatterv",
    [BD_API_ALLGATHER] = "Allgather",
    [BD_API_ALLGATHERV] = "Allgatherv",
    [BD_API_ALLTOALL] = "Alltoall",
    [BD_API_ALLTOALLV] = "Alltoallv",
    [BD_API_ALLTOALLW] = "Alltoallw",
    [BD_API_COMM_DUP] = "Comm_dup",
};

/* The MPI call a description comes from: "MPI_Ibcast", "MPI_Gatherv", ... */
const char *bdr_coll_call_name(const bd_coll_desc_t *d)
{
    static char buf[4][48];
    static unsigned k;
    int api = d->api & ~BD_API_NB;
    const char *base = api > 0 && api < BD_API__COUNT ? g_api_names[api] : NULL;
    if (!base) {
        base = kind_name(d->kind);
        if (strncmp(base, "MPI_", 4))
            return base;
        base += 4;
    }
    char *b = buf[k++ & 3];
    if (api == BD_API_COMM_DUP && (d->api & BD_API_NB))
        snprintf(b, sizeof buf[0], "MPI_Comm_idup");
    else if (d->api & BD_API_NB)
        snprintf(b, sizeof buf[0], "MPI_I%c%s", tolower((unsigned char)base[0]), base + 1);
    else
        snprintf(b, sizeof buf[0], "MPI_%s", base);
    return b;
}

static int is_fold(int k)
{
    return k == BD_COLL_REDUCE || k == BD_COLL_ALLREDUCE || k == BD_COLL_SCAN ||
           k == BD_COLL_EXSCAN || k == BD_COLL_REDSCAT;
}

/* ---------------------------------------------------------------- instances */

/* Which nodes take part and what each sends where (the protocol: coll_net.c). */

int bdr_coll_is_coord_kind(int k) { return is_fold(k) || k == BD_COLL_SPLIT; }

/* Does node `from` send data for this collective to node `to`? */
int bdr_coll_sends_to(const coll_t *c, int from, int to)
{
    if (from == to || !c->node_in[from] || !c->node_in[to])
        return 0;
    int coord = bdr_coll_coord_node(c);
    switch (c->d.kind) {
    case BD_COLL_BCAST:
    case BD_COLL_SCATTER: return from == coord;
    case BD_COLL_GATHER:
    case BD_COLL_REDUCE: return to == coord;
    case BD_COLL_ALLREDUCE:
    case BD_COLL_REDSCAT:
    case BD_COLL_SCAN:
    case BD_COLL_EXSCAN:
    case BD_COLL_SPLIT: return to == coord || from == coord;
    default: return 1; /* barrier, allgather, alltoall */
    }
}

static int expected_senders(const coll_t *c)
{
    int n = 0;
    for (int k = 0; k < g_m.nnodes; k++)
        n += bdr_coll_sends_to(c, k, g_m.node);
    return n;
}

/* A broadcast that pipelines (bounded staging) comes in d.count parts,
 * each a piece of its own (coll_pipe.c); otherwise it is one piece.  An
 * allgather whose blocks are larger than a part (session 21) comes in
 * d.count parts per rank: piece r * d.count + j is part j of rank r's
 * block. */
static size_t npieces_for(int kind, int size, uint64_t count)
{
    if (kind == BD_COLL_ALLTOALL)
        return (size_t)size * (size_t)size;
    if (kind == BD_COLL_ALLGATHER && count > 1)
        return (size_t)size * (size_t)count;
    if (kind == BD_COLL_BCAST)
        return count ? (size_t)count : 1;
    if (kind == BD_COLL_BARRIER)
        return 0;
    return (size_t)size;
}

/* The piece a rank PUTs with segment peer `peer`. */
static piece_t *put_piece(coll_t *c, int me, int peer)
{
    size_t i;
    int size = c->comm->size;
    if (c->d.kind == BD_COLL_BCAST && c->d.count) /* part `peer` of a pipelined one */
        return peer >= 0 && (size_t)peer < c->npieces ? &c->pieces[peer] : NULL;
    if (c->d.kind == BD_COLL_ALLGATHER && c->d.count > 1) /* part `peer` of its block */
        return peer >= 0 && (uint64_t)peer < c->d.count
                   ? &c->pieces[(size_t)me * (size_t)c->d.count + (size_t)peer]
                   : NULL;
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
    if ((c->d.kind == BD_COLL_BCAST && c->d.count) ||
        (c->d.kind == BD_COLL_ALLGATHER && c->d.count > 1)) /* the piece's index */
        return peer >= 0 && (size_t)peer < c->npieces ? &c->pieces[peer] : NULL;
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

piece_t *bdr_coll_get_piece(coll_t *c, int me, int peer) { return get_piece(c, me, peer); }

piece_t *bdr_coll_put_piece(coll_t *c, int me, int peer) { return put_piece(c, me, peer); }

static void coll_free(coll_t *c)
{
    coll_t **pp = &g_m.colls;
    while (*pp && *pp != c)
        pp = &(*pp)->next;
    if (*pp)
        *pp = c->next;
    for (size_t i = 0; i < c->npieces; i++) {
        bdr_pipe_dropped(c, &c->pieces[i]);
        free(c->pieces[i].data);
        bdr_ref_drop(&c->pieces[i]);
    }
    if (c->results)
        for (int i = 0; i < c->comm->size; i++)
            free(c->results[i].data);
    free(c->results);
    free(c->pieces);
    bdr_stage_close(c);
    bd_spill_uncharge(g_m.hdr, c->spill_charged);
    free(c->rank_arrived);
    free(c->node_in);
    free(c->done_from);
    free(c->credit_out);
    free(c->held_for);
    free(c->rd);
    free(c->acc);
    /* A communicator freed by all its members while nonblocking collectives
     * on it were still running goes with the last of them. */
    comm_t *comm = c->comm;
    free(c);
    bdr_comm_drop_if_unused(comm);
}

int bdr_coll_coord_node(const coll_t *c)
{
    switch (c->d.kind) {
    case BD_COLL_BCAST:
    case BD_COLL_SCATTER:
    case BD_COLL_GATHER:
    case BD_COLL_REDUCE: return bdr_node_of_world(c->comm->world[c->d.root]);
    default: return bdr_node_of_world(c->comm->world[0]);
    }
}

coll_t *bdr_coll_find(int ctx, uint64_t seq)
{
    for (coll_t *c = g_m.colls; c; c = c->next)
        if (c->ctx == ctx && c->seq == seq)
            return c;
    return NULL;
}

coll_t *bdr_coll_new(comm_t *comm, uint64_t seq, const bd_coll_desc_t *d)
{
    static int once;
    if (!once++) {
        /* Pieces are large and short-lived: allocations from 128 KiB on
         * always get their own mapping, which free() gives back, so what
         * the budget counts (bdr_coll_staging_bytes) is what the master
         * holds.  glibc's default raises that threshold to the largest
         * block freed (up to 32 MiB), after which freed pieces stay in the
         * heap, resident but no longer counted. */
        mallopt(M_MMAP_THRESHOLD, 128 << 10);
    }
    coll_t *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->comm = comm;
    c->ctx = comm->ctx;
    c->seq = seq;
    c->d = *d;
    c->fd = -1;
    c->npieces = npieces_for(d->kind, comm->size, d->count);
    c->pieces = calloc(c->npieces ? c->npieces : 1, sizeof(piece_t));
    c->rank_arrived = calloc((size_t)comm->size, sizeof(int));
    c->results = calloc((size_t)comm->size, sizeof(piece_t));
    if (is_fold(d->kind)) {
        const bd_dtype_info_t *t = bd_dtype_info(d->dtype);
        c->elem_size = t ? t->size : 0;
    }
    c->node_in = calloc((size_t)g_m.nnodes, 1);
    c->done_from = calloc((size_t)g_m.nnodes, 1);
    c->credit_out = calloc((size_t)g_m.nnodes, sizeof(uint64_t));
    if (!c->pieces || !c->rank_arrived || !c->results || !c->node_in || !c->done_from ||
        !c->credit_out) {
        free(c->credit_out);
        free(c->pieces);
        free(c->rank_arrived);
        free(c->results);
        free(c->node_in);
        free(c->done_from);
        free(c);
        return NULL;
    }
    c->nlocal = comm->nlocal;
    for (int r = 0; r < comm->size; r++)
        c->node_in[bdr_node_of_world(comm->world[r])] = 1;
    c->nexpect_in = expected_senders(c);
    c->next = g_m.colls;
    g_m.colls = c;
    return c;
}

/* Large pieces of data-moving collectives go to a spill file, so an
 * all-to-all of big buffers does not live in the master's memory (nor, with
 * direct I/O, in the page cache: coll_stage.c).  The file is unlinked as
 * soon as it is made: nothing can outlive the master. */
static int place(coll_t *c, piece_t *p, uint64_t total, int how);

/* The world rank whose data piece p of c is (for messages). */
static int piece_sender(const coll_t *c, const piece_t *p)
{
    size_t i = (size_t)(p - c->pieces);
    int r;
    switch (c->d.kind) {
    case BD_COLL_BCAST:
    case BD_COLL_SCATTER: r = c->d.root; break;
    case BD_COLL_ALLTOALL: r = (int)(i / (size_t)c->comm->size); break;
    default: r = (int)i; break;
    }
    return r >= 0 && r < c->comm->size ? c->comm->world[r] : -1;
}

int bdr_coll_piece_place(coll_t *c, piece_t *p, uint64_t total)
{
    if (place(c, p, total, 1) < 0)
        return -1;
    bdr_pipe_placed(c, p, total);
    return 0;
}

/* how > 0: a large piece may stay in memory while the budget has room;
 * 0: a large piece goes to the spill file; < 0: any piece does. */
static int place(coll_t *c, piece_t *p, uint64_t total, int how)
{
    p->total = total;
    if (!total)
        return 0;
    int large = total > g_m.hdr->job.msg_threshold;
    /* A reduction's contribution is placed in memory, where the fold reads
     * it; it goes to the file only when the budget needs its room while it
     * waits for a lower rank's (how < 0: store_pieces; coll_fold.c reads it
     * back). */
    int to_file = how < 0 || (!is_fold(c->d.kind) && large && !(how > 0 && bdr_stage_fits(total)));
    if (c->d.kind != BD_COLL_SPLIT && to_file) {
        char what[64];
        snprintf(what, sizeof what, "%s data", bdr_coll_call_name(&c->d));
        if (bdr_spill_charge(total, piece_sender(c, p), -1, what) < 0)
            return -1;
        c->spill_charged += total;
        int rc = c->fd < 0 ? bdr_stage_open(c) : 0;
        if (rc < 0) {
            bdr_master_fail(1, "cannot create a spill file for %s in %s: %s",
                            bdr_coll_call_name(&c->d), g_m.jobdir, strerror(-rc));
            return -1;
        }
        /* each piece on blocks of its own (coll_stage.c pads its end) */
        p->in_file = 1;
        p->file_off = c->file_end;
        c->file_end += (total + BD_FS_DIO_ALIGN - 1) & ~(uint64_t)(BD_FS_DIO_ALIGN - 1);
        g_m.coll_file_bytes += total;
        return 0;
    }
    /* A piece that may go to the file later (bdr_coll_shrink) is kept
     * aligned and padded to the block, so its own memory can be written
     * with direct I/O (bdr_stage_store). */
    if (total > g_m.hdr->job.msg_threshold && c->d.kind != BD_COLL_SPLIT) {
        void *d = NULL;
        uint64_t len = (total + BD_FS_DIO_ALIGN - 1) & ~(uint64_t)(BD_FS_DIO_ALIGN - 1);
        int rc = posix_memalign(&d, BD_FS_DIO_ALIGN, len);
        if (rc) /* not a bad segment of the rank's: the master's memory */
            bdr_master_oom("posix_memalign", len, rc);
        p->data = d;
    } else {
        p->data = malloc(total);
    }
    return p->data ? 0 : -1;
}

#define SMALL_BATCH (1u << 20)

/* Store complete pieces kept in memory, larger than `min` bytes, until
 * freed + *coming reaches need or limit bytes of blocks are submitted.  A large piece is written from its own
 * memory (place() kept it aligned and padded); a small one is first moved
 * into an aligned block of its own. */
static uint64_t store_pieces(uint64_t need, uint64_t min, uint64_t freed, uint64_t *coming,
                             uint64_t limit)
{
    uint64_t sent = 0; /* bytes of blocks submitted by this call */
    for (coll_t *c = g_m.colls; c && freed + *coming < need && sent < limit && !g_m.stopping;
         c = c->next) {
        /* a reduction's contributions that wait for a lower rank's (rank
         * order fold, coll_fold.c) may go; the accumulator stays */
        if (c->d.kind == BD_COLL_SPLIT)
            continue;
        for (size_t i = 0; i < c->npieces && freed + *coming < need && sent < limit; i++) {
            piece_t *p = &c->pieces[i];
            if (is_fold(c->d.kind) && (p->data == c->acc || (int)i < c->next_fold))
                continue;
            uint64_t total = p->total;
            if (!p->data || p->filled != total || total <= min)
                continue;
            char *d = p->data;
            if (total <= g_m.hdr->job.msg_threshold) {
                void *a = NULL;
                uint64_t len = (total + BD_FS_DIO_ALIGN - 1) & ~(uint64_t)(BD_FS_DIO_ALIGN - 1);
                if (posix_memalign(&a, BD_FS_DIO_ALIGN, len))
                    return freed; /* no memory to move it: leave it where it is */
                memcpy(a, d, total);
                free(d);
                d = a;
            }
            p->data = NULL;
            p->filled = 0;
            if (place(c, p, total, -1) < 0) {
                free(d);
                return freed; /* the job fails (place) */
            }
            int rc = bdr_stage_store(c, p, d);
            if (rc < 0) {
                bdr_master_fail(1, "cannot write %llu bytes of %s data to the spill file in %s: %s",
                                (unsigned long long)total, bdr_coll_call_name(&c->d), g_m.jobdir,
                                strerror(-rc));
                return freed;
            }
            *coming = bdr_stage_writing_bytes();
            sent += (total + BD_FS_DIO_ALIGN - 1) & ~(uint64_t)(BD_FS_DIO_ALIGN - 1);
        }
    }
    return freed;
}

/* The budget needs `need` bytes: give back staging buffers not in use,
 * then store complete large pieces kept in memory (they were placed there
 * while it had room).  Their memory is written from where it is, by the
 * stage's I/O thread, and is freed when the write completes: *coming gets
 * every byte being written then (these and earlier ones), which memacct.c
 * counts like the memory of ranks being unloaded. */
uint64_t bdr_coll_shrink(uint64_t need, uint64_t *coming)
{
    uint64_t freed = bdr_stage_trim() + bdr_ref_trim();
    *coming = bdr_stage_writing_bytes();
    return store_pieces(need, g_m.hdr->job.msg_threshold, freed, coming, UINT64_MAX);
}

uint64_t bdr_coll_shrink_small(uint64_t need, uint64_t *coming)
{
    uint64_t freed = bdr_coll_shrink(need, coming);
    /* A small piece takes a whole block until it is written: pieces under
     * half a block would cost more than they free, and the rest go in
     * batches of SMALL_BATCH, one at a time (all of them at once took the
     * master's heap from 6 to 15 MB at 64 ranks under -mem 8M; each
     * completion wakes the loop, which asks again). */
    if (*coming)
        return freed;
    return store_pieces(need, BD_FS_DIO_ALIGN / 2, freed, coming, SMALL_BATCH);
}

int bdr_coll_piece_write(coll_t *c, piece_t *p, uint64_t total, uint64_t off, const char *src,
                         uint32_t len)
{
    if (!p->data && !p->in_file && total && bdr_coll_piece_place(c, p, total) < 0)
        return -1;
    if (total != p->total || off + len > p->total)
        return -1;
    if (p->in_file) {
        int rc = bdr_stage_write(c, p, off, src, len);
        if (rc < 0) {
            bdr_master_fail(1, "cannot write %u bytes of %s data to the spill file in %s: %s", len,
                            bdr_coll_call_name(&c->d), g_m.jobdir, strerror(-rc));
            return -1;
        }
    } else {
        memcpy(p->data + off, src, len);
    }
    p->filled += len;
    return 0;
}

/* world: the rank that reads it (for messages). */
static int piece_read(coll_t *c, const piece_t *p, uint64_t off, char *dst, uint32_t len, int world)
{
    if (!len)
        return 0;
    if (p->ref) {
        int rc = bdr_ref_read(p, off, dst, len);
        if (rc == -EBADMSG)
            bdr_master_fail(1, "storage returned corrupted data for rank %d %s (%s data)", world,
                            bdr_ref_bad(), bdr_coll_call_name(&c->d));
        else if (rc < 0)
            bdr_master_fail(1, "cannot read %u bytes of %s data from the node's store in %s: %s",
                            len, bdr_coll_call_name(&c->d), g_m.jobdir, strerror(-rc));
        return rc;
    }
    if (!p->in_file) {
        memcpy(dst, p->data + off, len);
        return 0;
    }
    int rc = bdr_stage_read(c, p, off, dst, len);
    if (rc == -EBADMSG)
        bdr_master_fail(1, "storage returned corrupted data for rank %d %s (%s data)", world,
                        bdr_stage_bad(), bdr_coll_call_name(&c->d));
    else if (rc < 0)
        bdr_master_fail(1, "cannot read %u bytes of %s data from the spill file in %s: %s", len,
                        bdr_coll_call_name(&c->d), g_m.jobdir, strerror(-rc));
    return rc;
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
        /* nc: the new communicator's members (registered here only if it has
         * members on this node; otherwise only its list is needed for the results). */
        comm_t *nc = NULL, tmp = {0};
        int *w = NULL;
        if (e[i].color != MPI_UNDEFINED) {
            w = malloc((size_t)sz * sizeof(int));
            if (!w) {
                free(e);
                return -1;
            }
            int here = 0;
            for (int k = 0; k < sz; k++) {
                w[k] = c->comm->world[e[i + k].rank];
                here |= bdr_master_slave_by_world(w[k]) != NULL;
            }
            tmp = (comm_t){.ctx = bdr_comm_alloc_ctx(), .size = sz, .world = w};
            /* A dup (one color) reserves the parent's next d.count - 1
             * dups' contexts after this one (comm.c bdr_comm_req_dup). */
            if (sz == n && c->d.count > 1 && c->d.count <= BD_DUP_RESERVE_MAX)
                g_m.next_ctx += (int)c->d.count - 1;
            nc = &tmp;
            if (here && !bdr_comm_new(tmp.ctx, sz, w)) {
                free(w);
                free(e);
                return -1;
            }
        }
        for (int k = 0; k < sz; k++) {
            piece_t *res = &c->results[e[i + k].rank];
            size_t bytes = (3 + (size_t)(nc ? sz : 0)) * sizeof(int32_t);
            int32_t *out = malloc(bytes);
            if (!out) {
                free(w);
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
        free(w);
        i = j;
    }
    free(e);
    return 0;
}

static int rank_ready(coll_t *c, int r)
{
    int all_in = c->ndone_in == c->nexpect_in;
    int all_local = c->arrived == c->nlocal;
    int coord_here = bdr_coll_coord_node(c) == g_m.node;
    int folded = c->next_fold == c->comm->size;
    switch (c->d.kind) {
    case BD_COLL_BCAST:
    case BD_COLL_SCATTER: return coord_here ? c->rank_arrived[c->d.root] : all_in;
    case BD_COLL_REDUCE: return r != c->d.root || folded;
    case BD_COLL_GATHER: return r != c->d.root || (all_local && all_in);
    case BD_COLL_SCAN: return coord_here ? c->next_fold > r : all_in;
    case BD_COLL_EXSCAN: return coord_here ? c->next_fold >= r : all_in;
    case BD_COLL_ALLREDUCE:
    case BD_COLL_REDSCAT: return coord_here ? folded : all_in;
    case BD_COLL_SPLIT: return coord_here ? c->computed : all_in;
    default: return all_local && all_in;
    }
}

int bdr_coll_rank_ready(coll_t *c, int r) { return rank_ready(c, r); }

static void poke_members(coll_t *c);
void bdr_coll_poke(coll_t *c) { poke_members(c); }

static void poke_members(coll_t *c)
{
    for (int i = 0; i < g_m.ns; i++) {
        slave_t *s = &g_m.slaves[i];
        if (s->coll == c || (s->state == SL_BLOCKED && s->blk == BLK_COLL &&
                             s->slot->req.code == BD_REQ_COLL_WAITANY))
            bdr_sched_poke(s);
    }
}

void bdr_coll_maybe_free(coll_t *c)
{
    if (c->ended == c->nlocal && c->ndone_in == c->nexpect_in && c->shipped)
        coll_free(c);
}

/* Something changed (a local rank arrived, data came from another node):
 * fold, compute, ship what is due, wake whoever can go on. */
void bdr_coll_progress(coll_t *c)
{
    int all_local = c->arrived == c->nlocal;
    int coord_here = bdr_coll_coord_node(c) == g_m.node;
    if (is_fold(c->d.kind) && coord_here)
        bdr_coll_try_fold(c);
    if (!c->shipped) {
        int ready = c->d.kind == BD_COLL_BCAST || c->d.kind == BD_COLL_SCATTER
                        ? (coord_here ? c->rank_arrived[c->d.root] : 1)
                        : all_local;
        if (ready)
            bdr_coll_ship_local(c);
    }
    if (coord_here && bdr_coll_is_coord_kind(c->d.kind) && !c->computed && all_local &&
        c->ndone_in == c->nexpect_in) {
        if (c->d.kind == BD_COLL_SPLIT && split_complete(c) < 0) {
            bdr_master_fail(1, "master out of memory creating communicators");
            return;
        }
        if (is_fold(c->d.kind) && c->next_fold != c->comm->size)
            return; /* cannot happen: every contribution has come */
        c->computed = 1;
        bdr_coll_ship_results(c);
    }
    poke_members(c);
}

static int any_ready(slave_t *s, coll_t **first_wait);

int bdr_coll_ready(slave_t *s)
{
    if (s->slot->req.code == BD_REQ_COLL_WAITANY) {
        coll_t *first;
        return any_ready(s, &first) > 0;
    }
    if (s->slot->req.code == BD_REQ_COLL_TAKE)
        return bdr_pipe_take_ready(s);
    return s->coll && rank_ready(s->coll, s->coll_rank);
}

static int desc_matches(const bd_coll_desc_t *a, const bd_coll_desc_t *b)
{
    /* A nonblocking collective never matches a blocking one (MPI 3.1 5.12);
     * different calls of one kind (an intercommunicator's collectives are
     * all gathers on its union) do not match either. */
    if (a->kind != b->kind || a->root != b->root || a->api != b->api)
        return 0;
    if (is_fold(a->kind))
        return a->op == b->op && a->dtype == b->dtype && a->count == b->count;
    /* a broadcast's or an allgather's parts: its ranks' sizes differ
     * (erroneous) */
    return (a->kind != BD_COLL_BCAST && a->kind != BD_COLL_ALLGATHER) || a->count == b->count;
}

static void coll_begin(slave_t *s, const bd_req_t *r)
{
    bd_coll_desc_t d;
    memcpy(&d, s->win, sizeof d);
    comm_t *comm = bdr_comm_lookup(r->ctx);
    if (!comm || r->myrank < 0 || r->myrank >= comm->size || comm->world[r->myrank] != s->world) {
        bdr_master_fail(1, "rank %d called %s on unknown communicator context %d", s->world,
                        bdr_coll_call_name(&d), r->ctx);
        return;
    }
    if (d.kind <= 0 || d.kind >= BD_COLL__COUNT || d.root < 0 || d.root >= comm->size ||
        (is_fold(d.kind) && (!bd_op_valid_for(d.op, d.dtype))) ||
        ((d.kind == BD_COLL_BCAST || d.kind == BD_COLL_ALLGATHER) &&
         d.count > BD_BCAST_PARTS_MAX)) {
        bdr_master_fail(1, "rank %d called %s with an invalid description", s->world,
                        bdr_coll_call_name(&d));
        return;
    }
    coll_t *c = bdr_coll_find(r->ctx, d.seq);
    if (!c) {
        c = bdr_coll_new(comm, d.seq, &d);
        if (!c) {
            bdr_master_fail(1, "master out of memory starting %s", bdr_coll_call_name(&d));
            return;
        }
    } else if (!desc_matches(&c->d, &d)) {
        bdr_master_fail(1,
                        "collective mismatch on communicator context %d: rank %d called %s "
                        "(root %d) where another rank called %s (root %d)",
                        r->ctx, s->world, bdr_coll_call_name(&d), d.root, bdr_coll_call_name(&c->d),
                        c->d.root);
        return;
    }
    c->began++;
    s->coll = c;
    s->coll_rank = r->myrank;
    /* A blocking all-to-all whose ranks pipeline: its pieces for other
     * nodes go as their masters give credit (coll_pipe.c).  All its ranks
     * say so alike (all in place or none, MPI 3.1 5.8). */
    if (r->arg[0] == 1 &&
        (d.kind == BD_COLL_ALLTOALL || d.kind == BD_COLL_GATHER || d.kind == BD_COLL_SCATTER ||
         d.kind == BD_COLL_ALLGATHER || d.kind == BD_COLL_BCAST) &&
        bdr_pipe_bounded(c))
        c->pipe_net = c->pipe = 1;
    else if (r->arg[0] == 2 && d.kind == BD_COLL_ALLTOALL && bdr_pipe_bounded(c))
        /* in place, on one node or several (session 21): a piece for
         * another node is shipped only once its reader's block for its
         * sender is PUT there (CM_READY, coll_pipe.c), so a piece from
         * another node never waits here for its reader's block */
        c->inplace = c->pipe_net = c->pipe = 1;
    /* Bounded staging: a rank that would put into an instance past the
     * bound takes first (coll_pipe.c). */
    s->slot->resp.flag = bdr_pipe_over(c);
    atomic_fetch_add_explicit(&s->slot->stats[BD_STAT_COLLS], 1, memory_order_relaxed);
    bdr_sched_respond(s);
}

/* PUT window: u32 nseg, u32 pad, then nseg times {bd_seg_t, len data bytes
 * padded to 8}. */
static void coll_put(slave_t *s)
{
    coll_t *c = s->coll;
    uint32_t nseg;
    memcpy(&nseg, s->win, sizeof nseg);
    uint64_t pos = 8;
    int poke = 0, ship = 0;
    for (uint32_t i = 0; i < nseg; i++) {
        bd_seg_t seg;
        if (pos + sizeof seg > g_m.hdr->window)
            goto bad;
        memcpy(&seg, s->win + pos, sizeof seg);
        pos += sizeof seg;
        piece_t *p = put_piece(c, s->coll_rank, seg.peer);
        uint64_t before = p ? p->filled : 0;
        if (pos + seg.len > g_m.hdr->window || !p || p->taken ||
            bdr_coll_piece_write(c, p, seg.total, seg.off, s->win + pos, seg.len) < 0) {
            bdr_master_fail(1, "rank %d: bad data segment in %s (peer %d, %u bytes at %llu)",
                            s->world, bdr_coll_call_name(&c->d), seg.peer, seg.len,
                            (unsigned long long)seg.off);
            return;
        }
        pos += (seg.len + 7u) & ~7u;
        atomic_fetch_add_explicit(&s->slot->stats[BD_STAT_COLL_BYTES_UP], seg.len,
                                  memory_order_relaxed);
        if (c->pipe && p->total && p->filled == p->total) {
            poke = 1; /* its reader may be waiting in COLL_TAKE */
            bdr_pipe_filled(c, p);
        }
        if (c->inplace && c->pipe_net && p->total && p->filled == p->total && before < p->total &&
            bdr_coll_rank_node(c, seg.peer) != g_m.node)
            /* in place: the piece its reader sends this rank may come now */
            bdr_coll_ship_ready(c, bdr_coll_rank_node(c, seg.peer), (int)(p - c->pieces));
        if (c->pipe_net && p->total && p->filled == p->total &&
            (bdr_pipe_multi(c) ||
             bdr_coll_rank_node(c, c->d.kind == BD_COLL_GATHER ? c->d.root
                                   : seg.peer >= 0             ? seg.peer
                                                               : s->coll_rank) != g_m.node))
            ship = 1; /* its reader is on another node (several readers: maybe) */
    }
    if (ship)
        bdr_pipe_ship(c);
    /* Bounded staging: past the bound, the rank takes before it puts more. */
    s->slot->resp.flag = bdr_pipe_over(c);
    if (poke)
        poke_members(c);
    bdr_sched_respond(s);
    return;
bad:
    bdr_master_fail(1, "rank %d: malformed collective PUT", s->world);
}

/* Rank `rank` (a rank of s) has put all its inputs to c.  Returns 0, or -1
 * when the job fails. */
static int coll_arrive(slave_t *s, coll_t *c, int rank)
{
    if (c->rank_arrived[rank])
        return 0;
    c->rank_arrived[rank] = 1;
    c->arrived++;
    if (is_fold(c->d.kind)) {
        piece_t *p = &c->pieces[rank];
        if (p->filled != c->d.count * c->elem_size) {
            bdr_master_fail(1, "rank %d gave %llu bytes to %s, expected %llu", s->world,
                            (unsigned long long)p->filled, bdr_coll_call_name(&c->d),
                            (unsigned long long)(c->d.count * c->elem_size));
            return -1;
        }
    }
    bdr_coll_progress(c);
    return g_m.stopping ? -1 : 0;
}

int bdr_coll_arrive(slave_t *s, coll_t *c) { return coll_arrive(s, c, s->coll_rank); }

static void coll_wait(slave_t *s)
{
    coll_t *c = s->coll;
    if (coll_arrive(s, c, s->coll_rank) < 0)
        return;
    if (rank_ready(c, s->coll_rank)) {
        bdr_sched_respond(s);
    } else if (bdr_mbox_watch_moved(s)) {
        s->slot->resp.status = BD_RESP_NOTYET; /* it matches, then waits again */
        bdr_sched_respond(s);
    } else {
        bdr_sched_block(s, BLK_COLL);
    }
}

/* ARRIVE (answered at once) and TEST (a poll): resp.flag says whether the
 * rank may GET its results now. */
/* Rank r's part of c can never complete: its communicator was revoked
 * (MPIX_Comm_revoke) and c had not come far enough for r.  A wait or poll
 * for it is answered BD_RESP_REVOKED (a TEST), or flag 2 (WAITANY/TESTANY). */
static int revoked_for(coll_t *c, int r)
{
    return c->comm && c->comm->revoked && !rank_ready(c, r);
}

static void coll_test(slave_t *s, int poll)
{
    coll_t *c = s->coll;
    if (coll_arrive(s, c, s->coll_rank) < 0)
        return;
    if (poll && revoked_for(c, s->coll_rank)) {
        /* a rank that polls (MPI_Test, or a wait of a rank with several
         * MPI threads) must learn of the revoke as a waiting one does */
        s->slot->resp.status = BD_RESP_REVOKED;
        s->slot->resp.flag = 1;
        bdr_sched_respond(s);
        return;
    }
    s->slot->resp.flag = rank_ready(c, s->coll_rank);
    if (poll && !s->slot->resp.flag)
        bdr_sched_poll_failed(s);
    else
        bdr_sched_respond(s);
}

/* The instances of a WAITANY/TESTANY (window: bd_coll_id_t[n], then n flag
 * bytes written here): how many of them are ready; -1 when the job fails.
 * *first_wait gets the first one that is not. */
static int any_ready(slave_t *s, coll_t **first_wait)
{
    int64_t n = s->slot->req.arg[0];
    if (n < 1 || (uint64_t)n * (sizeof(bd_coll_id_t) + 1) > g_m.hdr->window) {
        bdr_master_fail(1, "rank %d: bad list of %lld collectives to wait for", s->world,
                        (long long)n);
        return -1;
    }
    uint8_t *flags = (uint8_t *)s->win + (size_t)n * sizeof(bd_coll_id_t);
    int ready = 0;
    *first_wait = NULL;
    for (int64_t i = 0; i < n; i++) {
        bd_coll_id_t id;
        memcpy(&id, s->win + i * (int64_t)sizeof id, sizeof id);
        coll_t *c = bdr_coll_find(id.ctx, id.seq);
        if (!c || id.myrank < 0 || id.myrank >= c->comm->size ||
            c->comm->world[id.myrank] != s->world) {
            bdr_master_fail(1, "rank %d waits for an unknown collective (context %d, call %llu)",
                            s->world, id.ctx, (unsigned long long)id.seq);
            return -1;
        }
        if (coll_arrive(s, c, id.myrank) < 0)
            return -1;
        flags[i] = rank_ready(c, id.myrank) ? 1 : revoked_for(c, id.myrank) ? 2 : 0;
        ready += flags[i] != 0;
        if (!flags[i] && !*first_wait) {
            *first_wait = c;
            s->coll_rank = id.myrank;
        }
    }
    return ready;
}

static void coll_waitany(slave_t *s, int poll)
{
    coll_t *first = NULL;
    int n = any_ready(s, &first);
    if (n < 0)
        return;
    s->slot->resp.flag = n > 0;
    if (n > 0 || (poll && s->slot->req.arg[1])) {
        bdr_sched_respond(s);
    } else if (!poll && bdr_mbox_watch_moved(s)) {
        s->slot->resp.status = BD_RESP_NOTYET; /* it matches, then waits again */
        bdr_sched_respond(s);
    } else if (poll) {
        bdr_sched_poll_failed(s);
    } else {
        s->coll = first; /* for the deadlock report */
        bdr_sched_block(s, BLK_COLL);
    }
}

static void coll_get(slave_t *s)
{
    coll_t *c = s->coll;
    uint32_t nseg;
    memcpy(&nseg, s->win, sizeof nseg);
    if (nseg > 4096) {
        bdr_master_fail(1, "rank %d: too many segments in a collective GET", s->world);
        return;
    }
    bd_seg_t segs[nseg ? nseg : 1];
    memcpy(segs, s->win + 8, (size_t)nseg * sizeof(bd_seg_t));
    char *out = s->win;
    uint64_t used = 0;
    uint64_t fold_bytes = c->d.count * c->elem_size;
    int mismatch = 0;
    if (!is_fold(c->d.kind) && nseg && segs[0].off == 0)
        bdr_ref_batch(c, s->coll_rank, segs[0].peer);
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
        if (segs[i].total == BD_SEG_REFUSE) {
            /* offered, but its reader expects nothing of it (counts that
             * disagree): an error for the reader, and the piece goes */
            if (!p || p->taken || !p->filled || p->filled != p->total || segs[i].len) {
                bdr_master_fail(1, "rank %d: %s refused the piece from peer %d, not offered",
                                s->world, bdr_coll_call_name(&c->d), segs[i].peer);
                return;
            }
            mismatch = 1;
            ((piece_t *)p)->got = p->total;
            if (c->pipe && bdr_pipe_read(c, (piece_t *)p, s->coll_rank, p->total, 0, 0) < 0)
                return;
            continue;
        }
        if (p && p->taken && segs[i].off < p->got) { /* zeros past a shorter piece are fine */
            bdr_master_fail(1, "rank %d: %s asked again for the piece from peer %d, already taken",
                            s->world, bdr_coll_call_name(&c->d), segs[i].peer);
            return;
        }
        uint64_t avail = p ? p->filled : 0;
        used += segs[i].len;
        /* A segment with a total reads a whole piece of that size: if the
         * sender's piece differs, the ranks' counts disagree (erroneous, and
         * MPI can tell): answer with what there is, zeros after it, and a
         * flag the rank turns into MPI_ERR_TRUNCATE for its own call. */
        if (segs[i].total && segs[i].total != avail)
            mismatch = 1;
        if (segs[i].total && used <= g_m.hdr->window && segs[i].off + segs[i].len > avail) {
            uint64_t have = segs[i].off < avail ? avail - segs[i].off : 0;
            if (have && piece_read(c, p, segs[i].off, out, have, s->world) < 0)
                return;
            memset(out + have, 0, segs[i].len - have);
            out += segs[i].len;
            if (c->pipe && p && p != &acc &&
                bdr_pipe_read(c, (piece_t *)p, s->coll_rank, segs[i].off, have, segs[i].total) < 0)
                return;
            continue;
        }
        if (used > g_m.hdr->window || segs[i].off + segs[i].len > avail) {
            bdr_master_fail(1,
                            "rank %d: %s asked for %u bytes at offset %llu of a %llu-byte piece "
                            "from peer %d (do the counts of all ranks agree?)",
                            s->world, bdr_coll_call_name(&c->d), segs[i].len,
                            (unsigned long long)segs[i].off, (unsigned long long)avail,
                            segs[i].peer);
            return;
        }
        if (piece_read(c, p, segs[i].off, out, segs[i].len, s->world) < 0)
            return;
        out += segs[i].len;
        atomic_fetch_add_explicit(&s->slot->stats[BD_STAT_COLL_BYTES_DOWN], segs[i].len,
                                  memory_order_relaxed);
        if (c->pipe && p != &acc &&
            bdr_pipe_read(c, (piece_t *)p, s->coll_rank, segs[i].off, segs[i].len, segs[i].total) <
                0)
            return;
    }
    s->slot->resp.arg[0] = mismatch;
    bdr_sched_respond(s);
}

static void coll_end(slave_t *s)
{
    coll_t *c = s->coll;
    s->coll = NULL;
    c->ended++;
    bdr_coll_maybe_free(c);
    bdr_sched_respond(s);
}

void bdr_coll_req_begin(slave_t *s, const bd_req_t *r) { coll_begin(s, r); }

void bdr_coll_req_waitany(slave_t *s, const bd_req_t *r)
{
    coll_waitany(s, r->code == BD_REQ_COLL_TESTANY);
}

/* The instance a request inside a collective is for: the one the request
 * names (BD_COLL_ADDR: nonblocking collectives may overlap), else the one s
 * began.  NULL when the job fails. */
static coll_t *instance_of(slave_t *s, const bd_req_t *r)
{
    if (r->flags & BD_COLL_ADDR) {
        coll_t *c = bdr_coll_find(r->ctx, r->rid);
        if (!c || r->myrank < 0 || r->myrank >= c->comm->size ||
            c->comm->world[r->myrank] != s->world) {
            bdr_master_fail(1,
                            "rank %d sent collective request %u for an unknown collective "
                            "(context %d, call %llu)",
                            s->world, r->code, r->ctx, (unsigned long long)r->rid);
            return NULL;
        }
        s->coll = c;
        s->coll_rank = r->myrank;
    }
    if (!s->coll) {
        bdr_master_fail(1, "rank %d sent collective request %u outside a collective", s->world,
                        r->code);
        return NULL;
    }
    return s->coll;
}

coll_t *bdr_coll_instance(slave_t *s, const bd_req_t *r) { return instance_of(s, r); }

void bdr_coll_req_put(slave_t *s, const bd_req_t *r)
{
    if (instance_of(s, r))
        coll_put(s);
}

void bdr_coll_req_arrive(slave_t *s, const bd_req_t *r)
{
    if (instance_of(s, r))
        coll_test(s, 0);
}

void bdr_coll_req_test(slave_t *s, const bd_req_t *r)
{
    if (instance_of(s, r))
        coll_test(s, 1);
}

void bdr_coll_req_wait(slave_t *s, const bd_req_t *r)
{
    if (instance_of(s, r))
        coll_wait(s);
}

void bdr_coll_req_get(slave_t *s, const bd_req_t *r)
{
    if (instance_of(s, r))
        coll_get(s);
}

void bdr_coll_req_end(slave_t *s, const bd_req_t *r)
{
    if (instance_of(s, r))
        coll_end(s);
}

void bdr_coll_describe(slave_t *s, char *buf, size_t len)
{
    coll_t *c = s->coll;
    if (!c) {
        snprintf(buf, len, "waits in a collective");
        return;
    }
    char missing[256] = "";
    size_t m = 0;
    int shown = 0;
    int all_ranks = bdr_coll_coord_node(c) == g_m.node && bdr_coll_is_coord_kind(c->d.kind);
    for (int r = 0; r < c->comm->size && m + 16 < sizeof missing; r++) {
        if (c->rank_arrived[r] || (!all_ranks && bdr_coll_rank_node(c, r) != g_m.node))
            continue;
        if (shown++ == 16) {
            m += (size_t)snprintf(missing + m, sizeof missing - m, " ...");
            break;
        }
        m += (size_t)snprintf(missing + m, sizeof missing - m, " %d", c->comm->world[r]);
    }
    char nodes[160] = "";
    if (g_m.nnodes > 1) {
        size_t k = (size_t)snprintf(
            nodes, sizeof nodes,
            "; node %d coordinates; waits for DONE from nodes:", bdr_coll_coord_node(c));
        for (int n = 0; n < g_m.nnodes && k + 8 < sizeof nodes; n++)
            if (bdr_coll_sends_to(c, n, g_m.node) && !c->done_from[n])
                k += (size_t)snprintf(nodes + k, sizeof nodes - k, " %d", n);
    }
    char in[96];
    if (s->slot->req.code == BD_REQ_COLL_WAITANY)
        snprintf(in, sizeof in, "MPI_Waitany/Waitsome for one of %lld collectives, such as ",
                 (long long)s->slot->req.arg[0]);
    else if (c->d.api & BD_API_NB)
        snprintf(in, sizeof in, "MPI_Wait/Waitall for ");
    else
        in[0] = 0;
    snprintf(buf, len,
             "waits in %s%s (root %d) on communicator context %d (call %llu): %d of its %d ranks "
             "here arrived; no contribution yet from world ranks:%s%s",
             in, bdr_coll_call_name(&c->d), c->d.root, c->ctx, (unsigned long long)c->seq,
             c->arrived, c->nlocal, missing, nodes);
}

/* Reads ahead (coll_stage.c): the rank the run queue serves next, when it
 * waits in a collective whose results it may GET, gets its pieces read
 * while another rank runs.  Only kinds whose pieces have one reader. */
static int ra_wanted(const slave_t *s)
{
    coll_t *c = s->coll;
    if (!c || c->fd < 0 || (s->ra_ctx == c->ctx && s->ra_seq == c->seq + 1))
        return 0;
    int k = c->d.kind;
    if (k != BD_COLL_ALLTOALL && k != BD_COLL_SCATTER &&
        !(k == BD_COLL_GATHER && s->coll_rank == c->d.root))
        return 0;
    return rank_ready(c, s->coll_rank);
}

void bdr_coll_readahead(void)
{
    if (!g_m.colls || !g_m.hdr->job.mem_budget || g_m.stopping)
        return;
    slave_t *s = bdr_sched_peek(NULL);
    if (!s || !ra_wanted(s))
        return;
    coll_t *c = s->coll;
    for (int peer = 0; peer < c->comm->size; peer++) {
        const piece_t *p = get_piece(c, s->coll_rank, peer);
        if (p && !p->taken && bdr_stage_readahead(c, p) < 0)
            return; /* no room now: the loop tries again at its next turn */
    }
    s->ra_ctx = c->ctx;
    s->ra_seq = c->seq + 1; /* 0 never names an instance */
}
