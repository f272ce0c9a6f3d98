/* bdmprun: the master of one node.  It spawns the node's ranks (slaves),
 * answers their requests, buffers their messages, runs their collectives
 * and decides which of them may run (node-level cooperative multitasking,
 * bdmpi.txt 5.2).  Single-threaded: one event loop over an eventfd that
 * slaves ring and a signalfd for SIGCHLD/SIGTERM. */
#ifndef BD_MASTER_H
#define BD_MASTER_H

#include <stdint.h>
#include <sys/types.h>

#include "bd_ipc.h"
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
    BLK_RECV,    /* WAIT/RECV on a posted receive */
    BLK_ANY,     /* WAITANY on several posted receives */
    BLK_PROBE,
    BLK_SSEND,
    BLK_COLL,
    BLK_CRIT,
    BLK_INIT,    /* waiting for its first run slot */
    BLK_YIELD,   /* gave its slot away after an unsuccessful poll */
} blk_t;

typedef struct msg {
    struct msg *next;
    int32_t ctx, src, tag;
    int32_t src_world;
    uint64_t nbytes;
    uint64_t file_num; /* spill file number when in_file */
    int in_file;
    uint64_t sync_id;  /* nonzero: a synchronous send waits for the match */
    char *data;
} msg_t;

typedef struct precv {
    struct precv *next;
    uint64_t rid;
    int32_t ctx, src, tag;
    msg_t *bound;
} precv_t;

typedef struct sync_rec {
    uint64_t id;
    int matched;
} sync_rec_t;

struct coll;

typedef struct slave {
    int idx;        /* index on this node */
    int world;      /* world rank */
    pid_t pid;
    sl_state_t state;
    blk_t blk;
    int exited, exit_status, inited, finalized;
    bd_slot_t *slot;
    char *win;
    uint32_t seen_req;  /* last req_seq handled */
    uint64_t runnable_order;
    msg_t *unexp_head, *unexp_tail;  /* unexpected messages, arrival order */
    precv_t *posted_head, *posted_tail;
    sync_rec_t *syncs;
    int nsyncs, capsyncs;
    struct coll *coll;  /* collective it is inside of */
    int coll_rank;      /* its rank in that collective's communicator */
    int crit_granted;
    int poke;           /* something it may be waiting for changed */
    int resuming;       /* being resumed: a failed poll must not yield again */
    /* memory accounting (memacct.c) */
    uint32_t seen_mem_req;
    int mem_pending;    /* waits for a grant of mem_want bytes */
    uint64_t mem_want;
    uint64_t mem_order;
    int unload_sent;    /* told to unload; nothing else is sent until it is done */
} slave_t;

typedef struct comm {
    int ctx;
    int size;
    int *world;  /* comm rank -> world rank */
    int refs;
} comm_t;

/* A piece of collective data: in memory, or (when larger than the message
 * threshold) at file_off in the collective's spill file. */
typedef struct piece {
    uint64_t total, filled;
    char *data;
    int in_file;
    uint64_t file_off;
} piece_t;

typedef struct coll {
    struct coll *next;
    comm_t *comm;
    int ctx;
    uint64_t seq;
    bd_coll_desc_t d;
    int began, arrived, ended;
    int *rank_arrived;  /* by comm rank */
    piece_t *pieces;    /* see coll_piece() */
    size_t npieces;
    uint64_t elem_size;
    char *acc;          /* running fold of reductions */
    int next_fold;      /* ranks 0..next_fold-1 are folded */
    piece_t *results;   /* per-rank results (scan prefixes, new communicators) */
    int fd;             /* spill file of large pieces (unlinked at creation), or -1 */
    uint64_t file_end;
} coll_t;

typedef struct master {
    bd_opts_t opts;
    bd_shm_hdr_t *hdr;
    int shm_fd, event_fd, signal_fd, epoll_fd;
    int ns, nr, nc;
    slave_t *slaves;
    int nrunning, nrunnable, nlive, ninit_pending;
    uint64_t order_counter;
    uint64_t next_sync_id;
    comm_t **comms;
    int ncomms;
    int next_ctx;
    coll_t *colls;
    int crit_count;
    int job_failed;      /* exit status to report; 0 while all is well */
    int stopping;
    double t_start;
    uint64_t bytes_buffered, peak_buffered;
    uint64_t coll_file_bytes;
    int nunloading;
    uint64_t peak_node_resident;
    char jobdir[BD_PATH_MAX];
} master_t;

extern master_t g_m;

/* master.c */
void bd_master_respond(slave_t *s);
void bd_master_block(slave_t *s, blk_t why);
void bd_master_make_runnable(slave_t *s);
static inline void bd_master_poke(slave_t *s) { s->poke = 1; }
/* A poll found nothing: answer, or give the run slot away if others wait. */
void bd_master_poll_failed(slave_t *s);
slave_t *bd_master_slave_by_world(int world);
void bd_master_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
double bd_master_now(void);

/* p2p.c: return 1 when the request was answered, 0 when the slave blocked. */
int bd_p2p_handle(slave_t *s);
void bd_p2p_resume(slave_t *s);
int bd_p2p_ready(slave_t *s);
void bd_p2p_describe(slave_t *s, char *buf, size_t len);
void bd_p2p_cleanup(slave_t *s);

/* memacct.c */
uint64_t bd_memacct_default_budget(void);
void bd_memacct_poll(void);
void bd_memacct_unload(slave_t *s);

/* coll.c */
int bd_coll_handle(slave_t *s);
void bd_coll_resume(slave_t *s);
int bd_coll_ready(slave_t *s);
void bd_coll_describe(slave_t *s, char *buf, size_t len);
void bd_comm_init_predefined(void);
comm_t *bd_comm_lookup(int ctx);
int bd_comm_alloc_ctx(void);

#endif
