/* MPI 4.0 large-count entry points ("_c"), more part.  GENERATED from
 * include/mpi.h by `scripts/gen-bigcount.py --source more >
 * src/lib/mpi/bigcount_more.c`: do not edit.  The conversions (bdl_bc_*)
 * are in bigcount.c, which says why. */
#include <limits.h>
#include <stdlib.h>

#include "core.h"
#include "mpi_int.h"

int MPI_Pack_c(const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf,
               MPI_Count outsize, MPI_Count *position, MPI_Comm comm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Pack_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_incount;
    if ((rc = bdl_bc_fit_dt(call, comm, "incount", incount, &i_incount, &datatype, &w_datatype)))
        goto out;
    int i_position;
    if ((rc = bdl_bc_fit(call, comm, "position", *position, &i_position)))
        return rc;
    rc = MPI_Pack(inbuf, i_incount, datatype, outbuf, (outsize > INT_MAX ? INT_MAX : (int)outsize),
                  &i_position, comm);
    if (rc == MPI_SUCCESS)
        *position = (MPI_Count)i_position;
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Unpack_c(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
                 MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Unpack_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_position;
    if ((rc = bdl_bc_fit(call, comm, "position", *position, &i_position)))
        return rc;
    int i_outcount;
    if ((rc = bdl_bc_fit_dt(call, comm, "outcount", outcount, &i_outcount, &datatype, &w_datatype)))
        goto out;
    rc = MPI_Unpack(inbuf, (insize > INT_MAX ? INT_MAX : (int)insize), &i_position, outbuf,
                    i_outcount, datatype, comm);
    if (rc == MPI_SUCCESS)
        *position = (MPI_Count)i_position;
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count *size)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Pack_size_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_incount;
    if ((rc = bdl_bc_fit_dt(call, comm, "incount", incount, &i_incount, &datatype, &w_datatype)))
        goto out;
    int i_size = 0;
    rc = MPI_Pack_size(i_incount, datatype, comm, &i_size);
    if (rc == MPI_SUCCESS)
        *size = (MPI_Count)i_size;
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Pack_external_c(const char datarep[], const void *inbuf, MPI_Count incount,
                        MPI_Datatype datatype, void *outbuf, MPI_Count outsize, MPI_Count *position)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Pack_external_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_incount;
    if ((rc = bdl_bc_fit_dt(call, MPI_COMM_WORLD, "incount", incount, &i_incount, &datatype,
                            &w_datatype)))
        goto out;
    MPI_Aint i_position = (MPI_Aint)*position;
    rc = MPI_Pack_external(datarep, inbuf, i_incount, datatype, outbuf, (MPI_Aint)outsize,
                           &i_position);
    if (rc == MPI_SUCCESS)
        *position = (MPI_Count)i_position;
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Unpack_external_c(const char datarep[], const void *inbuf, MPI_Count insize,
                          MPI_Count *position, void *outbuf, MPI_Count outcount,
                          MPI_Datatype datatype)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Unpack_external_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    MPI_Aint i_position = (MPI_Aint)*position;
    int i_outcount;
    if ((rc = bdl_bc_fit_dt(call, MPI_COMM_WORLD, "outcount", outcount, &i_outcount, &datatype,
                            &w_datatype)))
        goto out;
    rc = MPI_Unpack_external(datarep, inbuf, (MPI_Aint)insize, &i_position, outbuf, i_outcount,
                             datatype);
    if (rc == MPI_SUCCESS)
        *position = (MPI_Count)i_position;
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Pack_external_size_c(const char datarep[], MPI_Count incount, MPI_Datatype datatype,
                             MPI_Count *size)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Pack_external_size_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_incount;
    if ((rc = bdl_bc_fit_dt(call, MPI_COMM_WORLD, "incount", incount, &i_incount, &datatype,
                            &w_datatype)))
        goto out;
    MPI_Aint i_size = 0;
    rc = MPI_Pack_external_size(datarep, i_incount, datatype, &i_size);
    if (rc == MPI_SUCCESS)
        *size = (MPI_Count)i_size;
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_Put_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, MPI_Count target_count,
              MPI_Datatype target_datatype, MPI_Win win)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Put_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_origin_datatype = MPI_DATATYPE_NULL;
    MPI_Datatype w_target_datatype = MPI_DATATYPE_NULL;
    int i_origin_count;
    if ((rc = bdl_bc_fit_dt(call, MPI_COMM_WORLD, "origin_count", origin_count, &i_origin_count,
                            &origin_datatype, &w_origin_datatype)))
        goto out;
    int i_target_count;
    if ((rc = bdl_bc_fit_dt(call, MPI_COMM_WORLD, "target_count", target_count, &i_target_count,
                            &target_datatype, &w_target_datatype)))
        goto out;
    rc = MPI_Put(origin_addr, i_origin_count, origin_datatype, target_rank, target_disp,
                 i_target_count, target_datatype, win);
