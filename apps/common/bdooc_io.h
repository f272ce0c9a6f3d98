/*
 * bdooc_io.h -- disk critical sections for the -ooc variants.  Include
 * after mpi.h.  Built against BDMPI (whose mpi.h brings in the Table 2
 * extensions, recognized by BDMPI_COMM_NODE), IO_BEGIN/IO_END are
 * BDMPI_Enter_critical/BDMPI_Exit_critical, so that when -nr lets several
 * ranks of a node run, at most -nc of them read or write the disk at once
 * (bdmpi.txt section 7.2, footnote 3).  Under any other MPI they do
 * nothing.  Never hold one across a blocking MPI call.
 */
#ifndef BDAPPS_BDOOC_IO_H
#define BDAPPS_BDOOC_IO_H

#if defined(BDMPI_COMM_NODE)
#define IO_BEGIN() BDMPI_Enter_critical()
#define IO_END() BDMPI_Exit_critical()
#else
#define IO_BEGIN() ((void)0)
#define IO_END() ((void)0)
#endif

#endif
