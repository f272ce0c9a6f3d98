/* Collectives on the slave side: describe the call to the master, PUT the
 * outgoing pieces through the window, WAIT, GET the incoming pieces, END
 * (see src/master/coll.c).  Communicators of size one are done locally.
 * Reductions with user-defined operations run here, as an ordered chain
 * over the communicator's hidden context, because the master cannot call
 * the program's functions. */
#include <stdlib.h>
#include <string.h>

#include "bd_dtype.h"
#include "core.h"
#include "dt.h"
#include "mpi_int.h"
#include "nbc.h"
#include "objects.h"
#include "request.h"

/* ---------------------------------------------------------------- user ops */

int bdl_user_op_fn(MPI_Op op, bdl_user_op_t **out)
{
    int i = op - (BDMPI_OP_PREDEFINED_MAX + 1);
    if (i < 0 || i >= bdl_g.nops || !bdl_g.ops[i].used)
        return -1;
    *out = &bdl_g.ops[i];
    return 0;
}

int MPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    if (!user_fn)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Op_create", "NULL function");
    int i = 0;
    while (i < bdl_g.nops && bdl_g.ops[i].used)
        i++;
    if (i == bdl_g.nops) {
        int n = bdl_g.nops ? bdl_g.nops * 2 : 8;
        bdl_user_op_t *t = realloc(bdl_g.ops, (size_t)n * sizeof *t);
        if (!t)
            return bdl_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Op_create", "out of memory");
        memset(t + bdl_g.nops, 0, (size_t)(n - bdl_g.nops) * sizeof *t);
        bdl_g.ops = t;
        bdl_g.nops = n;
    }
    bdl_g.ops[i] = (bdl_user_op_t){user_fn, commute, 1};
    *op = BDMPI_OP_PREDEFINED_MAX + 1 + i;
    return MPI_SUCCESS;
}

int MPI_Op_free(MPI_Op *op)
{
    bdl_user_op_t *u;
    if (!op || bdl_user_op_fn(*op, &u) < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_OP, "MPI_Op_free",
                         "invalid or predefined operation %d", op ? *op : 0);
    u->used = 0;
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}

int MPI_Op_commutative(MPI_Op op, int *commute)
{
    bdl_user_op_t *u;
    if (op > 0 && op <= BDMPI_OP_PREDEFINED_MAX) {
        *commute = 1;
        return MPI_SUCCESS;
    }
    if (bdl_user_op_fn(op, &u) < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_OP, "MPI_Op_commutative", "invalid operation %d",
                         op);
    *commute = u->commute;
    return MPI_SUCCESS;
}

/* Check op against dt (descriptor t); *user gets the user op or NULL.  A
 * predefined op applies to a derived type whose basic elements are all of
 * one predefined type it is defined for (MPI 3.1 5.9.2). */
static int check_op(MPI_Comm comm, const char *call, MPI_Op op, MPI_Datatype dt, const bdl_dt_t *t,
                    bdl_user_op_t **user)
{
    *user = NULL;
    if (op > 0 && op <= BDMPI_OP_PREDEFINED_MAX) {
        if (t->basic <= 0 || !bd_op_valid_for(op, t->basic))
            return bdl_error(comm, MPI_ERR_OP, call, "%s is not defined for datatype %d%s",
                             bd_op_name(op), dt,
                             t->basic < 0 ? " (its elements are of several predefined types)" : "");
        return MPI_SUCCESS;
    }
    if (bdl_user_op_fn(op, user) < 0)
        return bdl_error(comm, MPI_ERR_OP, call, "invalid operation %d", op);
    return MPI_SUCCESS;
}

/* inout = in op inout */
static void apply_op(MPI_Op op, bdl_user_op_t *u, MPI_Datatype dt, const void *in, void *inout,
                     int count)
{
    if (u) {
        MPI_Datatype d = dt;
        u->fn((void *)in, inout, &count, &d);
    } else {
        bd_op_apply(op, dt, in, inout, (size_t)count);
    }
}

/* MPI forbids an output buffer to overlap an input buffer of the same call
 * (MPI 3.1 2.6.2); MPI_IN_PLACE is the way to share.  MPI_ERR_BUFFER when
 * count elements of st at sbuf and rcount elements of rt at rbuf overlap
 * (MPI_BOTTOM and empty buffers are never checked: absolute addresses). */
static int check_alias(MPI_Comm comm, const char *call, const void *sbuf, uint64_t scount,
                       const bdl_dt_t *st, const void *rbuf, uint64_t rcount, const bdl_dt_t *rt)
{
    if (!sbuf || !rbuf || sbuf == MPI_IN_PLACE || rbuf == MPI_IN_PLACE || !scount || !rcount ||
        !st->true_extent || !rt->true_extent)
        return MPI_SUCCESS;
    intptr_t s0 = (intptr_t)sbuf + st->true_lb, r0 = (intptr_t)rbuf + rt->true_lb;
    intptr_t s1 = s0 + (intptr_t)((scount - 1) * (uint64_t)st->extent) + st->true_extent;
    intptr_t r1 = r0 + (intptr_t)((rcount - 1) * (uint64_t)rt->extent) + rt->true_extent;
    if (s0 < r1 && r0 < s1)
        return bdl_error(comm, MPI_ERR_BUFFER, call,
                         "the send and receive buffers overlap (aliased arguments; use "
                         "MPI_IN_PLACE)");
    return MPI_SUCCESS;
}

int MPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype, MPI_Op op)
{
    bdl_dt_t *t = NULL;
    bdl_user_op_t *u;
    int rc;
    if (count < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_COUNT, "MPI_Reduce_local", "invalid count %d",
                         count);
    if ((rc = bdl_dt_check(MPI_COMM_WORLD, "MPI_Reduce_local", "", datatype, &t)) ||
        (rc = check_op(MPI_COMM_WORLD, "MPI_Reduce_local", op, datatype, t, &u)))
        return rc;
    if (inbuf == MPI_IN_PLACE || inoutbuf == MPI_IN_PLACE)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_BUFFER, "MPI_Reduce_local",
                         "MPI_IN_PLACE is not allowed (%s)",
                         inbuf == MPI_IN_PLACE ? "inbuf" : "inoutbuf");
    if (count > 0 && t->predefined && (!inbuf || !inoutbuf))
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_BUFFER, "MPI_Reduce_local", "%s is NULL",
                         inbuf ? "inoutbuf" : "inbuf");
    if ((rc = check_alias(MPI_COMM_WORLD, "MPI_Reduce_local", inbuf, (uint64_t)count, t, inoutbuf,
                          (uint64_t)count, t)))
        return rc;
    if (u || (t->predefined && t->contig)) { /* pair types pack apart */
        apply_op(op, u, datatype, inbuf, inoutbuf, count);
        return MPI_SUCCESS;
    }
    /* Predefined op on a derived type: fold the packed basic elements. */
    uint64_t n = (uint64_t)count * t->psize;
    char *a = malloc(n + 1), *b = malloc(n + 1);
    if (!a || !b)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory in MPI_Reduce_local of %llu bytes",
                  (unsigned long long)n);
    bdl_dt_pack(t, inbuf, (uint64_t)count, 0, a, n);
    bdl_dt_pack(t, inoutbuf, (uint64_t)count, 0, b, n);
    bd_op_apply(op, t->basic, a, b, (size_t)count * t->nelem);
    bdl_dt_unpack(t, inoutbuf, (uint64_t)count, 0, b, n);
    free(a);
    free(b);
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- transport */

/* The instance that PUT, WAIT, GET and END address: the one just begun, or
 * the nonblocking one being completed. */
static struct {
    int ctx, rank;
    uint64_t seq;
} g_cur;

static bd_req_t *coll_req(uint32_t code)
{
    bd_req_t *r = bdl_req_begin(code);
    r->flags = BD_COLL_ADDR;
    r->ctx = g_cur.ctx;
    r->myrank = g_cur.rank;
    r->rid = g_cur.seq;
    return r;
}

static void coll_begin(bdl_comm_t *c, int kind, int root, int dtype, int op, uint64_t count,
                       int api)
{
    bd_coll_desc_t d = {.kind = kind,
                        .root = root,
                        .dtype = dtype,
                        .op = op,
                        .count = count,
                        .seq = c->coll_seq++,
                        .api = api};
    g_cur.ctx = c->ctx;
    g_cur.rank = c->rank;
    g_cur.seq = d.seq;
    bd_req_t *r = bdl_req_begin(BD_REQ_COLL_BEGIN);
    r->ctx = c->ctx;
    r->myrank = c->rank;
    memcpy(bdl_g.win, &d, sizeof d);
    bdl_rpc();
}

static void coll_simple(uint32_t code)
{
    coll_req(code);
    bdl_rpc();
}

/* Batches PUT segments into the window. */
typedef struct {
    uint64_t pos;
    uint32_t nseg;
} put_t;

static void put_flush(put_t *p)
{
    if (!p->nseg)
        return;
    memcpy(bdl_g.win, &p->nseg, sizeof p->nseg);
    coll_req(BD_REQ_COLL_PUT);
    bdl_rpc();
    p->nseg = 0;
    p->pos = 8;
}

/* Append the packed stream of count elements of t at buf as bytes
 * [at, at + its length) of the piece for peer, which has total bytes. */
static void put_part(put_t *p, int peer, const void *buf, uint64_t count, const bdl_dt_t *t,
                     uint64_t at_off, uint64_t total)
{
    uint64_t len = count * t->psize;
    const char *contig = bdl_dt_contig(t, buf, count);
    uint64_t off = 0;
    while (off < len) {
        uint64_t room = bdl_g.window - p->pos;
        if (room < sizeof(bd_seg_t) + 64) {
            put_flush(p);
            continue;
        }
        uint64_t chunk = len - off;
        if (chunk > room - sizeof(bd_seg_t) - 8)
            chunk = (room - sizeof(bd_seg_t) - 8) & ~7ull;
        bd_seg_t seg = {peer, (uint32_t)chunk, at_off + off, total};
        memcpy(bdl_g.win + p->pos, &seg, sizeof seg);
        if (contig)
            memcpy(bdl_g.win + p->pos + sizeof seg, contig + off, chunk);
        else
            bdl_dt_pack(t, buf, count, off, bdl_g.win + p->pos + sizeof seg, chunk);
        p->pos += sizeof seg + ((chunk + 7) & ~7ull);
        p->nseg++;
        off += chunk;
    }
}

/* Append the packed stream of count elements of t at buf as the piece for peer. */
static void put_typed(put_t *p, int peer, const void *buf, uint64_t count, const bdl_dt_t *t)
{
    put_part(p, peer, buf, count, t, 0, count * t->psize);
}

/* Set when the master answered a GET of a whole piece whose sender's size
 * differs from what this rank expects (counts that disagree); cleared and
 * turned into the call's MPI_ERR_TRUNCATE by nbc_get. */
static int g_get_mismatch;
/* The MPI call being run (set by GET_COMM), for the messages of its errors. */
static const char *g_coll_call;

