/* bdmprun: the master of one node.  It spawns the node's ranks (slaves),
 * answers their requests, buffers their messages, runs their collectives
 * and decides which of them may run (node-level cooperative multitasking,
 * bdmpi.txt 5.2).  Single-threaded: one event loop over an eventfd that
 * slaves ring and a signalfd for SIGCHLD/SIGTERM. */
#ifndef BDR_MASTER_H
#define BDR_MASTER_H

#include <stdint.h>
#include <sys/types.h>

#include "bd_fault.h"
#include "bd_ipc.h"
#include "bd_mbox.h"
#include "bd_options.h"

typedef enum {
    SL_PREINIT,   /* spawned, has not called MPI_Init */
    SL_RUNNING,   /* holds a run slot */
    SL_RUNNABLE,  /* waiting for a run slot */
    SL_BLOCKED,   /* waiting for a message, a collective or a critical section */
    SL_FINALIZED, /* called MPI_Finalize; runs freely until it exits */
    SL_EXITED,
} sl_state_t;

typedef enum {
    BLK_NONE,
    BLK_MBOX, /* waits for its mailbox to move (a receive, probe, synchronous send) */
    BLK_ROOM, /* a send waits for room in another rank's mailbox */
    BLK_COLL,
    BLK_CRIT,
    BLK_INIT,  /* waiting for its first run slot */
    BLK_YIELD, /* gave its slot away after an unsuccessful poll */
} blk_t;

typedef struct msg {
    struct msg *next;
    int32_t ctx, src, tag;
    int32_t src_world;
    uint64_t nbytes;
    uint64_t file_num; /* spill file number when in_file */
    int in_file;
    int pull;          /* its data comes when asked for (net_direct.c; file_num: pull id) */
    uint64_t sync_id;  /* nonzero: a synchronous send waits for the match */
    uint64_t send_id;  /* nonzero: a nonblocking send's id, for MPI_Cancel */
    uint64_t match_id; /* taken by a matched probe: the id MRECV names */
    char *data;
} msg_t;

/* A mailbox entry the master holds (overflow or inbound, mbox.c). */
typedef struct ment {
    struct ment *next;
    bd_mentry_t e;
    char data[]; /* inline payload */
} ment_t;

struct coll;

#define BDR_WS_KEYS 4 /* calls whose turns' memory is kept per rank */

typedef struct slave {
    int idx;   /* index on this node */
    int world; /* world rank */
    pid_t pid;
    sl_state_t state;
    blk_t blk;
    int exited, exit_status, inited, finalized;
    bd_slot_t *slot;
    char *win;
    uint32_t seen_req; /* last req_seq handled */
    uint64_t runnable_order;
    int bypassed; /* runnable: times a rank another one spun for went first (sched.c) */
    int passed;   /* runnable after a poll: times another rank went first (sched.c) */
    msg_t *unexp_head, *unexp_tail; /* one-sided service messages, arrival order */
    /* its mailbox (mbox.c) */
    struct bd_mbox *mb;
    ment_t *ovf_head, *ovf_tail; /* taken from its ring while it waited: oldest */
    uint32_t novf;
    ment_t *pin_head, *pin_tail; /* from the master, waiting for room in its ring */
    uint32_t wait_seen;          /* BLK_MBOX: the event count it saw */
    /* Its shared pages that hold nothing (mbox.c bdr_mbox_stopped): the
     * window may hold data beyond its first page since they were last
     * given back; the ring's tail then; when it last stopped running. */
    int win_dirty;
    uint64_t ring_idle_tail;
    struct slave *idle_prev, *idle_next; /* in g_m's queue of them, by when they stopped */
    int idle_queued;
    double idle_since; /* when it was queued (bdr_master_now) */
    /* unmanaged.c: its memory outside the manager beyond the allowance,
     * counted in the node's; when it was last measured */
    uint64_t outside;
    double outside_t;
    uint64_t outside_turn; /* its turn_seq then */
    int outside_asked;     /* measured then at an ask for memory */
    /* BLK_MBOX of a poll loop for another node's message (BD_WAIT_POLL):
     * when it is answered anyway (bdr_master_now); 0: a wait without end */
    double poll_until;
    int room_dst; /* BLK_ROOM: the world rank whose ring it waits on */
    uint64_t room_need;
    struct coll *coll; /* collective it is inside of */
    int coll_rank;     /* its rank in that collective's communicator */
    /* The pipelined instance whose blocking COLL_TAKE was last answered
     * BD_RESP_NOTYET (its mailbox moved): until its next COLL_TAKE it
     * only matches its posted receives (coll_pipe.c away). */
    struct coll *take_notyet;
    int crit_granted;
    int poke;     /* something it may be waiting for changed */
    int resuming; /* being resumed: a failed poll must not yield again */
    int revoked;  /* BLK_COLL: its communicator was revoked; answer BD_RESP_REVOKED */
    /* BD_REQ_COLL_SMALL (coll_small.c): its BEGIN and PUT are done and it
     * waits; mute: bdr_sched_respond only counts in muted (the steps of one
     * request, answered once). */
    int small_open, mute, muted;
    int cancel_wait; /* its MPI_Cancel of send cancel_id waits for another node's answer */
    uint64_t cancel_id;
    /* memory accounting (memacct.c) */
    uint32_t seen_mem_req;
    int mem_pending; /* waits for a grant of mem_want bytes */
    uint64_t mem_want;
    uint64_t mem_order;
    int unload_sent; /* told to unload; nothing else is sent until it is done */
    uint64_t warm;   /* resident when last told to unload: what a look-ahead loads */
    int ran;         /* had a turn since it was last told to unload */
    int pf_sent;     /* told to load ahead (BD_CMD_PREFETCH), not yet acknowledged */
    int pf_done;     /* loaded ahead since its last unload */
    /* Kinds of call (bits of hashed bd_req_phase_key) whose resumes are
     * brief turns that load nothing: not loaded ahead for; whose last
     * resume was such; whether this turn was loaded ahead for (memacct.c
     * bdr_memacct_turn_end) */
    uint64_t vain, brief;
    int turn_pf;
    double turn_t0; /* when its turn began (bdr_master_now) */
    /* What its run turns loaded (the most held at once beyond what it held
     * at the resume), per call it resumed from (bd_req_phase_key; memacct.c
     * bdr_memacct_corun_fits): PageRank loads much after its Allreduce and
     * little after its Alltoallv. */
    uint64_t turn_key, turn_peak; /* the current turn's (since its resume) */
    uint64_t turn_base;           /* what it held at its resume */
    uint32_t turn_req;            /* seen_req at its resume */
    uint64_t ws_key[BDR_WS_KEYS], ws_peak[BDR_WS_KEYS], ws_used[BDR_WS_KEYS];
    /* What turns from the call held beyond `warm` (memory that was in no
     * warm set: fresh allocations, receive buffers), halved at each turn
     * that held less (memacct.c prefetch_next leaves it free). */
    uint64_t ws_fresh[BDR_WS_KEYS];
    /* Running beside a rank whose turn it does not fit beside (memacct.c
     * reserved_for_elders): when its turn began (g_m.order_counter), when
     * it last asked for memory, whether a poll of it failed since (it
     * waits for others then), and whether its request was passed over in
     * this round of the grant loop because ranks that began before it may
     * still load that much. */
    uint64_t turn_seq;
    double mem_last;
    int polled;
    int mem_defer;
    int capped; /* this turn was let in so (sched.c corun_gate) */
    /* a free run slot is kept from it: its memory does not fit beside the
     * running ranks' (sched.c, counted once per wait in CORUN_HELD) */
    int corun_held;
    /* the collective instance (ctx, seq + 1) whose pieces were read ahead
     * for it (coll.c bdr_coll_readahead) */
    int ra_ctx;
    uint64_t ra_seq;
    /* dynamic processes (spawn.c) */
    int spawned;              /* started by MPI_Comm_spawn */
    int start_failed;         /* its exec failed: its exit ends nothing */
    uint32_t gen;             /* spawn slots: ranks that have used the slot */
    struct bd_spawn_info *sp; /* what it learns at MPI_Init (spawned ranks), or NULL */
    /* asleep outside MPI (asleep.c): its slot is lent (counted in
     * g_m.nasleep); what /proc showed since aw_since (0: not watched) */
    int asleep;
    double aw_since;
    unsigned long long aw_run, aw_ticks;
} slave_t;

