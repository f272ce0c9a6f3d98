/* Buffered sends, and MPI_Test_cancelled: point-to-point calls that need
 * nothing of the request engine.  Sends are already buffered by the master,
 * so MPI_Bsend is MPI_Send once the standard's conditions on the attached
 * buffer are checked. */
#include "core.h"
#include "dt.h"
#include "mpi_int.h"
#include "objects.h"

static void *g_bsend_buf;
static int g_bsend_size = -1; /* -1: nothing attached */

int MPI_Buffer_attach(void *buffer, int size)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Buffer_attach";
    BDL_CHECK_INIT(call);
    if (size < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "invalid size %d", size);
    if (size > 0 && !buffer)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_BUFFER, call, "NULL buffer of %d bytes", size);
    if (g_bsend_size >= 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_BUFFER, call,
                         "a buffer of %d bytes is already attached", g_bsend_size);
    g_bsend_buf = buffer;
    g_bsend_size = size;
    return MPI_SUCCESS;
}

/* Every buffered message has already left (the master holds it), so
 * detaching never waits. */
int MPI_Buffer_detach(void *buffer_addr, int *size)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Buffer_detach";
    BDL_CHECK_INIT(call);
    if (!buffer_addr || !size)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "NULL argument");
    if (g_bsend_size < 0) {
        *(void **)buffer_addr = NULL;
        *size = 0;
        return MPI_SUCCESS;
    }
    *(void **)buffer_addr = g_bsend_buf;
    *size = g_bsend_size;
    g_bsend_buf = NULL;
    g_bsend_size = -1;
    return MPI_SUCCESS;
}

/* The message must fit the attached buffer (it is copied out at once, so
 * only its own size counts). */
static int bsend_check(const char *call, int count, MPI_Datatype datatype, int dest, MPI_Comm comm)
{
    BDL_CHECK_INIT(call);
    if (!bdl_comm_get(comm) || count < 0 || dest == MPI_PROC_NULL)
        return MPI_SUCCESS; /* the send reports it, or sends nothing */
    /* An invalid datatype is the send's to report (MPI_DATATYPE_NULL is a
     * valid one with count 0). */
    const bdl_dt_t *t = bdl_dt_lookup(datatype);
    if (!t && count)
        return MPI_SUCCESS;
    long long sz = t ? (long long)t->size : 0;
    long long need = (long long)count * sz + MPI_BSEND_OVERHEAD;
    if (g_bsend_size < 0 || need > g_bsend_size)
        return bdl_error(comm, MPI_ERR_BUFFER, call,
                         "a %lld-byte buffered message does not fit the attached buffer (%s%d "
                         "bytes; MPI_BSEND_OVERHEAD is %d)",
                         (long long)count * sz, g_bsend_size < 0 ? "none attached, " : "",
                         g_bsend_size < 0 ? 0 : g_bsend_size, MPI_BSEND_OVERHEAD);
    return MPI_SUCCESS;
}

int MPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    BDL_MT_GUARD;
    int rc = bsend_check("MPI_Bsend", count, datatype, dest, comm);
    return rc ? rc : bdl_mpi_send("MPI_Bsend", buf, count, datatype, dest, tag, comm, 0);
}

int MPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    BDL_MT_GUARD;
    int rc = bsend_check("MPI_Ibsend", count, datatype, dest, comm);
    return rc ? rc : MPI_Isend(buf, count, datatype, dest, tag, comm, request);
}

int MPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Test_cancelled");
    if (!status || status == MPI_STATUS_IGNORE)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Test_cancelled", "invalid status");
    *flag = status->bd_cancelled != 0;
    return MPI_SUCCESS;
}
