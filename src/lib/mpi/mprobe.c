/* Matched probe and receive (MPI 3.1 3.8.2, 3.8.3). */
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "dt.h"
#include "objects.h"
#include "request.h"

/* MPI_Mprobe/MPI_Improbe take the message out of the master's queue (no
 * other receive can match it); the message handle names it until
 * MPI_Mrecv/MPI_Imrecv receives it (MPI 3.1 3.8.2, 3.8.3). */
typedef struct {
    int used;
    uint64_t id;   /* the master's id of the message */
    MPI_Comm comm; /* for errors */
} bdl_msg_handle_t;

static bdl_msg_handle_t *g_msgs;
static int g_nmsgs;

static int msg_new(uint64_t id, MPI_Comm comm)
{
    for (int i = 1; i < g_nmsgs; i++)
        if (!g_msgs[i].used) {
            g_msgs[i] = (bdl_msg_handle_t){1, id, comm};
            return i;
        }
    int n = g_nmsgs ? g_nmsgs * 2 : 16;
    bdl_msg_handle_t *m = realloc(g_msgs, (size_t)n * sizeof *m);
    if (!m)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory allocating a message handle");
    memset(m + g_nmsgs, 0, (size_t)(n - g_nmsgs) * sizeof *m);
    int h = g_nmsgs ? g_nmsgs : 1;
    g_msgs = m;
    g_nmsgs = n;
    g_msgs[h] = (bdl_msg_handle_t){1, id, comm};
    return h;
}

static int mprobe(const char *call, int source, int tag, MPI_Comm comm, int blocking, int *flag,
                  MPI_Message *message, MPI_Status *status)
{
    BDL_CHECK_INIT(call);
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c)
        return bdl_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);
    if (c->revoked)
        return bdl_comm_revoked_error(comm, call);
    if (tag < 0 && tag != MPI_ANY_TAG)
        return bdl_error(comm, MPI_ERR_TAG, call, "invalid tag %d", tag);
    if (!message || (!blocking && !flag))
        return bdl_error(comm, MPI_ERR_ARG, call, "NULL %s argument", message ? "flag" : "message");
    if (source == MPI_PROC_NULL) {
        if (flag)
            *flag = 1;
        *message = MPI_MESSAGE_NO_PROC;
        int err = status != MPI_STATUS_IGNORE ? status->MPI_ERROR : 0;
        bdl_status_proc_null(status);
        if (status != MPI_STATUS_IGNORE)
            status->MPI_ERROR = err;
        return MPI_SUCCESS;
    }
    if (source != MPI_ANY_SOURCE && (source < 0 || source >= bdl_comm_peers(c)))
        return bdl_error(comm, MPI_ERR_RANK, call, "invalid source rank %d (%s size %d)", source,
                         c->inter ? "remote group" : "communicator", bdl_comm_peers(c));
    MPI_Status st;
    uint64_t id = 0;
    int world = source >= 0 ? bdl_comm_peer_world(c, source) : -1;
    int remote = world >= 0 && !bdl_p2p_local(world);
    int found = bdl_p2p_probe(c->ctx, source, tag, blocking, 1, remote, world, &st, &id);
    if (found < 0)
        return bdl_comm_revoked_error(comm, call);
    if (flag)
        *flag = found;
    if (!found) {
        *message = MPI_MESSAGE_NULL;
        return MPI_SUCCESS;
    }
    *message = msg_new(id, comm);
    if (status != MPI_STATUS_IGNORE) { /* MPI_ERROR is left alone (MPI 3.1 3.2.5) */
        status->MPI_SOURCE = st.MPI_SOURCE;
        status->MPI_TAG = st.MPI_TAG;
        status->bd_cancelled = 0;
        status->bd_nbytes = st.bd_nbytes;
    }
    return MPI_SUCCESS;
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    BDL_MT_GUARD;
    return mprobe("MPI_Mprobe", source, tag, comm, 1, NULL, message, status);
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                MPI_Status *status)
{
    BDL_MT_GUARD;
    return mprobe("MPI_Improbe", source, tag, comm, 0, flag, message, status);
}