typedef struct comm {
    int ctx;
    int size;
    int *world;  /* comm rank -> world rank */
    int refs;    /* local members that have not freed it; -1: predefined */
    int nlocal;  /* members on this node */
    int revoked; /* MPIX_Comm_revoke: collective waits on it fail (comm.c) */
} comm_t;

/* A piece of collective data: in memory, or (when larger than the message
 * threshold) at file_off in the collective's spill file. */
typedef struct piece {
    uint64_t total, filled;
    char *data;
    int in_file;
    uint64_t file_off;
    uint64_t got;   /* bytes its reader has read (pipelined instances: coll_pipe.c) */
    int offered;    /* listed to its reader in an answer to COLL_TAKE */
    int taken;      /* read whole and given back: no data any more */
    int sent;       /* shipped to its reader's node (bounded staging across nodes) */
    int credited;   /* from another node, its credit given back before its reader read it
                     (a nonblocking all-to-all whose reader waits elsewhere, coll_pipe.c) */
    int peer_ready; /* an in-place all-to-all's piece from a rank here for one on another
                       node: that rank's block for this piece's sender is PUT there
                       (CM_READY), so this piece is offered at once when it arrives */
    /* A piece with several readers (MPI_Allgather's blocks, MPI_Bcast's
     * parts, bounded staging): local readers that have read it whole, the
     * nodes it was shipped to (bit per node), and the credits back from them. */
    int nread, ncred;
    uint64_t sent_to;
    /* A piece its sender handed over by reference (coll_ref.c): the node
     * store's slots that hold it (slot + 1, 0: zeros), then as many
     * CRC32Cs; its bytes start at ref_first in the first slot. */
    uint32_t *ref;
    uint32_t nref, ref_first;
    int ref_crc;
    /* Its slots read ahead with its reader's other pieces (coll_ref.c's
     * batches): at ref_at - 1 in batch ref_batch; 0 when not. */
    uint64_t ref_at;
    int ref_batch;
} piece_t;

