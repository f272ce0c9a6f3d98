/* mem_remote.c - the manager's side of the remote-memory tier (cfg.rput,
 * cfg.rget, cfg.rdrop; docs/design.md "Remote-memory tier").
 *
 * A stored copy is either local (the allocation's own file, or a slot of
 * the node's store) or remote (rm[i] = 1): somewhere the runtime reaches,
 * which the manager never sees.  Only write-back decides: every dirty run
 * that would go to the allocation's own file is offered to the tier first
 * (IO_REMOTE); if the tier refuses, the same I/O slot writes it to the file
 * (IO_RTRIED), so a refusal costs one round trip and nothing else.  A run
 * is read from where its copy is; runs never mix remote and local copies
 * (bdm_loc_run).  Whenever a remote copy stops being the stored copy
 * (the sbpage was freed, discarded, found all zeros or identical to a
 * stored copy, or written locally), the tier is told to forget it. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "mem_internal.h"

#define G bdm_g

int bdm_rm_resize(alloc_t *a, size_t nsb)
{
    if (!G.rput)
        return 0;
    void *n = bdm_meta_grow(a->rm, &a->rm_bytes, nsb ? nsb : 1);
    if (!n)
        return -ENOMEM;
    a->rm = n;
    return 0;
}

void bdm_rm_forget(alloc_t *a, size_t s0, size_t s1)
{
    if (!a->rm || !a->nrm)
        return;
    for (size_t i = s0; i < s1;) {
        if (!a->rm[i]) {
            i++;
            continue;
        }
        size_t j = i + 1;
        while (j < s1 && a->rm[j])
            j++;
        memset(a->rm + i, 0, j - i);
        a->nrm -= j - i;
        G.rdrop(G.ctx, a->id, i, j - i);
        i = j;
    }
}

/* The tier is storage to the rank: its time is accounted as such. */
static int timed(int write, const io_slot_t *sl, int lane, void *buf)
{
    const alloc_t *a = sl->a;
    if (G.io_begin)
        G.io_begin(G.ctx, write);
    uint64_t t0 = bdm_now_ns();
    int rc = write ? G.rput(G.ctx, lane, a->id, sl->s, sl->n, buf)
                   : G.rget(G.ctx, lane, a->id, sl->s, sl->n, buf);
    if (G.io_end)
        G.io_end(G.ctx, write, rc == 0 ? sl->len : 0, t0);
    return rc;
}

int bdm_rmt_io(io_slot_t *sl)
{
    int lane = (int)(sl - G.io);
    if (sl->op == IO_READ)
        return timed(0, sl, lane, sl->buf);
    int rc = timed(1, sl, lane, sl->buf);
    if (rc != BD_MEM_REMOTE_REFUSED)
        return rc;
    /* no room anywhere: stored here, as without the tier */
    sl->flags = (sl->flags & ~IO_REMOTE) | IO_RTRIED;
    return bdm_pwrite_all(sl->fd, sl->buf, sl->len, sl->off);
}

int bdm_rmt_read(alloc_t *a, size_t s, size_t n, void *buf)
{
    if (G.io_begin)
        G.io_begin(G.ctx, 0);
    uint64_t t0 = bdm_now_ns();
    int rc = G.rget(G.ctx, -1, a->id, s, n, buf);
    if (G.io_end)
        G.io_end(G.ctx, 0, rc == 0 ? n * G.sbpage : 0, t0);
    if (rc == 0)
        G.st.remote_get += n * G.sbpage;
    return rc;
}
