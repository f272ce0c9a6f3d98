/* libbdmpi, bottom room: the request object and the point-to-point
 * transfer primitives the rest of the library sends and receives with. */
#ifndef BDL_REQUEST_H
#define BDL_REQUEST_H

#include <stdint.h>

#include "core.h"
#include "dt.h"

enum { BDL_RQ_FREE = 0, BDL_RQ_SEND, BDL_RQ_SSEND, BDL_RQ_RECV, BDL_RQ_COLL };

typedef struct bdl_request {
    int kind;
    int done; /* completed; status saved, not yet reported */
    int err;
    uint64_t rid; /* posted receive id / sync send id */
    void *buf;
    struct bdl_dt *dt; /* receive datatype (a reference held until delivery) */
    uint64_t count;    /* receive count */
    uint64_t send_id;  /* a nonblocking send's id (MPI_Cancel names it), 0 if none */
    int send_dst;      /* ... and its destination's world rank */
    MPI_Status status;
    /* Persistent requests (MPI_Send_init, MPI_Recv_init, ...): the call to
     * repeat at each MPI_Start; inactive between completion and the next start. */
    int persistent, inactive, pkind;
    int detached; /* freed by the program while its receive is still posted */
    const void *pbuf;
    int pcount, ppeer, ptag;
    MPI_Datatype pdt; /* an alias handle (bdl_dt_alias), freed with the request */
    MPI_Comm pcomm;
    struct bdl_nbc *nbc;   /* kind BDL_RQ_COLL: the nonblocking collective (coll.c) */
    struct bdl_greq *greq; /* kind BDL_RQ_GREQ: the program's callbacks (greq.c) */
} bdl_request_t;
/* A generalized request (MPI_Grequest_start): done is set by the program. */
#define BDL_RQ_GREQ 16

/* p2p.c */
/* 0 and *size (bytes per element) when dt is committed and count elements
 * at buf are always count * *size bytes at buf; -1 otherwise. */
int bdl_check_dtype(MPI_Datatype dt, int *size);
int bdl_send_bytes(int ctx, int world_dst, int myrank, int tag, const void *buf, uint64_t n,
                   int sync, uint64_t *sync_id);
/* Send count elements of t at buf (packed on the way). */
int bdl_send_typed(int ctx, int world_dst, int myrank, int tag, const void *buf, uint64_t count,
                   const struct bdl_dt *t, int sync, uint64_t *sync_id);
/* Blocking receive of up to cap bytes; fills st; returns MPI_SUCCESS or MPI_ERR_TRUNCATE. */
int bdl_recv_bytes(int ctx, int src, int tag, void *buf, uint64_t cap, MPI_Status *st);
/* Blocking receive into count elements of t at buf (unpacked on the way). */
int bdl_recv_typed(int ctx, int src, int tag, void *buf, uint64_t count, const struct bdl_dt *t,
                   MPI_Status *st);
void bdl_status_empty(MPI_Status *st);
int bdl_req_new(int kind);                    /* a new request handle of that kind */
bdl_request_t *bdl_req_lookup(MPI_Request h); /* NULL if h names no request */

/* greq.c: generalized requests, called from p2p.c's request handling. */
void bdl_greq_wait(bdl_request_t *q);                 /* until MPI_Grequest_complete */
void bdl_greq_pause(void);                            /* a short sleep while polling */
int bdl_greq_query(bdl_request_t *q, MPI_Status *st); /* query_fn into q->status (and *st) */
int bdl_greq_finish(bdl_request_t *q);                /* query_fn, then free_fn: completion */
int bdl_greq_cancel(bdl_request_t *q);
int bdl_greq_free(bdl_request_t *q); /* MPI_Request_free */
void bdl_p2p_reap_detached(void);

/* p2p.c: the request of a started nonblocking collective (it owns nb). */
MPI_Request bdl_req_new_coll(struct bdl_nbc *nb);

#endif
