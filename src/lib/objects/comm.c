/* Communicators: creation (split, dup, idup, create, create_group,
 * split_type), freeing, comparison and the queries.  The table they live
 * in is core/commtab.c; intercommunicators are made in intercomm_create.c. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core.h"
#include "nbc.h"
#include "objects.h"

static void set_predefined(MPI_Comm h, int ctx, int rank, int size, int *world, const char *name)
{
    bdl_g.comms[h] = (bdl_comm_t){.used = 1,
                                  .ctx = ctx,
                                  .rank = rank,
                                  .size = size,
                                  .world = world,
                                  .errh = BDL_ERRH_DEFAULT};
    snprintf(bdl_g.comms[h].name, sizeof bdl_g.comms[h].name, "%s", name);
}

void bdl_comm_setup_predefined(const bd_spawn_info_t *sp)
{
    bdl_g.ncomms = 16;
    bdl_g.comms = calloc((size_t)bdl_g.ncomms, sizeof(bdl_comm_t));
    int n = bdl_g.world_size, me = bdl_g.world_rank;
    int nn = (int)bdl_g.hdr->nnodes, ns = sp ? n : (int)bdl_g.hdr->ninit;
    int *world = malloc((size_t)n * sizeof(int));
    int *cworld = malloc((size_t)n * sizeof(int));
    int *node = malloc((size_t)ns * sizeof(int));
    int *self = malloc(sizeof(int));
    if (!bdl_g.comms || !world || !cworld || !node || !self)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory in MPI_Init");
    *self = me;
    if (sp) {
        /* A spawned rank: its MPI_COMM_WORLD is its spawn's ranks, all on
         * one node, on contexts its master allocated (bdr_spawn_req). */
        const int32_t *lw = (const int32_t *)(sp + 1);
        for (int i = 0; i < n; i++)
            world[i] = cworld[i] = node[i] = lw[i];
        set_predefined(MPI_COMM_WORLD, sp->world_ctx, sp->rank, n, world, "MPI_COMM_WORLD");
        set_predefined(MPI_COMM_SELF, MPI_COMM_SELF, 0, 1, self, "MPI_COMM_SELF");
        set_predefined(BDMPI_COMM_NODE, sp->node_ctx, sp->rank, n, node, "BDMPI_COMM_NODE");
        set_predefined(BDMPI_COMM_CWORLD, sp->cworld_ctx, sp->rank, n, cworld, "BDMPI_COMM_CWORLD");
        return;
    }
    for (int i = 0; i < n; i++)
        world[i] = i;
    /* CWORLD numbers ranks cyclically over nodes: rank k is local rank k/nn of node k%nn. */
    for (int k = 0; k < n; k++)
        cworld[k] = (k % nn) * ns + k / nn;
    int first = (int)bdl_g.hdr->first_rank;
    for (int i = 0; i < ns; i++)
        node[i] = first + i;
    int local = me - first;
    set_predefined(MPI_COMM_WORLD, MPI_COMM_WORLD, me, n, world, "MPI_COMM_WORLD");
    set_predefined(MPI_COMM_SELF, MPI_COMM_SELF, 0, 1, self, "MPI_COMM_SELF");
    set_predefined(BDMPI_COMM_NODE, BDMPI_COMM_NODE, local, ns, node, "BDMPI_COMM_NODE");
    set_predefined(BDMPI_COMM_CWORLD, BDMPI_COMM_CWORLD, local * nn + (int)bdl_g.hdr->node, n,
                   cworld, "BDMPI_COMM_CWORLD");
}

int MPI_Comm_size(MPI_Comm comm, int *size)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Comm_size");
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c)
        return bdl_error(comm, MPI_ERR_COMM, "MPI_Comm_size", "invalid communicator %d", comm);
    if (!size)
        return bdl_error(comm, MPI_ERR_ARG, "MPI_Comm_size", "size is NULL");
    *size = c->size;
    return MPI_SUCCESS;
}

int MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Comm_rank");
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c)
        return bdl_error(comm, MPI_ERR_COMM, "MPI_Comm_rank", "invalid communicator %d", comm);
    if (!rank)
        return bdl_error(comm, MPI_ERR_ARG, "MPI_Comm_rank", "rank is NULL");
    *rank = c->rank;
    return MPI_SUCCESS;
}

/* The split collective on context ctx (the caller is rank myrank, it is the
 * communicator's collective number seq): gives the new context (0 for color
 * MPI_UNDEFINED), the caller's rank, the size and the members' world ranks. */
/* A request of the split collective (ctx, seq) after its BEGIN, addressed
 * to it: under MPI_THREAD_MULTIPLE another thread's collective may begin
 * while this one waits, and the master must not take the one this rank
 * began last for it. */
static bd_req_t *split_req(uint32_t code, int ctx, int myrank, uint64_t seq, int addr)
{
    bd_req_t *r = bdl_req_begin(code);
    if (!addr)
        return r;
    r->flags = BD_COLL_ADDR;
    r->ctx = ctx;
    r->myrank = myrank;
    r->rid = seq;
    return r;
}

