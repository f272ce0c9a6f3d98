/* The ranks' mailboxes on the master's side (bd_mbox.h).  The master is not
 * on the path of a message between two ranks of the node; it
 *  - blocks a rank that waits for its mailbox to move (BD_REQ_P2P_WAIT) and
 *    makes it runnable when it does;
 *  - empties the ring of a rank that waits in a request (so consumes
 *    nothing) when a producer needs room: the entries move, in order, to
 *    the rank's overflow list, which the rank fetches before it reads its
 *    ring again (BD_REQ_MBOX_FETCH);
 *  - produces itself: messages from other nodes and acknowledgements of
 *    synchronous sends to them.  When the ring of a running rank is full,
 *    they wait in the rank's inbound list (newer than everything in the
 *    ring), and move into the ring as room appears.
 * Ordering: the overflow holds the oldest entries, then the ring, then the
 * inbound list; every move keeps that order. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bd_iowatch.h"
#include "bd_fs.h"
#include "bd_mbox.h"
#include "coll.h"
#include "master.h"
#include "mpi.h"

static uint64_t g_master_file_seq;

static ment_t *ment_new(const bd_mentry_t *e, const void *data, uint64_t inl)
{
    ment_t *m = malloc(sizeof *m + inl);
    if (!m) {
        bdr_master_fail(1, "master out of memory holding a %llu-byte message",
                        (unsigned long long)inl);
        return NULL;
    }
    m->next = NULL;
    memcpy(&m->e, e, sizeof m->e);
    if (inl)
        memcpy(m->data, data, inl);
    g_m.bytes_buffered += inl;
    if (g_m.bytes_buffered > g_m.peak_buffered)
        g_m.peak_buffered = g_m.bytes_buffered;
    return m;
}

static uint64_t ment_inline(const bd_mentry_t *e)
{
    return e->kind == BD_ME_MSG && !(e->flags & (BD_SEND_FILE | BD_ME_CMA | BD_ME_PULL)) ? e->nbytes
                                                                                         : 0;
}

static void ment_free(ment_t *m, int drop)
{
    g_m.bytes_buffered -= ment_inline(&m->e);
    if (drop && (m->e.flags & BD_SEND_FILE)) {
        char path[BD_PATH_MAX + 64];
        bd_spill_path(path, sizeof path, g_m.jobdir, m->e.src_world, m->e.file_num);
        bd_mbox_drop_file(g_m.hdr, &m->e, path);
    }
    free(m);
}

static void list_add(ment_t **head, ment_t **tail, ment_t *m)
{
    if (*tail)
        (*tail)->next = m;
    else
        *head = m;
    *tail = m;
}

void bdr_mbox_attach(slave_t *s)
{
    s->mb = bd_slot_mbox(g_m.hdr, s->slot);
    bd_mbox_init(s->mb, g_m.hdr->mbox_ring);
}

/* The owner consumes nothing until it is answered: the master may take
 * its entries (a lent rank serving RMA counts as running). */
static int owner_away(const slave_t *d) { return d->state != SL_RUNNING; }

static void publish_overflow(slave_t *d)
{
    atomic_store_explicit(&d->mb->overflow, d->novf, memory_order_release);
}

static int to_file(bd_mentry_t *e, const void *data);

/* A single-copy message taken from the ring of a rank that waits: read it
 * from its sender now (we are the senders' parent, so may) and keep it as
 * an ordinary buffered message. */
static ment_t *take_cma(const bd_mentry_t *e)
{
    slave_t *snd = bdr_master_slave_by_world(e->src_world);
    bd_mentry_t copy;
    memcpy(&copy, e, sizeof copy);
    copy.flags &= ~BD_ME_CMA;
    char *buf = malloc(e->nbytes ? e->nbytes : 1);
    if (!snd || !buf) {
        free(buf);
        bdr_master_fail(1, "master cannot take a %llu-byte message of rank %d",
                        (unsigned long long)e->nbytes, e->src_world);
        return NULL;
    }
    for (uint64_t done = 0; done < e->nbytes;) {
        struct iovec l = {buf + done, e->nbytes - done};
        struct iovec r = {(void *)(uintptr_t)(e->file_num + done), e->nbytes - done};
        ssize_t k = process_vm_readv(snd->pid, &l, 1, &r, 1, 0);
        if (k <= 0) {
            free(buf);
            bdr_master_fail(1, "cannot read a %llu-byte message from the memory of rank %d: %s",
                            (unsigned long long)e->nbytes, e->src_world,
                            k < 0 ? strerror(errno) : "nothing read");
            return NULL;
        }
        done += (uint64_t)k;
    }
    ment_t *m = NULL;
    if (e->nbytes <= g_m.hdr->eager || to_file(&copy, buf) == 0)
        m = ment_new(&copy, buf, ment_inline(&copy));
    free(buf);
    /* The sender sees the read done when the ring's tail passes the entry
     * (drain_ring moves it after the batch). */
    return m;
}

