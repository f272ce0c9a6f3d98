/* libbdmpi, bottom room: the nonblocking-collective engine and the
 * user-defined reduction operations it folds with. */
#ifndef BDL_NBC_H
#define BDL_NBC_H

#include "core.h"
#include "request.h"

/* coll.c */
int bdl_user_op_fn(MPI_Op op, bdl_user_op_t **out);
/* Nonblocking collectives: progress one (returns 1 once it is complete;
 * blocking: wait for it); poll, or with block wait for, several at once
 * (returns how many completed; a poll that finds none gives the run slot
 * away only if yield); free. */
typedef struct bdl_nbc bdl_nbc_t;
int bdl_nbc_progress(bdl_nbc_t *nb, int blocking);
int bdl_nbc_poll(bdl_nbc_t **nbs, int n, int block, int yield);
int bdl_nbc_done(const bdl_nbc_t *nb);
int bdl_nbc_err(const bdl_nbc_t *nb); /* the error a completed one reports */
void bdl_nbc_free(bdl_nbc_t *nb);
/* A request complete from the start; one that completes with the library's
 * own point-to-point requests reqs[n] (an array it takes over). */
MPI_Request bdl_nbc_completed(void);
MPI_Request bdl_nbc_of_requests(MPI_Request *reqs, int n);
/* Communicator creation as a nonblocking collective on c (size > 1): a split
 * with color and key, call api (BD_API_COMM_DUP); once it completes, fin
 * gets the new context (0: none), the caller's rank, the size and the
 * members (taken over).  request NULL: complete it now. */
typedef void (*bdl_nbc_fin_t)(void *arg, int ctx, int rank, int size, int *world);
int bdl_nbc_split(bdl_comm_t *c, int color, int key, int api, bdl_nbc_fin_t fin, void *arg,
                  MPI_Request *request);

#endif
