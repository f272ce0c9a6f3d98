/* Control exchanges (bottom room): the small blocking broadcasts and gathers
 * the library makes for itself while it creates communicators
 * (intercommunicators, objects/intercomm_create.c).  They are plain
 * point-to-point messages on the communicator's internal context, which
 * program messages never match, so the middle room needs no collective of
 * the room above.  Every member makes the same calls in the same order, so
 * messages pair up in order whatever the tags. */
#include <string.h>

#include "core.h"
#include "request.h"

int bdl_ctl_bcast(const bdl_comm_t *c, int tag, void *buf, uint64_t n, int root)
{
    if (c->rank != root)
        return bdl_recv_bytes(bdl_comm_ictx(c), root, tag, buf, n, MPI_STATUS_IGNORE);
    for (int r = 0; r < c->size; r++)
        if (r != root)
            bdl_send_bytes(bdl_comm_ictx(c), c->world[r], c->rank, tag, buf, n, 0, NULL);
    return MPI_SUCCESS;
}

int bdl_ctl_gather(const bdl_comm_t *c, int tag, const void *mine, uint64_t n, void *all, int root)
{
    if (c->rank != root)
        return bdl_send_bytes(bdl_comm_ictx(c), c->world[root], c->rank, tag, mine, n, 0, NULL);
    memcpy((char *)all + (uint64_t)root * n, mine, n);
    for (int r = 0; r < c->size; r++) {
        if (r == root)
            continue;
        int rc = bdl_recv_bytes(bdl_comm_ictx(c), r, tag, (char *)all + (uint64_t)r * n, n,
                                MPI_STATUS_IGNORE);
        if (rc)
            return rc;
    }
    return MPI_SUCCESS;
}
