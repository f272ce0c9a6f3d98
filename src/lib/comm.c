/* Communicators on the slave side: a handle indexes g_bd.comms; each entry
 * knows its context id (shared with the master), the caller's rank and the
 * world rank of every member. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib.h"

bd_comm_t *bd_comm_get(MPI_Comm comm)
{
    if (comm <= 0 || comm >= g_bd.ncomms || !g_bd.comms[comm].used)
        return NULL;
    return &g_bd.comms[comm];
}

int bd_comm_add(int ctx, int rank, int size, int *world, MPI_Errhandler errh)
{
    int h = 0;
    for (int i = 5; i < g_bd.ncomms; i++)
        if (!g_bd.comms[i].used) {
            h = i;
            break;
        }
    if (!h) {
        int n = g_bd.ncomms ? g_bd.ncomms * 2 : 16;
        bd_comm_t *t = realloc(g_bd.comms, (size_t)n * sizeof *t);
        if (!t)
            return -1;
        memset(t + g_bd.ncomms, 0, (size_t)(n - g_bd.ncomms) * sizeof *t);
        h = g_bd.ncomms < 5 ? 5 : g_bd.ncomms;
        g_bd.comms = t;
        g_bd.ncomms = n;
    }
    g_bd.comms[h] = (bd_comm_t){1, ctx, rank, size, world, errh, 0, ""};
    return h;
}

static void set_predefined(MPI_Comm h, int ctx, int rank, int size, int *world,
                           const char *name)
{
    g_bd.comms[h] = (bd_comm_t){1, ctx, rank, size, world, MPI_ERRORS_ARE_FATAL, 0, ""};
    snprintf(g_bd.comms[h].name, sizeof g_bd.comms[h].name, "%s", name);
}

int bd_world_node(int world)
{
    return world / (int)g_bd.hdr->nslaves;
}

void bd_comm_setup_predefined(void)
{
    g_bd.ncomms = 16;
    g_bd.comms = calloc((size_t)g_bd.ncomms, sizeof(bd_comm_t));
    int n = g_bd.world_size, me = g_bd.world_rank;
    int nn = (int)g_bd.hdr->nnodes, ns = (int)g_bd.hdr->nslaves;
    int *world = malloc((size_t)n * sizeof(int));
    int *cworld = malloc((size_t)n * sizeof(int));
    int *node = malloc((size_t)ns * sizeof(int));
    int *self = malloc(sizeof(int));
    if (!g_bd.comms || !world || !cworld || !node || !self)
        bd_fatal(MPI_ERR_NO_MEM, "out of memory in MPI_Init");
    for (int i = 0; i < n; i++)
        world[i] = i;
    /* CWORLD numbers ranks cyclically over nodes: rank k is local rank k/nn of node k%nn. */
    for (int k = 0; k < n; k++)
        cworld[k] = (k % nn) * ns + k / nn;
    int first = (int)g_bd.hdr->first_rank;
    for (int i = 0; i < ns; i++)
        node[i] = first + i;
    *self = me;
    int local = me - first;
    set_predefined(MPI_COMM_WORLD, MPI_COMM_WORLD, me, n, world, "MPI_COMM_WORLD");
    set_predefined(MPI_COMM_SELF, MPI_COMM_SELF, 0, 1, self, "MPI_COMM_SELF");
    set_predefined(BDMPI_COMM_NODE, BDMPI_COMM_NODE, local, ns, node, "BDMPI_COMM_NODE");
    set_predefined(BDMPI_COMM_CWORLD, BDMPI_COMM_CWORLD, local * nn + (int)g_bd.hdr->node, n,
                   cworld, "BDMPI_COMM_CWORLD");
}

int MPI_Comm_size(MPI_Comm comm, int *size)
{
    BD_CHECK_INIT("MPI_Comm_size");
    bd_comm_t *c = bd_comm_get(comm);
    if (!c)
        return bd_error(comm, MPI_ERR_COMM, "MPI_Comm_size", "invalid communicator %d", comm);
    *size = c->size;
    return MPI_SUCCESS;
}

int MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    BD_CHECK_INIT("MPI_Comm_rank");
    bd_comm_t *c = bd_comm_get(comm);
    if (!c)
        return bd_error(comm, MPI_ERR_COMM, "MPI_Comm_rank", "invalid communicator %d", comm);
    *rank = c->rank;
    return MPI_SUCCESS;
}

/* Collective creation of a communicator from comm; color MPI_UNDEFINED gives
 * MPI_COMM_NULL. */
