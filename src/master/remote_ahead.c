/* The remote-memory tier's loads asked for before the rank asks
 * (docs/design.md, "Remote-memory tier", Ahead).
 *
 * A GET that is not asked ahead costs a round trip through two masters,
 * each of which must get a CPU (milliseconds on a loaded machine); one
 * answered from chunks already here costs the rank's hop to its master
 * only.  Two guesses of what a rank will load next:
 *
 * - Its stream: it loads an allocation in runs of equal length, at most
 *   BD_RMT_LANES at once, so the run after the last one asked for (by its
 *   lanes or ahead) is asked for too (ahead_stream).
 * - What followed last time (the successor table): a rank's loads repeat
 *   from turn to turn (the same calls touch the same allocations, loaded in
 *   the same runs), but a stream is known only once its first GET came, and
 *   the first GETs of a turn came with nothing before them.  So each GET is
 *   remembered with the GET that came after it; a GET asks ahead for what
 *   followed it last time, and what followed that, and a rank given its run
 *   slot (bdr_remote_turn) for what followed its last GET (succ_walk).
 *
 * The chunks of a run asked ahead wait here, and the rank's GET of exactly
 * that run is answered from them.  At most an eighth of the budget (4 MiB)
 * is asked ahead, counted in the budget; what the rank does not ask for
 * within a second, or what changes meanwhile (PUT, DROP), is dropped, and a
 * node short of memory drops all of it first. */
#include <stdlib.h>

#include "master.h"
#include "net.h"
#include "remote.h"

#define AHEAD_N 8
#define AHEAD_CHUNKS 16
typedef struct ahead {
    int used, dead;
    int succ;        /* asked because of the successor table */
    int slot, lane;  /* lane: the lane whose GET it now serves, or -1 */
    int expect, got; /* chunks */
    uint64_t id, sb;
    uint32_t n;
    double t;
    bdr_net_msg_t *m[AHEAD_CHUNKS]; /* what came before the rank asked */
} ahead_t;
static ahead_t g_ah[AHEAD_N];
static uint64_t g_ah_bytes; /* kept chunks (counted in the budget) */
static uint64_t g_ah_asked; /* sbpage bytes asked for and not yet taken or dropped */

/* The successor table: per slot, SUCC_N runs the rank loaded, each with the
 * run it loaded next (replaced round robin); and the last run it loaded. */
#define SUCC_N 64
#define SUCC_WALK 16 /* runs looked at per walk */
typedef struct succ {
    uint64_t id, sb, nid, nsb;
    uint32_t n, nn; /* n 0: unused; nn 0: no successor yet */
} succ_t;
static succ_t *g_succ;     /* [slot * SUCC_N] */
static uint32_t *g_succ_k; /* per slot: the entry to replace next */
static succ_t *g_last;     /* per slot: its last GET (n 0: none yet) */

int bdr_rmt_ahead_init(void)
{
    g_succ = calloc((size_t)g_m.nslots * SUCC_N, sizeof *g_succ);
    g_succ_k = calloc((size_t)g_m.nslots, sizeof *g_succ_k);
    g_last = calloc((size_t)g_m.nslots, sizeof *g_last);
    return g_succ && g_succ_k && g_last ? 0 : -1;
}

uint64_t bdr_rmt_ahead_bytes(void) { return g_ah_bytes; }

static uint64_t ahead_cap(void)
{
    uint64_t b = g_m.hdr->job.mem_budget / 8;
    return b < ((uint64_t)4 << 20) ? b : (uint64_t)4 << 20;
}

/* Ask `holder` ahead for [sb, sb+n) of allocation id, all of it there (succ:
 * because of the successor table).  0 if the cap or the table is full. */
static int ahead_send(int slot, uint64_t id, uint64_t sb, uint32_t n, int holder, int succ)
{
    ahead_t *a = NULL;
    for (int i = 0; i < AHEAD_N && !a; i++)
        if (!g_ah[i].used)
            a = &g_ah[i];
    uint32_t nch = (n + bdr_rmt.cpc - 1) / bdr_rmt.cpc;
    if (!a || nch > AHEAD_CHUNKS || g_ah_asked + (uint64_t)n * bdr_rmt.sbpage > ahead_cap())
        return 0;
    *a = (ahead_t){.used = 1,
                   .succ = succ,
                   .slot = slot,
                   .lane = -1,
                   .expect = (int)nch,
                   .id = id,
                   .sb = sb,
                   .n = n,
                   .t = bdr_master_now()};
    g_ah_asked += (uint64_t)n * bdr_rmt.sbpage;
    bdr_net_hdr_t nh = {.type = BDR_NH_RMT_GET};
    nh.a[0] = slot;
    nh.a[1] = (int)(a - g_ah);
    nh.a[2] = (int32_t)n;
    nh.a[3] = 1; /* ahead: the answer comes back to g_ah[a1] */
    nh.u[0] = id;
    nh.u[1] = sb;
    nh.u[3] = bdr_rmt.sbpage;
    bdr_node_send(holder, &nh, NULL, 0);
    return 1;
}

