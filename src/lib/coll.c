/* Collectives on the slave side: describe the call to the master, PUT the
 * outgoing pieces through the window, WAIT, GET the incoming pieces, END
 * (see src/master/coll.c).  Communicators of size one are done locally.
 * Reductions with user-defined operations run here, as an ordered chain
 * over the communicator's hidden context, because the master cannot call
 * the program's functions. */
#include <stdlib.h>
#include <string.h>

#include "bd_dtype.h"
#include "lib.h"

/* ---------------------------------------------------------------- user ops */

int bd_user_op_fn(MPI_Op op, bd_user_op_t **out)
{
    int i = op - (BDMPI_OP_PREDEFINED_MAX + 1);
    if (i < 0 || i >= g_bd.nops || !g_bd.ops[i].used)
        return -1;
    *out = &g_bd.ops[i];
    return 0;
}

int MPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    if (!user_fn)
        return bd_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Op_create", "NULL function");
    int i = 0;
    while (i < g_bd.nops && g_bd.ops[i].used)
        i++;
    if (i == g_bd.nops) {
        int n = g_bd.nops ? g_bd.nops * 2 : 8;
        bd_user_op_t *t = realloc(g_bd.ops, (size_t)n * sizeof *t);
        if (!t)
            return bd_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Op_create", "out of memory");
        memset(t + g_bd.nops, 0, (size_t)(n - g_bd.nops) * sizeof *t);
        g_bd.ops = t;
        g_bd.nops = n;
    }
    g_bd.ops[i] = (bd_user_op_t){user_fn, commute, 1};
    *op = BDMPI_OP_PREDEFINED_MAX + 1 + i;
    return MPI_SUCCESS;
}

int MPI_Op_free(MPI_Op *op)
{
    bd_user_op_t *u;
    if (!op || bd_user_op_fn(*op, &u) < 0)
        return bd_error(MPI_COMM_WORLD, MPI_ERR_OP, "MPI_Op_free",
                        "invalid or predefined operation %d", op ? *op : 0);
    u->used = 0;
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}

int MPI_Op_commutative(MPI_Op op, int *commute)
{
    bd_user_op_t *u;
    if (op > 0 && op <= BDMPI_OP_PREDEFINED_MAX) {
        *commute = 1;
        return MPI_SUCCESS;
    }
    if (bd_user_op_fn(op, &u) < 0)
        return bd_error(MPI_COMM_WORLD, MPI_ERR_OP, "MPI_Op_commutative", "invalid operation %d",
                        op);
    *commute = u->commute;
    return MPI_SUCCESS;
}

/* Check op against dt (descriptor t); *user gets the user op or NULL.  A
 * predefined op applies to a derived type whose basic elements are all of
 * one predefined type it is defined for (MPI 3.1 5.9.2). */
static int check_op(MPI_Comm comm, const char *call, MPI_Op op, MPI_Datatype dt,
                    const bd_dt_t *t, bd_user_op_t **user)
{
    *user = NULL;
    if (op > 0 && op <= BDMPI_OP_PREDEFINED_MAX) {
        if (t->basic <= 0 || !bd_op_valid_for(op, t->basic))
            return bd_error(comm, MPI_ERR_OP, call, "%s is not defined for datatype %d%s",
                            bd_op_name(op), dt,
                            t->basic < 0 ? " (its elements are of several predefined types)"
                                         : "");
        return MPI_SUCCESS;
    }
    if (bd_user_op_fn(op, user) < 0)
        return bd_error(comm, MPI_ERR_OP, call, "invalid operation %d", op);
    return MPI_SUCCESS;
}

/* inout = in op inout */
static void apply_op(MPI_Op op, bd_user_op_t *u, MPI_Datatype dt, const void *in, void *inout,
                     int count)
{
    if (u) {
        MPI_Datatype d = dt;
        u->fn((void *)in, inout, &count, &d);
    } else {
        bd_op_apply(op, dt, in, inout, (size_t)count);
    }
}

int MPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype,
                     MPI_Op op)
{
    bd_dt_t *t = NULL;
    bd_user_op_t *u;
    int rc;
    if (count < 0)
        return bd_error(MPI_COMM_WORLD, MPI_ERR_COUNT, "MPI_Reduce_local", "invalid count %d",
                        count);
    if ((rc = bd_dt_check(MPI_COMM_WORLD, "MPI_Reduce_local", "", datatype, &t)) ||
        (rc = check_op(MPI_COMM_WORLD, "MPI_Reduce_local", op, datatype, t, &u)))
        return rc;
    if (u || t->predefined) {
        apply_op(op, u, datatype, inbuf, inoutbuf, count);
        return MPI_SUCCESS;
    }
    /* Predefined op on a derived type: fold the packed basic elements. */
    uint64_t n = (uint64_t)count * t->psize;
    char *a = malloc(n + 1), *b = malloc(n + 1);
    if (!a || !b)
        bd_fatal(MPI_ERR_NO_MEM, "out of memory in MPI_Reduce_local of %llu bytes",
                 (unsigned long long)n);
    bd_dt_pack(t, inbuf, (uint64_t)count, 0, a, n);
    bd_dt_pack(t, inoutbuf, (uint64_t)count, 0, b, n);
    bd_op_apply(op, t->basic, a, b, (size_t)count * t->nelem);
    bd_dt_unpack(t, inoutbuf, (uint64_t)count, 0, b, n);
    free(a);
    free(b);
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- transport */

static void coll_begin(bd_comm_t *c, int kind, int root, int dtype, int op, uint64_t count)
{
    bd_coll_desc_t d = {.kind = kind, .root = root, .dtype = dtype, .op = op, .count = count,
                        .seq = c->coll_seq++};
    bd_req_t *r = bd_req_begin(BD_REQ_COLL_BEGIN);
    r->ctx = c->ctx;
    r->myrank = c->rank;
    memcpy(g_bd.win, &d, sizeof d);
    bd_rpc();
}

static void coll_simple(uint32_t code)
{
    bd_req_begin(code);
    bd_rpc();
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
    memcpy(g_bd.win, &p->nseg, sizeof p->nseg);
    bd_req_begin(BD_REQ_COLL_PUT);
    bd_rpc();
    p->nseg = 0;
    p->pos = 8;
}

/* Append the packed stream of count elements of t at buf as the piece for peer. */
static void put_typed(put_t *p, int peer, const void *buf, uint64_t count, const bd_dt_t *t)
{
    uint64_t len = count * t->psize;
    const char *contig = bd_dt_contig(t, buf, count);
    uint64_t off = 0;
    while (off < len) {
        uint64_t room = g_bd.window - p->pos;
        if (room < sizeof(bd_seg_t) + 64) {
            put_flush(p);
            continue;
        }
        uint64_t chunk = len - off;
        if (chunk > room - sizeof(bd_seg_t) - 8)
            chunk = (room - sizeof(bd_seg_t) - 8) & ~7ull;
        bd_seg_t seg = {peer, (uint32_t)chunk, off, len};
        memcpy(g_bd.win + p->pos, &seg, sizeof seg);
        if (contig)
            memcpy(g_bd.win + p->pos + sizeof seg, contig + off, chunk);
        else
            bd_dt_pack(t, buf, count, off, g_bd.win + p->pos + sizeof seg, chunk);
        p->pos += sizeof seg + ((chunk + 7) & ~7ull);
        p->nseg++;
        off += chunk;
    }
}

/* Batches GET segments; data lands in the given destinations. */
#define GET_MAX_SEGS 1024
typedef struct {
    bd_seg_t segs[GET_MAX_SEGS];
    char *dst[GET_MAX_SEGS];      /* contiguous: where the bytes go; else the buffer */
    const bd_dt_t *t[GET_MAX_SEGS]; /* NULL: contiguous destination */
    uint64_t cnt[GET_MAX_SEGS];   /* elements of the buffer */
    uint64_t soff[GET_MAX_SEGS];  /* offset of the segment in the buffer's packed stream */
    uint32_t nseg;
    uint64_t bytes;
} get_t;

static void get_flush(get_t *g)
{
    if (!g->nseg)
        return;
    memcpy(g_bd.win, &g->nseg, sizeof g->nseg);
    memcpy(g_bd.win + 8, g->segs, (size_t)g->nseg * sizeof(bd_seg_t));
    bd_req_begin(BD_REQ_COLL_GET);
    bd_rpc();
    const char *src = g_bd.win;
    for (uint32_t i = 0; i < g->nseg; i++) {
        if (!g->t[i]) {
            bd_lib_mem_discard(g->dst[i], g->segs[i].len);
            memcpy(g->dst[i], src, g->segs[i].len);
        } else {
            bd_dt_unpack(g->t[i], g->dst[i], g->cnt[i], g->soff[i], src, g->segs[i].len);
        }
        src += g->segs[i].len;
    }
    g->nseg = 0;
    g->bytes = 0;
}

/* Fetch the piece from peer, starting at byte off of it, into count elements
 * of t at buf (unpacked on arrival). */
static void get_typed(get_t *g, int peer, uint64_t off, void *buf, uint64_t count,
                      const bd_dt_t *t)
{
    uint64_t len = count * t->psize;
    char *contig = bd_dt_contig(t, buf, count);
    uint64_t done = 0;
    uint64_t limit = g_bd.window - 8 - GET_MAX_SEGS * sizeof(bd_seg_t);
    if (limit > g_bd.window / 2)
        limit = g_bd.window / 2;
    while (done < len) {
        if (g->nseg == GET_MAX_SEGS || g->bytes >= limit) {
            get_flush(g);
            continue;
        }
        uint64_t chunk = len - done;
        if (chunk > limit - g->bytes)
            chunk = limit - g->bytes;
        g->segs[g->nseg] = (bd_seg_t){peer, (uint32_t)chunk, off + done, 0};
        g->dst[g->nseg] = contig ? contig + done : buf;
        g->t[g->nseg] = contig ? NULL : t;
        g->cnt[g->nseg] = count;
        g->soff[g->nseg] = done;
        g->nseg++;
        g->bytes += chunk;
        done += chunk;
    }
}

static get_t *get_new(void)
{
    get_t *g = malloc(sizeof *g);
    if (!g)
        bd_fatal(MPI_ERR_NO_MEM, "out of memory in a collective");
    g->nseg = 0;
    g->bytes = 0;
    return g;
}

/* ---------------------------------------------------------------- checks */

#define GET_COMM(call)                                                                             \
    BD_CHECK_INIT(call);                                                                           \
    bd_comm_t *c = bd_comm_get(comm);                                                              \
    if (!c)                                                                                        \
        return bd_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);

