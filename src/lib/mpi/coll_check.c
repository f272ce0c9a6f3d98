/* Argument checks the collective entry points share (coll.h). */
#include <stdint.h>

#include "coll.h"
#include "core.h"
#include "dt.h"
#include "objects.h"

int bdl_coll_check_buf(MPI_Comm comm, const char *call, int count, MPI_Datatype dt, bdl_dt_t **t,
                       const char *what)
{
    if (count < 0)
        return bdl_error(comm, MPI_ERR_COUNT, call, "invalid %s%scount %d", what, *what ? " " : "",
                         count);
    return bdl_dt_check(comm, call, what, dt, t);
}

int bdl_coll_check_root(bdl_comm_t *c, MPI_Comm comm, const char *call, int root)
{
    if (root < 0 || root >= c->size)
        return bdl_error(comm, MPI_ERR_ROOT, call, "invalid root %d (communicator size %d)", root,
                         c->size);
    return MPI_SUCCESS;
}

int bdl_coll_check_alias(MPI_Comm comm, const char *call, const void *sbuf, uint64_t scount,
                         const bdl_dt_t *st, const void *rbuf, uint64_t rcount, const bdl_dt_t *rt)
{
    if (!sbuf || !rbuf || sbuf == MPI_IN_PLACE || rbuf == MPI_IN_PLACE || !scount || !rcount ||
        !st->true_extent || !rt->true_extent)
        return MPI_SUCCESS;
    intptr_t s0 = (intptr_t)sbuf + st->true_lb, r0 = (intptr_t)rbuf + rt->true_lb;
    intptr_t s1 = s0 + (intptr_t)((scount - 1) * (uint64_t)st->extent) + st->true_extent;
    intptr_t r1 = r0 + (intptr_t)((rcount - 1) * (uint64_t)rt->extent) + rt->true_extent;
    if (s0 < r1 && r0 < s1)
        return bdl_error(comm, MPI_ERR_BUFFER, call,
                         "the send and receive buffers overlap (aliased arguments; use "
                         "MPI_IN_PLACE)");
    return MPI_SUCCESS;
}

int bdl_coll_check_counts(MPI_Comm comm, const char *call, const int counts[], const int displs[],
                          int n, const char *what)
{
    if (!counts || !displs)
        return bdl_error(comm, MPI_ERR_ARG, call, "NULL %s%s", what,
                         !counts ? "counts" : "displacements");
    for (int r = 0; r < n; r++)
        if (counts[r] < 0)
            return bdl_error(comm, MPI_ERR_COUNT, call, "invalid %scount %d for rank %d", what,
                             counts[r], r);
    return MPI_SUCCESS;
}

int bdl_coll_redscat_sizes(const bdl_comm_t *c, MPI_Comm comm, const char *call, const int counts[],
                           int block, uint64_t *total, uint64_t *myoff, uint64_t *mine)
{
    *total = *myoff = 0;
    for (int r = 0; r < c->size; r++) {
        int k = block >= 0 ? block : counts[r];
        if (k < 0)
            return bdl_error(comm, MPI_ERR_COUNT, call, "invalid count %d for rank %d", k, r);
        if (r < c->rank)
            *myoff += (uint64_t)k;
        *total += (uint64_t)k;
    }
    *mine = (uint64_t)(block >= 0 ? block : counts[c->rank]);
    return MPI_SUCCESS;
}
