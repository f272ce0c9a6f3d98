/* libbdmpi internals: the slave side of BDMPI's MPI. */
#ifndef BDL_LIB_H
#define BDL_LIB_H

#include <stdint.h>

#include "bd_ipc.h"
#include "mpi.h"

/* Hidden context for the library's own point-to-point traffic on behalf
 * of a communicator (user-op reductions), so it never matches user messages. */
#define BDL_CTX_INTERNAL (1 << 30)
/* Point-to-point context of an intercommunicator: the smaller of the two
 * groups' hidden local contexts with this bit set, so both groups derive it
 * alike and it never equals an intracommunicator's context. */
#define BDL_CTX_INTER (1 << 29)

/* BD_CTX_DERIVED (bd_ipc.h) marks contexts the ranks derive from another
 * one and register with their masters themselves: the union communicator
 * of an intercommunicator (its context | BD_CTX_DERIVED) and the local
 * groups of a duplicated intercommunicator (the new union's context |
 * BD_CTX_DERIVED, | BDL_CTX_GROUP1 for the union's second group). */
#define BDL_CTX_GROUP1 (1 << 27)

typedef struct bdl_comm {
    int used;
    int ctx;
    int rank, size;
    int *world; /* comm rank -> world rank */
    MPI_Errhandler errh;
    uint64_t coll_seq; /* collectives this rank has started on it */
    char name[MPI_MAX_OBJECT_NAME];
    struct bdl_attr *attrs; /* user attributes (group.c) */
    int nattrs;
    struct bdl_topo *topo; /* virtual topology or NULL (topo.c) */
    /* Intercommunicators (intercomm.c): rank, size and world are the local
     * group's; point-to-point addresses the remote group.  local is a hidden
     * intracommunicator of the local group that carries the collectives. */
    int inter;
    int rsize;
    int *rworld; /* remote rank -> world rank */
    MPI_Comm local;
    /* ... and ucomm a hidden intracommunicator of both groups (the union),
     * on which the nonblocking collectives run; local rank r is its rank
     * uoff + r, remote rank r its rank roff + r. */
    MPI_Comm ucomm;
    int uoff, roff;
    /* MPI_Comm_idup's new communicator before the request completes: the
     * handle is taken but names no communicator yet. */
    int pending;
} bdl_comm_t;

/* Size of the group a communicator's point-to-point ranks name, and the
 * world rank of one of them. */
static inline int bdl_comm_peers(const bdl_comm_t *c) { return c->inter ? c->rsize : c->size; }
static inline int bdl_comm_peer_world(const bdl_comm_t *c, int r)
{
    return c->inter ? c->rworld[r] : c->world[r];
}

enum { BDL_RQ_FREE = 0, BDL_RQ_SEND, BDL_RQ_SSEND, BDL_RQ_RECV, BDL_RQ_COLL };

typedef struct bdl_request {
    int kind;
    int done; /* completed; status saved, not yet reported */
    int err;
    uint64_t rid; /* posted receive id / sync send id */
    void *buf;
    struct bdl_dt *dt; /* receive datatype (a reference held until delivery) */
    uint64_t count;    /* receive count */
    uint64_t send_id;  /* a nonblocking send's id (MPI_Cancel names it), 0 if none */
    int send_dst;      /* ... and its destination's world rank */
    MPI_Status status;
    /* Persistent requests (MPI_Send_init, MPI_Recv_init, ...): the call to
     * repeat at each MPI_Start; inactive between completion and the next start. */
    int persistent, inactive, pkind;
    int detached; /* freed by the program while its receive is still posted */
    const void *pbuf;
    int pcount, ppeer, ptag;
    MPI_Datatype pdt; /* an alias handle (bdl_dt_alias), freed with the request */
    MPI_Comm pcomm;
    struct bdl_nbc *nbc;   /* kind BDL_RQ_COLL: the nonblocking collective (coll.c) */
    struct bdl_greq *greq; /* kind BDL_RQ_GREQ: the program's callbacks (greq.c) */
} bdl_request_t;
/* A generalized request (MPI_Grequest_start): done is set by the program. */
#define BDL_RQ_GREQ 16

