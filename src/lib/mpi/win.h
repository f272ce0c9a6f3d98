/* One-sided communication inside libbdmpi: the window object (win.c) and
 * the RMA protocol (rma.c).  See docs/design.md, "One-sided communication". */
#ifndef BDL_WIN_H
#define BDL_WIN_H

#include <stdint.h>

#include "core.h"
#include "dt.h"
#include "mpi_int.h"
#include "nbc.h"
#include "objects.h"
#include "request.h"

/* A get-like operation whose answer has not arrived yet: it is unpacked
 * into (buf, count, t) when the target's reply comes. */
typedef struct bdl_rma_pending {
    int target;
    void *buf;
    uint64_t count;
    bdl_dt_t *t; /* a reference held until the reply is unpacked */
} bdl_rma_pending_t;

/* A lock request the target could not grant yet. */
typedef struct bdl_lock_wait {
    int origin;
    int type;
} bdl_lock_wait_t;

typedef struct bdl_win_region {
    char *base;
    MPI_Aint size;
} bdl_win_region_t;

typedef struct bdl_win {
    int used;
    int id;        /* the context of comm: names the window in the whole job */
    int dctx;      /* id | BD_CTX_RMA_DATA: answers and fence traffic */
    MPI_Comm comm; /* private duplicate of the communicator it was created on */
    int rank, size;
    int *world; /* window rank -> world rank */
    char *base;
    MPI_Aint wsize;
    int disp_unit;
    int flavor;
    int model;
    MPI_Aint *sizes; /* every rank's window size and displacement unit */
    int *units;
    void *alloc;               /* memory of MPI_Win_allocate */
    bdl_win_region_t *regions; /* MPI_Win_attach (dynamic windows) */
    int nregions, capregions;
    MPI_Errhandler errh;
    char name[MPI_MAX_OBJECT_NAME];
    struct bdl_win_attr *attrs;
    int nattrs;
    MPI_Info info; /* hints given (MPI_INFO_NULL: none) */

    /* Shared-memory windows (win_shared.c): the node-wide mapping holding
     * every rank's segment, each rank's offset in it, and the bytes this
     * rank took from the memory budget for its segment. */
    char *shm;
    size_t shm_len;
    MPI_Aint *shm_off;
    uint64_t shm_pinned;

    /* Access epochs (this rank as origin). */
    int fence; /* a fence epoch is open */
    uint32_t fence_seq;
    int *fence_sent; /* operations sent to each rank in this fence epoch */
    int *lock;       /* per target: 0 or MPI_LOCK_SHARED/EXCLUSIVE held */
    int *nocheck;    /* per target: locked with MPI_MODE_NOCHECK (no lock messages) */
    int nlocked;
    int lock_all; /* 1: MPI_Win_lock_all epoch (2: with NOCHECK) */
    int *dirty;   /* operations sent to a target since its last flush */
    int *start;   /* post/start: 0 not in the access group, 1 in it, 2 its post came */
    int started;
    bdl_rma_pending_t *pend;
    int npend, cappend;

    /* Exposure (this rank as target). */
    int posted;      /* a post epoch is open */
    int post_expect; /* origins in the post group */
    int post_done;   /* their completes that have arrived */
    int excl;        /* origin holding an exclusive lock, or -1 */
    int nshared;     /* shared locks held */
    bdl_lock_wait_t *waits;
    int nwaits, capwaits;
} bdl_win_t;

/* win.c */
bdl_win_t *bdl_win_get(MPI_Win win); /* NULL unless win is a live window */
bdl_win_t *bdl_win_by_id(int id);    /* by job-wide id, for requests from others */
/* Report an error on win's error handler (MPI_COMM_WORLD's if win is not a
 * window); returns code when the handler returns. */
int bdl_win_error(MPI_Win win, int code, const char *call, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
MPI_Win bdl_win_handle(const bdl_win_t *w);
/* The collective part of every creation call (flavor MPI_WIN_FLAVOR_*;
 * alloc: memory the window frees with free(3), or NULL). */
int bdl_win_make(const char *call, void *base, MPI_Aint size, int disp_unit, MPI_Info info,
                 MPI_Comm comm, int flavor, void *alloc, MPI_Win *win);
/* win_shared.c: unmap a shared window's memory and give its budget back. */
void bdl_win_shared_release(bdl_win_t *w);

/* rma.c: called by win.c */
void bdl_rma_enable(void);              /* once per process: tell the master */
int bdl_rma_win_busy(bdl_win_t *w);     /* 1 if an epoch is still open */
void bdl_rma_win_release(bdl_win_t *w); /* free the RMA state of a window being freed */

#endif
