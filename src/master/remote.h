/* The remote-memory tier's internals shared by remote.c and remote_tab.c. */
#ifndef BDR_REMOTE_H
#define BDR_REMOTE_H

#include <stddef.h>
#include <stdint.h>

#include "bd_ipc.h"
#include "net.h"

typedef struct rkey {
    int32_t node, slot; /* owner's node (holder table) or 0 (owner table); the rank's slot */
    uint64_t id, sb;    /* the rank's allocation and sbpage */
} rkey_t;

/* Holder: a received PUT chunk, kept as the copy of its sbpages. */
typedef struct hbuf {
    bdr_net_msg_t *m;
    rkey_t k0;     /* its first sbpage */
    uint32_t n;    /* sbpages in it */
    uint32_t refs; /* of them still held from here, and 1 while lent */
    int lent;      /* being sent as it is (its header room is in use) */
} hbuf_t;

typedef struct rent {
    struct rent *next;
    rkey_t k;
    int32_t loc;   /* owner: the holding node, or -1 in the returned file */
    uint64_t seq;  /* the copy's sequence number (owner's, carried by PUT) */
    uint64_t foff; /* owner, loc -1: offset in the returned file */
    char *data;    /* holder: the sbpage, in hb's message */
    hbuf_t *hb;
} rent_t;

typedef struct rtab {
    rent_t **b;
    size_t nb, n;
} rtab_t;

/* The entry of k, or NULL. */
rent_t *bdr_rtab_find(rtab_t *t, const rkey_t *k);
/* The entry of k, made if absent; NULL out of memory. */
rent_t *bdr_rtab_get(rtab_t *t, const rkey_t *k);
/* Remove k's entry (its held sbpage with it, bdr_remote_hb_unref). */
void bdr_rtab_del(rtab_t *t, const rkey_t *k);
/* One sbpage of hb is no longer held here: the buffer goes with the last. */
void bdr_remote_hb_unref(hbuf_t *hb);

/* A lane's request in progress. */
typedef struct lop {
    uint32_t op, nsb;
    uint64_t id, sb, seq;
    uint64_t addr; /* the rank's buffer (0: the lane's data area) */
    int holder;    /* PUT: where it went */
    int waiting;   /* answers not yet in (PUT: ACKs of its chunks; GET: DATA chunks) */
    int refused;   /* PUT: a chunk was refused */
    uint8_t filled[BD_RMT_LANE_BYTES / 4096];
} lop_t;

/* What remote.c shares with remote_ahead.c. */
typedef struct rmt_state {
    lop_t *lop;    /* per slot and lane: the rank's request in progress */
    rtab_t own;    /* owner: where our ranks' sbpages are */
    size_t sbpage; /* the job's */
    uint32_t cpc;  /* sbpages per chunk (message) of a run */
} rmt_state_t;
extern rmt_state_t bdr_rmt;

/* remote.c */
void bdr_rmt_stat_add(int slot, int which, uint64_t n);
/* A chunk of the answer to a GET: into the rank's buffer, or the lane. */
void bdr_rmt_owner_data(bdr_net_msg_t *nm);

/* remote_ahead.c: runs asked for before the rank asks (docs/design.md,
 * "Remote-memory tier", Ahead). */
int bdr_rmt_ahead_init(void);
/* Bytes of chunks kept for GETs not made yet (counted in the budget). */
uint64_t bdr_rmt_ahead_bytes(void);
/* The rank's GET in lane k is answered from a run asked ahead: 1, else 0. */
int bdr_rmt_ahead_take(int slot, int k, lop_t *op);
/* After the rank's GET of r: ask ahead for what is likely to come next. */
void bdr_rmt_ahead_ask(int slot, const lop_t *r);
/* A DATA chunk of a run asked ahead: 1 if kept. */
int bdr_rmt_ahead_data(bdr_net_msg_t *nm);
/* [sb, sb+n) of id changed: what was asked ahead of it is dropped. */
void bdr_rmt_ahead_stale(int slot, uint64_t id, uint64_t sb, uint32_t n);
/* Drop what nobody took in time (all of it: all); the bytes freed. */
uint64_t bdr_rmt_ahead_expire(int all);

#endif