/* An entry taken from the ring of a rank that waits, kept for it: a
 * message inline above the eager limit (a rank sends up to 1/8 of a ring
 * inline to a rank that reads soon) goes to a spill file, since only
 * messages up to -msg-threshold are held in memory. */
static ment_t *take_inline(const bd_mentry_t *e)
{
    if (ment_inline(e) <= g_m.hdr->eager)
        return ment_new(e, bd_mentry_data((bd_mentry_t *)e), ment_inline(e));
    bd_mentry_t copy;
    memcpy(&copy, e, sizeof copy);
    if (to_file(&copy, bd_mentry_data((bd_mentry_t *)e)) < 0)
        return NULL;
    return ment_new(&copy, NULL, 0);
}

/* Move d's ring (d away) to the end of its overflow list. */
static void drain_ring(slave_t *d)
{
    bd_mbox_t *mb = d->mb;
    uint64_t tail = atomic_load_explicit(&mb->tail, memory_order_relaxed), pos = tail;
    bd_mentry_t *e;
    while ((e = bd_mbox_peek(mb, &pos))) {
        if (bd_mbox_take(e)) {
            ment_t *m = e->flags & BD_ME_CMA ? take_cma(e) : take_inline(e);
            if (!m)
                return;
            list_add(&d->ovf_head, &d->ovf_tail, m);
            d->novf++;
        }
        bd_mbox_advance(mb, &pos, e);
    }
    if (pos != tail) {
        bd_mbox_consumed(mb, pos);
        publish_overflow(d);
    }
}

/* Into the ring if it has room, else 0. */
static int ring_put(slave_t *d, const bd_mentry_t *e, const void *data)
{
    bd_mbox_lock(d->mb);
    int rc = bd_mbox_append(d->mb, e, data, ment_inline(e), NULL, NULL);
    bd_mbox_unlock(d->mb);
    return rc == 0;
}

static void notify(slave_t *d)
{
    bd_mbox_notify(d->mb);
    bdr_sched_poke(d);
}

/* Move d's inbound list towards it: all of it behind the overflow when d
 * is away, else into the ring as far as there is room. */
static void flush_inbound(slave_t *d)
{
    int moved = 0;
    if (owner_away(d)) {
        if (d->pin_head)
            drain_ring(d);
        while (d->pin_head) {
            ment_t *m = d->pin_head;
            d->pin_head = m->next;
            m->next = NULL;
            list_add(&d->ovf_head, &d->ovf_tail, m);
            d->novf++;
            moved = 1;
        }
        d->pin_tail = NULL;
        if (moved)
            publish_overflow(d);
    } else {
        while (d->pin_head && ring_put(d, &d->pin_head->e, d->pin_head->data)) {
            ment_t *m = d->pin_head;
            d->pin_head = m->next;
            if (!d->pin_head)
                d->pin_tail = NULL;
            ment_free(m, 0);
            moved = 1;
        }
        if (d->pin_head)
            atomic_store_explicit(&d->mb->room_wanted, 1, memory_order_seq_cst);
    }
    if (moved)
        notify(d);
}

/* A message too large for the ring inline goes to a spill file of ours
 * (numbers with the top bit set never clash with the ranks' own). */