static int comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm, const char *call)
{
    BD_CHECK_INIT(call);
    bd_comm_t *c = bd_comm_get(comm);
    if (!c)
        return bd_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);
    if (color < 0 && color != MPI_UNDEFINED)
        return bd_error(comm, MPI_ERR_ARG, call, "invalid color %d (must be >= 0 or MPI_UNDEFINED)",
                        color);
    MPI_Errhandler errh = c->errh;
    int ctx, rank, size;
    int *world;
    if (c->size == 1) {
        if (color == MPI_UNDEFINED) {
            *newcomm = MPI_COMM_NULL;
            return MPI_SUCCESS;
        }
        bd_req_begin(BD_REQ_CTX_ALLOC);
        bd_rpc();
        ctx = (int)bd_resp()->arg[0];
        rank = 0;
        size = 1;
        world = malloc(sizeof(int));
        if (!world)
            return bd_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
        world[0] = c->world[0];
    } else {
        bd_coll_desc_t d = {.kind = BD_COLL_SPLIT, .seq = c->coll_seq++};
        bd_req_t *r = bd_req_begin(BD_REQ_COLL_BEGIN);
        r->ctx = c->ctx;
        r->myrank = c->rank;
        memcpy(g_bd.win, &d, sizeof d);
        bd_rpc();
        /* PUT one segment {color, key}. */
        uint32_t nseg = 1;
        int32_t ck[2] = {color, key};
        bd_seg_t seg = {-1, sizeof ck, 0, sizeof ck};
        memcpy(g_bd.win, &nseg, 4);
        memcpy(g_bd.win + 8, &seg, sizeof seg);
        memcpy(g_bd.win + 8 + sizeof seg, ck, sizeof ck);
        bd_req_begin(BD_REQ_COLL_PUT);
        bd_rpc();
        bd_req_begin(BD_REQ_COLL_WAIT);
        bd_rpc();
        /* GET {ctx, rank, size}, then the world ranks. */
        int32_t head[3];
        seg = (bd_seg_t){-1, sizeof head, 0, 0};
        memcpy(g_bd.win, &nseg, 4);
        memcpy(g_bd.win + 8, &seg, sizeof seg);
        bd_req_begin(BD_REQ_COLL_GET);
        bd_rpc();
        memcpy(head, g_bd.win, sizeof head);
        ctx = head[0];
        rank = head[1];
        size = head[2];
        world = NULL;
        if (ctx) {
            world = malloc((size_t)size * sizeof(int));
            if (!world)
                bd_fatal(MPI_ERR_NO_MEM, "%s: out of memory", call);
            uint64_t done = 0, total = (uint64_t)size * sizeof(int);
            while (done < total) {
                uint64_t chunk = total - done;
                if (chunk > g_bd.window - 64)
                    chunk = g_bd.window - 64;
                seg = (bd_seg_t){-1, (uint32_t)chunk, sizeof head + done, 0};
                memcpy(g_bd.win, &nseg, 4);
                memcpy(g_bd.win + 8, &seg, sizeof seg);
                bd_req_begin(BD_REQ_COLL_GET);
                bd_rpc();
                memcpy((char *)world + done, g_bd.win, chunk);
                done += chunk;
            }
        }
        bd_req_begin(BD_REQ_COLL_END);
        bd_rpc();
        if (!ctx) {
            *newcomm = MPI_COMM_NULL;
            return MPI_SUCCESS;
        }
    }
    int h = bd_comm_add(ctx, rank, size, world, errh);
    if (h < 0)
        return bd_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
    *newcomm = h;
    return MPI_SUCCESS;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    return comm_split(comm, color, key, newcomm, "MPI_Comm_split");
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    bd_comm_t *c = bd_comm_get(comm);
    return comm_split(comm, 0, c ? c->rank : 0, newcomm, "MPI_Comm_dup");
}

int MPI_Comm_free(MPI_Comm *comm)
{
    BD_CHECK_INIT("MPI_Comm_free");
    bd_comm_t *c = comm ? bd_comm_get(*comm) : NULL;
    if (!c)
        return bd_error(comm ? *comm : MPI_COMM_NULL, MPI_ERR_COMM, "MPI_Comm_free",
                        "invalid communicator %d", comm ? *comm : 0);
    if (*comm <= BDMPI_COMM_CWORLD)
        return bd_error(*comm, MPI_ERR_COMM, "MPI_Comm_free",
                        "cannot free predefined communicator %d", *comm);
    if (c->size > 1) {
        bd_req_t *r = bd_req_begin(BD_REQ_COMM_FREE);
        r->ctx = c->ctx;
        bd_rpc();
    }
    free(c->world);
    memset(c, 0, sizeof *c);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return x < y ? -1 : x > y;
}

