/* The user-defined reduction operations (MPI_Op_create's table) and
 * applying an operation, which the collectives and the engine's folds use. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bd_dtype.h"
#include "core.h"
#include "dt.h"
#include "nbc.h"

int bdl_user_op_fn(MPI_Op op, bdl_user_op_t **out)
{
    int i = op - (BDMPI_OP_PREDEFINED_MAX + 1);
    if (i < 0 || i >= bdl_g.nops || !bdl_g.ops[i].used)
        return -1;
    *out = &bdl_g.ops[i];
    return 0;
}

int bdl_user_op_new(MPI_User_function *fn, int commute, MPI_Op *op)
{
    int i = 0;
    while (i < bdl_g.nops && bdl_g.ops[i].used)
        i++;
    if (i == bdl_g.nops) {
        int n = bdl_g.nops ? bdl_g.nops * 2 : 8;
        bdl_user_op_t *t = realloc(bdl_g.ops, (size_t)n * sizeof *t);
        if (!t)
            return -1;
        memset(t + bdl_g.nops, 0, (size_t)(n - bdl_g.nops) * sizeof *t);
        bdl_g.ops = t;
        bdl_g.nops = n;
    }
    bdl_g.ops[i] = (bdl_user_op_t){fn, commute, 1, NULL};
    *op = BDMPI_OP_PREDEFINED_MAX + 1 + i;
    return 0;
}

int bdl_op_check(MPI_Comm comm, const char *call, MPI_Op op, MPI_Datatype dt, const bdl_dt_t *t,
                 bdl_user_op_t **user)
{
    *user = NULL;
    if (op > 0 && op <= BDMPI_OP_PREDEFINED_MAX) {
        if (t->basic <= 0 || !bd_op_valid_for(op, t->basic))
            return bdl_error(comm, MPI_ERR_OP, call, "%s is not defined for datatype %d%s",
                             bd_op_name(op), dt,
                             t->basic < 0 ? " (its elements are of several predefined types)" : "");
        return MPI_SUCCESS;
    }
    if (bdl_user_op_fn(op, user) < 0)
        return bdl_error(comm, MPI_ERR_OP, call, "invalid operation %d", op);
    return MPI_SUCCESS;
}

void bdl_op_apply(MPI_Op op, bdl_user_op_t *u, MPI_Datatype dt, const bdl_dt_t *t, const void *in,
                  void *inout, uint64_t count)
{
    if (!u) {
        bd_op_apply(op, dt, in, inout, (size_t)count);
        return;
    }
    /* The function sees the program's type and count: a large count's type
     * (bdl_bc_fit_dt) stands for bc_reps elements of bc_user.  An int
     * function gets pieces of at most INT_MAX elements (MPI lets an
     * operation be applied piecewise). */
    MPI_Datatype d = dt;
    uint64_t total = count;
    int64_t ext = t ? t->extent : 0;
    if (t && t->bc_reps) {
        d = t->bc_user;
        total = count * t->bc_reps;
        ext = t->bc_ext;
    }
    if (u->fn_c) {
        MPI_Count c = (MPI_Count)total;
        u->fn_c((void *)in, inout, &c, &d);
        return;
    }
    for (uint64_t off = 0; off < total || (!total && !off); off += (uint64_t)INT_MAX) {
        int c = total - off > INT_MAX ? INT_MAX : (int)(total - off);
        intptr_t at = (intptr_t)(off * (uint64_t)ext);
        MPI_Datatype dd = d;
        u->fn((void *)((intptr_t)in + at), (void *)((intptr_t)inout + at), &c, &dd);
        if (!total)
            break;
    }
}

/* Folds in rank order (nbc.h). */

void bdl_fold_init(bdl_fold_t *f, const bdl_fold_op_t *o, const bdl_dt_t *t, uint64_t count,
                   char *acc)
{
    *f = (bdl_fold_t){.o = o, .t = t, .count = count, .acc = acc};
    if (o->u) {
        f->amem = bdl_dt_alloc(t, count, &f->a);
        f->bmem = bdl_dt_alloc(t, count, &f->b);
    }
}

void bdl_fold_add(bdl_fold_t *f, const char *v)
{
    const bdl_dt_t *t = f->t;
    uint64_t n = f->count * t->psize;
    if (!f->o->u) {
        if (!f->added)
            memmove(f->acc, v, n);
        else if (n)
            bd_op_apply(f->o->op, t->basic, v, f->acc, (size_t)(f->count * t->nelem));
        f->added++;
        return;
    }
    if (!f->added++) {
        bdl_dt_unpack(t, f->a, f->count, 0, v, n);
        return;
    }
    /* b = a op v: the function's inout is the later operand */
    bdl_dt_unpack(t, f->b, f->count, 0, v, n);
    bdl_op_apply(f->o->op, f->o->u, f->o->dt, t, f->a, f->b, f->count);
    void *x = f->a;
    f->a = f->b;
    f->b = x;
    x = f->amem;
    f->amem = f->bmem;
    f->bmem = x;
}

void bdl_fold_end(bdl_fold_t *f)
{
    if (f->o->u) {
        if (f->added)
            bdl_dt_pack(f->t, f->a, f->count, 0, f->acc, f->count * f->t->psize);
        free(f->amem);
        free(f->bmem);
    }
}
