/* Argument checks the collective entry points share, and the dropping of
 * what their receive buffers held (coll.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "core.h"
#include "dt.h"
#include "objects.h"
#include "xfer.h"

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

/* ---------------------------------------------------------------- receive buffers */

static void ovw_push(bdl_ovw_t *o, uintptr_t lo, uintptr_t hi)
{
    if (hi <= lo)
        return;
    if (o->n == o->cap) {
        size_t cap = o->cap * 2;
        bdl_ivl_t *v = malloc(cap * sizeof *v);
        if (!v)
            return; /* dropping less is always right */
        memcpy(v, o->v, o->n * sizeof *v);
        if (o->v != o->small)
            free(o->v);
        o->v = v;
        o->cap = cap;
    }
    o->v[o->n++] = (bdl_ivl_t){lo, hi};
}

int bdl_ovw_init(bdl_ovw_t *o)
{
    o->v = o->small;
    o->n = 0;
    o->cap = sizeof o->small / sizeof o->small[0];
    o->sb = bdl_g.mem_active && bdl_g.hdr->job.sbpage ? bdl_g.hdr->job.sbpage : 0;
    return o->sb != 0;
}

/* The whole span when the type is contiguous, else only its blocks of at
 * least an sbpage (smaller ones cannot hold a whole sbpage, and walking
 * them would cost more than it saves). */
void bdl_ovw_add(bdl_ovw_t *o, const void *buf, uint64_t count, const bdl_dt_t *t)
{
    if (!o->sb || buf == MPI_IN_PLACE || !count || !t->psize)
        return;
    const char *c = bdl_dt_contig(t, buf, count);
    if (c) {
        ovw_push(o, (uintptr_t)c, (uintptr_t)c + count * t->psize);
        return;
    }
    int any = 0;
    for (uint32_t i = 0; i < t->nruns && !any; i++)
        any = t->runs[i].len >= o->sb;
    for (uint64_t e = 0; any && e < count; e++)
        for (uint32_t i = 0; i < t->nruns; i++) {
            const bdl_run_t *r = &t->runs[i];
            if (r->len < o->sb)
                continue;
            for (uint64_t b = 0; b < r->cnt; b++) {
                uintptr_t lo = (uintptr_t)bdl_at(buf, (int64_t)e * t->extent + r->off +
                                                          (int64_t)b * r->stride);
                ovw_push(o, lo, lo + r->len);
            }
        }
}

static int ivl_cmp(const void *a, const void *b)
{
    const bdl_ivl_t *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

void bdl_ovw_drop(bdl_ovw_t *o)
{
    if (o->n > 1)
        qsort(o->v, o->n, sizeof *o->v, ivl_cmp);
    for (size_t i = 0; i < o->n;) {
        uintptr_t lo = o->v[i].lo, hi = o->v[i].hi;
        size_t j = i + 1;
        for (; j < o->n && o->v[j].lo <= hi; j++)
            if (o->v[j].hi > hi)
                hi = o->v[j].hi;
        if (hi - lo >= o->sb)
            bdl_lib_mem_discard((void *)lo, hi - lo);
        i = j;
    }
    if (o->v != o->small)
        free(o->v);
    o->v = o->small;
    o->n = 0;
}

void bdl_coll_discard(void *buf, uint64_t count, const bdl_dt_t *t)
{
    bdl_ovw_t o;
    if (!bdl_ovw_init(&o))
        return;
    bdl_ovw_add(&o, buf, count, t);
    bdl_ovw_drop(&o);
}

void bdl_coll_discard_blocks(void *buf, int n, int count, const int counts[], const int displs[],
                             const bdl_dt_t *t, bdl_dt_t *const *tv, const int bdispls[], int skip)
{
    bdl_ovw_t o;
    if (buf == MPI_IN_PLACE || !bdl_ovw_init(&o))
        return;
    for (int j = 0; j < n; j++) {
        if (j == skip)
            continue;
        const bdl_dt_t *bt = tv ? tv[j] : t;
        int64_t off = bdispls ? bdispls[j] : bdl_voff(displs, count, j, bt);
        bdl_ovw_add(&o, bdl_at(buf, off), bdl_vcount(counts, count, j), bt);
    }
    bdl_ovw_drop(&o);
}
