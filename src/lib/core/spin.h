/* Busy waiting between ranks (spin.c). */
#ifndef BDL_SPIN_H
#define BDL_SPIN_H

#include <stdint.h>

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

#endif
