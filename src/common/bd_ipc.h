/* The master <-> slave protocol.
 *
 * The master creates one memfd (so no name is ever left in /dev/shm) that
 * every slave inherits.  It holds a header and one slot per slave.  A slot
 * is a synchronous RPC channel: the slave fills `req`, bumps `req_seq` and
 * rings the master's eventfd; it then sleeps on a futex on `resp_seq` until
 * the master has filled `resp` and bumped it.  Scheduling is nothing more
 * than the master choosing *when* to answer: a slave that must block simply
 * does not get its answer until it is given a run slot again.
 *
 * Each slot carries a data window.  Only the slave ever touches its own
 * address space; the master only copies between the window and its own
 * memory.  That keeps the master out of the slaves' memory manager. */
#ifndef BD_IPC_H
#define BD_IPC_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "bd_iowatch.h"
#include "bd_options.h"
#include "bd_stats.h"

struct bd_mbox;

#define BD_SHM_MAGIC 0x42444d5049303031ull /* "BDMPI001" */
#define BD_PATH_MAX 512

enum bd_req_code {
    BD_REQ_NONE = 0,
    BD_REQ_INIT, /* -> resp.arg[0]=world size, arg[1]=world rank */
    BD_REQ_FINALIZE,
    BD_REQ_ABORT,      /* arg[0]=exit code; window: message */
    BD_REQ_SEND,       /* to a rank of another node, or an RMA service message (messages
                           between ranks of a node go through their mailboxes): ctx,
                           peer=dest world rank, tag, myrank, nbytes, flags; small: data in
                           window; large: arg[0]=spill file number; arg[1]=sync id of a
                           synchronous send; rid: a nonblocking send's id */
    BD_REQ_COLL_BEGIN, /* ctx, arg: see bd_coll_desc_t in window; arg[0] (a blocking
                          all-to-all): 1 its ranks pipeline (BD_REQ_COLL_TAKE), 2 they do,
                          in place */
    BD_REQ_COLL_PUT,   /* window: bd_seg_t list + data */
    BD_REQ_COLL_WAIT,  /* block until every rank of the collective has arrived */
    BD_REQ_COLL_GET,   /* window in: bd_seg_t list; out: data */
    BD_REQ_COLL_END,
    BD_REQ_CTX_ALLOC, /* a fresh context id (for communicators of size 1) */
    BD_REQ_COMM_FREE, /* ctx */
    BD_REQ_CRIT_ENTER,
    BD_REQ_CRIT_EXIT,
    BD_REQ_YIELD,         /* a poll that found nothing: let another rank run */
    BD_REQ_COMM_REGISTER, /* ctx, arg[0]=n; window: int32 world ranks[n]: make the
                           communicator known here unless it is (MPI_Comm_create_group
                           runs a split on such a temporary communicator of its members;
                           intercommunicators register their BD_CTX_DERIVED ones) */
    /* Nonblocking collectives.  With flags BD_COLL_ADDR, PUT/WAIT/GET/END and
     * these name their instance: ctx, myrank, rid = sequence number (without
     * it they address the instance of the rank's last BEGIN). */
    BD_REQ_COLL_ARRIVE,  /* this rank's inputs are all PUT; resp.flag: it may GET now */
    BD_REQ_COLL_TEST,    /* a poll: resp.flag 1 when it may GET, else the slot may go;
                            status BD_RESP_REVOKED: it never may (MPIX_Comm_revoke) */
    BD_REQ_COLL_WAITANY, /* arg[0]=n; window: bd_coll_id_t[n]; blocks until one may GET;
                           resp: window byte flags[n] after the ids (1: may GET, 2: revoked),
                           flag = any */
    BD_REQ_COLL_TESTANY, /* the same as a poll; arg[1]=1: never give the slot away */
    /* One-sided communication (src/lib/rma.c, src/master/rma.c). */
    BD_REQ_RMA_ENABLE, /* this rank has a window: watch for RMA service messages */
    BD_REQ_RMA_NEXT,   /* take the first message on BD_CTX_RMA_SVC, answered like a
                           receive (flag 0: none); never blocks */
    BD_REQ_RMA_DONE,   /* end of a BD_CMD_RMA service; not answered: the rank goes back
                           to waiting for the answer to the request it was blocked in */
    /* The mailbox (bd_mbox.h, src/lib/core/match.c, src/master/mbox.c). */
    BD_REQ_P2P_WAIT,    /* arg[0]=event_seq seen: block until the mailbox's event_seq
                           differs; arg[1]=BD_WAIT_* and ctx, peer, tag say what for
                           (deadlock reports); arg[2]: a poll (yield if others wait) */
    BD_REQ_MBOX_FULL,   /* peer=world rank whose ring has no room for arg[0] bytes: answered
                           when it has (or when the master has emptied it) */
    BD_REQ_MBOX_FETCH,  /* window out: entries the master holds (overflow), resp.arg[0] of
                           them, resp.arg[1] set when more remain */
    BD_REQ_MBOX_CANCEL, /* peer=world rank, rid=send id: withdraw the message from the
                           overflow the master holds for it; resp.flag 1 if withdrawn */
    BD_REQ_SYNC_ACK,    /* peer=world rank on another node, arg[0]=its sync id: its
                           synchronous send is matched */
    BD_REQ_COMM_REVOKE, /* ctx: a member revoked the communicator (MPIX_Comm_revoke); the
                           ranks of this node blocked in a collective on it are answered
                           with resp.status BD_RESP_REVOKED; answered at once. */
    /* Dynamic processes (src/lib/mpi/dyn.c, src/master/spawn.c). */
    BD_REQ_SPAWN, /* arg[0]=commands, arg[1]=processes, arg[2]=leader context, arg[3]=parent
                     group size; window: bd_spawn_cmd_t[arg[0]], then the parent group's world
                     ranks, then the strings the commands name.  resp.arg[0]=processes started;
                     window out: int32 world ranks of the children (-1: not started), then
                     per process a message (BD_SPAWN_MSG bytes) */
    /* Bounded collective staging (-coll-stage; src/master/coll_pipe.c). */
    BD_REQ_COLL_TAKE, /* arg[0]=0 while putting: answered when the instance's staged bytes
                         are under the bound (resp.flag 1) or pieces for this rank are
                         complete; arg[0]=1 after the last PUT: answered when pieces are
                         complete or the rank may GET the rest (resp.flag 1).  resp.arg[0]:
                         the number of int32 peers in the window whose pieces are complete
                         (each offered once); resp.arg[1] (in place, nothing to take): 1 +
                         the peer whose block to put next, over the bound, or 0.
                         arg[0]=2 / 3: the same as 0 / 1, answered at once (a nonblocking
                         all-to-all's MPI_Test, or before the rank waits elsewhere); 3
                         counts as arriving, and yields the run slot when it offers
                         nothing and the rank may not GET yet */
    BD_REQ_NAME,      /* arg[0]=BD_NAME_*; window: service name, NUL, port name, NUL.  resp.status
                     BD_RESP_ERROR when unknown (unpublish, lookup) or taken (publish); lookup:
                     window out: the port name */
    /* Between nodes without spill files (src/master/node.c, "net-direct"). */
    BD_REQ_NET_PULL,    /* peer=sender's world rank, rid=the message's pull id (the entry's
                        file_num), arg[0]=address of nbytes contiguous bytes to fill, 0: the
                        whole message in a spill file.  resp.flag 1: written there; 0: in
                        spill file number resp.arg[0] (a BD_SEND_FILE message) */
    BD_REQ_COMM_DUP,    /* ctx=the new context, arg[0]=the parent's: MPI_Comm_dup from the
                        parent's range of reserved contexts (src/lib/objects/comm.c): make
                        the communicator known here with the parent's members unless it is;
                        answered at once.  Sent only when the notices (bd_slot_t.cnotes)
                        are full */
    BD_REQ_COLL_PUTREF, /* window: bd_putref_t, then nslot uint32 store slots (slot + 1, 0:
                           zeros), then nslot uint32 CRC32C: a whole piece by reference to the
                           sender's stored copy (bd_mem_store_take), the references now the
                           master's; sent only in instances that do not pipeline */
    BD_REQ_COLL_SMALL,  /* a small blocking collective in one request (BEGIN, PUT, WAIT,
                           GET and END; session 27): ctx, myrank; window: bd_coll_desc_t,
                           then at BD_COLL_SMALL_PUT a PUT block, then at arg[1] (0: none)
                           a GET list; arg[0] bytes of result wanted; arg[3] where the
                           PUT block and GET list end in the window.  Answered when the
                           collective is complete for this rank, with the GET's data at the
                           window's start and resp.arg[0] = mismatch; status
                           BD_RESP_REVOKED as a WAIT.  With BD_COLL_WATCH answered
                           BD_RESP_NOTYET as a WAIT is, its BEGIN and PUT done: the rank
                           matches, then sends the same request again, which only waits.
                           With arg[2] = BD_SMALL_FINISH (and BD_COLL_ADDR naming an
                           instance begun before, its pieces put; session 28): only WAIT,
                           GET and END: a collective's completion in one request (arg[3]
                           as above);
                           BD_SMALL_LAUNCH: BEGIN, PUT and ARRIVE (answered at once, flag
                           as ARRIVE's), BD_SMALL_BEGIN: BEGIN and PUT (flag as PUT's) */
    BD_REQ__COUNT
};

