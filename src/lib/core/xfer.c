/* The PUT/GET client of the master's collectives (xfer.h). */
#include <stdlib.h>
#include <string.h>

#include "bd_mem.h"
#include "core.h"
#include "dt.h"
#include "nbc.h"
#include "request.h"
#include "xfer.h"

static bd_req_t *coll_req(const bdl_xfer_t *x, uint32_t code)
{
    if (x->lazy) /* a path that did not send the BEGIN first (lazy_send) */
        bdl_fatal(MPI_ERR_INTERN, "collective request %u before its BEGIN", code);
    bd_req_t *r = bdl_req_begin(code);
    r->flags = BD_COLL_ADDR;
    r->ctx = x->ctx;
    r->myrank = x->rank;
    r->rid = x->seq;
    return r;
}

static void xfer_begin(bdl_xfer_t *x, bdl_comm_t *c, int kind, int root, int dtype, int op,
                       uint64_t count, int api, int pipe)
{
    bd_coll_desc_t d = {.kind = kind,
                        .root = root,
                        .dtype = dtype,
                        .op = op,
                        .count = count,
                        .seq = c->coll_seq++,
                        .api = api};
    x->ctx = c->ctx;
    x->rank = c->rank;
    x->seq = d.seq;
    x->mismatch = 0;
    x->byref = !pipe && bdl_g.mem_active && bdl_g.hdr->job.coll_byref == 0 &&
               (kind == BD_COLL_ALLTOALL || kind == BD_COLL_GATHER || kind == BD_COLL_SCATTER);
    x->lazy = x->put_pending = 0;
    if (!pipe && (api & BD_API_NB) && !bdl_mt_busy()) {
        /* Nonblocking: the BEGIN goes with the PUT or the ARRIVE.  Settled
         * first, as bdl_xfer_small does: the window is about to hold the
         * pieces until then. */
        bdl_p2p_settle();
        x->lazy = 1;
        x->desc = d;
        bdl_resp()->flag = 0; /* what a BEGIN that does not pipeline answers */
        return;
    }
    bd_req_t *r = bdl_req_begin(BD_REQ_COLL_BEGIN);
    r->ctx = c->ctx;
    r->myrank = c->rank;
    r->arg[0] = pipe;
    memcpy(bdl_g.win, &d, sizeof d);
    bdl_rpc();
}

void bdl_xfer_begin(bdl_xfer_t *x, bdl_comm_t *c, int kind, int root, int dtype, int op,
                    uint64_t count, int api)
{
    xfer_begin(x, c, kind, root, dtype, op, count, api, 0);
}

void bdl_xfer_begin_pipe(bdl_xfer_t *x, bdl_comm_t *c, int kind, int api, int inplace)
{
    xfer_begin(x, c, kind, 0, 0, 0, 0, api, inplace ? 2 : 1);
}

void bdl_xfer_begin_pipe_root(bdl_xfer_t *x, bdl_comm_t *c, int kind, int root, int api)
{
    xfer_begin(x, c, kind, root, 0, 0, 0, api, 1);
}

void bdl_xfer_begin_pipe_parts(bdl_xfer_t *x, bdl_comm_t *c, int kind, int root, uint64_t nparts,
                               int api)
{
    xfer_begin(x, c, kind, root, 0, 0, nparts, api, 1);
}

/* Bytes of blk's data; 0 if it cannot go (over 4 GiB, or, with sb, a
 * block as large as an sbpage). */
static uint64_t small_len(const bdl_small_blk_t *b, uint64_t sb, int *ok)
{
    uint64_t n = b->count * b->t->psize;
    if (n > UINT32_MAX || (sb && n >= sb))
        *ok = 0;
    return n;
}

/* Where a small request's GET list of ngseg segments at loff ends (the
 * end of its PUT block, loff, when it has none): the master's test of
 * whether all it wrote is in the window's first page (arg[3]). */
