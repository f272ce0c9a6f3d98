/* libbdmpi, bottom room: the request object, its per-kind operations, the
 * completion engine every Wait/Test call runs on, and the point-to-point
 * transfer primitives the rest of the library sends and receives with. */
#ifndef BDL_REQUEST_H
#define BDL_REQUEST_H

#include <stdint.h>

#include "bd_fs.h"
#include "bd_mbox.h"
#include "core.h"
#include "dt.h"

typedef struct bdl_request bdl_request_t;

/* What a kind's poll operation may do: block (wait in the master until one
 * of the set completes), and what else the set holds: pending requests of
 * other kinds (others), of a kind whose poll never sleeps, so the caller
 * must come back to it (spinning), of a kind polled after this one (later). */
typedef struct bdl_req_poll {
    int block;
    int others;
    int spinning;
    int later;
} bdl_req_poll_t;

/* The operations of one kind of request, defined next to the code that owns
 * the kind (p2p in msg.c, nonblocking collectives in nbc.c, generalized
 * requests in mpi/greq.c).  progress, cancel and free are required; a kind
 * without poll completes only through progress or from outside (pause). */
typedef struct bdl_req_ops {
    /* Try to complete q (without reporting it); blocking: wait for it. */
    void (*progress)(bdl_request_t *q, int blocking);
    /* One poll of the pending requests qs[n] (all of this kind) as p allows;
     * completes those that are ready (sets their done) and returns how many. */
    int (*poll)(bdl_request_t **qs, int n, const bdl_req_poll_t *p);
    int poll_order; /* kinds with a poll are polled in increasing order */
    int spins;      /* its poll never sleeps in the master */
    /* Once this kind's poll leaves a request of the set done, the set's
     * poll ends there, even in the calls that poll every kind (Testall,
     * Testsome, Waitsome): later kinds wait for the next call. */
    int poll_ends;
    /* Completed from outside the library (another thread): a blocking poll
     * polls the whole set until one completes, with pause between polls. */
    void (*pause)(void);
    /* A completed request is being reported: set q->err (and q->status). */
    void (*complete)(bdl_request_t *q);
    /* Release the kind's state of a reported request (its slot is freed). */
    void (*release)(bdl_request_t *q);
    /* MPI_Request_get_status of a completed request (default: copy
     * q->status); h names it for error messages.  Returns an error already
     * reported, or MPI_SUCCESS. */
    int (*status)(bdl_request_t *q, MPI_Request h, MPI_Status *st);
    /* MPI_Cancel, MPI_Request_free (which sets *h to MPI_REQUEST_NULL when
     * it frees): an error already reported, or MPI_SUCCESS. */
    int (*cancel)(bdl_request_t *q, MPI_Request h);
    int (*free)(bdl_request_t *q, MPI_Request *h);
    /* MPI_Start of an inactive persistent request h of this kind (NULL: a
     * persistent point-to-point request, which mpi/p2p_persist.c starts):
     * an error already reported, or MPI_SUCCESS.  It may grow the request
     * table, so it looks q up again by h after starting anything. */
    int (*start)(bdl_request_t *q, MPI_Request h);
} bdl_req_ops_t;

struct bdl_request {
    const bdl_req_ops_t *ops; /* its kind; NULL: the slot is free */
    int done;                 /* completed; status saved, not yet reported */
    int err;
    uint64_t rid; /* posted receive id / sync send id */
    void *buf;
    struct bdl_dt *dt; /* receive datatype (a reference held until delivery) */
    uint64_t count;    /* receive count */
    uint64_t send_id;  /* a nonblocking send's id (MPI_Cancel names it), 0 if none */
    uint64_t cma_id;   /* a single-copy send not yet complete (match.c), 0 if none */
    int send_dst;      /* ... and its destination's world rank */
    /* A receive from a named rank of another node, or a synchronous send to
     * one: only a message our master brings can complete it (a poll loop on
     * it sleeps in the master, mt.c bdl_p2p_poll_failed_remote). */
    int remote;
    /* A receive from a named rank: its world rank + 1 (0: any source, or
     * not a receive); a poll loop on it also sleeps in the master while
     * that rank is parked there (bdl_p2p_parked). */
    int src_world1;
    MPI_Status status;
    /* Persistent requests (MPI_Send_init, MPI_Recv_init, ...): the call to
     * repeat at each MPI_Start; inactive between completion and the next start. */
    int persistent, inactive;
    const bdl_req_ops_t *pkind; /* the kind each start makes */
    int detached;               /* freed by the program while still pending */
    const void *pbuf;
    int pcount, ppeer, ptag;
    MPI_Datatype pdt; /* an alias handle (bdl_dt_alias), freed with the request */
    MPI_Comm pcomm;
    void *impl; /* the kind's own state (nbc.c: the collective; greq.c: callbacks) */
    /* The communicator whose error handler reports the request's error when
     * a Wait or Test call completes it (0: MPI_COMM_WORLD's). */
    MPI_Comm ecomm;
};

