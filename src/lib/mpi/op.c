/* User-defined operations (MPI_Op_create, ...) and MPI_Reduce_local; the
 * table and applying an op are the engine's (core/op.c). */
#include <stdlib.h>

#include "bd_dtype.h"
#include "coll.h"
#include "core.h"
#include "dt.h"
#include "nbc.h"

int MPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    BDL_MT_GUARD;
    if (!user_fn)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Op_create", "NULL function");
    if (bdl_user_op_new(user_fn, commute, op) < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Op_create", "out of memory");
    return MPI_SUCCESS;
}

/* The large-count form: the function is given an MPI_Count length. */
int MPI_Op_create_c(MPI_User_function_c *user_fn, int commute, MPI_Op *op)
{
    BDL_MT_GUARD;
    if (!user_fn)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Op_create_c", "NULL function");
    if (!op)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Op_create_c", "op is NULL");
    if (bdl_user_op_new(NULL, commute, op) < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Op_create_c", "out of memory");
    bdl_user_op_t *u;
    bdl_user_op_fn(*op, &u);
    u->fn_c = user_fn;
    return MPI_SUCCESS;
}

int MPI_Op_free(MPI_Op *op)
{
    BDL_MT_GUARD;
    bdl_user_op_t *u;
    if (!op || bdl_user_op_fn(*op, &u) < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_OP, "MPI_Op_free",
                         "invalid or predefined operation %d", op ? *op : 0);
    u->used = 0;
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}

int MPI_Op_commutative(MPI_Op op, int *commute)
{
    BDL_MT_GUARD;
    bdl_user_op_t *u;
    if (op > 0 && op <= BDMPI_OP_PREDEFINED_MAX) {
        *commute = 1;
        return MPI_SUCCESS;
    }
    if (bdl_user_op_fn(op, &u) < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_OP, "MPI_Op_commutative", "invalid operation %d",
                         op);
    *commute = u->commute;
    return MPI_SUCCESS;
}

int MPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype, MPI_Op op)
{
    BDL_MT_GUARD;
    bdl_dt_t *t = NULL;
    bdl_user_op_t *u;
    int rc;
    if (count < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_COUNT, "MPI_Reduce_local", "invalid count %d",
                         count);
    if ((rc = bdl_dt_check(MPI_COMM_WORLD, "MPI_Reduce_local", "", datatype, &t)) ||
        (rc = bdl_op_check(MPI_COMM_WORLD, "MPI_Reduce_local", op, datatype, t, &u)))
        return rc;
    if (inbuf == MPI_IN_PLACE || inoutbuf == MPI_IN_PLACE)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_BUFFER, "MPI_Reduce_local",
                         "MPI_IN_PLACE is not allowed (%s)",
                         inbuf == MPI_IN_PLACE ? "inbuf" : "inoutbuf");
    if (count > 0 && t->predefined && (!inbuf || !inoutbuf))
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_BUFFER, "MPI_Reduce_local", "%s is NULL",
                         inbuf ? "inoutbuf" : "inbuf");
    if ((rc = bdl_coll_check_alias(MPI_COMM_WORLD, "MPI_Reduce_local", inbuf, (uint64_t)count, t,
                                   inoutbuf, (uint64_t)count, t)))
        return rc;
    if (u || (t->predefined && t->contig)) { /* pair types pack apart */
        bdl_op_apply(op, u, datatype, t, inbuf, inoutbuf, count);
        return MPI_SUCCESS;
    }
    /* Predefined op on a derived type: fold the packed basic elements. */
    uint64_t n = (uint64_t)count * t->psize;
    char *a = malloc(n + 1), *b = malloc(n + 1);
    if (!a || !b)
        bdl_fatal(MPI_ERR_NO_MEM, "out of memory in MPI_Reduce_local of %llu bytes",
                  (unsigned long long)n);
    bdl_dt_pack(t, inbuf, (uint64_t)count, 0, a, n);
    bdl_dt_pack(t, inoutbuf, (uint64_t)count, 0, b, n);
    bd_op_apply(op, t->basic, a, b, (size_t)count * t->nelem);
    bdl_dt_unpack(t, inoutbuf, (uint64_t)count, 0, b, n);
    free(a);
    free(b);
    return MPI_SUCCESS;
}