static int64_t small_end(uint64_t loff, uint32_t ngseg)
{
    return (int64_t)(ngseg ? loff + 8 + (uint64_t)ngseg * sizeof(bd_seg_t) : loff);
}

/* A small request's GET list (ngseg blocks of data) at gl. */
static void get_list_write(char *gl, const bdl_small_blk_t *get, int nget, uint32_t ngseg)
{
    memset(gl, 0, 8);
    memcpy(gl, &ngseg, sizeof ngseg);
    uint32_t k = 0;
    for (int i = 0; i < nget; i++) {
        uint64_t n = get[i].count * get[i].t->psize;
        if (!n)
            continue;
        bd_seg_t seg = {get[i].peer, (uint32_t)n, get[i].off, get[i].whole ? n : 0};
        memcpy(gl + 8 + (uint64_t)k++ * sizeof seg, &seg, sizeof seg);
    }
}

/* The answer of a small request: its data (at the window's start) into the
 * GET blocks; *status.  Returns 1. */
static int get_list_take(const bdl_small_blk_t *get, int nget, int *status)
{
    if (bdl_resp()->status == BD_RESP_REVOKED) {
        *status = MPIX_ERR_REVOKED;
        return 1;
    }
    *status = bdl_resp()->arg[0] ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
    const char *src = bdl_g.win;
    for (int i = 0; i < nget; i++) {
        uint64_t n = get[i].count * get[i].t->psize;
        if (!n)
            continue;
        char *contig = bdl_dt_contig(get[i].t, get[i].buf, get[i].count);
        if (contig) {
            bdl_lib_mem_discard(contig, n);
            memcpy(contig, src, n);
        } else {
            bdl_dt_unpack(get[i].t, (void *)get[i].buf, get[i].count, 0, src, n);
        }
        src += n;
    }
    return 1;
}

int bdl_xfer_small(bdl_comm_t *c, const bd_coll_desc_t *desc, const bdl_small_blk_t *put, int nput,
                   const bdl_small_blk_t *get, int nget, int blocks, int *status)
{
    _Static_assert(sizeof(bd_coll_desc_t) <= BD_COLL_SMALL_PUT, "description too large");
    uint64_t sb = blocks && bdl_g.mem_active ? bdl_g.hdr->job.sbpage : 0;
    uint64_t pos = BD_COLL_SMALL_PUT + 8, out = 0;
    uint32_t ngseg = 0;
    int ok = 1;
    for (int i = 0; i < nput; i++) {
        uint64_t n = small_len(&put[i], sb, &ok);
        pos += n ? sizeof(bd_seg_t) + ((n + 7) & ~7ull) : 0;
    }
    for (int i = 0; i < nget; i++) {
        uint64_t n = small_len(&get[i], sb, &ok);
        out += n;
        ngseg += n != 0;
    }
    uint64_t loff = (pos + 7) & ~7ull;
    if (!ok || loff + 8 + (uint64_t)ngseg * sizeof(bd_seg_t) > bdl_g.window || out > bdl_g.window ||
        ngseg > 4096 || bdl_mt_busy() || bdl_nbc_pipes_pending())
        return 0;
    /* The request's own blocking steps (bdl_rpc) would settle single-copy
     * sends, which may make requests of their own through the window:
     * settled first, before the window is filled. */
    bdl_p2p_settle();
    bd_coll_desc_t d = *desc;
    d.seq = c->coll_seq++;
    for (int first = 1;; first = 0) {
        /* With receives posted the wait watches the mailbox (MPI's progress
         * rule, as bdl_xfer_wait): matching comes first (it may make
         * requests through the window), then the window is filled; an
         * answer BD_RESP_NOTYET means a message came: match, and send the
         * same request again (the master has done BEGIN and PUT). */
        uint32_t seen = 0;
        int watch = bdl_p2p_watch_begin(&seen);
        bd_req_t *r = bdl_req_begin(BD_REQ_COLL_SMALL);
        r->ctx = c->ctx;
        r->myrank = c->rank;
        r->arg[0] = (int64_t)out;
        r->arg[1] = ngseg ? (int64_t)loff : 0;
        r->arg[3] = small_end(loff, ngseg);
        if (first) {
            memcpy(bdl_g.win, &d, sizeof d);
            char *pb = bdl_g.win + BD_COLL_SMALL_PUT;
            uint32_t nseg = 0;
            uint64_t at = 8;
            for (int i = 0; i < nput; i++) {
                uint64_t n = put[i].count * put[i].t->psize;
                if (!n)
                    continue;
                bd_seg_t seg = {put[i].peer, (uint32_t)n, 0, n};
                memcpy(pb + at, &seg, sizeof seg);
                const char *contig = bdl_dt_contig(put[i].t, put[i].buf, put[i].count);
                if (contig)
                    memcpy(pb + at + sizeof seg, contig, n);
                else
                    bdl_dt_pack(put[i].t, put[i].buf, put[i].count, 0, pb + at + sizeof seg, n);
                at += sizeof seg + ((n + 7) & ~7ull);
                nseg++;
            }
            memset(pb, 0, 8);
            memcpy(pb, &nseg, sizeof nseg);
        }
        /* Again after a NOTYET: matching may have used the window. */
        get_list_write(bdl_g.win + loff, get, nget, ngseg);
        if (!bdl_p2p_rpc_watched(r, watch, seen))
            break;
    }
    return get_list_take(get, nget, status);
}

