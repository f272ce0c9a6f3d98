/* Communicator creation as a collective on the engine (MPI_Comm_split's
 * and MPI_Comm_idup's instance): the master matches colors and keys and
 * answers each rank with its new communicator. */
#include <stdint.h>

#include "core.h"
#include "nbc.h"
#include "objects.h"

int bdl_nbc_split(bdl_comm_t *c, int color, int key, int api, bdl_nbc_fin_t fin, void *arg,
                  MPI_Request *request)
{
    int32_t ck[2] = {color, key};
    return bdl_nbc_start_split(c, api, ck, sizeof ck, fin, arg, request);
}
