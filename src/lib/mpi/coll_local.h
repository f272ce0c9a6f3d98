/* libbdmpi: what the blocking (coll_local.c) and the nonblocking
 * (coll_local_nb.c) collectives in the ranks share: the message header
 * and its checks.  Private to src/lib/mpi. */
#ifndef BDL_COLL_LOCAL_H
#define BDL_COLL_LOCAL_H

#include <stdint.h>

#include "coll.h"
#include "core.h"

/* The tag of every message of a collective in the ranks, on the internal
 * context.  Others there: 1 and 2 (user-op chains, coll_reduce.c), 1..12
 * (intercommunicator collectives, on the intercommunicator's own context),
 * 16..20 (core/ctl.c's exchanges for objects/intercomm_create.c), 0x4e42xxxx
 * (neighbourhood collectives, neighbor.c). */
#define LC_TAG 0x434c4300
/* Data sent apart from its header (the header's sep): the blocks of a
 * call, and the second phase of a large reduction. */
#define LC_DTAG (LC_TAG + 1)
#define LC_DTAG2 (LC_TAG + 2)

/* Each message: this header, then the packed data. */
typedef struct lc_hdr {
    int32_t api;    /* BD_API_* of the sender's call */
    int32_t root;   /* 0 for calls without one */
    int32_t dtype;  /* reductions: the basic type folded and the op; else 0 */
    int32_t op;     /* ... */
    uint64_t count; /* reductions: basic elements; else bytes of data that follow */
    uint64_t seq;   /* the collective's number on the communicator (coll_seq) */
    uint64_t bytes; /* data bytes that follow, in this and further entries */
    uint64_t sep;   /* 0: the data follows inline; else the tag of the message it is in */
    /* The sender's call failed with MPIX_ERR_REVOKED (a revoke notice, or
     * a flagged header before this one): so does the receiver's.  A rank
     * that fails goes on sending, so that nobody waits for it forever; the
     * flag keeps those messages from completing a call that a member never
     * joined (the revoker's own call fails before it sends anything). */
    int32_t revoked;
    int32_t spare[3]; /* the size stays a multiple of 16: data follows, long double too */
} lc_hdr_t;

#define LC_HDR ((uint64_t)sizeof(lc_hdr_t))
_Static_assert(sizeof(lc_hdr_t) % 16 == 0, "data after a header stays aligned for long double");

/* One call in progress. */
typedef struct lc {
    bdl_comm_t *c;
    MPI_Comm comm;
    const char *call;
    int ctx;
    int fold; /* compare op, dtype and count too */
    int err;  /* MPI_ERR_TRUNCATE: counts disagree (reported at the end) */
    int big;  /* every message's data apart from its header (large reductions) */
    lc_hdr_t h;
    lc_hdr_t in; /* the header lc_recv took last */
} lc_t;

/* Start a call: its header (api, root, the communicator's next coll_seq);
 * counts it in COLLS. */
void bdl_lc_start(lc_t *x, bdl_comm_t *c, MPI_Comm comm, const char *call, int api, int root);
/* Send n bytes at msg (the header is written into its first LC_HDR) to
 * rank r, in mailbox entries with their payload inline. */
void bdl_lc_send(const lc_t *x, int r, char *msg, uint64_t n);
/* "MPI_Allreduce", "MPI_Iallreduce" (| BD_API_NB), ... */
const char *bdl_lc_api_name(int api);
/* A message h from rank r that is not of x's call: the job ends. */
_Noreturn void bdl_lc_mismatch(const lc_t *x, const lc_hdr_t *h, int r);

#endif
