/* The remote-memory tier (-mem-remote on, -nn > 1; mmlib.txt section 4;
 * docs/design.md "Remote-memory tier").
 *
 * Two roles, every master plays both:
 *
 * Owner.  Its ranks' memory managers offer unloaded runs of sbpages
 * through their lanes (bd_ipc.h, bd_rmt_lane_t).  A PUT goes to one other
 * node's master (the roomiest, below); the rank is answered at once while
 * the master keeps a copy (write-behind, bounded), else when that master
 * has stored it (ACK) or refused it, and then stores it locally itself.  The owner keeps a map
 * of every sbpage it has stored remotely: which node holds it and the
 * sequence number of the copy, or where in its own "returned" file it
 * is once a holder gave it back.  A GET is served from there.
 *
 * Holder.  It keeps other nodes' sbpages in its own memory, counted in
 * its budget (bdr_remote_held, in memacct.c's node total), and refuses a
 * PUT that does not fit in its budget less a reserve and what its own
 * waiting ranks want.  When its own ranks or a lowered budget need the
 * memory, it gives copies back (RETURN, bdr_remote_reclaim): the owner's
 * master writes them to its returned file, so nothing is lost and the
 * rank never learns.  Messages between two masters keep their order
 * (node.c's FIFO per destination), which makes the races simple: a copy
 * returned before a GET reached the holder is in the owner's file before
 * the holder's answer arrives; a RETURN of a copy the owner has replaced
 * or dropped since carries an old sequence number and is ignored.
 *
 * Flow control: a rank has BD_RMT_LANES lanes of at most 1 MiB (the
 * manager's I/O requests), so at most 4 MiB of each rank are in flight,
 * the same bound as node.c's tokens for a large message.
 *
 * The data path (docs/performance.md, "issue 16, session 15").  A run
 * travels in chunks of at most CHUNK bytes, each one message in a buffer
 * of the transport's pool (bdr_net_buf; no fresh mapping to fault in), so
 * MPICH moves one while the next is read.  The owner's master reads a PUT
 * straight from the rank's buffer (process_vm_readv, bdr_vm_copy) into the
 * message it sends; the holder keeps the message it received as its copy
 * (no copy there: a held sbpage points into it, the buffer goes when the
 * last of its sbpages does); a GET is answered from those buffers -- a
 * chunk of the answer that is a whole held chunk, or the start of one, is
 * sent from it as it is (bdr_node_send_lent, no copy; 97% of them in the
 * PageRank benchmark), others are copied into a message -- and the
 * owner's master writes each chunk straight into the rank's buffer
 * (process_vm_writev) as it arrives.  The lane's data area is used only
 * where the master cannot reach the rank's memory (BD_RMT_IN_LANE).
 *
 * Holders are chosen by their room: each answer of a holder, and a notice
 * every 100 ms, says how much more it would take (room_for_guests), and a
 * PUT goes to the node with the most room left after what is on its way to
 * it, so a full node is not asked until it says it has room again.
 *
 * Ahead: the run after the ones a rank is loading is asked for before the
 * rank asks (ahead_ask), so that its load needs no round trip.
 *
 * A holder that dies takes data with it: the job cannot go on.  MPICH
 * ends the masters; bdr_remote_lost names the node when we see it first. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bd_fault.h"
#include "bd_log.h"
#include "master.h"
#include "net.h"
#include "remote.h"

/* Payload of one message of a run: 256 KiB, the size of the transport's
 * small kept buffers, or one sbpage where that is larger.  1 MiB chunks (a
 * lane's whole request in one message) cost the masters 14% more CPU in
 * the PageRank benchmark (more of the holder's answers copied, as fewer
 * line up with the held chunks, and larger copies out of the caches;
 * docs/performance.md, issue 16 session 22). */
#define CHUNK ((uint64_t)256 << 10)

/* Write-behind: a PUT whose copy the master keeps until the holder has
 * answered, so that the rank is answered at once (no round trip to the
 * holder on its unload path).  Refused, the master stores the copy in its
 * returned file.  At most WB_MAX bytes at once, counted in the budget.
 * The copy is the message itself (bdr_node_send_lent): it is freed when
 * both the holder has answered and MPICH has done with it (refs). */
typedef struct wb {
    struct wb *next;
    uint64_t seq, id, sb;
    int slot, holder, refs;
    uint32_t nsb;
    char *data;
} wb_t;
#define WB_MAX (8u << 20)
static wb_t *g_wb;
static uint64_t g_wb_bytes;

/* One of a write-behind copy's two users (its send, the holder's answer)
 * is done with it. */
static void wb_unref(void *arg)
{
    wb_t *w = arg;
    if (--w->refs)
        return;
    uint64_t len = (uint64_t)w->nsb * bdr_rmt.sbpage;
    g_wb_bytes -= len;
    bdr_net_free_buf(w->data, len);
    free(w);
}

static int g_on;
rmt_state_t bdr_rmt;
static rtab_t g_held; /* holder: other nodes' sbpages */
static uint64_t g_held_bytes, g_held_peak;
static uint64_t g_returning; /* given back, perhaps still queued (counted in transient) */
static uint32_t *g_seen;     /* per slot and lane: the last request seen */
static double *g_full_until; /* per node: refused us lately */
static uint64_t *g_at;       /* per node: bytes of ours it holds */
static uint64_t *g_room;     /* per node: room it said it had (UINT64_MAX: not heard yet) */
static uint64_t *g_going;    /* per node: bytes of PUTs sent to it not answered yet */
static double *g_room_at;    /* per node: when it said so */
static int g_next_holder;
static uint8_t *g_cma_bad; /* per slot: its memory cannot be reached (use the lane) */

