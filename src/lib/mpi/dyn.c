/* Dynamic processes (MPI 4.1 chapter 11, top room): MPI_Comm_spawn and
 * MPI_Comm_spawn_multiple, the parent intercommunicator, ports (accept and
 * connect within the job), the name service, disconnect, and MPI_Comm_join
 * between two processes of the job (over accept and connect).  See
 * docs/design.md, "Dynamic processes".
 *
 * Every intercommunicator made here is made as MPI_Intercomm_create makes
 * one (bdl_inter_build): each group splits a hidden communicator of its
 * own, and the two leaders swap contexts and member lists with messages on
 * a context nobody else uses, which the master allocated: for a spawn, the
 * root allocates it and the master hands it to the children at MPI_Init;
 * for accept/connect, the connecting root allocates it and names it in its
 * first message, sent on the port's own context. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core.h"
#include "mpi_int.h"
#include "objects.h"
#include "request.h"

/* Tags of the leaders' exchanges on their private context. */
enum { T_SPAWN = 1, T_CONNECT = 2, T_ACCEPT = 3 };
/* Tags of the control exchanges within the spawning (accepting) group. */
enum { C_SPAWN = 40, C_ERRS, C_PORT };

static int alloc_ctx(void)
{
    bdl_req_begin(BD_REQ_CTX_ALLOC);
    bdl_rpc();
    return (int)bdl_resp()->arg[0];
}

/* ---------------------------------------------------------------- spawn */

int bdl_dyn_child_init(const bd_spawn_info_t *sp)
{
    bdl_leaders_t how = {.ctx = sp->leader_ctx | BDL_CTX_INTERNAL,
                         .dst = sp->proot,
                         .stamp = bdl_g.world_rank,
                         .src = sp->proot};
    MPI_Comm inter;
    int rc = bdl_inter_build(MPI_COMM_WORLD, 0, sp->rank == 0 ? &how : NULL, T_SPAWN, "MPI_Init",
                             &inter);
    if (rc)
        return rc;
    bdl_g.parent = inter;
    MPI_Comm_set_name(inter, "MPI_COMM_PARENT");
    return MPI_SUCCESS;
}

int MPI_Comm_get_parent(MPI_Comm *parent)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Comm_get_parent");
    if (!parent)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Comm_get_parent", "parent is NULL");
    *parent = bdl_comm_get(bdl_g.parent) ? bdl_g.parent : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

/* The spawn request being built in memory (then copied to the window). */
typedef struct {
    char *str;
    size_t len, cap;
    int oom;
} strs_t;

static uint32_t add_str(strs_t *b, const char *s)
{
    size_t n = strlen(s) + 1;
    if (b->len + n > b->cap) {
        size_t cap = (b->cap ? 2 * b->cap : 4096) + n;
        char *p = realloc(b->str, cap);
        if (!p) {
            b->oom = 1;
            return 0;
        }
        b->str = p;
        b->cap = cap;
    }
    memcpy(b->str + b->len, s, n);
    b->len += n;
    return (uint32_t)(b->len - n);
}

/* An info value of key, or NULL (buf holds it). */
static const char *info_str(MPI_Info info, const char *key, char *buf, int len)
{
    int flag = 0;
    if (info == MPI_INFO_NULL || MPI_Info_get(info, key, len - 1, buf, &flag) || !flag)
        return NULL;
    return buf;
}

/* What the root tells the spawning group. */
typedef struct {
    int32_t status; /* MPI_SUCCESS, or the error class of a refused spawn */
    int32_t total, nstarted, lctx, child_root;
} spawn_out_t;

/* At the root: ask the master to start the processes.  Fills out, and
 * errs[total] (MPI_SUCCESS or MPI_ERR_SPAWN), msg (the first failure). */