out:
    bdl_bc_dt_free(&w_origin_datatype);
    bdl_bc_dt_free(&w_target_datatype);
    return rc;
}

int MPI_Get_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, MPI_Count target_count,
              MPI_Datatype target_datatype, MPI_Win win)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Get_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_origin_datatype = MPI_DATATYPE_NULL;
    MPI_Datatype w_target_datatype = MPI_DATATYPE_NULL;
    int i_origin_count;
    if ((rc = bdl_bc_fit_dt(call, MPI_COMM_WORLD, "origin_count", origin_count, &i_origin_count,
                            &origin_datatype, &w_origin_datatype)))
        goto out;
    int i_target_count;
    if ((rc = bdl_bc_fit_dt(call, MPI_COMM_WORLD, "target_count", target_count, &i_target_count,
                            &target_datatype, &w_target_datatype)))
        goto out;
    rc = MPI_Get(origin_addr, i_origin_count, origin_datatype, target_rank, target_disp,
                 i_target_count, target_datatype, win);
out:
    bdl_bc_dt_free(&w_origin_datatype);
    bdl_bc_dt_free(&w_target_datatype);
    return rc;
}

int MPI_Accumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Accumulate_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_origin_datatype = MPI_DATATYPE_NULL;
    MPI_Datatype w_target_datatype = MPI_DATATYPE_NULL;
    int i_origin_count;
    if ((rc = bdl_bc_fit_dt(call, MPI_COMM_WORLD, "origin_count", origin_count, &i_origin_count,
                            &origin_datatype, &w_origin_datatype)))
        goto out;
    int i_target_count;
    if ((rc = bdl_bc_fit_dt(call, MPI_COMM_WORLD, "target_count", target_count, &i_target_count,
                            &target_datatype, &w_target_datatype)))
        goto out;
    rc = MPI_Accumulate(origin_addr, i_origin_count, origin_datatype, target_rank, target_disp,
                        i_target_count, target_datatype, op, win);
out:
    bdl_bc_dt_free(&w_origin_datatype);
    bdl_bc_dt_free(&w_target_datatype);
    return rc;
}

int MPI_Get_accumulate_c(const void *origin_addr, MPI_Count origin_count,
                         MPI_Datatype origin_datatype, void *result_addr, MPI_Count result_count,
                         MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                         MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                         MPI_Win win)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Get_accumulate_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_origin_datatype = MPI_DATATYPE_NULL;
    MPI_Datatype w_result_datatype = MPI_DATATYPE_NULL;
    MPI_Datatype w_target_datatype = MPI_DATATYPE_NULL;
    int i_origin_count;
    if ((rc = bdl_bc_fit_dt(call, MPI_COMM_WORLD, "origin_count", origin_count, &i_origin_count,
                            &origin_datatype, &w_origin_datatype)))
        goto out;
    int i_result_count;
    if ((rc = bdl_bc_fit_dt(call, MPI_COMM_WORLD, "result_count", result_count, &i_result_count,
                            &result_datatype, &w_result_datatype)))
        goto out;
    int i_target_count;
    if ((rc = bdl_bc_fit_dt(call, MPI_COMM_WORLD, "target_count", target_count, &i_target_count,
                            &target_datatype, &w_target_datatype)))
        goto out;
    rc = MPI_Get_accumulate(origin_addr, i_origin_count, origin_datatype, result_addr,
                            i_result_count, result_datatype, target_rank, target_disp,
                            i_target_count, target_datatype, op, win);