/* resp.status values besides 0 */
enum { BD_RESP_OK = 0, BD_RESP_NOTYET = 1, BD_RESP_ERROR = 2, BD_RESP_REVOKED = 3 };
/* The tag of a revoke notice on a communicator's hidden context (the
 * library's BDL_CTX_INTERNAL, 1 << 30): a master delivering one from
 * another node also interrupts its ranks' collectives on it. */
#define BD_TAG_REVOKE 0x52564b00
#define BD_CTX_REVOKE_NOTICE (1 << 30)

typedef struct bd_req {
    uint32_t code;
    int32_t ctx;
    int32_t peer;
    int32_t tag;
    int32_t myrank;
    int32_t flags;
    uint64_t rid;
    uint64_t nbytes;
    int64_t arg[8];
} bd_req_t;

/* Names the call a rank waits in, for the phases of its memory (the rank's
 * manager, bd_mem_phase; the master's co-run estimate, memacct.c): the
 * request, and for a mailbox wait what it waits for (a receive, an in-rank
 * collective, ...). */
static inline uint64_t bd_req_phase_key(const bd_req_t *r)
{
    /* a small collective is a collective wait, as it was before it was one
     * request (the look-ahead's phases are unchanged by it) */
    uint64_t k = r->code == BD_REQ_COLL_SMALL ? BD_REQ_COLL_WAIT : r->code;
    if (r->code == BD_REQ_P2P_WAIT)
        k |= (uint64_t)(r->arg[1] & 0xff) << 16;
    return k;
}