static void spawn_root(const bdl_comm_t *c, int count, char *cmds[], char **argvs[],
                       const int maxprocs[], const MPI_Info infos[], spawn_out_t *out, int **errs,
                       char *msg, size_t msglen)
{
    *errs = NULL;
    int total = 0;
    for (int i = 0; i < count; i++) {
        if (!cmds || !cmds[i] || !maxprocs || maxprocs[i] < 0 || maxprocs[i] > INT_MAX - total) {
            out->status = MPI_ERR_ARG;
            snprintf(msg, msglen, "invalid command or maxprocs of command %d", i);
            return;
        }
        total += maxprocs[i];
    }
    out->total = total;
    if (!(*errs = calloc((size_t)(total ? total : 1), sizeof(int)))) {
        out->total = 0;
        out->status = MPI_ERR_NO_MEM;
        snprintf(msg, msglen, "out of memory");
        return;
    }
    if (!total)
        return;
    strs_t b = {0};
    char cwd[PATH_MAX];
    add_str(&b, getcwd(cwd, sizeof cwd) ? cwd : ".");
    bd_spawn_cmd_t *cm = calloc((size_t)count, sizeof *cm);
    if (!cm) {
        out->status = MPI_ERR_NO_MEM;
        snprintf(msg, msglen, "out of memory");
        return;
    }
    for (int i = 0; i < count; i++) {
        char val[MPI_MAX_INFO_VAL];
        MPI_Info info = infos ? infos[i] : MPI_INFO_NULL;
        cm[i].maxprocs = maxprocs[i];
        cm[i].command = add_str(&b, cmds[i]);
        cm[i].argv = (uint32_t)b.len;
        char **av = argvs ? argvs[i] : NULL;
        for (int a = 0; av && av[a]; a++, cm[i].argc++)
            add_str(&b, av[a]);
        /* "host" is not looked at: a spawn's ranks all go on its root's node. */
        const char *v = info_str(info, "wdir", val, sizeof val);
        cm[i].wdir = v ? add_str(&b, v) : UINT32_MAX;
        v = info_str(info, "path", val, sizeof val);
        cm[i].path = v ? add_str(&b, v) : UINT32_MAX;
        v = info_str(info, "mpi_initial_errhandler", val, sizeof val);
        cm[i].initial_errh = v ? bdl_errh_initial_index(v) : -1;
    }
    size_t head = (size_t)count * sizeof *cm + (size_t)c->size * sizeof(int32_t);
    if (b.oom || head + b.len > bdl_g.window || (size_t)total * (4 + BD_SPAWN_MSG) > bdl_g.window) {
        out->status = b.oom ? MPI_ERR_NO_MEM : MPI_ERR_SPAWN;
        snprintf(msg, msglen, "%s",
                 b.oom ? "out of memory"
                       : "the commands, their arguments and the processes do not fit the "
                         "master's window (-window)");
        free(cm);
        free(b.str);
        return;
    }
    out->lctx = alloc_ctx();
    memcpy(bdl_g.win, cm, (size_t)count * sizeof *cm);
    for (int i = 0; i < c->size; i++) {
        int32_t w = c->world[i];
        memcpy(bdl_g.win + (size_t)count * sizeof *cm + (size_t)i * 4, &w, 4);
    }
    memcpy(bdl_g.win + head, b.str, b.len);
    free(cm);
    free(b.str);
    /* NOTYET: the slots are held by ranks that finalized and are exiting;
     * the window is left as it is, so only the request is made again. */
    do {
        bd_req_t *r = bdl_req_begin(BD_REQ_SPAWN);
        r->arg[0] = count;
        r->arg[1] = total;
        r->arg[2] = out->lctx;
        r->arg[3] = c->size;
        r->arg[4] = 0; /* the root's working directory: the first string */
        r->nbytes = head + b.len;
        bdl_rpc();
        if (bdl_resp()->status == BD_RESP_NOTYET)
            usleep(2000);
    } while (bdl_resp()->status == BD_RESP_NOTYET);
    if (bdl_resp()->status == BD_RESP_ERROR) {
        out->status = MPI_ERR_SPAWN;
        bdl_g.win[511] = 0;
        snprintf(msg, msglen, "%s", bdl_g.win);
        for (int i = 0; i < total; i++)
            (*errs)[i] = MPI_ERR_SPAWN;
        return;
    }
    out->nstarted = (int)bdl_resp()->arg[0];
    out->child_root = -1;
    for (int i = 0; i < total; i++) {
        int32_t w;
        memcpy(&w, bdl_g.win + (size_t)i * 4, 4);
        if (w >= 0 && out->child_root < 0)
            out->child_root = w;
        (*errs)[i] = w >= 0 ? MPI_SUCCESS : MPI_ERR_SPAWN;
        if (w < 0 && !msg[0]) {
            const char *m = bdl_g.win + (size_t)total * 4 + (size_t)i * BD_SPAWN_MSG;
            snprintf(msg, msglen, "process %d of the spawn: %.*s", i, BD_SPAWN_MSG, m);
        }
    }
    if (out->nstarted < total)
        out->status = MPI_ERR_SPAWN;
}