out:
    bdl_bc_dt_free(&w_origin_datatype);
    bdl_bc_dt_free(&w_result_datatype);
    bdl_bc_dt_free(&w_target_datatype);
    return rc;
}

int MPI_Rput_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, MPI_Count target_count,
               MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Rput_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_origin_datatype = MPI_DATATYPE_NULL;
    MPI_Datatype w_target_datatype = MPI_DATATYPE_NULL;
    int i_origin_count;
    if ((rc = bdl_bc_fit_dt(call, MPI_COMM_WORLD, "origin_count", origin_count, &i_origin_count,
                            &origin_datatype, &w_origin_datatype)))
        goto out;
    int i_target_count;
    if ((rc = bdl_bc_fit_dt(call, MPI_COMM_WORLD, "target_count", target_count, &i_target_count,
                            &target_datatype, &w_target_datatype)))
        goto out;
    rc = MPI_Rput(origin_addr, i_origin_count, origin_datatype, target_rank, target_disp,
                  i_target_count, target_datatype, win, request);
out:
    bdl_bc_dt_free(&w_origin_datatype);
    bdl_bc_dt_free(&w_target_datatype);
    return rc;
}

int MPI_Rget_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, MPI_Count target_count,
               MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Rget_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_origin_datatype = MPI_DATATYPE_NULL;
    MPI_Datatype w_target_datatype = MPI_DATATYPE_NULL;
    int i_origin_count;
    if ((rc = bdl_bc_fit_dt(call, MPI_COMM_WORLD, "origin_count", origin_count, &i_origin_count,
                            &origin_datatype, &w_origin_datatype)))
        goto out;
    int i_target_count;
    if ((rc = bdl_bc_fit_dt(call, MPI_COMM_WORLD, "target_count", target_count, &i_target_count,
                            &target_datatype, &w_target_datatype)))
        goto out;
    rc = MPI_Rget(origin_addr, i_origin_count, origin_datatype, target_rank, target_disp,
                  i_target_count, target_datatype, win, request);
out:
    bdl_bc_dt_free(&w_origin_datatype);
    bdl_bc_dt_free(&w_target_datatype);
    return rc;
}

int MPI_Raccumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                      MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Raccumulate_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_origin_datatype = MPI_DATATYPE_NULL;
    MPI_Datatype w_target_datatype = MPI_DATATYPE_NULL;
    int i_origin_count;
    if ((rc = bdl_bc_fit_dt(call, MPI_COMM_WORLD, "origin_count", origin_count, &i_origin_count,
                            &origin_datatype, &w_origin_datatype)))
        goto out;
    int i_target_count;
    if ((rc = bdl_bc_fit_dt(call, MPI_COMM_WORLD, "target_count", target_count, &i_target_count,
                            &target_datatype, &w_target_datatype)))
        goto out;
    rc = MPI_Raccumulate(origin_addr, i_origin_count, origin_datatype, target_rank, target_disp,
                         i_target_count, target_datatype, op, win, request);
out:
    bdl_bc_dt_free(&w_origin_datatype);
    bdl_bc_dt_free(&w_target_datatype);
    return rc;
}

int MPI_Rget_accumulate_c(const void *origin_addr, MPI_Count origin_count,
                          MPI_Datatype origin_datatype, void *result_addr, MPI_Count result_count,
                          MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                          MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                          MPI_Win win, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Rget_accumulate_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_origin_datatype = MPI_DATATYPE_NULL;
    MPI_Datatype w_result_datatype = MPI_DATATYPE_NULL;
    MPI_Datatype w_target_datatype = MPI_DATATYPE_NULL;
    int i_origin_count;
    if ((rc = bdl_bc_fit_dt(call, MPI_COMM_WORLD, "origin_count", origin_count, &i_origin_count,
                            &origin_datatype, &w_origin_datatype)))
        goto out;
    int i_result_count;
    if ((rc = bdl_bc_fit_dt(call, MPI_COMM_WORLD, "result_count", result_count, &i_result_count,
                            &result_datatype, &w_result_datatype)))
        goto out;
    int i_target_count;
    if ((rc = bdl_bc_fit_dt(call, MPI_COMM_WORLD, "target_count", target_count, &i_target_count,
                            &target_datatype, &w_target_datatype)))
        goto out;
    rc = MPI_Rget_accumulate(origin_addr, i_origin_count, origin_datatype, result_addr,
                             i_result_count, result_datatype, target_rank, target_disp,
                             i_target_count, target_datatype, op, win, request);
out:
    bdl_bc_dt_free(&w_origin_datatype);
    bdl_bc_dt_free(&w_result_datatype);
    bdl_bc_dt_free(&w_target_datatype);
    return rc;
}