/* Receive the message *message names into (buf, count, dt); st gets the
 * status.  Returns MPI_SUCCESS, MPI_ERR_TRUNCATE (not yet reported) or an
 * error already reported; *proc_null is set for MPI_MESSAGE_NO_PROC. */
static int mrecv(const char *call, void *buf, int count, MPI_Datatype dt, MPI_Message *message,
                 MPI_Status *st, int *proc_null, MPI_Comm *comm)
{
    BDL_CHECK_INIT(call);
    *proc_null = 0;
    *comm = MPI_COMM_WORLD;
    if (!message)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "NULL message argument");
    if (*message == MPI_MESSAGE_NO_PROC) {
        *proc_null = 1;
        *message = MPI_MESSAGE_NULL;
        int err = st != MPI_STATUS_IGNORE ? st->MPI_ERROR : 0;
        bdl_status_proc_null(st);
        if (st != MPI_STATUS_IGNORE)
            st->MPI_ERROR = err;
        return MPI_SUCCESS;
    }
    int h = *message;
    if (h <= 0 || h >= g_nmsgs || !g_msgs[h].used)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, call,
                         "invalid message handle %d (MPI_MESSAGE_NULL, or already received)", h);
    *comm = g_msgs[h].comm;
    bdl_dt_t *t = NULL;
    int rc;
    if (count < 0)
        return bdl_error(*comm, MPI_ERR_COUNT, call, "invalid count %d", count);
    if ((rc = bdl_dt_check_count(*comm, call, "receive", dt, count, &t)))
        return rc;
    if (count > 0 && !buf && t->predefined)
        return bdl_error(*comm, MPI_ERR_BUFFER, call, "NULL buffer with count %d", count);
    g_msgs[h].used = 0;
    *message = MPI_MESSAGE_NULL;
    /* A single receive leaves MPI_ERROR alone (MPI 3.1 3.2.5). */
    int err = st != MPI_STATUS_IGNORE ? st->MPI_ERROR : 0;
    rc = bdl_p2p_mrecv(g_msgs[h].id, buf, t, (uint64_t)count, st);
    if (st != MPI_STATUS_IGNORE)
        st->MPI_ERROR = err;
    return rc;
}

static int truncated(MPI_Comm comm, const char *call, int count, MPI_Datatype dt)
{
    bdl_dt_t *t = bdl_dt_lookup(dt);
    return bdl_error(comm, MPI_ERR_TRUNCATE, call,
                     "message of %llu bytes from rank %d (tag %d) truncated to the %llu-byte "
                     "receive buffer",
                     (unsigned long long)bdl_p2p_last()->nbytes, bdl_p2p_last()->src,
                     bdl_p2p_last()->tag,
                     (unsigned long long)((uint64_t)count * (t ? t->psize : 0)));
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status)
{
    BDL_MT_GUARD;
    int pn;
    MPI_Comm comm;
    int rc = mrecv("MPI_Mrecv", buf, count, datatype, message, status, &pn, &comm);
    if (rc == MPI_ERR_TRUNCATE && !pn)
        return truncated(comm, "MPI_Mrecv", count, datatype);
    return rc;
}

int MPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
               MPI_Request *request)
{
    BDL_MT_GUARD;
    if (!request)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Imrecv", "NULL request argument");
    /* The message is already here: the request completes at once. */
    MPI_Status st;
    int pn;
    MPI_Comm comm;
    bdl_status_empty(&st);
    int rc = mrecv("MPI_Imrecv", buf, count, datatype, message, &st, &pn, &comm);
    st.MPI_ERROR = rc == MPI_ERR_TRUNCATE ? rc : MPI_SUCCESS;
    if (rc && rc != MPI_ERR_TRUNCATE)
        return rc;
    *request = bdl_recv_done_req(buf, (uint64_t)count, &st, rc);
    return MPI_SUCCESS;
}

MPI_Fint MPI_Message_c2f(MPI_Message message) { return (MPI_Fint)message; }
MPI_Message MPI_Message_f2c(MPI_Fint message) { return (MPI_Message)message; }
