/* libbdmpi, bottom room: the nonblocking-collective engine and the
 * user-defined reduction operations it folds with. */
#ifndef BDL_NBC_H
#define BDL_NBC_H

#include "core.h"
#include "dt.h"
#include "request.h"
#include "xfer.h"

/* op.c: the user-defined operations (MPI_Op_create) and applying an op. */
int bdl_user_op_fn(MPI_Op op, bdl_user_op_t **out);
/* A new user op (its handle in *op); -1: out of memory. */
int bdl_user_op_new(MPI_User_function *fn, int commute, MPI_Op *op);
/* Check op against dt (descriptor t); *user gets the user op or NULL.  A
 * predefined op applies to a derived type whose basic elements are all of
 * one predefined type it is defined for (MPI 3.1 5.9.2).  Errors are
 * reported on comm for call. */
int bdl_op_check(MPI_Comm comm, const char *call, MPI_Op op, MPI_Datatype dt, const bdl_dt_t *t,
                 bdl_user_op_t **user);
/* inout = in op inout, count elements of dt, whose descriptor is t (u:
 * op's user op, or NULL). */
void bdl_op_apply(MPI_Op op, bdl_user_op_t *u, MPI_Datatype dt, const bdl_dt_t *t, const void *in,
                  void *inout, uint64_t count);
/* A reduction's op: predefined (u NULL), or a user op (MPI_Op_create)
 * whose function sees dt, the program's type. */
typedef struct bdl_fold_op {
    MPI_Op op;
    bdl_user_op_t *u;
    MPI_Datatype dt;
} bdl_fold_op_t;
/* A fold in rank order, acc = v0, then acc = acc op v_r: a predefined op
 * as the master folds (bd_op_apply(v_r, acc), its operands commute bit for
 * bit), a user op with the function's inout being v_r (its operands in
 * rank order), so a result is the same whichever path computed it (the
 * collectives in the ranks, the master path's GET fold, the user-op
 * chain).  Init with the op, count elements of t and where the packed
 * result goes (acc, count * t->psize bytes), add the packed contributions
 * in rank order (v may be acc for the first), end: the result is in acc
 * (a user op's works in buffers laid out as t in between). */
typedef struct bdl_fold {
    const bdl_fold_op_t *o;
    const bdl_dt_t *t;
    uint64_t count;
    char *acc;
    int added;
    void *a, *b, *amem, *bmem;
} bdl_fold_t;
void bdl_fold_init(bdl_fold_t *f, const bdl_fold_op_t *o, const bdl_dt_t *t, uint64_t count,
                   char *acc);
void bdl_fold_add(bdl_fold_t *f, const char *v);
void bdl_fold_end(bdl_fold_t *f);

/* nbc.c: what a rank still has to do once its part of a collective is
 * complete: its GET plan.  A blocking call does it at once; a nonblocking
 * one keeps it in its request (with copies of the arrays and references to
 * the types) until MPI_Wait/MPI_Test find the collective complete. */
enum {
    BDL_GET_NONE,    /* nothing to fetch */
    BDL_GET_PIECE,   /* count elements of t at buf from the piece of `peer`, from byte off */
    BDL_GET_BLOCKS,  /* block j (0 <= j < nblk) of buf from peer pfirst + j, but not from skip */
    BDL_GET_TBLOCKS, /* the same, each sender's piece starting with a table of where its
                        blocks start and end (mpi/intercomm_nbc.c) */
    BDL_GET_FOLD,    /* pieces of peers first..last, count elements each from byte off, folded */
    BDL_GET_SPLIT,   /* communicator creation: {ctx, rank, size} and the members, to fin */
    BDL_GET_PARTS,   /* a broadcast in nblk parts: part j (pieces of peer j) is bytes
                        [j * part, ...) of the packed stream of count elements of t at buf */
    BDL_GET_BPARTS,  /* an allgather's blocks in bparts parts each: piece r * bparts + j is
                        bytes [j * part, ...) of block r's packed stream (but not skip's) */
};

/* Communicator creation: once it completes, fin gets the new context (0:
 * none), the caller's rank, the size and the members (taken over). */
typedef void (*bdl_nbc_fin_t)(void *arg, int ctx, int rank, int size, int *world);

/* A nonblocking all-to-all that pipelines (-coll-stage): its send side,
 * and how far it has put.  Its pieces are put in MPI_Ialltoall while the
 * master's staging is under the bound; the rest in MPI_Test and MPI_Wait,
 * or all at once before the rank waits in any other call
 * (bdl_nbc_pipe_settle). */
enum {
    BDL_PP_A2A,     /* an all-to-all: block r to rank r, from r = me + 1 on */
    BDL_PP_ONE,     /* one piece (peer -1): a gather's non-root, an allgather's block */
    BDL_PP_SCATTER, /* a scatter's root: block r to rank r in rank order, but its own */
    BDL_PP_PARTS,   /* a broadcast's root: nparts parts of `part` bytes of the packed stream */
    BDL_PP_NONE,    /* nothing to put: a rank that only takes (a root of a gather, ...) */
};