typedef struct bd_resp {
    int32_t status;
    int32_t src;
    int32_t tag;
    int32_t flag;
    uint64_t nbytes;
    int64_t arg[8];
} bd_resp_t;

/* request flags */
#define BD_SEND_SYNC 0x1 /* synchronous send: resp.arg[0] = message id */
#define BD_SEND_FILE 0x2 /* payload is in spill file number arg[0] */
/* to another node, contiguous, nbytes at address arg[2] of the sender, which
 * the master reads (process_vm_readv) before it answers */
#define BD_SEND_PULL 0x4

/* BD_REQ_COLL_SMALL's PUT block, after the description in the window */
#define BD_COLL_SMALL_PUT 64
/* BD_REQ_COLL_SMALL's arg[2] (0: the whole of a small blocking collective) */
#define BD_SMALL_LAUNCH 1  /* BEGIN, PUT and ARRIVE: a nonblocking call's start */
#define BD_SMALL_FINISH 2  /* WAIT, GET and END only (BD_COLL_ADDR names the instance) */
#define BD_SMALL_BEGIN 3   /* BEGIN and PUT: a nonblocking call's start, more to put */
#define BD_COLL_ADDR 0x100 /* collective request: ctx, myrank, rid name the instance */
/* COLL_WAIT, COLL_SMALL, COLL_WAITANY or a blocking COLL_TAKE (arg[0] 0 or
 * 1; it then offers nothing) of a rank with receives posted: the wait also
 * ends, answered
 * BD_RESP_NOTYET, when its mailbox's event count is no longer arg[7] (a
 * message for one of them may have come, and a synchronous sender, maybe on
 * another node, waits for the match; the rank matches, then waits again). */
#define BD_COLL_WATCH 0x200

/* Contexts with this bit are not allocated by a master: the ranks derive
 * them (intercommunicators' hidden communicators) and BD_REQ_COMM_REGISTER
 * them, as they do the negative temporary ones of MPI_Comm_create_group. */
#define BD_CTX_DERIVED (1 << 28)

/* One collective instance in BD_REQ_COLL_WAITANY/TESTANY. */
typedef struct bd_coll_id {
    int32_t ctx;
    int32_t myrank;
    uint64_t seq;
} bd_coll_id_t;

/* A segment of collective data: `len` bytes at offset `off` of the piece
 * exchanged with `peer` (-1: the piece shared by all, or the reduction). */
typedef struct bd_seg {
    int32_t peer;
    uint32_t len;
    uint64_t off;
    uint64_t total; /* PUT: full size of that piece; GET: 0, or the size the reader
                      * expects the whole piece to have (resp.arg[0] = 1 if some differs) */
} bd_seg_t;
/* A piece handed over by reference (BD_REQ_COLL_PUTREF). */
typedef struct bd_putref {
    int32_t peer;
    uint32_t nslot;
    uint64_t total; /* bytes of the piece */
    uint32_t first; /* offset of its first byte in the first slot */
    uint32_t crc;   /* 1: the CRC32Cs are valid (the sender verifies what it reads) */
} bd_putref_t;

/* GET total: the reader expects nothing of that piece, which it was offered
 * (bounded staging): the master gives it back unread and answers that the
 * counts differ. */
#define BD_SEG_REFUSE UINT64_MAX

/* Collective kinds. */
enum bd_coll_kind {
    BD_COLL_BARRIER = 1,
    BD_COLL_BCAST,
    BD_COLL_REDUCE, /* fold; root gets result */
    BD_COLL_ALLREDUCE,
    BD_COLL_SCAN,
    BD_COLL_EXSCAN,
    BD_COLL_REDSCAT,   /* fold; everyone reads its own segment */
    BD_COLL_GATHER,    /* pieces rank->root */
    BD_COLL_SCATTER,   /* pieces root->rank */
    BD_COLL_ALLGATHER, /* pieces rank->all */
    BD_COLL_ALLTOALL,  /* pieces rank->rank */
    BD_COLL_SPLIT,     /* communicator creation: upload {color,key}; count > 1 (a dup):
                          reserve the contexts after the new one, count in all */
    BD_COLL__COUNT
};

/* Sent in the window with BD_REQ_COLL_BEGIN. */
/* The most contexts one dup reserves for its parent's next dups. */
#define BD_DUP_RESERVE_MAX 256

typedef struct bd_coll_desc {
    int32_t kind;
    int32_t root;
    int32_t dtype;  /* predefined datatype of a reduction */
    int32_t op;     /* predefined op of a reduction */
    uint64_t count; /* elements of a reduction; parts of a broadcast that pipelines */
    uint64_t seq;   /* this rank's collective sequence number on ctx */
    int32_t api;    /* which MPI call (bd_coll_api), | BD_API_NB if nonblocking */
    int32_t pad;
} bd_coll_desc_t;