/* reserve > 1: a dup, which reserves that many contexts in all (the new
 * one and its parent's next dups').  MPIX_ERR_REVOKED, and no outputs, when
 * another member revoked ctx while this one waited (MPIX_Comm_revoke). */
static int split_rpc_reserve(int ctx, int myrank, uint64_t seq, int color, int key, int reserve,
                             int *out_ctx, int *out_rank, int *out_size, int **out_world,
                             const char *call)
{
    bd_coll_desc_t d = {.kind = BD_COLL_SPLIT, .seq = seq, .count = (uint64_t)reserve};
    bd_req_t *r = bdl_req_begin(BD_REQ_COLL_BEGIN);
    r->ctx = ctx;
    r->myrank = myrank;
    memcpy(bdl_g.win, &d, sizeof d);
    bdl_rpc();
    /* Addressed requests only when another thread may begin a collective
     * meanwhile: the master's lookup by (ctx, seq) does not yet know the
     * instances of a revoked communicator's shrink and agree (ulfm_revoke
     * failed with it), and one thread needs no address. */
    int addr = bdl_mt_busy();
    /* PUT one segment {color, key}. */
    uint32_t nseg = 1;
    int32_t ck[2] = {color, key};
    bd_seg_t seg = {-1, sizeof ck, 0, sizeof ck};
    memcpy(bdl_g.win, &nseg, 4);
    memcpy(bdl_g.win + 8, &seg, sizeof seg);
    memcpy(bdl_g.win + 8 + sizeof seg, ck, sizeof ck);
    split_req(BD_REQ_COLL_PUT, ctx, myrank, seq, addr);
    bdl_rpc();
    if (addr) {
        /* another thread of this rank may need the library meanwhile:
         * poll (each poll gives the run slot to a rank that waits for
         * one) and give the lock up between polls (core/mt.c) */
        for (;;) {
            split_req(BD_REQ_COLL_TEST, ctx, myrank, seq, addr);
            bdl_resp()->status = BD_RESP_OK;
            bdl_rpc();
            if (bdl_resp()->status == BD_RESP_REVOKED)
                return MPIX_ERR_REVOKED;
            if (bdl_resp()->flag)
                break;
            bdl_mt_nap();
        }
    } else {
        /* matching our posted receives meanwhile, as any collective wait
         * (core/xfer.c bdl_xfer_wait) */
        for (;;) {
            uint32_t seen = 0;
            int watch = bdl_p2p_watch_begin(&seen);
            bd_req_t *w = split_req(BD_REQ_COLL_WAIT, ctx, myrank, seq, addr);
            int again = bdl_p2p_rpc_watched(w, watch, seen);
            if (bdl_resp()->status == BD_RESP_REVOKED)
                return MPIX_ERR_REVOKED;
            if (!again)
                break;
        }
    }
    /* GET {ctx, rank, size}, then the world ranks. */
    int32_t head[3];
    seg = (bd_seg_t){-1, sizeof head, 0, 0};
    memcpy(bdl_g.win, &nseg, 4);
    memcpy(bdl_g.win + 8, &seg, sizeof seg);
    split_req(BD_REQ_COLL_GET, ctx, myrank, seq, addr);
    bdl_rpc();
    memcpy(head, bdl_g.win, sizeof head);
    int *world = NULL;
    if (head[0]) {
        world = malloc((size_t)head[2] * sizeof(int));
        if (!world)
            bdl_fatal(MPI_ERR_NO_MEM, "%s: out of memory", call);
        uint64_t done = 0, total = (uint64_t)head[2] * sizeof(int);
        while (done < total) {
            uint64_t chunk = total - done;
            if (chunk > bdl_g.window - 64)
                chunk = bdl_g.window - 64;
            seg = (bd_seg_t){-1, (uint32_t)chunk, sizeof head + done, 0};
            memcpy(bdl_g.win, &nseg, 4);
            memcpy(bdl_g.win + 8, &seg, sizeof seg);
            split_req(BD_REQ_COLL_GET, ctx, myrank, seq, addr);
            bdl_rpc();
            memcpy((char *)world + done, bdl_g.win, chunk);
            done += chunk;
        }
    }
    split_req(BD_REQ_COLL_END, ctx, myrank, seq, addr);
    bdl_rpc();
    *out_ctx = head[0];
    *out_rank = head[1];
    *out_size = head[2];
    *out_world = world;
    return MPI_SUCCESS;
}

static int split_rpc(int ctx, int myrank, uint64_t seq, int color, int key, int *out_ctx,
                     int *out_rank, int *out_size, int **out_world, const char *call)
{
    return split_rpc_reserve(ctx, myrank, seq, color, key, 0, out_ctx, out_rank, out_size,
                             out_world, call);
}

/* Collective creation of a communicator from comm; color MPI_UNDEFINED gives
 * MPI_COMM_NULL. */