int bdl_xfer_small_finish(const bdl_xfer_t *x, const bdl_small_blk_t *get, int nget, int blocks,
                          int *status)
{
    uint64_t sb = blocks && bdl_g.mem_active ? bdl_g.hdr->job.sbpage : 0;
    uint64_t out = 0, loff = BD_COLL_SMALL_PUT;
    uint32_t ngseg = 0;
    int ok = 1;
    for (int i = 0; i < nget; i++) {
        uint64_t n = small_len(&get[i], sb, &ok);
        out += n;
        ngseg += n != 0;
    }
    if (!ok || loff + 8 + (uint64_t)ngseg * sizeof(bd_seg_t) > bdl_g.window || out > bdl_g.window ||
        ngseg > 4096 || bdl_mt_busy() || bdl_nbc_pipes_pending())
        return 0;
    bdl_p2p_settle(); /* as bdl_xfer_small */
    for (;;) {
        uint32_t seen = 0;
        int watch = bdl_p2p_watch_begin(&seen);
        bd_req_t *r = coll_req(x, BD_REQ_COLL_SMALL);
        r->arg[0] = (int64_t)out;
        r->arg[1] = ngseg ? (int64_t)loff : 0;
        r->arg[2] = BD_SMALL_FINISH;
        r->arg[3] = small_end(loff, ngseg);
        get_list_write(bdl_g.win + loff, get, nget, ngseg);
        if (!bdl_p2p_rpc_watched(r, watch, seen))
            break;
    }
    return get_list_take(get, nget, status);
}

void bdl_xfer_call(const bdl_xfer_t *x, uint32_t code)
{
    coll_req(x, code);
    bdl_rpc();
}

void bdl_xfer_wait(const bdl_xfer_t *x)
{
    for (;;) {
        uint32_t seen = 0;
        int watch = bdl_p2p_watch_begin(&seen);
        if (!bdl_p2p_rpc_watched(coll_req(x, BD_REQ_COLL_WAIT), watch, seen))
            return;
    }
}

/* A lazy instance's first request: description at the window's start,
 * PUT block (maybe empty) at BD_COLL_SMALL_PUT; mode BD_SMALL_BEGIN or
 * BD_SMALL_LAUNCH. */
static void lazy_send(bdl_xfer_t *x, int mode)
{
    if (!x->put_pending)
        memset(bdl_g.win + BD_COLL_SMALL_PUT, 0, 8);
    memcpy(bdl_g.win, &x->desc, sizeof x->desc);
    x->lazy = x->put_pending = 0;
    bd_req_t *r = coll_req(x, BD_REQ_COLL_SMALL);
    r->arg[2] = mode;
    bdl_rpc();
}