int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    BD_CHECK_INIT("MPI_Comm_compare");
    bd_comm_t *a = bd_comm_get(comm1), *b = bd_comm_get(comm2);
    if (!a || !b)
        return bd_error(a ? comm2 : comm1, MPI_ERR_COMM, "MPI_Comm_compare",
                        "invalid communicator %d", a ? comm2 : comm1);
    if (comm1 == comm2) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    if (a->size != b->size) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    if (!memcmp(a->world, b->world, (size_t)a->size * sizeof(int))) {
        *result = MPI_CONGRUENT;
        return MPI_SUCCESS;
    }
    int *x = malloc((size_t)a->size * sizeof(int)), *y = malloc((size_t)a->size * sizeof(int));
    if (!x || !y) {
        free(x);
        free(y);
        return bd_error(comm1, MPI_ERR_NO_MEM, "MPI_Comm_compare", "out of memory");
    }
    memcpy(x, a->world, (size_t)a->size * sizeof(int));
    memcpy(y, b->world, (size_t)a->size * sizeof(int));
    qsort(x, (size_t)a->size, sizeof(int), cmp_int);
    qsort(y, (size_t)a->size, sizeof(int), cmp_int);
    *result = memcmp(x, y, (size_t)a->size * sizeof(int)) ? MPI_UNEQUAL : MPI_SIMILAR;
    free(x);
    free(y);
    return MPI_SUCCESS;
}

int MPI_Comm_get_attr(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    BD_CHECK_INIT("MPI_Comm_get_attr");
    static int tag_ub = INT_MAX, host = MPI_PROC_NULL, io = MPI_ANY_SOURCE, wtime_global = 0,
               appnum = 0, universe;
    if (!bd_comm_get(comm))
        return bd_error(comm, MPI_ERR_COMM, "MPI_Comm_get_attr", "invalid communicator %d", comm);
    universe = g_bd.world_size;
    int *v = NULL;
    switch (keyval) {
    case MPI_TAG_UB: v = &tag_ub; break;
    case MPI_HOST: v = &host; break;
    case MPI_IO: v = &io; break;
    case MPI_WTIME_IS_GLOBAL: v = &wtime_global; break;
    case MPI_UNIVERSE_SIZE: v = &universe; break;
    case MPI_APPNUM: v = &appnum; break;
    default: *flag = 0; return MPI_SUCCESS;
    }
    *(int **)attribute_val = v;
    *flag = 1;
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- extensions */

static int node_layout(MPI_Comm comm, const char *call, int *nsize, int *nrank, int *lsize,
                       int *lrank, int *rrank)
{
    BD_CHECK_INIT(call);
    bd_comm_t *c = bd_comm_get(comm);
    if (!c)
        return bd_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);
    int mynode = bd_world_node(g_bd.world_rank);
    int nn = (int)g_bd.hdr->nnodes;
    char *seen = calloc((size_t)nn, 1);
    if (!seen)
        return bd_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
    *lsize = 0;
    *lrank = 0;
    *rrank = -1;
    for (int r = 0; r < c->size; r++) {
        int nd = bd_world_node(c->world[r]);
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
    BD_CHECK_INIT("MPI_Comm_get_name");
    bd_comm_t *c = bd_comm_get(comm);
    if (!c)
        return bd_error(comm, MPI_ERR_COMM, "MPI_Comm_get_name", "invalid communicator %d", comm);
    int n = snprintf(comm_name, MPI_MAX_OBJECT_NAME, "%s", c->name);
    *resultlen = n < MPI_MAX_OBJECT_NAME ? n : MPI_MAX_OBJECT_NAME - 1;
    return MPI_SUCCESS;
}

int MPI_Comm_set_name(MPI_Comm comm, const char *comm_name)
{
    BD_CHECK_INIT("MPI_Comm_set_name");
    bd_comm_t *c = bd_comm_get(comm);
    if (!c)
        return bd_error(comm, MPI_ERR_COMM, "MPI_Comm_set_name", "invalid communicator %d", comm);
    snprintf(c->name, sizeof c->name, "%s", comm_name ? comm_name : "");
    return MPI_SUCCESS;
}
