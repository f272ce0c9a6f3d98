/* Deadlock detection.  On one node: no rank running or runnable, none still
 * before MPI_Init, none being unloaded, some blocked: nothing can change.
 * Across nodes a blocked rank may still be woken by a message in flight, so
 * the masters run a termination check coordinated by node 0: each master
 * reports when it is stuck, with the number of messages it has sent to and
 * received from other masters; when every master is stuck and the totals
 * agree, node 0 asks everyone again, and if nothing has changed, declares
 * the deadlock (a double snapshot, so a message in flight cannot hide).
 * A node reports being stuck only once it has stayed so, unchanged, for
 * DL_REPORT_DELAY_S: a rank that waits for an answer from another node is
 * "stuck" for the length of a round trip, and reporting each such wait
 * (and its end) cost two extra messages to node 0 per message received,
 * each with its doorbell: three messages per ping-pong where one was data
 * (issue 12, session 16: MPICH's sendflood at -nn 2). */
#include <stdlib.h>
#include <string.h>

#include "bd_log.h"
#include "coll.h"
#include "master.h"
#include "net.h"

enum { DL_STATUS = 1, DL_QUERY, DL_REPLY, DL_FOUND };

typedef struct {
    int stuck;
    uint64_t sent, recv;
    int blocked;
} dl_state_t;

static dl_state_t *g_table; /* node 0: last status of every node */
static dl_state_t g_last_sent = {-1, 0, 0, 0};
static uint32_t g_wave, g_replies;
static dl_state_t *g_wave_snap;

uint64_t g_net_sent, g_net_recv; /* counted by node.c */

/* How long a node stays stuck, with nothing changing, before it tells node
 * 0.  Deadlocks are found this much later; the loop looks at least every
 * 16 ms at -nn > 1 (master.c), so within about 30 ms. */
#define DL_REPORT_DELAY_S 0.01
static dl_state_t g_stuck_as;   /* the state being timed */
static double g_stuck_since;    /* when it began; 0: not stuck */
static uint64_t g_reports_sent; /* DL_* messages of this node (--stats) */

uint64_t bdr_deadlock_reports(void) { return g_reports_sent; }

static int local_blocked(void)
{
    int b = 0;
    for (int i = 0; i < g_m.ns; i++)
        b += g_m.slaves[i].state == SL_BLOCKED;
    return b;
}

static int locally_stuck(void)
{
    if (g_m.stopping || g_m.nrunning || g_m.nrunnable || g_m.ninit_pending || g_m.nunloading ||
        !bdr_node_quiet())
        return 0;
    /* A rank poked by a message that was just handled may be about to wake:
     * this can be asked in the middle of handling a batch of messages. */
    for (int i = 0; i < g_m.ns; i++) {
        slave_t *s = &g_m.slaves[i];
        /* a poll asleep in the master is answered at its bound anyway */
        if (s->state == SL_BLOCKED && (s->poke || s->pin_head || bdr_mbox_ready(s) ||
                                       (s->blk == BLK_MBOX && s->poll_until > 0)))
            return 0;
    }
    return 1;
}

int bdr_deadlock_describe(slave_t *s, char *what, size_t len)
{
    if (s->state == SL_BLOCKED) {
        if (s->blk == BLK_COLL)
            bdr_coll_describe(s, what, len);
        else if (s->blk == BLK_CRIT)
            snprintf(what, len, "waits in BDMPI_Enter_critical");
        else
            bdr_mbox_describe(s, what, len);
    } else if (s->state == SL_EXITED && !s->inited) {
        snprintf(what, len, "exited without calling MPI_Init");
    } else if (s->state == SL_EXITED || s->state == SL_FINALIZED) {
        snprintf(what, len, "has called MPI_Finalize");
    } else {
        return 0;
    }
    return 1;
}

void bdr_deadlock_report_local(void)
{
    for (int i = 0; i < g_m.ns; i++) {
        slave_t *s = &g_m.slaves[i];
        char what[512];
        if (bdr_deadlock_describe(s, what, sizeof what))
            bd_log_error("  rank %d %s", s->world, what);
    }
}

/* A rank waiting in a collective the ranks run among themselves while
 * another waits in one through the master on the same communicator: they
 * called different collectives (bdmpi.txt's cblocked ranks would wait for
 * ever).  Report it as BEGIN reports a mismatch. */
static int mismatch_found(void)
{
    for (int i = 0; i < g_m.ns; i++) {
        slave_t *a = &g_m.slaves[i];
        const bd_req_t *r = &a->slot->req;
        if (a->state != SL_BLOCKED || a->blk != BLK_MBOX || r->arg[1] != BD_WAIT_LCOLL)
            continue;
        for (int j = 0; j < g_m.ns; j++) {
            slave_t *b = &g_m.slaves[j];
            if (b->state != SL_BLOCKED || b->blk != BLK_COLL || !b->coll || b->coll->ctx != r->ctx)
                continue;
            bd_coll_desc_t d = {.api = (int32_t)r->arg[3], .root = (int32_t)r->arg[4]};
            bdr_master_fail(1,
                            "collective mismatch on communicator context %d: rank %d called %s "
                            "(root %d) where another rank called %s (root %d)",
                            r->ctx, b->world, bdr_coll_call_name(&b->coll->d), b->coll->d.root,
                            bdr_coll_call_name(&d), d.root);
            return 1;
        }
    }
    return 0;
}

