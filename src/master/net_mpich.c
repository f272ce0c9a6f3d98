/* The multi-node transport on MPICH: each message is one MPI message on a
 * single tag (so MPI's ordering between a pair of masters is ours), sent
 * with MPI_Isend from a private copy and received with MPI_Improbe/Mrecv.
 * Only this file includes MPICH's mpi.h (by full path: BDMPI's own mpi.h is
 * on the include path of everything else). */
#include BD_MPICH_HEADER

#include <stdlib.h>
#include <string.h>

#include "bd_log.h"
#include "net.h"

#define BDR_NET_TAG 4242

typedef struct out {
    struct out *next;
    MPI_Request req;
    int dst;
    size_t bytes;
    char *buf;
} out_t;

static out_t *g_out;
static size_t *g_pending;
static int g_nnodes;

int bdr_net_init(int *argc, char ***argv, int *node, int *nnodes)
{
    int provided;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
        bd_log_error("MPI_Init_thread of the masters failed");
        return -1;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, node);
    MPI_Comm_size(MPI_COMM_WORLD, nnodes);
    g_nnodes = *nnodes;
    g_pending = calloc((size_t)*nnodes, sizeof *g_pending);
    return g_pending ? 0 : -1;
}

int bdr_net_send(int dst, const bdr_net_hdr_t *h, const void *payload, size_t len)
{
    out_t *o = malloc(sizeof *o);
    char *buf = malloc(sizeof *h + len);
    if (!o || !buf) {
        free(o);
        free(buf);
        return -1;
    }
    memcpy(buf, h, sizeof *h);
    if (len)
        memcpy(buf + sizeof *h, payload, len);
    if (MPI_Isend(buf, (int)(sizeof *h + len), MPI_BYTE, dst, BDR_NET_TAG, MPI_COMM_WORLD,
                  &o->req) != MPI_SUCCESS) {
        free(o);
        free(buf);
        return -1;
    }
    o->dst = dst;
    o->bytes = sizeof *h + len;
    o->buf = buf;
    o->next = g_out;
    g_out = o;
    g_pending[dst] += o->bytes;
    return 0;
}

size_t bdr_net_pending(int dst) { return dst >= 0 && dst < g_nnodes ? g_pending[dst] : 0; }

static void reap_sends(void)
{
    out_t **pp = &g_out;
    while (*pp) {
        out_t *o = *pp;
        int done = 0;
        MPI_Test(&o->req, &done, MPI_STATUS_IGNORE);
        if (done) {
            g_pending[o->dst] -= o->bytes;
            *pp = o->next;
            free(o->buf);
            free(o);
        } else {
            pp = &o->next;
        }
    }
}

bdr_net_msg_t *bdr_net_poll(void)
{
    reap_sends();
    int flag = 0;
    MPI_Message mh;
    MPI_Status st;
    MPI_Improbe(MPI_ANY_SOURCE, BDR_NET_TAG, MPI_COMM_WORLD, &flag, &mh, &st);
    if (!flag)
        return NULL;
    int n = 0;
    MPI_Get_count(&st, MPI_BYTE, &n);
    bdr_net_msg_t *m = malloc(sizeof *m + (size_t)n);
    if (!m) {
        bd_log_error("out of memory receiving %d bytes from master %d", n, st.MPI_SOURCE);
        bdr_net_abort(1);
        return NULL;
    }
    char *raw = (char *)(m + 1);
    MPI_Mrecv(raw, n, MPI_BYTE, &mh, MPI_STATUS_IGNORE);
    memcpy(&m->h, raw, sizeof m->h);
    m->payload = raw + sizeof m->h;
    m->len = (size_t)n - sizeof m->h;
    return m;
}

int bdr_net_idle(void)
{
    reap_sends();
    return g_out == NULL;
}

void bdr_net_fini(void)
{
    /* Everyone is done; a late status message may still be on its way.
     * Drain (and drop) incoming messages until all masters are here, so
     * none is left unreceived at MPI_Finalize. */
    while (!bdr_net_idle())
        ;
    MPI_Request bar;
    MPI_Ibarrier(MPI_COMM_WORLD, &bar);
    for (int done = 0; !done;) {
        bdr_net_msg_t *m;
        while ((m = bdr_net_poll()))
            free(m);
        MPI_Test(&bar, &done, MPI_STATUS_IGNORE);
    }
    bdr_net_msg_t *m;
    while ((m = bdr_net_poll()))
        free(m);
    MPI_Finalize();
}

void bdr_net_abort(int code) { MPI_Abort(MPI_COMM_WORLD, code ? code : 1); }
