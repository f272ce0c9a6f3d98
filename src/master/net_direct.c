/* Large messages between nodes without spill files (-net-direct, issue 12).
 *
 * The old path writes a large message to a spill file on the sender's
 * node, reads it back into the master, ships it, writes it to a spill file
 * on the receiver's node and reads it back into the receiver: four copies
 * and two files besides the transport's own.  Here a contiguous message
 * is copied once per hop:
 *
 *   sender's memory --process_vm_readv--> chunk buffer --MPICH--> chunk
 *   buffer --process_vm_writev--> receive buffer
 *
 * Sending side (the sender's master, "out"): the rank asks to send with
 * BD_SEND_PULL and the address of its (resident) buffer, and is not
 * answered until the last byte has been read, so it holds its run slot and
 * its memory stays resident (running ranks are never unloaded).  The
 * envelope goes first, in order through the node FIFO; the data leaves
 * when the receiving master asks for it (CTS), or when nobody has asked
 * within pull_wait() (the receiver does not take it soon: the data goes to
 * a spill file there, as before), so the sender never waits for a receive
 * for long (sends stay buffered, bdmpi.txt 5.3).  Chunks are read straight
 * into the buffer MPICH sends from, up to BDR_NODE_TOKENS chunks in flight
 * per destination (counted in bdr_node_transient_bytes, so in the budget).
 *
 * Receiving side ("in"): the envelope becomes a mailbox entry with
 * BD_ME_PULL in its place among the rank's messages, so MPI's matching and
 * ordering stay the rank's (match.c).  When a receive takes it, the rank
 * asks for the data (BD_REQ_NET_PULL) with its receive buffer, made
 * resident and held so (it keeps its run slot until answered); we send
 * CTS and write the chunks into that buffer as they arrive.  If the chunks
 * come before any receive asked (the sender's wait ran out, or we asked at
 * once for a rank that cannot take it soon), they go to a spill file that
 * the rank reads when it asks.  A noncontiguous receive asks for the file.
 *
 * Pull ids are (1 << 62) | sequence of the sending master: unique per
 * sending master, and never the number of a rank's own spill file (small)
 * or of a master's (top bit set), since files are named by sender and number. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bd_fs.h"
#include "bd_iowatch.h"
#include "bd_log.h"
#include "master.h"
#include "net.h"

/* Chunks of 256 KiB, 8 in flight per destination: with 1 MiB chunks a
 * 2 MiB message was two chunks, each copied by one master while the other
 * waited; smaller ones overlap the reads, the transfer and the writes
 * (docs/performance.md "Inter-node bandwidth (issue 12, session 13)"). */
#define BDR_DIRECT_CHUNK ((uint64_t)256 << 10)
#define BDR_DIRECT_TOKENS 8
/* The first BDR_DIRECT_EAGER bytes of a message leave at once, without
 * waiting to be asked: the receiving master holds them in memory (at most
 * BDR_DIRECT_HOLD bytes of all messages, counted in the budget) until the
 * receive asks, so waking the receiver and asking overlap the transfer,
 * and a message of up to this size frees its sender without a round trip.
 * What passes the bound goes to a spill file as before. */
#define BDR_DIRECT_EAGER ((uint64_t)2 << 20)
#define BDR_DIRECT_HOLD ((uint64_t)8 << 20)
/* Held data nobody has asked for within this time goes to a spill file (a
 * receiver can be slow to come: 3 ms sent most of a stream of 1 MiB
 * messages to files on this loaded 2-core machine). */
#define BDR_DIRECT_HOLD_S 0.05

extern uint64_t g_net_sent; /* deadlock.c's message totals */

typedef struct pull_out {
    struct pull_out *next;
    slave_t *s; /* the sender, waiting in its BD_REQ_SEND */
    uint64_t id;
    int dst; /* node */
    uint64_t addr, total, off;
    uint64_t eager; /* bytes that leave without being asked for */
    int hdr_sent;   /* the envelope has left (chunks may follow it) */
    int streaming;  /* asked for, or waited long enough */
    double deadline;
} pull_out_t;

enum { IN_UNDECIDED = 0, IN_PLACE, IN_FILE, IN_DROP };