static int to_file(bd_mentry_t *e, const void *data)
{
    char path[BD_PATH_MAX + 64];
    if (bdr_spill_charge(e->nbytes, e->src_world, -1, "a message") < 0)
        return -1;
    e->file_num = (1ull << 63) | ++g_master_file_seq;
    bd_spill_path(path, sizeof path, g_m.jobdir, e->src_world, e->file_num);
    int fd = BD_FAULT_SYS(BD_FAULT_SPILL_OPEN)
                 ?: open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    int rc = fd < 0 ? -errno : BD_IO_NEG(BD_FAULT_SPILL_WRITE, bd_write_full(fd, data, e->nbytes));
    if (rc == 0) { /* the checksums the reader checks (bd_fs.h) */
        bd_fs_ck_t ck;
        bd_fs_ck_init(&ck);
        bd_fs_ck_add(&ck, data, e->nbytes);
        rc = bd_fs_ck_write(&ck, fd, e->nbytes);
        bd_fs_ck_free(&ck);
    }
    if (fd >= 0)
        close(fd);
    if (rc < 0) {
        bd_spill_uncharge(g_m.hdr, e->nbytes);
        bdr_master_fail(1, "cannot write a %llu-byte message to %s: %s",
                        (unsigned long long)e->nbytes, path, strerror(-rc));
        return -1;
    }
    e->flags |= BD_SEND_FILE;
    return 0;
}

void bdr_mbox_push(slave_t *d, const bd_mentry_t *proto, const void *data)
{
    bd_mentry_t e;
    memcpy(&e, proto, sizeof e);
    if (d->exited || atomic_load_explicit(&d->mb->dead, memory_order_relaxed)) {
        if (e.flags & BD_SEND_FILE) {
            char path[BD_PATH_MAX + 64];
            bd_spill_path(path, sizeof path, g_m.jobdir, e.src_world, e.file_num);
            bd_mbox_drop_file(g_m.hdr, &e, path);
        }
        return;
    }
    if (ment_inline(&e) > g_m.hdr->eager && to_file(&e, data) < 0)
        return;
    if (!d->pin_head && !d->novf && ring_put(d, &e, data)) {
        notify(d);
        return;
    }
    ment_t *m = ment_new(&e, data, ment_inline(&e));
    if (!m)
        return;
    list_add(&d->pin_head, &d->pin_tail, m);
    flush_inbound(d);
}

void bdr_mbox_poll(void)
{
    for (int i = 0; i < g_m.ns; i++) {
        slave_t *s = &g_m.slaves[i];
        if (s->pin_head && !s->exited)
            flush_inbound(s);
    }
}

/* A COLL_WAIT, COLL_SMALL, COLL_WAITANY or blocking COLL_TAKE with BD_COLL_WATCH
 * whose mailbox moved (bd_ipc.h). */
int bdr_mbox_watch_moved(slave_t *s)
{
    const bd_req_t *r = &s->slot->req;
    return (r->code == BD_REQ_COLL_WAIT || r->code == BD_REQ_COLL_SMALL ||
            r->code == BD_REQ_COLL_WAITANY || (r->code == BD_REQ_COLL_TAKE && r->arg[0] <= 1)) &&
           (r->flags & BD_COLL_WATCH) &&
           (atomic_load_explicit(&s->mb->event_seq, memory_order_acquire) != (uint32_t)r->arg[7] ||
            s->novf);
}

int bdr_mbox_ready(slave_t *s)
{
    if (s->blk == BLK_COLL)
        return bdr_mbox_watch_moved(s);
    if (s->blk == BLK_MBOX)
        return atomic_load_explicit(&s->mb->event_seq, memory_order_acquire) != s->wait_seen ||
               s->novf || (s->poll_until > 0 && bdr_master_now() >= s->poll_until);
    if (s->blk == BLK_ROOM) {
        slave_t *d = bdr_master_slave_by_world(s->room_dst);
        if (!d || d->exited || atomic_load_explicit(&d->mb->dead, memory_order_relaxed))
            return 1;
        if (owner_away(d)) {
            drain_ring(d);
            return 1;
        }
        return bd_mbox_room(d->mb) >= s->room_need;
    }
    return 0;
}

/* ---------------------------------------------------------------- requests */

double bdr_mbox_poll_wait_s(void)
{
    double first = -1, now = 0;
    for (int i = 0; i < g_m.ns; i++) {
        slave_t *s = &g_m.slaves[i];
        if (s->state != SL_BLOCKED || s->blk != BLK_MBOX || s->poll_until <= 0)
            continue;
        if (now == 0)
            now = bdr_master_now();
        double w = s->poll_until > now ? s->poll_until - now : 0;
        if (first < 0 || w < first)
            first = w;
    }
    return first;
}