void bdl_xfer_arrive(bdl_xfer_t *x)
{
    if (x->lazy)
        lazy_send(x, BD_SMALL_LAUNCH);
    else
        bdl_xfer_call(x, BD_REQ_COLL_ARRIVE);
}

/* The PUT block's segment count at its start. */
static void put_close(bdl_put_t *p)
{
    memset(bdl_g.win + p->base, 0, 8);
    memcpy(bdl_g.win + p->base, &p->nseg, sizeof p->nseg);
}

void bdl_put_done(bdl_put_t *p)
{
    bdl_xfer_t *x = (bdl_xfer_t *)p->x;
    if (!x->lazy) {
        bdl_put_flush(p);
        return;
    }
    if (p->nseg) {
        put_close(p);
        x->put_pending = 1;
    }
}

void bdl_put_flush(bdl_put_t *p)
{
    bdl_xfer_t *x = (bdl_xfer_t *)p->x;
    if (x->lazy) {
        /* the window is full, or something else needs it: BEGIN and PUT */
        if (p->nseg) {
            put_close(p);
            x->put_pending = 1;
        }
        lazy_send(x, BD_SMALL_BEGIN);
        if (bdl_resp()->flag)
            p->over = 1;
        p->nseg = 0;
        p->base = 0;
        p->pos = 8;
        return;
    }
    if (!p->nseg)
        return;
    memcpy(bdl_g.win, &p->nseg, sizeof p->nseg);
    coll_req(p->x, BD_REQ_COLL_PUT);
    bdl_rpc();
    if (bdl_resp()->flag)
        p->over = 1;
    p->nseg = 0;
    p->pos = 8;
}

int bdl_xfer_take(const bdl_xfer_t *x, int final, int32_t *peers, int max, int *n)
{
    int mode = final & ~BDL_TAKE_NO_YIELD;
    for (;;) {
        /* A blocking take (modes 0 and 1) may wait in the master as long
         * as COLL_WAIT does: it watches the mailbox the same way, so that
         * a synchronous sender this rank's posted receives match is not
         * left waiting (MPI's progress rule; bdl_xfer_wait).  Matching
         * happens in bdl_p2p_watch_begin, before the request is made: it
         * may call the master itself. */
        uint32_t seen = 0;
        int watch = mode <= 1 ? bdl_p2p_watch_begin(&seen) : 0;
        bd_req_t *r = coll_req(x, BD_REQ_COLL_TAKE);
        r->arg[0] = mode;
        r->arg[1] = (final & BDL_TAKE_NO_YIELD) != 0;
        if (!bdl_p2p_rpc_watched(r, watch, seen))
            break;
    }
    int k = (int)bdl_resp()->arg[0];
    if (k < 0 || k > max)
        bdl_fatal(MPI_ERR_INTERN, "the master offered %d pieces of a collective of %d ranks", k,
                  max);
    memcpy(peers, bdl_g.win, (size_t)k * sizeof *peers);
    *n = k;
    return bdl_resp()->flag;
}

/* The whole piece for peer, len contiguous bytes at buf, as references to
 * its stored copy when all of it is out of memory (bd_mem_store_take):
 * loading it only to copy it to the master would read it from storage and
 * the master would write it back to a spill file.  1 if sent so. */
static int put_ref(bdl_put_t *p, int peer, const char *buf, uint64_t len)
{
    bdl_put_flush(p); /* the window carries one request at a time */
    bd_putref_t h = {.peer = peer, .total = len};
    size_t max = (bdl_g.window - sizeof h) / (2 * sizeof(uint32_t));
    uint32_t *slots = (uint32_t *)(bdl_g.win + sizeof h);
    uint32_t first = 0;
    int crc = 0;
    int n = bd_mem_store_take(buf, len, max, &first, slots, slots + max, &crc);
    if (n <= 0)
        return 0;
    memmove(slots + n, slots + max, (size_t)n * sizeof *slots); /* the CRCs after the slots */
    h.nslot = (uint32_t)n;
    h.first = first;
    h.crc = (uint32_t)crc;
    memcpy(bdl_g.win, &h, sizeof h);
    coll_req(p->x, BD_REQ_COLL_PUTREF);
    bdl_rpc();
    if (bdl_resp()->flag)
        p->over = 1;
    return 1;
}