/* Batches GET segments; data lands in the given destinations. */
#define GET_MAX_SEGS 1024
typedef struct {
    bd_seg_t segs[GET_MAX_SEGS];
    char *dst[GET_MAX_SEGS];         /* contiguous: where the bytes go; else the buffer */
    const bdl_dt_t *t[GET_MAX_SEGS]; /* NULL: contiguous destination */
    uint64_t cnt[GET_MAX_SEGS];      /* elements of the buffer */
    uint64_t soff[GET_MAX_SEGS];     /* offset of the segment in the buffer's packed stream */
    uint32_t nseg;
    uint64_t bytes;
} get_t;

static void get_flush(get_t *g)
{
    if (!g->nseg)
        return;
    memcpy(bdl_g.win, &g->nseg, sizeof g->nseg);
    memcpy(bdl_g.win + 8, g->segs, (size_t)g->nseg * sizeof(bd_seg_t));
    coll_req(BD_REQ_COLL_GET);
    bdl_rpc();
    if (bdl_resp()->arg[0])
        g_get_mismatch = 1;
    const char *src = bdl_g.win;
    for (uint32_t i = 0; i < g->nseg; i++) {
        if (!g->t[i]) {
            bdl_lib_mem_discard(g->dst[i], g->segs[i].len);
            memcpy(g->dst[i], src, g->segs[i].len);
        } else {
            bdl_dt_unpack(g->t[i], g->dst[i], g->cnt[i], g->soff[i], src, g->segs[i].len);
        }
        src += g->segs[i].len;
    }
    g->nseg = 0;
    g->bytes = 0;
}

/* Fetch len bytes of the piece from peer, starting at byte off of it, into
 * the first len bytes of the packed stream of count elements of t at buf
 * (unpacked on arrival). */
/* whole: 0, or the size the sender's whole piece must have (off is 0). */
static void get_part(get_t *g, int peer, uint64_t off, void *buf, uint64_t count, const bdl_dt_t *t,
                     uint64_t len, uint64_t whole)
{
    char *contig = bdl_dt_contig(t, buf, count);
    uint64_t done = 0;
    uint64_t limit = bdl_g.window - 8 - GET_MAX_SEGS * sizeof(bd_seg_t);
    if (limit > bdl_g.window / 2)
        limit = bdl_g.window / 2;
    while (done < len) {
        if (g->nseg == GET_MAX_SEGS || g->bytes >= limit) {
            get_flush(g);
            continue;
        }
        uint64_t chunk = len - done;
        if (chunk > limit - g->bytes)
            chunk = limit - g->bytes;
        g->segs[g->nseg] = (bd_seg_t){peer, (uint32_t)chunk, off + done, whole};
        g->dst[g->nseg] = contig ? contig + done : buf;
        g->t[g->nseg] = contig ? NULL : t;
        g->cnt[g->nseg] = count;
        g->soff[g->nseg] = done;
        g->nseg++;
        g->bytes += chunk;
        done += chunk;
    }
}

/* Fetch the piece from peer, starting at byte off of it, into count elements
 * of t at buf. */
static void get_typed(get_t *g, int peer, uint64_t off, void *buf, uint64_t count,
                      const bdl_dt_t *t)
{
    get_part(g, peer, off, buf, count, t, count * t->psize, 0);
}

/* All of peer's piece, which must be count elements of t. */
static void get_whole(get_t *g, int peer, void *buf, uint64_t count, const bdl_dt_t *t)
{
    get_part(g, peer, 0, buf, count, t, count * t->psize, count * t->psize);
}

static get_t *get_new(void)
{
    get_t *g = malloc(sizeof *g);
    if (!g)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory in a collective");
    g->nseg = 0;
    g->bytes = 0;
    return g;
}

/* buf + off without pointer arithmetic on MPI_BOTTOM. */
static char *at(const void *buf, int64_t off) { return (char *)((intptr_t)buf + (intptr_t)off); }

/* Elements and byte displacement of rank r's block in a v-style or regular buffer. */
static uint64_t vcount(const int counts[], int count, int r)
{
    return (uint64_t)(counts ? counts[r] : count);
}

static int64_t voff(const int displs[], int count, int r, const bdl_dt_t *t)
{
    return displs ? (int64_t)displs[r] * t->extent : (int64_t)r * count * t->extent;
}

/* ---------------------------------------------------------------- completion */

/* What a rank still has to do once its part of a collective is complete:
 * its GET plan.  A blocking call does it at once; a nonblocking one keeps it
 * in its request (with copies of the arrays and references to the types)
 * until MPI_Wait/MPI_Test find the collective complete. */
enum {
    G_NONE,    /* nothing to fetch */
    G_PIECE,   /* count elements of t at buf from the piece of `peer`, from byte off */
    G_BLOCKS,  /* block j (0 <= j < nblk) of buf from peer pfirst + j, but not from skip */
    G_TBLOCKS, /* the same, each sender's piece starting with a table (see put_table) */
    G_FOLD,    /* pieces of peers first..last, count elements each from byte off, folded */
    G_SPLIT,   /* communicator creation: {ctx, rank, size} and the members, to fin */
};

struct bdl_nbc {
    int ctx, rank, size;
    MPI_Comm comm; /* for a blocking call's error: its handle and name */
    const char *call;
    uint64_t seq;
    int ready, done, owns;
    int err; /* what the request reports (MPI_ERR_TRUNCATE) */
    int gkind;
    int whole; /* G_PIECE, G_BLOCKS: each piece read is all the sender sent */
    int peer;
    uint64_t off;
    void *buf;
    uint64_t count;
    bdl_dt_t *t;
    int nblk, pfirst, skip; /* G_BLOCKS, G_TBLOCKS */
    int tidx, tn;           /* G_TBLOCKS: this rank's entry of the senders' tables of tn */
    int *counts, *displs;   /* v-style counts and displacements (in extents) per block */
    bdl_dt_t **tv;          /* MPI_Alltoallw: per-block types ... */
    int *bdispls;           /* ... and displacements in bytes */
    int first, last;        /* G_FOLD */
    MPI_Op op;
    int user; /* G_FOLD with the user op uop (else op is predefined) */
    bdl_user_op_t uop;
    MPI_Datatype dt;
    bdl_nbc_fin_t fin; /* G_SPLIT */
    void *fin_arg;
    int nreq; /* not through the master: complete when these are */
    MPI_Request *reqs;
};

static void nbc_init(bdl_nbc_t *nb, const bdl_comm_t *c)
{
    memset(nb, 0, sizeof *nb);
    nb->comm = (MPI_Comm)(c - bdl_g.comms);
    nb->call = g_coll_call;
    nb->ctx = c->ctx;
    nb->rank = c->rank;
    nb->size = c->size;
    nb->gkind = G_NONE;
    nb->nblk = c->size;
    nb->skip = c->rank;
}

/* Fold the pieces of peers first..last in rank order, the accumulator on
 * the left (correct for non-commutative ops), into buf.  User ops see
 * buffers laid out as the type; predefined ones fold the packed basic
 * elements, as the master does. */
static void fold(bdl_nbc_t *nb)
{
    uint64_t k = nb->count;
    const bdl_dt_t *t = nb->t;
    if (!k || !t->psize || nb->first > nb->last)
        return;
    get_t *g = get_new();
    if (!nb->user) {
        uint64_t n = k * t->psize;
        char *acc = malloc(n), *tmp = malloc(n);
        if (!acc || !tmp)
            bdl_fatal(MPI_ERR_NO_MEM, "out of memory folding a reduction of %llu bytes",
                      (unsigned long long)n);
        for (int r = nb->first; r <= nb->last; r++) {
            get_typed(g, r, nb->off, r == nb->first ? acc : tmp, n, bdl_dt_byte());
            get_flush(g);
            if (r != nb->first)
                bd_op_apply(nb->op, t->basic, tmp, acc, (size_t)(k * t->nelem));
        }
        bdl_dt_unpack(t, nb->buf, k, 0, acc, n);
        free(acc);
        free(tmp);
        free(g);
        return;
    }
    void *acc, *tmp;
    void *acc_mem = bdl_dt_alloc(t, k, &acc), *tmp_mem = bdl_dt_alloc(t, k, &tmp);
    for (int r = nb->first; r <= nb->last; r++) {
        get_typed(g, r, nb->off, r == nb->first ? acc : tmp, k, t);
        get_flush(g);
        if (r == nb->first)
            continue;
        apply_op(nb->op, &nb->uop, nb->dt, acc, tmp, (int)k); /* tmp = acc op v_r */
        void *x = acc;
        acc = tmp;
        tmp = x;
        x = acc_mem;
        acc_mem = tmp_mem;
        tmp_mem = x;
    }
    free(g);
    bdl_dt_copy(t, acc, k, t, nb->buf, k, k * t->psize);
    free(acc_mem);
    free(tmp_mem);
}

static const bdl_dt_t *blk_type(const bdl_nbc_t *nb, int j) { return nb->tv ? nb->tv[j] : nb->t; }

static char *blk_at(const bdl_nbc_t *nb, int j)
{
    return at(nb->buf,
              nb->bdispls ? nb->bdispls[j] : voff(nb->displs, (int)nb->count, j, blk_type(nb, j)));
}

/* G_TBLOCKS: first every sender's table entry for this rank (where its
 * block starts and ends), then the blocks. */
static void get_tblocks(bdl_nbc_t *nb)
{
    int n = nb->nblk;
    uint64_t *ent = malloc((size_t)(n ? n : 1) * 2 * sizeof *ent);
    get_t *g = get_new();
    if (!ent)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory in a collective");
    for (int j = 0; j < n; j++)
        get_typed(g, nb->pfirst + j, 8 * (uint64_t)nb->tidx, &ent[2 * j], 16, bdl_dt_byte());
    get_flush(g);
    for (int j = 0; j < n; j++) {
        const bdl_dt_t *t = blk_type(nb, j);
        uint64_t k = vcount(nb->counts, (int)nb->count, j);
        uint64_t len = ent[2 * j + 1] - ent[2 * j], cap = k * t->psize;
        if (len > cap) {
            nb->err = MPI_ERR_TRUNCATE;
            len = cap;
        }
        get_part(g, nb->pfirst + j, 8 * (uint64_t)nb->tn + ent[2 * j], blk_at(nb, j), k, t, len, 0);
    }
    get_flush(g);
    free(g);
    free(ent);
}

static void get_split(bdl_nbc_t *nb)
{
    int32_t head[3];
    get_t *g = get_new();
    get_typed(g, -1, 0, head, sizeof head, bdl_dt_byte());
    get_flush(g);
    int *world = NULL;
    if (head[0]) {
        world = malloc((size_t)head[2] * sizeof(int));
        if (!world)
            bdl_fatal(MPI_ERR_NO_MEM, "out of memory creating a communicator of %d ranks", head[2]);
        get_typed(g, -1, sizeof head, world, (uint64_t)head[2] * sizeof(int), bdl_dt_byte());
        get_flush(g);
    }
    free(g);
    nb->fin(nb->fin_arg, head[0], head[1], head[2], world);
}