typedef struct coll {
    struct coll *next;
    comm_t *comm;
    int ctx;
    uint64_t seq;
    bd_coll_desc_t d;
    int began, arrived, ended; /* local ranks */
    int nlocal;                /* members on this node */
    int *rank_arrived;         /* by comm rank (remote ranks: their contribution came) */
    char *node_in;             /* nodes with members */
    char *done_from;           /* nodes that have sent everything they send us */
    int ndone_in, nexpect_in;
    int shipped, computed;
    piece_t *pieces; /* see coll_piece() */
    size_t npieces;
    uint64_t elem_size;
    char *acc;        /* running fold of reductions */
    int next_fold;    /* ranks 0..next_fold-1 are folded */
    piece_t *results; /* per-rank results (scan prefixes, new communicators) */
    int fd;           /* spill file of large pieces (unlinked at creation), or -1 */
    uint64_t file_end;
    uint64_t spill_charged; /* bytes of its pieces charged to -spill-max (bd_spill_charge) */
    uint64_t staged;        /* bytes of its pieces placed and not given back */
    int pipe;               /* bounded staging: pieces go as their reader takes them */
    /* Bounded staging across nodes (coll_pipe.c): the ranks pipeline (said
     * at BEGIN), so pieces for other nodes go as their masters give credit;
     * bytes of pieces from other nodes staged here; by node, bytes shipped
     * there and not yet read by their readers (credit in use). */
    int pipe_net;
    /* An in-place all-to-all among ranks of this node that pipelines: a
     * piece from q goes to its reader only once the reader's own block for
     * q (the one the piece overwrites) is PUT (coll_pipe.c: offer). */
    int inplace;
    uint64_t staged_in;
    uint64_t *credit_out;
    /* A nonblocking all-to-all that pipelines: by comm rank, bytes of this
     * node's ranks' pieces staged for that (local) reader; they do not hold
     * its senders back while the reader waits in another call (coll_pipe.c,
     * away). */
    uint64_t *held_for;
    /* Pieces with several readers (coll_pipe.c, multi()): by piece and
     * comm rank, 1 offered to that reader, 2 read by it whole. */
    uint8_t *rd;
} coll_t;

/* Master-to-master message types (node.c, coll.c, deadlock.c). */
enum {
    BDR_NH_MSG = 1,  /* p2p message: a0 ctx, a1 src rank, a2 tag, a3 src world, a4 dst world,
                        a5 large; u0 bytes, u1 sync id, u2 spill number, u4 send id,
                        u5 total */
    BDR_NH_CHUNK,    /* u0 offset; payload: the next chunk of the current large item */
    BDR_NH_SYNC,     /* a0 sender world, u0 sync id: a synchronous send was matched */
    BDR_NH_COLL,     /* collective data, see coll.c */
    BDR_NH_DEADLOCK, /* deadlock detection wave, see deadlock.c */
    BDR_NH_DONE,     /* all ranks of the sending node have exited */
    BDR_NH_ABORT,    /* a0 exit code; payload: reason */
    BDR_NH_NAME,     /* a0 BD_NAME_PUBLISH or _UNPUBLISH; payload: service, NUL, port, NUL */
    /* remote-memory tier (remote.c): a0 the owner's slot, a1 its lane, a2 sbpages,
     * u0 allocation, u1 first sbpage, u2 the copy's sequence number, u3 sbpage bytes */
    BDR_NH_RMT_PUT,    /* owner -> holder; payload: a chunk of a run, a2 sbpages */
    BDR_NH_RMT_ACK,    /* holder -> owner: a2 1 stored, 0 refused (and older copies dropped);
                        * u4 its room for more */
    BDR_NH_RMT_GET,    /* owner -> holder; u4 1: ahead of a load (remote.c "Ahead") */
    BDR_NH_RMT_DATA,   /* holder -> owner: a chunk of a run, u4 which of its a2 sbpages
                        * are held (bits); payload: those */
    BDR_NH_RMT_DROP,   /* owner -> holder: forget them */
    BDR_NH_RMT_RETURN, /* holder -> owner: one sbpage given back; payload: it */
    BDR_NH_CTS,        /* u0 pull id: send the data of that message now (net_direct.c) */
    BDR_NH_PCHUNK,     /* u0 pull id, u1 offset; payload: a chunk of that message's data */
    BDR_NH_CANCEL,     /* a0 sender world, a1 receiver world, u0 send id: MPI_Cancel of a
                        * send (behind its message in the queue to that node) */
    BDR_NH_CANCEL_ANS, /* a0 sender world, a1 1 cancelled / 0 too late, u0 send id */
};

typedef struct master {
    bd_opts_t opts;
    int node, nnodes;
    bd_shm_hdr_t *hdr;
    int shm_fd, event_fd, signal_fd, epoll_fd;
    int ns, nr, nc; /* ns: slots in use so far (ninit, then spawn slots up to the highest used) */
    int ninit;      /* ranks started with the job (-ns) */
    int nslots;     /* ninit + -max-spawn: g_m.slaves' length */
    int singleton;  /* started by a program's MPI_Init, which is rank 0 */
    slave_t *slaves;
    int nrunning, nrunnable, nlive, ninit_pending;
    int nasleep; /* running ranks asleep outside MPI whose slots are lent (asleep.c) */
    uint64_t order_counter;
    /* Ranks that stopped running with pages to give back, the one that
     * stopped longest ago first (mbox.c bdr_mbox_stopped). */
    struct slave *idle_head, *idle_tail;
    int nidle;
    uint64_t next_sync_id;
    comm_t **comms; /* every communicator with members here */
    int ncomms, capcomms;
    int next_ctx;
    coll_t *colls;
    int crit_count;
    int job_failed; /* exit status to report; 0 while all is well */
    int stopping;
    pid_t parent; /* who started us (bdmpiexec, or MPICH's proxy); 0: a singleton */
    int orphaned; /* parent has ended: the MPI launcher of the masters is gone */
    double t_start;
    uint64_t bytes_buffered, peak_buffered;
    uint64_t coll_file_bytes;
    uint64_t coll_ref_read;    /* pieces by reference read at once, not kept so (coll_ref.c) */
    uint64_t coll_ref_batched; /* pieces by reference read with their reader's others at once */
    int nunloading;
    uint64_t peak_node_resident;
    slave_t *mem_keep;   /* served first after a stuck state (memacct.c resolve_stuck) */
    int corun_gated;     /* the last schedule() kept a free slot free (sched.c) */
    double corun_since;  /* since when (bdr_master_now) */
    double corun_idle_s; /* seconds a slot was kept free so, for --stats */
    char jobdir[BD_PATH_MAX];
} master_t;

