/* MPI 4.0 large-count entry points ("_c") that scripts/gen-bigcount.py does
 * not make: the ones whose MPI_Count or MPI_Aint arguments are outputs or
 * have no int counterpart in the MPI 3.1 form (the type constructors and
 * their envelope and contents are objects/type_create.c's and type_query.c's).
 * Each is a thin layer over the MPI 3.1 calls, as the generated ones are
 * (bigcount.c says why); MPI_Op_create_c is op.c's. */
#include <limits.h>

#include "core.h"
#include "mpi_int.h"

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