int bdl_comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm, const char *call)
{
    BDL_CHECK_INIT(call);
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c)
        return bdl_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);
    if (c->revoked)
        return bdl_comm_revoked_error(comm, call);
    if (!newcomm)
        return bdl_error(comm, MPI_ERR_ARG, call, "newcomm is NULL");
    if (color < 0 && color != MPI_UNDEFINED)
        return bdl_error(comm, MPI_ERR_ARG, call,
                         "invalid color %d (must be >= 0 or MPI_UNDEFINED)", color);
    if (c->inter)
        return bdl_inter_split(comm, color, key, newcomm, call);
    MPI_Errhandler errh = c->errh;
    int ctx, rank, size;
    int *world;
    if (c->size == 1) {
        if (color == MPI_UNDEFINED) {
            *newcomm = MPI_COMM_NULL;
            return MPI_SUCCESS;
        }
        bdl_req_begin(BD_REQ_CTX_ALLOC);
        bdl_rpc();
        ctx = (int)bdl_resp()->arg[0];
        rank = 0;
        size = 1;
        world = malloc(sizeof(int));
        if (!world)
            return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
        world[0] = c->world[0];
    } else {
        if (split_rpc(c->ctx, c->rank, c->coll_seq++, color, key, &ctx, &rank, &size, &world, call))
            return bdl_comm_revoked_error(comm, call);
        if (!ctx) {
            *newcomm = MPI_COMM_NULL;
            return MPI_SUCCESS;
        }
    }
    int h = bdl_comm_add(ctx, rank, size, world, errh);
    if (h < 0)
        return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
    *newcomm = h;
    return MPI_SUCCESS;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    BDL_MT_GUARD;
    return bdl_comm_split(comm, color, key, newcomm, "MPI_Comm_split");
}

/* Tell the master without asking (bd_slot_t.cnotes): -1 when the notices
 * are full, and a request must say it. */
static int comm_note(int kind, int ctx, int parent)
{
    bd_slot_t *sl = bdl_g.slot;
    uint32_t head = atomic_load_explicit(&sl->cn_head, memory_order_relaxed);
    if (head - atomic_load_explicit(&sl->cn_tail, memory_order_acquire) >= BD_CNOTE_N)
        return -1;
    sl->cnotes[head % BD_CNOTE_N] = (bd_cnote_t){.kind = kind, .ctx = ctx, .parent = parent};
    atomic_store_explicit(&sl->cn_head, head + 1, memory_order_release);
    return 0;
}

/* Drop a communicator handle (its attributes are already deleted). */
static void comm_release(MPI_Comm h)
{
    bdl_comm_t *c = &bdl_g.comms[h];
    if (c->agree) {
        comm_release(c->agree); /* its hidden communicator of agreements */
        c = &bdl_g.comms[h];
    }
    if (c->inter) {
        /* Only its hidden communicators are known to the master. */
        comm_release(c->local);
        comm_release(c->ucomm);
        free(c->rworld);
    } else if (c->size > 1) {
        /* A master-allocated context ((node << 20) + n, below every flag
         * bit) is never used again: its free can wait in the notices.
         * Derived and temporary ones may be registered again at once, so
         * the master must know now. */
        if (c->ctx <= 0 || c->ctx >= BD_CTX_RMA_SVC || comm_note(BD_CNOTE_FREE, c->ctx, 0) < 0) {
            bd_req_t *r = bdl_req_begin(BD_REQ_COMM_FREE);
            r->ctx = c->ctx;
            bdl_rpc();
        }
    }
    bdl_topo_free(c->topo);
    free(c->attrs);
    free(c->world);
    memset(c, 0, sizeof *c);
}

/* The new communicator of a dup of comm (an intracommunicator of 2 ranks
 * or more) in *h.  A context agreed by all members needs no collective
 * when the parent has one reserved: a dup through the master (a split)
 * reserves the contexts of the parent's next dups too, 4, 8, ... up to
 * BD_DUP_RESERVE_MAX at a time, and every member takes them in the same
 * order, since MPI orders a communicator's collectives alike in all its
 * members.  Such a dup tells its master only (BD_REQ_COMM_DUP, answered at
 * once): no wait for the others, no run slot handed over.  Contexts are
 * never reused, so none of them can be a live communicator's. */
static int dup_ctx(MPI_Comm comm, MPI_Comm *h, const char *call)
{
    bdl_comm_t *c = bdl_comm_get(comm);
    if (c->size == 1)
        return bdl_comm_split(comm, 0, c->rank, h, call);
    int ctx, rank = c->rank, size = c->size;
    int *world;
    if (c->dup_left > 0) {
        world = malloc((size_t)size * sizeof(int));
        if (!world)
            return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
        memcpy(world, c->world, (size_t)size * sizeof(int));
        ctx = c->dup_next++;
        c->dup_left--;
        if (comm_note(BD_CNOTE_DUP, ctx, c->ctx) < 0) {
            bd_req_t *r = bdl_req_begin(BD_REQ_COMM_DUP);
            r->ctx = ctx;
            r->arg[0] = c->ctx;
            bdl_rpc();
        }
    } else {
        int k = c->dup_block ? 2 * c->dup_block : 4;
        if (k > BD_DUP_RESERVE_MAX)
            k = BD_DUP_RESERVE_MAX;
        c->dup_block = k;
        if (split_rpc_reserve(c->ctx, c->rank, c->coll_seq++, 0, c->rank, k, &ctx, &rank, &size,
                              &world, call))
            return bdl_comm_revoked_error(comm, call);
        c->dup_next = ctx + 1;
        c->dup_left = k - 1;
    }
    int nh = bdl_comm_add(ctx, rank, size, world, bdl_comm_get(comm)->errh);
    if (nh < 0) {
        free(world);
        bd_req_t *r = bdl_req_begin(BD_REQ_COMM_FREE);
        r->ctx = ctx;
        bdl_rpc();
        return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
    }
    if (bdl_comm_revoked_early(ctx))
        bdl_g.comms[nh].revoked = 1;
    *h = nh;
    return MPI_SUCCESS;
}