extern master_t g_m;

/* A request handler (master.c routes each BD_REQ_* code to one): answers
 * r (== &s->slot->req) through sched.c, or blocks s.  With s->resuming set
 * it is answering anew a request s waited in, and must not yield again. */
typedef void (*bdr_req_handler_t)(slave_t *s, const bd_req_t *r);

/* Modules, from the bottom up. */

/* master.c: processes, the event loop, and the dispatch of requests (the
 * handler table, resuming ranks that got a run slot back). */
/* The local slave of world rank `world`, or NULL when it is on another node. */
slave_t *bdr_master_slave_by_world(int world);
/* End the job with exit status `status` (the first failure only): report,
 * tell the other nodes, kill every rank. */
void bdr_master_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
struct bdr_net_msg;
/* remote.c: the remote-memory tier (-mem-remote). */
/* Place the ranks' lanes after total bytes of shared memory (none when
 * the tier is off or there is one node); the new total. */
uint64_t bdr_remote_layout(bd_shm_hdr_t *h, uint64_t total);
int bdr_remote_init(void);
int bdr_remote_on(void);
/* Serve the ranks' lane requests. */
void bdr_remote_poll(void);
/* s is given a run slot: what it loaded after its last load last time is asked
 * for ahead (remote_ahead.c). */
void bdr_remote_turn(slave_t *s);
/* s is given a run slot: what its loads asked for first last time is asked ahead. */
void bdr_remote_turn(slave_t *s);
/* A BDR_NH_RMT_* message; 1 if it keeps nm (a holder keeps what it stores). */
int bdr_remote_net(struct bdr_net_msg *nm);
/* Bytes of other nodes' memory held here (counted in the node's total). */
uint64_t bdr_remote_held(void);
uint64_t bdr_remote_held_peak(void);
/* Our ranks need memory: give back up to need bytes of other nodes' data;
 * returns the bytes given back and still on their way. */
uint64_t bdr_remote_reclaim(uint64_t need);
/* Memory of the tier's that goes without any rank's help (copies waiting
 * for a holder's answer, chunks on their way); frees what it can now. */
uint64_t bdr_remote_draining(void);
void bdr_remote_node_done(int node);
/* The job fails: name the nodes holding our ranks' data. */
void bdr_remote_lost(void);
void bdr_remote_fini(void);
/* msgstore.c: charge n bytes rank src_world sent (a message to dst_world,
 * or `what` when dst_world < 0) to the spill quota (-spill-max); 0, or -1
 * when the job fails over it. */
int bdr_spill_charge(uint64_t n, int src_world, int dst_world, const char *what);
/* affinity.c: bind the master (and so the ranks it forks) to one CPU (-pin). */
void bdr_affinity_setup(void);
void bdr_affinity_child(void);
/* Monotonic seconds. */
double bdr_master_now(void);
/* SIGKILL every live rank of this node. */
void bdr_master_kill_all(void);
/* oom.c: an allocation of n bytes by fn failed with err: end the job with a
 * message (the master's policy: it never goes on without its memory). */
_Noreturn void bdr_master_oom(const char *fn, size_t n, int err);
/* Start process s (a free slot, set up) running path with argv, in wdir
 * (NULL: ours): 0, or -1 with err set when it could not be started (the
 * exec's failure is known before this returns). */
int bdr_master_start(slave_t *s, const char *path, char *const *argv, const char *wdir, char *err,
                     size_t errlen);

/* spawn.c: dynamic processes (MPI_Comm_spawn, the name service). */
void bdr_spawn_req(slave_t *s, const bd_req_t *r);
void bdr_name_req(slave_t *s, const bd_req_t *r);
struct bdr_net_msg;
/* A BDR_NH_NAME message: another node's publish or unpublish. */
void bdr_name_remote(struct bdr_net_msg *nm);
/* At MPI_Init of spawned s: its bd_spawn_info_t and lists into its window. */
void bdr_spawn_init_answer(slave_t *s);
/* s's slot is free again (its process was reaped). */
void bdr_spawn_slot_reaped(slave_t *s);

/* sched.c: run slots and the run queue, below the request handlers. */
/* Answer s's current request (resp already filled): it goes on. */
void bdr_sched_respond(slave_t *s);
/* s waits (why); BLK_YIELD puts it in the run queue, anything else blocks it. */
void bdr_sched_block(slave_t *s, blk_t why);
/* Put s in the run queue (no-op if it is there). */
void bdr_sched_make_runnable(slave_t *s);
/* Something s may wait for changed: recheck it after this round. */
static inline void bdr_sched_poke(slave_t *s) { s->poke = 1; }
/* A poll found nothing: answer, or give the run slot away if others wait. */
void bdr_sched_poll_failed(slave_t *s);
/* Give a free run slot to the run queue's choice and return it (now
 * SL_RUNNING, to be resumed by the caller); NULL when no slot or no rank. */