static void nbc_get(bdl_nbc_t *nb)
{
    g_get_mismatch = 0;
    switch (nb->gkind) {
    case G_PIECE:
        if (nb->count * nb->t->psize != 0) {
            get_t *g = get_new();
            if (nb->whole)
                get_whole(g, nb->peer, nb->buf, nb->count, nb->t);
            else
                get_typed(g, nb->peer, nb->off, nb->buf, nb->count, nb->t);
            get_flush(g);
            free(g);
        }
        break;
    case G_BLOCKS: {
        get_t *g = get_new();
        for (int j = 0; j < nb->nblk; j++)
            if (nb->pfirst + j != nb->skip && nb->whole)
                get_whole(g, nb->pfirst + j, blk_at(nb, j), vcount(nb->counts, (int)nb->count, j),
                          blk_type(nb, j));
            else if (nb->pfirst + j != nb->skip)
                get_typed(g, nb->pfirst + j, 0, blk_at(nb, j),
                          vcount(nb->counts, (int)nb->count, j), blk_type(nb, j));
        get_flush(g);
        free(g);
        break;
    }
    case G_TBLOCKS: get_tblocks(nb); break;
    case G_FOLD: fold(nb); break;
    case G_SPLIT: get_split(nb); break;
    default: break;
    }
    if (g_get_mismatch)
        nb->err = MPI_ERR_TRUNCATE;
    g_get_mismatch = 0;
}

/* The types and arrays a nonblocking request holds. */
static void nbc_release(bdl_nbc_t *nb)
{
    if (!nb->owns)
        return;
    bdl_dt_release(nb->t);
    if (nb->tv)
        for (int j = 0; j < nb->nblk; j++)
            bdl_dt_release(nb->tv[j]);
    free(nb->tv);
    free(nb->counts);
    free(nb->displs);
    free(nb->bdispls);
    free(nb->reqs);
    nb->t = NULL;
    nb->tv = NULL;
    nb->counts = nb->displs = nb->bdispls = NULL;
    nb->reqs = NULL;
    nb->owns = 0;
}

static void nbc_finish(bdl_nbc_t *nb)
{
    g_cur.ctx = nb->ctx;
    g_cur.rank = nb->rank;
    g_cur.seq = nb->seq;
    nbc_get(nb);
    coll_simple(BD_REQ_COLL_END);
    nb->done = 1;
    nbc_release(nb);
}

/* A request made of the library's own point-to-point requests (nonblocking
 * neighbourhood collectives): test or wait for all of them.  Their errors
 * are the collective's, so MPI_COMM_WORLD's handler is not called here. */
static int reqs_progress(bdl_nbc_t *nb, int blocking)
{
    int flag = 1, rc;
    if (blocking)
        rc = bdl_req_waitall_quiet(nb->nreq, nb->reqs);
    else
        rc = bdl_req_testall_quiet(nb->nreq, nb->reqs, &flag);
    if (rc)
        nb->err = MPI_ERR_TRUNCATE;
    if (!flag && rc == MPI_SUCCESS)
        return 0;
    nb->done = 1;
    nbc_release(nb);
    return 1;
}

int bdl_nbc_progress(bdl_nbc_t *nb, int blocking)
{
    if (nb->done)
        return 1;
    if (nb->reqs)
        return reqs_progress(nb, blocking);
    if (!nb->ready) {
        g_cur.ctx = nb->ctx;
        g_cur.rank = nb->rank;
        g_cur.seq = nb->seq;
        coll_simple(blocking ? BD_REQ_COLL_WAIT : BD_REQ_COLL_TEST);
        if (!blocking && !bdl_resp()->flag)
            return 0;
        nb->ready = 1;
    }
    nbc_finish(nb);
    return 1;
}

int bdl_nbc_poll(bdl_nbc_t **nbs, int n, int block, int yield)
{
    int done = 0, k = 0, own = 0;
    for (int i = 0; i < n; i++)
        if (nbs[i]->done || nbs[i]->ready)
            done += bdl_nbc_progress(nbs[i], 0);
    if (done)
        return done;
    /* Those of the library's own requests are polled here, the rest in the master. */
    for (int i = 0; i < n; i++)
        if (nbs[i]->reqs) {
            own++;
            done += reqs_progress(nbs[i], 0);
        }
    if (done || own == n)
        return done;
    if (own)
        block = 0;
    if ((uint64_t)n * (sizeof(bd_coll_id_t) + 1) > bdl_g.window)
        bdl_fatal(MPI_ERR_INTERN, "too many nonblocking collective requests (%d) in one call", n);
    for (int i = 0; i < n; i++) {
        if (nbs[i]->reqs)
            continue;
        bd_coll_id_t id = {nbs[i]->ctx, nbs[i]->rank, nbs[i]->seq};
        memcpy(bdl_g.win + (size_t)k++ * sizeof id, &id, sizeof id);
    }
    bd_req_t *r = bdl_req_begin(block ? BD_REQ_COLL_WAITANY : BD_REQ_COLL_TESTANY);
    r->arg[0] = k;
    r->arg[1] = !yield;
    bdl_rpc();
    if (!bdl_resp()->flag)
        return 0;
    uint8_t flags[k];
    memcpy(flags, bdl_g.win + (size_t)k * sizeof(bd_coll_id_t), (size_t)k);
    for (int i = 0, j = 0; i < n; i++) {
        if (nbs[i]->reqs)
            continue;
        if (flags[j++]) {
            nbs[i]->ready = 1;
            done += bdl_nbc_progress(nbs[i], 0);
        }
    }
    return done;
}

int bdl_nbc_done(const bdl_nbc_t *nb) { return nb->done; }

int bdl_nbc_err(const bdl_nbc_t *nb) { return nb->err; }

void bdl_nbc_free(bdl_nbc_t *nb)
{
    if (!nb)
        return;
    nbc_release(nb);
    free(nb);
}

static int *dup_ints(const int *a, int n)
{
    if (!a)
        return NULL;
    int *b = malloc((size_t)(n ? n : 1) * sizeof(int));
    if (!b)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory starting a nonblocking collective");
    memcpy(b, a, (size_t)n * sizeof(int));
    return b;
}

/* ---------------------------------------------------------------- the request kind */

static void coll_req_progress(bdl_request_t *q, int blocking)
{
    if (!q->done)
        q->done = bdl_nbc_progress(q->impl, blocking);
}

/* One poll of pending collectives: they wait in the master only when
 * nothing else is pending, and give the slot away only when no kind is
 * polled after them. */
static int coll_req_poll(bdl_request_t **qs, int n, const bdl_req_poll_t *p)
{
    bdl_nbc_t **v = malloc((size_t)(n ? n : 1) * sizeof *v);
    if (!v)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory polling %d requests", n);
    for (int i = 0; i < n; i++)
        v[i] = qs[i]->impl;
    int k = bdl_nbc_poll(v, n, p->block && !p->others, !p->later);
    free(v);
    for (int i = 0; i < n; i++)
        qs[i]->done = bdl_nbc_done(qs[i]->impl);
    return k;
}

static void coll_req_complete(bdl_request_t *q)
{
    q->err = q->status.MPI_ERROR = bdl_nbc_err(q->impl);
}

static void coll_req_release(bdl_request_t *q)
{
    bdl_nbc_free(q->impl);
    q->impl = NULL;
}

static int coll_req_cancel(bdl_request_t *q, MPI_Request h)
{
    (void)q;
    return bdl_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Cancel",
                     "request %d is a nonblocking collective, which cannot be cancelled "
                     "(MPI 3.1 5.12)",
                     h);
}

static int coll_req_free(bdl_request_t *q, MPI_Request *h)
{
    (void)q;
    return bdl_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Request_free",
                     "request %d is a nonblocking collective, which cannot be freed "
                     "(MPI 3.1 5.12): complete it with MPI_Wait or MPI_Test",
                     *h);
}

static const bdl_req_ops_t coll_req_ops = {
    .progress = coll_req_progress,
    .poll = coll_req_poll,
    .poll_order = 1,
    .complete = coll_req_complete,
    .release = coll_req_release,
    .cancel = coll_req_cancel,
    .free = coll_req_free,
};

/* A nonblocking collective's request: complete already if nb is. */
static MPI_Request req_new_coll(bdl_nbc_t *nb)
{
    int h = bdl_req_new(&coll_req_ops);
    bdl_request_t *q = &bdl_g.reqs[h];
    q->impl = nb;
    q->done = bdl_nbc_done(nb);
    bdl_status_empty(&q->status);
    return h;
}

/* The rank's inputs are all PUT (or the communicator has one rank): a
 * blocking call completes now; a nonblocking one tells the master it has
 * arrived and returns a request (complete at once if its results are
 * already there). */
static int nbc_launch(bdl_nbc_t *nb, MPI_Request *request)
{
    if (!request) {
        if (nb->size > 1)
            bdl_nbc_progress(nb, 1);
        if (nb->err)
            return bdl_error(nb->comm, nb->err, nb->call ? nb->call : "collective",
                             "the data received does not match the receive buffer (the ranks' "
                             "counts or type signatures disagree)");
        return MPI_SUCCESS;
    }
    bdl_nbc_t *h = malloc(sizeof *h);
    if (!h)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory starting a nonblocking collective");
    *h = *nb;
    h->owns = 1;
    h->counts = dup_ints(nb->counts, nb->nblk);
    h->displs = dup_ints(nb->displs, nb->nblk);
    h->bdispls = dup_ints(nb->bdispls, nb->nblk);
    bdl_dt_retain(h->t);
    if (nb->tv) {
        h->tv = malloc((size_t)(nb->nblk ? nb->nblk : 1) * sizeof *h->tv);
        if (!h->tv)
            bdl_fatal(MPI_ERR_NO_MEM, "out of memory starting a nonblocking collective");
        for (int j = 0; j < nb->nblk; j++) {
            h->tv[j] = nb->tv[j];
            bdl_dt_retain(h->tv[j]);
        }
    }
    if (nb->size == 1) {
        h->done = 1;
        nbc_release(h);
    } else {
        coll_simple(BD_REQ_COLL_ARRIVE);
        if (bdl_resp()->flag) {
            h->ready = 1;
            nbc_finish(h);
        }
    }
    *request = req_new_coll(h);
    return MPI_SUCCESS;
}

/* A request that is complete from the start. */
MPI_Request bdl_nbc_completed(void)
{
    bdl_nbc_t *h = calloc(1, sizeof *h);
    if (!h)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory starting a nonblocking operation");
    h->done = 1;
    return req_new_coll(h);
}

/* A request that completes when the library's requests reqs[n] (taken
 * over) have; their errors are reported as truncation. */