static void ahead_drop(ahead_t *a)
{
    for (int j = 0; j < a->got && j < AHEAD_CHUNKS; j++)
        if (a->m[j]) {
            g_ah_bytes -= a->m[j]->cap;
            bdr_net_msg_free(a->m[j]);
            a->m[j] = NULL;
        }
    if (!a->dead)
        g_ah_asked -= (uint64_t)a->n * bdr_rmt.sbpage;
    a->dead = 1;
    if (a->got == a->expect)
        a->used = 0; /* else when the rest has come */
}

void bdr_rmt_ahead_stale(int slot, uint64_t id, uint64_t sb, uint32_t n)
{
    for (int i = 0; i < AHEAD_N; i++) {
        ahead_t *a = &g_ah[i];
        if (a->used && !a->dead && a->lane < 0 && a->slot == slot && a->id == id &&
            a->sb < sb + n && sb < a->sb + a->n)
            ahead_drop(a);
    }
}

/* The rank asks for a run asked for ahead: answered from what has come,
 * and from the rest as it comes.  0: not asked ahead. */
int bdr_rmt_ahead_take(int slot, int k, lop_t *op)
{
    ahead_t *a = NULL;
    for (int i = 0; i < AHEAD_N && !a; i++)
        if (g_ah[i].used && !g_ah[i].dead && g_ah[i].lane < 0 && g_ah[i].slot == slot &&
            g_ah[i].id == op->id && g_ah[i].sb == op->sb && g_ah[i].n == op->nsb)
            a = &g_ah[i];
    if (!a)
        return 0;
    a->lane = k;
    g_ah_asked -= (uint64_t)a->n * bdr_rmt.sbpage;
    uint64_t len = (uint64_t)a->n * bdr_rmt.sbpage;
    bdr_rmt_stat_add(slot, BD_STAT_MEM_RMT_AHEAD, len);
    if (a->succ)
        bdr_rmt_stat_add(slot, BD_STAT_MEM_RMT_AHEAD_NEXT, len);
    if (a->got == a->expect)
        bdr_rmt_stat_add(slot, BD_STAT_MEM_RMT_AHEAD_READY, len);
    op->waiting = a->expect;
    int got = a->got;
    if (got == a->expect)
        a->used = 0;
    for (int j = 0; j < got; j++) {
        bdr_net_msg_t *m = a->m[j];
        a->m[j] = NULL;
        g_ah_bytes -= m->cap;
        m->h.a[1] = k;
        m->h.a[3] = 0;
        bdr_rmt_owner_data(m);
        bdr_net_msg_free(m);
    }
    return 1;
}

/* After the rank's GET of run r: the run after the last one asked, in its stream. */
static void ahead_stream(int slot, const lop_t *r)
{
    uint64_t from = r->sb + r->nsb;
    for (int k = 0; k < BD_RMT_LANES; k++) {
        const lop_t *o = &bdr_rmt.lop[slot * BD_RMT_LANES + k];
        if (o->op == BD_RMT_GET && o->id == r->id && o->sb + o->nsb > from)
            from = o->sb + o->nsb;
    }
    for (int i = 0; i < AHEAD_N; i++) {
        const ahead_t *x = &g_ah[i];
        if (x->used && !x->dead && x->slot == slot && x->id == r->id && x->sb + x->n > from)
            from = x->sb + x->n;
    }
    if (from > r->sb + (uint64_t)(BD_RMT_LANES + 1) * r->nsb)
        return; /* the lanes and the ahead cover enough of the stream */
    rkey_t key = {0, slot, r->id, from};
    rent_t *e = bdr_rtab_find(&bdr_rmt.own, &key);
    if (!e || e->loc < 0)
        return;
    uint32_t n = 1;
    for (; n < r->nsb; n++) {
        key.sb = from + n;
        rent_t *f = bdr_rtab_find(&bdr_rmt.own, &key);
        if (!f || f->loc != e->loc)
            break;
    }
    (void)ahead_send(slot, r->id, from, n, e->loc, 0);
}

/* A chunk asked for ahead: kept (1), passed on to the GET it now serves,
 * or dropped. */
int bdr_rmt_ahead_data(bdr_net_msg_t *nm)
{
    int i = nm->h.a[1];
    ahead_t *a = i >= 0 && i < AHEAD_N ? &g_ah[i] : NULL;
    int more = nm->h.a[4]; /* the answer has that many chunks more than expected */
    if (!a || !a->used || a->got >= a->expect || nm->h.a[0] != a->slot || more < 0 ||
        a->expect + more > AHEAD_CHUNKS) {
        bdr_master_fail(1, "remote memory: unexpected answer from node %d", nm->h.src_node);
        return 0;
    }
    a->expect += more;
    a->got++;
    int done = a->got == a->expect;
    if (a->dead || a->lane >= 0) {
        int lane = a->lane;
        if (done)
            a->used = 0;
        if (!a->dead) {
            nm->h.a[1] = lane;
            nm->h.a[3] = 0;
            bdr_rmt_owner_data(nm);
        }
        return 0;
    }
    nm->h.a[4] = 0; /* counted in expect, which the GET that takes it starts from */
    a->m[a->got - 1] = nm;
    g_ah_bytes += nm->cap;
    return 1;
}