void bdr_mbox_req_wait(slave_t *s, const bd_req_t *r)
{
    s->wait_seen = (uint32_t)r->arg[0];
    /* a poll loop sleeps a bounded time (mt.c bdl_p2p_poll_failed_remote) */
    s->poll_until = r->arg[1] == BD_WAIT_POLL && r->arg[2] > 0
                        ? bdr_master_now() + (double)r->arg[2] * 1e-9
                        : 0;
    if (atomic_load_explicit(&s->mb->event_seq, memory_order_acquire) != s->wait_seen || s->novf) {
        bdr_sched_respond(s);
        return;
    }
    bdr_sched_block(s, BLK_MBOX);
}

void bdr_mbox_req_full(slave_t *s, const bd_req_t *r)
{
    slave_t *d = bdr_master_slave_by_world(r->peer);
    if (!d) {
        bdr_master_fail(1, "rank %d waits for room in the mailbox of rank %d, not on this node",
                        s->world, r->peer);
        return;
    }
    s->room_dst = r->peer;
    s->room_need = (uint64_t)r->arg[0];
    s->blk = BLK_ROOM;
    int ready = bdr_mbox_ready(s);
    s->blk = BLK_NONE;
    if (ready) {
        bdr_sched_respond(s);
        return;
    }
    atomic_store_explicit(&d->mb->room_wanted, 1, memory_order_seq_cst);
    /* It may have made room since it last looked. */
    if (bd_mbox_room(d->mb) >= s->room_need) {
        bdr_sched_respond(s);
        return;
    }
    bdr_sched_block(s, BLK_ROOM);
}

void bdr_mbox_req_fetch(slave_t *s, const bd_req_t *r)
{
    (void)r;
    char *p = s->win;
    uint64_t used = 0;
    int64_t n = 0;
    while (s->ovf_head) {
        ment_t *m = s->ovf_head;
        uint64_t sz = bd_mentry_size(ment_inline(&m->e));
        if (used + sz > g_m.hdr->window)
            break;
        bd_mentry_t *e = (bd_mentry_t *)(p + used);
        memcpy(e, &m->e, sizeof *e);
        e->size = (uint32_t)sz;
        memcpy(bd_mentry_data(e), m->data, ment_inline(&m->e));
        used += sz;
        n++;
        s->ovf_head = m->next;
        if (!s->ovf_head)
            s->ovf_tail = NULL;
        s->novf--;
        ment_free(m, 0);
    }
    publish_overflow(s);
    s->slot->resp.arg[0] = n;
    s->slot->resp.arg[1] = s->novf != 0;
    bdr_sched_respond(s);
}

/* The entry of (src_world, send_id) out of a list of d's, or NULL. */
static ment_t *list_cancel(ment_t **head, ment_t **tail, int src_world, uint64_t send_id)
{
    for (ment_t **pp = head, *prev = NULL; *pp; prev = *pp, pp = &(*pp)->next) {
        ment_t *m = *pp;
        if (m->e.kind != BD_ME_MSG || m->e.src_world != src_world || m->e.send_id != send_id)
            continue;
        *pp = m->next;
        if (*tail == m)
            *tail = prev;
        m->next = NULL;
        return m;
    }
    return NULL;
}