/* A duplicate keeps the group, the error handler and the topology; the
 * attributes go through their copy callbacks. */
static int comm_dup(MPI_Comm comm, MPI_Comm *newcomm, const char *call)
{
    MPI_Comm h;
    int rc = dup_ctx(comm, &h, call);
    if (rc)
        return rc;
    bdl_comm_t *c = bdl_comm_get(comm); /* the table may have moved */
    if (c->topo) {
        bdl_g.comms[h].topo = bdl_topo_dup(c->topo);
        if (!bdl_g.comms[h].topo) {
            comm_release(h);
            return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
        }
    }
    rc = bdl_attr_copy_all(comm, h, call);
    if (rc) {
        bdl_attr_delete_all(h, call);
        comm_release(h);
        *newcomm = MPI_COMM_NULL;
        return rc;
    }
    *newcomm = h;
    return MPI_SUCCESS;
}

/* MPI_Comm_idup: the new handle is taken at the call (pending: it names no
 * communicator yet) and gets the attributes and the topology then; the
 * split that allocates the context runs as a nonblocking collective, and
 * its completion fills the entry in and stores the handle in *newcomm.
 * An intercommunicator splits its union instead (bdl_inter_idup_done). */
typedef struct idup {
    MPI_Comm h;
    MPI_Comm *out;
} idup_t;

static void idup_done(void *arg, int ctx, int rank, int size, int *world)
{
    idup_t *x = arg;
    bdl_comm_t *n = &bdl_g.comms[x->h];
    if (n->inter) {
        bdl_inter_idup_done(x->h, ctx, rank, size, world);
    } else {
        free(n->world); /* the parent's list, kept until now; the same members */
        n->ctx = ctx;
        n->rank = rank;
        n->size = size;
        n->world = world;
        n->pending = 0;
    }
    *x->out = x->h;
    free(x);
}

/* request NULL: complete before returning (MPI_Comm_dup of an
 * intercommunicator). */
static int comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request, const char *call)
{
    BDL_CHECK_INIT(call);
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c)
        return bdl_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);
    if (c->revoked)
        return bdl_comm_revoked_error(comm, call);
    if (!newcomm)
        return bdl_error(comm, MPI_ERR_ARG, call, "newcomm is NULL");
    if (!request && !c->inter)
        return comm_dup(comm, newcomm, call);
    int *world = malloc((size_t)c->size * sizeof(int));
    int *rworld = c->inter ? malloc((size_t)c->rsize * sizeof(int)) : NULL;
    idup_t *x = malloc(sizeof *x);
    if (!world || (c->inter && !rworld) || !x) {
        free(world);
        free(rworld);
        free(x);
        return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
    }
    memcpy(world, c->world, (size_t)c->size * sizeof(int));
    if (rworld)
        memcpy(rworld, c->rworld, (size_t)c->rsize * sizeof(int));
    int h = bdl_comm_add(0, c->rank, c->size, world, c->errh);
    if (h < 0) {
        free(world);
        free(rworld);
        free(x);
        return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
    }
    c = bdl_comm_get(comm);
    bdl_comm_t *n = &bdl_g.comms[h];
    n->inter = c->inter;
    n->rsize = c->rsize;
    n->rworld = rworld;
    n->uoff = c->uoff;
    n->roff = c->roff;
    int rc = MPI_SUCCESS;
    if (c->topo && !(n->topo = bdl_topo_dup(c->topo)))
        rc = bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
    if (!rc)
        rc = bdl_attr_copy_all(comm, h, call);
    if (rc) {
        bdl_attr_delete_all(h, call);
        n = &bdl_g.comms[h];
        bdl_topo_free(n->topo);
        free(n->attrs);
        free(n->world);
        free(n->rworld);
        memset(n, 0, sizeof *n);
        free(x);
        *newcomm = MPI_COMM_NULL;
        return rc;
    }
    c = bdl_comm_get(comm);
    x->h = h;
    x->out = newcomm;
    if (c->size == 1 && !c->inter) {
        bdl_req_begin(BD_REQ_CTX_ALLOC);
        bdl_rpc();
        bdl_g.comms[h].ctx = (int)bdl_resp()->arg[0];
        *newcomm = h;
        free(x);
        *request = bdl_nbc_completed();
        return MPI_SUCCESS;
    }
    bdl_g.comms[h].pending = 1;
    bdl_comm_t *on = c->inter ? bdl_comm_get(c->ucomm) : c;
    return bdl_nbc_split(on, 0, on->rank, BD_API_COMM_DUP, idup_done, x, request);
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    BDL_MT_GUARD;
    return comm_idup(comm, newcomm, NULL, "MPI_Comm_dup");
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    BDL_MT_GUARD;
    (void)info; /* hints are allowed to be ignored */
    return comm_idup(comm, newcomm, NULL, "MPI_Comm_dup_with_info");
}