/* The order in which receives completed, for a request's done: 1, 2, ...
 * (1 also for kinds that do not keep an order).  MPI_Waitany and
 * MPI_Testany report the earliest of the done requests, not the first in
 * the array: a program that posts several receives from ANY_SOURCE and
 * ends when every sender's last message has come (HPCC's RandomAccess)
 * then sees each sender's messages in the order they were sent.  Under
 * BDMPI many receives complete at once when a rank gets its run slot back,
 * which made such a program see a sender's last message before its
 * earlier ones and lose them. */
int bdl_req_stamp(void);

/* request.c: the request table. */
int bdl_req_new(const bdl_req_ops_t *ops);    /* a new request handle of that kind */
bdl_request_t *bdl_req_lookup(MPI_Request h); /* NULL if h names no request */
/* Free q's slot; the kind's state must be released already. */
void bdl_req_free_slot(bdl_request_t *q);
/* Complete the requests the program freed while still pending (MPI 3.1
 * 3.7.3) as far as they can be without waiting. */
void bdl_req_reap_detached(void);

/* request.c: the completion engine (MPI_Wait, MPI_Test and their any,
 * some and all forms).  call names the MPI call for the errors reported;
 * these check the handles and report their errors themselves. */
int bdl_req_wait(const char *call, MPI_Request *request, MPI_Status *status);
int bdl_req_test(const char *call, MPI_Request *request, int *flag, MPI_Status *status);
int bdl_req_get_status(const char *call, MPI_Request request, int *flag, MPI_Status *status);
int bdl_req_waitall(const char *call, int count, MPI_Request reqs[], MPI_Status *statuses);
int bdl_req_testall(const char *call, int count, MPI_Request reqs[], int *flag,
                    MPI_Status *statuses);
/* flag NULL: wait for one. */
int bdl_req_waitany(const char *call, int count, MPI_Request reqs[], int *index, int *flag,
                    MPI_Status *status);
int bdl_req_waitsome(const char *call, int incount, MPI_Request reqs[], int *outcount,
                     int indices[], MPI_Status *statuses, int block);
int bdl_req_cancel(const char *call, MPI_Request *request);
int bdl_req_release(const char *call, MPI_Request *request); /* MPI_Request_free */
/* The library's own wait and test for all of reqs[n]: no error is reported
 * through a handler; nonzero if one of them completed with an error (each
 * one's in st[i].MPI_ERROR; st may be MPI_STATUSES_IGNORE). */
int bdl_req_waitall_quiet(int count, MPI_Request reqs[], MPI_Status *st);
int bdl_req_testall_quiet(int count, MPI_Request reqs[], int *flag, MPI_Status *st);
/* Wait until request h is complete, leaving it to be finished (by the
 * calls above). */
void bdl_req_progress_one(MPI_Request h);
int bdl_req_bad(const char *call, MPI_Request h); /* report an invalid handle */

/* msg.c: point-to-point transfer. */
void bdl_status_empty(MPI_Status *st);
void bdl_status_proc_null(MPI_Status *st);
/* 0 and *size (bytes per element) when dt is committed and count elements
 * at buf are always count * *size bytes at buf; -1 otherwise. */
