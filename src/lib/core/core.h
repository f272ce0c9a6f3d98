/* libbdmpi, bottom room: the rank's library state, the RPC to its master,
 * error reporting, the communicator table and the memory manager's glue.
 * Includes nothing of the library above it (docs/design.md, "Layers"). */
#ifndef BDL_CORE_H
#define BDL_CORE_H

#include <stdint.h>

#include "bd_fault.h"
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
/* The hidden communicator MPIX_Comm_agree/iagree run on (mpi/ulfm.c): the
 * communicator's context | BD_CTX_DERIVED | BDL_CTX_AGREE, registered by
 * each member when it first agrees, so agreements match only each other,
 * in their own order, whatever other collectives are in flight. */
#define BDL_CTX_AGREE (1 << 26)
/* The tag of a revoke notice (MPIX_Comm_revoke) on a communicator's hidden
 * context: the receiving rank's matching marks the communicator revoked
 * and fails its pending receives instead of queueing the notice. */
#define BDL_TAG_REVOKE BD_TAG_REVOKE

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
    /* ULFM (mpi/ulfm.c): revoked by some member (communication on it
     * fails with MPIX_ERR_REVOKED), and the hidden communicator of its
     * agreements (0: not made yet; freed with it). */
    int revoked;
    int revoke_told; /* intercommunicator: its hidden ones revoked here too */
    MPI_Comm agree;
    /* Contexts reserved for this communicator's next dups (comm.c
     * comm_dup): dup_left of them from dup_next on; dup_block: how many
     * its last dup through the master reserved (they grow to
     * BD_DUP_RESERVE_MAX).  Every member counts alike. */
    int dup_next, dup_left, dup_block;
} bdl_comm_t;

/* Size of the group a communicator's point-to-point ranks name, and the
 * world rank of one of them. */
/* The hidden context of the library's own point-to-point traffic on c. */
static inline int bdl_comm_ictx(const bdl_comm_t *c) { return c->ctx | BDL_CTX_INTERNAL; }
static inline int bdl_comm_peers(const bdl_comm_t *c) { return c->inter ? c->rsize : c->size; }
static inline int bdl_comm_peer_world(const bdl_comm_t *c, int r)
{
    return c->inter ? c->rworld[r] : c->world[r];
}

typedef struct bdl_user_op {
    MPI_User_function *fn;
    int commute;
    int used;
    MPI_User_function_c *fn_c; /* MPI_Op_create_c's (fn NULL) */
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
    int world_rank, world_size; /* world_rank: this rank's id in the whole job (bd_ipc.h) */
    int appnum;                 /* MPI_APPNUM: a spawned rank's command in its spawn */
    int initial_errh;           /* the initial error handler (bdl_errh_initial_index) */
    MPI_Comm parent;            /* MPI_Comm_get_parent (dynamic processes) */
    uint64_t next_rid;
    uint64_t spill_seq;
    bdl_comm_t *comms;
    int ncomms;
    struct bdl_request *reqs;
    int nreqs;
    /* No free request below this index (request.c): where the search for
     * one starts.  Only a hint: a free that does not lower it costs a
     * search from 1 before the table grows. */
    int req_free_from;
    bdl_user_op_t *ops;
    int nops;
    int mem_active; /* the memory manager owns large allocations */
    int ndetached;  /* freed receives still posted (p2p.c) */
    /* A collective in the ranks (mpi/coll_local.c) is receiving: its API
     * code (0: none), root and communicator context, which a wait in the
     * master names so a deadlock against a collective through the master
     * is reported as the mismatch it is. */
    int lc_api, lc_root, lc_ctx;
    /* ... and, for a nonblocking one in MPI_Wait, the world rank whose
     * message it waits for (-1: any). */
    int lc_peer;
    /* The MPI function in progress (set by BDL_CHECK_INIT), which the
     * timeline names when the rank waits in the master. */
    const char *mpi_call;
    /* MPI 4.0 (mpi/env.c, mpi/session.c): initialized and finalized above
     * say whether the library instance is up; the World Model (MPI_Init,
     * MPI_Finalize: 0 not yet, 1 initialized, 2 finalized) and the open
     * sessions each hold it, and the last of them to end ends it. */
    int world_state;
    int nsessions;
    /* With -nr 1, a message was put in the mailbox of a rank asleep in the
     * master without ringing it (match.c wake_receiver): the master learns
     * of it at our next request, and a failed poll makes one. */
    int ring_owed;
    /* Polls (mt.c bdl_p2p_poll_failed): when this rank last got its run
     * slot, and the messages it has sent (msg.c). */
    uint64_t run_since_ns;
    uint64_t nsent;
    int lent; /* serving RMA while it waits in the master (no run slot of its own) */
    /* MPI_THREAD_MULTIPLE (mt.c): the request and communicator tables live
     * in reservations of this many entries and never move (0: they move
     * when they grow). */
    int nreqs_max, ncomms_max;
} bdl_lib_t;