static int mbox_cancel(slave_t *d, int src_world, uint64_t send_id)
{
    ment_t *m = list_cancel(&d->ovf_head, &d->ovf_tail, src_world, send_id);
    if (m) {
        d->novf--;
        publish_overflow(d);
        ment_free(m, 1);
        return 1;
    }
    if ((m = list_cancel(&d->pin_head, &d->pin_tail, src_world, send_id))) {
        ment_free(m, 1);
        return 1;
    }
    if (!send_id || !d->mb)
        return 0;
    bd_mentry_t e;
    int got;
    for (;;) {
        bd_mbox_lock(d->mb);
        got = bd_mbox_cancel(d->mb, src_world, send_id, &e);
        bd_mbox_unlock(d->mb);
        if (got >= 0)
            break;
            /* its owner is taking it: in a moment it is in the table below */
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
    if (got) {
        if (e.flags & BD_SEND_FILE) {
            char path[BD_PATH_MAX + 64];
            bd_spill_path(path, sizeof path, g_m.jobdir, e.src_world, e.file_num);
            bd_mbox_drop_file(g_m.hdr, &e, path);
        }
        return 1;
    }
    /* Drained by its owner, not matched yet: the owner drops it. */
    return bd_mbox_unexp_cancel(d->mb, src_world, send_id);
}

int bdr_mbox_cancel(slave_t *d, int src_world, uint64_t send_id)
{
    if (!mbox_cancel(d, src_world, send_id))
        return 0;
    /* a message from another node whose data waits to be pulled */
    bdr_direct_drop(src_world, send_id);
    return 1;
}

void bdr_mbox_req_cancel(slave_t *s, const bd_req_t *r)
{
    slave_t *d = bdr_master_slave_by_world(r->peer);
    s->slot->resp.flag = 0;
    if (!d && r->peer >= 0 && bdr_node_of_world(r->peer) != g_m.node) {
        bdr_node_cancel(s, r->peer, r->rid); /* answered when that node replies */
        return;
    }
    if (d) {
        /* the ring and the table the rank looked at itself */
        ment_t *m = list_cancel(&d->ovf_head, &d->ovf_tail, s->world, r->rid);
        if (m) {
            d->novf--;
            publish_overflow(d);
            ment_free(m, 1);
            s->slot->resp.flag = 1;
        }
    }
    bdr_sched_respond(s);
}

void bdr_mbox_req_sync_ack(slave_t *s, const bd_req_t *r)
{
    if (bdr_master_slave_by_world(r->peer)) {
        bdr_master_fail(1, "rank %d acknowledged through the master a send of rank %d of its node",
                        s->world, r->peer);
        return;
    }
    bdr_node_sync_matched(r->peer, (uint64_t)r->arg[0]);
    bdr_sched_respond(s);
}

/* ---------------------------------------------------------------- idle pages */

/* Give back the pages of the shared-memory file in [lo, hi) (byte offsets,
 * rounded inwards to whole pages): they read as zeros when touched again. */
static void punch(uint64_t lo, uint64_t hi)
{
    lo = (lo + 4095) & ~4095ull;
    hi &= ~4095ull;
    /* A failure (a kernel without hole punching in memfds) only leaves the
     * pages resident, as they were. */
    if (lo < hi)
        (void)fallocate(g_m.shm_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)lo,
                        (off_t)(hi - lo));
}

/* Whether s, waiting in a request, has pages that hold nothing to give
 * back.  The window: only the slave's request (which it wrote before
 * asking) and our answers to it are ever in it, so while it waits in a
 * request whose data is all in the first page, the rest holds nothing.
 * The ring: what lies behind tail has been consumed, and only consuming
 * makes more of it (appends go ahead of tail). */
static int idle_pages(const slave_t *s)
{
    if (!s->mb || s->exited || (s->state != SL_BLOCKED && s->state != SL_RUNNABLE))
        return 0;
    return (s->win_dirty && bdr_req_win_page(&s->slot->req)) ||
           atomic_load_explicit(&s->mb->tail, memory_order_relaxed) != s->ring_idle_tail;
}

/* The pages of s's ring outside [tail, head); s consumes nothing now. */
static void give_back_ring(slave_t *s)
{
    /* Producers append under the ring's lock, which we hold, and we are
     * its only consumer while its owner waits (owner_away), so head and
     * tail stay put.  Outside [tail, head) everything has been consumed:
     * every consumer is done with an entry before tail passes it
     * (bdl_p2p_drain, drain_ring), and a sender that rewrites its entry in
     * place (BD_ME_BUSY) keeps it ahead of tail.  The page the next entry
     * goes to is kept (64 bytes past head). */
    bd_mbox_t *mb = s->mb;
    bd_mbox_lock(mb);
    uint64_t head = atomic_load_explicit(&mb->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&mb->tail, memory_order_acquire);
    uint64_t size = mb->size, ring = (uint64_t)(bd_mbox_ring(mb) - (char *)g_m.hdr);
    /* In bytes ever produced: free is [head + 64 - size, tail).  Only what
     * was consumed since the last time can be resident there (the rest was
     * given back then), from the start of the page the tail was in (not
     * back across the ring's start: that page holds the header). */
    int64_t t = (int64_t)tail, sz = (int64_t)size, lo = (int64_t)s->ring_idle_tail;
    if (lo < t - sz)
        lo = t - sz;
    int64_t off = lo & (sz - 1), back = (int64_t)((ring + (uint64_t)off) & 4095);
    lo -= back < off ? back : off;
    if (lo < (int64_t)head + BD_MENTRY_ALIGN - sz)
        lo = (int64_t)head + BD_MENTRY_ALIGN - sz;
    if (lo < t) {
        uint64_t a = (uint64_t)lo & (size - 1), len = (uint64_t)(t - lo);
        punch(ring + a, ring + (a + len < size ? a + len : size));
        if (a + len > size)
            punch(ring, ring + (a + len - size));
    }
    s->ring_idle_tail = tail;
    bd_mbox_unlock(mb);
}