typedef struct bdl_user_op {
    MPI_User_function *fn;
    int commute;
    int used;
} bdl_user_op_t;

typedef struct bdl_lib {
    int initialized, finalized;
    int thread_level;
    bd_shm_hdr_t *hdr;
    bd_slot_t *slot;
    char *win;
    uint64_t window;
    uint64_t threshold;
    int event_fd;
    int world_rank, world_size;
    uint64_t next_rid;
    uint64_t spill_seq;
    bdl_comm_t *comms;
    int ncomms;
    bdl_request_t *reqs;
    int nreqs;
    bdl_user_op_t *ops;
    int nops;
    int mem_active; /* the memory manager owns large allocations */
    int ndetached;  /* freed receives still posted (p2p.c) */
} bdl_lib_t;

extern bdl_lib_t bdl_g;

/* init.c */
void bdl_rpc(void);
/* The error handler of a communicator nobody set one on: it follows
 * MPI_COMM_WORLD's current handler, as MPICH does (programs and test suites
 * set MPI_ERRORS_RETURN on MPI_COMM_WORLD and expect it of the communicators
 * they created before); MPI_ERRORS_ARE_FATAL when WORLD has none set either. */
#define BDL_ERRH_DEFAULT ((MPI_Errhandler)-1)
/* The handler that takes c's errors (init.c). */
MPI_Errhandler bdl_errh_effective(const bdl_comm_t *c);
/* code is a predefined error class or a code/class the program added. */
int bdl_errcode_valid(int code);
int bdl_errcode_lastused(void); /* MPI_LASTUSEDCODE */

static inline bd_req_t *bdl_req_begin(uint32_t code)
{
    bd_req_t *r = &bdl_g.slot->req;
    __builtin_memset(r, 0, sizeof *r);
    r->code = code;
    return r;
}
static inline bd_resp_t *bdl_resp(void) { return &bdl_g.slot->resp; }
/* Report an error as MPI requires: through comm's error handler (MPI_COMM_WORLD's
 * when comm is not valid).  Returns code when the handler returns. */
int bdl_error(MPI_Comm comm, int code, const char *call, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Abort the job from inside the library. */
_Noreturn void bdl_fatal(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define BDL_CHECK_INIT(call)                                                                       \
    do {                                                                                           \
        if (!bdl_g.initialized || bdl_g.finalized)                                                 \
            bdl_fatal(MPI_ERR_OTHER, "%s called %s MPI_Init", call,                                \
                      bdl_g.finalized ? "after MPI_Finalize, not between it and" : "before");      \
    } while (0)

/* mem.c */
void bdl_lib_mem_init(void);
void bdl_lib_mem_stats(void);
void bdl_lib_mem_command(void);
void bdl_lib_mem_idle(void);
uint64_t bdl_lib_mem_resident(void);
void bdl_lib_mem_discard(void *buf, uint64_t len);
void bdl_lib_mem_prepare(const void *buf, uint64_t len, int for_write);

/* comm.c */
bdl_comm_t *bdl_comm_get(MPI_Comm comm);
int bdl_comm_add(int ctx, int rank, int size, int *world, MPI_Errhandler errh);
void bdl_comm_setup_predefined(void);
int bdl_world_node(int world);
/* Make the communicator ctx of the world ranks world[n] known to this
 * rank's master (BD_REQ_COMM_REGISTER); -1 if the list does not fit the window. */
int bdl_comm_register(int ctx, const int *world, int n);

/* comm.c: collective creation from comm (color MPI_UNDEFINED gives MPI_COMM_NULL). */
int bdl_comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm, const char *call);

/* comm.c: the intracommunicator of exactly the world ranks mem[n] (in that
 * order), collective over them alone; tag < 0 is for the library's own use. */
int bdl_comm_create_members(MPI_Comm parent, const int *mem, int n, int tag, MPI_Comm *newcomm,
                            const char *call);

/* intercomm.c: intercommunicator creation and collectives (comm is c's
 * handle; c is valid and c->inter is set). */
int bdl_inter_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm, const char *call);
int bdl_inter_barrier(bdl_comm_t *c, MPI_Comm comm);
int bdl_inter_bcast(bdl_comm_t *c, MPI_Comm comm, void *buf, int count, MPI_Datatype dt, int root);
int bdl_inter_reduce(bdl_comm_t *c, MPI_Comm comm, const void *sendbuf, void *recvbuf, int count,
                     MPI_Datatype dt, MPI_Op op, int root);