typedef struct pull_in {
    struct pull_in *next;
    int src_node, src_world, dst_world;
    uint64_t send_id;        /* its sender's, for MPI_Cancel (bdr_direct_drop) */
    uint64_t id, total, got; /* got: bytes put where decided */
    uint64_t arrived, eager; /* arrived: also those held */
    int mode, cts_sent, filed;
    double deadline; /* held data goes to a spill file if nobody asks by then */
    slave_t *puller; /* the receiver, waiting in BD_REQ_NET_PULL */
    int place;       /* it gave an address */
    uint64_t addr, len;
    int fd;
    bd_fs_ck_t ck;
    /* chunks that came before anyone asked (the eager part), in order */
    struct held *held, **held_tail;
} pull_in_t;

typedef struct held {
    struct held *next;
    bdr_net_msg_t *nm;
} held_t;

int bdr_vm_copy(pid_t pid, int write, void *local, uint64_t addr, size_t n)
{
    for (size_t done = 0; done < n;) {
        struct iovec l = {(char *)local + done, n - done};
        struct iovec rm = {(void *)(uintptr_t)(addr + done), n - done};
        ssize_t k = write ? process_vm_writev(pid, &l, 1, &rm, 1, 0)
                          : process_vm_readv(pid, &l, 1, &rm, 1, 0);
        if (k <= 0)
            return k < 0 ? -errno : -EIO;
        done += (size_t)k;
    }
    return 0;
}

static pull_out_t *g_out;
static pull_in_t *g_in;
static uint64_t g_seq;
static uint64_t g_held; /* bytes of held chunks */

uint64_t bdr_direct_held_bytes(void) { return g_held; }

static void held_drop(pull_in_t *in)
{
    while (in->held) {
        held_t *h = in->held;
        in->held = h->next;
        g_held -= h->nm->len;
        bdr_net_msg_free(h->nm);
        free(h);
    }
    in->held_tail = &in->held;
}

/* How long a sender waits for its receiver to ask: 2 ms, plus about what
 * writing the spill file and reading it back would cost (1 ns a byte), so
 * the wait never costs more than the files it may save. */
static double pull_wait(uint64_t total) { return 2e-3 + (double)total * 1e-9; }

static pull_out_t *out_of(slave_t *s)
{
    for (pull_out_t *p = g_out; p; p = p->next)
        if (p->s == s)
            return p;
    return NULL;
}

static pull_in_t *in_find(int src_node, uint64_t id)
{
    for (pull_in_t *p = g_in; p; p = p->next)
        if (p->src_node == src_node && p->id == id)
            return p;
    return NULL;
}

static void in_free(pull_in_t *in)
{
    pull_in_t **pp = &g_in;
    while (*pp && *pp != in)
        pp = &(*pp)->next;
    if (*pp)
        *pp = in->next;
    if (in->fd >= 0)
        close(in->fd);
    held_drop(in);
    bd_fs_ck_free(&in->ck);
    free(in);
}

/* ---------------------------------------------------------------- sending side */

static void hdr_left(void *arg)
{
    pull_out_t *p = arg;
    p->hdr_sent = 1;
    p->deadline = bdr_master_now() + pull_wait(p->total);
}

void bdr_direct_send(slave_t *s, const bd_req_t *r, uint64_t sync_id)
{
    pull_out_t *p = calloc(1, sizeof *p);
    if (!p) {
        bdr_master_fail(1, "master out of memory sending a message of rank %d", s->world);
        return;
    }
    p->s = s;
    p->id = (1ull << 62) | ++g_seq;
    p->dst = bdr_node_of_world(r->peer);
    p->addr = (uint64_t)r->arg[2];
    p->total = r->nbytes;
    p->eager = p->total < BDR_DIRECT_EAGER ? p->total : BDR_DIRECT_EAGER;
    p->next = g_out;
    g_out = p;
    bdr_net_hdr_t h = {.type = BDR_NH_MSG};
    h.a[0] = r->ctx;
    h.a[1] = r->myrank;
    h.a[2] = r->tag;
    h.a[3] = s->world;
    h.a[4] = r->peer;
    h.a[5] = 2; /* data on request */
    h.u[0] = r->nbytes;
    h.u[1] = sync_id;
    h.u[2] = p->id;
    h.u[3] = p->eager;
    h.u[4] = r->rid; /* send id: its entry can be found (a cancel is refused, node.c) */
    h.u[5] = r->nbytes;
    bdr_node_send_cb(p->dst, &h, hdr_left, p);
}

static void cts_recv(const bdr_net_hdr_t *h)
{
    for (pull_out_t *p = g_out; p; p = p->next)
        if (p->id == h->u[0] && p->dst == h->src_node) {
            p->streaming = 1;
            return;
        }
    /* already streaming after its wait ran out, and gone: nothing to do */
}