int MPI_Win_create_c(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                     MPI_Win *win)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Win_create_c";
    int rc = MPI_SUCCESS;
    int i_disp_unit;
    if ((rc = bdl_bc_fit(call, comm, "disp_unit", disp_unit, &i_disp_unit)))
        return rc;
    rc = MPI_Win_create(base, size, i_disp_unit, info, comm, win);
    return rc;
}

int MPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                       void *baseptr, MPI_Win *win)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Win_allocate_c";
    int rc = MPI_SUCCESS;
    int i_disp_unit;
    if ((rc = bdl_bc_fit(call, comm, "disp_unit", disp_unit, &i_disp_unit)))
        return rc;
    rc = MPI_Win_allocate(size, i_disp_unit, info, comm, baseptr, win);
    return rc;
}

int MPI_File_read_at_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                       MPI_Datatype datatype, MPI_Status *status)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_read_at_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc =
             bdl_bc_fit_dt(call, MPI_COMM_WORLD, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_File_read_at(fh, offset, buf, i_count, datatype, status);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_File_read_at_all_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                           MPI_Datatype datatype, MPI_Status *status)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_read_at_all_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc =
             bdl_bc_fit_dt(call, MPI_COMM_WORLD, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_File_read_at_all(fh, offset, buf, i_count, datatype, status);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_File_write_at_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                        MPI_Datatype datatype, MPI_Status *status)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_write_at_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc =
             bdl_bc_fit_dt(call, MPI_COMM_WORLD, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_File_write_at(fh, offset, buf, i_count, datatype, status);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_File_write_at_all_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                            MPI_Datatype datatype, MPI_Status *status)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_write_at_all_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc =
             bdl_bc_fit_dt(call, MPI_COMM_WORLD, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_File_write_at_all(fh, offset, buf, i_count, datatype, status);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_File_iread_at_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                        MPI_Datatype datatype, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_iread_at_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc =
             bdl_bc_fit_dt(call, MPI_COMM_WORLD, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_File_iread_at(fh, offset, buf, i_count, datatype, request);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_File_iread_at_all_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                            MPI_Datatype datatype, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_iread_at_all_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc =
             bdl_bc_fit_dt(call, MPI_COMM_WORLD, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_File_iread_at_all(fh, offset, buf, i_count, datatype, request);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_File_iwrite_at_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                         MPI_Datatype datatype, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_iwrite_at_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc =
             bdl_bc_fit_dt(call, MPI_COMM_WORLD, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_File_iwrite_at(fh, offset, buf, i_count, datatype, request);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_File_iwrite_at_all_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                             MPI_Datatype datatype, MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_iwrite_at_all_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc =
             bdl_bc_fit_dt(call, MPI_COMM_WORLD, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_File_iwrite_at_all(fh, offset, buf, i_count, datatype, request);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_File_read_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                    MPI_Status *status)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_read_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc =
             bdl_bc_fit_dt(call, MPI_COMM_WORLD, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_File_read(fh, buf, i_count, datatype, status);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_File_read_all_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                        MPI_Status *status)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_read_all_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc =
             bdl_bc_fit_dt(call, MPI_COMM_WORLD, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_File_read_all(fh, buf, i_count, datatype, status);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_File_write_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Status *status)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_write_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc =
             bdl_bc_fit_dt(call, MPI_COMM_WORLD, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_File_write(fh, buf, i_count, datatype, status);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_File_write_all_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                         MPI_Status *status)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_write_all_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc =
             bdl_bc_fit_dt(call, MPI_COMM_WORLD, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_File_write_all(fh, buf, i_count, datatype, status);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_File_iread_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_iread_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc =
             bdl_bc_fit_dt(call, MPI_COMM_WORLD, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_File_iread(fh, buf, i_count, datatype, request);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_File_iread_all_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                         MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_iread_all_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc =
             bdl_bc_fit_dt(call, MPI_COMM_WORLD, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_File_iread_all(fh, buf, i_count, datatype, request);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_File_iwrite_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                      MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_iwrite_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc =
             bdl_bc_fit_dt(call, MPI_COMM_WORLD, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_File_iwrite(fh, buf, i_count, datatype, request);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_File_iwrite_all_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                          MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_iwrite_all_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc =
             bdl_bc_fit_dt(call, MPI_COMM_WORLD, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_File_iwrite_all(fh, buf, i_count, datatype, request);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_File_read_shared_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                           MPI_Status *status)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_read_shared_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc =
             bdl_bc_fit_dt(call, MPI_COMM_WORLD, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_File_read_shared(fh, buf, i_count, datatype, status);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_File_write_shared_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                            MPI_Status *status)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_write_shared_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc =
             bdl_bc_fit_dt(call, MPI_COMM_WORLD, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_File_write_shared(fh, buf, i_count, datatype, status);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_File_iread_shared_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                            MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_iread_shared_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc =
             bdl_bc_fit_dt(call, MPI_COMM_WORLD, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_File_iread_shared(fh, buf, i_count, datatype, request);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_File_iwrite_shared_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                             MPI_Request *request)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_iwrite_shared_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc =
             bdl_bc_fit_dt(call, MPI_COMM_WORLD, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_File_iwrite_shared(fh, buf, i_count, datatype, request);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_File_read_ordered_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                            MPI_Status *status)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_read_ordered_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc =
             bdl_bc_fit_dt(call, MPI_COMM_WORLD, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_File_read_ordered(fh, buf, i_count, datatype, status);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_File_write_ordered_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                             MPI_Status *status)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_write_ordered_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc =
             bdl_bc_fit_dt(call, MPI_COMM_WORLD, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_File_write_ordered(fh, buf, i_count, datatype, status);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_File_read_at_all_begin_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                                 MPI_Datatype datatype)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_read_at_all_begin_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc =
             bdl_bc_fit_dt(call, MPI_COMM_WORLD, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_File_read_at_all_begin(fh, offset, buf, i_count, datatype);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_File_write_at_all_begin_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                                  MPI_Datatype datatype)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_write_at_all_begin_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc =
             bdl_bc_fit_dt(call, MPI_COMM_WORLD, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_File_write_at_all_begin(fh, offset, buf, i_count, datatype);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_File_read_all_begin_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_read_all_begin_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc =
             bdl_bc_fit_dt(call, MPI_COMM_WORLD, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_File_read_all_begin(fh, buf, i_count, datatype);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_File_write_all_begin_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_write_all_begin_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc =
             bdl_bc_fit_dt(call, MPI_COMM_WORLD, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_File_write_all_begin(fh, buf, i_count, datatype);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_File_read_ordered_begin_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_read_ordered_begin_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc =
             bdl_bc_fit_dt(call, MPI_COMM_WORLD, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_File_read_ordered_begin(fh, buf, i_count, datatype);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}

int MPI_File_write_ordered_begin_c(MPI_File fh, const void *buf, MPI_Count count,
                                   MPI_Datatype datatype)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_write_ordered_begin_c";
    int rc = MPI_SUCCESS;
    MPI_Datatype w_datatype = MPI_DATATYPE_NULL;
    int i_count;
    if ((rc =
             bdl_bc_fit_dt(call, MPI_COMM_WORLD, "count", count, &i_count, &datatype, &w_datatype)))
        goto out;
    rc = MPI_File_write_ordered_begin(fh, buf, i_count, datatype);
out:
    bdl_bc_dt_free(&w_datatype);
    return rc;
}
