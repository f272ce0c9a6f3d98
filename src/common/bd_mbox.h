/* A rank's mailbox: the shared-memory queue through which every
 * point-to-point message and synchronous-send acknowledgement reaches it.
 *
 * Producers are the other ranks of the node (and the master, for messages
 * from other nodes); they append under the mailbox's lock, in their program
 * order.  The consumer is the rank itself while it runs, or the master
 * while the rank waits in a request the master has not answered: never both,
 * so the consumer side needs no lock.  Each entry carries an atomic state a
 * consumer and a cancelling sender race for (READY -> TAKEN or CANCELLED),
 * so a send can be withdrawn until the receiver has seen it.
 *
 * The ring lives in the job's memfd, outside every rank's managed memory,
 * so a message can be sent to a rank whose memory is unloaded.  Messages
 * that do not fit inline (above the eager limit) are in spill files the
 * entry names. */
#ifndef BD_MBOX_H
#define BD_MBOX_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* BUSY: its sender rewrites it in place (a single-copy send becoming a
 * spill file); a consumer waits for it to be READY again. */
enum { BD_ME_FREE = 0, BD_ME_READY, BD_ME_TAKEN, BD_ME_CANCELLED, BD_ME_BUSY };
enum { BD_ME_MSG = 1, BD_ME_ACK, BD_ME_PAD };

/* entry flags (besides BD_SEND_SYNC and BD_SEND_FILE of bd_ipc.h) */
/* A synchronous send from another node: acknowledged through the master
 * (BD_REQ_SYNC_ACK). */
#define BD_ME_REMOTE_SYNC 0x10
/* A single-copy message: the payload stays in the sender's memory at
 * address file_num (process src_world) until the consumer has read it
 * (process_vm_readv).  Every consumer reads it before it moves the ring's
 * tail past the entry, so the tail passing it tells the sender the read
 * is over: no acknowledgement entry. */
#define BD_ME_CMA 0x20
/* A spill-file message counted in its sender's flow_out (-p2p-tokens):
 * whoever removes the file gives the bytes back (bd_mbox_flow_done). */
#define BD_ME_FLOW 0x40

typedef struct bd_mentry {
    _Atomic uint32_t state;
    uint32_t size; /* bytes of the entry with its inline payload, a multiple of 64 */
    uint32_t kind;
    int32_t flags;
    int32_t ctx, src, tag, src_world; /* src: the sender's rank in the communicator */
    uint64_t nbytes;
    uint64_t send_id; /* the sender's id of a nonblocking send (cancel), 0 if none */
    uint64_t sync_id; /* synchronous send: the id the acknowledgement names; ACK: the id */
    uint64_t file_num;
} bd_mentry_t;

#define BD_MENTRY_ALIGN 64

static inline uint64_t bd_mentry_size(uint64_t inline_bytes)
{
    return (sizeof(bd_mentry_t) + inline_bytes + BD_MENTRY_ALIGN - 1) / BD_MENTRY_ALIGN *
           BD_MENTRY_ALIGN;
}

static inline char *bd_mentry_data(bd_mentry_t *e) { return (char *)(e + 1); }

typedef struct bd_mbox {
    _Atomic uint32_t lock; /* producers' futex mutex: 0 free, 1 held, 2 held with waiters */
    _Atomic uint32_t dead; /* the owner has exited: producers drop their messages */
    _Atomic uint64_t head; /* bytes ever produced (under the lock) */
    char pad0[48];
    _Atomic uint64_t tail; /* bytes ever consumed (by the consumer) */
    /* Bumped after every append: the owner waits for it to change. */
    _Atomic uint32_t event_seq;
    /* The owner waits in the master for event_seq to change: a producer
     * that bumps it rings the master. */
    _Atomic uint32_t sleeping;
    /* Entries the master holds for the owner (taken from the ring while
     * the owner waited): older than anything in the ring, so the owner
     * fetches them (BD_REQ_MBOX_FETCH) before it reads the ring. */
    _Atomic uint32_t overflow;
    /* Someone waits in the master for room in the ring: the consumer
     * rings the master when it frees some. */
    _Atomic uint32_t room_wanted;
    char pad1[40];
    uint64_t size; /* ring bytes, a power of two */
    char pad2[56];
} bd_mbox_t;

static inline char *bd_mbox_ring(bd_mbox_t *mb) { return (char *)(mb + 1); }

/* Messages of nonblocking sends that the owner has drained but not matched
 * yet (its unexpected queue is private) stay cancellable through this
 * table after the ring: the owner registers them, a sender cancels by
 * compare-and-swap, the owner claims one when a receive or a matched probe
 * takes it.  word = generation << 2 | BD_UX_*, so a slot freed and reused
 * is never cancelled by mistake.  A full table leaves further messages
 * uncancellable (a cancel then fails, which MPI allows for a standard send;
 * see docs/design.md). */