int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    BDL_MT_GUARD;
    if (!request)
        return bdl_error(comm, MPI_ERR_ARG, "MPI_Comm_idup", "NULL request argument");
    return comm_idup(comm, newcomm, request, "MPI_Comm_idup");
}

int MPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request)
{
    BDL_MT_GUARD;
    (void)info;
    if (!request)
        return bdl_error(comm, MPI_ERR_ARG, "MPI_Comm_idup_with_info", "NULL request argument");
    return comm_idup(comm, newcomm, request, "MPI_Comm_idup_with_info");
}

int MPI_Comm_free(MPI_Comm *comm)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Comm_free");
    bdl_comm_t *c = comm ? bdl_comm_get(*comm) : NULL;
    if (!c)
        return bdl_error(comm ? *comm : MPI_COMM_NULL, MPI_ERR_COMM, "MPI_Comm_free",
                         "invalid communicator %d", comm ? *comm : 0);
    if (*comm <= BDMPI_COMM_CWORLD)
        return bdl_error(*comm, MPI_ERR_COMM, "MPI_Comm_free",
                         "cannot free predefined communicator %d", *comm);
    int rc = bdl_attr_delete_all(*comm, "MPI_Comm_free");
    if (rc)
        return rc;
    comm_release(*comm);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

int MPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Comm_test_inter");
    if (!bdl_comm_get(comm))
        return bdl_error(comm, MPI_ERR_COMM, "MPI_Comm_test_inter", "invalid communicator %d",
                         comm);
    if (!flag)
        return bdl_error(comm, MPI_ERR_ARG, "MPI_Comm_test_inter", "flag is NULL");
    *flag = bdl_comm_get(comm)->inter;
    return MPI_SUCCESS;
}

/* Rank of world rank w in the member list, or -1. */
static int index_of(const int *list, int n, int w)
{
    for (int i = 0; i < n; i++)
        if (list[i] == w)
            return i;
    return -1;
}

/* Every member of the group must belong to c (MPI_ERR_GROUP otherwise). */
static int group_in_comm(bdl_comm_t *c, MPI_Comm comm, const int *mem, int n, const char *call)
{
    int lim = 1;
    for (int i = 0; i < c->size; i++)
        lim = c->world[i] >= lim ? c->world[i] + 1 : lim;
    for (int i = 0; i < n; i++)
        lim = mem[i] >= lim ? mem[i] + 1 : lim;
    char *in = calloc((size_t)lim, 1);
    if (!in)
        return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
    for (int i = 0; i < c->size; i++)
        in[c->world[i]] = 1;
    for (int i = 0; i < n; i++)
        if (!in[mem[i]]) {
            free(in);
            return bdl_error(comm, MPI_ERR_GROUP, call,
                             "group member %d (world rank %d) is not in communicator %d", i, mem[i],
                             comm);
        }
    free(in);
    return MPI_SUCCESS;
}

/* MPI_Comm_create is a split: members take their group's color and their
 * group rank as key (the group's order becomes the rank order), the others
 * MPI_UNDEFINED.
 * On an intercommunicator the group is a subgroup of the local group, and
 * the result joins it to the subgroup the remote side named (a split of the
 * intercommunicator does exactly that). */
int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Comm_create";
    BDL_CHECK_INIT(call);
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c)
        return bdl_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);
    int n;
    const int *mem = bdl_group_members(group, &n);
    if (!mem)
        return bdl_error(comm, MPI_ERR_GROUP, call, "invalid group %d", group);
    if (!newcomm)
        return bdl_error(comm, MPI_ERR_ARG, call, "newcomm is NULL");
    int rc = group_in_comm(c, comm, mem, n, call);
    if (rc)
        return rc;
    int me = index_of(mem, n, bdl_g.world_rank);
    /* Since MPI 2.2 the ranks may pass different, disjoint groups: the color
     * names the group by its first member's rank in comm. */
    int color = me < 0 ? MPI_UNDEFINED : c->inter ? 0 : index_of(c->world, c->size, mem[0]);
    return bdl_comm_split(comm, color, me < 0 ? 0 : me, newcomm, call);
}

/* Creations so far per (parent context, tag, member list): the n-th
 * MPI_Comm_create_group of the same members is the same call for all of them. */
typedef struct cg_count {
    int ctx, tag, n;
    int *world;
    uint64_t count;
} cg_count_t;