static int check_buf(MPI_Comm comm, const char *call, int count, MPI_Datatype dt, bd_dt_t **t,
                     const char *what)
{
    if (count < 0)
        return bd_error(comm, MPI_ERR_COUNT, call, "invalid %s%scount %d", what, *what ? " " : "",
                        count);
    return bd_dt_check(comm, call, what, dt, t);
}

/* buf + off without pointer arithmetic on MPI_BOTTOM. */
static char *at(const void *buf, int64_t off)
{
    return (char *)((intptr_t)buf + (intptr_t)off);
}

static int check_root(bd_comm_t *c, MPI_Comm comm, const char *call, int root)
{
    if (root < 0 || root >= c->size)
        return bd_error(comm, MPI_ERR_ROOT, call, "invalid root %d (communicator size %d)", root,
                        c->size);
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- barrier, bcast */

int MPI_Barrier(MPI_Comm comm)
{
    GET_COMM("MPI_Barrier");
    if (c->size == 1)
        return MPI_SUCCESS;
    coll_begin(c, BD_COLL_BARRIER, 0, 0, 0, 0);
    coll_simple(BD_REQ_COLL_WAIT);
    coll_simple(BD_REQ_COLL_END);
    return MPI_SUCCESS;
}

static void bcast_typed(bd_comm_t *c, void *buf, uint64_t count, const bd_dt_t *t, int root)
{
    coll_begin(c, BD_COLL_BCAST, root, 0, 0, 0);
    if (c->rank == root) {
        put_t p = {8, 0};
        put_typed(&p, -1, buf, count, t);
        put_flush(&p);
    }
    coll_simple(BD_REQ_COLL_WAIT);
    if (c->rank != root && count * t->psize != 0) {
        get_t *g = get_new();
        get_typed(g, 0, 0, buf, count, t);
        get_flush(g);
        free(g);
    }
    coll_simple(BD_REQ_COLL_END);
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    GET_COMM("MPI_Bcast");
    bd_dt_t *t = NULL;
    int rc;
    if ((rc = check_buf(comm, "MPI_Bcast", count, datatype, &t, "")) ||
        (rc = check_root(c, comm, "MPI_Bcast", root)))
        return rc;
    if (c->size > 1)
        bcast_typed(c, buffer, (uint64_t)count, t, root);
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- reductions */

/* Ordered chain for user ops: rank k gets acc(0..k-1) from k-1, folds its
 * own value (acc op v_k, preserving order for non-commutative ops) and
 * passes it on.  prefix (if non-NULL) receives acc(0..k) (Scan) or
 * acc(0..k-1) (exclusive) at each rank; total goes to root (or -1: none). */
static int user_chain(bd_comm_t *c, const void *in, int count, MPI_Datatype dt,
                      const bd_dt_t *t, MPI_Op op, bd_user_op_t *u, void *prefix, int exclusive,
                      void *total, int root)
{
    /* The user function sees buffers laid out as dt, so the accumulators
     * are too; messages carry the packed stream. */
    uint64_t k = (uint64_t)count;
    int ctx = c->ctx | BD_CTX_INTERNAL;
    void *acc, *tmp;
    void *acc_mem = bd_dt_alloc(t, k, &acc), *tmp_mem = bd_dt_alloc(t, k, &tmp);
    uint64_t n = k * t->psize;
    /* Read in first: in place, it is also prefix or total. */
    bd_dt_copy(t, in, k, t, acc, k, n);
    if (c->rank > 0) {
        bd_recv_typed(ctx, c->rank - 1, 1, tmp, k, t, MPI_STATUS_IGNORE);
        if (prefix && exclusive)
            bd_dt_copy(t, tmp, k, t, prefix, k, n);
        apply_op(op, u, dt, tmp, acc, count); /* acc = acc(0..k-1) op v_k */
    }
    if (prefix && !exclusive)
        bd_dt_copy(t, acc, k, t, prefix, k, n);
    if (c->rank + 1 < c->size)
        bd_send_typed(ctx, c->world[c->rank + 1], c->rank, 1, acc, k, t, 0, NULL);
    if (root >= 0) {
        if (c->rank == c->size - 1) {
            if (root == c->rank)
                bd_dt_copy(t, acc, k, t, total, k, n);
            else
                bd_send_typed(ctx, c->world[root], c->rank, 2, acc, k, t, 0, NULL);
        } else if (c->rank == root) {
            bd_recv_typed(ctx, c->size - 1, 2, total, k, t, MPI_STATUS_IGNORE);
        }
    }
    free(acc_mem);
    free(tmp_mem);
    return MPI_SUCCESS;
}

/* Predefined op: the master folds the packed basic elements in rank order
 * (kind REDUCE/ALLREDUCE/SCAN/EXSCAN/REDSCAT); when want, outcount elements
 * of the result, from packed byte out_off on, are unpacked into out. */
static void master_fold(bd_comm_t *c, int kind, const void *in, uint64_t count, void *out,
                        uint64_t outcount, uint64_t out_off, const bd_dt_t *t, MPI_Op op,
                        int root, int want)
{
    coll_begin(c, kind, root, t->basic, op, count * t->nelem);
    put_t p = {8, 0};
    put_typed(&p, -1, in, count, t);
    put_flush(&p);
    coll_simple(BD_REQ_COLL_WAIT);
    if (want && outcount * t->psize != 0) {
        get_t *g = get_new();
        get_typed(g, -1, out_off, out, outcount, t);
        get_flush(g);
        free(g);
    }
    coll_simple(BD_REQ_COLL_END);
}

static int reduce_common(const char *call, const void *sendbuf, void *recvbuf, int count,
                         MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm, int all)
{
    GET_COMM(call);
    int rc;
    bd_dt_t *t = NULL;
    bd_user_op_t *u;
    if ((rc = check_buf(comm, call, count, dt, &t, "")) ||
        (rc = check_op(comm, call, op, dt, t, &u)))
        return rc;
    if (!all && (rc = check_root(c, comm, call, root)))
        return rc;
    int receives = all || c->rank == root;
    uint64_t k = (uint64_t)count;
    const void *in = sendbuf == MPI_IN_PLACE ? (receives ? recvbuf : NULL) : sendbuf;
    if (!in)
        return bd_error(comm, MPI_ERR_BUFFER, call, "MPI_IN_PLACE is only allowed at the root");
    if (c->size == 1) {
        if (in != recvbuf)
            bd_dt_copy(t, in, k, t, recvbuf, k, k * t->psize);
        return MPI_SUCCESS;
    }
    if (u) {
        /* The chain reads in before it writes the total, so in place is fine. */
        int r0 = all ? 0 : root;
        user_chain(c, in, count, dt, t, op, u, NULL, 0, receives ? recvbuf : NULL, r0);
        if (all)
            bcast_typed(c, recvbuf, k, t, 0);
        return MPI_SUCCESS;
    }
    /* The master has all of in before it answers with the result: in place is fine. */
    master_fold(c, all ? BD_COLL_ALLREDUCE : BD_COLL_REDUCE, in, k, recvbuf, k, 0, t, op,
                all ? 0 : root, receives);
    return MPI_SUCCESS;
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm)
{
    return reduce_common("MPI_Reduce", sendbuf, recvbuf, count, datatype, op, root, comm, 0);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm)
{
    return reduce_common("MPI_Allreduce", sendbuf, recvbuf, count, datatype, op, 0, comm, 1);
}

static int scan_common(const char *call, const void *sendbuf, void *recvbuf, int count,
                       MPI_Datatype dt, MPI_Op op, MPI_Comm comm, int exclusive)
{
    GET_COMM(call);
    int rc;
    bd_dt_t *t = NULL;
    bd_user_op_t *u;
    if ((rc = check_buf(comm, call, count, dt, &t, "")) ||
        (rc = check_op(comm, call, op, dt, t, &u)))
        return rc;
    uint64_t k = (uint64_t)count;
    const void *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    if (c->size == 1) {
        if (!exclusive && in != recvbuf)
            bd_dt_copy(t, in, k, t, recvbuf, k, k * t->psize);
        return MPI_SUCCESS;
    }
    if (u)
        user_chain(c, in, count, dt, t, op, u, (exclusive && c->rank == 0) ? NULL : recvbuf,
                   exclusive, NULL, -1);
    else
        master_fold(c, exclusive ? BD_COLL_EXSCAN : BD_COLL_SCAN, in, k, recvbuf, k, 0, t, op, 0,
                    !(exclusive && c->rank == 0));
    return MPI_SUCCESS;
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm)
{
    return scan_common("MPI_Scan", sendbuf, recvbuf, count, datatype, op, comm, 0);
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm)
{
    return scan_common("MPI_Exscan", sendbuf, recvbuf, count, datatype, op, comm, 1);
}

static int redscat(const char *call, const void *sendbuf, void *recvbuf, const int counts[],
                   int block, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    GET_COMM(call);
    int rc;
    bd_dt_t *t = NULL;
    bd_user_op_t *u;
    if ((rc = check_buf(comm, call, block >= 0 ? block : 0, dt, &t, "")) ||
        (rc = check_op(comm, call, op, dt, t, &u)))
        return rc;
    uint64_t total = 0, myoff = 0;
    for (int r = 0; r < c->size; r++) {
        int k = block >= 0 ? block : counts[r];
        if (k < 0)
            return bd_error(comm, MPI_ERR_COUNT, call, "invalid count %d for rank %d", k, r);
        if (r < c->rank)
            myoff += (uint64_t)k;
        total += (uint64_t)k;
    }
    uint64_t mine = (uint64_t)(block >= 0 ? block : counts[c->rank]);
    const void *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    if (c->size == 1) {
        if (in != recvbuf)
            bd_dt_copy(t, in, total, t, recvbuf, total, total * t->psize);
    } else if (u) {
        /* Fold to rank 0 along the ordered chain (which reads in first, so
         * in place is fine), then scatter the pieces. */
        void *full = NULL, *full_mem = c->rank == 0 ? bd_dt_alloc(t, total, &full) : NULL;
        user_chain(c, in, (int)total, dt, t, op, u, NULL, 0, full, 0);
        int *cnt = malloc((size_t)c->size * sizeof(int)), *dsp = malloc((size_t)c->size * sizeof(int));
        if (!cnt || !dsp)
            bd_fatal(MPI_ERR_NO_MEM, "out of memory");
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
    } else {
        /* The master has all of in before it answers: in place is fine. */
        master_fold(c, BD_COLL_REDSCAT, in, total, recvbuf, mine, myoff * t->psize, t, op, 0, 1);
    }
    return MPI_SUCCESS;
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    if (recvcount < 0)
        return bd_error(comm, MPI_ERR_COUNT, "MPI_Reduce_scatter_block", "invalid count %d",
                        recvcount);
    return redscat("MPI_Reduce_scatter_block", sendbuf, recvbuf, NULL, recvcount, datatype, op,
                   comm);
}

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return redscat("MPI_Reduce_scatter", sendbuf, recvbuf, recvcounts, -1, datatype, op, comm);
}

/* ---------------------------------------------------------------- gather family */

/* Elements and byte displacement of rank r's block in a v-style or regular buffer. */
static uint64_t vcount(const int counts[], int count, int r)
{
    return (uint64_t)(counts ? counts[r] : count);
}

static int64_t voff(const int displs[], int count, int r, const bd_dt_t *t)
{
    return displs ? (int64_t)displs[r] * t->extent : (int64_t)r * count * t->extent;
}

static int check_counts(bd_comm_t *c, MPI_Comm comm, const char *call, const int counts[])
{
    if (!counts)
        return MPI_SUCCESS;
    for (int r = 0; r < c->size; r++)
        if (counts[r] < 0)
            return bd_error(comm, MPI_ERR_COUNT, call, "invalid count %d for rank %d", counts[r],
                            r);
    return MPI_SUCCESS;
}

static int gather_common(const char *call, const void *sendbuf, int sendcount,
                         MPI_Datatype sendtype, void *recvbuf, int recvcount,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                         int root, MPI_Comm comm, int all)
{
    GET_COMM(call);
    int rc;
    bd_dt_t *st = NULL, *rt = NULL;
    int is_root = all || c->rank == root;
    int inplace = sendbuf == MPI_IN_PLACE;
    if (!all && (rc = check_root(c, comm, call, root)))
        return rc;
    if (!inplace && (rc = check_buf(comm, call, sendcount, sendtype, &st, "send")))
        return rc;
    if (is_root) {
        if ((rc = check_buf(comm, call, recvcounts ? 0 : recvcount, recvtype, &rt, "receive")) ||
            (rc = check_counts(c, comm, call, recvcounts)))
            return rc;
    } else if (inplace) {
        return bd_error(comm, MPI_ERR_BUFFER, call, "MPI_IN_PLACE is only allowed at the root");
    }
    int me = c->rank;
    uint64_t mine = inplace ? 0 : (uint64_t)sendcount * st->psize;
    char *rb = recvbuf;
    if (is_root && !inplace) {
        uint64_t expect = vcount(recvcounts, recvcount, me) * rt->psize;
        if (mine > expect)
            return bd_error(comm, MPI_ERR_TRUNCATE, call,
                            "rank %d sends %llu bytes but the root expects %llu", me,
                            (unsigned long long)mine, (unsigned long long)expect);
        bd_dt_copy(st, sendbuf, (uint64_t)sendcount, rt, at(rb, voff(displs, recvcount, me, rt)),
                   vcount(recvcounts, recvcount, me), mine);
    }
    if (c->size == 1)
        return MPI_SUCCESS;
    coll_begin(c, all ? BD_COLL_ALLGATHER : BD_COLL_GATHER, all ? 0 : root, 0, 0, 0);
    if (all || c->rank != root) {
        put_t p = {8, 0};
        if (inplace)
            put_typed(&p, -1, at(rb, voff(displs, recvcount, me, rt)),
                      vcount(recvcounts, recvcount, me), rt);
        else
            put_typed(&p, -1, sendbuf, (uint64_t)sendcount, st);
        put_flush(&p);
    }
    coll_simple(BD_REQ_COLL_WAIT);
    if (is_root) {
        get_t *g = get_new();
        for (int r = 0; r < c->size; r++)
            if (r != me)
                get_typed(g, r, 0, at(rb, voff(displs, recvcount, r, rt)),
                          vcount(recvcounts, recvcount, r), rt);
        get_flush(g);
        free(g);
    }
    coll_simple(BD_REQ_COLL_END);
    return MPI_SUCCESS;
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return gather_common("MPI_Gather", sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL,
                         NULL, recvtype, root, comm, 0);
}

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm)
{
    return gather_common("MPI_Gatherv", sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts,
                         displs, recvtype, root, comm, 0);
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return gather_common("MPI_Allgather", sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL,
                         NULL, recvtype, 0, comm, 1);
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm)
{
    return gather_common("MPI_Allgatherv", sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts,
                         displs, recvtype, 0, comm, 1);
}