MPI_Request bdl_nbc_of_requests(MPI_Request *reqs, int n)
{
    bdl_nbc_t *h = calloc(1, sizeof *h);
    if (!h)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory starting a nonblocking operation");
    h->owns = 1;
    h->nreq = n;
    h->reqs = reqs;
    h->done = !n;
    if (!n) {
        free(reqs);
        h->reqs = NULL;
    }
    return req_new_coll(h);
}

/* ---------------------------------------------------------------- checks */

#define GET_COMM(call)                                                                             \
    BDL_CHECK_INIT(call);                                                                          \
    g_coll_call = call;                                                                            \
    bdl_comm_t *c = bdl_comm_get(comm);                                                            \
    if (!c)                                                                                        \
        return bdl_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);               \
    if (nb_req && !request)                                                                        \
        return bdl_error(comm, MPI_ERR_ARG, call, "NULL request argument");

static int check_buf(MPI_Comm comm, const char *call, int count, MPI_Datatype dt, bdl_dt_t **t,
                     const char *what)
{
    if (count < 0)
        return bdl_error(comm, MPI_ERR_COUNT, call, "invalid %s%scount %d", what, *what ? " " : "",
                         count);
    return bdl_dt_check(comm, call, what, dt, t);
}

static int check_root(bdl_comm_t *c, MPI_Comm comm, const char *call, int root)
{
    if (root < 0 || root >= c->size)
        return bdl_error(comm, MPI_ERR_ROOT, call, "invalid root %d (communicator size %d)", root,
                         c->size);
    return MPI_SUCCESS;
}

/* The description's api field: which call, and whether it is nonblocking. */
static int api_of(int api, const MPI_Request *request) { return api | (request ? BD_API_NB : 0); }

/* Nonblocking collectives on intercommunicators (at the end of this file). */
struct a2a_side;
static int ic_barrier(bdl_comm_t *c, MPI_Request *request);
static int ic_bcast(bdl_comm_t *c, MPI_Comm comm, const char *call, void *buf, int count,
                    MPI_Datatype dt, int root, MPI_Request *request);
static int ic_gather(bdl_comm_t *c, MPI_Comm comm, const char *call, int api, const void *sendbuf,
                     int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                     const int *recvcounts, const int *displs, MPI_Datatype recvtype, int root,
                     int all, MPI_Request *request);
static int ic_scatter(bdl_comm_t *c, MPI_Comm comm, const char *call, int api, const void *sendbuf,
                      int sendcount, const int *sendcounts, const int *displs,
                      MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                      int root, MPI_Request *request);
static int ic_alltoall(bdl_comm_t *c, MPI_Comm comm, const char *call, int api, struct a2a_side *s,
                       struct a2a_side *rv, int vector, MPI_Request *request);
static int ic_reduce(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *sendbuf,
                     void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root, int all,
                     MPI_Request *request);
static int ic_redscat(bdl_comm_t *c, MPI_Comm comm, const char *call, int api, const void *sendbuf,
                      void *recvbuf, const int *counts, int block, MPI_Datatype dt, MPI_Op op,
                      MPI_Request *request);

/* ---------------------------------------------------------------- barrier, bcast */

static int barrier(const char *call, MPI_Comm comm, MPI_Request *request, int nb_req)
{
    GET_COMM(call);
    if (c->inter)
        return request ? ic_barrier(c, request) : bdl_inter_barrier(c, comm);
    bdl_nbc_t nb;
    nbc_init(&nb, c);
    if (c->size > 1) {
        coll_begin(c, BD_COLL_BARRIER, 0, 0, 0, 0, api_of(BD_API_BARRIER, request));
        nb.seq = g_cur.seq;
    }
    return nbc_launch(&nb, request);
}

int MPI_Barrier(MPI_Comm comm) { return barrier("MPI_Barrier", comm, NULL, 0); }

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    return barrier("MPI_Ibarrier", comm, request, 1);
}

/* Begin a broadcast of count elements of t at buf from root (size > 1). */
static void bcast_start(bdl_comm_t *c, bdl_nbc_t *nb, void *buf, uint64_t count, bdl_dt_t *t,
                        int root, int api)
{
    coll_begin(c, BD_COLL_BCAST, root, 0, 0, 0, api);
    nb->seq = g_cur.seq;
    if (c->rank == root) {
        put_t p = {8, 0};
        put_typed(&p, -1, buf, count, t);
        put_flush(&p);
    } else {
        *nb = (bdl_nbc_t){.ctx = nb->ctx,
                          .comm = nb->comm,
                          .call = nb->call,
                          .rank = nb->rank,
                          .size = nb->size,
                          .seq = nb->seq,
                          .gkind = G_PIECE,
                          .whole = 1,
                          .peer = 0,
                          .buf = buf,
                          .count = count,
                          .t = t};
    }
}

static void bcast_typed(bdl_comm_t *c, void *buf, uint64_t count, bdl_dt_t *t, int root)
{
    bdl_nbc_t nb;
    nbc_init(&nb, c);
    bcast_start(c, &nb, buf, count, t, root, BD_API_BCAST);
    nbc_launch(&nb, NULL);
}

static int bcast(const char *call, void *buffer, int count, MPI_Datatype datatype, int root,
                 MPI_Comm comm, MPI_Request *request, int nb_req)
{
    GET_COMM(call);
    if (c->inter)
        return request ? ic_bcast(c, comm, call, buffer, count, datatype, root, request)
                       : bdl_inter_bcast(c, comm, buffer, count, datatype, root);
    bdl_dt_t *t = NULL;
    int rc;
    if ((rc = check_buf(comm, call, count, datatype, &t, "")) ||
        (rc = check_root(c, comm, call, root)))
        return rc;
    bdl_nbc_t nb;
    nbc_init(&nb, c);
    if (c->size > 1)
        bcast_start(c, &nb, buffer, (uint64_t)count, t, root, api_of(BD_API_BCAST, request));
    return nbc_launch(&nb, request);
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    return bcast("MPI_Bcast", buffer, count, datatype, root, comm, NULL, 0);
}

int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
               MPI_Request *request)
{
    return bcast("MPI_Ibcast", buffer, count, datatype, root, comm, request, 1);
}

/* ---------------------------------------------------------------- reductions */

/* Ordered chain for user ops: rank k gets acc(0..k-1) from k-1, folds its
 * own value (acc op v_k, preserving order for non-commutative ops) and
 * passes it on.  prefix (if non-NULL) receives acc(0..k) (Scan) or
 * acc(0..k-1) (exclusive) at each rank; total goes to root (or -1: none). */
static int user_chain(bdl_comm_t *c, const void *in, int count, MPI_Datatype dt, const bdl_dt_t *t,
                      MPI_Op op, bdl_user_op_t *u, void *prefix, int exclusive, void *total,
                      int root)
{
    /* The user function sees buffers laid out as dt, so the accumulators
     * are too; messages carry the packed stream. */
    uint64_t k = (uint64_t)count;
    int ctx = c->ctx | BDL_CTX_INTERNAL;
    void *acc, *tmp;
    void *acc_mem = bdl_dt_alloc(t, k, &acc), *tmp_mem = bdl_dt_alloc(t, k, &tmp);
    uint64_t n = k * t->psize;
    /* Read in first: in place, it is also prefix or total. */
    bdl_dt_copy(t, in, k, t, acc, k, n);
    if (c->rank > 0) {
        bdl_recv_typed(ctx, c->rank - 1, 1, tmp, k, t, MPI_STATUS_IGNORE);
        if (prefix && exclusive)
            bdl_dt_copy(t, tmp, k, t, prefix, k, n);
        apply_op(op, u, dt, tmp, acc, count); /* acc = acc(0..k-1) op v_k */
    }
    if (prefix && !exclusive)
        bdl_dt_copy(t, acc, k, t, prefix, k, n);
    if (c->rank + 1 < c->size)
        bdl_send_typed(ctx, c->world[c->rank + 1], c->rank, 1, acc, k, t, 0, NULL);
    if (root >= 0) {
        if (c->rank == c->size - 1) {
            if (root == c->rank)
                bdl_dt_copy(t, acc, k, t, total, k, n);
            else
                bdl_send_typed(ctx, c->world[root], c->rank, 2, acc, k, t, 0, NULL);
        } else if (c->rank == root) {
            bdl_recv_typed(ctx, c->size - 1, 2, total, k, t, MPI_STATUS_IGNORE);
        }
    }
    free(acc_mem);
    free(tmp_mem);
    return MPI_SUCCESS;
}

/* Predefined op: the master folds the packed basic elements in rank order
 * (kind REDUCE/ALLREDUCE/SCAN/EXSCAN/REDSCAT); when want, outcount elements
 * of the result, from packed byte out_off on, are unpacked into out. */
static void master_fold(bdl_comm_t *c, bdl_nbc_t *nb, int kind, int api, const void *in,
                        uint64_t count, void *out, uint64_t outcount, uint64_t out_off, bdl_dt_t *t,
                        MPI_Op op, int root, int want)
{
    coll_begin(c, kind, root, t->basic, op, count * t->nelem, api);
    nb->seq = g_cur.seq;
    put_t p = {8, 0};
    put_typed(&p, -1, in, count, t);
    put_flush(&p);
    if (want && outcount * t->psize != 0) {
        nb->gkind = G_PIECE;
        nb->peer = -1;
        nb->off = out_off;
        nb->buf = out;
        nb->count = outcount;
        nb->t = t;
    }
}

/* A nonblocking reduction with a user op cannot run the chain (that needs
 * the ranks in between), so every rank PUTs its whole input at once, pieces
 * as in a gather (kind GATHER, ALLGATHER or, for reduce-scatter, ALLTOALL
 * with the input's blocks), and a receiving rank folds the pieces it needs
 * in rank order when the collective completes. */
static void user_fold_start(bdl_comm_t *c, bdl_nbc_t *nb, int kind, int root, int api,
                            const void *in, uint64_t count, bdl_dt_t *t, MPI_Datatype dt, MPI_Op op,
                            const bdl_user_op_t *u)
{
    coll_begin(c, kind, root, 0, 0, 0, api);
    nb->seq = g_cur.seq;
    put_t p = {8, 0};
    put_typed(&p, -1, in, count, t);
    put_flush(&p);
    nb->t = t;
    nb->count = count;
    nb->op = op;
    nb->uop = *u;
    nb->user = 1;
    nb->dt = dt;
}