static cg_count_t *g_cg;
static int g_ncg;

static uint64_t cg_next(int ctx, int tag, const int *world, int n)
{
    for (int i = 0; i < g_ncg; i++)
        if (g_cg[i].ctx == ctx && g_cg[i].tag == tag && g_cg[i].n == n &&
            !memcmp(g_cg[i].world, world, (size_t)n * sizeof(int)))
            return g_cg[i].count++;
    cg_count_t *t = realloc(g_cg, (size_t)(g_ncg + 1) * sizeof *t);
    int *w = malloc((size_t)n * sizeof(int));
    if (!t || !w)
        bdl_fatal(MPI_ERR_NO_MEM, "MPI_Comm_create_group: out of memory");
    memcpy(w, world, (size_t)n * sizeof(int));
    g_cg = t;
    g_cg[g_ncg++] = (cg_count_t){ctx, tag, n, w, 1};
    return 0;
}

/* MPI_Comm_create_group is collective over the group's members only: they
 * run a split on a temporary communicator of exactly themselves, which each
 * registers with its master first and frees after.  Its context is computed
 * alike by every member from (parent context, tag, members, how many such
 * creations came before): a negative number, so never one the masters
 * allocate; the master reports the (unlikely) case of two different groups
 * meeting on one. */
int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Comm_create_group";
    BDL_CHECK_INIT(call);
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c)
        return bdl_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);
    if (c->inter)
        return bdl_error(comm, MPI_ERR_COMM, call,
                         "communicator %d is an intercommunicator (must be an intracommunicator)",
                         comm);
    int n;
    const int *mem = bdl_group_members(group, &n);
    if (!mem)
        return bdl_error(comm, MPI_ERR_GROUP, call, "invalid group %d", group);
    if (!newcomm)
        return bdl_error(comm, MPI_ERR_ARG, call, "newcomm is NULL");
    if (tag < 0)
        return bdl_error(comm, MPI_ERR_TAG, call, "invalid tag %d (must be 0..MPI_TAG_UB)", tag);
    int rc = group_in_comm(c, comm, mem, n, call);
    if (rc)
        return rc;
    return bdl_comm_create_members(comm, mem, n, tag, newcomm, call);
}

int bdl_comm_create_members(MPI_Comm comm, const int *mem, int n, int tag, MPI_Comm *newcomm,
                            const char *call)
{
    bdl_comm_t *c = bdl_comm_get(comm);
    int me = index_of(mem, n, bdl_g.world_rank);
    if (me < 0) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    if ((uint64_t)n * sizeof(int32_t) > bdl_g.window)
        return bdl_error(comm, MPI_ERR_OTHER, call,
                         "a group of %d ranks does not fit the %llu-byte window (use a larger "
                         "-window)",
                         n, (unsigned long long)bdl_g.window);
    MPI_Errhandler errh = c->errh;
    int ctx, rank, size, *world;
    if (n == 1) {
        bdl_req_begin(BD_REQ_CTX_ALLOC);
        bdl_rpc();
        ctx = (int)bdl_resp()->arg[0];
        rank = 0;
        size = 1;
        world = malloc(sizeof(int));
        if (!world)
            return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
        world[0] = bdl_g.world_rank;
    } else {
        /* FNV-1a over the key, folded into [-2^30, -1]. */
        uint64_t occ = cg_next(c->ctx, tag, mem, n);
        uint32_t hsh = 2166136261u;
        int32_t key[4] = {c->ctx, tag, n, (int32_t)occ};
        for (int i = 0; i < 4 + n; i++) {
            uint32_t v = (uint32_t)(i < 4 ? key[i] : mem[i - 4]);
            for (int b = 0; b < 4; b++) {
                hsh ^= (v >> (8 * b)) & 0xff;
                hsh *= 16777619u;
            }
        }
        int tmp = -(int)(hsh & 0x3fffffffu) - 1;
        bdl_comm_register(tmp, mem, n);
        /* tmp is this call's own: nobody can revoke it */
        (void)split_rpc(tmp, me, 0, 0, me, &ctx, &rank, &size, &world, call);
        bd_req_t *r = bdl_req_begin(BD_REQ_COMM_FREE);
        r->ctx = tmp;
        bdl_rpc();
    }
    int h = bdl_comm_add(ctx, rank, size, world, errh);
    if (h < 0) {
        free(world);
        return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
    }
    *newcomm = h;
    return MPI_SUCCESS;
}

/* The color of the caller in MPI_Comm_split_type of c: MPI_COMM_TYPE_SHARED
 * is the ranks of comm on the caller's node; of MPI 4.0's types,
 * MPI_COMM_TYPE_HW_GUIDED knows the node under the names
 * "mpi_shared_memory" and "Machine" (anything else: MPI_UNDEFINED),
 * MPI_COMM_TYPE_HW_UNGUIDED splits by node only when comm spans several
 * (it must return strict subsets; the caller's info then says
 * "mpi_shared_memory"), MPI_COMM_TYPE_RESOURCE_GUIDED knows the
 * process sets "mpi://WORLD" and "mpi://SELF".  -1: split_type is invalid. */
