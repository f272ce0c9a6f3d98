/* Shared-memory windows (MPI 3.1 11.2.3 MPI_Win_allocate_shared, 11.2.4
 * MPI_Win_shared_query): every rank of the window maps one memory region
 * that holds all the ranks' segments, so a rank reads and writes the other
 * ranks' segments with plain loads and stores.
 *
 * The region is a memfd that the window's rank 0 creates; the others open
 * it through /proc/<pid>/fd/<n> (same user, and opening a descriptor needs
 * no ptrace attach, unlike process_vm_readv) and map it MAP_SHARED.  It is
 * outside the memory manager (src/mem): the manager may unload a waiting
 * rank's memory to storage, which would give the other ranks a stale or
 * missing view of a region they can touch at any time.  Instead each rank
 * takes its segment's size from the node's budget (-mem) at creation and
 * keeps it until MPI_Win_free (bdl_lib_mem_pin), so the job's memory still
 * stays within the budget; the master never asks a rank to unload it.
 *
 * RMA calls on the window are the ordinary ones (rma.c): the target applies
 * each operation to its segment, which is the shared memory, so RMA and
 * direct loads and stores see the same bytes; the model is MPI_WIN_UNIFIED.
 * The communicator must hold only ranks of one node (MPI_ERR_RMA_SHARED
 * otherwise). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "win.h"

void bdl_win_shared_release(bdl_win_t *w)
{
    if (w->shm)
        munmap(w->shm, w->shm_len);
    bdl_lib_mem_unpin(w->shm_pinned);
    free(w->shm_off);
    w->shm = NULL;
    w->shm_off = NULL;
    w->shm_pinned = 0;
}

/* Is info's key "true"? */
static int info_true(MPI_Info info, const char *key)
{
    if (info == MPI_INFO_NULL)
        return 0;
    char val[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    if (MPI_Info_get(info, key, MPI_MAX_INFO_VAL, val, &flag) != MPI_SUCCESS || !flag)
        return 0;
    return strcmp(val, "true") == 0;
}

/* Rank 0 creates the region and sends (pid, descriptor) to the others,
 * which open and map it; every rank then knows its mapping.  Failures end
 * the job: the ranks would otherwise disagree on whether the window exists. */
static char *map_region(bdl_win_t *w, size_t len, const char *call)
{
    int64_t where[2] = {0, -1};
    int fd = -1;
    if (w->rank == 0) {
        fd = memfd_create("bdmpi-win", MFD_CLOEXEC);
        if (fd < 0 || ftruncate(fd, (off_t)len) < 0)
            bdl_fatal(MPI_ERR_NO_MEM, "%s: rank %d cannot create %zu bytes of shared memory: %s",
                      call, bdl_g.world_rank, len, strerror(errno));
        where[0] = getpid();
        where[1] = fd;
    }
    int rc = MPI_Bcast(where, 2, MPI_INT64_T, 0, w->comm);
    if (rc)
        bdl_fatal(rc, "%s: sending the shared memory's name failed", call);
    if (w->rank != 0) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%lld/fd/%lld", (long long)where[0], (long long)where[1]);
        fd = open(path, O_RDWR | O_CLOEXEC);
        if (fd < 0)
            bdl_fatal(MPI_ERR_RMA_SHARED,
                      "%s: rank %d cannot open the window's shared memory %s: %s", call,
                      bdl_g.world_rank, path, strerror(errno));
    }
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        bdl_fatal(MPI_ERR_NO_MEM, "%s: rank %d cannot map %zu bytes of shared memory: %s", call,
                  bdl_g.world_rank, len, strerror(errno));
    /* Rank 0 keeps its descriptor until everyone has opened it. */
    if (w->rank != 0)
        close(fd);
    rc = MPI_Barrier(w->comm);
    if (rc)
        bdl_fatal(rc, "%s: synchronizing the ranks of the window failed", call);
    if (w->rank == 0)
        close(fd);
    return p;
}