static uint64_t g_seq;
static int g_ret_fd = -1; /* the returned file */
static uint64_t g_ret_end;

/* One sbpage of hb is no longer held here: the buffer goes with the last. */
void bdr_remote_hb_unref(hbuf_t *hb)
{
    if (!hb || --hb->refs)
        return;
    g_held_bytes -= hb->m->cap;
    bdr_net_msg_free(hb->m);
    free(hb);
}

/* A held chunk sent as it is (holder_get) has left: its header room is
 * free again, and the buffer may go if nothing is held in it any more. */
static void held_sent(void *arg)
{
    hbuf_t *hb = arg;
    hb->lent = 0;
    bdr_remote_hb_unref(hb);
}

int bdr_remote_on(void) { return g_on; }

uint64_t bdr_remote_held(void) { return g_held_bytes + g_wb_bytes + bdr_rmt_ahead_bytes(); }

uint64_t bdr_remote_draining(void)
{
    if (!g_on)
        return 0;
    bdr_net_trim();
    return g_wb_bytes + bdr_node_transient_bytes();
}

uint64_t bdr_remote_layout(bd_shm_hdr_t *h, uint64_t total)
{
    const bd_opts_t *o = &g_m.opts;
    if (o->num[BD_OPT_MEM_REMOTE] != 0 || o->num[BD_OPT_MEM_STRATEGY] == BD_MEMS_NONE)
        return total;
    if (g_m.nnodes < 2) {
        if (g_m.node == 0)
            bd_log_error("note: -mem-remote on needs other nodes (-nn > 1): ignored");
        return total;
    }
    if ((uint64_t)o->num[BD_OPT_SBPAGE] > BD_RMT_LANE_BYTES) {
        bd_log_error("note: -mem-remote on needs -sbpage of at most 1M: ignored");
        return total;
    }
    h->rmt_offset = (total + 4095) / 4096 * 4096;
    h->rmt_stride = BD_RMT_HDR + (uint64_t)BD_RMT_LANES * BD_RMT_LANE_BYTES;
    return h->rmt_offset + h->rmt_stride * h->nslaves;
}

int bdr_remote_init(void)
{
    if (!g_m.hdr->rmt_offset) {
        g_m.hdr->job.mem_remote = 1;
        return 0;
    }
    size_t nl = (size_t)g_m.nslots * BD_RMT_LANES;
    g_seen = calloc(nl, sizeof *g_seen);
    bdr_rmt.lop = calloc(nl, sizeof *bdr_rmt.lop);
    g_full_until = calloc((size_t)g_m.nnodes, sizeof *g_full_until);
    g_at = calloc((size_t)g_m.nnodes, sizeof *g_at);
    g_room = calloc((size_t)g_m.nnodes, sizeof *g_room);
    g_going = calloc((size_t)g_m.nnodes, sizeof *g_going);
    g_room_at = calloc((size_t)g_m.nnodes, sizeof *g_room_at);
    g_cma_bad = calloc((size_t)g_m.nslots, 1);
    if (!g_seen || !bdr_rmt.lop || !g_full_until || !g_at || !g_room || !g_going || !g_room_at ||
        !g_cma_bad || bdr_rmt_ahead_init() < 0) {
        bd_log_error("master out of memory setting up -mem-remote");
        return -1;
    }
    bdr_rmt.sbpage = g_m.hdr->job.sbpage;
    bdr_rmt.cpc = bdr_rmt.sbpage >= CHUNK ? 1 : (uint32_t)(CHUNK / bdr_rmt.sbpage);
    if (bdr_rmt.cpc > 64) /* a DATA chunk says which of its sbpages are held in 64 bits */
        bdr_rmt.cpc = 64;
    for (int n = 0; n < g_m.nnodes; n++)
        g_room[n] = UINT64_MAX;
    g_next_holder = (g_m.node + 1) % g_m.nnodes;
    g_on = 1;
    return 0;
}

void bdr_rmt_stat_add(int slot, int which, uint64_t n)
{
    if (slot >= 0 && slot < g_m.ns)
        atomic_fetch_add_explicit(&g_m.slaves[slot].slot->stats[which], n, memory_order_relaxed);
}

static void answer(int slot, int k, int status)
{
    bd_rmt_lane_t *l = bd_rmt_lane(g_m.hdr, (uint32_t)slot, k);
    atomic_store_explicit(&l->status, status, memory_order_relaxed);
    atomic_store_explicit(&l->resp_seq, g_seen[slot * BD_RMT_LANES + k], memory_order_release);
    bd_futex_wake(&l->resp_seq, 1);
}

static void send_drop(int node, int slot, uint64_t id, uint64_t sb, uint32_t n)
{
    bdr_net_hdr_t h = {.type = BDR_NH_RMT_DROP};
    h.a[0] = slot;
    h.a[2] = (int32_t)n;
    h.u[0] = id;
    h.u[1] = sb;
    bdr_node_send(node, &h, NULL, 0);
}

/* Forget our remote copies of [sb, sb+n): tell their holders, run by run. */
static void forget(int slot, uint64_t id, uint64_t sb, uint32_t n, int except)
{
    bdr_rmt_ahead_stale(slot, id, sb, n);
    int run_loc = -2;
    uint64_t run_sb = 0;
    for (uint32_t i = 0; i <= n; i++) {
        int loc = -2;
        rkey_t k = {0, slot, id, sb + i};
        rent_t *e = i < n ? bdr_rtab_find(&bdr_rmt.own, &k) : NULL;
        if (e) {
            loc = e->loc;
            if (loc >= 0)
                g_at[loc] -= bdr_rmt.sbpage;
            bdr_rtab_del(&bdr_rmt.own, &k);
        }
        if (loc != run_loc) {
            if (run_loc >= 0 && run_loc != except)
                send_drop(run_loc, slot, id, run_sb, (uint32_t)(sb + i - run_sb));
            run_loc = loc;
            run_sb = sb + i;
        }
    }
}