static int scatter_common(const char *call, const void *sendbuf, int sendcount,
                          const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                          MPI_Comm comm)
{
    GET_COMM(call);
    int rc;
    bd_dt_t *st = NULL, *rt = NULL;
    int is_root = c->rank == root;
    int inplace = recvbuf == MPI_IN_PLACE;
    if ((rc = check_root(c, comm, call, root)))
        return rc;
    if (is_root && ((rc = check_buf(comm, call, sendcounts ? 0 : sendcount, sendtype, &st,
                                    "send")) ||
                    (rc = check_counts(c, comm, call, sendcounts))))
        return rc;
    if (!is_root && inplace)
        return bd_error(comm, MPI_ERR_BUFFER, call, "MPI_IN_PLACE is only allowed at the root");
    if (!inplace && (rc = check_buf(comm, call, recvcount, recvtype, &rt, "receive")))
        return rc;
    uint64_t cap = inplace ? 0 : (uint64_t)recvcount * rt->psize;
    const char *sb = sendbuf;
    if (is_root && !inplace) {
        uint64_t n = vcount(sendcounts, sendcount, root) * st->psize;
        if (n > cap)
            return bd_error(comm, MPI_ERR_TRUNCATE, call,
                            "root sends %llu bytes to itself but receives only %llu",
                            (unsigned long long)n, (unsigned long long)cap);
        bd_dt_copy(st, at(sb, voff(displs, sendcount, root, st)),
                   vcount(sendcounts, sendcount, root), rt, recvbuf, (uint64_t)recvcount, n);
    }
    if (c->size == 1)
        return MPI_SUCCESS;
    coll_begin(c, BD_COLL_SCATTER, root, 0, 0, 0);
    if (is_root) {
        put_t p = {8, 0};
        for (int r = 0; r < c->size; r++)
            if (r != root)
                put_typed(&p, r, at(sb, voff(displs, sendcount, r, st)),
                          vcount(sendcounts, sendcount, r), st);
        put_flush(&p);
    }
    coll_simple(BD_REQ_COLL_WAIT);
    if (!is_root && cap) {
        get_t *g = get_new();
        get_typed(g, root, 0, recvbuf, (uint64_t)recvcount, rt);
        get_flush(g);
        free(g);
    }
    coll_simple(BD_REQ_COLL_END);
    return MPI_SUCCESS;
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return scatter_common("MPI_Scatter", sendbuf, sendcount, NULL, NULL, sendtype, recvbuf,
                          recvcount, recvtype, root, comm);
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm)
{
    return scatter_common("MPI_Scatterv", sendbuf, 0, sendcounts, displs, sendtype, recvbuf,
                          recvcount, recvtype, root, comm);
}