static void give_back(slave_t *s)
{
    if (s->win_dirty && bdr_req_win_page(&s->slot->req)) {
        uint64_t base = (uint64_t)((char *)s->win - (char *)g_m.hdr);
        punch(base + 4096, base + g_m.hdr->window);
        s->win_dirty = 0;
    }
    give_back_ring(s);
}

static void idle_unlink(slave_t *s);

void bdr_mbox_exited(slave_t *s)
{
    /* out of the queue of bdr_mbox_stopped: a spawned rank's slot is reset
     * whole (spawn.c slot_reset) */
    if (s->idle_queued)
        idle_unlink(s);
    /* Nobody uses its window again (a spawned rank that takes the slot
     * later starts with its window as it finds it), nor what its ring
     * holds outside [tail, head). */
    if (!s->mb)
        return;
    uint64_t base = (uint64_t)((char *)s->win - (char *)g_m.hdr);
    punch(base, base + g_m.hdr->window);
    s->win_dirty = 0;
    give_back_ring(s);
}

static void idle_unlink(slave_t *s)
{
    if (s->idle_prev)
        s->idle_prev->idle_next = s->idle_next;
    else
        g_m.idle_head = s->idle_next;
    if (s->idle_next)
        s->idle_next->idle_prev = s->idle_prev;
    else
        g_m.idle_tail = s->idle_prev;
    s->idle_prev = s->idle_next = NULL;
    s->idle_queued = 0;
    g_m.nidle--;
}

static void idle_push(slave_t *s)
{
    s->idle_prev = g_m.idle_tail;
    s->idle_next = NULL;
    if (g_m.idle_tail)
        g_m.idle_tail->idle_next = s;
    else
        g_m.idle_head = s;
    g_m.idle_tail = s;
    s->idle_since = bdr_master_now();
    s->idle_queued = 1;
    g_m.nidle++;
}

#define IDLE_GIVE_BACK_S 0.02

void bdr_mbox_stopped(slave_t *s)
{
    /* Pages of the shared-memory file stay resident once touched, and are
     * in no rank's accounted memory: a 256 KiB window and a 256 KiB ring a
     * rank, all of it after a few collectives or a few thousand messages,
     * where the budget allows 512 KiB a rank beyond -mem for everything not
     * accounted (issue 13; docs/performance.md, "Idle ranks' shared
     * pages").  So under a budget, the ranks that stopped running last,
     * -nr + 2 of them, keep theirs (they likely run next: two ranks that
     * exchange in turns touch them again at once), and the others' are
     * given back.  It costs when ranks take turns at a collective: a punch
     * of a whole window here about 0.15 ms, faulting it back 0.5 ms.
     * Without a budget nothing is given back. */
    if (!g_m.hdr->job.mem_budget)
        return;
    /* A queue, not a scan of every rank at every stop: a scan read two
     * cache lines of shared memory a rank, a few microseconds at 32 ranks,
     * which a ping-pong at -nr 1 pays at every message. */
    if (s->idle_queued)
        idle_unlink(s);
    if (idle_pages(s))
        idle_push(s);
    /* Only ranks stopped for IDLE_GIVE_BACK_S: ranks that take turns at
     * small collectives (an 8-byte Allreduce loop at -ns 32 -nr 1: each
     * stops every ~0.6 ms) would otherwise pay a punch, empty or not, at
     * every turn (that loop ran 1.2-2.4x slower); the pages of ranks that
     * wait longer, as in an out-of-core iteration, still go back. */
    double now = g_m.nidle > g_m.nr + 2 ? bdr_master_now() : 0;
    while (g_m.nidle > g_m.nr + 2 && now - g_m.idle_head->idle_since >= IDLE_GIVE_BACK_S) {
        slave_t *old = g_m.idle_head;
        idle_unlink(old);
        /* running again (it is queued anew when it stops), or exited */
        if (idle_pages(old))
            give_back(old);
    }
}

