/* Busy waiting between ranks (spin.c). */
#ifndef BDL_SPIN_H
#define BDL_SPIN_H

#include <stdint.h>

#include "bd_mbox.h"

typedef struct bdl_spin {
    uint64_t t0;
    int peer;    /* the world rank whose action ends the wait, or -1 */
    int checked; /* whether it shares our CPU has been looked at */
} bdl_spin_t;

/* Start a busy wait for world rank peer (-1: any). */
void bdl_spin_start(bdl_spin_t *s, int peer);
/* Step i of the wait (a pause); 1 when it should stop: the awaited rank
 * shares our CPU. */
int bdl_spin_step(bdl_spin_t *s, unsigned i);
/* Is spinning for world rank `from` (-1: any) worth it now? */
int bdl_spin_worth(int from);

/* Pairing (docs/design.md, "Scheduling"): world rank `from`, of this node,
 * waits for a run slot with its wait over; ask the master to give it the
 * next free one while we spin until it sends to us.  1 if asked: the
 * request is ours until bdl_spin_gift_drop().  Only one rank of the node
 * asks at a time, and not one that another rank spins for. */
int bdl_spin_gift_take(int from);
/* While we hold the request for `from`: 2 it now runs (spin as for a
 * running rank), 1 it still waits for a slot and nobody spins for us (go
 * on), 0 stop. */
int bdl_spin_gift_state(int from);
void bdl_spin_gift_drop(void);
/* We wait for a message from world rank `from` (-1: no one rank, or
 * done waiting), published for bdl_spin_gift_take. */
void bdl_spin_await(int from);
/* We spin (on) or stopped spinning (off) until world rank `from` acts:
 * counted in its slot, so that it does not itself wait for a slot for
 * another rank while we hold ours waiting for it. */
void bdl_spin_mark(int from, int on);

/* Spin until our mailbox mb moves past `seen` (1) or spinning stops being
 * worth it (0), for at most spin_ns; `from`: the world rank whose message
 * we wait for, -1 any. */
int bdl_spin_event(bd_mbox_t *mb, uint32_t seen, int from, uint64_t spin_ns);

#endif