/* The node to store len bytes: the one with the most room left once what
 * is on its way there has arrived (one we have not heard from yet counts
 * as roomy), among those that have not refused us in the last 200 ms.
 * When none has room by what they said, the roomiest is asked anyway if
 * it said so more than 200 ms ago (room comes back without a word);
 * otherwise -1: nobody. */
static int pick_holder(uint64_t len)
{
    double now = bdr_master_now();
    int best = -1;
    uint64_t best_left = 0;
    for (int t = 0; t < g_m.nnodes; t++) {
        int n = (g_next_holder + t) % g_m.nnodes;
        if (n == g_m.node || g_full_until[n] > now)
            continue;
        uint64_t left = g_room[n] > g_going[n] ? g_room[n] - g_going[n] : 0;
        if (best < 0 || left > best_left)
            best = n, best_left = left;
    }
    if (best < 0 || (best_left < len && g_room_at[best] + 0.2 > now))
        return -1;
    g_next_holder = (best + 1) % g_m.nnodes;
    return best;
}

/* This rank's memory cannot be reached from here (or a test says so):
 * its requests go through the lane's data area from now on. */
static int cma_failed(int slot, int err)
{
    if (!g_cma_bad[slot])
        bd_log_info("remote memory: cannot reach rank %d's memory (%s): through the lane",
                    g_m.slaves[slot].world, strerror(err));
    g_cma_bad[slot] = 1;
    return -err;
}

/* Copy between buf and the rank's memory at addr (write: into it). */
static int rank_copy(int slot, int write, void *buf, uint64_t addr, size_t n)
{
    if (BD_FAULT_HIT(BD_FAULT_RMT_CMA))
        return cma_failed(slot, EPERM);
    int rc = bdr_vm_copy(g_m.slaves[slot].pid, write, buf, addr, n);
    return rc < 0 ? cma_failed(slot, -rc) : 0;
}

static int read_returned(uint64_t off, char *dst)
{
    int rc = bd_pread_full(g_ret_fd, dst, bdr_rmt.sbpage, off);
    if (rc < 0)
        bdr_master_fail(1, "cannot read managed memory another node gave back from %s: %s",
                        g_m.jobdir, strerror(-rc));
    return rc;
}

/* Each holder of part of the run is asked for all of it and answers with
 * what it has, in chunks of bdr_rmt.cpc sbpages. */
static void get_send(int slot, int k, lop_t *op)
{
    char asked[4096] = {0};
    uint32_t nch = (op->nsb + bdr_rmt.cpc - 1) / bdr_rmt.cpc;
    for (uint32_t i = 0; i < op->nsb; i++) {
        rkey_t key = {0, slot, op->id, op->sb + i};
        rent_t *e = bdr_rtab_find(&bdr_rmt.own, &key);
        if (!e || e->loc < 0 || e->loc >= (int)sizeof asked || asked[e->loc])
            continue;
        asked[e->loc] = 1;
        bdr_net_hdr_t nh = {.type = BDR_NH_RMT_GET};
        nh.a[0] = slot;
        nh.a[1] = k;
        nh.a[2] = (int32_t)op->nsb;
        nh.u[0] = op->id;
        nh.u[1] = op->sb;
        nh.u[3] = bdr_rmt.sbpage;
        bdr_node_send(e->loc, &nh, NULL, 0);
        op->waiting += (int)nch;
    }
}

static void get_finish(int slot, int k);

/* The rank's memory could not be written: what went there is not in the
 * lane, so the whole run is asked for again, into the lane this time
 * (chunks of the first round still on their way land there too). */
static void get_restart(int slot, int k, lop_t *op)
{
    op->addr = 0;
    memset(op->filled, 0, sizeof op->filled);
    get_send(slot, k, op);
    if (!op->waiting)
        get_finish(slot, k);
}

/* A GET whose holders have all answered: what they no longer had was given
 * back before they answered, so it is in our returned file now. */
static void get_finish(int slot, int k)
{
    lop_t *op = &bdr_rmt.lop[slot * BD_RMT_LANES + k];
    char *data = bd_rmt_data(g_m.hdr, (uint32_t)slot, k);
    for (uint32_t i = 0; i < op->nsb; i++) {
        if (op->filled[i])
            continue;
        rkey_t key = {0, slot, op->id, op->sb + i};
        rent_t *e = bdr_rtab_find(&bdr_rmt.own, &key);
        if (!e || e->loc != -1) {
            bdr_master_fail(1,
                            "remote memory: %llu bytes of rank %d's managed memory are missing "
                            "(sbpage %llu of allocation %llu%s%d)",
                            (unsigned long long)bdr_rmt.sbpage, g_m.slaves[slot].world,
                            (unsigned long long)(op->sb + i), (unsigned long long)op->id,
                            e ? ", last stored on node " : ", never stored", e ? e->loc : -1);
            return;
        }
        if (!op->addr) {
            if (read_returned(e->foff, data + (size_t)i * bdr_rmt.sbpage) < 0)
                return;
            continue;
        }
        char *tmp = bdr_net_buf(bdr_rmt.sbpage);
        if (!tmp) {
            bdr_master_fail(1, "master out of memory reading back managed memory");
            return;
        }
        int rc = read_returned(e->foff, tmp);
        int moved = rc == 0 && rank_copy(slot, 1, tmp, op->addr + (uint64_t)i * bdr_rmt.sbpage,
                                         bdr_rmt.sbpage) == 0;
        bdr_net_free_buf(tmp, bdr_rmt.sbpage);
        if (rc < 0)
            return;
        if (!moved) {
            get_restart(slot, k, op);
            return;
        }
    }
    bdr_rmt_stat_add(slot, BD_STAT_MEM_RMT_READ, (uint64_t)op->nsb * bdr_rmt.sbpage);
    /* asked with an address but filled the lane: the rank copies it */
    int in_lane = op->addr == 0 && bd_rmt_lane(g_m.hdr, (uint32_t)slot, k)->addr != 0;
    op->op = 0;
    answer(slot, k, in_lane ? BD_RMT_IN_LANE : 0);
}

