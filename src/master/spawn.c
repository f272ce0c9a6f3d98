/* Dynamic processes in the master: MPI_Comm_spawn(_multiple) starts its
 * ranks here, in the spawn slots of the root's node (docs/design.md,
 * "Dynamic processes"), and the name service of MPI_Publish_name keeps its
 * table here, copied to every node.
 *
 * A spawn slot is free while no process holds it: a rank spawned into it
 * takes the next world rank of the slot (bd_spawn_world, a new generation
 * each time), so a world rank names one process for the whole job.  The
 * children's predefined communicators get contexts allocated here; their
 * intercommunicator with the parents is made by the ranks themselves
 * (src/lib/mpi/dyn.c), the leaders swapping their groups on the context
 * the root allocated and sent along. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bd_log.h"
#include "master.h"
#include "net.h"

/* ---------------------------------------------------------------- spawn */

void bdr_spawn_slot_reaped(slave_t *s)
{
    free(s->sp);
    s->sp = NULL;
}

/* A free spawn slot, or NULL. */
static slave_t *free_slot(void)
{
    for (int i = g_m.ninit; i < g_m.nslots; i++) {
        slave_t *s = &g_m.slaves[i];
        if (s->exited && s->state == SL_EXITED && !s->sp)
            return s;
    }
    return NULL;
}

static int nfree_slots(void)
{
    int n = 0;
    for (int i = g_m.ninit; i < g_m.nslots; i++) {
        slave_t *s = &g_m.slaves[i];
        n += s->exited && s->state == SL_EXITED && !s->sp;
    }
    return n;
}

/* Make free slot s ready for a new rank (its mailbox and slot fields as a
 * fresh rank expects them; the sequence numbers go on from where they are). */
static void slot_reset(slave_t *s)
{
    int idx = s->idx;
    bd_slot_t *sl = s->slot;
    char *win = s->win;
    uint32_t gen = s->gen + 1;
    memset(s, 0, sizeof *s);
    s->idx = idx;
    s->slot = sl;
    s->win = win;
    s->gen = gen;
    s->world = bd_spawn_world(g_m.hdr, gen, (uint32_t)(idx - g_m.ninit));
    s->state = SL_PREINIT;
    s->spawned = 1;
    s->seen_req = atomic_load_explicit(&sl->req_seq, memory_order_acquire);
    s->seen_mem_req = atomic_load_explicit(&sl->mem_req_seq, memory_order_acquire);
    sl->world_rank = s->world;
    atomic_store(&sl->mem_resident, 0);
    atomic_store(&sl->mem_anon, 0);
    s->outside_t = 0;
    s->outside_turn = 0;
    atomic_store(&sl->resident, 0);
    atomic_store(&sl->cmd, 0);
    atomic_store(&sl->rma_pending, 0);
    atomic_store(&sl->in_rpc, 0);
    atomic_store(&sl->running, 0);
    atomic_store(&sl->cma_out, 0);
    atomic_store(&sl->cma_ok, 0);
    atomic_store(&sl->io.busy, 0);
    bdr_mbox_attach(s);
    if (idx >= g_m.ns)
        g_m.ns = idx + 1;
}

/* The executable of command `cmd`: a name without '/' is looked for in the
 * `path` info's directories first (then execvp searches PATH). */
static const char *resolve(const char *cmd, const char *path, char *buf, size_t len)
{
    if (strchr(cmd, '/') || !path)
        return cmd;
    for (const char *p = path; *p;) {
        const char *colon = strchr(p, ':');
        size_t n = colon ? (size_t)(colon - p) : strlen(p);
        snprintf(buf, len, "%.*s/%s", (int)n, p, cmd);
        if (n && access(buf, X_OK) == 0)
            return buf;
        if (!colon)
            break;
        p = colon + 1;
    }
    return cmd;
}

static void spawn_error(slave_t *root, const char *fmt, const char *what)
{
    root->slot->resp.status = BD_RESP_ERROR;
    snprintf(root->win, 512, fmt, what);
    bdr_sched_respond(root);
}