int bdl_inter_allreduce(bdl_comm_t *c, MPI_Comm comm, const void *sendbuf, void *recvbuf, int count,
                        MPI_Datatype dt, MPI_Op op);
/* counts NULL: every rank gets block elements (Reduce_scatter_block). */
int bdl_inter_reduce_scatter(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *sendbuf,
                             void *recvbuf, const int *counts, int block, MPI_Datatype dt,
                             MPI_Op op);
/* recvcounts/displs (sendcounts/displs) NULL for the fixed-count variants. */
int bdl_inter_gather(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *sendbuf,
                     int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                     const int *recvcounts, const int *displs, MPI_Datatype recvtype, int root);
int bdl_inter_scatter(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *sendbuf,
                      int sendcount, const int *sendcounts, const int *displs,
                      MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                      int root);
int bdl_inter_allgather(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *sendbuf,
                        int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        const int *recvcounts, const int *displs, MPI_Datatype recvtype);
int bdl_inter_alltoall(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *sendbuf,
                       int sendcount, const int *sendcounts, const int *sdispls,
                       MPI_Datatype sendtype, void *recvbuf, int recvcount, const int *recvcounts,
                       const int *rdispls, MPI_Datatype recvtype);
/* Displacements in bytes, a type per remote rank. */
int bdl_inter_alltoallw(bdl_comm_t *c, MPI_Comm comm, const char *call, const void *sendbuf,
                        const int *sendcounts, const int *sdispls, const MPI_Datatype *sendtypes,
                        void *recvbuf, const int *recvcounts, const int *rdispls,
                        const MPI_Datatype *recvtypes);
/* MPI_Comm_idup of an intercommunicator: the split of its union that made
 * the new union (context ctx, the caller its rank urank of un members uworld,
 * taken over) is complete; make the pending entry h the new
 * intercommunicator. */
void bdl_inter_idup_done(MPI_Comm h, int ctx, int urank, int un, int *uworld);

/* group.c: groups, attributes */
int bdl_group_new(int n, const int *world);        /* a group handle (copies world), or -1 */
const int *bdl_group_members(MPI_Group g, int *n); /* NULL if g is not a valid group */
int bdl_attr_copy_all(MPI_Comm oldcomm, MPI_Comm newcomm, const char *call);
int bdl_attr_delete_all(MPI_Comm comm, const char *call);
int bdl_attr_get(bdl_comm_t *c, int keyval, void **val, int *flag);

/* topo.c */
struct bdl_topo *bdl_topo_dup(const struct bdl_topo *t);
void bdl_topo_free(struct bdl_topo *t);
/* The neighbours of this rank in its communicator's topology, in the order
 * of the neighbourhood collectives (MPI 3.1 7.6); MPI_PROC_NULL at the
 * edges of a non-periodic Cartesian grid. */
typedef struct bdl_nbrs {
    int cart; /* Cartesian: block 2d is the -1 neighbour, 2d+1 the +1 one */
    int indeg, outdeg;
    int *in, *out;
} bdl_nbrs_t;
int bdl_topo_neighbors(const bdl_comm_t *c, bdl_nbrs_t *nb); /* -1: no topology or no memory */
void bdl_nbrs_free(bdl_nbrs_t *nb);

/* p2p.c */
/* 0 and *size (bytes per element) when dt is committed and count elements
 * at buf are always count * *size bytes at buf; -1 otherwise. */
int bdl_check_dtype(MPI_Datatype dt, int *size);
int bdl_send_bytes(int ctx, int world_dst, int myrank, int tag, const void *buf, uint64_t n,
                   int sync, uint64_t *sync_id);