static int record(int slot, uint64_t id, uint64_t sb, uint32_t n, int h, uint64_t seq);

/* A PUT of the run in lane k: read from the rank (or the lane) in chunks,
 * each sent to the holder as it is read.  With room for write-behind
 * copies the rank is answered at once; otherwise when every chunk is
 * acknowledged. */
static void lane_put(int slot, int k, lop_t *op, uint64_t len)
{
    char *lane = bd_rmt_data(g_m.hdr, (uint32_t)slot, k);
    int h = pick_holder(len);
    if (h < 0) { /* nobody has room: any older copies are gone, the rank stores it */
        forget(slot, op->id, op->sb, op->nsb, -1);
        bdr_rmt_stat_add(slot, BD_STAT_MEM_RMT_FALLBACK, len);
        op->op = 0;
        answer(slot, k, BD_RMT_REFUSED);
        return;
    }
    /* a short node's budget bounds the copies too: an eighth */
    uint64_t cap = g_m.hdr->job.mem_budget / 8 < WB_MAX ? g_m.hdr->job.mem_budget / 8 : WB_MAX;
    int behind = g_wb_bytes + len <= cap;
    op->holder = h;
    uint64_t cb = (uint64_t)bdr_rmt.cpc * bdr_rmt.sbpage;
    char *bufs[BD_RMT_LANE_BYTES / 4096];
    uint32_t nch = 0;
    /* all of it read first: a rank we cannot read is asked for the lane
     * before anything has left */
    for (uint64_t off = 0; off < len; off += cb, nch++) {
        uint64_t n = len - off < cb ? len - off : cb;
        bufs[nch] = bdr_net_buf(n);
        int rc = bufs[nch] ? 0 : -ENOMEM;
        if (rc == 0 && op->addr)
            rc = rank_copy(slot, 0, bufs[nch], op->addr + off, n);
        else if (rc == 0)
            memcpy(bufs[nch], lane + off, n);
        if (rc < 0) {
            for (uint32_t c = 0; c <= nch; c++) {
                uint64_t m = len - (uint64_t)c * cb < cb ? len - (uint64_t)c * cb : cb;
                bdr_net_free_buf(bufs[c], m);
            }
            op->op = 0;
            if (rc == -ENOMEM) {
                bdr_master_fail(1, "master out of memory sending managed memory to node %d", h);
                return;
            }
            answer(slot, k, BD_RMT_IN_LANE); /* the rank puts it in the lane and asks again */
            return;
        }
    }
    for (uint32_t c = 0; c < nch; c++) {
        uint64_t off = (uint64_t)c * cb, n = len - off < cb ? len - off : cb;
        uint32_t m = (uint32_t)(n / bdr_rmt.sbpage);
        uint64_t seq = ++g_seq;
        if (c == 0)
            op->seq = seq;
        bdr_net_hdr_t nh = {.type = BDR_NH_RMT_PUT};
        nh.a[0] = slot;
        nh.a[1] = k;
        nh.a[2] = (int32_t)m;
        nh.u[0] = op->id;
        nh.u[1] = op->sb + (uint64_t)c * bdr_rmt.cpc;
        nh.u[2] = seq;
        nh.u[3] = bdr_rmt.sbpage;
        g_going[h] += n;
        if (!behind) {
            bdr_node_send_netbuf(h, &nh, bufs[c], n);
            op->waiting++;
            continue;
        }
        wb_t *w = calloc(1, sizeof *w);
        if (!w) {
            bdr_net_free_buf(bufs[c], n);
            bdr_master_fail(1, "master out of memory");
            return;
        }
        /* kept until both the send and the holder's answer are done */
        *w = (wb_t){g_wb, seq, op->id, nh.u[1], slot, h, 2, m, bufs[c]};
        g_wb = w;
        g_wb_bytes += n;
        bdr_node_send_lent(h, &nh, bufs[c], n, wb_unref, w);
        /* from now on the copy is at h (a GET goes there after the PUT) */
        if (record(slot, op->id, nh.u[1], m, h, seq) < 0)
            return;
    }
    if (!behind)
        return; /* the rank waits for the holder's answers */
    op->op = 0;
    answer(slot, k, BD_RMT_STORED);
}