extern bdl_lib_t bdl_g;

/* rpc.c: one request to the master (in the slot, bdl_req_begin) and its
 * answer (bdl_resp); commands the master sends meanwhile are served. */
void bdl_rpc(void);
uint64_t bdl_now_ns(void); /* CLOCK_MONOTONIC */
/* What the RPC does for the room above, without calling up into it: the
 * one-sided communication code installs it when this rank enables RMA
 * (its first window), before the master can route RMA to it.  pending runs
 * before a request (not an abort) while the master has flagged
 * rma_pending; command serves BD_CMD_RMA while the rank waits for an answer
 * and returns the resp_seq to wait past. */
typedef struct bdl_rpc_service {
    void (*pending)(void);
    uint32_t (*command)(void);
} bdl_rpc_service_t;
void bdl_rpc_set_service(const bdl_rpc_service_t *svc);
/* Serve what the master has flagged (rma_pending), outside any request:
 * for polls that find nothing, which would otherwise make no request while
 * no rank waits for a run slot, so a target that only polls would never
 * serve the origins that wait for it.  One load when nothing is flagged. */
void bdl_rpc_serve_flagged(void);

/* error.c */
/* The error handler of a communicator nobody set one on: it follows
 * MPI_COMM_WORLD's current handler, as MPICH does (programs and test suites
 * set MPI_ERRORS_RETURN on MPI_COMM_WORLD and expect it of the communicators
 * they created before); MPI_ERRORS_ARE_FATAL when WORLD has none set either. */
#define BDL_ERRH_DEFAULT ((MPI_Errhandler)-1)
/* The first handle of a user error handler (after MPI_ERRORS_ABORT). */
#define BDL_ERRH_USER0 4
/* The handler that takes c's errors. */
MPI_Errhandler bdl_errh_effective(const bdl_comm_t *c);
/* MPI 4.0's initial error handler (mpiexec -initial-errhandler, the spawn
 * info key mpi_initial_errhandler): index 0 mpi_errors_are_fatal, 1
 * mpi_errors_abort, 2 mpi_errors_return, as the option's values.  The
 * index of a name (-1: none of them), and the handle and name of an index. */
int bdl_errh_initial_index(const char *name);
MPI_Errhandler bdl_errh_initial_handle(int index);
const char *bdl_errh_initial_name(int index);
/* User error handlers (handles from 3 up): the function of a live one (NULL
 * otherwise); eh is predefined or a live user handler; create one
 * (MPI_SUCCESS, MPI_ERR_NO_MEM or MPI_ERR_INTERN: no slot); free one (it
 * stays valid for the communicators that use it). */
MPI_Comm_errhandler_function *bdl_errh_user(MPI_Errhandler eh);
int bdl_errh_valid(MPI_Errhandler eh);
int bdl_errh_create(MPI_Comm_errhandler_function *fn, MPI_Errhandler *eh);
void bdl_errh_free(MPI_Errhandler eh);
/* code is a predefined error class or a code/class the program added. */
int bdl_errcode_valid(int code);
int bdl_errcode_lastused(void); /* MPI_LASTUSEDCODE */
/* Codes and classes the program adds (MPI_Add_error_*), above
 * MPI_ERR_LASTCODE: add one of class errclass (< 0: a new class, its own
 * class) and return it, -1 when BDL_MAX_USER_CODES are in use; the class of
 * an added code (-1 for any other code); its string ("" if none). */
#define BDL_MAX_USER_CODES 256
int bdl_errcode_add(int errclass);
int bdl_errcode_class(int code);
const char *bdl_errcode_string(int code);
void bdl_errcode_set_string(int code, const char *s);
const char *bdl_err_class_name(int errclass); /* "MPI_ERR_..." */

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
/* Abort the job: the master kills every rank (msg is what it prints, with
 * code); before MPI_Init, print msg and exit. */
