/* The remote-memory tier's internals shared by remote.c and remote_tab.c. */
#ifndef BDR_REMOTE_H
#define BDR_REMOTE_H

#include <stddef.h>
#include <stdint.h>

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
    uint32_t refs; /* of them still held from here */
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

#endif