/* Read and ship what the tokens allow (before it is asked for, only the
 * eager part); 1 when p is complete. */
static int out_progress(pull_out_t *p)
{
    uint64_t end = p->streaming ? p->total : p->eager;
    while (p->off < end && bdr_net_pending(p->dst) < (size_t)BDR_DIRECT_TOKENS * BDR_DIRECT_CHUNK) {
        uint64_t n = end - p->off;
        if (n > BDR_DIRECT_CHUNK)
            n = BDR_DIRECT_CHUNK;
        char *chunk = bdr_net_buf(n);
        if (!chunk) {
            bdr_master_fail(1, "master out of memory");
            return 0;
        }
        int rc = bdr_vm_copy(p->s->pid, 0, chunk, p->addr + p->off, n);
        if (rc < 0) {
            bdr_net_free_buf(chunk, n);
            bdr_master_fail(1,
                            "cannot read a %llu-byte message to send to node %d from the "
                            "memory of rank %d: %s",
                            (unsigned long long)p->total, p->dst, p->s->world, strerror(-rc));
            return 0;
        }
        bdr_net_hdr_t ch = {.type = BDR_NH_PCHUNK, .src_node = g_m.node};
        ch.u[0] = p->id;
        ch.u[1] = p->off;
        if (bdr_net_send_buf(p->dst, &ch, chunk, n) < 0) {
            bdr_master_fail(1, "cannot send to the master of node %d", p->dst);
            return 0;
        }
        g_net_sent++;
        p->off += n;
    }
    return p->off == p->total;
}

static void out_poll(void)
{
    double now = g_out ? bdr_master_now() : 0;
    pull_out_t **pp = &g_out;
    while (*pp) {
        pull_out_t *p = *pp;
        if (g_m.stopping || p->s->exited) { /* the job ends: nobody needs it */
            *pp = p->next;
            free(p);
            continue;
        }
        if (!p->streaming && p->hdr_sent && now >= p->deadline)
            p->streaming = 1; /* nobody asked: it goes to a spill file there */
        if (p->hdr_sent && out_progress(p)) {
            *pp = p->next;
            p->s->slot->resp = (bd_resp_t){.status = BD_RESP_OK};
            bdr_sched_respond(p->s);
            free(p);
            continue;
        }
        if (g_m.stopping)
            return;
        pp = &p->next;
    }
}

/* ---------------------------------------------------------------- receiving side */

static void send_cts(pull_in_t *in)
{
    if (in->cts_sent)
        return;
    in->cts_sent = 1;
    bdr_net_hdr_t h = {.type = BDR_NH_CTS};
    h.u[0] = in->id;
    bdr_node_send(in->src_node, &h, NULL, 0);
}

/* d will ask for a message soon: it runs (and is not itself waiting for a
 * send of this kind, which it cannot leave before the data has gone), or a
 * run slot is free for it and it waits for its mailbox or has just been
 * made runnable (by an earlier message: a second one arriving in the same
 * round went to a spill file, a third of the messages of a stream). */
static int taker_near(slave_t *d)
{
    if (d->state == SL_RUNNING)
        return !out_of(d);
    if (g_m.nrunning >= g_m.nr)
        return 0;
    return d->state == SL_RUNNABLE || (d->state == SL_BLOCKED && d->blk == BLK_MBOX);
}

int bdr_direct_expect(const bdr_net_hdr_t *h, msg_t *m)
{
    pull_in_t *in = calloc(1, sizeof *in);
    if (!in) {
        bdr_master_fail(1, "master out of memory receiving a message from node %d", h->src_node);
        return -1;
    }
    in->src_node = h->src_node;
    in->src_world = h->a[3];
    in->dst_world = h->a[4];
    in->id = h->u[2];
    in->send_id = h->u[4];
    in->total = h->u[5];
    in->eager = h->u[3];
    in->fd = -1;
    in->held_tail = &in->held;
    bd_fs_ck_init(&in->ck);
    in->next = g_in;
    g_in = in;
    m->pull = 1;
    m->file_num = in->id;
    in->deadline = bdr_master_now() + BDR_DIRECT_HOLD_S;
    /* Its eager part is held in any case (its sender does not wait for
     * it); the rest is asked for at once, into a spill file, when no one
     * takes it soon, so its sender need not wait. */
    slave_t *d = bdr_master_slave_by_world(in->dst_world);
    if (!d || d->exited || (!taker_near(d) && in->total > in->eager))
        send_cts(in);
    return 0;
}