static void lane_request(int slot, int k)
{
    bd_rmt_lane_t *l = bd_rmt_lane(g_m.hdr, (uint32_t)slot, k);
    lop_t *op = &bdr_rmt.lop[slot * BD_RMT_LANES + k];
    memset(op, 0, sizeof *op);
    op->op = l->op;
    op->nsb = l->nsb;
    op->id = l->id;
    op->sb = l->sb;
    op->addr = g_cma_bad[slot] ? 0 : l->addr;
    uint64_t len = (uint64_t)op->nsb * bdr_rmt.sbpage;
    if (op->nsb == 0 || (op->op != BD_RMT_DROP && len > BD_RMT_LANE_BYTES) ||
        l->sbpage != bdr_rmt.sbpage) {
        bd_log_error("remote memory: rank %d asked for %u sbpages of %llu bytes: refused",
                     g_m.slaves[slot].world, op->nsb, (unsigned long long)l->sbpage);
        op->op = 0;
        answer(slot, k, -EINVAL);
        return;
    }
    if (op->op == BD_RMT_DROP) {
        forget(slot, op->id, op->sb, op->nsb, -1);
        op->op = 0;
        answer(slot, k, 0);
    } else if (op->op == BD_RMT_PUT && l->addr && !op->addr) {
        op->op = 0; /* its memory cannot be reached: the rank fills the lane */
        answer(slot, k, BD_RMT_IN_LANE);
    } else if (op->op == BD_RMT_PUT) {
        lane_put(slot, k, op, len);
    } else if (op->op == BD_RMT_GET) {
        lop_t asked = *op; /* op is done with once answered */
        if (!bdr_rmt_ahead_take(slot, k, op)) {
            get_send(slot, k, op);
            if (!op->waiting)
                get_finish(slot, k);
        }
        bdr_rmt_ahead_ask(slot, &asked);
    } else {
        op->op = 0;
        answer(slot, k, -EINVAL);
    }
}

static uint64_t room_for_guests(void);

/* Every 100 ms each master tells the others its room for their data (an
 * ACK of copy 0), so that a node that is short itself is not chosen on an
 * old word: node 1 of remote.room, short too, sent its first runs to node
 * 0, which said nothing yet and refused them. */
static void room_notice(void)
{
    static double last;
    double now = bdr_master_now();
    if (now - last < 0.1 || g_m.stopping)
        return;
    last = now;
    bdr_net_hdr_t h = {.type = BDR_NH_RMT_ACK};
    h.u[4] = room_for_guests();
    /* A holder with room keeps more of the transport's buffers (an eighth
     * of its room, counted in its budget): the PUTs it keeps and the
     * copies they replace come and go in bursts, and each buffer freed
     * and mapped again cost its page faults (net_mpich.c, pool_put). */
    bdr_net_pool_limit(h.u[4] / 8);
    for (int n = 0; n < g_m.nnodes; n++)
        if (n != g_m.node)
            bdr_node_send(n, &h, NULL, 0);
}

void bdr_remote_poll(void)
{
    if (!g_on)
        return;
    bdr_rmt_ahead_expire(0);
    room_notice();
    for (int i = 0; i < g_m.ns; i++) {
        slave_t *s = &g_m.slaves[i];
        if (s->exited)
            continue;
        for (int k = 0; k < BD_RMT_LANES; k++) {
            bd_rmt_lane_t *l = bd_rmt_lane(g_m.hdr, (uint32_t)i, k);
            uint32_t seq = atomic_load_explicit(&l->req_seq, memory_order_acquire);
            if (seq == g_seen[i * BD_RMT_LANES + k])
                continue;
            g_seen[i * BD_RMT_LANES + k] = seq;
            lane_request(i, k);
        }
    }
}

/* ------------------------------------------------------------ holder */

static uint64_t room_for_guests(void)
{
    uint64_t budget = g_m.hdr->job.mem_budget;
    uint64_t total = bdr_memacct_node_resident();
    /* our own ranks come first: what they wait for is theirs, and a
     * sixteenth of the budget stays free for their next loads.  (Nothing
     * at all while any waited made a roomy node refuse, and say it was
     * full, whenever one of its ranks waited a moment for a grant: 6 MiB
     * went to storage in remote.room on a loaded machine.) */
    if (!budget)
        return 0;
    uint64_t keep = total + budget / 16;
    for (int i = 0; i < g_m.ns; i++)
        if (g_m.slaves[i].mem_pending && !g_m.slaves[i].exited)
            keep += g_m.slaves[i].mem_want;
    return budget > keep ? budget - keep : 0;
}

/* A chunk of a run: kept as it came (the message is the copy), or refused. */
static int holder_put(bdr_net_msg_t *nm)
{
    const bdr_net_hdr_t *h = &nm->h;
    uint32_t n = (uint32_t)h->a[2];
    uint64_t sbp = h->u[3], len = (uint64_t)n * sbp;
    bdr_net_hdr_t ack = {.type = BDR_NH_RMT_ACK};
    ack.a[0] = h->a[0];
    ack.a[1] = h->a[1];
    /* a PUT replaces what we hold of the run; refused, it is gone too */
    for (uint32_t i = 0; i < n; i++) {
        rkey_t key = {h->src_node, h->a[0], h->u[0], h->u[1] + i};
        bdr_rtab_del(&g_held, &key);
    }
    int ok = n > 0 && nm->len == len && sbp == bdr_rmt.sbpage && !g_m.stopping &&
             room_for_guests() >= nm->cap && !BD_FAULT_HIT(BD_FAULT_RMT_REFUSE);
    hbuf_t *hb = ok ? calloc(1, sizeof *hb) : NULL;
    if (hb) {
        *hb = (hbuf_t){nm, {h->src_node, h->a[0], h->u[0], h->u[1]}, n, 0, 0};
        g_held_bytes += nm->cap;
    }
    for (uint32_t i = 0; hb && i < n; i++) {
        rkey_t key = {h->src_node, h->a[0], h->u[0], h->u[1] + i};
        rent_t *e = bdr_rtab_get(&g_held, &key);
        if (!e)
            break; /* out of memory: refused; what we took stays until the owner drops it */
        e->data = nm->payload + (size_t)i * sbp;
        e->hb = hb;
        e->seq = h->u[2];
        hb->refs++;
    }
    int kept = hb && hb->refs > 0;
    if (hb && hb->refs < n) {
        ok = 0;
        if (!kept) {
            g_held_bytes -= nm->cap;
            free(hb);
        }
    }
    if (g_held_bytes > g_held_peak)
        g_held_peak = g_held_bytes;
    ack.a[2] = ok && hb;
    ack.a[3] = (int32_t)n;
    ack.u[2] = h->u[2]; /* the copy's sequence number */
    ack.u[4] = room_for_guests();
    bdr_node_send(h->src_node, &ack, NULL, 0);
    return kept;
}