/* The checks spawn, accept and connect share: an intracommunicator and a
 * root in it.  MPI_SUCCESS (*cp set) or the error. */
static int intra_root_check(const char *call, MPI_Comm comm, int root, bdl_comm_t **cp)
{
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c)
        return bdl_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);
    if (c->inter)
        return bdl_error(comm, MPI_ERR_COMM, call,
                         "communicator %d is an intercommunicator (must be an intracommunicator)",
                         comm);
    if (root < 0 || root >= c->size)
        return bdl_error(comm, MPI_ERR_ROOT, call, "invalid root %d (communicator size %d)", root,
                         c->size);
    *cp = c;
    return MPI_SUCCESS;
}

static int spawn_common(const char *call, int count, char *cmds[], char **argvs[],
                        const int maxprocs[], const MPI_Info infos[], int root, MPI_Comm comm,
                        MPI_Comm *intercomm, int errcodes[])
{
    BDL_CHECK_INIT(call);
    bdl_comm_t *c = NULL;
    int crc = intra_root_check(call, comm, root, &c);
    if (crc != MPI_SUCCESS)
        return crc;
    if (!intercomm)
        return bdl_error(comm, MPI_ERR_ARG, call, "intercomm is NULL");
    spawn_out_t out = {0};
    int *errs = NULL;
    char msg[256] = "";
    if (c->rank == root) {
        if (count < 1) {
            out.status = MPI_ERR_ARG;
            snprintf(msg, sizeof msg, "invalid count %d", count);
        } else {
            spawn_root(c, count, cmds, argvs, maxprocs, infos, &out, &errs, msg, sizeof msg);
        }
    }
    /* The group learns the outcome, then the codes and the message. */
    int rc = bdl_ctl_bcast(c, C_SPAWN, &out, sizeof out, root);
    if (rc)
        return bdl_error(comm, rc, call, "the spawn's outcome did not reach this rank");
    c = bdl_comm_get(comm);
    if (c->rank != root && !(errs = calloc((size_t)(out.total ? out.total : 1), sizeof(int))))
        bdl_fatal(MPI_ERR_NO_MEM, "%s: out of memory", call);
    if (c->rank == root && out.status && out.nstarted == 0)
        for (int i = 0; i < out.total; i++)
            errs[i] = MPI_ERR_SPAWN; /* none was started */
    if (out.total) {
        bdl_ctl_bcast(c, C_ERRS, errs, (uint64_t)out.total * sizeof(int), root);
        c = bdl_comm_get(comm);
    }
    bdl_ctl_bcast(c, C_ERRS, msg, sizeof msg, root);
    if (errcodes && errs)
        memcpy(errcodes, errs, (size_t)out.total * sizeof(int));
    free(errs);
    *intercomm = MPI_COMM_NULL;
    if (out.nstarted > 0) {
        c = bdl_comm_get(comm);
        bdl_leaders_t how = {.ctx = out.lctx | BDL_CTX_INTERNAL,
                             .dst = out.child_root,
                             .stamp = bdl_g.world_rank,
                             .src = out.child_root};
        rc = bdl_inter_build(comm, root, c->rank == root ? &how : NULL, T_SPAWN, call, intercomm);
        if (rc)
            return rc;
    }
    if (out.status)
        return bdl_error(comm, out.status, call, "%s", msg);
    return MPI_SUCCESS;
}

int MPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root,
                   MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
    BDL_MT_GUARD;
    char *cmd = (char *)command;
    return spawn_common("MPI_Comm_spawn", 1, &cmd, &argv, &maxprocs, &info, root, comm, intercomm,
                        array_of_errcodes);
}

int MPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                            const int array_of_maxprocs[], const MPI_Info array_of_info[], int root,
                            MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
    BDL_MT_GUARD;
    return spawn_common("MPI_Comm_spawn_multiple", count, array_of_commands, array_of_argv,
                        array_of_maxprocs, array_of_info, root, comm, intercomm, array_of_errcodes);
}

/* ---------------------------------------------------------------- ports */

/* A port is "bdmpi-port:W:X": the process of world rank W opened it and
 * receives connections on context X (allocated by its master). */
#define PORT_FMT "bdmpi-port:%d:%d"

static int *g_ports; /* contexts of the ports this process has open */
static int g_nports;

static int port_parse(const char *name, int *world, int *ctx)
{
    int n = 0;
    if (!name || sscanf(name, PORT_FMT "%n", world, ctx, &n) != 2 || name[n] || *world < 0)
        return -1;
    return 0;
}

static int port_index(int ctx)
{
    for (int i = 0; i < g_nports; i++)
        if (g_ports[i] == ctx)
            return i;
    return -1;
}

int MPI_Open_port(MPI_Info info, char *port_name)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Open_port";
    BDL_CHECK_INIT(call);
    int rc = bdl_info_check(call, info);
    if (rc)
        return rc;
    if (!port_name)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "port_name is NULL");
    int *p = realloc(g_ports, (size_t)(g_nports + 1) * sizeof *p);
    if (!p)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "out of memory");
    g_ports = p;
    int ctx = alloc_ctx();
    g_ports[g_nports++] = ctx;
    snprintf(port_name, MPI_MAX_PORT_NAME, PORT_FMT, bdl_g.world_rank, ctx);
    return MPI_SUCCESS;
}

int MPI_Close_port(const char *port_name)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Close_port";
    BDL_CHECK_INIT(call);
    int w, ctx, i;
    if (port_parse(port_name, &w, &ctx) < 0 || w != bdl_g.world_rank || (i = port_index(ctx)) < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_PORT, call,
                         "'%s' is not a port this process opened", port_name ? port_name : "");
    g_ports[i] = g_ports[--g_nports];
    return MPI_SUCCESS;
}

/* Checks shared by accept and connect; MPI_SUCCESS or the error. */
static int port_call_check(const char *call, MPI_Info info, int root, MPI_Comm comm,
                           MPI_Comm *newcomm, bdl_comm_t **cp)
{
    BDL_CHECK_INIT(call);
    bdl_comm_t *c = NULL;
    int crc = intra_root_check(call, comm, root, &c);
    if (crc != MPI_SUCCESS)
        return crc;
    if (!newcomm)
        return bdl_error(comm, MPI_ERR_ARG, call, "newcomm is NULL");
    if (c->rank == root && !bdl_info_valid(info))
        return bdl_error(comm, MPI_ERR_INFO, call, "invalid info %d", info);
    *cp = c;
    return MPI_SUCCESS;
}

/* The connector's first message, on the port's context. */
typedef struct {
    int32_t world, lctx;
} hello_t;

int MPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                    MPI_Comm *newcomm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Comm_accept";
    bdl_comm_t *c;
    int rc = port_call_check(call, info, root, comm, newcomm, &c);
    if (rc)
        return rc;
    /* The root waits for a connector and tells the group whether it may go on. */
    int32_t ok = 1;
    hello_t h = {0, 0};
    if (c->rank == root) {
        int w, ctx;
        if (port_parse(port_name, &w, &ctx) < 0 || w != bdl_g.world_rank || port_index(ctx) < 0)
            ok = 0;
        else if ((rc = bdl_recv_bytes(ctx | BDL_CTX_INTERNAL, MPI_ANY_SOURCE, T_CONNECT, &h,
                                      sizeof h, MPI_STATUS_IGNORE)))
            ok = 0;
    }
    bdl_ctl_bcast(bdl_comm_get(comm), C_PORT, &ok, sizeof ok, root);
    if (!ok)
        return bdl_error(comm, MPI_ERR_PORT, call, "'%s' is not a port the root (rank %d) opened",
                         port_name ? port_name : "", root);
    bdl_leaders_t how = {.ctx = h.lctx | BDL_CTX_INTERNAL,
                         .dst = h.world,
                         .stamp = bdl_g.world_rank,
                         .src = h.world};
    return bdl_inter_build(comm, root, bdl_comm_get(comm)->rank == root ? &how : NULL, T_ACCEPT,
                           call, newcomm);
}

int MPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                     MPI_Comm *newcomm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Comm_connect";
    bdl_comm_t *c;
    int rc = port_call_check(call, info, root, comm, newcomm, &c);
    if (rc)
        return rc;
    int32_t ok = 1;
    int w = 0, ctx = 0;
    hello_t h = {bdl_g.world_rank, 0};
    if (c->rank == root) {
        if (port_parse(port_name, &w, &ctx) < 0 || w == bdl_g.world_rank) {
            ok = 0;
        } else {
            h.lctx = alloc_ctx();
            bdl_send_bytes(ctx | BDL_CTX_INTERNAL, w, bdl_g.world_rank, T_CONNECT, &h, sizeof h, 0,
                           NULL);
        }
    }
    bdl_ctl_bcast(bdl_comm_get(comm), C_PORT, &ok, sizeof ok, root);
    if (!ok)
        return bdl_error(comm, MPI_ERR_PORT, call,
                         "'%s' is not a port name of this job another process opened",
                         port_name ? port_name : "");
    bdl_leaders_t how = {.ctx = h.lctx | BDL_CTX_INTERNAL, .dst = w, .stamp = h.world, .src = w};
    return bdl_inter_build(comm, root, bdl_comm_get(comm)->rank == root ? &how : NULL, T_ACCEPT,
                           call, newcomm);
}

/* Every message of the library has been delivered or buffered when a call
 * returns, so nothing is pending: disconnecting is freeing. */
int MPI_Comm_disconnect(MPI_Comm *comm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Comm_disconnect";
    BDL_CHECK_INIT(call);
    if (!comm || !bdl_comm_get(*comm))
        return bdl_error(comm ? *comm : MPI_COMM_NULL, MPI_ERR_COMM, call,
                         "invalid communicator %d", comm ? *comm : MPI_COMM_NULL);
    MPI_Comm was = *comm;
    int rc = MPI_Comm_free(comm);
    if (!rc && was == bdl_g.parent)
        bdl_g.parent = MPI_COMM_NULL;
    return rc;
}

/* MPI_Comm_join: both ends open a port, send its name down the socket and
 * read the other's; the end with the smaller name accepts on its port, the
 * other connects to it.  Both must be processes of this job (a port names
 * a world rank).  The socket is read without blocking the run slot: while
 * the other end has not written, this rank yields to any rank waiting to
 * run (the other end may be one of them). */
static int join_io(int fd, char *buf, size_t n, int rd)
{
    size_t done = 0;
    while (done < n) {
        ssize_t k = rd ? read(fd, buf + done, n - done) : write(fd, buf + done, n - done);
        if (k > 0) {
            done += (size_t)k;
            continue;
        }
        if (k == 0)
            return -1; /* the other end closed the socket */
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return -1;
        struct pollfd p = {fd, rd ? POLLIN : POLLOUT, 0};
        if (poll(&p, 1, 0) == 0) {
            bdl_p2p_poll_failed();
            poll(&p, 1, 1);
        }
    }
    return 0;
}

static int join_wait_readable(int fd)
{
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        int k = poll(&p, 1, 0);
        if (k > 0)
            return 0;
        if (k < 0 && errno != EINTR)
            return -1;
        bdl_p2p_poll_failed();
        if (poll(&p, 1, 1) > 0)
            return 0;
    }
}