/* s finalized or exited: producers drop what they would send it. */
void bdr_mbox_close(slave_t *s)
{
    if (!s->mb)
        return;
    bd_mbox_lock(s->mb);
    atomic_store_explicit(&s->mb->dead, 1, memory_order_relaxed);
    bd_mbox_unlock(s->mb);
    while (s->ovf_head) {
        ment_t *m = s->ovf_head;
        s->ovf_head = m->next;
        ment_free(m, 1);
    }
    s->ovf_tail = NULL;
    s->novf = 0;
    while (s->pin_head) {
        ment_t *m = s->pin_head;
        s->pin_head = m->next;
        ment_free(m, 1);
    }
    s->pin_tail = NULL;
}

static void fmt_peer(char *buf, size_t len, int src, int tag)
{
    char a[32], b[32];
    if (src == MPI_ANY_SOURCE)
        snprintf(a, sizeof a, "any source");
    else
        snprintf(a, sizeof a, "rank %d", src);
    if (tag == MPI_ANY_TAG)
        snprintf(b, sizeof b, "any tag");
    else
        snprintf(b, sizeof b, "tag %d", tag);
    snprintf(buf, len, "%s, %s", a, b);
}

void bdr_mbox_describe(slave_t *s, char *buf, size_t len)
{
    bd_req_t *r = &s->slot->req;
    char who[96];
    if (s->blk == BLK_ROOM) {
        snprintf(buf, len, "waits in a send for room in the mailbox of rank %d", s->room_dst);
        return;
    }
    switch (r->arg[1]) {
    case BD_WAIT_RECV:
        if (r->ctx == -1) {
            snprintf(buf, len, "waits in MPI_Wait/Test for a receive request");
            break;
        }
        fmt_peer(who, sizeof who, r->peer, r->tag);
        snprintf(buf, len, "waits in MPI_Recv for a message from %s (communicator context %d)", who,
                 r->ctx);
        break;
    case BD_WAIT_ANY:
        snprintf(buf, len, "waits in MPI_Waitany/Waitsome/Waitall on %d receive requests", r->tag);
        break;
    case BD_WAIT_PROBE:
    case BD_WAIT_MPROBE:
        fmt_peer(who, sizeof who, r->peer, r->tag);
        snprintf(buf, len, "waits in %s for a message from %s (communicator context %d)",
                 r->arg[1] == BD_WAIT_MPROBE ? "MPI_Mprobe" : "MPI_Probe", who, r->ctx);
        break;
    case BD_WAIT_SSEND:
        snprintf(buf, len, "waits in MPI_Ssend/Issend for its message to be received");
        break;
    case BD_WAIT_FLOW:
        snprintf(buf, len,
                 "waits in MPI_Send for rank %d to receive its message (flow control: its "
                 "messages not yet received are over -p2p-tokens; a program that needs MPI_Send "
                 "to buffer is not safe, MPI 3.1 section 3.5)",
                 r->peer);
        break;
    case BD_WAIT_POLL:
        snprintf(buf, len,
                 "polls (MPI_Test/MPI_Iprobe) in a loop for a message from another node, asleep "
                 "until it comes (-poll-remote)");
        break;
    case BD_WAIT_LCOLL: {
        bd_coll_desc_t d = {.api = (int32_t)r->arg[3], .root = (int32_t)r->arg[4]};
        if (r->peer >= 0 && (d.api & BD_API_NB))
            snprintf(buf, len,
                     "waits in MPI_Wait/Waitall for %s (root %d): rank %d has not called it "
                     "(communicator context %d)",
                     bdr_coll_call_name(&d), d.root, r->peer, r->ctx);
        else if (r->peer >= 0)
            snprintf(buf, len, "waits in %s (root %d) for rank %d (communicator context %d)",
                     bdr_coll_call_name(&d), d.root, r->peer, r->ctx);
        else /* a nonblocking one, in MPI_Waitany/Waitsome: its receives from the others */
            snprintf(buf, len,
                     "waits in MPI_Wait/Waitall/Waitany for %s (root %d): not every other "
                     "member has called it (communicator context %d)",
                     bdr_coll_call_name(&d), d.root, r->ctx);
        break;
    }
    default: snprintf(buf, len, "is blocked");
    }
}