/* Send count elements of t at buf (packed on the way). */
int bdl_send_typed(int ctx, int world_dst, int myrank, int tag, const void *buf, uint64_t count,
                   const struct bdl_dt *t, int sync, uint64_t *sync_id);
/* Blocking receive of up to cap bytes; fills st; returns MPI_SUCCESS or MPI_ERR_TRUNCATE. */
int bdl_recv_bytes(int ctx, int src, int tag, void *buf, uint64_t cap, MPI_Status *st);
/* Blocking receive into count elements of t at buf (unpacked on the way). */
int bdl_recv_typed(int ctx, int src, int tag, void *buf, uint64_t count, const struct bdl_dt *t,
                   MPI_Status *st);
void bdl_status_empty(MPI_Status *st);
int bdl_req_new(int kind);                    /* a new request handle of that kind */
bdl_request_t *bdl_req_lookup(MPI_Request h); /* NULL if h names no request */

/* greq.c: generalized requests, called from p2p.c's request handling. */
void bdl_greq_wait(bdl_request_t *q);                 /* until MPI_Grequest_complete */
void bdl_greq_pause(void);                            /* a short sleep while polling */
int bdl_greq_query(bdl_request_t *q, MPI_Status *st); /* query_fn into q->status (and *st) */
int bdl_greq_finish(bdl_request_t *q);                /* query_fn, then free_fn: completion */
int bdl_greq_cancel(bdl_request_t *q);
int bdl_greq_free(bdl_request_t *q); /* MPI_Request_free */
void bdl_p2p_reap_detached(void);

/* dtype.c: datatype descriptors.  One element of a type is `nruns` runs of
 * equal blocks in type-map order; its packed stream is those blocks back to
 * back (psize bytes per element), which is what travels between ranks. */
typedef struct bdl_run {
    int64_t off;    /* first block, bytes from the element's origin */
    uint64_t len;   /* bytes per block */
    uint64_t cnt;   /* blocks */
    int64_t stride; /* bytes from one block to the next */
} bdl_run_t;

typedef struct bdl_sig {
    struct bdl_dt *t; /* the type signature is t's, reps times */
    uint64_t reps;
} bdl_sig_t;

typedef struct bdl_dt {
    int predefined;
    int committed;
    int refs; /* handles naming it, types built from it, pending receives */
    int combiner;
    uint64_t psize;  /* packed bytes of one element */
    uint64_t size;   /* MPI_Type_size (the same as psize) */
    uint64_t nelem;  /* predefined elements in one element (what reductions fold) */
    uint64_t nbasic; /* basic elements in one (MPI_Get_elements: a pair type has 2) */
    int basic;       /* the predefined type of all basic elements; 0 none; -1 mixed */
    int align;       /* strictest alignment of the basic elements */
    int sticky;      /* BDL_DT_EXPLICIT_*: bounds set by MPI_LB/MPI_UB markers or
                          resized, subarray, darray; an explicit ub gets no padding */
    int contig;      /* any count of elements is one block of bytes */
    int64_t lb, extent, true_lb, true_extent;
    uint32_t nruns;
    bdl_run_t *runs;
    uint64_t *pre; /* pre[i]: packed bytes before run i; pre[nruns] = psize */
    uint32_t nsig;
    bdl_sig_t *sig;
    int ni, na, nd; /* MPI_Type_get_contents */
    int *ints;
    MPI_Aint *aints;
    struct bdl_dt **types;
    bdl_run_t run1; /* predefined types: their single run */
    uint64_t pre1[2];
    bdl_run_t run2[2]; /* pair types whose index is apart from the value */
    uint64_t pre2[3];
    char name[MPI_MAX_OBJECT_NAME];
} bdl_dt_t;

#define BDL_DT_EXPLICIT_LB 1
#define BDL_DT_EXPLICIT_UB 2

/* The descriptor of a valid (not freed) handle, committed or not; NULL otherwise. */
bdl_dt_t *bdl_dt_lookup(MPI_Datatype dt);
const bdl_dt_t *bdl_dt_byte(void);
/* For communication: dt must be valid and committed; otherwise the error is
 * reported on comm (what: "send", "receive" or "") and its code returned. */