void bdr_spawn_req(slave_t *s, const bd_req_t *r)
{
    int ncmd = (int)r->arg[0], total = (int)r->arg[1], lctx = (int)r->arg[2];
    int psize = (int)r->arg[3];
    uint64_t used = (uint64_t)ncmd * sizeof(bd_spawn_cmd_t) + (uint64_t)psize * 4;
    if (ncmd < 1 || total < 1 || psize < 1 || used >= r->nbytes || r->nbytes > g_m.hdr->window ||
        (uint64_t)total * (4 + BD_SPAWN_MSG) > g_m.hdr->window) {
        bdr_master_fail(1, "rank %d: malformed spawn request", s->world);
        return;
    }
    int nfree = nfree_slots(), nending = 0;
    for (int i = g_m.ninit; i < g_m.nslots; i++)
        nending += g_m.slaves[i].state == SL_FINALIZED;
    if (total > nfree && total <= nfree + nending) {
        /* Ranks of an earlier spawn have finalized and are exiting (a pool
         * of workers replaced by the next one): the root asks again soon. */
        s->slot->resp.status = BD_RESP_NOTYET;
        bdr_sched_respond(s);
        return;
    }
    if (total > nfree) {
        char what[128];
        snprintf(what, sizeof what, "%d ranks asked, %d of -max-spawn %d free on this node", total,
                 nfree, g_m.nslots - g_m.ninit);
        spawn_error(s, "cannot spawn: %s (bdmpiexec -max-spawn sets how many)", what);
        return;
    }
    /* Copy the request out of the window, which the answer overwrites. */
    char *req = malloc(r->nbytes);
    int *kids = malloc((size_t)total * sizeof(int));
    char(*msgs)[BD_SPAWN_MSG] = calloc((size_t)total, BD_SPAWN_MSG);
    if (!req || !kids || !msgs) {
        free(req);
        free(kids);
        free(msgs);
        bdr_master_fail(1, "master out of memory");
        return;
    }
    memcpy(req, s->win, r->nbytes);
    const bd_spawn_cmd_t *cmds = (const bd_spawn_cmd_t *)req;
    int32_t *parents = (int32_t *)(req + (size_t)ncmd * sizeof *cmds);
    const char *str = (const char *)(parents + psize);
    uint64_t strbytes = r->nbytes - used;
    req[r->nbytes - 1] = 0;
    const char *cwd = str + (r->arg[4] >= 0 && (uint64_t)r->arg[4] < strbytes ? r->arg[4] : 0);

    int k = 0, nstarted = 0;
    slave_t **started = calloc((size_t)total, sizeof *started);
    int *appnum = calloc((size_t)total, sizeof *appnum);
    for (int c = 0; c < ncmd && started && appnum; c++) {
        const bd_spawn_cmd_t *cm = &cmds[c];
        const char *cmd = str + (cm->command < strbytes ? cm->command : 0);
        const char *path = cm->path < strbytes ? str + cm->path : NULL;
        char dir[BD_PATH_MAX * 2];
        if (cm->wdir < strbytes && str[cm->wdir] == '/')
            snprintf(dir, sizeof dir, "%s", str + cm->wdir);
        else if (cm->wdir < strbytes)
            snprintf(dir, sizeof dir, "%s/%s", cwd, str + cm->wdir);
        else
            snprintf(dir, sizeof dir, "%s", cwd);
        int argc = cm->argc >= 0 && cm->argc < 4096 ? cm->argc : 0;
        char **argv = calloc((size_t)argc + 2, sizeof *argv);
        char exe[BD_PATH_MAX * 2];
        const char *prog = resolve(cmd, path, exe, sizeof exe);
        if (argv) {
            argv[0] = (char *)cmd;
            uint64_t off = cm->argv;
            for (int a = 0; a < argc && off < strbytes; a++) {
                argv[a + 1] = (char *)str + off;
                off += strlen(str + off) + 1;
            }
        }
        for (int i = 0; i < cm->maxprocs; i++, k++) {
            kids[k] = -1;
            if (!argv) {
                snprintf(msgs[k], BD_SPAWN_MSG, "master out of memory");
                continue;
            }
            slave_t *ch = free_slot();
            slot_reset(ch);
            char err[BD_SPAWN_MSG];
            if (bdr_master_start(ch, prog, argv, dir, err, sizeof err) < 0) {
                ch->state = SL_EXITED; /* free once reaped; never counted as a rank */
                snprintf(msgs[k], BD_SPAWN_MSG, "%s", err);
                continue;
            }
            g_m.ninit_pending++;
            kids[k] = ch->world;
            appnum[nstarted] = c;
            started[nstarted++] = ch;
        }
        free(argv);
    }
    int bad = !started || !appnum;
    if (nstarted && !bad) {
        /* The children's MPI_COMM_WORLD, BDMPI_COMM_NODE and BDMPI_COMM_CWORLD
         * (all of them on this node) and what each learns at MPI_Init. */
        int *w = malloc((size_t)nstarted * sizeof(int));
        int ctx[3] = {bdr_comm_alloc_ctx(), bdr_comm_alloc_ctx(), bdr_comm_alloc_ctx()};
        for (int i = 0; w && i < nstarted; i++)
            w[i] = started[i]->world;
        for (int j = 0; w && j < 3; j++) {
            comm_t *cm = bdr_comm_new(ctx[j], nstarted, w);
            if (!cm)
                bad = 1;
            else
                cm->refs = -1; /* the children's predefined communicators */
        }
        size_t len = sizeof(bd_spawn_info_t) + (size_t)(nstarted + psize) * sizeof(int32_t);
        for (int i = 0; w && !bad && i < nstarted; i++) {
            bd_spawn_info_t *sp = malloc(len);
            if (!sp) {
                bad = 1;
                break;
            }
            *sp = (bd_spawn_info_t){.world_ctx = ctx[0],
                                    .node_ctx = ctx[1],
                                    .cworld_ctx = ctx[2],
                                    .leader_ctx = lctx,
                                    .size = nstarted,
                                    .rank = i,
                                    .psize = psize,
                                    .proot = s->world,
                                    .appnum = appnum[i],
                                    .initial_errh = cmds[appnum[i]].initial_errh};
            int32_t *lists = (int32_t *)(sp + 1);
            for (int j = 0; j < nstarted; j++)
                lists[j] = w[j];
            memcpy(lists + nstarted, parents, (size_t)psize * sizeof(int32_t));
            started[i]->sp = sp;
        }
        bad |= !w;
        free(w);
    }
    free(started);
    free(appnum);
    free(req);
    if (bad) {
        free(kids);
        free(msgs);
        bdr_master_fail(1, "master out of memory");
        return;
    }
    s->slot->resp.arg[0] = nstarted;
    memcpy(s->win, kids, (size_t)total * sizeof(int32_t));
    memcpy(s->win + (size_t)total * sizeof(int32_t), msgs, (size_t)total * BD_SPAWN_MSG);
    free(kids);
    free(msgs);
    bd_log_info("rank %d spawned %d of %d ranks", s->world, nstarted, total);
    bdr_sched_respond(s);
}