/* A broadcast that pipelines (bounded staging, -coll-stage) comes in parts
 * of a quarter of the bound, at least BD_BCAST_PART_MIN bytes, at most
 * BD_BCAST_PARTS_MAX of them (larger ones are staged whole). */
#define BD_BCAST_PART_MIN (64u << 10)
#define BD_BCAST_PARTS_MAX (1u << 20)

/* The MPI call behind a collective instance, for messages (0: as its kind). */
enum bd_coll_api {
    BD_API_BARRIER = 1,
    BD_API_BCAST,
    BD_API_REDUCE,
    BD_API_ALLREDUCE,
    BD_API_SCAN,
    BD_API_EXSCAN,
    BD_API_REDUCE_SCATTER,
    BD_API_REDUCE_SCATTER_BLOCK,
    BD_API_GATHER,
    BD_API_GATHERV,
    BD_API_SCATTER,
    BD_API_SCATTERV,
    BD_API_ALLGATHER,
    BD_API_ALLGATHERV,
    BD_API_ALLTOALL,
    BD_API_ALLTOALLV,
    BD_API_ALLTOALLW,
    BD_API_COMM_DUP, /* kind SPLIT: MPI_Comm_dup of an intercommunicator, MPI_Comm_idup */
    BD_API__COUNT
};
#define BD_API_NB 0x100 /* the nonblocking variant (MPI_Ibcast, ...) */

/* A communicator notice (bd_slot_t.cnotes). */
#define BD_CNOTE_N 32
enum { BD_CNOTE_DUP = 1, BD_CNOTE_FREE = 2 };
typedef struct bd_cnote {
    int32_t kind;   /* BD_CNOTE_* */
    int32_t ctx;    /* the new communicator, or the freed one */
    int32_t parent; /* DUP: the communicator it duplicates */
    int32_t pad;
} bd_cnote_t;

/* Small sends to ranks of other nodes, posted without a request
 * (bd_slot_t.outq, issue 12): a ring of entries, each this header and its
 * payload, 8-byte aligned; dst -1 is padding to the ring's end, and fewer
 * than sizeof(bd_oentry_t) bytes left before the end are skipped.  Shared
 * memory a rank touches only when it sends to other nodes; messages up to
 * the smaller of BD_OUTQ_MAX and -msg-threshold (4K by default) are posted
 * so: with 1 KiB, a stream of 2 KiB messages took a request each (28 us a
 * message, docs/performance.md session 27). */
#define BD_OUTQ_BYTES (64u << 10)
#define BD_OUTQ_MAX (8u << 10) /* the largest payload posted so */
typedef struct bd_oentry {
    uint32_t size; /* of the entry, header included */
    int32_t dst;   /* world rank, -1 padding */
    int32_t ctx, src, tag;
    uint32_t nbytes;
    uint64_t send_id, sync_id;
} bd_oentry_t;