static int split_type_color(const bdl_comm_t *c, int split_type, MPI_Info info)
{
    int node = bdl_world_node(bdl_g.world_rank);
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    switch (split_type) {
    case MPI_UNDEFINED: return MPI_UNDEFINED;
    case MPI_COMM_TYPE_SHARED: return node;
    case MPI_COMM_TYPE_HW_GUIDED:
        if (info == MPI_INFO_NULL ||
            MPI_Info_get(info, "mpi_hw_resource_type", MPI_MAX_INFO_VAL, v, &flag) || !flag)
            return MPI_UNDEFINED;
        return !strcmp(v, "mpi_shared_memory") || !strcasecmp(v, "Machine") ? node : MPI_UNDEFINED;
    case MPI_COMM_TYPE_HW_UNGUIDED:
        for (int r = 0; r < c->size; r++)
            if (bdl_world_node(c->world[r]) != node)
                return node;
        return MPI_UNDEFINED;
    case MPI_COMM_TYPE_RESOURCE_GUIDED:
        if (info == MPI_INFO_NULL ||
            MPI_Info_get(info, "mpi_pset_name", MPI_MAX_INFO_VAL, v, &flag) || !flag)
            return MPI_UNDEFINED;
        if (!strcasecmp(v, "mpi://WORLD"))
            return 0;
        return !strcasecmp(v, "mpi://SELF") ? c->rank : MPI_UNDEFINED;
    default: return -1;
    }
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Comm_split_type";
    BDL_CHECK_INIT(call);
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c)
        return bdl_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);
    /* On an intercommunicator too (MPI 3.1 6.4.2): the split of each group
     * by node, as MPI_Comm_split of an intercommunicator pairs them. */
    if (info != MPI_INFO_NULL && !bdl_info_valid(info))
        return bdl_error(comm, MPI_ERR_INFO, call, "invalid info %d", info);
    int color = split_type_color(c, split_type, info);
    if (color == -1)
        return bdl_error(comm, MPI_ERR_ARG, call,
                         "invalid split_type %d (MPI_COMM_TYPE_SHARED, MPI_COMM_TYPE_HW_GUIDED, "
                         "MPI_COMM_TYPE_HW_UNGUIDED, MPI_COMM_TYPE_RESOURCE_GUIDED or "
                         "MPI_UNDEFINED)",
                         split_type);
    int rc = bdl_comm_split(comm, color, key, newcomm, call);
    /* MPI 4.0 7.4.2: info tells which resource HW_UNGUIDED split by (the
     * node, whose ranks share memory), a name HW_GUIDED takes back. */
    if (rc == MPI_SUCCESS && split_type == MPI_COMM_TYPE_HW_UNGUIDED && info != MPI_INFO_NULL &&
        *newcomm != MPI_COMM_NULL)
        rc = MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory");
    return rc;
}

int MPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    BDL_MT_GUARD;
    (void)info; /* no hint changes anything here */
    BDL_CHECK_INIT("MPI_Comm_set_info");
    if (!bdl_comm_get(comm))
        return bdl_error(comm, MPI_ERR_COMM, "MPI_Comm_set_info", "invalid communicator %d", comm);
    return MPI_SUCCESS;
}

int MPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Comm_get_info");
    if (!bdl_comm_get(comm))
        return bdl_error(comm, MPI_ERR_COMM, "MPI_Comm_get_info", "invalid communicator %d", comm);
    return MPI_Info_create(info_used); /* no hint is in use */
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return x < y ? -1 : x > y;
}

/* MPI_CONGRUENT (same ranks, same order), MPI_SIMILAR (same ranks), MPI_UNEQUAL; -1 out of memory. */
static int list_cmp(const int *a, int na, const int *b, int nb)
{
    if (na != nb)
        return MPI_UNEQUAL;
    if (!memcmp(a, b, (size_t)na * sizeof(int)))
        return MPI_CONGRUENT;
    int *x = malloc((size_t)na * sizeof(int)), *y = malloc((size_t)na * sizeof(int));
    if (!x || !y) {
        free(x);
        free(y);
        return -1;
    }
    memcpy(x, a, (size_t)na * sizeof(int));
    memcpy(y, b, (size_t)na * sizeof(int));
    qsort(x, (size_t)na, sizeof(int), cmp_int);
    qsort(y, (size_t)na, sizeof(int), cmp_int);
    int r = memcmp(x, y, (size_t)na * sizeof(int)) ? MPI_UNEQUAL : MPI_SIMILAR;
    free(x);
    free(y);
    return r;
}

/* Intercommunicators compare both groups; an intercommunicator and an
 * intracommunicator are unequal. */
