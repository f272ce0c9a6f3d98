/* libbdmpi, bottom room: the PUT/GET client of the master's collectives
 * (src/master/coll.c).  A collective instance is begun with its
 * description; the rank PUTs its outgoing pieces through the window, and
 * once the instance is complete GETs the pieces it needs and ENDs it. */
#ifndef BDL_XFER_H
#define BDL_XFER_H

#include <stdint.h>

#include "core.h"
#include "dt.h"

/* The instance PUT, WAIT, GET and END address (the caller owns it). */
typedef struct bdl_xfer {
    int ctx, rank; /* the communicator's context and this rank's rank in it */
    uint64_t seq;  /* the collective's number on the communicator */
    /* Set when a GET of a whole piece found the sender's size different
     * from what this rank expects (counts that disagree); the caller clears
     * it and turns it into MPI_ERR_TRUNCATE. */
    int mismatch;
    /* Whole contiguous pieces out of memory go as references to their
     * stored copy (BD_REQ_COLL_PUTREF): set for the kinds whose pieces
     * have one reader, in instances that do not pipeline. */
    int byref;
    /* A nonblocking instance not begun yet (session 28): its BEGIN goes
     * with its PUT, or with its ARRIVE when nothing was put, as one
     * BD_REQ_COLL_SMALL (BD_SMALL_BEGIN, BD_SMALL_LAUNCH); meanwhile the
     * description is kept here and the pieces are put in the window after
     * BD_COLL_SMALL_PUT.  Any other request for it before that is an
     * internal error (coll_req). */
    int lazy;
    int put_pending; /* ... the window holds its PUT block (bdl_put_done) */
    bd_coll_desc_t desc;
} bdl_xfer_t;

/* Begin the next collective on c: describe it to the master; x addresses it. */
void bdl_xfer_begin(bdl_xfer_t *x, bdl_comm_t *c, int kind, int root, int dtype, int op,
                    uint64_t count, int api);
/* The same for a blocking all-to-all that pipelines (takes its pieces while
 * it puts, bounded staging): the master may then ship the pieces for other
 * nodes as their receivers make room, not all at once (coll_pipe.c). */
void bdl_xfer_begin_pipe(bdl_xfer_t *x, bdl_comm_t *c, int kind, int api, int inplace);
/* The same for a blocking gather or scatter that pipelines (its root). */
void bdl_xfer_begin_pipe_root(bdl_xfer_t *x, bdl_comm_t *c, int kind, int root, int api);
/* The same for a blocking broadcast that pipelines in nparts parts (each
 * a piece of its own, with every rank but the root reading it). */
void bdl_xfer_begin_pipe_parts(bdl_xfer_t *x, bdl_comm_t *c, int kind, int root, uint64_t nparts,
                               int api);
/* One request code (WAIT, TEST, ARRIVE, END, ...) addressed to x, answered. */
void bdl_xfer_call(const bdl_xfer_t *x, uint32_t code);
/* COLL_WAIT addressed to x, matching messages for our posted receives
 * meanwhile (BD_COLL_WATCH); the answer's status as the master gave it. */
void bdl_xfer_wait(const bdl_xfer_t *x);

/* One block of a small collective: count elements of t at buf (NULL is
 * MPI_BOTTOM) as the piece for peer (PUT: whole), or read from peer's
 * piece (GET: from byte off on; whole: the piece must be that long, else
 * the call reports MPI_ERR_TRUNCATE).  Peer -1 is the rank's own piece of
 * a fold or of a broadcast's root, and the fold's result. */
typedef struct bdl_small_blk {
    int peer;
    const void *buf;
    uint64_t count;
    const bdl_dt_t *t;
    uint64_t off;
    int whole;
} bdl_small_blk_t;

/* A small blocking collective in one request (BD_REQ_COLL_SMALL): desc as
 * bdl_xfer_begin's (its seq is c's next), the nput pieces PUT, then the
 * nget blocks read and unpacked (blocks of no bytes are left out).
 * Returns 1 when done (*status: 0, MPI_ERR_TRUNCATE for counts that
 * disagree, MPIX_ERR_REVOKED), 0 when it cannot be one request (too large
 * for the window, another thread in MPI, pipelined collectives pending;
 * with blocks, a block as large as an sbpage: such a piece may go by
 * reference to its stored copy, unloaded, which this would load): nothing
 * was sent and c's sequence is unchanged.  With receives posted it
 * watches the mailbox as bdl_xfer_wait does. */
int bdl_xfer_small(bdl_comm_t *c, const bd_coll_desc_t *desc, const bdl_small_blk_t *put, int nput,
                   const bdl_small_blk_t *get, int nget, int blocks, int *status);

/* The completion of x (begun, its pieces put) in one request: WAIT, then
 * the nget blocks read and unpacked, then END.  Returns 1 when done
 * (*status as above), 0 when it cannot be one request (nothing sent). */
int bdl_xfer_small_finish(const bdl_xfer_t *x, const bdl_small_blk_t *get, int nget, int blocks,
                          int *status);