typedef struct bd_slot {
    _Atomic uint32_t req_seq; /* bumped by the slave */
    char pad0[60];
    _Atomic uint32_t resp_seq; /* bumped by the master; slave futex-waits on it */
    char pad1[60];
    bd_req_t req;
    bd_resp_t resp;
    int32_t pid;
    int32_t world_rank;
    _Atomic uint64_t resident;              /* bytes the slave reports resident (scheduling hint) */
    _Atomic uint64_t stats[BD_STAT__COUNT]; /* per-rank statistics, added to by both sides */
    /* Memory accounting channel (any thread of the slave, also fault handlers):
     * the slave asks for mem_req_bytes by bumping mem_req_seq and sleeps on
     * mem_resp_seq; the master adds the bytes to mem_resident before it
     * answers.  The slave subtracts released bytes itself. */
    char pad2[64];
    _Atomic uint64_t mem_resident;
    _Atomic uint64_t mem_req_bytes;
    _Atomic uint32_t mem_req_seq;
    _Atomic uint32_t mem_resp_seq;
    _Atomic int32_t mem_resp_status; /* 0 granted, BD_MEM_RESP_SHRINK, else -errno */
    /* With BD_MEM_RESP_SHRINK: the bytes to give back (0: all). */
    _Atomic uint64_t mem_resp_give;
    /* Granted memory outside the memory manager that cannot be unloaded
     * (shared-memory windows): moved here from mem_resident by the slave
     * after the grant, counted in the node's total, never a reason to
     * unload the slave; the slave subtracts it when it frees the memory. */
    _Atomic uint64_t mem_pinned;
    /* 1 when its managed memory is anonymous (the userfaultfd path), so
     * that the master can tell it from the rest of the rank's anonymous
     * memory (src/master/unmanaged.c). */
    _Atomic int32_t mem_anon;
    /* Bumped after a revoke notice (BD_TAG_REVOKE) is put in this slave's
     * mailbox, by the revoking slave or the master: a collective call
     * drains the mailbox first when it moved, so it sees the revoke. */
    _Atomic uint32_t revoke_seq;
    /* Master -> blocked slave command (BD_CMD_*), delivered by bumping
     * resp_seq; the slave clears it and rings the eventfd when done.  While a
     * command is pending the master sends nothing else to that slave. */
    _Atomic uint32_t cmd;
    /* BD_CMD_PREFETCH: load ahead at most this many bytes (set before cmd). */
    _Atomic uint64_t cmd_limit;
    _Atomic uint32_t rma_pending; /* master -> rank: RMA service messages wait for it */
    _Atomic uint32_t running;     /* master -> all: it holds a run slot (a hint) */
    /* master -> all: it waits for a run slot and its wait is over (not a
     * poll that yielded): the master may give it the next free slot (a hint) */
    _Atomic uint32_t queued;
    _Atomic uint32_t spinners; /* ranks -> all: ranks spinning until this one acts */
    /* rank -> all: the world rank + 1 it waits for a message from (spinning
     * or asleep in the master), 0 when it waits for no one rank */
    _Atomic uint32_t awaits;
    _Atomic uint32_t cma_out; /* rank -> master: its single-copy sends being read */
    _Atomic uint32_t cma_ok;  /* rank -> all: others may read its memory (CMA) */
    /* rank -> master: its storage calls in progress and done (bd_iowatch.h),
     * read by the stall detector (src/master/stall.c) */
    bd_iowatch_t io;
    /* Flow control (-p2p-tokens): bytes of this rank's messages to ranks
     * of the node in spill files not yet consumed (entries with
     * BD_ME_FLOW; the sender adds, whoever removes the file subtracts). */
    _Atomic uint64_t flow_out;
    _Atomic uint32_t flow_logged; /* a sender has logged overflow towards this rank */
    /* rank -> master: 1 while it waits in the master for an answer (or
     * serves a command meanwhile); a rank asleep with 0 sleeps outside the
     * library's requests (src/master/asleep.c) */
    _Atomic uint32_t in_rpc;
    /* rank -> master: communicator notices that need no answer (a dup from
     * a reserved range, the free of a master-allocated context: neither can
     * be about a context in use elsewhere).  The rank appends and bumps
     * cn_head; the master takes them and bumps cn_tail, before any request
     * of the rank and at every turn of its loop. */
    _Atomic uint32_t cn_head, cn_tail;
    bd_cnote_t cnotes[BD_CNOTE_N];
    /* rank -> master: its small sends to ranks of other nodes (bd_oentry_t),
     * complete once appended.  The master ships them, in order, before any
     * request of the rank and at every turn of its loop, and moves ob_tail;
     * ob_bell: the rank rang the eventfd since the master last looked (so
     * one ring per batch). */
    _Atomic uint32_t ob_bell;
    _Atomic uint64_t ob_head, ob_tail;
    char outq[BD_OUTQ_BYTES] __attribute__((aligned(8)));
} bd_slot_t;

/* BD_CMD_PREFETCH: a rank waiting for its run slot starts loading, in the
 * background, what it had resident at its last unload (bd_mem_prefetch). */
enum { BD_CMD_NONE = 0, BD_CMD_UNLOAD = 1, BD_CMD_RMA = 2, BD_CMD_PREFETCH = 3 };

/* Answer to a memory request: not granted; store everything resident and ask
 * again (every rank holding memory was waiting for more).  Equal to the
 * memory manager's BD_MEM_ACQUIRE_SHRINK. */
#define BD_MEM_RESP_SHRINK 1

/* One-sided communication.  Requests to a target (lock, unlock, flush,
 * operations of passive-target and post/start epochs) travel as messages on
 * the one context BD_CTX_RMA_SVC; the master wakes a blocked target that has
 * one with BD_CMD_RMA (it serves them with RMA_NEXT and sends, then
 * RMA_DONE), and sets rma_pending for a rank that runs or waits for a run
 * slot (it serves them at its next request).  Answers and fence traffic use
 * the window's own context: its communicator's context | BD_CTX_RMA_DATA.
 * (Master-allocated contexts are (node << 20) + n, below both bits.) */
#define BD_CTX_RMA_SVC (1 << 26)
#define BD_CTX_RMA_DATA (1 << 27)

/* The job's configuration as the ranks need it: the one road by which
 * options reach a rank.  The master fills it once from its options table
 * (bd_job_config_fill, then its own derived values) before it starts the
 * ranks; a rank reads it in MPI_Init and nowhere else, and builds the memory
 * manager's bd_mem_config_t from it.  Ranks read no BDMPI_* option variable,
 * and the memory manager no environment at all.  The window's size is part
 * of the layout (bd_shm_hdr_t.window). */