/* The rank bdr_sched_next() would pick first among those want() accepts
 * (without giving it a slot); NULL if none. */
slave_t *bdr_sched_peek(int (*want)(const slave_t *));
slave_t *bdr_sched_next(void);
/* Tell the ranks how many wait for a slot (read by their polls). */
void bdr_sched_publish(void);
/* s called MPI_Init: it waits for its first run slot. */
void bdr_sched_inited(slave_t *s);
/* Running s called MPI_Finalize: its slot is free, it is no longer scheduled. */
void bdr_sched_finalized(slave_t *s);
/* s's process is gone: it leaves the counts; returns the state it was in. */
sl_state_t bdr_sched_exited(slave_t *s);
/* Blocked s runs outside the run queue (to serve RMA), counted as running. */
void bdr_sched_lend(slave_t *s);
/* The lent run ends: s is blocked in its request again and rechecked. */
void bdr_sched_lend_end(slave_t *s);

/* node.c: the transport between masters (queues, chunks of large items). */
struct bdr_net_msg;
struct bdr_net_hdr;
/* Set up the queues to the other nodes; 0 or -1. */
int bdr_node_init(void);
/* The node of world rank `world`. */
int bdr_node_of_world(int world);
/* Queue header h and len bytes of data (copied) for node dst. */
void bdr_node_send(int dst, const struct bdr_net_hdr *h, const void *data, size_t len);
/* net_direct.c: copy n bytes between our buffer and rank pid's memory at
 * addr (write: into the rank) with process_vm_readv/writev, the one copy a
 * master makes of a rank's data for another node; 0, or -errno. */
int bdr_vm_copy(pid_t pid, int write, void *local, uint64_t addr, size_t n);
/* The same without a copy: buf (len bytes, from bdr_net_buf) is given away. */
void bdr_node_send_netbuf(int dst, const struct bdr_net_hdr *h, void *buf, size_t len);
/* The same from memory the caller keeps (net.h, bdr_net_send_lent: header
 * room before payload, no other send of it under way): done(arg) is called
 * once it has left and MPICH is done with it, or it was dropped. */
void bdr_node_send_lent(int dst, const struct bdr_net_hdr *h, void *payload, size_t len,
                        void (*done)(void *), void *arg);
/* Queue h, then `total` bytes of fd from file_base in chunks (fd is dup'ed;
 * unlink_path, if any, is removed once sent).  Each chunk is checked before
 * it leaves against the checksums of what was written: a message spill
 * file's trailer (unlink_path set), or blk_ck (a collective spill file's
 * piece: the CRC32C of each BD_FS_DIO_ALIGN block from file_base, the last
 * one with its zero padding; taken over, NULL: none). */
void bdr_node_send_file(int dst, const struct bdr_net_hdr *h, int fd, uint64_t file_base,
                        uint64_t total, const char *unlink_path, uint32_t *blk_ck);
/* A collective item of `total` bytes described by h arrives in chunks next. */
void bdr_node_expect_chunks(const struct bdr_net_hdr *h, uint64_t total);
/* A send of local rank s to a rank of another node (its data from s's window
 * or spill file). */
void bdr_node_send_p2p(slave_t *s, const bd_req_t *r, uint64_t sync_id);
/* Queue header h (no data) for node dst; sent(arg) is called when it has
 * left (handed to the transport, after everything queued before it). */
void bdr_node_send_cb(int dst, const struct bdr_net_hdr *h, void (*sent)(void *), void *arg);
/* net_direct.c: large messages between nodes without spill files (-net-direct). */
/* Running s sends r (BD_SEND_PULL): answered once its data has been read. */
void bdr_direct_send(slave_t *s, const bd_req_t *r, uint64_t sync_id);
/* The envelope h of such a message arrives for m (to be delivered): 0, -1 on failure. */
int bdr_direct_expect(const struct bdr_net_hdr *h, msg_t *m);
/* BD_REQ_NET_PULL: a receive takes such a message. */
void bdr_direct_req_pull(slave_t *s, const bd_req_t *r);
/* Handle nm if it is one of ours: 1 (the caller frees it), 2 (kept), else 0. */
int bdr_direct_dispatch(struct bdr_net_msg *nm);
/* Bytes of chunks received before their receive asked (in the budget). */
uint64_t bdr_direct_held_bytes(void);
/* Progress the sends (read and ship chunks, waits that ran out). */
void bdr_direct_poll(void);
/* Data of ours is on its way or waits to leave: poll without sleeping. */
int bdr_direct_busy(void);
/* s has exited: forget what it waited for. */
void bdr_direct_exited(slave_t *s);
/* Tell the node of sender_world that its synchronous send sync_id matched. */
void bdr_node_sync_matched(int sender_world, uint64_t sync_id);
/* One of s's small sends posted to its queue (bd_slot_t.outq), to the
 * node of e->dst. */
void bdr_node_send_small(slave_t *s, const bd_oentry_t *e, const void *data);
/* p2p.c: ship s's posted small sends, in order (before its requests, and
 * at every turn of the loop). */
int bdr_outq_pending(slave_t *s);
void bdr_outq_take(slave_t *s);
/* MPI_Cancel of s's send send_id to dst_world on another node: asks that
 * node, and answers s when it replies (s waits with its slot meanwhile). */