/* Batches PUT segments into the window. */
typedef struct bdl_put {
    const bdl_xfer_t *x;
    uint64_t pos;
    uint32_t nseg;
    int over;      /* a PUT's answer said the instance's staging is past -coll-stage */
    uint64_t base; /* where the PUT block starts in the window (a lazy instance's) */
} bdl_put_t;

static inline bdl_put_t bdl_put_start(const bdl_xfer_t *x)
{
    uint64_t base = x->lazy ? BD_COLL_SMALL_PUT : 0;
    return (bdl_put_t){x, base + 8, 0, 0, base};
}
void bdl_put_flush(bdl_put_t *p);
/* The last PUT of the call: kept in the window for the ARRIVE of a lazy
 * instance (nothing may use the window before bdl_nbc_launch), else sent
 * as bdl_put_flush does. */
void bdl_put_done(bdl_put_t *p);
/* ARRIVE: a lazy instance's BEGIN, PUT and ARRIVE in one request; resp.flag
 * says whether its results may be got now. */
void bdl_xfer_arrive(bdl_xfer_t *x);
/* Append the packed stream of count elements of t at buf as bytes
 * [at, at + its length) of the piece for peer, which has total bytes. */
void bdl_put_part(bdl_put_t *p, int peer, const void *buf, uint64_t count, const bdl_dt_t *t,
                  uint64_t at_off, uint64_t total);
/* Append the packed stream of count elements of t at buf as the piece for peer. */
void bdl_put_typed(bdl_put_t *p, int peer, const void *buf, uint64_t count, const bdl_dt_t *t);
/* The piece for peer (count elements of t at buf) by reference to its
 * stored copy, when x->byref, it is contiguous, at least an sbpage, and
 * all out of memory in the node's store: 1 if so (sent), else 0 (nothing
 * sent).  bdl_put_typed and the others do this by themselves. */
int bdl_put_ref(bdl_put_t *p, int peer, const void *buf, uint64_t count, const bdl_dt_t *t);
/* Append bytes [soff, soff + len) of that stream as the whole piece for peer. */
void bdl_put_span(bdl_put_t *p, int peer, const void *buf, uint64_t count, const bdl_dt_t *t,
                  uint64_t soff, uint64_t len);

/* Bounded staging (-coll-stage): COLL_TAKE (final: after the last PUT).
 * The peers whose complete pieces the master offers go to peers (at most
 * max), their number to *n; returns the answer's flag (final 0: the
 * instance is under its bound, put on; 1: GET the rest).  A blocking take
 * (final 0 or 1) matches this rank's posted receives while it waits, as
 * bdl_xfer_wait does. */
int bdl_xfer_take(const bdl_xfer_t *x, int final, int32_t *peers, int max, int *n);
/* Or'ed into final 3 (a test): answer without giving the run slot away. */
#define BDL_TAKE_NO_YIELD 16

/* Batches GET segments; data lands in the given destinations. */
typedef struct bdl_get bdl_get_t;
bdl_get_t *bdl_get_new(bdl_xfer_t *x); /* sets x->mismatch when a GET finds one */
void bdl_get_free(bdl_get_t *g);
void bdl_get_flush(bdl_get_t *g);
/* Fetch len bytes of the piece from peer, starting at byte off of it, into
 * the first len bytes of the packed stream of count elements of t at buf
 * (unpacked on arrival).  whole: 0, or the size the sender's whole piece
 * must have (off is 0). */
void bdl_get_part(bdl_get_t *g, int peer, uint64_t off, void *buf, uint64_t count,
                  const bdl_dt_t *t, uint64_t len, uint64_t whole);
/* Fetch the piece from peer, starting at byte off of it, into count
 * elements of t at buf. */
void bdl_get_typed(bdl_get_t *g, int peer, uint64_t off, void *buf, uint64_t count,
                   const bdl_dt_t *t);
/* All of peer's piece, which must be count elements of t. */
void bdl_get_whole(bdl_get_t *g, int peer, void *buf, uint64_t count, const bdl_dt_t *t);
/* All of peer's piece, which must be len bytes, into bytes [soff, soff +
 * len) of the packed stream of count elements of t at buf. */
void bdl_get_span(bdl_get_t *g, int peer, void *buf, uint64_t count, const bdl_dt_t *t,
                  uint64_t soff, uint64_t len);
/* Refuse the piece from peer this rank was offered but expects nothing of
 * (counts that disagree: the flush reports a mismatch). */
void bdl_get_refuse(bdl_get_t *g, int peer);

/* buf + off without pointer arithmetic on MPI_BOTTOM. */
static inline char *bdl_at(const void *buf, int64_t off)
{
    return (char *)((intptr_t)buf + (intptr_t)off);
}

/* Elements and byte displacement of rank r's block in a v-style or regular buffer. */
static inline uint64_t bdl_vcount(const int counts[], int count, int r)
{
    return (uint64_t)(counts ? counts[r] : count);
}

static inline int64_t bdl_voff(const int displs[], int count, int r, const bdl_dt_t *t)
{
    return displs ? (int64_t)displs[r] * t->extent : (int64_t)r * count * t->extent;
}

#endif
