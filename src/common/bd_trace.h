/* The timeline of a run (bdmpiexec -trace FILE) and the ranks' time
 * accounting ("where the time went" of --stats).
 *
 * Recording.  Every rank writes fixed-size binary records (bd_trace_rec_t)
 * into its own ring in the job's shared memory, after the slots
 * (bd_shm_hdr_t.trace_offset, one BD_TRACE_RING_BYTES ring per rank).  Any
 * thread of a rank writes: the program's thread (waits in the master),
 * the memory manager's fault handler and I/O workers, a SIGSEGV handler.
 * So writing takes no lock and calls neither malloc nor stdio: a producer
 * reserves a record by compare-and-swap on the ring's head (or drops it
 * and counts it when the ring is full), fills it, and publishes it by
 * storing its sequence number last.  The master is the only consumer: it
 * drains every ring in its event loop into an unlinked file in the job
 * directory, adds its own records (rank states, memory and queue
 * counters), and at the end of the job converts the lot to Chrome
 * trace-event JSON (bd_trace_json.c).  A ring that is half full rings the
 * master's eventfd once, so a rank that loads for a long time without
 * asking the master anything is drained too.
 *
 * Time accounting.  Each rank splits its time between the end of MPI_Init
 * and the start of MPI_Finalize into five parts that add up exactly (the
 * BD_STAT_TIME_* statistics), whether or not the job is traced: see
 * bd_stats.h for their definitions. */
#ifndef BD_TRACE_H
#define BD_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bd_ipc.h"

/* Bytes of one rank's ring (header and records): 2044 records. */
#define BD_TRACE_RING_BYTES (64 * 1024)

/* One record.  In a ring, seq is the record's index + 1 once it is
 * written; in the master's file it is the local rank index the record is
 * about, or BD_TRACE_NODE for records about the whole node. */
typedef struct bd_trace_rec {
    uint64_t t; /* CLOCK_MONOTONIC, ns */
    uint32_t seq;
    uint16_t kind; /* BD_TR_* */
    uint16_t aux;
    uint64_t a, b;
} bd_trace_rec_t;

#define BD_TRACE_NODE 0xffffffffu

enum {
    /* written by a rank */
    BD_TR_WAIT_BEGIN = 1, /* a request that may block: aux = BD_REQ_* code, a = what it waits
                              for (BD_WAIT_* | BD_API_* << 16), b = id of the MPI call's name */
    BD_TR_WAIT_END,       /* its answer came */
    BD_TR_IO,             /* managed-memory storage I/O: t = end, b = start, a = bytes,
                              aux = 0 read (loading), 1 write (unloading) */
    BD_TR_GRANT,          /* waited for the master's memory grant: t = end, b = start,
                              a = bytes asked */
    BD_TR_NAME,           /* a name id: aux = id | chunk << 8; a, b = 16 chars of the name */
    /* written by the master */
    BD_TR_STATE,    /* the master's view of the rank: aux = BD_TRS_*, a = what it is blocked on */
    BD_TR_RANK_MEM, /* a = accounted resident bytes of the rank (managed memory) */
    BD_TR_NODE_MEM, /* node: a = accounted resident bytes, b = the budget (-mem) */
    BD_TR_QUEUED,   /* node: a = bytes of messages queued in memory (mailbox rings and the
                        master's buffers) */
    BD_TR__COUNT
};

/* The master's states of a rank, as recorded. */
enum {
    BD_TRS_PREINIT = 0, /* started, not in MPI_Init yet */
    BD_TRS_RUNNING,     /* holds a run slot */
    BD_TRS_RUNNABLE,    /* waits for a run slot */
    BD_TRS_BLOCKED,     /* waits for a message, a collective, a critical section */
    BD_TRS_FINALIZED,   /* called MPI_Finalize */
    BD_TRS_EXITED
};

typedef struct bd_trace_ring {
    _Atomic uint64_t head; /* records reserved by producers */
    _Atomic uint64_t dropped;
    _Atomic uint32_t kicked; /* the master has been rung since it last drained */
    uint32_t cap;            /* records */
    char pad0[40];
    _Atomic uint64_t tail; /* records consumed by the master */
    char pad1[56];
    bd_trace_rec_t rec[];
} bd_trace_ring_t;

/* ------------------------------------------------------------- rank side */

/* The rank of slot sl starts (its INIT request): time accounting, and
 * recording into its ring when the job is traced; event_fd rings the master. */
void bd_trace_rank_init(bd_shm_hdr_t *h, bd_slot_t *sl, int event_fd);
/* The program's thread waits in the master for the answer to request r
 * (call: the MPI function in progress, or NULL).  Every request counts as
 * waiting; those that may block (and MPI_Init, MPI_Finalize) are recorded.
 * Returns what to give to bd_trace_wait_end when the answer came. */
uint32_t bd_trace_wait_begin(const bd_req_t *r, const char *call);
void bd_trace_wait_end(uint32_t token);
/* The memory manager's storage I/O (bd_mem_config_t.io_begin/io_end):
 * async-signal-safe, any thread. */
void bd_trace_io_begin(void *ctx, int write);
void bd_trace_io_end(void *ctx, int write, size_t bytes, uint64_t t0_ns);
/* A load waits for the master's memory grant (any thread, also the fault
 * handler): begin returns the start time to give to end. */
uint64_t bd_trace_grant_begin(void);
void bd_trace_grant_end(uint64_t t0_ns, size_t bytes);

/* ----------------------------------------------------------- master side */

/* Room for the rings after the slots when tracing: sets h->trace_offset
 * and h->trace_stride (0 when not tracing) and returns the new total size
 * of the shared memory. */
uint64_t bd_trace_layout(bd_shm_hdr_t *h, uint64_t total, int tracing);
/* Start tracing the node of the (mapped, filled) header h into out_path:
 * rings initialised, records kept in an unlinked file in the job directory.
 * Returns 0, or -1 with a message in err. */
int bd_trace_master_open(bd_shm_hdr_t *h, const char *out_path, char *err, size_t errlen);
int bd_trace_active(void);
/* A record of the master, about local rank `who` or BD_TRACE_NODE, now. */
void bd_trace_put(uint32_t who, uint16_t kind, uint16_t aux, uint64_t a, uint64_t b);
/* Move what the ranks recorded to the master's file. */
void bd_trace_drain(void);
/* After the job: drain, convert to JSON (the node's part when nnodes > 1)
 * and release everything.  Returns 0, or -1 after printing why. */
int bd_trace_master_finish(void);
/* Records written and dropped (rings full) so far. */
void bd_trace_counts(uint64_t *written, uint64_t *dropped);

/* ------------------------------------------------------------ conversion */

/* The file each node's master writes: path itself for one node, else
 * path.nodeK. */
void bd_trace_part_path(char *out, size_t len, const char *path, int node, int nnodes);
/* Write the JSON of nrec records (sorted or not; sorted in place) of node
 * `node` to f.  epoch_ns: CLOCK_MONOTONIC time that becomes ts 0. */
typedef struct bd_trace_node_info {
    int node, nnodes, nranks;
    int first_rank;
    uint64_t budget;
    uint64_t epoch_ns;
    uint64_t dropped;
} bd_trace_node_info_t;
int bd_trace_write_json(FILE *f, bd_trace_rec_t *recs, size_t nrec,
                        const bd_trace_node_info_t *info);
/* The launcher, after a job of nnodes masters: merge path.node0 ... into
 * path and remove the parts.  Returns 0, or -1 after saying which parts
 * could not be read (they are kept). */
int bd_trace_merge_parts(const char *path, int nnodes);

#endif
