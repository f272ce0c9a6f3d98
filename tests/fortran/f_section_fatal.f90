! f_section_fatal: a non-contiguous array section given to a routine that
! keeps using its buffer (MPI_Irecv) under the default error handler ends
! the job with a message naming the rank, the call and the argument (BDMPI
! only: MPI_SUBARRAYS_SUPPORTED is .FALSE.; see f08_sections for the
! MPI_ERRORS_RETURN side).  Argument "f08": through mpi_f08; "mpi": through
! the module mpi.  Registered with tests/runtime/expect.sh.
program f_section_fatal
  implicit none
  character(len=8) :: how
  call get_command_argument(1, how)
  if (how == 'mpi') then
    call with_mpi()
  else
    call with_f08()
  end if
end program f_section_fatal

subroutine with_f08()
  use mpi_f08
  implicit none
  integer :: b(3, 4), rank
  type(MPI_Request) :: req
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  b = 0
  call MPI_Irecv(b(2, :), 4, MPI_INTEGER, rank, 0, MPI_COMM_WORLD, req)
  print '(A)', 'not reached: MPI_Irecv returned'
  call MPI_Finalize()
end subroutine with_f08

subroutine with_mpi()
  use mpi
  implicit none
  integer :: b(3, 4), rank, req, ierr
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  b = 0
  call MPI_ISEND(b(1, 2:4), 3, MPI_INTEGER, rank, 0, MPI_COMM_WORLD, req, ierr)
  print '(A)', 'not reached: MPI_ISEND returned'
  call MPI_FINALIZE(ierr)
end subroutine with_mpi