/* Bytes [sbase, sbase + len) of the packed stream of count elements of t
 * at buf as bytes [at_off, at_off + len) of peer's piece of total bytes. */
static void put_range(bdl_put_t *p, int peer, const void *buf, uint64_t count, const bdl_dt_t *t,
                      uint64_t sbase, uint64_t len, uint64_t at_off, uint64_t total)
{
    const char *contig = bdl_dt_contig(t, buf, count);
    if (contig)
        contig += sbase;
    if (p->x->byref && contig && at_off == 0 && len == total && len >= bdl_g.hdr->job.sbpage &&
        put_ref(p, peer, contig, len))
        return;
    uint64_t off = 0;
    while (off < len) {
        uint64_t room = bdl_g.window - p->pos;
        if (room < sizeof(bd_seg_t) + 64) {
            bdl_put_flush(p);
            continue;
        }
        uint64_t chunk = len - off;
        if (chunk > room - sizeof(bd_seg_t) - 8)
            chunk = (room - sizeof(bd_seg_t) - 8) & ~7ull;
        bd_seg_t seg = {peer, (uint32_t)chunk, at_off + off, total};
        memcpy(bdl_g.win + p->pos, &seg, sizeof seg);
        if (contig)
            memcpy(bdl_g.win + p->pos + sizeof seg, contig + off, chunk);
        else
            bdl_dt_pack(t, buf, count, sbase + off, bdl_g.win + p->pos + sizeof seg, chunk);
        p->pos += sizeof seg + ((chunk + 7) & ~7ull);
        p->nseg++;
        off += chunk;
    }
}

int bdl_put_ref(bdl_put_t *p, int peer, const void *buf, uint64_t count, const bdl_dt_t *t)
{
    const char *contig = bdl_dt_contig(t, buf, count);
    uint64_t len = count * t->psize;
    return p->x->byref && contig && len >= bdl_g.hdr->job.sbpage && put_ref(p, peer, contig, len);
}

void bdl_put_part(bdl_put_t *p, int peer, const void *buf, uint64_t count, const bdl_dt_t *t,
                  uint64_t at_off, uint64_t total)
{
    put_range(p, peer, buf, count, t, 0, count * t->psize, at_off, total);
}

void bdl_put_span(bdl_put_t *p, int peer, const void *buf, uint64_t count, const bdl_dt_t *t,
                  uint64_t soff, uint64_t len)
{
    put_range(p, peer, buf, count, t, soff, len, 0, len);
}

void bdl_put_typed(bdl_put_t *p, int peer, const void *buf, uint64_t count, const bdl_dt_t *t)
{
    bdl_put_part(p, peer, buf, count, t, 0, count * t->psize);
}

#define GET_MAX_SEGS 1024
struct bdl_get {
    bdl_xfer_t *x;
    bd_seg_t segs[GET_MAX_SEGS];
    char *dst[GET_MAX_SEGS];         /* contiguous: where the bytes go; else the buffer */
    const bdl_dt_t *t[GET_MAX_SEGS]; /* NULL: contiguous destination */
    uint64_t cnt[GET_MAX_SEGS];      /* elements of the buffer */
    uint64_t soff[GET_MAX_SEGS];     /* offset of the segment in the buffer's packed stream */
    uint32_t nseg;
    uint64_t bytes;
};

