/*
 * bdmpi.h -- BDMPI's extensions to MPI (bdmpi.txt section 5.6, Table 2).
 * Included by mpi.h; may also be included on its own after mpi.h.
 */
#ifndef BDMPI_BDMPI_H
#define BDMPI_BDMPI_H

#include "mpi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Exported from libbdmpi like mpi.h's declarations (see there). */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* All ranks of the calling rank's node, in world order. */
#define BDMPI_COMM_NODE ((MPI_Comm)3)
/* All ranks, numbered cyclically across nodes (rank r of node n of N nodes
 * gets CWORLD rank lrank*N + n). */
#define BDMPI_COMM_CWORLD ((MPI_Comm)4)

/* Critical sections: at most `-nc` ranks of a node are inside at once
 * (meant for disk-heavy phases when -nr > 1). */
int BDMPI_Enter_critical(void);
int BDMPI_Exit_critical(void);

/* Number of nodes spanned by comm, and the index of the caller's node among them. */
int BDMPI_Comm_nsize(MPI_Comm comm, int *nsize);
int BDMPI_Comm_nrank(MPI_Comm comm, int *nrank);
/* Number of ranks of comm on the caller's node, and the caller's index among them. */
int BDMPI_Comm_lsize(MPI_Comm comm, int *lsize);
int BDMPI_Comm_lrank(MPI_Comm comm, int *lrank);
/* Rank in comm of the lowest-ranked member of comm on the caller's node. */
int BDMPI_Comm_rrank(MPI_Comm comm, int *rrank);

/* The calling rank's storage-backed memory: *managed is 1 when the memory
 * manager owns its large allocations (-mem-strategy other than none),
 * *resident the bytes of them resident now, *track how first writes are
 * tracked: BDMPI_MEM_TRACK_NONE (not managed), _UFFD (userfaultfd, system
 * calls into unloaded memory handled by the kernel), _UFFD_USER
 * (userfaultfd for user-mode faults only) or _MPROTECT.  Any argument may
 * be NULL. */
#define BDMPI_MEM_TRACK_NONE 0
#define BDMPI_MEM_TRACK_UFFD 1
#define BDMPI_MEM_TRACK_UFFD_USER 2
#define BDMPI_MEM_TRACK_MPROTECT 3
int BDMPI_Mem_info(int *managed, unsigned long long *resident, int *track);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* BDMPI_BDMPI_H */