typedef struct bdl_nbc_pipe {
    int form; /* BDL_PP_* */
    const void *buf;
    int count;
    int *counts, *displs; /* v forms (displacements in extents of t) ... */
    bdl_dt_t *t;
    bdl_dt_t **tv;         /* ... or per-block types, displacements in bytes */
    int root;              /* BDL_PP_SCATTER */
    uint64_t part, nparts; /* BDL_PP_PARTS */
    int next;              /* pieces put so far, in pipeline order (A2A: me + 1, me + 2, ...) */
    char *put;             /* A2A in place: block r put already (the master may ask for one
                              out of order: bdl_nbc_take's hint); NULL otherwise */
    int over;              /* the last answer said the staging is past the bound */
    int arrived;           /* every piece is put and the master knows it */
    int listed;            /* in the pending list bdl_nbc_pipe_settle walks */
} bdl_nbc_pipe_t;

typedef struct bdl_nbc {
    bdl_xfer_t xf; /* the instance (its ctx and rank are the communicator's) */
    int size;
    MPI_Comm comm; /* for a blocking call's error: its handle and name */
    const char *call;
    int ready, done, owns;
    int err; /* what the request reports (MPI_ERR_TRUNCATE) */
    int gkind;
    int whole; /* BDL_GET_PIECE, BDL_GET_BLOCKS: each piece read is all the sender sent */
    int peer;
    uint64_t off;
    void *buf;
    uint64_t count;
    bdl_dt_t *t;
    int nblk, pfirst, skip; /* BDL_GET_BLOCKS, BDL_GET_TBLOCKS, BDL_GET_PARTS */
    uint64_t part;          /* BDL_GET_PARTS, BDL_GET_BPARTS: bytes of each part but the last */
    uint64_t bparts;        /* BDL_GET_BPARTS: parts per block */
    int tidx, tn;           /* BDL_GET_TBLOCKS: this rank's entry of the senders' tables of tn */
    int *counts, *displs;   /* v-style counts and displacements (in extents) per block */
    bdl_dt_t **tv;          /* MPI_Alltoallw: per-block types ... */
    int *bdispls;           /* ... and displacements in bytes */
    int first, last;        /* BDL_GET_FOLD */
    MPI_Op op;
    int user; /* BDL_GET_FOLD with the user op uop (else op is predefined) */
    bdl_user_op_t uop;
    MPI_Datatype dt;
    bdl_nbc_fin_t fin; /* BDL_GET_SPLIT */
    void *fin_arg;
    char *taken;        /* BDL_GET_BLOCKS, bounded staging: block j taken already (bdl_nbc_take) */
    bdl_nbc_pipe_t *pp; /* a nonblocking all-to-all that pipelines (owned) */
    int pipe_nb;        /* it is one (kept once it completes and pp is gone) */
    int nreq;           /* not through the master: complete when these are */
    MPI_Request *reqs;
    /* ... and then this runs once, with their statuses (it may set err; it
     * owns and frees fin_own): the collectives in the ranks unpack and fold
     * what they received. */
    void (*reqs_fin)(struct bdl_nbc *nb, void *arg, const MPI_Status *st);
    void *fin_own;
    int nbreq;                   /* a nonblocking call's (bdl_nbc_launch with a request) */
    int lc_api, lc_root, lc_ctx; /* what a wait for reqs is in (bdl_g.lc_api); 0: none */
    int *lc_peers;               /* ... and the world rank each of reqs is from (owned) */
} bdl_nbc_t;

/* A collective on c, for call (its errors' name; NULL: "collective"),
 * with nothing to GET yet; bdl_xfer_begin(&nb->xf, ...) begins it. */
void bdl_nbc_init(bdl_nbc_t *nb, const bdl_comm_t *c, const char *call);
/* Bounded staging of a blocking all-to-all (BDL_GET_BLOCKS, nb->taken
 * set): GET whole the blocks whose pieces the master offers, until it
 * says go on (final 0: putting may go on; 1: the rest may be got).
 * Returns, in place, the peer whose block to put next (the master has a
 * piece from it this rank may take only then), or -1. */
int bdl_nbc_take(bdl_nbc_t *nb, int final);
/* One COLL_TAKE of mode (see BD_REQ_COLL_TAKE), GETting what it offers;
 * *go gets its flag; returns the in-place hint as bdl_nbc_take. */
int bdl_nbc_take_once(bdl_nbc_t *nb, int mode, int *go);
/* A nonblocking all-to-all (nb->pp set): put in pipeline order; mode 0
 * (MPI_Test) stops past the bound when nothing is offered (giving the run
 * slot away), 3 the same without giving it away, 1 (MPI_Wait) waits for
 * room, 2 puts the rest over the bound.  1 once all are put. */