static void declare(void)
{
    if (mismatch_found())
        return;
    if (g_m.nnodes > 1)
        bd_log_error("deadlock on node %d: every live rank of the job is blocked in MPI and "
                     "none can proceed:",
                     g_m.node);
    else
        bd_log_error("deadlock: every live rank is blocked in MPI and none can proceed:");
    bdr_deadlock_report_local();
    bdr_master_fail(1, "ending the job because of the deadlock");
}

static void send_dl(int dst, int what, const dl_state_t *st)
{
    bdr_net_hdr_t h = {.type = BDR_NH_DEADLOCK, .src_node = g_m.node};
    h.a[0] = what;
    h.a[1] = st ? st->stuck : 0;
    h.a[2] = st ? st->blocked : 0;
    h.a[3] = (int32_t)g_wave;
    h.u[0] = st ? st->sent : 0;
    h.u[1] = st ? st->recv : 0;
    if (bdr_net_send(dst, &h, NULL, 0) == 0)
        g_reports_sent++;
}

static void current(dl_state_t *st)
{
    st->stuck = locally_stuck();
    st->sent = g_net_sent;
    st->recv = g_net_recv;
    st->blocked = local_blocked();
}

/* Node 0: is everyone stuck with matching totals? */
static void coordinator_check(void)
{
    if (g_wave_snap)
        return; /* a confirmation is under way */
    uint64_t s = 0, r = 0;
    int blocked = 0;
    for (int n = 0; n < g_m.nnodes; n++) {
        if (!g_table[n].stuck)
            return;
        s += g_table[n].sent;
        r += g_table[n].recv;
        blocked += g_table[n].blocked;
    }
    if (s != r || !blocked)
        return;
    g_wave++;
    g_replies = 0;
    g_wave_snap = malloc((size_t)g_m.nnodes * sizeof *g_wave_snap);
    if (!g_wave_snap)
        return;
    memcpy(g_wave_snap, g_table, (size_t)g_m.nnodes * sizeof *g_wave_snap);
    for (int n = 1; n < g_m.nnodes; n++)
        send_dl(n, DL_QUERY, NULL);
    dl_state_t me;
    current(&me);
    g_table[0] = me;
    g_replies = 1;
}

static void wave_reply(int node, const dl_state_t *st)
{
    if (!g_wave_snap)
        return;
    dl_state_t *was = &g_wave_snap[node];
    int same = st->stuck && was->stuck && st->sent == was->sent && st->recv == was->recv;
    g_table[node] = *st;
    if (!same) {
        free(g_wave_snap);
        g_wave_snap = NULL;
        return;
    }
    if (++g_replies < (uint32_t)g_m.nnodes)
        return;
    /* Our own state is part of the second snapshot too. */
    dl_state_t me;
    current(&me);
    int still = me.stuck && me.sent == g_wave_snap[0].sent && me.recv == g_wave_snap[0].recv;
    free(g_wave_snap);
    g_wave_snap = NULL;
    if (!still)
        return;
    for (int n = 1; n < g_m.nnodes; n++)
        send_dl(n, DL_FOUND, NULL);
    declare();
}

void bdr_deadlock_net(bdr_net_msg_t *nm)
{
    dl_state_t st = {nm->h.a[1], nm->h.u[0], nm->h.u[1], nm->h.a[2]};
    switch (nm->h.a[0]) {
    case DL_STATUS:
        if (g_table) {
            g_table[nm->h.src_node] = st;
            coordinator_check();
        }
        break;
    case DL_QUERY: {
        dl_state_t me;
        current(&me);
        g_wave = (uint32_t)nm->h.a[3];
        send_dl(0, DL_REPLY, &me);
        break;
    }
    case DL_REPLY:
        if ((uint32_t)nm->h.a[3] == g_wave)
            wave_reply(nm->h.src_node, &st);
        break;
    case DL_FOUND: declare(); break;
    }
}

void bdr_deadlock_check(void)
{
    if (g_m.stopping)
        return;
    if (g_m.nnodes == 1) {
        if (locally_stuck() && local_blocked())
            declare();
        return;
    }
    dl_state_t me;
    current(&me);
    if (g_m.node == 0) {
        if (!g_table && !(g_table = calloc((size_t)g_m.nnodes, sizeof *g_table)))
            return;
        if (me.stuck != g_table[0].stuck || me.sent != g_table[0].sent ||
            me.recv != g_table[0].recv || me.blocked != g_table[0].blocked) {
            g_table[0] = me;
            if (me.stuck)
                coordinator_check();
        }
        return;
    }
    if (!me.stuck) {
        g_stuck_since = 0;
        if (g_last_sent.stuck == 1) {
            g_last_sent = me;
            send_dl(0, DL_STATUS, &me); /* at once: node 0 must not count us */
        }
        return;
    }
    if (!g_stuck_since || me.sent != g_stuck_as.sent || me.recv != g_stuck_as.recv ||
        me.blocked != g_stuck_as.blocked) {
        g_stuck_as = me; /* stuck afresh: time it */
        g_stuck_since = bdr_master_now();
        return;
    }
    if (bdr_master_now() - g_stuck_since < DL_REPORT_DELAY_S)
        return;
    if (me.stuck != g_last_sent.stuck || me.sent != g_last_sent.sent ||
        me.recv != g_last_sent.recv || me.blocked != g_last_sent.blocked) {
        g_last_sent = me;
        send_dl(0, DL_STATUS, &me);
    }
}