typedef struct bd_job_config {
    uint32_t nr;              /* -nr, at most the node's slaves */
    int32_t mem_strategy;     /* -mem-strategy: BD_MEMS_* */
    uint64_t msg_threshold;   /* -msg-threshold */
    uint64_t mem_budget;      /* -mem, or the master's default; 0: no accounting (strategy none) */
    uint64_t sbpage;          /* -sbpage */
    uint64_t mem_threshold;   /* -mem-threshold */
    uint64_t mem_readahead;   /* -mem-readahead in bytes; 0: off */
    int32_t mem_predict;      /* -mem-predict: BD_MEMP_* */
    int32_t mem_prefetch;     /* -mem-prefetch: 0 on, 1 off */
    int32_t mem_track;        /* -mem-track: BD_MEMT_* */
    int32_t mem_wp;           /* -mem-wp: BD_MEMW_* */
    int32_t mem_dedup;        /* -mem-dedup: 0 on, 1 off (and 1 where the table has no room) */
    int32_t mem_share;        /* -mem-share: 0 on (ranks' memory mergeable by KSM), 1 off */
    int32_t mem_remote;       /* -mem-remote: 0 on (the lanes below exist), 1 off or one node */
    int32_t mem_preclean;     /* -mem-preclean: 0 on, 1 off */
    int32_t coll_byref;       /* -coll-byref: 0 on, 1 off */
    uint64_t spin_ns;         /* -spin, in ns */
    uint64_t poll_quantum_ns; /* -poll-quantum, in ns */
    uint64_t poll_remote_ns;  /* -poll-remote, in ns */
    uint64_t universe_size;   /* -universe-size: MPI_UNIVERSE_SIZE; 0: bd_universe_size's default */
    uint64_t spill_max;       /* -spill-max; 0: no quota */
    uint64_t p2p_tokens;      /* -p2p-tokens; 0: no flow control */
    uint64_t coll_stage;      /* -coll-stage; 0: collectives staged whole */
    uint64_t net_direct;      /* -net-direct; 0: never */
    uint64_t mem_preclean_tick; /* -mem-preclean-tick, in microseconds */
    int32_t mem_alloc_stats;    /* -mem-alloc-stats: 1 on */
    int32_t stats;              /* --stats: 1 on (what only the report needs is measured) */
    int32_t initial_errh;       /* -initial-errhandler: 0 fatal, 1 abort, 2 return (BD_ERRH_*) */
} bd_job_config_t;

/* Fill job from the (normalised) options; the master then sets what it
 * derives itself (the default memory budget). */
void bd_job_config_fill(bd_job_config_t *job, const bd_opts_t *o);

typedef struct bd_shm_hdr {
    uint64_t magic;
    uint32_t nslaves; /* slots on this node: ninit + nspawn */
    uint32_t world_size;
    uint32_t nnodes;
    uint32_t node;
    uint32_t first_rank;    /* world rank of this node's slave 0 */
    uint32_t ninit;         /* ranks started with the job on each node (-ns): slots 0..ninit-1 */
    uint32_t nspawn;        /* slots for spawned ranks on each node (-max-spawn), after them */
    _Atomic uint32_t nused; /* slots of this node holding a live rank (a scheduling hint) */
    uint64_t slot_stride;   /* bytes from one slot to the next */
    uint64_t slot_offset;   /* offset of slot 0 */
    uint64_t window_offset; /* offset of the window inside a slot */
    uint64_t window;        /* window bytes: -window, raised to hold the message threshold */
    uint64_t mbox_offset;   /* offset of the mailbox (bd_mbox_t + ring) inside a slot */
    uint64_t mbox_ring;     /* ring bytes of each mailbox */
    uint64_t eager;         /* largest payload carried inline in a mailbox entry */
    uint64_t master_addr;   /* where the master maps this header (a rank's CMA probe) */
    uint64_t total_size;
    _Atomic uint32_t runnable_waiting; /* ranks waiting for a run slot */
    _Atomic uint32_t free_slots;       /* run slots nobody holds */
    _Atomic uint32_t mem_waiters;      /* loads waiting for memory: slaves ring after releasing */
    /* the master has told a rank to unload: look-ahead loading has work, so
     * a rank that wakes a receiver rings at once (match.c wake_receiver) */
    _Atomic uint32_t unloads_began;
    /* A running rank spins until a queued one (bd_slot_t.queued) sends to
     * it, and asks the master to give that one the next free run slot:
     * (the spinner's slot + 1) << 32 | (the queued rank's slot + 1), 0 when
     * nobody asks.  Taken by compare-and-swap from 0 (one at a time);
     * cleared by its taker, or by the master when it honours it
     * (docs/design.md, "Scheduling": pairs). */
    _Atomic uint64_t slot_gift;
    uint64_t trace_offset; /* the ranks' trace rings (bd_trace.h) after the slots; 0: no trace */
    uint64_t trace_stride; /* bytes from one rank's ring to the next */
    uint64_t dedup_offset; /* the node's storage-deduplication table (bd_mem_config_t.share), */
    uint64_t dedup_bytes;  /* zero-filled, after the trace rings; 0 bytes: -mem-dedup off */
    /* Bytes of communication data in this node's spill files now and at
     * most (-spill-max; bd_spill_charge), by every rank and the master. */
    _Atomic uint64_t spill_bytes;
    _Atomic uint64_t spill_peak;
    /* The remote-memory tier's lanes (-mem-remote on, bd_rmt_lane_t): per
     * slot BD_RMT_LANES of them, at rmt_offset + slot * rmt_stride; 0: none. */
    uint64_t rmt_offset;
    uint64_t rmt_stride;
    bd_job_config_t job;
    char jobdir[BD_PATH_MAX];
} bd_shm_hdr_t;

