/* BD_REQ_COLL_SMALL: a small blocking collective in one request.
 *
 * A collective through the master is five requests (BEGIN, PUT, WAIT, GET,
 * END), each a round trip: two process switches, 5-20 us on these VMs.
 * Between nodes a one-double MPI_Allreduce took 127 us with every process
 * on one CPU, nearly all of it switches (docs/performance.md, session 27).
 * The library sends this one request instead when the input and the
 * result fit in the window and the call blocks.  A rank with receives
 * posted watches its mailbox as a COLL_WAIT does (BD_COLL_WATCH: answered
 * BD_RESP_NOTYET when a message came, so that it matches; then it sends
 * the same request again, which finds BEGIN and PUT done and only waits).
 *
 * The steps are the requests' own handlers, called in order with their
 * answers muted (bdr_sched_respond counts them in s->muted): a step that
 * did not answer failed the job.  The wait blocks like COLL_WAIT; when the
 * rank is resumed the master calls this handler again (redo), and
 * s->small_open says BEGIN and PUT are done.
 *
 * With arg[2] = BD_SMALL_FINISH the request is only the end of an instance
 * the rank began before (BD_COLL_ADDR names it): WAIT, GET and END, three
 * requests in one (session 28).  A nonblocking call starts with
 * BD_SMALL_LAUNCH (BEGIN, PUT, ARRIVE) or, when its pieces do not fit in
 * one PUT, BD_SMALL_BEGIN (BEGIN, PUT), answered at once. */
#include <string.h>

#include "coll.h"
#include "master.h"

/* One step of the request: 1 if it answered (succeeded), else 0. */
static int step(slave_t *s, void (*fn)(slave_t *, const bd_req_t *), const bd_req_t *r,
                uint32_t code)
{
    bd_req_t q = *r;
    q.code = code;
    q.flags = 0;
    q.arg[0] = 0;
    s->mute = 1;
    s->muted = 0;
    fn(s, &q);
    s->mute = 0;
    return s->muted > 0 && !g_m.stopping;
}

/* The collective is complete for s: its result into the window, the end. */
static void finish(slave_t *s, const bd_req_t *r)
{
    s->small_open = 0;
    uint64_t want = (uint64_t)r->arg[0];
    s->slot->resp.arg[0] = 0;
    if (want) {
        if (want > g_m.hdr->window) {
            bdr_master_fail(1,
                            "rank %d asked for %llu bytes of a collective's result, more "
                            "than its window",
                            s->world, (unsigned long long)want);
            return;
        }
        /* the GET's list is in the window, after the PUT block */
        uint64_t loff = (uint64_t)r->arg[1];
        uint32_t nseg = 0;
        if (loff >= BD_COLL_SMALL_PUT && loff + 8 <= g_m.hdr->window)
            memcpy(&nseg, s->win + loff, sizeof nseg);
        uint64_t len = 8 + (uint64_t)nseg * sizeof(bd_seg_t);
        if (!nseg || nseg > 4096 || loff + len > g_m.hdr->window) {
            bdr_master_fail(1, "rank %d: malformed GET list in a small collective", s->world);
            return;
        }
        memmove(s->win, s->win + loff, len);
        if (!step(s, bdr_coll_req_get, r, BD_REQ_COLL_GET))
            return;
    }
    int64_t mismatch = s->slot->resp.arg[0];
    if (!step(s, bdr_coll_req_end, r, BD_REQ_COLL_END))
        return;
    s->slot->resp.arg[0] = mismatch;
    bdr_sched_respond(s);
}

/* A whole small blocking collective, or a completion (as a COLL_WAIT,
 * which it replaces), whose window data (description, PUT block, GET list:
 * they end at arg[3]) and result (arg[0] bytes) are in the window's first
 * page: the rest of the window is given back while the rank waits (a
 * Reduce's non-root kept its 256 KiB of PUTs resident there).  A whole
 * collective's PUT is taken before it waits. */
int bdr_coll_small_win_page(const bd_req_t *r)
{
    return (r->arg[2] == 0 || r->arg[2] == BD_SMALL_FINISH) && r->arg[0] >= 0 &&
           r->arg[0] <= 4096 && r->arg[3] > 0 && r->arg[3] <= 4096;
}

void bdr_coll_req_small(slave_t *s, const bd_req_t *r)
{
    if (r->arg[2] == BD_SMALL_LAUNCH || r->arg[2] == BD_SMALL_BEGIN) {
        /* a nonblocking call's start: answered at once */
        if (!step(s, bdr_coll_req_begin, r, BD_REQ_COLL_BEGIN))
            return;
        s->win += BD_COLL_SMALL_PUT;
        int ok = step(s, bdr_coll_req_put, r, BD_REQ_COLL_PUT);
        s->win -= BD_COLL_SMALL_PUT;
        if (!ok ||
            (r->arg[2] == BD_SMALL_LAUNCH && !step(s, bdr_coll_req_arrive, r, BD_REQ_COLL_ARRIVE)))
            return;
        bdr_sched_respond(s);
        return;
    }
    if (r->arg[2] == BD_SMALL_FINISH) {
        /* the completion of an instance begun before (a nonblocking call's
         * MPI_Wait, or a blocking one whose pieces did not fit at once) */
        if (!bdr_coll_instance(s, r))
            return;
        s->small_open = 1;
    } else if (!s->small_open) {
        if (!step(s, bdr_coll_req_begin, r, BD_REQ_COLL_BEGIN))
            return;
        /* the PUT block follows the description in the window */
        s->win += BD_COLL_SMALL_PUT;
        int ok = step(s, bdr_coll_req_put, r, BD_REQ_COLL_PUT);
        s->win -= BD_COLL_SMALL_PUT;
        if (!ok)
            return;
        s->small_open = 1;
    }
    coll_t *c = s->coll;
    if (c->comm && c->comm->revoked) {
        /* MPIX_Comm_revoke came before this rank waited: it fails, as a
         * COLL_WAIT does (bdr_comm_req_coll_wait) */
        s->small_open = 0;
        s->slot->resp.status = BD_RESP_REVOKED;
        bdr_sched_respond(s);
        return;
    }
    if (bdr_coll_arrive(s, c) < 0)
        return;
    if (bdr_coll_rank_ready(c, s->coll_rank)) {
        finish(s, r);
    } else if (bdr_mbox_watch_moved(s)) {
        s->slot->resp.status = BD_RESP_NOTYET; /* it matches, then waits again */
        bdr_sched_respond(s);
    } else {
        bdr_sched_block(s, BLK_COLL);
    }
}
