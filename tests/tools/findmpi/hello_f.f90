! The Fortran twin of hello_c.c (module mpi), through MPI::MPI_Fortran or
! BDMPI::mpi_f.
program hello_f
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, total, len
  character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: lib
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  call MPI_GET_LIBRARY_VERSION(lib, len, ierr)
  call MPI_ALLREDUCE(nprocs, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(A,I0,A,A)', 'hello_f: ', nprocs, ' ranks, ', lib(1:len)
  call MPI_FINALIZE(ierr)
  if (total /= nprocs * nprocs) stop 1
end program hello_f