/* Remote-memory tier (-mem-remote, docs/design.md "Remote-memory tier"):
 * the narrow road between a rank's memory manager, which cannot talk to
 * other nodes, and its master, which can.  Each rank has BD_RMT_LANES lanes
 * in the job's shared memory, one per I/O worker of its memory manager, each
 * a request/answer pair and a data area of BD_RMT_LANE_BYTES (one I/O
 * request of the manager: a run of whole sbpages).  The data need not pass through
 * the data area: the rank gives the address of its own buffer (addr) and
 * the master copies between it and the other node's messages itself, once
 * (process_vm_readv/writev, as for large messages between nodes); the data
 * area is the way when that is refused.  A lane is claimed by
 * the rank's thread (busy, compare-and-swap from 0), which fills it, bumps
 * req_seq and rings the master's eventfd, then sleeps on resp_seq; the
 * master answers when the data has reached (PUT) or come back from (GET)
 * another node.  Only atomics, futexes and write(2) on the rank's side, so
 * fault handlers may use a lane.  The lanes are the tokens of the rank's
 * traffic: at most BD_RMT_LANES requests of at most 1 MiB each in flight. */
#define BD_RMT_LANES 4
#define BD_RMT_LANE_BYTES (1u << 20)
enum {
    BD_RMT_PUT = 1, /* store sbpages [sb, sb+nsb) of allocation id from the data area */
    BD_RMT_GET,     /* read them back into the data area */
    BD_RMT_DROP     /* forget them (freed, discarded, now stored locally) */
};
/* PUT answers: stored on another node, or refused (no node has room: the
 * rank stores the data locally, and any older remote copy is gone). */
enum { BD_RMT_STORED = 0, BD_RMT_REFUSED = 1 };
/* Any answer with addr set: the master could not reach the rank's memory
 * (process_vm_readv/writev refused): PUT, copy the data into the data area
 * and ask again with addr 0; GET, the data is in the data area. */
enum { BD_RMT_IN_LANE = 2 };
typedef struct bd_rmt_lane {
    _Atomic uint32_t req_seq;  /* bumped by the rank */
    _Atomic uint32_t resp_seq; /* bumped by the master; the rank futex-waits on it */
    _Atomic uint32_t busy;     /* a thread of the rank owns the lane */
    uint32_t op;               /* BD_RMT_* */
    uint32_t nsb;              /* sbpages */
    _Atomic int32_t status;    /* the answer: BD_RMT_STORED/REFUSED, or -errno */
    uint64_t id;               /* the allocation (the manager's id, unique in the rank) */
    uint64_t sb;               /* first sbpage */
    uint64_t sbpage;           /* bytes per sbpage */
    uint64_t addr;             /* the rank's buffer, which the master reads (PUT) or fills
                                * (GET) with process_vm_readv/writev; 0: the data area */
    char pad[16];
} bd_rmt_lane_t;
#define BD_RMT_HDR 4096 /* the lanes' headers, then their data areas */
static inline bd_rmt_lane_t *bd_rmt_lane(bd_shm_hdr_t *h, uint32_t slot, int k)
{
    return (bd_rmt_lane_t *)((char *)h + h->rmt_offset + (uint64_t)slot * h->rmt_stride) + k;
}
static inline char *bd_rmt_data(bd_shm_hdr_t *h, uint32_t slot, int k)
{
    return (char *)h + h->rmt_offset + (uint64_t)slot * h->rmt_stride + BD_RMT_HDR +
           (uint64_t)k * BD_RMT_LANE_BYTES;
}

/* MPI_UNIVERSE_SIZE: -universe-size, else the job's ranks plus 16 spawned
 * ones (or -max-spawn if fewer).  Not the spawn capacity itself: the
 * universe is a suggestion programs act on (mpi4py.futures starts universe
 * minus world workers), and -max-spawn is sized for programs that keep
 * many spawned ranks alive at once. */
static inline uint64_t bd_universe_size(const bd_shm_hdr_t *h)
{
    if (h->job.universe_size)
        return h->job.universe_size;
    return (uint64_t)h->world_size + (h->nspawn < 16 ? h->nspawn : 16);
}

/* World ranks ("world" in the code: a rank's id in the whole job, also for
 * spawned ranks, which are in no MPI_COMM_WORLD of the job's first ranks).
 * The job's ranks are 0..world_size-1, node n's from n*ninit.  A spawned
 * rank in spawn slot k (slot ninit+k) of node n, the gen-th rank to use that
 * slot, is world_size + (gen*nnodes + n)*nspawn + k: every master and rank
 * maps an id to its node and slot without asking anyone. */
static inline int bd_world_node(const bd_shm_hdr_t *h, int w)
{
    if (w < (int)h->world_size)
        return w / (int)h->ninit;
    return (int)(((uint32_t)(w - (int)h->world_size) / h->nspawn) % h->nnodes);
}

/* The slot of world rank w on this node, or -1 (another node, or invalid). */
static inline int bd_world_slot(const bd_shm_hdr_t *h, int w)
{
    if (w < 0)
        return -1;
    if (w < (int)h->world_size) {
        int i = w - (int)h->first_rank;
        return i >= 0 && i < (int)h->ninit ? i : -1;
    }
    if (!h->nspawn)
        return -1;
    uint32_t rel = (uint32_t)(w - (int)h->world_size);
    if ((rel / h->nspawn) % h->nnodes != h->node)
        return -1;
    return (int)(h->ninit + rel % h->nspawn);
}