void bdl_abort(int code, const char *msg);
/* Abort the job from inside the library. */
_Noreturn void bdl_fatal(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* mt.c: MPI_THREAD_MULTIPLE.  Every entry point holds the rank's lock
 * for its whole body (BDL_MT_GUARD, its first statement), taken again by the
 * entry points it calls; bdl_mt_nap gives it up for a moment inside a wait
 * (only while bdl_mt_busy: another thread has called MPI), bdl_mt_pause
 * also serves flagged RMA and yields the run slot first.  Before
 * bdl_mt_enable (MPI_Init_thread or MPI_Session_init asking for it) all of
 * it costs one load. */
extern int bdl_mt_on;
int bdl_mt_guard(void);
void bdl_mt_unguard(int *held);
int bdl_mt_busy(void);
void bdl_mt_nap(void);
void bdl_mt_pause(void);
void bdl_mt_enable(void);
/* fn frees what the library kept for the calling thread; run by every
 * thread that called MPI when it ends (registered once). */
void bdl_mt_at_thread_exit(void (*fn)(void));
#define BDL_MT_MAX_REQS (1 << 18)
#define BDL_MT_MAX_COMMS (1 << 16)
#define BDL_MT_GUARD                                                                               \
    __attribute__((cleanup(bdl_mt_unguard), unused)) int bdl_mt_held_ = bdl_mt_guard()

#define BDL_CHECK_INIT(call)                                                                       \
    do {                                                                                           \
        bdl_g.mpi_call = (call);                                                                   \
        if (!bdl_g.initialized || bdl_g.finalized)                                                 \
            bdl_fatal(MPI_ERR_OTHER, "%s called %s MPI_Init", call,                                \
                      bdl_g.finalized ? "after MPI_Finalize, not between it and" : "before");      \
    } while (0)

/* The calls MPI 4.0 allows before initialization (the info calls): they
 * only refuse to run after the library instance has ended. */
#define BDL_CHECK_NOT_ENDED(call)                                                                  \
    do {                                                                                           \
        bdl_g.mpi_call = (call);                                                                   \
        if (bdl_g.finalized)                                                                       \
            bdl_fatal(MPI_ERR_OTHER, "%s called after MPI_Finalize", call);                        \
    } while (0)

/* mem.c */
void bdl_lib_mem_init(void);
void bdl_lib_mem_stats(void);
void bdl_lib_mem_command(void);
void bdl_lib_mem_idle(void);
uint64_t bdl_lib_mem_resident(void);
uint64_t bdl_lib_mem_phase_key(const bd_req_t *r);
void bdl_lib_mem_phase(uint64_t key);
void bdl_lib_mem_discard(void *buf, uint64_t len);
/* Does the memory manager load buf's whole allocation when any of it is
 * touched (an AR strategy, buf managed)? */
int bdl_lib_mem_loads_whole(const void *buf);
/* Is buf..+len managed memory worth not filling before it is needed (at
 * least an sbpage of it)? */
int bdl_lib_mem_managed(const void *buf, uint64_t len);
void bdl_lib_mem_prepare(const void *buf, uint64_t len, int for_write);
/* Memory outside the manager that stays resident (shared-memory windows):
 * take bytes from the node's budget (-mem) for good, waiting for the grant
 * like a load; 0 or -errno.  unpin gives them back. */
int bdl_lib_mem_pin(uint64_t bytes);
void bdl_lib_mem_unpin(uint64_t bytes);

/* ctl.c: control exchanges among c's members for the library itself
 * (communicator creation), point-to-point on c's internal context: n bytes
 * at buf from root to every member; n bytes from every member into all
 * (member r's at all + r * n) at root.  Blocking; MPI_SUCCESS or the
 * receive's error. */
int bdl_ctl_bcast(const bdl_comm_t *c, int tag, void *buf, uint64_t n, int root);
int bdl_ctl_gather(const bdl_comm_t *c, int tag, const void *mine, uint64_t n, void *all, int root);

/* commtab.c: the communicator table (bdl_g.comms; handles index it). */
bdl_comm_t *bdl_comm_get(MPI_Comm comm); /* NULL unless comm names a usable communicator */
/* A new entry (world is taken over); its handle, or -1 out of memory. */
int bdl_comm_add(int ctx, int rank, int size, int *world, MPI_Errhandler errh);
int bdl_world_node(int world); /* the node of a world rank */
/* Make the communicator ctx of the world ranks world[n] known to this
 * rank's master (BD_REQ_COMM_REGISTER); -1 if the list does not fit the window. */
int bdl_comm_register(int ctx, const int *world, int n);
/* A revoke notice for context ctx arrived (match.c): mark every
 * communicator whose point-to-point context is ctx revoked; 1 if one was. */
int bdl_comm_revoke_ctx(int ctx);
/* Is a communicator whose point-to-point context is ctx revoked? */
int bdl_comm_ctx_revoked(int ctx);
/* Revoke comm from this rank (MPIX_Comm_revoke): unless a notice did
 * already, mark it, fail this rank's receives on it, send every other
 * member a notice and tell the master; for an intercommunicator, its
 * hidden local and union communicators the same way, once.  MPI_SUCCESS
 * or MPI_ERR_NO_MEM. */
int bdl_comm_revoke_tell(MPI_Comm comm);
/* Intercommunicators a notice revoked (bdl_comm_revoke_ctx) have their
 * hidden communicators revoked by this member too, once: called after a
 * drain, outside the matching. */
void bdl_comm_revoke_spread(void);
/* Did a revoke notice for ctx come before this rank made it (a dup from a
 * reserved range)?  Forgets it. */
int bdl_comm_revoked_early(int ctx);
/* Report MPIX_ERR_REVOKED for call on comm (revoked); returns the code. */
int bdl_comm_revoked_error(MPI_Comm comm, const char *call);

#endif