#define BD_MBOX_UNEXP 1024
enum { BD_UX_FREE = 0, BD_UX_WAITING = 1, BD_UX_CANCELLED = 2 };
typedef struct bd_unexp {
    _Atomic uint64_t word;
    int32_t src_world;
    int32_t pad;
    uint64_t send_id;
} bd_unexp_t;

static inline bd_unexp_t *bd_mbox_unexp(bd_mbox_t *mb)
{
    return (bd_unexp_t *)(bd_mbox_ring(mb) + mb->size);
}

/* Bytes of a mailbox with a ring of ring_size bytes. */
static inline uint64_t bd_mbox_bytes(uint64_t ring_size)
{
    return sizeof(bd_mbox_t) + ring_size + BD_MBOX_UNEXP * sizeof(bd_unexp_t);
}

/* Owner: register a drained message; its slot, or -1 when the table is full. */
int bd_mbox_unexp_add(bd_mbox_t *mb, int src_world, uint64_t send_id);
/* Owner: take slot i (freeing it): 1 if the message is still there, 0 if
 * its sender cancelled it. */
int bd_mbox_unexp_claim(bd_mbox_t *mb, int i);
/* Owner: 1 if slot i's message has been cancelled (the slot is kept). */
int bd_mbox_unexp_cancelled(bd_mbox_t *mb, int i);
/* Sender: cancel its message (src_world, send_id) if the owner holds it
 * unmatched; 1 if cancelled. */
int bd_mbox_unexp_cancel(bd_mbox_t *mb, int src_world, uint64_t send_id);

void bd_mbox_init(bd_mbox_t *mb, uint64_t ring_size);
/* Remove the spill file of message e (path) and give its bytes back to
 * the spill quota and, when e is BD_ME_FLOW, to its sender's flow_out;
 * only the caller that removed the file gives them back. */
struct bd_shm_hdr;
void bd_mbox_drop_file(struct bd_shm_hdr *h, const bd_mentry_t *e, const char *path);
void bd_mbox_lock(bd_mbox_t *mb);
void bd_mbox_unlock(bd_mbox_t *mb);

/* Append (under the lock, which the caller holds) an entry made of *proto
 * (state and size are set here) and nbytes of payload at data (or, with
 * pack, produced by pack(arg, dst, n) into the ring).  Returns 0,
 * -ENOSPC when the ring has no room (nothing is written), -EPIPE when the
 * owner is dead. */
typedef void (*bd_mbox_pack_fn)(void *arg, char *dst, uint64_t n);
int bd_mbox_append(bd_mbox_t *mb, const bd_mentry_t *proto, const void *data, uint64_t nbytes,
                   bd_mbox_pack_fn pack, void *arg);

/* Bump event_seq after appends; returns 1 when the owner sleeps in the
 * master, which the caller must then ring. */
int bd_mbox_notify(bd_mbox_t *mb);

/* Whether an entry of inline_bytes could ever fit. */
int bd_mbox_fits(const bd_mbox_t *mb, uint64_t inline_bytes);
/* Bytes free for producers now. */
uint64_t bd_mbox_room(bd_mbox_t *mb);

/* Consumer: the entry at the consumer position, or NULL when the ring is
 * empty (padding is skipped).  bd_mbox_consume moves past it.  After a
 * batch, bd_mbox_consumed() publishes the new position and returns 1 when
 * a producer waits for room (the caller rings the master). */
bd_mentry_t *bd_mbox_peek(bd_mbox_t *mb, uint64_t *pos);
void bd_mbox_advance(bd_mbox_t *mb, uint64_t *pos, const bd_mentry_t *e);
int bd_mbox_consumed(bd_mbox_t *mb, uint64_t pos);

/* Consumer: claim entry e (READY -> TAKEN, waiting out BUSY); 0 if it
 * was cancelled. */
int bd_mbox_take(bd_mentry_t *e);

/* The entry of message (src_world, send_id) between the consumer position
 * and head (the caller holds the lock), or NULL. */
bd_mentry_t *bd_mbox_find(bd_mbox_t *mb, int src_world, uint64_t send_id);

/* A sender withdraws its unseen message (src_world, send_id): CANCELLED
 * wins over a consumer only while the entry is READY.  The caller holds
 * the lock (so the entries between tail and head stay in place).  Returns
 * 1 and the entry's copy in *out when it was withdrawn, -1 while a
 * consumer is taking it (it will be past the consumer position soon),
 * 0 when it is not in the ring. */
int bd_mbox_cancel(bd_mbox_t *mb, int src_world, uint64_t send_id, bd_mentry_t *out);

#endif