static int reduce_common(const char *call, const void *sendbuf, void *recvbuf, int count,
                         MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm, int all,
                         MPI_Request *request, int nb_req)
{
    GET_COMM(call);
    if (c->inter && request)
        return ic_reduce(c, comm, call, sendbuf, recvbuf, count, dt, op, root, all, request);
    if (c->inter)
        return all ? bdl_inter_allreduce(c, comm, sendbuf, recvbuf, count, dt, op)
                   : bdl_inter_reduce(c, comm, sendbuf, recvbuf, count, dt, op, root);
    int rc;
    bdl_dt_t *t = NULL;
    bdl_user_op_t *u;
    if ((rc = check_buf(comm, call, count, dt, &t, "")) ||
        (rc = check_op(comm, call, op, dt, t, &u)))
        return rc;
    if (!all && (rc = check_root(c, comm, call, root)))
        return rc;
    int receives = all || c->rank == root;
    uint64_t k = (uint64_t)count;
    const void *in = sendbuf == MPI_IN_PLACE ? (receives ? recvbuf : NULL) : sendbuf;
    if (!in)
        return bdl_error(comm, MPI_ERR_BUFFER, call, "MPI_IN_PLACE is only allowed at the root");
    if (receives && (rc = check_alias(comm, call, sendbuf, k, t, recvbuf, k, t)))
        return rc;
    int api = api_of(all ? BD_API_ALLREDUCE : BD_API_REDUCE, request);
    bdl_nbc_t nb;
    nbc_init(&nb, c);
    if (c->size == 1) {
        if (in != recvbuf)
            bdl_dt_copy(t, in, k, t, recvbuf, k, k * t->psize);
    } else if (u && !request) {
        /* The chain reads in before it writes the total, so in place is fine. */
        int r0 = all ? 0 : root;
        user_chain(c, in, count, dt, t, op, u, NULL, 0, receives ? recvbuf : NULL, r0);
        if (all)
            bcast_typed(c, recvbuf, k, t, 0);
        return MPI_SUCCESS;
    } else if (u) {
        user_fold_start(c, &nb, all ? BD_COLL_ALLGATHER : BD_COLL_GATHER, all ? 0 : root, api, in,
                        k, t, dt, op, u);
        if (receives) {
            nb.gkind = G_FOLD;
            nb.first = 0;
            nb.last = c->size - 1;
            nb.buf = recvbuf;
        }
    } else {
        /* The master has all of in before it answers with the result: in place is fine. */
        master_fold(c, &nb, all ? BD_COLL_ALLREDUCE : BD_COLL_REDUCE, api, in, k, recvbuf, k, 0, t,
                    op, all ? 0 : root, receives);
    }
    return nbc_launch(&nb, request);
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm)
{
    return reduce_common("MPI_Reduce", sendbuf, recvbuf, count, datatype, op, root, comm, 0, NULL,
                         0);
}

int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request *request)
{
    return reduce_common("MPI_Ireduce", sendbuf, recvbuf, count, datatype, op, root, comm, 0,
                         request, 1);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm)
{
    return reduce_common("MPI_Allreduce", sendbuf, recvbuf, count, datatype, op, 0, comm, 1, NULL,
                         0);
}

int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm, MPI_Request *request)
{
    return reduce_common("MPI_Iallreduce", sendbuf, recvbuf, count, datatype, op, 0, comm, 1,
                         request, 1);
}

static int scan_common(const char *call, const void *sendbuf, void *recvbuf, int count,
                       MPI_Datatype dt, MPI_Op op, MPI_Comm comm, int exclusive,
                       MPI_Request *request, int nb_req)
{
    GET_COMM(call);
    if (c->inter)
        return bdl_error(comm, MPI_ERR_COMM, call, "not defined on intercommunicator %d", comm);
    int rc;
    bdl_dt_t *t = NULL;
    bdl_user_op_t *u;
    if ((rc = check_buf(comm, call, count, dt, &t, "")) ||
        (rc = check_op(comm, call, op, dt, t, &u)))
        return rc;
    uint64_t k = (uint64_t)count;
    const void *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    if ((rc = check_alias(comm, call, sendbuf, k, t, recvbuf, k, t)))
        return rc;
    int api = api_of(exclusive ? BD_API_EXSCAN : BD_API_SCAN, request);
    bdl_nbc_t nb;
    nbc_init(&nb, c);
    if (c->size == 1) {
        if (!exclusive && in != recvbuf)
            bdl_dt_copy(t, in, k, t, recvbuf, k, k * t->psize);
    } else if (u && !request) {
        user_chain(c, in, count, dt, t, op, u, (exclusive && c->rank == 0) ? NULL : recvbuf,
                   exclusive, NULL, -1);
        return MPI_SUCCESS;
    } else if (u) {
        user_fold_start(c, &nb, BD_COLL_ALLGATHER, 0, api, in, k, t, dt, op, u);
        if (!(exclusive && c->rank == 0)) {
            nb.gkind = G_FOLD;
            nb.first = 0;
            nb.last = exclusive ? c->rank - 1 : c->rank;
            nb.buf = recvbuf;
        }
    } else {
        master_fold(c, &nb, exclusive ? BD_COLL_EXSCAN : BD_COLL_SCAN, api, in, k, recvbuf, k, 0, t,
                    op, 0, !(exclusive && c->rank == 0));
    }
    return nbc_launch(&nb, request);
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm)
{
    return scan_common("MPI_Scan", sendbuf, recvbuf, count, datatype, op, comm, 0, NULL, 0);
}

int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm, MPI_Request *request)
{
    return scan_common("MPI_Iscan", sendbuf, recvbuf, count, datatype, op, comm, 0, request, 1);
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm)
{
    return scan_common("MPI_Exscan", sendbuf, recvbuf, count, datatype, op, comm, 1, NULL, 0);
}

int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm, MPI_Request *request)
{
    return scan_common("MPI_Iexscan", sendbuf, recvbuf, count, datatype, op, comm, 1, request, 1);
}

/* Reduce_scatter(_block): elements in all (total), before this rank's part
 * (myoff) and in it (mine), from the counts (or block for every rank). */
static int redscat_sizes(const bdl_comm_t *c, MPI_Comm comm, const char *call, const int counts[],
                         int block, uint64_t *total, uint64_t *myoff, uint64_t *mine)
{
    *total = *myoff = 0;
    for (int r = 0; r < c->size; r++) {
        int k = block >= 0 ? block : counts[r];
        if (k < 0)
            return bdl_error(comm, MPI_ERR_COUNT, call, "invalid count %d for rank %d", k, r);
        if (r < c->rank)
            *myoff += (uint64_t)k;
        *total += (uint64_t)k;
    }
    *mine = (uint64_t)(block >= 0 ? block : counts[c->rank]);
    return MPI_SUCCESS;
}

static int redscat(const char *call, const void *sendbuf, void *recvbuf, const int counts[],
                   int block, MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *request,
                   int nb_req)
{
    GET_COMM(call);
    if (c->inter && request)
        return ic_redscat(c, comm, call,
                          block >= 0 ? BD_API_REDUCE_SCATTER_BLOCK : BD_API_REDUCE_SCATTER, sendbuf,
                          recvbuf, counts, block, dt, op, request);
    if (c->inter)
        return bdl_inter_reduce_scatter(c, comm, call, sendbuf, recvbuf, counts, block, dt, op);
    int rc;
    bdl_dt_t *t = NULL;
    bdl_user_op_t *u;
    if (block < 0 && !counts)
        return bdl_error(comm, MPI_ERR_ARG, call, "NULL recvcounts");
    if ((rc = check_buf(comm, call, block >= 0 ? block : 0, dt, &t, "")) ||
        (rc = check_op(comm, call, op, dt, t, &u)))
        return rc;
    uint64_t total, myoff, mine;
    if ((rc = redscat_sizes(c, comm, call, counts, block, &total, &myoff, &mine)))
        return rc;
    const void *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    if ((rc = check_alias(comm, call, sendbuf, total, t, recvbuf, mine, t)))
        return rc;
    int api = api_of(block >= 0 ? BD_API_REDUCE_SCATTER_BLOCK : BD_API_REDUCE_SCATTER, request);
    bdl_nbc_t nb;
    nbc_init(&nb, c);
    if (c->size == 1) {
        if (in != recvbuf)
            bdl_dt_copy(t, in, total, t, recvbuf, total, total * t->psize);
    } else if (u && !request) {
        /* Fold to rank 0 along the ordered chain (which reads in first, so
         * in place is fine), then scatter the pieces. */
        void *full = NULL, *full_mem = c->rank == 0 ? bdl_dt_alloc(t, total, &full) : NULL;
        user_chain(c, in, (int)total, dt, t, op, u, NULL, 0, full, 0);
        int *cnt = malloc((size_t)c->size * sizeof(int)),
            *dsp = malloc((size_t)c->size * sizeof(int));
        if (!cnt || !dsp)
            bdl_fatal(MPI_ERR_NO_MEM, "out of memory");
        int off = 0;
        for (int r = 0; r < c->size; r++) {
            cnt[r] = block >= 0 ? block : counts[r];
            dsp[r] = off;
            off += cnt[r];
        }
        MPI_Scatterv(full, cnt, dsp, dt, recvbuf, (int)mine, dt, 0, comm);
        free(cnt);
        free(dsp);
        free(full_mem);
        return MPI_SUCCESS;
    } else if (u) {
        /* Every rank sends each rank its block; each folds the blocks it gets. */
        coll_begin(c, BD_COLL_ALLTOALL, 0, 0, 0, 0, api);
        nb.seq = g_cur.seq;
        put_t p = {8, 0};
        uint64_t off = 0;
        for (int r = 0; r < c->size; r++) {
            uint64_t k = (uint64_t)(block >= 0 ? block : counts[r]);
            put_typed(&p, r, at(in, (int64_t)off * t->extent), k, t);
            off += k;
        }
        put_flush(&p);
        nb.gkind = G_FOLD;
        nb.first = 0;
        nb.last = c->size - 1;
        nb.buf = recvbuf;
        nb.t = t;
        nb.count = mine;
        nb.op = op;
        nb.uop = *u;
        nb.user = 1;
        nb.dt = dt;
    } else {
        /* The master has all of in before it answers: in place is fine. */
        master_fold(c, &nb, BD_COLL_REDSCAT, api, in, total, recvbuf, mine, myoff * t->psize, t, op,
                    0, 1);
    }
    return nbc_launch(&nb, request);
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    if (recvcount < 0)
        return bdl_error(comm, MPI_ERR_COUNT, "MPI_Reduce_scatter_block", "invalid count %d",
                         recvcount);
    return redscat("MPI_Reduce_scatter_block", sendbuf, recvbuf, NULL, recvcount, datatype, op,
                   comm, NULL, 0);
}

int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    if (recvcount < 0)
        return bdl_error(comm, MPI_ERR_COUNT, "MPI_Ireduce_scatter_block", "invalid count %d",
                         recvcount);
    return redscat("MPI_Ireduce_scatter_block", sendbuf, recvbuf, NULL, recvcount, datatype, op,
                   comm, request, 1);
}

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return redscat("MPI_Reduce_scatter", sendbuf, recvbuf, recvcounts, -1, datatype, op, comm, NULL,
                   0);
}

int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return redscat("MPI_Ireduce_scatter", sendbuf, recvbuf, recvcounts, -1, datatype, op, comm,
                   request, 1);
}

/* ---------------------------------------------------------------- gather family */

static int check_counts(bdl_comm_t *c, MPI_Comm comm, const char *call, const int counts[],
                        const int displs[], const char *what)
{
    if (!counts || !displs)
        return bdl_error(comm, MPI_ERR_ARG, call, "NULL %s%s", what,
                         !counts ? "counts" : "displacements");
    for (int r = 0; r < c->size; r++)
        if (counts[r] < 0)
            return bdl_error(comm, MPI_ERR_COUNT, call, "invalid %scount %d for rank %d", what,
                             counts[r], r);
    return MPI_SUCCESS;
}