void bdr_spawn_init_answer(slave_t *s)
{
    const bd_spawn_info_t *sp = s->sp;
    size_t len = sizeof *sp + (size_t)(sp->size + sp->psize) * sizeof(int32_t);
    if (len > g_m.hdr->window) {
        bdr_master_fail(1, "spawned rank %d: %d children and %d parents do not fit the window",
                        s->world, sp->size, sp->psize);
        return;
    }
    memcpy(s->win, sp, len);
    s->slot->resp.arg[2] = 1;
}

/* ---------------------------------------------------------------- names */

/* The names MPI_Publish_name published, the same on every node: a publish
 * or unpublish is applied here and sent to every other node, in the order
 * of that node's other traffic, so a rank told of a name by the publisher
 * (a message, a barrier) finds it. */
typedef struct name {
    struct name *next;
    char *service, *port;
} name_t;
static name_t *g_names;

static name_t **name_find(const char *service)
{
    name_t **p = &g_names;
    while (*p && strcmp((*p)->service, service))
        p = &(*p)->next;
    return p;
}

/* Apply op to the table: 0, or -1 (publish: taken; unpublish: unknown). */
static int name_apply(int op, const char *service, const char *port)
{
    name_t **p = name_find(service);
    if (op == BD_NAME_UNPUBLISH) {
        if (!*p)
            return -1;
        name_t *n = *p;
        *p = n->next;
        free(n->service);
        free(n->port);
        free(n);
        return 0;
    }
    if (*p)
        return -1;
    name_t *n = calloc(1, sizeof *n);
    if (!n || !(n->service = strdup(service)) || !(n->port = strdup(port))) {
        if (n)
            free(n->service);
        free(n);
        bdr_master_fail(1, "master out of memory");
        return -1;
    }
    *p = n;
    return 0;
}

void bdr_name_remote(bdr_net_msg_t *nm)
{
    if (!nm->len)
        return;
    nm->payload[nm->len - 1] = 0;
    const char *service = nm->payload;
    size_t sl = strlen(service);
    const char *port = sl + 1 < nm->len ? service + sl + 1 : "";
    name_apply(nm->h.a[0], service, port);
}

void bdr_name_req(slave_t *s, const bd_req_t *r)
{
    int op = (int)r->arg[0];
    uint64_t n = r->nbytes;
    if (n < 2 || n > g_m.hdr->window || op < BD_NAME_PUBLISH || op > BD_NAME_UNPUBLISH) {
        bdr_master_fail(1, "rank %d: malformed name service request", s->world);
        return;
    }
    s->win[n - 1] = 0;
    const char *service = s->win;
    size_t sl = strlen(service);
    const char *port = sl + 1 < n ? service + sl + 1 : "";
    if (op == BD_NAME_LOOKUP) {
        name_t *f = *name_find(service);
        if (!f)
            s->slot->resp.status = BD_RESP_ERROR;
        else
            snprintf(s->win, g_m.hdr->window, "%s", f->port);
        bdr_sched_respond(s);
        return;
    }
    if (name_apply(op, service, port) < 0) {
        s->slot->resp.status = BD_RESP_ERROR;
    } else if (g_m.nnodes > 1) {
        bdr_net_hdr_t h = {.type = BDR_NH_NAME, .src_node = g_m.node};
        h.a[0] = op;
        for (int d = 0; d < g_m.nnodes; d++)
            if (d != g_m.node)
                bdr_node_send(d, &h, s->win, n);
    }
    bdr_sched_respond(s);
}