/* The world rank of the gen-th rank in spawn slot k of this node. */
static inline int bd_spawn_world(const bd_shm_hdr_t *h, uint32_t gen, uint32_t k)
{
    return (int)(h->world_size + (gen * h->nnodes + h->node) * h->nspawn + k);
}

/* A command of BD_REQ_SPAWN: string offsets are from the start of the
 * strings area; argv's strings follow each other, NUL-terminated. */
typedef struct bd_spawn_cmd {
    int32_t maxprocs;
    int32_t argc;
    uint32_t command, argv, wdir, path; /* string offsets; wdir, path: UINT32_MAX if none */
    int32_t initial_errh; /* info mpi_initial_errhandler: -1 none, else as job.initial_errh */
} bd_spawn_cmd_t;
#define BD_SPAWN_MSG 160 /* bytes of each process's message in the SPAWN answer */

/* What a spawned rank learns at BD_REQ_INIT (resp.arg[2] = 1), in the window:
 * this header, then its MPI_COMM_WORLD's world ranks, then the parent group's. */
typedef struct bd_spawn_info {
    int32_t world_ctx, node_ctx, cworld_ctx; /* its predefined communicators */
    int32_t leader_ctx;                      /* the leaders' exchange (dyn.c) */
    int32_t size, rank;                      /* its MPI_COMM_WORLD */
    int32_t psize, proot;                    /* parent group, the root's world rank */
    int32_t appnum;
    int32_t initial_errh; /* its command's mpi_initial_errhandler (-1: the job's) */
} bd_spawn_info_t;

/* BD_REQ_NAME operations */
enum { BD_NAME_PUBLISH = 1, BD_NAME_LOOKUP, BD_NAME_UNPUBLISH };

static inline bd_slot_t *bd_shm_slot(bd_shm_hdr_t *h, uint32_t i)
{
    return (bd_slot_t *)((char *)h + h->slot_offset + (uint64_t)i * h->slot_stride);
}

static inline char *bd_slot_window(bd_shm_hdr_t *h, bd_slot_t *s)
{
    return (char *)s + h->window_offset;
}

static inline struct bd_mbox *bd_slot_mbox(bd_shm_hdr_t *h, bd_slot_t *s)
{
    return (struct bd_mbox *)((char *)s + h->mbox_offset);
}

/* What a rank waits for in BD_REQ_P2P_WAIT (for deadlock reports). */
enum { BD_WAIT_RECV = 1, BD_WAIT_ANY, BD_WAIT_PROBE, BD_WAIT_MPROBE, BD_WAIT_SSEND, BD_WAIT_FLOW };
/* A poll that waits in a loop for a message only another node can send
 * (-poll-remote): arg[2] is the most nanoseconds it sleeps. */
#define BD_WAIT_POLL 17
/* ... a collective the ranks run among themselves: ctx is its communicator's
 * context, arg[3] its BD_API_* code, arg[4] its root. */
#define BD_WAIT_LCOLL 16

/* The spill quota (-spill-max): a spill file's n bytes are charged to the
 * node before it is written and given back by whoever removes it.  0, or
 * -ENOSPC when the quota would be exceeded (nothing charged); *total: the
 * bytes in spill files with these. */
int bd_spill_charge(bd_shm_hdr_t *h, uint64_t n, uint64_t *total);
void bd_spill_uncharge(bd_shm_hdr_t *h, uint64_t n);
/* The error when bd_spill_charge refused: "spill quota exceeded in DIR:
 * rank SRC sent N bytes (WHAT), which would make TOTAL bytes ...". */
void bd_spill_quota_msg(char *out, size_t len, const bd_shm_hdr_t *h, int src, uint64_t n,
                        const char *what, uint64_t total);
/* Remove the spill file at path holding n charged bytes; they are given
 * back only if this call removed it, so two removers never give back
 * twice.  0 or -errno. */
int bd_spill_unlink(bd_shm_hdr_t *h, const char *path, uint64_t n);

/* Layout for nslaves slots with the given window and message threshold
 * (the mailbox rings are sized for h->ninit ranks when it is set);
 * fills the header's geometry fields and returns the total size. */
uint64_t bd_shm_layout(bd_shm_hdr_t *h, uint32_t nslaves, uint64_t window, uint64_t threshold);

/* futex on a 32-bit word in shared memory.  wait returns 0 when woken or the
 * value differs, -ETIMEDOUT, -EINTR; timeout_ms < 0 waits forever. */
int bd_futex_wait(_Atomic uint32_t *addr, uint32_t expected, int timeout_ms);
int bd_futex_wake(_Atomic uint32_t *addr, int n);

/* Spill file path for message number `num` sent by world rank `src`. */
void bd_spill_path(char *out, size_t len, const char *jobdir, int src, uint64_t num);

/* Full write/read loops; return 0 or -errno (-EIO on short read). */
int bd_write_full(int fd, const void *buf, size_t len);
int bd_pread_full(int fd, void *buf, size_t len, uint64_t off);
int bd_pwrite_full(int fd, const void *buf, size_t len, uint64_t off);

#endif