void bdr_node_cancel(slave_t *s, int dst_world, uint64_t send_id);
/* Tell every other node to end the job with `code` and `msg`. */
void bdr_node_abort_all(int code, const char *msg);
/* All our ranks are gone: tell the others; 1 once every node is done. */
int bdr_node_all_done(void);
/* Move data in and out; returns how many messages came in. */
int bdr_node_progress(void);
/* Nothing queued, arriving or in flight between the masters. */
int bdr_node_quiet(void);
/* Memory the transport holds for other nodes, counted against the budget. */
uint64_t bdr_node_transient_bytes(void);
/* coll_stage.c: memory the master holds for collectives (counted in the budget). */
uint64_t bdr_coll_staging_bytes(void);
/* coll_pipe.c: the node's peak of staged collective data (STAGE_PEAK). */
uint64_t bdr_coll_stage_peak(void);
void bdr_coll_req_take(slave_t *s, const bd_req_t *r);
/* s now waits (blocked) in a call: the nonblocking all-to-alls that
 * pipeline stop holding their senders back for it (coll_pipe.c). */
void bdr_pipe_blocked(slave_t *s);
/* coll.c: store collective pieces kept in memory, up to need bytes; returns
 * what it freed now, and in *coming what the writes under way free when
 * they complete (bdr_stage_poll, then memacct looks again). */
uint64_t bdr_coll_shrink(uint64_t need, uint64_t *coming);
/* The same, and then small pieces too (up to -msg-threshold, kept in memory
 * by design: one block of the spill file each), when nothing else can give
 * the budget room: many ranks' small pieces of one all-to-all took more
 * than an 8 MiB budget at 64 ranks, and the job ended (memacct.c
 * resolve_stuck; test mem.budget.pagerank64). */
uint64_t bdr_coll_shrink_small(uint64_t need, uint64_t *coming);
/* coll_stage.c: reap the collective staging writes that completed (the I/O
 * thread rings g_m.event_fd): free their memory, end the job on a failed
 * one.  Called by the loop before the budget is looked at. */
void bdr_stage_poll(void);
/* For --stats: bytes GETs read from staging writes still in flight,
 * bytes of pieces kept in memory that bdr_coll_shrink stored, and bytes
 * GETs found read ahead. */
void bdr_stage_stats(uint64_t *hits, uint64_t *stored, uint64_t *ahead);
/* coll.c: read ahead the collective pieces of the rank the run queue
 * serves next (called by the loop after it scheduled). */
void bdr_coll_readahead(void);

/* deadlock.c: every live rank of the job blocked and nothing in flight. */
/* A BDR_NH_DEADLOCK message of the detection wave. */
void bdr_deadlock_net(struct bdr_net_msg *nm);
/* Once a round: declare a deadlock (end the job) when there is one. */
void bdr_deadlock_check(void);
/* Deadlock-detection messages this node has sent to others (--stats). */
uint64_t bdr_deadlock_reports(void);
/* Log what each local rank waits for. */
void bdr_deadlock_report_local(void);
/* What s waits for in MPI (blocked), or that it has ended, into what
 * ("waits in MPI_Recv for ..."); 0 when it is in none of those states. */
int bdr_deadlock_describe(slave_t *s, char *what, size_t len);

/* asleep.c: a rank asleep in a system call outside MPI lends its run slot
 * (-lend-asleep).  poll: once a round (samples /proc a few times per
 * period, only while ranks wait for a slot); back: s made a request or
 * ended, so it counts as running again; wait_s: how long the master may
 * sleep before it should look again (-1: no limit). */
void bdr_asleep_poll(void);
void bdr_asleep_back(slave_t *s);
double bdr_asleep_wait_s(void);

/* stall.c: "no silent wait" (-stall-timeout): storage calls that make no
 * progress, and ranks that all wait while nothing moves. */
/* Once a round (it looks at most 4 times a second): end the job with a
 * report of what every rank waits for when it cannot progress. */
void bdr_stall_check(void);
/* Start the watchdog of the master's own storage calls (which block the
 * loop that runs bdr_stall_check). */
void bdr_stall_init(void);
/* The event loop's heartbeat: the loop calls bdr_stall_beat once a turn
 * (it turns at least once a second while the job runs); the watchdog
 * thread ends the job when the beats stop for longer than -stall-timeout
 * while no storage call of the master explains it.  bdr_stall_loop_done:
 * the loop has ended (the masters' orderly end follows, not watched). */
void bdr_stall_beat(void);
void bdr_stall_loop_done(void);
/* The job was stopped (Ctrl-Z) and has been continued: the time it stood
 * still is not a stall of anything. */
void bdr_stall_resumed(void);

/* memacct.c: the node's memory budget (grants, unloads). */
/* The budget when -mem is not given: 3/4 of the available memory. */
uint64_t bdr_memacct_default_budget(void);
void bdr_memacct_ksm_check(void);
/* Once a round: take new requests for memory, grant what fits, unload
 * blocked ranks to make room. */
void bdr_memacct_poll(void);
/* Tell s (not running) to write its memory out; nothing else is sent to it
 * until it is done. */
void bdr_memacct_unload(slave_t *s);
/* The node's accounted resident memory: ranks' managed memory, buffered
 * messages, transient inter-node data, collective staging. */
uint64_t bdr_memacct_node_resident(void);
/* unmanaged.c: a rank's memory outside the manager, measured when it stops
 * running (asking 0: at most every 0.25 s a rank) and at the first ask
 * for memory of each of its turns (asking 1).  Counted in the node's
 * resident memory beyond 384 KiB a rank, up to half of the budget. */