int bdl_check_dtype(MPI_Datatype dt, int *size);
/* Buffered sends: they complete at once.  sync: a synchronous send, whose
 * id (for bdl_ssend_wait) goes to *sync_id. */
int bdl_send_bytes(int ctx, int world_dst, int myrank, int tag, const void *buf, uint64_t n,
                   int sync, uint64_t *sync_id);
/* Send count elements of t at buf (packed on the way). */
int bdl_send_typed(int ctx, int world_dst, int myrank, int tag, const void *buf, uint64_t count,
                   const struct bdl_dt *t, int sync, uint64_t *sync_id);
/* ... and a send MPI_Cancel can withdraw by send_id (0: none). */
int bdl_send_typed_id(int ctx, int world_dst, int myrank, int tag, const void *buf, uint64_t count,
                      const struct bdl_dt *t, int sync, uint64_t send_id, uint64_t *sync_id,
                      uint64_t *cma_id);
/* Wait for the receipt of a synchronous send. */
void bdl_ssend_wait(uint64_t sync_id);
/* Blocking receive of up to cap bytes; fills st; returns MPI_SUCCESS or MPI_ERR_TRUNCATE. */
int bdl_recv_bytes(int ctx, int src, int tag, void *buf, uint64_t cap, MPI_Status *st);
/* Blocking receive into count elements of t at buf (unpacked on the way). */
int bdl_recv_typed(int ctx, int src, int tag, void *buf, uint64_t count, const struct bdl_dt *t,
                   MPI_Status *st);
/* The same in two halves (MPI_Sendrecv posts before it sends): begin
 * takes a message already unexpected (NULL, *err set, st filled) or posts
 * the receive; end waits for it and frees it.  Nothing is delivered into
 * buf between the two except by a drain of the mailbox.  src_world: the
 * source's world rank if known (-1): the wait spins while it runs. */
typedef struct precv bdl_precv_t;
bdl_precv_t *bdl_recv_begin(int ctx, int src, int src_world, int tag, void *buf, uint64_t count,
                            const struct bdl_dt *t, MPI_Status *st, int *err);
int bdl_recv_end(bdl_precv_t *p, MPI_Status *st);
/* Withdraw a receive bdl_recv_begin posted and free it (whatever it took
 * is dropped; for a collective that learned its data came another way). */
void bdl_recv_drop(bdl_precv_t *p);
/* Post a receive as a request (src MPI_PROC_NULL: complete at once); the
 * request holds a reference to t until delivery.  Returns its handle. */
MPI_Request bdl_irecv_post(int ctx, int src, int tag, void *buf, uint64_t count, struct bdl_dt *t);
/* A nonblocking send's request (sync: pending until sync_id is received;
 * cma_id: until that single-copy send completes);
 * send_id 0 (MPI_PROC_NULL) cannot be cancelled. */
MPI_Request bdl_isend_req(int sync, uint64_t sync_id, uint64_t send_id, int send_dst,
                          uint64_t cma_id);
/* A receive request complete from the start, with status st and error err. */
MPI_Request bdl_recv_done_req(void *buf, uint64_t count, const MPI_Status *st, int err);

/* match.c: the mailbox and matching in the rank. */
/* The envelope (source, tag, size) of the last message a receive took:
 * for the error a truncated receive reports. */
const bd_mentry_t *bdl_p2p_last(void);
void bdl_p2p_init(void);      /* MPI_Init: may others read our memory (CMA)? */
int bdl_p2p_local(int world); /* world rank is on this node */
/* world is a rank of this node that neither runs nor waits for a run slot:
 * it waits in our master, and only the master can release it. */
int bdl_p2p_parked(int world);
/* Append a message or acknowledgement entry to world rank dst's mailbox:
 * payload nbytes at data, or packed from count elements of t at buf when
 * data is NULL; waits (in the master) while the ring has no room. */
int bdl_p2p_post(int dst, const bd_mentry_t *proto, const void *data, uint64_t nbytes,
                 const struct bdl_dt *t, const void *buf, uint64_t count);