static void answer_file(pull_in_t *in)
{
    slave_t *s = in->puller;
    s->slot->resp = (bd_resp_t){.status = BD_RESP_OK, .flag = 0};
    s->slot->resp.arg[0] = (int64_t)in->id;
    bdr_sched_respond(s);
}

static void chunk_fail(pull_in_t *in, const char *what, int err)
{
    bdr_master_fail(1, "cannot %s %llu bytes of a message of rank %d for rank %d: %s", what,
                    (unsigned long long)in->total, in->src_world, in->dst_world, strerror(err));
}

static int start_file(pull_in_t *in)
{
    char path[BD_PATH_MAX + 64];
    bd_spill_path(path, sizeof path, g_m.jobdir, in->src_world, in->id);
    if (bdr_spill_charge(in->total, in->src_world, in->dst_world, NULL) < 0)
        return -1;
    in->fd = BD_FAULT_SYS(BD_FAULT_SPILL_OPEN)
                 ?: open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (in->fd < 0) {
        bd_spill_uncharge(g_m.hdr, in->total);
        chunk_fail(in, "create a spill file for", errno);
        return -1;
    }
    return 0;
}

/* Where in's data goes, decided once: the receive buffer of a receive that
 * asked with one, else a spill file (nobody asked yet, or a noncontiguous
 * receive), or nowhere when its rank is gone. */
static void decide(pull_in_t *in)
{
    slave_t *d = bdr_master_slave_by_world(in->dst_world);
    if (in->puller && in->place)
        in->mode = IN_PLACE;
    else if (!d || d->exited)
        in->mode = IN_DROP;
    else
        in->mode = start_file(in) < 0 ? IN_DROP : IN_FILE;
}

/* The next n bytes of in's data (at in->got) go where decided; 1 when that
 * completed in (answered and freed: the caller must not touch it again). */
static int in_put(pull_in_t *in, const char *data, uint64_t n)
{
    uint64_t off = in->got;
    if (in->mode == IN_PLACE && off < in->len) {
        uint64_t k = in->len - off < n ? in->len - off : n;
        int rc = bdr_vm_copy(in->puller->pid, 1, (char *)data, in->addr + off, k);
        if (rc < 0) {
            chunk_fail(in, "write into the receive buffer", -rc);
            return 0;
        }
    } else if (in->mode == IN_FILE) {
        bd_fs_ck_add(&in->ck, data, n);
        int rc = BD_IO_NEG(BD_FAULT_SPILL_WRITE, bd_pwrite_full(in->fd, data, n, off));
        if (rc < 0) {
            chunk_fail(in, "write to a spill file", -rc);
            return 0;
        }
    }
    in->got += n;
    if (in->got < in->total)
        return 0;
    if (in->mode == IN_PLACE) {
        slave_t *s = in->puller;
        s->slot->resp = (bd_resp_t){.status = BD_RESP_OK, .flag = 1};
        atomic_fetch_add_explicit(&s->slot->stats[BD_STAT_NET_PLACED], 1, memory_order_relaxed);
        bdr_sched_respond(s);
        in_free(in);
        return 1;
    }
    if (in->mode == IN_FILE) {
        int rc = bd_fs_ck_write(&in->ck, in->fd, in->total);
        close(in->fd);
        in->fd = -1;
        if (rc < 0) {
            chunk_fail(in, "write to a spill file", -rc);
            return 0;
        }
        in->filed = 1;
        if (!in->puller)
            return 0; /* kept until its rank asks (or the job ends) */
        answer_file(in);
    }
    in_free(in);
    return 1;
}

/* The held chunks go where it was just decided; 1 when that completed in. */
static int flush_held(pull_in_t *in)
{
    while (in->held) {
        held_t *h = in->held;
        in->held = h->next;
        if (!in->held)
            in->held_tail = &in->held;
        g_held -= h->nm->len;
        int done = in_put(in, h->nm->payload, h->nm->len);
        bdr_net_msg_free(h->nm);
        free(h);
        if (done)
            return 1;
    }
    return 0;
}

/* Decide in's destination, move what is held there, and ask for the rest
 * (which does not leave before it is asked for, or the sender's wait runs
 * out); 1 when that completed in. */
static int in_settle(pull_in_t *in)
{
    decide(in);
    if (flush_held(in))
        return 1;
    if (in->arrived < in->total)
        send_cts(in);
    return 0;
}