void bdr_unmanaged_sample(slave_t *s, int asking);
/* asleep.c: read /proc/PID/WHAT into buf (NUL-terminated, at most cap - 1
 * bytes); the bytes read, or -errno. */
ssize_t bdr_proc_read(pid_t pid, const char *what, char *buf, size_t cap);
void bdr_unmanaged_exited(slave_t *s);
uint64_t bdr_unmanaged_counted(void);
uint64_t bdr_unmanaged_peak(void);
/* The budget went down: store collective data kept in memory and unload
 * ranks that wait (blocked ones first, the largest first) until the node
 * fits in it or nothing more can be unloaded. */
void bdr_memacct_fit(void);
/* Would c's memory fit beside that of the ranks holding run slots?  (Each
 * counted at what it holds plus the most a turn from the same call loaded
 * beyond what it held at its start: what it is likely to hold.)  1 when no
 * rank holds a slot or there is no budget; 2 when it does not fit but the
 * room left beside them is at least half of what its turn will load: it
 * may run, its grants capped so that they keep what those ranks' turns
 * are expected to load (BDR_CORUN_CAPPED); 0 otherwise. */
#define BDR_CORUN_CAPPED 2
int bdr_memacct_corun_fits(const slave_t *c);
/* s got a run slot / gave it up: its turn's memory is watched / recorded. */
void bdr_memacct_turn_begin(slave_t *s);
void bdr_memacct_turn_end(slave_t *s);

/* pressure.c: the adaptive budget (-mem-adapt, issue 16). */
/* 3/4 of the memory available to the job now: the smaller of MemAvailable
 * and the room under its cgroup's memory limits; 0 if neither is known. */
uint64_t bdr_pressure_default_budget(void);
/* After the budget is set: decide whether it adapts. */
void bdr_pressure_init(void);
/* Does the budget adapt? */
int bdr_pressure_on(void);
/* Once a round of the loop: every PERIOD, sample the signals and move the
 * budget (down at once, up slowly), unloading when it went down. */
void bdr_pressure_poll(void);
/* A running rank cannot fit unless the node has need bytes: an adapted
 * budget below that goes up to it (at most to the ceiling), and the job
 * says once that it runs at its minimum.  1 if the budget went up. */
int bdr_pressure_floor(uint64_t need);
/* For --stats. */
void bdr_pressure_stats(FILE *f);

/* msgstore.c: what the master holds for a local rank until it takes it:
 * one-sided service messages (BD_CTX_RMA_SVC); other messages pass on into
 * the rank's mailbox. */
/* Message m (from here or another node) arrives for world rank dst_world of
 * this node. */
void bdr_msg_deliver(int dst_world, msg_t *m);
/* comm.c: communicator ctx was revoked: answer this node's ranks blocked in
 * a collective on it with BD_RESP_REVOKED (MPIX_Comm_revoke). */
void bdr_comm_revoke(int ctx);
void bdr_comm_req_revoke(slave_t *s, const bd_req_t *r);
/* COLL_WAIT: answered BD_RESP_REVOKED at once on a revoked communicator,
 * else bdr_coll_req_wait. */
void bdr_comm_req_coll_wait(slave_t *s, const bd_req_t *r);
/* The first service message of s matching (ctx, src, tag), left queued. */
msg_t *bdr_msg_peek(slave_t *s, int ctx, int src, int tag);
/* Remove and return the first service message of s matching (ctx, src, tag). */
msg_t *bdr_msg_take(slave_t *s, int ctx, int src, int tag);
/* Answer s's request with m (window or spill file) and free m. */
void bdr_msg_hand_over(slave_t *s, msg_t *m);
/* Free m; remove_file: also its spill file (nobody will read it). */
void bdr_msg_free(msg_t *m, int remove_file);
/* Drop everything s has here and close its mailbox (it finalized or exited). */
void bdr_msg_cleanup(slave_t *s);
/* Synchronous send sync_id of local rank snd has been matched on another node. */
void bdr_msg_sync_matched(slave_t *snd, uint64_t sync_id);

/* p2p.c: sends through the master (to other nodes, RMA service messages). */
void bdr_p2p_req_send(slave_t *s, const bd_req_t *r);

/* mbox.c: the ranks' mailboxes on the master's side. */
void bdr_mbox_attach(slave_t *s); /* set up s's mailbox (before it runs) */
/* The master produces entry *e (inline payload at data) for local rank d. */
void bdr_mbox_push(slave_t *d, const bd_mentry_t *e, const void *data);
/* Once a round: move held entries towards their ranks, release room waits. */
void bdr_mbox_poll(void);
/* Blocked s (BLK_MBOX, BLK_ROOM, BLK_COLL watching its mailbox) may go on. */
int bdr_mbox_ready(slave_t *s);
/* Seconds until the first poll asleep in the master (BD_WAIT_POLL) is due
 * its answer (0: due), -1 if none sleeps. */
double bdr_mbox_poll_wait_s(void);
int bdr_mbox_watch_moved(slave_t *s);
void bdr_mbox_close(slave_t *s); /* s finalized or exited */
/* s stopped running (it waits in a request): under a budget, the pages of
 * the windows and rings of ranks that stopped longest ago that hold nothing
 * are given back (mbox.c). */
