/* libbdmpi internals: the slave side of BDMPI's MPI. */
#ifndef BD_LIB_H
#define BD_LIB_H

#include <stdint.h>

#include "bd_ipc.h"
#include "mpi.h"

/* Hidden context for the library's own point-to-point traffic on behalf
 * of a communicator (user-op reductions), so it never matches user messages. */
#define BD_CTX_INTERNAL (1 << 30)

typedef struct bd_comm {
    int used;
    int ctx;
    int rank, size;
    int *world;        /* comm rank -> world rank */
    MPI_Errhandler errh;
    uint64_t coll_seq; /* collectives this rank has started on it */
    char name[MPI_MAX_OBJECT_NAME];
} bd_comm_t;

enum { BD_RQ_FREE = 0, BD_RQ_SEND, BD_RQ_SSEND, BD_RQ_RECV };

typedef struct bd_request {
    int kind;
    int done;          /* completed; status saved, not yet reported */
    int err;
    uint64_t rid;      /* posted receive id / sync send id */
    void *buf;
    uint64_t cap;      /* receive buffer bytes */
    MPI_Status status;
} bd_request_t;

typedef struct bd_user_op {
    MPI_User_function *fn;
    int commute;
    int used;
} bd_user_op_t;

typedef struct bd_lib {
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
    bd_comm_t *comms;
    int ncomms;
    bd_request_t *reqs;
    int nreqs;
    bd_user_op_t *ops;
    int nops;
    int mem_active;   /* the memory manager owns large allocations */
} bd_lib_t;

extern bd_lib_t g_bd;

/* init.c */
void bd_rpc(void);
static inline bd_req_t *bd_req_begin(uint32_t code)
{
    bd_req_t *r = &g_bd.slot->req;
    __builtin_memset(r, 0, sizeof *r);
    r->code = code;
    return r;
}
static inline bd_resp_t *bd_resp(void) { return &g_bd.slot->resp; }
/* Report an error as MPI requires: through comm's error handler (MPI_COMM_WORLD's
 * when comm is not valid).  Returns code when the handler returns. */
int bd_error(MPI_Comm comm, int code, const char *call, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Abort the job from inside the library. */
_Noreturn void bd_fatal(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define BD_CHECK_INIT(call)                                                                        \
    do {                                                                                           \
        if (!g_bd.initialized || g_bd.finalized)                                                   \
            bd_fatal(MPI_ERR_OTHER, "%s called %s MPI_Init", call,                                 \
                     g_bd.finalized ? "after MPI_Finalize, not between it and" : "before");        \
    } while (0)

/* mem.c */
void bd_lib_mem_init(void);
void bd_lib_mem_stats(void);
void bd_lib_mem_command(void);
uint64_t bd_lib_mem_resident(void);
void bd_lib_mem_discard(void *buf, uint64_t len);
void bd_lib_mem_prepare(const void *buf, uint64_t len, int for_write);

/* comm.c */
bd_comm_t *bd_comm_get(MPI_Comm comm);
int bd_comm_add(int ctx, int rank, int size, int *world, MPI_Errhandler errh);
void bd_comm_setup_predefined(void);
int bd_world_node(int world);

/* p2p.c */
int bd_check_dtype(MPI_Datatype dt, int *size);
int bd_send_bytes(int ctx, int world_dst, int myrank, int tag, const void *buf, uint64_t n,
                  int sync, uint64_t *sync_id);
/* Blocking receive of up to cap bytes; fills st; returns MPI_SUCCESS or MPI_ERR_TRUNCATE. */
int bd_recv_bytes(int ctx, int src, int tag, void *buf, uint64_t cap, MPI_Status *st);
void bd_status_empty(MPI_Status *st);

/* coll.c */
int bd_user_op_fn(MPI_Op op, bd_user_op_t **out);

#endif