void bdr_direct_req_pull(slave_t *s, const bd_req_t *r)
{
    pull_in_t *in = in_find(bdr_node_of_world(r->peer), (uint64_t)r->rid);
    if (!in || in->puller || in->dst_world != s->world) {
        bdr_master_fail(1, "rank %d asked for message %llu of rank %d, which is not here for it",
                        s->world, (unsigned long long)r->rid, r->peer);
        return;
    }
    in->puller = s;
    in->place = r->arg[1] != 0;
    in->addr = (uint64_t)r->arg[0];
    in->len = r->nbytes < in->total ? r->nbytes : in->total;
    if (in->filed) {
        answer_file(in);
        in_free(in);
        return;
    }
    if (in->mode == IN_UNDECIDED)
        in_settle(in); /* answered when the data is in (in_put) */
}

/* A chunk of a message arrives; 1 when nm is kept (held). */
static int chunk_recv(bdr_net_msg_t *nm)
{
    pull_in_t *in = in_find(nm->h.src_node, nm->h.u[0]);
    uint64_t n = nm->len;
    if (!in || nm->h.u[1] != in->arrived || in->arrived + n > in->total) {
        bdr_master_fail(1, "unexpected data chunk of a message from node %d", nm->h.src_node);
        return 0;
    }
    in->arrived += n;
    if (in->mode == IN_UNDECIDED) {
        /* Nobody has asked yet: hold the eager part while there is room
         * (unless we asked for it to go to a file), else decide now. */
        if (!in->cts_sent && in->arrived <= in->eager && g_held + n <= BDR_DIRECT_HOLD) {
            /* (a CTS sent means it goes to a file: see bdr_direct_expect) */
            held_t *h = malloc(sizeof *h);
            if (!h) {
                bdr_master_fail(1, "master out of memory receiving a message");
                return 0;
            }
            h->next = NULL;
            h->nm = nm;
            *in->held_tail = h;
            in->held_tail = &h->next;
            g_held += n;
            return 1;
        }
        if (in_settle(in))
            return 0; /* cannot be: this chunk is still to come */
    }
    in_put(in, nm->payload, n);
    return 0;
}

/* ---------------------------------------------------------------- the loop */

int bdr_direct_dispatch(bdr_net_msg_t *nm)
{
    switch (nm->h.type) {
    case BDR_NH_CTS: cts_recv(&nm->h); return 1;
    case BDR_NH_PCHUNK: return chunk_recv(nm) ? 2 : 1;
    default: return 0;
    }
}

/* Held data that nobody has asked for in time goes to a spill file: the
 * held memory is for receives that come soon (a receiver blocked in a
 * collective that has just completed, say), not for ever. */
static void in_poll(void)
{
    double now = 0;
    for (pull_in_t *in = g_in, *next; in; in = next) {
        next = in->next;
        if (in->mode != IN_UNDECIDED || !in->held)
            continue;
        if (!now)
            now = bdr_master_now();
        if (now >= in->deadline)
            in_settle(in);
    }
}

void bdr_direct_poll(void)
{
    out_poll();
    if (g_held)
        in_poll();
}

int bdr_direct_busy(void)
{
    if (g_out || g_held) /* (held data has a deadline: in_poll) */
        return 1;
    for (pull_in_t *in = g_in; in; in = in->next)
        if (!in->filed && in->cts_sent)
            return 1;
    return 0;
}

void bdr_direct_drop(int src_world, uint64_t send_id)
{
    for (pull_in_t *in = g_in; in; in = in->next) {
        if (in->src_world != src_world || in->send_id != send_id || !send_id || in->puller)
            continue;
        if (in->mode == IN_FILE || in->filed) {
            char path[BD_PATH_MAX + 64];
            bd_spill_path(path, sizeof path, g_m.jobdir, in->src_world, in->id);
            if (in->fd >= 0)
                close(in->fd);
            in->fd = -1;
            bd_spill_unlink(g_m.hdr, path, in->total);
        }
        if (in->filed || in->arrived >= in->total) {
            in_free(in);
            return;
        }
        /* the rest of its data is on its way (its sender is done): dropped as it comes */
        in->mode = IN_DROP;
        flush_held(in);
        return;
    }
}

/* A rank of ours has exited: forget what it waited for. */
void bdr_direct_exited(slave_t *s)
{
    for (pull_in_t *in = g_in; in; in = in->next)
        if (in->puller == s) {
            in->puller = NULL;
            if (in->mode == IN_PLACE)
                in->mode = IN_DROP;
        }
}