static int gather_common(const char *call, int api, const void *sendbuf, int sendcount,
                         MPI_Datatype sendtype, void *recvbuf, int recvcount,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                         int root, MPI_Comm comm, int all, int vector, MPI_Request *request,
                         int nb_req)
{
    GET_COMM(call);
    if (c->inter && request)
        return ic_gather(c, comm, call, api, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                         vector ? recvcounts : NULL, vector ? displs : NULL, recvtype, root, all,
                         request);
    if (c->inter)
        return all ? bdl_inter_allgather(c, comm, call, sendbuf, sendcount, sendtype, recvbuf,
                                         recvcount, vector ? recvcounts : NULL,
                                         vector ? displs : NULL, recvtype)
                   : bdl_inter_gather(c, comm, call, sendbuf, sendcount, sendtype, recvbuf,
                                      recvcount, vector ? recvcounts : NULL, vector ? displs : NULL,
                                      recvtype, root);
    int rc;
    bdl_dt_t *st = NULL, *rt = NULL;
    int is_root = all || c->rank == root;
    int inplace = sendbuf == MPI_IN_PLACE;
    if (!all && (rc = check_root(c, comm, call, root)))
        return rc;
    if (!inplace && (rc = check_buf(comm, call, sendcount, sendtype, &st, "send")))
        return rc;
    if (is_root) {
        if ((rc = check_buf(comm, call, vector ? 0 : recvcount, recvtype, &rt, "receive")) ||
            (vector && (rc = check_counts(c, comm, call, recvcounts, displs, "receive "))))
            return rc;
    } else if (inplace) {
        return bdl_error(comm, MPI_ERR_BUFFER, call, "MPI_IN_PLACE is only allowed at the root");
    }
    if (!vector)
        recvcounts = displs = NULL;
    int me = c->rank;
    uint64_t mine = inplace ? 0 : (uint64_t)sendcount * st->psize;
    char *rb = recvbuf;
    for (int r = 0; is_root && !inplace && r < c->size; r++)
        if ((rc = check_alias(comm, call, sendbuf, (uint64_t)sendcount, st,
                              at(rb, voff(displs, recvcount, r, rt)),
                              vcount(recvcounts, recvcount, r), rt)))
            return rc;
    /* A root whose own block does not fit still takes part (the others
     * cannot know), and reports MPI_ERR_TRUNCATE when the call completes. */
    int own_err = 0;
    if (is_root && !inplace) {
        uint64_t expect = vcount(recvcounts, recvcount, me) * rt->psize;
        own_err = mine > expect;
        bdl_dt_copy(st, sendbuf, (uint64_t)sendcount, rt, at(rb, voff(displs, recvcount, me, rt)),
                    vcount(recvcounts, recvcount, me), own_err ? expect : mine);
    }
    bdl_nbc_t nb;
    nbc_init(&nb, c);
    if (own_err)
        nb.err = MPI_ERR_TRUNCATE;
    if (c->size > 1) {
        coll_begin(c, all ? BD_COLL_ALLGATHER : BD_COLL_GATHER, all ? 0 : root, 0, 0, 0,
                   api_of(api, request));
        nb.seq = g_cur.seq;
        if (all || c->rank != root) {
            put_t p = {8, 0};
            if (inplace)
                put_typed(&p, -1, at(rb, voff(displs, recvcount, me, rt)),
                          vcount(recvcounts, recvcount, me), rt);
            else
                put_typed(&p, -1, sendbuf, (uint64_t)sendcount, st);
            put_flush(&p);
        }
        if (is_root) {
            nb.gkind = G_BLOCKS;
            nb.whole = 1;
            nb.buf = rb;
            nb.count = (uint64_t)recvcount;
            nb.counts = (int *)recvcounts;
            nb.displs = (int *)displs;
            nb.t = rt;
        }
    }
    return nbc_launch(&nb, request);
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return gather_common("MPI_Gather", BD_API_GATHER, sendbuf, sendcount, sendtype, recvbuf,
                         recvcount, NULL, NULL, recvtype, root, comm, 0, 0, NULL, 0);
}

int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    return gather_common("MPI_Igather", BD_API_GATHER, sendbuf, sendcount, sendtype, recvbuf,
                         recvcount, NULL, NULL, recvtype, root, comm, 0, 0, request, 1);
}

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm)
{
    return gather_common("MPI_Gatherv", BD_API_GATHERV, sendbuf, sendcount, sendtype, recvbuf, 0,
                         recvcounts, displs, recvtype, root, comm, 0, 1, NULL, 0);
}

int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request *request)
{
    return gather_common("MPI_Igatherv", BD_API_GATHERV, sendbuf, sendcount, sendtype, recvbuf, 0,
                         recvcounts, displs, recvtype, root, comm, 0, 1, request, 1);
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return gather_common("MPI_Allgather", BD_API_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf,
                         recvcount, NULL, NULL, recvtype, 0, comm, 1, 0, NULL, 0);
}

int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return gather_common("MPI_Iallgather", BD_API_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf,
                         recvcount, NULL, NULL, recvtype, 0, comm, 1, 0, request, 1);
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return gather_common("MPI_Allgatherv", BD_API_ALLGATHERV, sendbuf, sendcount, sendtype, recvbuf,
                         0, recvcounts, displs, recvtype, 0, comm, 1, 1, NULL, 0);
}

int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request *request)
{
    return gather_common("MPI_Iallgatherv", BD_API_ALLGATHERV, sendbuf, sendcount, sendtype,
                         recvbuf, 0, recvcounts, displs, recvtype, 0, comm, 1, 1, request, 1);
}

static int scatter_common(const char *call, int api, const void *sendbuf, int sendcount,
                          const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                          MPI_Comm comm, int vector, MPI_Request *request, int nb_req)
{
    GET_COMM(call);
    if (c->inter && request)
        return ic_scatter(c, comm, call, api, sendbuf, sendcount, vector ? sendcounts : NULL,
                          vector ? displs : NULL, sendtype, recvbuf, recvcount, recvtype, root,
                          request);
    if (c->inter)
        return bdl_inter_scatter(c, comm, call, sendbuf, sendcount, vector ? sendcounts : NULL,
                                 vector ? displs : NULL, sendtype, recvbuf, recvcount, recvtype,
                                 root);
    int rc;
    bdl_dt_t *st = NULL, *rt = NULL;
    int is_root = c->rank == root;
    int inplace = recvbuf == MPI_IN_PLACE;
    if ((rc = check_root(c, comm, call, root)))
        return rc;
    if (is_root && ((rc = check_buf(comm, call, vector ? 0 : sendcount, sendtype, &st, "send")) ||
                    (vector && (rc = check_counts(c, comm, call, sendcounts, displs, "send ")))))
        return rc;
    if (!is_root && inplace)
        return bdl_error(comm, MPI_ERR_BUFFER, call, "MPI_IN_PLACE is only allowed at the root");
    if (!inplace && (rc = check_buf(comm, call, recvcount, recvtype, &rt, "receive")))
        return rc;
    if (!vector)
        sendcounts = displs = NULL;
    uint64_t cap = inplace ? 0 : (uint64_t)recvcount * rt->psize;
    const char *sb = sendbuf;
    for (int r = 0; is_root && !inplace && r < c->size; r++)
        if ((rc = check_alias(comm, call, at(sb, voff(displs, sendcount, r, st)),
                              vcount(sendcounts, sendcount, r), st, recvbuf, (uint64_t)recvcount,
                              rt)))
            return rc;
    int own_err = 0;
    if (is_root && !inplace) {
        uint64_t n = vcount(sendcounts, sendcount, root) * st->psize;
        own_err = n > cap;
        bdl_dt_copy(st, at(sb, voff(displs, sendcount, root, st)),
                    vcount(sendcounts, sendcount, root), rt, recvbuf, (uint64_t)recvcount,
                    own_err ? cap : n);
    }
    bdl_nbc_t nb;
    nbc_init(&nb, c);
    if (own_err)
        nb.err = MPI_ERR_TRUNCATE;
    if (c->size > 1) {
        coll_begin(c, BD_COLL_SCATTER, root, 0, 0, 0, api_of(api, request));
        nb.seq = g_cur.seq;
        if (is_root) {
            put_t p = {8, 0};
            for (int r = 0; r < c->size; r++)
                if (r != root)
                    put_typed(&p, r, at(sb, voff(displs, sendcount, r, st)),
                              vcount(sendcounts, sendcount, r), st);
            put_flush(&p);
        } else if (cap) {
            nb.gkind = G_PIECE;
            nb.whole = 1;
            nb.peer = root;
            nb.buf = recvbuf;
            nb.count = (uint64_t)recvcount;
            nb.t = rt;
        }
    }
    return nbc_launch(&nb, request);
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return scatter_common("MPI_Scatter", BD_API_SCATTER, sendbuf, sendcount, NULL, NULL, sendtype,
                          recvbuf, recvcount, recvtype, root, comm, 0, NULL, 0);
}

int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request)
{
    return scatter_common("MPI_Iscatter", BD_API_SCATTER, sendbuf, sendcount, NULL, NULL, sendtype,
                          recvbuf, recvcount, recvtype, root, comm, 0, request, 1);
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm)
{
    return scatter_common("MPI_Scatterv", BD_API_SCATTERV, sendbuf, 0, sendcounts, displs, sendtype,
                          recvbuf, recvcount, recvtype, root, comm, 1, NULL, 0);
}

int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request *request)
{
    return scatter_common("MPI_Iscatterv", BD_API_SCATTERV, sendbuf, 0, sendcounts, displs,
                          sendtype, recvbuf, recvcount, recvtype, root, comm, 1, request, 1);
}

/* All-to-all in its three forms: regular (counts NULL), v (counts and
 * displacements in extents), w (per-peer types, displacements in bytes). */
typedef struct a2a_side {
    const void *buf;
    int count;
    const int *counts, *displs;
    MPI_Datatype type;
    const MPI_Datatype *types; /* w: per peer */
    bdl_dt_t *t;
    bdl_dt_t **tv;
} a2a_side_t;

static int a2a_check(bdl_comm_t *c, MPI_Comm comm, const char *call, a2a_side_t *x,
                     const char *what, int vector)
{
    int rc;
    if (vector && (rc = check_counts(c, comm, call, x->counts, x->displs, what)))
        return rc;
    if (!x->types)
        return check_buf(comm, call, vector ? 0 : x->count, x->type, &x->t,
                         what[0] == 's' ? "send" : "receive");
    x->tv = malloc((size_t)c->size * sizeof *x->tv);
    if (!x->tv)
        bdl_fatal(MPI_ERR_NO_MEM, "%s: out of memory", call);
    for (int r = 0; r < c->size; r++)
        if ((rc = bdl_dt_check(comm, call, what[0] == 's' ? "send" : "receive", x->types[r],
                               &x->tv[r])))
            return rc;
    return MPI_SUCCESS;
}

