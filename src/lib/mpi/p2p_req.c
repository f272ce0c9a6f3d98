/* The MPI calls that complete, cancel and free requests of any kind: thin
 * wrappers over the completion engine (core/request.c). */
#include "core.h"
#include "request.h"

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Wait");
    return bdl_req_wait("MPI_Wait", request, status);
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Test");
    return bdl_req_test("MPI_Test", request, flag, status);
}

int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Request_get_status");
    return bdl_req_get_status("MPI_Request_get_status", request, flag, status);
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status *statuses)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Waitall");
    return bdl_req_waitall("MPI_Waitall", count, requests, statuses);
}

int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status *statuses)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Testall");
    return bdl_req_testall("MPI_Testall", count, requests, flag, statuses);
}

int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Waitany");
    return bdl_req_waitany("MPI_Waitany", count, requests, index, NULL, status);
}

int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Testany");
    return bdl_req_waitany("MPI_Testany", count, requests, index, flag, status);
}

int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status *statuses)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Waitsome");
    return bdl_req_waitsome("MPI_Waitsome", incount, requests, outcount, indices, statuses, 1);
}

int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status *statuses)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Testsome");
    return bdl_req_waitsome("MPI_Testsome", incount, requests, outcount, indices, statuses, 0);
}

int MPI_Cancel(MPI_Request *request)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Cancel");
    return bdl_req_cancel("MPI_Cancel", request);
}

int MPI_Request_free(MPI_Request *request)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Request_free");
    return bdl_req_release("MPI_Request_free", request);
}