static int alltoall_common(const char *call, const void *sendbuf, int sendcount,
                           const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    GET_COMM(call);
    int rc;
    bd_dt_t *st = NULL, *rt = NULL;
    int inplace = sendbuf == MPI_IN_PLACE;
    if ((rc = check_buf(comm, call, recvcounts ? 0 : recvcount, recvtype, &rt, "receive")) ||
        (rc = check_counts(c, comm, call, recvcounts)))
        return rc;
    if (inplace) {
        sendbuf = recvbuf;
        sendcount = recvcount;
        sendcounts = recvcounts;
        sdispls = rdispls;
        sendtype = recvtype;
    }
    if ((rc = check_buf(comm, call, sendcounts ? 0 : sendcount, sendtype, &st, "send")) ||
        (rc = check_counts(c, comm, call, sendcounts)))
        return rc;
    const char *sb = sendbuf;
    char *rb = recvbuf;
    int me = c->rank;
    uint64_t own = vcount(sendcounts, sendcount, me) * st->psize;
    uint64_t room = vcount(recvcounts, recvcount, me) * rt->psize;
    if (own > room)
        return bd_error(comm, MPI_ERR_TRUNCATE, call,
                        "rank %d sends %llu bytes to itself but receives only %llu", me,
                        (unsigned long long)own, (unsigned long long)room);
    if (!inplace)
        bd_dt_copy(st, at(sb, voff(sdispls, sendcount, me, st)), vcount(sendcounts, sendcount, me),
                   rt, at(rb, voff(rdispls, recvcount, me, rt)), vcount(recvcounts, recvcount, me),
                   own);
    if (c->size == 1)
        return MPI_SUCCESS;
    coll_begin(c, BD_COLL_ALLTOALL, 0, 0, 0, 0);
    put_t p = {8, 0};
    for (int r = 0; r < c->size; r++)
        if (r != me)
            put_typed(&p, r, at(sb, voff(sdispls, sendcount, r, st)),
                      vcount(sendcounts, sendcount, r), st);
    put_flush(&p);
    coll_simple(BD_REQ_COLL_WAIT);
    get_t *g = get_new();
    for (int r = 0; r < c->size; r++)
        if (r != me)
            get_typed(g, r, 0, at(rb, voff(rdispls, recvcount, r, rt)),
                      vcount(recvcounts, recvcount, r), rt);
    get_flush(g);
    free(g);
    coll_simple(BD_REQ_COLL_END);
    return MPI_SUCCESS;
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return alltoall_common("MPI_Alltoall", sendbuf, sendcount, NULL, NULL, sendtype, recvbuf,
                           recvcount, NULL, NULL, recvtype, comm);
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return alltoall_common("MPI_Alltoallv", sendbuf, 0, sendcounts, sdispls, sendtype, recvbuf,
                           0, recvcounts, rdispls, recvtype, comm);
}