void bdr_mbox_stopped(slave_t *s);
/* s exited: the pages of its window and ring are given back (mbox.c). */
void bdr_mbox_exited(slave_t *s);
/* Whether request r's data, in and out, is all in the window's first page. */
int bdr_req_win_page(const bd_req_t *r);
/* coll_small.c: the same for a BD_REQ_COLL_SMALL */
int bdr_coll_small_win_page(const bd_req_t *r);
void bdr_mbox_req_wait(slave_t *s, const bd_req_t *r);
void bdr_mbox_req_full(slave_t *s, const bd_req_t *r);
void bdr_mbox_req_fetch(slave_t *s, const bd_req_t *r);
void bdr_mbox_req_cancel(slave_t *s, const bd_req_t *r);
/* Withdraw the message send_id of src_world from d's mailbox while it is not
 * matched (ring, overflow, inbound list, its unexpected table): 1 if it was. */
int bdr_mbox_cancel(slave_t *d, int src_world, uint64_t send_id);
/* net_direct.c: the message send_id of src_world, waiting to be pulled, was
 * cancelled: drop its data (held, in a spill file, or still to come). */
void bdr_direct_drop(int src_world, uint64_t send_id);
void bdr_mbox_req_sync_ack(slave_t *s, const bd_req_t *r);
/* What blocked s waits for, for a deadlock report. */
void bdr_mbox_describe(slave_t *s, char *buf, size_t len);

/* rma.c: one-sided communication (RMA_* requests; wake targets with work) */
void bdr_rma_req_enable(slave_t *s, const bd_req_t *r);
void bdr_rma_req_next(slave_t *s, const bd_req_t *r);
void bdr_rma_req_done(slave_t *s, const bd_req_t *r);
/* Once a round: flag or wake ranks that have RMA service messages. */
void bdr_rma_poll(void);

/* comm.c: the communicator table (every communicator with members here). */
/* Make the predefined communicators (WORLD, NODE, CWORLD) at start-up. */
void bdr_comm_init_predefined(void);
/* The communicator of context ctx, or NULL. */
comm_t *bdr_comm_lookup(int ctx);
/* A context id no other node or call hands out. */
int bdr_comm_alloc_ctx(void);
/* Register a communicator of size members (world ranks copied); NULL when
 * out of memory.  Data that came for it from other nodes is replayed. */
comm_t *bdr_comm_new(int ctx, int size, const int *world);
/* Remove c once its local members freed it and no collective uses it. */
void bdr_comm_drop_if_unused(comm_t *c);
void bdr_comm_req_ctx_alloc(slave_t *s, const bd_req_t *r);
void bdr_comm_req_register(slave_t *s, const bd_req_t *r); /* temporary/hidden communicators */
void bdr_comm_req_free(slave_t *s, const bd_req_t *r);
void bdr_comm_req_dup(slave_t *s, const bd_req_t *r); /* a dup from a reserved range */
/* Take s's communicator notices (bd_slot_t.cnotes): before any request of
 * s, at every turn of the loop, and at its end. */
void bdr_comm_notes_take(slave_t *s);
static inline int bdr_comm_notes_pending(const slave_t *s)
{
    return atomic_load_explicit(&s->slot->cn_head, memory_order_acquire) !=
           atomic_load_explicit(&s->slot->cn_tail, memory_order_relaxed);
}

/* coll.c: collective requests (the instances' internals are in coll.h). */
void bdr_coll_req_begin(slave_t *s, const bd_req_t *r);
void bdr_coll_req_put(slave_t *s, const bd_req_t *r);
void bdr_coll_req_putref(slave_t *s, const bd_req_t *r); /* coll_ref.c */
void bdr_coll_req_arrive(slave_t *s, const bd_req_t *r);
void bdr_coll_req_test(slave_t *s, const bd_req_t *r);
void bdr_coll_req_wait(slave_t *s, const bd_req_t *r);
void bdr_coll_req_waitany(slave_t *s, const bd_req_t *r); /* COLL_WAITANY, COLL_TESTANY */
void bdr_coll_req_get(slave_t *s, const bd_req_t *r);
void bdr_coll_req_end(slave_t *s, const bd_req_t *r);
/* BD_REQ_COLL_SMALL: BEGIN, PUT, WAIT, GET and END in one (coll_small.c). */
void bdr_coll_req_small(slave_t *s, const bd_req_t *r);
/* Blocked s may go on (it may GET the results of its collective). */
int bdr_coll_ready(slave_t *s);
/* What s, blocked in a collective, waits for, for a deadlock report. */
void bdr_coll_describe(slave_t *s, char *buf, size_t len);

/* trace.c: the master's part of the timeline (-trace FILE, bd_trace.h). */
/* Room for the ranks' trace rings after the slots: the new total size. */
uint64_t bdr_trace_layout(bd_shm_hdr_t *h, uint64_t total);
/* Start tracing (shared memory set up, ranks not started); 0 or -1. */
int bdr_trace_open(void);
/* Once a round: drain the rings, record states and counters. */
void bdr_trace_poll(void);
/* After the job: write the timeline. */
void bdr_trace_finish(void);
/* Its line of --stats. */
void bdr_trace_stats(FILE *f);

/* coll_net.c: collective data from other nodes (BDR_NH_COLL). */
/* A message; its data may follow in chunks. */
void bdr_coll_remote(struct bdr_net_msg *nm);
/* The next chunk (at off) of the large item being received. */
void bdr_coll_remote_chunk(const struct bdr_net_hdr *h, uint64_t off, const char *data, size_t len);
/* The large item being received is complete. */
void bdr_coll_remote_done(const struct bdr_net_hdr *h);

#endif
