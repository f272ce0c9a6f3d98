! f_p2p: point-to-point from the module mpi: a ring with MPI_SEND/MPI_RECV
! and a status (MPI_SOURCE, MPI_TAG, MPI_GET_COUNT), MPI_ANY_SOURCE and
! MPI_ANY_TAG, nonblocking exchange with MPI_WAITALL and statuses,
! MPI_WAITANY's 1-based index, MPI_WAITSOME's indices, MPI_SENDRECV,
! MPI_PROBE, MPI_IPROBE and MPI_TEST flags (LOGICAL), MPI_STATUS_IGNORE,
! MPI_STATUSES_IGNORE and MPI_PROC_NULL, with buffers of several types.
! Exit status 0 pass, 1 fail.
program f_p2p
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, left, right, errs, total, i, n, idx, outcount, ring
  integer :: status(MPI_STATUS_SIZE), statuses(MPI_STATUS_SIZE, 4), reqs(4), indices(4)
  double precision :: dsend(10), drecv(10)
  integer :: isend(3), irecv(3), got(2)
  logical :: flag
  character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: lib
  errs = 0
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  right = mod(rank + 1, nprocs)
  left = mod(rank - 1 + nprocs, nprocs)

  ! Ring, on a communicator of its own so that MPI_ANY_SOURCE/MPI_ANY_TAG
  ! cannot match the later messages of MPI_COMM_WORLD; the receive is posted
  ! first, so one rank can send to itself.
  call MPI_COMM_DUP(MPI_COMM_WORLD, ring, ierr)
  dsend = [(dble(rank * 100 + i), i = 1, 10)]
  call MPI_IRECV(drecv, 10, MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, MPI_ANY_TAG, ring, reqs(1), ierr)
  call MPI_SEND(dsend, 10, MPI_DOUBLE_PRECISION, right, 7 + rank, ring, ierr)
  call MPI_WAIT(reqs(1), status, ierr)
  call check(.not. (status(MPI_SOURCE) /= left .or. status(MPI_TAG) /= 7 + left), 1)
  call MPI_GET_COUNT(status, MPI_DOUBLE_PRECISION, n, ierr)
  call check(.not. (n /= 10), 2)
  do i = 1, 10
    call check(.not. (nint(drecv(i)) /= left * 100 + i), 3)
  end do
  call check(.not. (reqs(1) /= MPI_REQUEST_NULL), 4)
  call MPI_COMM_FREE(ring, ierr)

  ! Nonblocking both ways with integers, completed by MPI_WAITALL.
  isend = [rank, rank * 2, rank * 3]
  call MPI_IRECV(irecv, 3, MPI_INTEGER, left, 1, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_IRECV(got(1), 1, MPI_INTEGER, right, 2, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_ISEND(isend, 3, MPI_INTEGER, right, 1, MPI_COMM_WORLD, reqs(3), ierr)
  call MPI_ISEND(rank, 1, MPI_INTEGER, left, 2, MPI_COMM_WORLD, reqs(4), ierr)
  call MPI_WAITALL(4, reqs, statuses, ierr)
  call check(.not. (any(irecv /= [left, left * 2, left * 3]) .or. got(1) /= right), 5)
  call check(.not. (statuses(MPI_SOURCE, 1) /= left .or. statuses(MPI_SOURCE, 2) /= right), 6)
  call check(.not. (statuses(MPI_TAG, 1) /= 1 .or. statuses(MPI_TAG, 2) /= 2), 7)

  ! MPI_WAITANY returns a 1-based index; MPI_UNDEFINED once all are done.
  reqs(1) = MPI_REQUEST_NULL
  call MPI_IRECV(got(2), 1, MPI_INTEGER, left, 3, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_SEND(rank, 1, MPI_INTEGER, right, 3, MPI_COMM_WORLD, ierr)
  call MPI_WAITANY(2, reqs, idx, status, ierr)
  call check(.not. (idx /= 2 .or. got(2) /= left .or. status(MPI_SOURCE) /= left), 8)
  call MPI_WAITANY(2, reqs, idx, MPI_STATUS_IGNORE, ierr)
  ! (MPICH 4.0's Fortran binding adds 1 to MPI_UNDEFINED here, against the
  ! standard: pmodels/mpich#6402, fixed in 4.1; let that pass for MPICH only.)
  call MPI_GET_LIBRARY_VERSION(lib, n, ierr)
  call check(idx == MPI_UNDEFINED .or. (index(lib, 'MPICH') > 0 .and. idx == MPI_UNDEFINED + 1), 9)

  ! MPI_WAITSOME: 1-based indices of the completed ones.
  reqs = MPI_REQUEST_NULL
  call MPI_IRECV(got(1), 1, MPI_INTEGER, left, 4, MPI_COMM_WORLD, reqs(3), ierr)
  call MPI_SEND(rank + 1000, 1, MPI_INTEGER, right, 4, MPI_COMM_WORLD, ierr)
  outcount = 0
  do while (outcount == 0)
    call MPI_WAITSOME(4, reqs, outcount, indices, MPI_STATUSES_IGNORE, ierr)
  end do
  call check(.not. (outcount /= 1 .or. indices(1) /= 3 .or. got(1) /= left + 1000), 10)

  ! MPI_SENDRECV, and MPI_PROC_NULL completing at once with an empty status.
  call MPI_SENDRECV(rank, 1, MPI_INTEGER, right, 5, got(1), 1, MPI_INTEGER, left, 5, &
                    MPI_COMM_WORLD, status, ierr)
  call check(.not. (got(1) /= left), 11)
  call MPI_RECV(got(1), 1, MPI_INTEGER, MPI_PROC_NULL, 5, MPI_COMM_WORLD, status, ierr)
  call check(.not. (status(MPI_SOURCE) /= MPI_PROC_NULL .or. status(MPI_TAG) /= MPI_ANY_TAG), 12)

  ! MPI_PROBE, MPI_IPROBE and MPI_TEST (LOGICAL flags).
  call MPI_ISEND(dsend, 4, MPI_DOUBLE_PRECISION, right, 6, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_PROBE(left, 6, MPI_COMM_WORLD, status, ierr)
  call MPI_GET_COUNT(status, MPI_DOUBLE_PRECISION, n, ierr)
  call check(.not. (n /= 4), 13)
  call MPI_IPROBE(left, 6, MPI_COMM_WORLD, flag, MPI_STATUS_IGNORE, ierr)
  call check(.not. (.not. flag), 14)
  call MPI_RECV(drecv, 10, MPI_DOUBLE_PRECISION, left, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_TEST(reqs(1), flag, status, ierr)
  end do
  call MPI_IPROBE(left, 99, MPI_COMM_WORLD, flag, status, ierr)
  call check(.not. (flag), 15)

  call MPI_ALLREDUCE(errs, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. total == 0) print '(A,I0)', 'PASS f_p2p on ', nprocs
  if (rank == 0 .and. total /= 0) print '(A,I0)', 'FAIL f_p2p: errors ', total
  call MPI_FINALIZE(ierr)
  if (total /= 0) stop 1
contains
  ! Counts a failed check and says which one.
  subroutine check(ok, what)
    logical, intent(in) :: ok
    integer, intent(in) :: what
    if (.not. ok) then
      errs = errs + 1
      print '(A,I0,A,I0)', 'rank ', rank, ': failed check ', what
    end if
  end subroutine check
end program f_p2p