int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Comm_compare");
    bdl_comm_t *a = bdl_comm_get(comm1), *b = bdl_comm_get(comm2);
    if (!a || !b)
        return bdl_error(a ? comm2 : comm1, MPI_ERR_COMM, "MPI_Comm_compare",
                         "invalid communicator %d", a ? comm2 : comm1);
    if (!result)
        return bdl_error(comm1, MPI_ERR_ARG, "MPI_Comm_compare", "result is NULL");
    if (comm1 == comm2) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    if (a->inter != b->inter) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    int r = list_cmp(a->world, a->size, b->world, b->size);
    if (r >= 0 && a->inter) {
        int q = list_cmp(a->rworld, a->rsize, b->rworld, b->rsize);
        r = q < 0 ? q : q > r ? q : r; /* the weaker relation of the two groups */
    }
    if (r < 0)
        return bdl_error(comm1, MPI_ERR_NO_MEM, "MPI_Comm_compare", "out of memory");
    *result = r;
    return MPI_SUCCESS;
}

int MPI_Comm_get_attr(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Comm_get_attr");
    static int tag_ub = INT_MAX, host = MPI_PROC_NULL, io = MPI_ANY_SOURCE, wtime_global = 0,
               appnum = 0, universe, lastused;
    if (!bdl_comm_get(comm))
        return bdl_error(comm, MPI_ERR_COMM, "MPI_Comm_get_attr", "invalid communicator %d", comm);
    uint64_t u = bd_universe_size(bdl_g.hdr);
    universe = u > INT_MAX ? INT_MAX : (int)u;
    appnum = bdl_g.appnum;
    int *v = NULL;
    switch (keyval) {
    case MPI_TAG_UB: v = &tag_ub; break;
    case MPI_HOST: v = &host; break;
    case MPI_IO: v = &io; break;
    case MPI_WTIME_IS_GLOBAL: v = &wtime_global; break;
    case MPI_UNIVERSE_SIZE: v = &universe; break;
    case MPI_APPNUM: v = &appnum; break;
    case MPI_LASTUSEDCODE:
        lastused = bdl_errcode_lastused();
        v = &lastused;
        break;
    default: {
        void *val = NULL;
        int rc = bdl_attr_get(bdl_comm_get(comm), keyval, &val, flag);
        if (rc)
            return bdl_error(comm, rc, "MPI_Comm_get_attr", "invalid keyval %d", keyval);
        if (*flag)
            *(void **)attribute_val = val;
        return MPI_SUCCESS;
    }
    }
    *(int **)attribute_val = v;
    *flag = 1;
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- extensions */

static int node_layout(MPI_Comm comm, const char *call, int *nsize, int *nrank, int *lsize,
                       int *lrank, int *rrank)
{
    BDL_CHECK_INIT(call);
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c)
        return bdl_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);
    int mynode = bdl_world_node(bdl_g.world_rank);
    int nn = (int)bdl_g.hdr->nnodes;
    char *seen = calloc((size_t)nn, 1);
    if (!seen)
        return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
    *lsize = 0;
    *lrank = 0;
    *rrank = -1;
    for (int r = 0; r < c->size; r++) {
        int nd = bdl_world_node(c->world[r]);
        if (nd >= 0 && nd < nn)
            seen[nd] = 1;
        if (nd == mynode) {
            if (*rrank < 0)
                *rrank = r;
            if (r < c->rank)
                (*lrank)++;
            (*lsize)++;
        }
    }
    *nsize = 0;
    *nrank = 0;
    for (int i = 0; i < nn; i++) {
        if (!seen[i])
            continue;
        if (i < mynode)
            (*nrank)++;
        (*nsize)++;
    }
    free(seen);
    return MPI_SUCCESS;
}

#define LAYOUT_FN(name, field)                                                                     \
    int name(MPI_Comm comm, int *out)                                                              \
    {                                                                                              \
        int v[5];                                                                                  \
        int rc = node_layout(comm, #name, &v[0], &v[1], &v[2], &v[3], &v[4]);                      \
        if (rc == MPI_SUCCESS)                                                                     \
            *out = v[field];                                                                       \
        return rc;                                                                                 \
    }
LAYOUT_FN(BDMPI_Comm_nsize, 0)
LAYOUT_FN(BDMPI_Comm_nrank, 1)
LAYOUT_FN(BDMPI_Comm_lsize, 2)
LAYOUT_FN(BDMPI_Comm_lrank, 3)
LAYOUT_FN(BDMPI_Comm_rrank, 4)

int MPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Comm_get_name");
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c)
        return bdl_error(comm, MPI_ERR_COMM, "MPI_Comm_get_name", "invalid communicator %d", comm);
    int n = snprintf(comm_name, MPI_MAX_OBJECT_NAME, "%s", c->name);
    *resultlen = n < MPI_MAX_OBJECT_NAME ? n : MPI_MAX_OBJECT_NAME - 1;
    return MPI_SUCCESS;
}

int MPI_Comm_set_name(MPI_Comm comm, const char *comm_name)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Comm_set_name");
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c)
        return bdl_error(comm, MPI_ERR_COMM, "MPI_Comm_set_name", "invalid communicator %d", comm);
    snprintf(c->name, sizeof c->name, "%s", comm_name ? comm_name : "");
    return MPI_SUCCESS;
}