/* Answer a GET in chunks, each with the sbpages of it that we hold.  A
 * chunk ends after bdr_rmt.cpc sbpages, and also where a held chunk
 * starts, so that the next one can be sent from it as it is (a run asked
 * for at another start than it was put would otherwise be copied whole),
 * as long as that makes at most twice the chunks the owner counts on; the
 * first chunk tells it how many more there are (a[4]). */
static void holder_get(const bdr_net_msg_t *nm)
{
    const bdr_net_hdr_t *h = &nm->h;
    uint32_t n = (uint32_t)h->a[2];
    uint64_t sbp = h->u[3];
    if (n == 0 || (uint64_t)n * sbp > BD_RMT_LANE_BYTES || sbp != bdr_rmt.sbpage) {
        bdr_master_fail(1, "remote memory: bad request from node %d", h->src_node);
        return;
    }
    uint32_t cpc = bdr_rmt.cpc, nch = (n + cpc - 1) / cpc;
    rent_t *have[BD_RMT_LANE_BYTES / 4096];
    for (uint32_t i = 0; i < n; i++) {
        rkey_t key = {h->src_node, h->a[0], h->u[0], h->u[1] + i};
        have[i] = bdr_rtab_find(&g_held, &key);
    }
    uint32_t start[BD_RMT_LANE_BYTES / 4096 + 1], np = 0; /* np <= n */
    start[np++] = 0;
    for (uint32_t j = 1, s = 0; j < n; j++) {
        int put_start = have[j] && have[j]->data == have[j]->hb->m->payload;
        if (j - s == cpc || (put_start && np + (n - j + cpc - 1) / cpc <= 2 * nch && np < 2 * nch))
            start[np++] = s = j;
    }
    start[np] = n;
    for (uint32_t c = 0; c < np; c++) {
        uint32_t m = start[c + 1] - start[c];
        rent_t **hv = have + start[c];
        uint64_t mask = 0;
        size_t used = 0;
        for (uint32_t i = 0; i < m; i++)
            if (hv[i]) {
                mask |= 1ull << i;
                used += sbp;
            }
        bdr_net_hdr_t r = {.type = BDR_NH_RMT_DATA};
        r.a[0] = h->a[0];
        r.a[1] = h->a[1];
        r.a[2] = (int32_t)m;
        r.a[3] = h->a[3]; /* ahead: where the owner keeps it */
        r.a[4] = c == 0 ? (int32_t)(np - nch) : 0;
        r.u[1] = h->u[1] + start[c];
        r.u[4] = mask;
        r.u[5] = room_for_guests();
        /* The chunk as it was put (all of it held, from the start of the
         * PUT's message): sent from there, not copied. */
        hbuf_t *hb = hv[0] ? hv[0]->hb : NULL;
        int whole = hb && !hb->lent && hv[0]->data == hb->m->payload && m <= hb->n;
        for (uint32_t i = 1; whole && i < m; i++)
            whole = hv[i] && hv[i]->hb == hb;
        if (whole) {
            hb->lent = 1;
            hb->refs++;
            bdr_node_send_lent(h->src_node, &r, hb->m->payload, used, held_sent, hb);
            continue;
        }
        char *buf = used ? bdr_net_buf(used) : NULL;
        if (used && !buf) {
            bdr_master_fail(1, "master out of memory answering node %d", h->src_node);
            return;
        }
        for (uint32_t i = 0, at = 0; i < m; i++)
            if (hv[i])
                memcpy(buf + (size_t)at++ * sbp, hv[i]->data, sbp);
        bdr_node_send_netbuf(h->src_node, &r, buf, used);
    }
}

static void holder_drop(const bdr_net_msg_t *nm)
{
    const bdr_net_hdr_t *h = &nm->h;
    for (uint32_t i = 0; i < (uint32_t)h->a[2]; i++) {
        rkey_t key = {h->src_node, h->a[0], h->u[0], h->u[1] + i};
        bdr_rtab_del(&g_held, &key);
    }
}

/* Give back every sbpage still held of hb's chunk (then its buffer goes). */
static uint64_t give_back(hbuf_t *hb)
{
    uint64_t cap = hb->m->cap, sent = 0;
    for (uint32_t i = 0; i < hb->n; i++) {
        rkey_t key = hb->k0;
        key.sb += i;
        rent_t *e = bdr_rtab_find(&g_held, &key);
        if (!e || e->hb != hb)
            continue;
        bdr_net_hdr_t r = {.type = BDR_NH_RMT_RETURN};
        r.a[0] = e->k.slot;
        r.u[0] = e->k.id;
        r.u[1] = e->k.sb;
        r.u[2] = e->seq;
        r.u[3] = bdr_rmt.sbpage;
        bdr_node_send(e->k.node, &r, e->data, bdr_rmt.sbpage);
        sent += bdr_rmt.sbpage;
        int last = hb->refs == 1;
        bdr_rtab_del(&g_held, &key);
        if (last)
            break; /* hb is gone */
    }
    g_returning += sent;
    return cap;
}

uint64_t bdr_remote_reclaim(uint64_t need)
{
    if (!g_on)
        return 0;
    bdr_net_trim(); /* kept buffers first: they are only there for speed */
    bdr_rmt_ahead_expire(1);
    uint64_t t = bdr_node_transient_bytes();
    if (g_returning > t)
        g_returning = t; /* what has left since */
    /* write-behind copies are freed as their holders answer */
    uint64_t got = g_returning + g_wb_bytes;
    for (size_t b = 0; b < g_held.nb && got < need; b++)
        while (g_held.b[b] && got < need)
            got += give_back(g_held.b[b]->hb);
    return got;
}