int MPI_Comm_join(int fd, MPI_Comm *intercomm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Comm_join";
    BDL_CHECK_INIT(call);
    if (!intercomm)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "intercomm is NULL");
    *intercomm = MPI_COMM_NULL;
    int type = 0;
    socklen_t tl = sizeof type;
    if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 || type != SOCK_STREAM)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                         "fd %d is not a connected stream socket", fd);
    char mine[MPI_MAX_PORT_NAME], theirs[MPI_MAX_PORT_NAME];
    memset(mine, 0, sizeof mine);
    int rc = MPI_Open_port(MPI_INFO_NULL, mine);
    if (rc)
        return rc;
    int err = join_io(fd, mine, sizeof mine, 0) < 0 || join_wait_readable(fd) < 0 ||
              join_io(fd, theirs, sizeof theirs, 1) < 0;
    int w, ctx;
    if (err) {
        rc = bdl_error(MPI_COMM_WORLD, MPI_ERR_OTHER, call,
                       "cannot exchange port names over socket %d: %s", fd,
                       errno ? strerror(errno) : "closed by the other end");
    } else if ((theirs[sizeof theirs - 1] = 0, port_parse(theirs, &w, &ctx) < 0) ||
               w == bdl_g.world_rank) {
        rc = bdl_error(MPI_COMM_WORLD, MPI_ERR_PORT, call,
                       "the other end of socket %d is not another process of this BDMPI job", fd);
    } else if (strcmp(mine, theirs) < 0) {
        rc = MPI_Comm_accept(mine, MPI_INFO_NULL, 0, MPI_COMM_SELF, intercomm);
    } else {
        rc = MPI_Comm_connect(theirs, MPI_INFO_NULL, 0, MPI_COMM_SELF, intercomm);
    }
    MPI_Close_port(mine);
    return rc;
}

/* ---------------------------------------------------------------- names */

static int name_rpc(int op, const char *service, const char *port, const char *call)
{
    size_t sl = strlen(service), pl = port ? strlen(port) : 0;
    if (sl + pl + 2 > bdl_g.window)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "service name too long");
    bd_req_t *r = bdl_req_begin(BD_REQ_NAME);
    r->arg[0] = op;
    r->nbytes = sl + pl + 2;
    memcpy(bdl_g.win, service, sl + 1);
    memcpy(bdl_g.win + sl + 1, port ? port : "", pl + 1);
    bdl_rpc();
    return bdl_resp()->status == BD_RESP_ERROR ? -1 : 0;
}

int MPI_Publish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Publish_name";
    BDL_CHECK_INIT(call);
    int rc = bdl_info_check(call, info);
    if (rc)
        return rc;
    if (!service_name || !port_name)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "%s is NULL",
                         service_name ? "port_name" : "service_name");
    if (name_rpc(BD_NAME_PUBLISH, service_name, port_name, call) < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_SERVICE, call,
                         "service '%s' is already published in this job", service_name);
    return MPI_SUCCESS;
}

int MPI_Unpublish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Unpublish_name";
    BDL_CHECK_INIT(call);
    int rc = bdl_info_check(call, info);
    if (rc)
        return rc;
    if (!service_name)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "service_name is NULL");
    (void)port_name;
    if (name_rpc(BD_NAME_UNPUBLISH, service_name, NULL, call) < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_SERVICE, call,
                         "service '%s' is not published in this job", service_name);
    return MPI_SUCCESS;
}

int MPI_Lookup_name(const char *service_name, MPI_Info info, char *port_name)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Lookup_name";
    BDL_CHECK_INIT(call);
    int rc = bdl_info_check(call, info);
    if (rc)
        return rc;
    if (!service_name || !port_name)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "%s is NULL",
                         service_name ? "port_name" : "service_name");
    if (name_rpc(BD_NAME_LOOKUP, service_name, NULL, call) < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_NAME, call,
                         "service '%s' is not published in this job", service_name);
    snprintf(port_name, MPI_MAX_PORT_NAME, "%s", bdl_g.win);
    return MPI_SUCCESS;
}