void bdl_get_flush(bdl_get_t *g)
{
    if (!g->nseg)
        return;
    memcpy(bdl_g.win, &g->nseg, sizeof g->nseg);
    memcpy(bdl_g.win + 8, g->segs, (size_t)g->nseg * sizeof(bd_seg_t));
    coll_req(g->x, BD_REQ_COLL_GET);
    bdl_rpc();
    if (bdl_resp()->arg[0])
        g->x->mismatch = 1;
    const char *src = bdl_g.win;
    for (uint32_t i = 0; i < g->nseg; i++) {
        if (!g->t[i]) {
            bdl_lib_mem_discard(g->dst[i], g->segs[i].len);
            memcpy(g->dst[i], src, g->segs[i].len);
        } else {
            bdl_dt_unpack(g->t[i], g->dst[i], g->cnt[i], g->soff[i], src, g->segs[i].len);
        }
        src += g->segs[i].len;
    }
    g->nseg = 0;
    g->bytes = 0;
}

/* bdl_get_part into bytes [sbase, sbase + len) of the stream. */
static void get_range(bdl_get_t *g, int peer, uint64_t off, void *buf, uint64_t count,
                      const bdl_dt_t *t, uint64_t len, uint64_t whole, uint64_t sbase)
{
    char *contig = bdl_dt_contig(t, buf, count);
    if (contig)
        contig += sbase;
    uint64_t done = 0;
    uint64_t limit = bdl_g.window - 8 - GET_MAX_SEGS * sizeof(bd_seg_t);
    if (limit > bdl_g.window / 2)
        limit = bdl_g.window / 2;
    while (done < len) {
        if (g->nseg == GET_MAX_SEGS || g->bytes >= limit) {
            bdl_get_flush(g);
            continue;
        }
        uint64_t chunk = len - done;
        if (chunk > limit - g->bytes)
            chunk = limit - g->bytes;
        g->segs[g->nseg] = (bd_seg_t){peer, (uint32_t)chunk, off + done, whole};
        g->dst[g->nseg] = contig ? contig + done : buf;
        g->t[g->nseg] = contig ? NULL : t;
        g->cnt[g->nseg] = count;
        g->soff[g->nseg] = sbase + done;
        g->nseg++;
        g->bytes += chunk;
        done += chunk;
    }
}

void bdl_get_part(bdl_get_t *g, int peer, uint64_t off, void *buf, uint64_t count,
                  const bdl_dt_t *t, uint64_t len, uint64_t whole)
{
    get_range(g, peer, off, buf, count, t, len, whole, 0);
}

void bdl_get_span(bdl_get_t *g, int peer, void *buf, uint64_t count, const bdl_dt_t *t,
                  uint64_t soff, uint64_t len)
{
    get_range(g, peer, 0, buf, count, t, len, len, soff);
}

void bdl_get_typed(bdl_get_t *g, int peer, uint64_t off, void *buf, uint64_t count,
                   const bdl_dt_t *t)
{
    bdl_get_part(g, peer, off, buf, count, t, count * t->psize, 0);
}

void bdl_get_whole(bdl_get_t *g, int peer, void *buf, uint64_t count, const bdl_dt_t *t)
{
    bdl_get_part(g, peer, 0, buf, count, t, count * t->psize, count * t->psize);
}

void bdl_get_refuse(bdl_get_t *g, int peer)
{
    if (g->nseg == GET_MAX_SEGS)
        bdl_get_flush(g);
    g->segs[g->nseg] = (bd_seg_t){peer, 0, 0, BD_SEG_REFUSE};
    g->dst[g->nseg] = (char *)g; /* no bytes, but a valid address for memcpy */
    g->t[g->nseg] = NULL;
    g->cnt[g->nseg] = 0;
    g->soff[g->nseg] = 0;
    g->nseg++;
}

bdl_get_t *bdl_get_new(bdl_xfer_t *x)
{
    bdl_get_t *g = malloc(sizeof *g);
    if (!g)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory in a collective");
    g->x = x;
    g->nseg = 0;
    g->bytes = 0;
    return g;
}

void bdl_get_free(bdl_get_t *g) { free(g); }
