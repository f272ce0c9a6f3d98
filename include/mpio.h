/* ROMIO's header, which programs written for ROMIO include: everything of
 * MPI-IO, and ROMIO's names for its requests (MPIO_Request, MPIO_Wait,
 * MPIO_Test), is in mpi.h. */
#ifndef BDMPI_MPIO_H
#define BDMPI_MPIO_H
#include <mpi.h>
#endif
