/* complete4.h: for the tests of nonblocking collectives.  Completes n
 * requests one of four ways (how % 4): MPI_Waitall, MPI_Wait in reverse
 * order, an MPI_Testall loop, or MPI_Waitany n times. */
#ifndef COMPLETE4_H
#define COMPLETE4_H

#include <mpi.h>

static inline void complete4(MPI_Request *r, int n, int how)
{
    int flag = 0, idx;
    switch (how % 4) {
    case 0: MPI_Waitall(n, r, MPI_STATUSES_IGNORE); break;
    case 1:
        for (int k = n - 1; k >= 0; k--)
            MPI_Wait(&r[k], MPI_STATUS_IGNORE);
        break;
    case 2:
        while (!flag)
            MPI_Testall(n, r, &flag, MPI_STATUSES_IGNORE);
        break;
    default:
        for (int k = 0; k < n; k++)
            MPI_Waitany(n, r, &idx, MPI_STATUS_IGNORE);
    }
}

#endif