/* ------------------------------------------------------------ owner's answers */

static lop_t *lop_of(const bdr_net_hdr_t *h, uint32_t op)
{
    int slot = h->a[0], k = h->a[1];
    if (slot < 0 || slot >= g_m.nslots || k < 0 || k >= BD_RMT_LANES ||
        bdr_rmt.lop[slot * BD_RMT_LANES + k].op != op) {
        bdr_master_fail(1, "remote memory: unexpected answer from node %d", h->src_node);
        return NULL;
    }
    return &bdr_rmt.lop[slot * BD_RMT_LANES + k];
}

/* Our copies of [sb, sb+n) are now at holder h, as copy seq; copies
 * elsewhere are dropped. */
static int record(int slot, uint64_t id, uint64_t sb, uint32_t n, int h, uint64_t seq)
{
    bdr_rmt_ahead_stale(slot, id, sb, n);
    for (uint32_t i = 0; i < n; i++) {
        rkey_t key = {0, slot, id, sb + i};
        rent_t *e = bdr_rtab_find(&bdr_rmt.own, &key);
        if (e && e->loc >= 0 && e->loc != h)
            send_drop(e->loc, slot, id, sb + i, 1);
        if (e && e->loc >= 0)
            g_at[e->loc] -= bdr_rmt.sbpage;
        if (!e)
            e = bdr_rtab_get(&bdr_rmt.own, &key);
        if (!e) {
            bdr_master_fail(1, "master out of memory recording remote memory");
            return -1;
        }
        e->loc = h;
        e->seq = seq;
        g_at[h] += bdr_rmt.sbpage;
    }
    return 0;
}

static int write_returned(rent_t *e, const char *data, int from);

/* The holder answered a write-behind PUT: stored, or refused (then its
 * copies, where still the current ones, go to our returned file). */
static int wb_answer(const bdr_net_msg_t *nm)
{
    wb_t **pp = &g_wb;
    while (*pp && (*pp)->seq != nm->h.u[2])
        pp = &(*pp)->next;
    wb_t *w = *pp;
    if (!w)
        return 0;
    *pp = w->next;
    uint64_t len = (uint64_t)w->nsb * bdr_rmt.sbpage;
    if (nm->h.a[2]) {
        bdr_rmt_stat_add(w->slot, BD_STAT_MEM_RMT_STORED, len);
    } else {
        g_full_until[w->holder] = bdr_master_now() + 0.2;
        bdr_rmt_stat_add(w->slot, BD_STAT_MEM_RMT_FALLBACK, len);
        for (uint32_t i = 0; i < w->nsb; i++) {
            rkey_t key = {0, w->slot, w->id, w->sb + i};
            rent_t *e = bdr_rtab_find(&bdr_rmt.own, &key);
            if (e && e->loc == w->holder && e->seq == w->seq &&
                write_returned(e, w->data + (size_t)i * bdr_rmt.sbpage, w->holder) < 0)
                break;
        }
    }
    wb_unref(w);
    return 1;
}

static void owner_ack(const bdr_net_msg_t *nm)
{
    int from = nm->h.src_node;
    uint64_t n = (uint64_t)(uint32_t)nm->h.a[3] * bdr_rmt.sbpage;
    g_going[from] = g_going[from] > n ? g_going[from] - n : 0;
    g_room[from] = nm->h.u[4];
    g_room_at[from] = bdr_master_now();
    if (nm->h.u[2] == 0)
        return; /* only its room (room_notice) */
    if (wb_answer(nm))
        return;
    lop_t *op = lop_of(&nm->h, BD_RMT_PUT);
    if (!op)
        return;
    int slot = nm->h.a[0], k = nm->h.a[1];
    uint64_t len = (uint64_t)op->nsb * bdr_rmt.sbpage;
    if (!nm->h.a[2])
        op->refused = 1;
    if (--op->waiting > 0)
        return;
    if (op->refused) {
        /* refused (in part): our older copies of the run go, and what the
         * holder took of this one */
        forget(slot, op->id, op->sb, op->nsb, op->holder);
        send_drop(op->holder, slot, op->id, op->sb, op->nsb);
        g_full_until[op->holder] = bdr_master_now() + 0.2;
        bdr_rmt_stat_add(slot, BD_STAT_MEM_RMT_FALLBACK, len);
        op->op = 0;
        answer(slot, k, BD_RMT_REFUSED);
        return;
    }
    for (uint32_t c = 0; c * bdr_rmt.cpc < op->nsb; c++) {
        uint32_t m =
            op->nsb - c * bdr_rmt.cpc < bdr_rmt.cpc ? op->nsb - c * bdr_rmt.cpc : bdr_rmt.cpc;
        if (record(slot, op->id, op->sb + (uint64_t)c * bdr_rmt.cpc, m, op->holder, op->seq + c) <
            0)
            return;
    }
    bdr_rmt_stat_add(slot, BD_STAT_MEM_RMT_STORED, len);
    op->op = 0;
    answer(slot, k, BD_RMT_STORED);
}