int bdl_nbc_pipe_put(bdl_nbc_t *nb, int mode);
/* Before this rank waits in the master (rpc.c), or in a collective's
 * COLL_TAKE (except: the one of that nbc, or NULL): every pending
 * nonblocking all-to-all that pipelines puts what it has left and arrives,
 * and takes the pieces offered to it, so that none waits for this rank
 * while it waits elsewhere.  The request being made and the window are
 * kept. */
void bdl_nbc_pipe_settle(const bdl_nbc_t *except);
/* A poll that found nothing (MPI_Iprobe, MPI_Test of other requests): the
 * pending nonblocking all-to-alls put within the bound and take what is
 * offered, as in an MPI_Test of theirs (a rank may poll for a message that
 * comes only once another rank's all-to-all completes). */
void bdl_nbc_pipe_poll(void);
/* How many pipelined nonblocking collectives are pending: a poll that
 * steps them must not sleep in the master for a parked rank (the staging
 * bound counts a rank asleep there as away, match.c bdl_p2p_parked). */
int bdl_nbc_pipes_pending(void);
/* The send side of a nonblocking all-to-all that pipelines (arrays copied,
 * types retained; freed with the request). */
bdl_nbc_pipe_t *bdl_nbc_pipe_new(const void *buf, int count, const int *counts, const int *displs,
                                 bdl_dt_t *t, bdl_dt_t *const *tv, int n);
/* The same for the other nonblocking collectives that pipeline (one node):
 * form BDL_PP_ONE (buf, count of t), BDL_PP_SCATTER (as for an all-to-all,
 * root its rank), BDL_PP_PARTS (count of t at buf in nparts parts of part
 * bytes). */
bdl_nbc_pipe_t *bdl_nbc_pipe_new_form(int form, const void *buf, int count, const int *counts,
                                      const int *displs, bdl_dt_t *t, bdl_dt_t *const *tv, int n,
                                      int root, uint64_t part, uint64_t nparts);
/* Should a nonblocking gather, scatter, allgather or broadcast on c pipeline
 * (-coll-stage set, every rank of c on this node)? */
int bdl_nbc_pipe_eligible(const bdl_comm_t *c);
/* The rank's inputs are all PUT (or the communicator has one rank): a
 * blocking call (request NULL) completes now and reports its error; a
 * nonblocking one tells the master it has arrived and gets a request. */
int bdl_nbc_launch(bdl_nbc_t *nb, MPI_Request *request);
/* A blocking collective's outcome err (0, MPI_ERR_TRUNCATE for counts that
 * disagree, MPIX_ERR_REVOKED) as call's return value on comm. */
int bdl_nbc_status(MPI_Comm comm, const char *call, int err);

/* Nonblocking collectives: progress one (returns 1 once it is complete;
 * blocking: wait for it); poll, or with block wait for, several at once
 * (returns how many completed; a poll that finds none gives the run slot
 * away only if yield); free. */
int bdl_nbc_progress(bdl_nbc_t *nb, int blocking);
int bdl_nbc_poll(bdl_nbc_t **nbs, int n, int block, int yield);
int bdl_nbc_done(const bdl_nbc_t *nb);
int bdl_nbc_err(const bdl_nbc_t *nb); /* the error a completed one reports */
void bdl_nbc_free(bdl_nbc_t *nb);
/* A request complete from the start; one that completes with the library's
 * own point-to-point requests reqs[n] (an array it takes over). */
MPI_Request bdl_nbc_completed(void);
MPI_Request bdl_nbc_of_requests(MPI_Request *reqs, int n);
/* The same, and once they are complete fin(nb, arg, their statuses) runs
 * (at once when n is 0); fin owns arg.  Its error goes to comm's handler.
 * A rank that waits for them waits in the collective api (BD_API_*) with
 * root on the communicator of context ctx, for the message from world rank
 * peers[i] (copied; NULL: not named), for deadlock reports
 * (BD_WAIT_LCOLL). */
MPI_Request
bdl_nbc_of_requests_fin(MPI_Request *reqs, int n,
                        void (*fin)(struct bdl_nbc *nb, void *arg, const MPI_Status *st), void *arg,
                        MPI_Comm comm, int api, int root, int ctx, const int *peers);
/* Communicator creation on c (size > 1) as the collective kind BD_COLL_SPLIT,
 * api (with BD_API_NB when request is not NULL): this rank's input is in[n]
 * bytes; once the master has answered, fin (arg) gets the result.  request
 * NULL: complete it now. */
int bdl_nbc_start_split(bdl_comm_t *c, int api, const void *in, uint64_t n, bdl_nbc_fin_t fin,
                        void *arg, MPI_Request *request);

#endif