/* Runs asked ahead that nobody took within a second (or whose rank is
 * gone) are dropped; all of them when the node needs the memory. */
uint64_t bdr_rmt_ahead_expire(int all)
{
    if (!g_ah_asked && !g_ah_bytes)
        return 0;
    uint64_t before = g_ah_bytes;
    double now = bdr_master_now();
    for (int i = 0; i < AHEAD_N; i++) {
        ahead_t *a = &g_ah[i];
        if (a->used && !a->dead && a->lane < 0 &&
            (all || now - a->t > 1.0 || g_m.slaves[a->slot].exited))
            ahead_drop(a);
    }
    return before - g_ah_bytes;
}

/* ------------------------------------------------------------ what came next */

static succ_t *succ_find(int slot, uint64_t id, uint64_t sb, uint32_t n)
{
    succ_t *t = g_succ + (size_t)slot * SUCC_N;
    for (int i = 0; i < SUCC_N; i++)
        if (t[i].n == n && t[i].id == id && t[i].sb == sb)
            return &t[i];
    return NULL;
}

/* The rank asks for run (id, sb, n): it follows its last one. */
static void succ_note(int slot, uint64_t id, uint64_t sb, uint32_t n)
{
    succ_t *l = &g_last[slot];
    if (l->n && !(l->id == id && l->sb == sb && l->n == n)) {
        succ_t *e = succ_find(slot, l->id, l->sb, l->n);
        if (!e) {
            e = &g_succ[(size_t)slot * SUCC_N + g_succ_k[slot]];
            g_succ_k[slot] = (g_succ_k[slot] + 1) % SUCC_N;
            *e = (succ_t){.id = l->id, .sb = l->sb, .n = l->n};
        }
        e->nid = id, e->nsb = sb, e->nn = n;
    }
    *l = (succ_t){.id = id, .sb = sb, .n = n};
}

/* Part of [sb, sb+n) of id is being loaded by a lane or asked ahead. */
static int run_busy(int slot, uint64_t id, uint64_t sb, uint32_t n)
{
    for (int k = 0; k < BD_RMT_LANES; k++) {
        const lop_t *o = &bdr_rmt.lop[slot * BD_RMT_LANES + k];
        if (o->op == BD_RMT_GET && o->id == id && o->sb < sb + n && sb < o->sb + o->nsb)
            return 1;
    }
    for (int i = 0; i < AHEAD_N; i++) {
        const ahead_t *x = &g_ah[i];
        if (x->used && !x->dead && x->slot == slot && x->id == id && x->sb < sb + n &&
            sb < x->sb + x->n)
            return 1;
    }
    return 0;
}

/* The node holding all of [sb, sb+n) of id, or -1 (not all remote, or at
 * several nodes). */
static int run_holder(int slot, uint64_t id, uint64_t sb, uint32_t n)
{
    int h = -1;
    for (uint32_t i = 0; i < n; i++) {
        rkey_t key = {0, slot, id, sb + i};
        const rent_t *e = bdr_rtab_find(&bdr_rmt.own, &key);
        if (!e || e->loc < 0 || (h >= 0 && e->loc != h))
            return -1;
        h = e->loc;
    }
    return h;
}

/* Ask ahead for what followed run (id, sb, n) last time, what followed
 * that, and so on, until the cap (runs being loaded or asked already, or
 * not remote, are passed over). */
static void succ_walk(int slot, uint64_t id, uint64_t sb, uint32_t n)
{
    for (int step = 0; step < SUCC_WALK; step++) {
        const succ_t *e = succ_find(slot, id, sb, n);
        if (!e || !e->nn)
            return;
        id = e->nid, sb = e->nsb, n = e->nn;
        if (run_busy(slot, id, sb, n))
            continue;
        int h = run_holder(slot, id, sb, n);
        if (h >= 0 && !ahead_send(slot, id, sb, n, h, 1))
            return;
    }
}

void bdr_rmt_ahead_ask(int slot, const lop_t *r)
{
    succ_note(slot, r->id, r->sb, r->nsb);
    succ_walk(slot, r->id, r->sb, r->nsb);
    ahead_stream(slot, r);
}

void bdr_remote_turn(slave_t *s)
{
    int slot = (int)(s - g_m.slaves);
    if (!bdr_remote_on() || !g_last || slot < 0 || slot >= g_m.ns || !g_last[slot].n)
        return;
    succ_walk(slot, g_last[slot].id, g_last[slot].sb, g_last[slot].n);
}