static const bdl_dt_t *a2a_type(const a2a_side_t *x, int r) { return x->tv ? x->tv[r] : x->t; }

static char *a2a_block(const a2a_side_t *x, int r)
{
    return at(x->buf, x->tv ? x->displs[r] : voff(x->displs, x->count, r, x->t));
}

static int alltoall_common(const char *call, int api, a2a_side_t *s, a2a_side_t *rv, int vector,
                           MPI_Comm comm, MPI_Request *request, int nb_req)
{
    GET_COMM(call);
    if (c->inter && request)
        return ic_alltoall(c, comm, call, api, s, rv, vector, request);
    if (c->inter && rv->types)
        return bdl_inter_alltoallw(c, comm, call, s->buf, s->counts, s->displs, s->types,
                                   (void *)rv->buf, rv->counts, rv->displs, rv->types);
    if (c->inter)
        return bdl_inter_alltoall(c, comm, call, s->buf, s->count, vector ? s->counts : NULL,
                                  vector ? s->displs : NULL, s->type, (void *)rv->buf, rv->count,
                                  vector ? rv->counts : NULL, vector ? rv->displs : NULL, rv->type);
    int rc;
    int inplace = s->buf == MPI_IN_PLACE;
    if (!vector)
        s->counts = s->displs = rv->counts = rv->displs = NULL;
    if ((rc = a2a_check(c, comm, call, rv, "receive ", vector)))
        goto out;
    if (inplace) {
        *s = *rv;
        s->tv = NULL;
        if (rv->tv) {
            s->tv = malloc((size_t)c->size * sizeof *s->tv);
            if (!s->tv)
                bdl_fatal(MPI_ERR_NO_MEM, "%s: out of memory", call);
            memcpy(s->tv, rv->tv, (size_t)c->size * sizeof *s->tv);
        }
    } else if ((rc = a2a_check(c, comm, call, s, "send ", vector))) {
        goto out;
    }
    int me = c->rank;
    for (int a = 0; !inplace && a < c->size; a++)
        for (int b = 0; b < c->size; b++)
            if ((rc = check_alias(comm, call, a2a_block(s, a), vcount(s->counts, s->count, a),
                                  a2a_type(s, a), a2a_block(rv, b),
                                  vcount(rv->counts, rv->count, b), a2a_type(rv, b))))
                goto out;
    uint64_t own = vcount(s->counts, s->count, me) * a2a_type(s, me)->psize;
    uint64_t room = vcount(rv->counts, rv->count, me) * a2a_type(rv, me)->psize;
    int own_err = own > room;
    if (!inplace)
        bdl_dt_copy(a2a_type(s, me), a2a_block(s, me), vcount(s->counts, s->count, me),
                    a2a_type(rv, me), a2a_block(rv, me), vcount(rv->counts, rv->count, me),
                    own_err ? room : own);
    bdl_nbc_t nb;
    nbc_init(&nb, c);
    if (own_err)
        nb.err = MPI_ERR_TRUNCATE;
    if (c->size > 1) {
        coll_begin(c, BD_COLL_ALLTOALL, 0, 0, 0, 0, api_of(api, request));
        nb.seq = g_cur.seq;
        put_t p = {8, 0};
        for (int r = 0; r < c->size; r++)
            if (r != me)
                put_typed(&p, r, a2a_block(s, r), vcount(s->counts, s->count, r), a2a_type(s, r));
        put_flush(&p);
        nb.gkind = G_BLOCKS;
        nb.whole = 1;
        nb.buf = (void *)rv->buf;
        nb.count = (uint64_t)rv->count;
        nb.counts = (int *)rv->counts;
        nb.t = rv->t;
        if (rv->tv) {
            nb.tv = rv->tv;
            nb.bdispls = (int *)rv->displs;
        } else {
            nb.displs = (int *)rv->displs;
        }
    }
    rc = nbc_launch(&nb, request);
out:
    free(s->tv);
    free(rv->tv);
    return rc;
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    a2a_side_t s = {.buf = sendbuf, .count = sendcount, .type = sendtype};
    a2a_side_t r = {.buf = recvbuf, .count = recvcount, .type = recvtype};
    return alltoall_common("MPI_Alltoall", BD_API_ALLTOALL, &s, &r, 0, comm, NULL, 0);
}

int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    a2a_side_t s = {.buf = sendbuf, .count = sendcount, .type = sendtype};
    a2a_side_t r = {.buf = recvbuf, .count = recvcount, .type = recvtype};
    return alltoall_common("MPI_Ialltoall", BD_API_ALLTOALL, &s, &r, 0, comm, request, 1);
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm)
{
    a2a_side_t s = {.buf = sendbuf, .counts = sendcounts, .displs = sdispls, .type = sendtype};
    a2a_side_t r = {.buf = recvbuf, .counts = recvcounts, .displs = rdispls, .type = recvtype};
    return alltoall_common("MPI_Alltoallv", BD_API_ALLTOALLV, &s, &r, 1, comm, NULL, 0);
}

int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    a2a_side_t s = {.buf = sendbuf, .counts = sendcounts, .displs = sdispls, .type = sendtype};
    a2a_side_t r = {.buf = recvbuf, .counts = recvcounts, .displs = rdispls, .type = recvtype};
    return alltoall_common("MPI_Ialltoallv", BD_API_ALLTOALLV, &s, &r, 1, comm, request, 1);
}

int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                  const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    a2a_side_t s = {.buf = sendbuf, .counts = sendcounts, .displs = sdispls, .types = sendtypes};
    a2a_side_t r = {.buf = recvbuf, .counts = recvcounts, .displs = rdispls, .types = recvtypes};
    if (sendbuf != MPI_IN_PLACE && !sendtypes)
        return bdl_error(comm, MPI_ERR_ARG, "MPI_Alltoallw", "NULL send types");
    if (!recvtypes)
        return bdl_error(comm, MPI_ERR_ARG, "MPI_Alltoallw", "NULL receive types");
    return alltoall_common("MPI_Alltoallw", BD_API_ALLTOALLW, &s, &r, 1, comm, NULL, 0);
}

int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                   MPI_Request *request)
{
    a2a_side_t s = {.buf = sendbuf, .counts = sendcounts, .displs = sdispls, .types = sendtypes};
    a2a_side_t r = {.buf = recvbuf, .counts = recvcounts, .displs = rdispls, .types = recvtypes};
    if (sendbuf != MPI_IN_PLACE && !sendtypes)
        return bdl_error(comm, MPI_ERR_ARG, "MPI_Ialltoallw", "NULL send types");
    if (!recvtypes)
        return bdl_error(comm, MPI_ERR_ARG, "MPI_Ialltoallw", "NULL receive types");
    return alltoall_common("MPI_Ialltoallw", BD_API_ALLTOALLW, &s, &r, 1, comm, request, 1);
}

/* ---------------------------------------------------------------- intercommunicators */

/* Nonblocking collectives on an intercommunicator run on its union, the
 * hidden intracommunicator of both groups (c->ucomm), as one instance of a
 * gather-to-all: every rank PUTs at most one piece at the call, and once the
 * instance is complete GETs from the remote group's pieces what it needs.
 * The master progresses the instance after the call like any other
 * nonblocking collective, so nothing waits for the program to call MPI
 * again.  A piece that holds different data for each remote rank (scatter,
 * all-to-all) starts with a table of where each block starts and ends, so a
 * receiver needs no counts but its own.  Reductions fold the remote group's
 * pieces in rank order in the receiving rank.  The blocking collectives
 * stay in intercomm.c (point-to-point between the groups' leaders). */

typedef struct {
    bdl_comm_t *c; /* the intercommunicator */
    bdl_nbc_t nb;
    put_t p;
} icoll_t;

static void ic_begin(icoll_t *x, bdl_comm_t *c, int kind, int api)
{
    bdl_comm_t *u = bdl_comm_get(c->ucomm);
    x->c = c;
    nbc_init(&x->nb, u);
    coll_begin(u, kind, 0, 0, 0, 0, api | BD_API_NB);
    x->nb.seq = g_cur.seq;
    x->p = (put_t){8, 0};
}

/* G_BLOCKS or G_TBLOCKS over the remote group's ranks. */
static void ic_blocks(icoll_t *x, int gkind, void *buf, int count, const int *counts,
                      const int *displs, bdl_dt_t *t)
{
    bdl_nbc_t *nb = &x->nb;
    nb->gkind = gkind;
    nb->nblk = x->c->rsize;
    nb->pfirst = x->c->roff;
    nb->skip = -1;
    nb->tidx = x->c->rank;
    nb->tn = x->c->size + 1;
    nb->buf = buf;
    nb->count = (uint64_t)count;
    nb->counts = (int *)counts;
    nb->displs = (int *)displs;
    nb->t = t;
}

/* G_FOLD of count elements from byte off of every remote rank's piece. */
static void ic_fold(icoll_t *x, void *buf, uint64_t count, uint64_t off, bdl_dt_t *t,
                    MPI_Datatype dt, MPI_Op op, const bdl_user_op_t *u)
{
    bdl_nbc_t *nb = &x->nb;
    nb->gkind = G_FOLD;
    nb->first = x->c->roff;
    nb->last = x->c->roff + x->c->rsize - 1;
    nb->off = off;
    nb->buf = buf;
    nb->count = count;
    nb->t = t;
    nb->dt = dt;
    nb->op = op;
    if (u) {
        nb->user = 1;
        nb->uop = *u;
    }
}

/* PUT n blocks as one piece: a table of n + 1 byte offsets (block j is
 * bytes [tab[j], tab[j+1]) of the data after the table), then the blocks. */
static void put_table(put_t *p, int n, const void *buf, int count, const int *counts,
                      const int *displs, const int *bdispls, const bdl_dt_t *t, bdl_dt_t *const *tv)
{
    uint64_t *tab = malloc((size_t)(n + 1) * sizeof *tab);
    if (!tab)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory in a collective");
    tab[0] = 0;
    for (int j = 0; j < n; j++)
        tab[j + 1] = tab[j] + vcount(counts, count, j) * (tv ? tv[j] : t)->psize;
    uint64_t head = 8 * (uint64_t)(n + 1), total = head + tab[n];
    put_part(p, -1, tab, head, bdl_dt_byte(), 0, total);
    for (int j = 0; j < n; j++) {
        const bdl_dt_t *tj = tv ? tv[j] : t;
        const char *b = at(buf, bdispls ? bdispls[j] : voff(displs, count, j, tj));
        put_part(p, -1, b, vcount(counts, count, j), tj, head + tab[j], total);
    }
    free(tab);
}

static int ic_check_root(bdl_comm_t *c, MPI_Comm comm, const char *call, int root)
{
    if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < c->rsize))
        return MPI_SUCCESS;
    return bdl_error(comm, MPI_ERR_ROOT, call,
                     "invalid root %d on an intercommunicator (MPI_ROOT, MPI_PROC_NULL or a rank "
                     "of the remote group of size %d)",
                     root, c->rsize);
}