int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                            void *baseptr, MPI_Win *win)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Win_allocate_shared";
    BDL_CHECK_INIT(call);
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c)
        return bdl_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);
    if (c->inter)
        return bdl_error(comm, MPI_ERR_COMM, call,
                         "windows cannot be created on an intercommunicator");
    if (!baseptr || !win)
        return bdl_error(comm, MPI_ERR_ARG, call, "%s is NULL", baseptr ? "win" : "baseptr");
    if (size < 0)
        return bdl_error(comm, MPI_ERR_SIZE, call, "invalid size %lld (must be >= 0)",
                         (long long)size);
    if (disp_unit <= 0)
        return bdl_error(comm, MPI_ERR_DISP, call, "invalid disp_unit %d (must be > 0)", disp_unit);
    /* Every member sees the same membership, so all fail alike. */
    int node = bdl_world_node(bdl_g.world_rank);
    for (int r = 0; r < c->size; r++)
        if (bdl_world_node(c->world[r]) != node)
            return bdl_error(comm, MPI_ERR_RMA_SHARED, call,
                             "rank %d of the communicator runs on node %d and rank %d on node "
                             "%d: memory can only be shared among the ranks of one node (make "
                             "the communicator with MPI_Comm_split_type(MPI_COMM_TYPE_SHARED))",
                             r, bdl_world_node(c->world[r]), c->rank, node);
    int noncontig = info_true(info, "alloc_shared_noncontig");
    long page = sysconf(_SC_PAGESIZE);
    /* Noncontiguous segments start on pages of their own; contiguous ones
     * follow each other exactly (MPI 3.1 11.2.3). */
    uint64_t mine = noncontig
                        ? ((uint64_t)size + (uint64_t)page - 1) / (uint64_t)page * (uint64_t)page
                        : (uint64_t)size;
    int prc = bdl_lib_mem_pin(mine);
    if (prc)
        return bdl_error(comm, MPI_ERR_NO_MEM, call,
                         "the memory budget (-mem) cannot hold this rank's %llu-byte segment: %s",
                         (unsigned long long)mine, strerror(-prc));
    MPI_Win h;
    int rc = bdl_win_make(call, NULL, size, disp_unit, info, comm, MPI_WIN_FLAVOR_SHARED, NULL, &h);
    if (rc) {
        bdl_lib_mem_unpin(mine);
        return rc;
    }
    bdl_win_t *w = bdl_win_get(h);
    w->shm_pinned = mine;
    w->model = MPI_WIN_UNIFIED;
    w->shm_off = malloc((size_t)w->size * sizeof(MPI_Aint));
    if (!w->shm_off)
        bdl_fatal(MPI_ERR_NO_MEM, "%s: out of memory for a window of %d ranks", call, w->size);
    uint64_t total = 0;
    for (int r = 0; r < w->size; r++) {
        w->shm_off[r] = (MPI_Aint)total;
        uint64_t s = (uint64_t)w->sizes[r];
        total += noncontig ? (s + (uint64_t)page - 1) / (uint64_t)page * (uint64_t)page : s;
    }
    size_t len = (size_t)((total + (uint64_t)page - 1) / (uint64_t)page * (uint64_t)page);
    if (len == 0)
        len = (size_t)page;
    /* Set before the barrier in map_region: nobody returns from the call,
     * and so nobody sends an operation here, before every base is set. */
    char *p = map_region(w, len, call);
    w = bdl_win_get(h);
    w->shm = p;
    w->shm_len = len;
    /* A rank without memory has no address in the window (NULL, as its
     * query gives and as MPICH does). */
    w->base = size > 0 ? p + w->shm_off[w->rank] : NULL;
    *(void **)baseptr = w->base;
    *win = h;
    return MPI_SUCCESS;
}

int MPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Win_shared_query";
    BDL_CHECK_INIT(call);
    bdl_win_t *w = bdl_win_get(win);
    if (!w)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_WIN, call, "invalid window %d", win);
    if (!size || !disp_unit || !baseptr)
        return bdl_win_error(win, MPI_ERR_ARG, call, "%s is NULL",
                             !size        ? "size"
                             : !disp_unit ? "disp_unit"
                                          : "baseptr");
    if (rank != MPI_PROC_NULL && (rank < 0 || rank >= w->size))
        return bdl_win_error(win, MPI_ERR_RANK, call, "invalid rank %d (window of %d ranks)", rank,
                             w->size);
    if (w->flavor != MPI_WIN_FLAVOR_SHARED) {
        /* MPI 4.1 12.2.4: any window may be asked; only this rank's own
         * memory is accessible to it. */
        int r = rank == MPI_PROC_NULL ? w->rank : rank;
        int own = r == w->rank && w->flavor != MPI_WIN_FLAVOR_DYNAMIC;
        *size = own ? w->wsize : 0;
        *disp_unit = own ? w->disp_unit : w->units[r];
        *(void **)baseptr = own ? w->base : NULL;
        return MPI_SUCCESS;
    }
    int r = rank;
    if (r == MPI_PROC_NULL) {
        /* The segment of the lowest rank that has one. */
        r = 0;
        while (r < w->size - 1 && w->sizes[r] == 0)
            r++;
    }
    *size = w->sizes[r];
    *disp_unit = w->units[r];
    *(void **)baseptr = w->sizes[r] > 0 ? w->shm + w->shm_off[r] : NULL;
    return MPI_SUCCESS;
}