/* The same without waiting: 0 (also when dst is gone), or -ENOSPC when
 * the ring has no room for it now. */
int bdl_p2p_try_post(int dst, const bd_mentry_t *proto, const void *data, uint64_t nbytes,
                     const struct bdl_dt *t, const void *buf, uint64_t count);
/* Post an entry without payload (a single-copy send's envelope), waiting
 * for room; *end: the ring position just past it.  0, or -1 when dst is
 * gone. */
int bdl_p2p_post_end(int dst, const bd_mentry_t *proto, uint64_t *end);
/* World rank dst of this node will read its mailbox soon: it holds a run
 * slot, or sleeps on its mailbox while a run slot is free. */
int bdl_p2p_reader_near(int dst);
/* Single-copy sends (send_cma.c): usable to world rank dst now; post message
 * *proto (its send_id unique) whose n bytes stay at buf until read; 1 once
 * it is complete (blocking: wait, never in the master); settle every one
 * before this rank waits in the master; forget one (cancelled). */
int bdl_p2p_cma_usable(int dst);
uint64_t bdl_p2p_cma_post(int dst, const bd_mentry_t *proto, const void *buf);
int bdl_p2p_cma_done(uint64_t id, int blocking);
void bdl_p2p_settle(void);
/* Wait for a single-copy send of a collective in the ranks, whose
 * receiver reads it in the same call: a running one is given longer. */
void bdl_p2p_cma_wait_coll(uint64_t id);
void bdl_p2p_cma_forget(uint64_t id);
/* msg.c: flow control (-p2p-tokens): 1 when a blocking MPI_Send of n
 * bytes to world rank dst must be synchronous (counted in FLOW_WAITS,
 * logged once per receiver); wait for it with bdl_p2p_flow_wait. */
int bdl_flow_sync(int dst, uint64_t n);
/* match.c: wait until the receiver of synchronous send id (to world rank
 * dst) has matched it; deadlock reports name the flow control. */
void bdl_p2p_flow_wait(uint64_t id, int dst);
/* A contiguous message moves to and from its spill file in system calls of
 * at most this size: each is one storage call the stall detector watches
 * (src/master/stall.c), so none may take longer than -stall-timeout. */
#define BDL_SPILL_STEP ((uint64_t)8 << 20)
/* msg.c: write n bytes (count elements of t at buf; contig if contiguous)
 * of a message to world rank dst to a new spill file of this rank; its
 * number in *file_num.  The bytes count against -spill-max (the job stops
 * with MPI_ERR_QUOTA beyond it). */
void bdl_spill_write(const void *buf, uint64_t count, const struct bdl_dt *t, const char *contig,
                     uint64_t n, int dst, uint64_t *file_num);
/* msg.c: the reader's side of a spill file's checksums (bd_fs.h): ck has
 * summed the first take of its n bytes; sum the rest, compare with what
 * the writer recorded, and stop the rank ("storage returned corrupted
 * data") before the receive returns if they differ.  Frees ck. */
void bdl_spill_check(bd_fs_ck_t *ck, int fd, const char *path, uint64_t take, uint64_t n);
/* msg.c: a message from another node whose data has not come yet
 * (BD_ME_PULL, -net-direct): ask our master for it.  With a contiguous
 * destination dst it writes the first take bytes there (1); with dst NULL
 * it answers with the whole message in a spill file, and *e becomes that
 * spill-file message (0). */
struct bd_mentry;
int bdl_net_pull(struct bd_mentry *e, char *dst, uint64_t take);
int bdl_p2p_drain(void); /* take what the mailbox holds; how many entries */
/* Before waiting in the master for something else (a collective): with
 * receives posted, drain, mark the mailbox asleep (producers then ring the
 * master) and return 1 with *seen the event count to watch (BD_COLL_WATCH);
 * bdl_p2p_watch_end() after the answer.  0: nothing posted, no watch. */
int bdl_p2p_watch_begin(uint32_t *seen);
void bdl_p2p_watch_end(void);
/* Send r, made after bdl_p2p_watch_begin returned watch and *seen, and wait
 * for the answer: with a watch r carries BD_COLL_WATCH, and the watch ends.
 * 1: answered BD_RESP_NOTYET (the mailbox moved; match, then ask again). */
