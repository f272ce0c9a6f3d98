/* MPI 4.0 large-count entry points ("_c") that scripts/gen-bigcount.py does
 * not make: the ones whose MPI_Count or MPI_Aint arguments are outputs or
 * have no int counterpart in the MPI 3.1 form, and MPI_Type_contiguous_c.
 * Each is a thin layer over the MPI 3.1 calls, as the generated ones are
 * (bigcount.c says why); MPI_Op_create_c is op.c's. */
#include <limits.h>

#include "core.h"
#include "mpi_int.h"

/* BDMPI's constructors record no large counts: num_large_counts is 0. */
int MPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count *num_integers,
                            MPI_Count *num_addresses, MPI_Count *num_large_counts,
                            MPI_Count *num_datatypes, int *combiner)
{
    BDL_MT_GUARD;
    int ni = 0, na = 0, nd = 0;
    if (!num_integers || !num_addresses || !num_large_counts || !num_datatypes)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Type_get_envelope_c",
                         "an output argument is NULL");
    int rc = MPI_Type_get_envelope(datatype, &ni, &na, &nd, combiner);
    if (rc == MPI_SUCCESS) {
        *num_integers = ni;
        *num_addresses = na;
        *num_large_counts = 0;
        *num_datatypes = nd;
    }
    return rc;
}

static int clamp(MPI_Count v) { return v > INT_MAX ? INT_MAX : v < 0 ? -1 : (int)v; }

int MPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses,
                            MPI_Count max_large_counts, MPI_Count max_datatypes,
                            int array_of_integers[], MPI_Aint array_of_addresses[],
                            MPI_Count array_of_large_counts[], MPI_Datatype array_of_datatypes[])
{
    BDL_MT_GUARD;
    (void)array_of_large_counts;
    if (max_large_counts < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Type_get_contents_c",
                         "invalid max_large_counts %lld", (long long)max_large_counts);
    /* (More room than an int can say is as good as INT_MAX: the counts
     * themselves are ints.) */
    return MPI_Type_get_contents(datatype, clamp(max_integers), clamp(max_addresses),
                                 clamp(max_datatypes), array_of_integers, array_of_addresses,
                                 array_of_datatypes);
}

int MPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                              void *baseptr, MPI_Win *win)
{
    BDL_MT_GUARD;
    int du, rc;
    if ((rc = bdl_bc_fit("MPI_Win_allocate_shared_c", comm, "disp_unit", disp_unit, &du)))
        return rc;
    return MPI_Win_allocate_shared(size, du, info, comm, baseptr, win);
}

int MPI_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit,
                           void *baseptr)
{
    BDL_MT_GUARD;
    int du = 0;
    if (!disp_unit)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Win_shared_query_c",
                         "disp_unit is NULL");
    int rc = MPI_Win_shared_query(win, rank, size, &du, baseptr);
    if (rc == MPI_SUCCESS)
        *disp_unit = du;
    return rc;
}

int MPI_File_get_type_extent_c(MPI_File fh, MPI_Datatype datatype, MPI_Count *extent)
{
    BDL_MT_GUARD;
    MPI_Aint e = 0;
    if (!extent)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_File_get_type_extent_c",
                         "extent is NULL");
    int rc = MPI_File_get_type_extent(fh, datatype, &e);
    if (rc == MPI_SUCCESS)
        *extent = e;
    return rc;
}

/* A count that fits an int is MPI_Type_contiguous's.  A larger one (the
 * type's data is then over 2 GiB, which BDMPI's descriptors hold: their
 * sizes are 64-bit) is built from MPI 3.1 constructors, whose arguments
 * are ints: a struct of a vector of count / INT_MAX blocks of INT_MAX
 * elements and a contiguous of the remaining count % INT_MAX, as MPI 3.1
 * programs (and mpi4py's large-count layer) build it.  Its envelope and
 * contents are the struct's. */
int MPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Type_contiguous_c";
    if (count <= INT_MAX)
        return MPI_Type_contiguous(count < 0 ? -1 : (int)count, oldtype, newtype);
    if (!newtype)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "newtype is NULL");
    MPI_Count q = count / INT_MAX, r = count % INT_MAX;
    if (q > INT_MAX)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_COUNT, call,
                         "count %lld is more than INT_MAX * INT_MAX", (long long)count);
    MPI_Aint lb, extent;
    int rc = MPI_Type_get_extent(oldtype, &lb, &extent);
    if (rc)
        return rc;
    MPI_Datatype parts[2] = {MPI_DATATYPE_NULL, MPI_DATATYPE_NULL};
    if ((rc = MPI_Type_vector((int)q, INT_MAX, INT_MAX, oldtype, &parts[0])) ||
        (rc = MPI_Type_contiguous((int)r, oldtype, &parts[1]))) {
        if (parts[0] != MPI_DATATYPE_NULL)
            MPI_Type_free(&parts[0]);
        return rc;
    }
    int blocks[2] = {1, 1};
    MPI_Aint displs[2] = {0, (MPI_Aint)(q * INT_MAX) * extent};
    rc = MPI_Type_create_struct(2, blocks, displs, parts, newtype);
    MPI_Type_free(&parts[0]);
    MPI_Type_free(&parts[1]);
    return rc;
}