/* A chunk of the answer to a GET: into the rank's buffer, or the lane. */
void bdr_rmt_owner_data(bdr_net_msg_t *nm)
{
    lop_t *op = lop_of(&nm->h, BD_RMT_GET);
    if (!op)
        return;
    int slot = nm->h.a[0], k = nm->h.a[1], from = nm->h.src_node;
    uint32_t m = (uint32_t)nm->h.a[2];
    uint64_t sb = nm->h.u[1], mask = nm->h.u[4];
    g_room[from] = nm->h.u[5];
    g_room_at[from] = bdr_master_now();
    int more = nm->h.a[4]; /* the holder's answer has that many chunks more than counted */
    if (m == 0 || m > 64 || sb < op->sb || sb + m > op->sb + op->nsb || (m < 64 && (mask >> m)) ||
        nm->len != (size_t)__builtin_popcountll(mask) * bdr_rmt.sbpage || more < 0 ||
        more > (int)op->nsb) {
        bdr_master_fail(1, "remote memory: malformed answer from node %d", from);
        return;
    }
    op->waiting += more;
    char *lane = bd_rmt_data(g_m.hdr, (uint32_t)slot, k);
    const char *src = nm->payload;
    for (uint32_t i = 0; i < m;) {
        /* a stretch of sbpages this holder has and still holds for us */
        uint32_t j = i;
        while (j < m && (mask >> j & 1)) {
            rkey_t key = {0, slot, op->id, sb + j};
            rent_t *e = bdr_rtab_find(&bdr_rmt.own, &key);
            if (!e || e->loc != from)
                break;
            j++;
        }
        if (j > i) {
            uint64_t at = (sb + i - op->sb) * bdr_rmt.sbpage,
                     n = (uint64_t)(j - i) * bdr_rmt.sbpage;
            if (op->addr && rank_copy(slot, 1, (char *)src, op->addr + at, n) < 0)
                get_restart(slot, k, op);
            if (!op->addr)
                memcpy(lane + at, src, n);
            memset(op->filled + (sb + i - op->sb), 1, j - i);
            src += n;
            i = j;
        } else {
            if (mask >> i & 1)
                src += bdr_rmt.sbpage; /* held there, but no longer ours there */
            i++;
        }
    }
    if (--op->waiting == 0)
        get_finish(slot, k);
}

static void owner_return(const bdr_net_msg_t *nm)
{
    const bdr_net_hdr_t *h = &nm->h;
    rkey_t key = {0, h->a[0], h->u[0], h->u[1]};
    rent_t *e = bdr_rtab_find(&bdr_rmt.own, &key);
    if (!e || e->loc != h->src_node || e->seq != h->u[2] || nm->len != bdr_rmt.sbpage)
        return; /* replaced or dropped since */
    if (write_returned(e, nm->payload, h->src_node) == 0)
        bdr_rmt_stat_add(h->a[0], BD_STAT_MEM_RMT_RETURNED, bdr_rmt.sbpage);
}

/* Our copy e (one sbpage, data), which node `from` no longer holds, goes to
 * the returned file. */
static int write_returned(rent_t *e, const char *data, int from)
{
    if (g_ret_fd < 0) {
        char path[BD_PATH_MAX + 64];
        snprintf(path, sizeof path, "%s/remote-returned", g_m.jobdir);
        g_ret_fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (g_ret_fd < 0) {
            bdr_master_fail(1, "cannot create %s for memory node %d gave back: %s", path, from,
                            strerror(errno));
            return -1;
        }
    }
    int rc = bd_pwrite_full(g_ret_fd, data, bdr_rmt.sbpage, g_ret_end);
    if (rc < 0) {
        bdr_master_fail(1, "cannot write %zu bytes of managed memory node %d gave back to %s: %s",
                        bdr_rmt.sbpage, from, g_m.jobdir, strerror(-rc));
        return -1;
    }
    g_at[e->loc] -= bdr_rmt.sbpage;
    e->loc = -1;
    e->foff = g_ret_end;
    g_ret_end += bdr_rmt.sbpage;
    return 0;
}

int bdr_remote_net(bdr_net_msg_t *nm)
{
    if (!g_on) {
        bdr_master_fail(1, "remote memory message from node %d, but -mem-remote is off here",
                        nm->h.src_node);
        return 0;
    }
    switch (nm->h.type) {
    case BDR_NH_RMT_PUT: return holder_put(nm);
    case BDR_NH_RMT_GET: holder_get(nm); break;
    case BDR_NH_RMT_DROP: holder_drop(nm); break;
    case BDR_NH_RMT_ACK: owner_ack(nm); break;
    case BDR_NH_RMT_DATA:
        if (nm->h.a[3])
            return bdr_rmt_ahead_data(nm);
        bdr_rmt_owner_data(nm);
        break;
    case BDR_NH_RMT_RETURN: owner_return(nm); break;
    }
    return 0;
}

/* Node `node`'s ranks are all gone: what it stored here is no longer wanted. */
void bdr_remote_node_done(int node)
{
    if (!g_on)
        return;
    for (size_t b = 0; b < g_held.nb; b++)
        for (rent_t **p = &g_held.b[b]; *p;) {
            rent_t *e = *p;
            if (e->k.node != node) {
                p = &e->next;
                continue;
            }
            *p = e->next;
            bdr_remote_hb_unref(e->hb);
            free(e);
            g_held.n--;
        }
}

/* The job is ending with a failure: if other nodes hold our ranks' data,
 * say which, since the job cannot go on without them. */
void bdr_remote_lost(void)
{
    if (!g_on)
        return;
    for (int n = 0; n < g_m.nnodes; n++)
        if (g_at[n])
            bd_log_error("remote memory: node %d held %llu bytes of node %d's ranks' managed "
                         "memory; the job cannot go on without them",
                         n, (unsigned long long)g_at[n], g_m.node);
}

void bdr_remote_fini(void)
{
    if (g_ret_fd >= 0)
        close(g_ret_fd);
    g_ret_fd = -1;
}

uint64_t bdr_remote_held_peak(void) { return g_held_peak; }