static int ic_no_in_place(MPI_Comm comm, const char *call, const void *buf)
{
    if (buf == MPI_IN_PLACE)
        return bdl_error(comm, MPI_ERR_BUFFER, call,
                         "MPI_IN_PLACE is not allowed on an intercommunicator");
    return MPI_SUCCESS;
}

static int check_counts_n(MPI_Comm comm, const char *call, const int counts[], const int displs[],
                          int n, const char *what)
{
    if (!counts || !displs)
        return bdl_error(comm, MPI_ERR_ARG, call, "NULL %s%s", what,
                         !counts ? "counts" : "displacements");
    for (int r = 0; r < n; r++)
        if (counts[r] < 0)
            return bdl_error(comm, MPI_ERR_COUNT, call, "invalid %scount %d for rank %d", what,
                             counts[r], r);
    return MPI_SUCCESS;
}

static int ic_barrier(bdl_comm_t *c, MPI_Request *request)
{
    icoll_t x;
    ic_begin(&x, c, BD_COLL_BARRIER, BD_API_BARRIER);
    return nbc_launch(&x.nb, request);
}

static int ic_bcast(bdl_comm_t *c, MPI_Comm comm, const char *call, void *buf, int count,
                    MPI_Datatype dt, int root, MPI_Request *request)
{
    bdl_dt_t *t = NULL;
    int rc;
    if ((rc = ic_check_root(c, comm, call, root)) ||
        (root != MPI_PROC_NULL && (rc = check_buf(comm, call, count, dt, &t, ""))))
        return rc;
    icoll_t x;
    ic_begin(&x, c, BD_COLL_ALLGATHER, BD_API_BCAST);
    if (root == MPI_ROOT) {
        put_typed(&x.p, -1, buf, (uint64_t)count, t);
        put_flush(&x.p);
    } else if (root >= 0) {
        x.nb.gkind = G_PIECE;
        x.nb.peer = c->roff + root;
        x.nb.buf = buf;
        x.nb.count = (uint64_t)count;
        x.nb.t = t;
    }
    return nbc_launch(&x.nb, request);
}

/* Gather(v) (all = 0: the root receives a block from every remote rank) and
 * Allgather(v) (every rank does). */
static int ic_gather(bdl_comm_t *c, MPI_Comm comm, const char *call, int api, const void *sendbuf,
                     int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                     const int *recvcounts, const int *displs, MPI_Datatype recvtype, int root,
                     int all, MPI_Request *request)
{
    bdl_dt_t *st = NULL, *rt = NULL;
    int rc;
    if (!all && (rc = ic_check_root(c, comm, call, root)))
        return rc;
    int sends = all || root >= 0, recvs = all || root == MPI_ROOT;
    if (sends && ((rc = ic_no_in_place(comm, call, sendbuf)) ||
                  (rc = check_buf(comm, call, sendcount, sendtype, &st, "send"))))
        return rc;
    if (recvs &&
        ((rc = check_buf(comm, call, recvcounts ? 0 : recvcount, recvtype, &rt, "receive")) ||
         (recvcounts &&
          (rc = check_counts_n(comm, call, recvcounts, displs, c->rsize, "receive ")))))
        return rc;
    icoll_t x;
    ic_begin(&x, c, BD_COLL_ALLGATHER, api);
    if (sends) {
        put_typed(&x.p, -1, sendbuf, (uint64_t)sendcount, st);
        put_flush(&x.p);
    }
    if (recvs)
        ic_blocks(&x, G_BLOCKS, recvbuf, recvcount, recvcounts, displs, rt);
    return nbc_launch(&x.nb, request);
}

static int ic_scatter(bdl_comm_t *c, MPI_Comm comm, const char *call, int api, const void *sendbuf,
                      int sendcount, const int *sendcounts, const int *displs,
                      MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                      int root, MPI_Request *request)
{
    bdl_dt_t *st = NULL, *rt = NULL;
    int rc;
    if ((rc = ic_check_root(c, comm, call, root)))
        return rc;
    if (root == MPI_ROOT &&
        ((rc = check_buf(comm, call, sendcounts ? 0 : sendcount, sendtype, &st, "send")) ||
         (sendcounts && (rc = check_counts_n(comm, call, sendcounts, displs, c->rsize, "send ")))))
        return rc;
    if (root >= 0 && ((rc = ic_no_in_place(comm, call, recvbuf)) ||
                      (rc = check_buf(comm, call, recvcount, recvtype, &rt, "receive"))))
        return rc;
    icoll_t x;
    ic_begin(&x, c, BD_COLL_ALLGATHER, api);
    if (root == MPI_ROOT) {
        put_table(&x.p, c->rsize, sendbuf, sendcount, sendcounts, displs, NULL, st, NULL);
        put_flush(&x.p);
    } else if (root >= 0) {
        ic_blocks(&x, G_TBLOCKS, recvbuf, recvcount, NULL, NULL, rt);
        x.nb.nblk = 1;
        x.nb.pfirst = c->roff + root;
    }
    return nbc_launch(&x.nb, request);
}

/* Alltoall(v, w): each rank PUTs a table and a block for every remote rank. */
static int ic_alltoall(bdl_comm_t *c, MPI_Comm comm, const char *call, int api, a2a_side_t *s,
                       a2a_side_t *rv, int vector, MPI_Request *request)
{
    int n = c->rsize, rc;
    bdl_dt_t **stv = NULL, **rtv = NULL, *st = NULL, *rt = NULL;
    if ((rc = ic_no_in_place(comm, call, s->buf)))
        return rc;
    if (vector && ((rc = check_counts_n(comm, call, s->counts, s->displs, n, "send ")) ||
                   (rc = check_counts_n(comm, call, rv->counts, rv->displs, n, "receive "))))
        return rc;
    if (s->types) {
        stv = malloc((size_t)n * sizeof *stv);
        rtv = malloc((size_t)n * sizeof *rtv);
        if (!stv || !rtv)
            bdl_fatal(MPI_ERR_NO_MEM, "%s: out of memory", call);
        for (int j = 0; j < n && !rc; j++)
            if (!(rc = bdl_dt_check(comm, call, "send", s->types[j], &stv[j])))
                rc = bdl_dt_check(comm, call, "receive", rv->types[j], &rtv[j]);
    } else if (!(rc = check_buf(comm, call, vector ? 0 : s->count, s->type, &st, "send"))) {
        rc = check_buf(comm, call, vector ? 0 : rv->count, rv->type, &rt, "receive");
    }
    if (!rc) {
        icoll_t x;
        ic_begin(&x, c, BD_COLL_ALLGATHER, api);
        const int *sc = vector ? s->counts : NULL, *rc_ = vector ? rv->counts : NULL;
        put_table(&x.p, n, s->buf, s->count, sc, s->types ? NULL : (vector ? s->displs : NULL),
                  s->types ? s->displs : NULL, st, stv);
        put_flush(&x.p);
        ic_blocks(&x, G_TBLOCKS, (void *)rv->buf, rv->count, rc_,
                  rv->types ? NULL : (vector ? rv->displs : NULL), rt);
        if (rv->types) {
            x.nb.tv = rtv;
            x.nb.bdispls = (int *)rv->displs;
        }
        rc = nbc_launch(&x.nb, request);
    }
    free(stv);
    free(rtv);
    return rc;
}

/* Reduce (all = 0: the root receives the reduction of the remote group's
 * data) and Allreduce (every rank does). */
static int ic_reduce(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *sendbuf,
                     void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root, int all,
                     MPI_Request *request)
{
    bdl_dt_t *t = NULL;
    bdl_user_op_t *u = NULL;
    int rc;
    if (!all && (rc = ic_check_root(c, comm, call, root)))
        return rc;
    if (!all && root == MPI_PROC_NULL) {
        icoll_t x;
        ic_begin(&x, c, BD_COLL_ALLGATHER, all ? BD_API_ALLREDUCE : BD_API_REDUCE);
        return nbc_launch(&x.nb, request);
    }
    int sends = all || root >= 0, recvs = all || root == MPI_ROOT;
    if ((sends && (rc = ic_no_in_place(comm, call, sendbuf))) ||
        (rc = check_buf(comm, call, count, dt, &t, "")) ||
        (rc = check_op(comm, call, op, dt, t, &u)))
        return rc;
    icoll_t x;
    ic_begin(&x, c, BD_COLL_ALLGATHER, all ? BD_API_ALLREDUCE : BD_API_REDUCE);
    if (sends) {
        put_typed(&x.p, -1, sendbuf, (uint64_t)count, t);
        put_flush(&x.p);
    }
    if (recvs)
        ic_fold(&x, recvbuf, (uint64_t)count, 0, t, dt, op, u);
    return nbc_launch(&x.nb, request);
}

/* Reduce_scatter(_block): each group gets the reduction of the other
 * group's vectors, scattered by its own counts. */
static int ic_redscat(bdl_comm_t *c, MPI_Comm comm, const char *call, int api, const void *sendbuf,
                      void *recvbuf, const int *counts, int block, MPI_Datatype dt, MPI_Op op,
                      MPI_Request *request)
{
    bdl_dt_t *t = NULL;
    bdl_user_op_t *u = NULL;
    int rc;
    if (block < 0 && !counts)
        return bdl_error(comm, MPI_ERR_ARG, call, "NULL recvcounts");
    if ((rc = ic_no_in_place(comm, call, sendbuf)) ||
        (rc = check_buf(comm, call, block >= 0 ? block : 0, dt, &t, "")) ||
        (rc = check_op(comm, call, op, dt, t, &u)))
        return rc;
    uint64_t total, myoff, mine;
    if ((rc = redscat_sizes(c, comm, call, counts, block, &total, &myoff, &mine)))
        return rc;
    icoll_t x;
    ic_begin(&x, c, BD_COLL_ALLGATHER, api);
    put_typed(&x.p, -1, sendbuf, total, t);
    put_flush(&x.p);
    ic_fold(&x, recvbuf, mine, myoff * t->psize, t, dt, op, u);
    return nbc_launch(&x.nb, request);
}

/* ---------------------------------------------------------------- communicator creation */

int bdl_nbc_split(bdl_comm_t *c, int color, int key, int api, bdl_nbc_fin_t fin, void *arg,
                  MPI_Request *request)
{
    bdl_nbc_t nb;
    nbc_init(&nb, c);
    coll_begin(c, BD_COLL_SPLIT, 0, 0, 0, 0, api_of(api, request));
    nb.seq = g_cur.seq;
    int32_t ck[2] = {color, key};
    put_t p = {8, 0};
    put_typed(&p, -1, ck, sizeof ck, bdl_dt_byte());
    put_flush(&p);
    nb.gkind = G_SPLIT;
    nb.fin = fin;
    nb.fin_arg = arg;
    return nbc_launch(&nb, request);
}