int bdl_dt_check(MPI_Comm comm, const char *call, const char *what, MPI_Datatype dt,
                 bdl_dt_t **out);
void bdl_dt_retain(bdl_dt_t *t);
void bdl_dt_release(bdl_dt_t *t);
/* A hidden second handle naming dt's descriptor (dt itself if predefined or
 * invalid; MPI_DATATYPE_NULL out of memory): a persistent request keeps one
 * so the program may free dt while the request lives (MPI 3.1 4.1.10). */
MPI_Datatype bdl_dt_alias(MPI_Datatype dt);
void bdl_dt_alias_free(MPI_Datatype h);
/* The packed stream of count elements at buf when it is one block of memory
 * (start of that block), else NULL. */
char *bdl_dt_contig(const bdl_dt_t *t, const void *buf, uint64_t count);
/* Bytes [off, off+len) of the packed stream of count elements at buf. */
void bdl_dt_pack(const bdl_dt_t *t, const void *buf, uint64_t count, uint64_t off, void *out,
                 uint64_t len);
void bdl_dt_unpack(const bdl_dt_t *t, void *buf, uint64_t count, uint64_t off, const void *in,
                   uint64_t len);
/* The first nbytes of the packed stream of (sbuf, scount, st) into (rbuf, rcount, rt). */
void bdl_dt_copy(const bdl_dt_t *st, const void *sbuf, uint64_t scount, const bdl_dt_t *rt,
                 void *rbuf, uint64_t rcount, uint64_t nbytes);
/* Zeroed memory for count elements of t: returns what to free; *base is the
 * buffer address to use with t (it may lie outside the allocation). */
void *bdl_dt_alloc(const bdl_dt_t *t, uint64_t count, void **base);

/* typeattr.c: datatype attributes (MPI_Type_dup, MPI_Type_free) */
int bdl_type_attr_copy_all(MPI_Datatype oldtype, MPI_Datatype newtype, const char *call);
int bdl_type_attr_delete_all(MPI_Datatype dt, const char *call);
void bdl_type_attr_drop(MPI_Datatype dt);

/* coll.c */
int bdl_user_op_fn(MPI_Op op, bdl_user_op_t **out);
/* Nonblocking collectives: progress one (returns 1 once it is complete;
 * blocking: wait for it); poll, or with block wait for, several at once
 * (returns how many completed; a poll that finds none gives the run slot
 * away only if yield); free. */
typedef struct bdl_nbc bdl_nbc_t;
int bdl_nbc_progress(bdl_nbc_t *nb, int blocking);
int bdl_nbc_poll(bdl_nbc_t **nbs, int n, int block, int yield);
int bdl_nbc_done(const bdl_nbc_t *nb);
int bdl_nbc_err(const bdl_nbc_t *nb); /* the error a completed one reports */
void bdl_nbc_free(bdl_nbc_t *nb);
/* A request complete from the start; one that completes with the library's
 * own point-to-point requests reqs[n] (an array it takes over). */
MPI_Request bdl_nbc_completed(void);
MPI_Request bdl_nbc_of_requests(MPI_Request *reqs, int n);
/* Communicator creation as a nonblocking collective on c (size > 1): a split
 * with color and key, call api (BD_API_COMM_DUP); once it completes, fin
 * gets the new context (0: none), the caller's rank, the size and the
 * members (taken over).  request NULL: complete it now. */
typedef void (*bdl_nbc_fin_t)(void *arg, int ctx, int rank, int size, int *world);
int bdl_nbc_split(bdl_comm_t *c, int color, int key, int api, bdl_nbc_fin_t fin, void *arg,
                  MPI_Request *request);

/* p2p.c: the request of a started nonblocking collective (it owns nb). */
MPI_Request bdl_req_new_coll(bdl_nbc_t *nb);

/* rma.c: serve the RMA requests waiting for this rank (lock, unlock, flush,
 * operations as target), called by bdl_rpc: before a request when the master
 * has flagged some (rma_pending), and on BD_CMD_RMA while blocked. */
void bdl_rma_serve_pending(void);
uint32_t bdl_rma_serve_command(void); /* returns the resp_seq to wait past */

#endif
