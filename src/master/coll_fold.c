/* Reductions in the master: the contributions folded into one accumulator
 * (coll.c's instances; the kinds is_fold names there). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bd_dtype.h"
#include "bd_fs.h"
#include "coll.h"

/* Integer, logical and byte data fold to the same bits in any order (two's
 * complement arithmetic is associative and commutative, and so are min,
 * max and the logical and bitwise ops): such a reduction folds each
 * contribution as it comes, so the master holds one accumulator instead of
 * the contributions that wait for a lower rank's.  Under -mem 2M, 8 of
 * K-means' 9 integer contributions (1.5 MB) waited for rank 0's, and a
 * rank's working set no longer fitted beside them (apps.kmeans.mem2M.araw,
 * once under load).  Floating-point data is folded in rank order, so that
 * results do not depend on the schedule. */
static int folds_any_order(const coll_t *c)
{
    int k = c->d.kind;
    const bd_dtype_info_t *t = bd_dtype_info(c->d.dtype);
    return (k == BD_COLL_REDUCE || k == BD_COLL_ALLREDUCE || k == BD_COLL_REDSCAT) && t &&
           (t->cls == BD_DT_INT || t->cls == BD_DT_BOOL || t->cls == BD_DT_BYTE);
}

/* A contribution the budget sent to the spill file while it waited (coll.c
 * store_pieces) back in memory: 0, or -1 when the job fails (reported). */
static int read_back(coll_t *c, piece_t *p, uint64_t nbytes)
{
    if (!p->in_file)
        return 0;
    uint64_t len = (nbytes + BD_FS_DIO_ALIGN - 1) & ~(uint64_t)(BD_FS_DIO_ALIGN - 1);
    void *d = NULL;
    int rc = posix_memalign(&d, BD_FS_DIO_ALIGN, len ? len : BD_FS_DIO_ALIGN);
    if (rc) {
        bdr_master_oom("posix_memalign", len, rc);
        return -1;
    }
    for (uint64_t off = 0; off < nbytes && rc == 0;) {
        uint32_t n = nbytes - off < (1u << 30) ? (uint32_t)(nbytes - off) : (1u << 30);
        rc = bdr_stage_read(c, p, off, (char *)d + off, n);
        off += n;
    }
    if (rc < 0) {
        if (rc == -EBADMSG)
            bdr_master_fail(1, "storage returned corrupted data %s (%s data)", bdr_stage_bad(),
                            bdr_coll_call_name(&c->d));
        else
            bdr_master_fail(1, "cannot read %llu bytes of %s data from the spill file in %s: %s",
                            (unsigned long long)nbytes, bdr_coll_call_name(&c->d), g_m.jobdir,
                            strerror(-rc));
        free(d);
        return -1;
    }
    bdr_stage_release(c, p);
    p->in_file = 0;
    p->data = d;
    p->filled = nbytes;
    return 0;
}

/* Contribution p into c->acc: the first one becomes it.  Predefined ops
 * are commutative, so in op acc gives acc op in exactly. */
static void fold_in(coll_t *c, piece_t *p, int first, uint64_t nbytes)
{
    if (read_back(c, p, nbytes) < 0)
        return;
    if (first) {
        c->acc = p->data;
    } else if (nbytes) {
        bd_op_apply(c->d.op, c->d.dtype, p->data, c->acc, c->d.count);
        free(p->data);
    }
    p->data = NULL;
}

/* Fold arrived contributions in rank order: acc = v0 op v1 op ... (in any
 * order where that gives the same bits: folds_any_order). */
void bdr_coll_try_fold(coll_t *c)
{
    uint64_t nbytes = c->d.count * c->elem_size;
    if (folds_any_order(c)) {
        int size = c->comm->size, n = 0;
        for (int k = 0; k < size; k++) {
            piece_t *p = &c->pieces[k];
            if (c->rank_arrived[k] && !p->taken) { /* taken: folded */
                fold_in(c, p, !c->acc, nbytes);
                p->taken = 1;
            }
            n += p->taken;
        }
        if (n == size)
            c->next_fold = size;
        return;
    }
    while (c->next_fold < c->comm->size && c->rank_arrived[c->next_fold]) {
        int k = c->next_fold;
        piece_t *p = &c->pieces[k];
        if (c->d.kind == BD_COLL_EXSCAN && k > 0 && nbytes) {
            c->results[k].data = malloc(nbytes);
            if (c->results[k].data)
                memcpy(c->results[k].data, c->acc, nbytes);
            c->results[k].total = c->results[k].filled = nbytes;
        }
        fold_in(c, p, k == 0, nbytes);
        if (c->d.kind == BD_COLL_SCAN && nbytes) {
            c->results[k].data = malloc(nbytes);
            if (c->results[k].data)
                memcpy(c->results[k].data, c->acc, nbytes);
            c->results[k].total = c->results[k].filled = nbytes;
        }
        c->next_fold++;
    }
}