int bdl_p2p_rpc_watched(bd_req_t *r, int watch, uint32_t seen);
/* Before a poll in the master (MPI_Testany of collectives): with receives
 * posted, drain, so that a loop of polls matches as MPI's progress rule asks. */
void bdl_p2p_match_posted(void);
/* Complete every posted receive on context ctx with MPIX_ERR_REVOKED
 * (MPIX_Comm_revoke, locally or by a notice from another member). */
void bdl_p2p_fail_revoked(int ctx);
/* A revoke notice was put in world rank's mailbox: tell it (its slot's
 * revoke_seq), so its next collective call drains the mailbox first. */
void bdl_p2p_note_revoke(int world);
/* At a collective call: drain the mailbox if a revoke notice came since the
 * last look, so the communicator's revoked flag is current. */
void bdl_p2p_revoke_check(void);
uint64_t bdl_p2p_sync_new(void); /* a synchronous send's id, pending until acknowledged */
void bdl_p2p_sync_forget(uint64_t id);
/* 1 once the synchronous send id is matched; blocking: wait for that. */
int bdl_p2p_sync_done(uint64_t id, int blocking);
void bdl_p2p_poll_failed(void); /* a poll found nothing: yield if a rank waits */
/* ... and it waited only for messages from ranks of other nodes (a receive
 * or probe whose source is there, a synchronous send to one): a poll loop
 * sleeps in the master until one comes (mt.c, -poll-remote). */
void bdl_p2p_poll_failed_remote(void);
/* ... or it was an RMA epoch on the rank's own window (done without another
 * rank: a loop of them polls; not one in every -poll-quantum of running). */
void bdl_p2p_poll_failed_own(void);
/* Sleep in the master until our mailbox moves after the last drain, or
 * max_ns pass; our run slot goes to another rank meanwhile. */
void bdl_p2p_poll_sleep(uint64_t max_ns);
/* The mailbox's event count; wait (spin, then sleep in the master) until it
 * differs from seen, which was read before the last look (why: BD_WAIT_*). */
uint32_t bdl_p2p_event_seq(void);
void bdl_p2p_wait_event(uint32_t seen, int why);
/* Post the receive request handle (its buf, dt, count set) on (ctx, src, tag). */
void bdl_p2p_post_recv(int handle, int ctx, int src, int tag);
/* Complete the receive requests of qs[n] whose message is here; block:
 * until one is.  Returns how many are done. */
int bdl_p2p_recv_poll(bdl_request_t **qs, int n, int block);
int bdl_p2p_cancel_recv(bdl_request_t *q);             /* 1 if withdrawn before a match */
void bdl_p2p_recv_moved(bdl_request_t *q, int handle); /* MPI_Start moved it */
/* A completed receive request is reported (or freed): its payload, if it
 * was left in its spill file at the match, is copied into its buffer now
 * and q->err, q->status set. */
void bdl_p2p_recv_settle(bdl_request_t *q);
int bdl_p2p_cancel_send(int dst, uint64_t send_id); /* 1 if withdrawn unseen */
/* Probe (take: MPI_Mprobe, the message leaves the queue and *match_id names
 * it for bdl_p2p_mrecv); 1 and st's source, tag and size when found, -1
 * when a blocking probe's communicator was revoked while it waited.
 * remote: src is a rank of another node (bdl_p2p_poll_failed_remote);
 * src_world: its world rank, -1 for any source (bdl_p2p_parked). */
int bdl_p2p_probe(int ctx, int src, int tag, int blocking, int take, int remote, int src_world,
                  MPI_Status *st, uint64_t *match_id);
int bdl_p2p_mrecv(uint64_t match_id, void *buf, const struct bdl_dt *t, uint64_t count,
                  MPI_Status *st);

/* The kinds of point-to-point requests (MPI_Start makes them again). */
extern const bdl_req_ops_t bdl_req_send_ops, bdl_req_ssend_ops, bdl_req_recv_ops;

#endif
