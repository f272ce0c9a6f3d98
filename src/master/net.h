/* Master-to-master transport for multi-node jobs, over a real MPI (MPICH).
 * Only net_mpich.c sees MPICH's header; the rest of the master uses this
 * neutral interface.  Everything is non-blocking so the master's single
 * event loop keeps serving its ranks: sends are queued and progressed by
 * bdr_net_poll(), received messages are handed out one at a time.
 *
 * A message is a fixed header plus an optional payload.  Messages from one
 * master to another arrive in the order they were queued. */
#ifndef BDR_NET_H
#define BDR_NET_H

#include <stddef.h>
#include <stdint.h>

typedef struct bdr_net_hdr {
    uint32_t type;
    int32_t src_node;
    int32_t a[8];
    uint64_t u[6];
} bdr_net_hdr_t;

typedef struct bdr_net_msg {
    bdr_net_hdr_t h;
    size_t len;    /* payload bytes */
    char *payload; /* points into the same allocation */
    size_t cap;    /* bytes of that allocation */
} bdr_net_msg_t;

/* Header and payload of a chunk of a large transfer: buffers of these two
 * sizes (chunks of 256 KiB, the remote tier's and net_direct.c's; of 1
 * MiB, node.c's) are kept for reuse (bdr_net_buf, received messages).  A
 * received message also carries its bdr_net_msg_t in front: room for it,
 * so that a chunk is received into a kept buffer too (it was one byte
 * over, and every received chunk was a fresh mapping to fault in). */
#define BDR_NET_POOL_SMALL (sizeof(bdr_net_msg_t) + sizeof(bdr_net_hdr_t) + ((size_t)256 << 10))
#define BDR_NET_POOL_LARGE (sizeof(bdr_net_msg_t) + sizeof(bdr_net_hdr_t) + ((size_t)1 << 20))

/* Start the transport (MPI_Init_thread).  Returns 0, or -1 with a message. */
int bdr_net_init(int *argc, char ***argv, int *node, int *nnodes);
/* Queue a message to node `dst`; the payload is copied.  Returns 0 or -1. */
int bdr_net_send(int dst, const bdr_net_hdr_t *h, const void *payload, size_t len);
/* Bytes queued or in flight towards dst (for flow control). */
size_t bdr_net_pending(int dst);
/* Sending without a copy: a payload buffer of len bytes, filled by the
 * caller and given away by bdr_net_send_buf (or freed by bdr_net_free_buf). */
void *bdr_net_buf(size_t len);
int bdr_net_send_buf(int dst, const bdr_net_hdr_t *h, void *payload, size_t len);
void bdr_net_free_buf(void *payload, size_t len);
/* Sending from memory the caller keeps (the remote tier's held chunks and
 * write-behind copies, sent without copying them into a message): the
 * sizeof(bdr_net_hdr_t) bytes before payload take the header, so no other
 * send from the same memory may be under way; done(arg) is called once
 * MPICH no longer reads it (sent, or the send failed, possibly before this
 * returns).  Returns 0 or -1. */
int bdr_net_send_lent(int dst, const bdr_net_hdr_t *h, void *payload, size_t len,
                      void (*done)(void *), void *arg);
/* Bytes of lent payloads in flight: their lenders count that memory, so it
 * is left out of what the transport holds (bdr_node_transient_bytes). */
size_t bdr_net_lent_bytes(void);
/* Bytes of buffers kept for reuse (counted in the node's budget). */
size_t bdr_net_held(void);
/* Free the buffers kept for reuse (the node needs the memory). */
void bdr_net_trim(void);
/* The kept buffers may hold up to bytes (at least 4 MiB, at most 64 MiB):
 * set from a holder's room to spare (remote.c). */
void bdr_net_pool_limit(size_t bytes);
/* Tell the nodes sent to since the last call that MPICH has messages for
 * them (their doorbells); call before sleeping. */
void bdr_net_flush(void);
/* The doorbell: readable when another master has sent us messages, then
 * drained by bdr_net_doorbell().  -1 if there is none. */
int bdr_net_fd(void);
void bdr_net_doorbell(void);
/* --stats: doorbells sent, doorbells of this job received, and the reads of
 * the socket that took them. */
void bdr_net_bell_stats(uint64_t *rung, uint64_t *heard, uint64_t *reads);
/* node.c has sends waiting for earlier ones to complete (its tokens):
 * bdr_net_busy polls for their completion without pause. */
void bdr_net_out_blocked(int on);
/* MPICH holds work of ours: a receive under way, messages announced by a
 * doorbell not received yet, or a send not complete (with the masters on
 * several hosts, or while node.c waits for tokens; net_mpich.c).  While it does, the
 * caller keeps calling bdr_net_poll() instead of sleeping. */
int bdr_net_busy(void);
/* Progress sends; return the next received message (free with
 * bdr_net_msg_free()) or NULL. */
bdr_net_msg_t *bdr_net_poll(void);
void bdr_net_msg_free(bdr_net_msg_t *m);
/* Messages sent to other masters so far (--stats). */
uint64_t bdr_net_sent_total(void);
/* All queued sends have completed. */
int bdr_net_idle(void);
/* Orderly end (MPI_Finalize) once every master has said it is done. */
void bdr_net_fini(void);
/* End the whole job from here (MPI_Abort). */
void bdr_net_abort(int code);
/* A send to another master has failed: the link is broken, and the job
 * cannot end in order (DONE cannot be sent); it ends with bdr_net_abort. */
int bdr_net_broken(void);

#endif
