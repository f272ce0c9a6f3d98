! f_coll: collectives from the module mpi: MPI_BARRIER, MPI_BCAST of a 2-D
! array, MPI_REDUCE and MPI_ALLREDUCE (also MPI_IN_PLACE) on REAL, DOUBLE
! PRECISION and INTEGER, MPI_MAXLOC on MPI_2INTEGER, MPI_GATHER,
! MPI_SCATTER, MPI_ALLGATHERV, MPI_ALLTOALL, MPI_SCAN, a user-defined
! operation written in Fortran (MPI_OP_CREATE, not commutative), and
! MPI_IALLREDUCE.
! Exit status 0 pass, 1 fail.
module f_coll_ops
  implicit none
contains
  ! Composition of affine maps x -> a*x + b, each a pair (a, b) of an
  ! MPI_2INTEGER: inoutvec becomes "invec, then inoutvec".  Associative, not
  ! commutative, so the result shows the ranks' order.
  subroutine compose(invec, inoutvec, len, datatype)
    integer :: len, datatype
    integer :: invec(2, len), inoutvec(2, len)
    integer :: i
    if (datatype /= MPI_2INTEGER_VALUE()) return
    do i = 1, len
      inoutvec(2, i) = inoutvec(1, i) * invec(2, i) + inoutvec(2, i)
      inoutvec(1, i) = inoutvec(1, i) * invec(1, i)
    end do
  end subroutine compose
  integer function MPI_2INTEGER_VALUE()
    use mpi, only: MPI_2INTEGER
    MPI_2INTEGER_VALUE = MPI_2INTEGER
  end function MPI_2INTEGER_VALUE
end module f_coll_ops

program f_coll
  use mpi
  use f_coll_ops
  implicit none
  integer :: ierr, rank, nprocs, errs, total, i, j, op, req, want
  double precision :: grid(3, 4)
  real :: r(2), rsum(2)
  integer, allocatable :: all(:), counts(:), displs(:), sbuf(:), rbuf(:)
  integer :: pair(2), best(2), scanned
  errs = 0
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  allocate(all(nprocs), counts(nprocs), displs(nprocs), sbuf(nprocs), rbuf(nprocs * (nprocs + 1)))
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)

  grid = -1
  if (rank == nprocs - 1) grid = reshape([(dble(i), i = 1, 12)], [3, 4])
  call MPI_BCAST(grid, 12, MPI_DOUBLE_PRECISION, nprocs - 1, MPI_COMM_WORLD, ierr)
  call check(.not. (nint(grid(3, 4)) /= 12 .or. nint(grid(2, 1)) /= 2), 1)

  r = [real(rank), 1.0]
  rsum = 0
  call MPI_REDUCE(r, rsum, 2, MPI_REAL, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  call check(.not. (rank == 0 .and. (nint(rsum(1)) /= nprocs * (nprocs - 1) / 2 .or. nint(rsum(2)) /= nprocs)), 13)
  call MPI_ALLREDUCE(MPI_IN_PLACE, r, 2, MPI_REAL, MPI_MAX, MPI_COMM_WORLD, ierr)
  call check(.not. (nint(r(1)) /= nprocs - 1), 2)

  pair = [mod(rank * 7, 5), rank]
  call MPI_ALLREDUCE(pair, best, 1, MPI_2INTEGER, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
  want = maxval([(mod(i * 7, 5), i = 0, nprocs - 1)])
  call check(.not. (best(1) /= want .or. mod(best(2) * 7, 5) /= want), 3)
  do i = 0, nprocs - 1  ! MAXLOC takes the lowest rank among equal values
    if (mod(i * 7, 5) == want) exit
  end do
  call check(.not. (best(2) /= i), 4)

  call MPI_GATHER(rank * 2, 1, MPI_INTEGER, all, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    call check(.not. (any(all /= [(2 * i, i = 0, nprocs - 1)])), 5)
  end if
  sbuf = [(100 + i, i = 1, nprocs)]
  call MPI_SCATTER(sbuf, 1, MPI_INTEGER, j, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call check(.not. (j /= 101 + rank), 6)

  ! Rank k contributes k+1 copies of k.
  counts = [(i, i = 1, nprocs)]
  displs(1) = 0
  do i = 2, nprocs
    displs(i) = displs(i - 1) + counts(i - 1)
  end do
  sbuf = rank
  call MPI_ALLGATHERV(sbuf, rank + 1, MPI_INTEGER, rbuf, counts, displs, MPI_INTEGER, &
                      MPI_COMM_WORLD, ierr)
  do i = 1, nprocs
    call check(.not. (any(rbuf(displs(i) + 1:displs(i) + counts(i)) /= i - 1)), 7)
  end do

  sbuf = [(rank * 1000 + i, i = 0, nprocs - 1)]
  call MPI_ALLTOALL(sbuf, 1, MPI_INTEGER, all, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call check(.not. (any(all /= [(i * 1000 + rank, i = 0, nprocs - 1)])), 8)

  call MPI_SCAN(rank + 1, scanned, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(.not. (scanned /= (rank + 1) * (rank + 2) / 2), 9)

  ! A Fortran operation, not commutative: rank k's map is x -> 2x + k + 1.
  call MPI_OP_CREATE(compose, .false., op, ierr)
  pair = [2, rank + 1]
  call MPI_REDUCE(pair, best, 1, MPI_2INTEGER, op, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    want = 0
    do i = 0, nprocs - 1
      want = 2 * want + i + 1
    end do
    call check(.not. (best(1) /= 2**nprocs .or. best(2) /= want), 10)
  end if
  call MPI_OP_FREE(op, ierr)
  call check(.not. (op /= MPI_OP_NULL), 11)

  call MPI_IALLREDUCE(rank, j, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req, ierr)
  call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)
  call check(.not. (j /= nprocs * (nprocs - 1) / 2), 12)

  call MPI_ALLREDUCE(errs, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. total == 0) print '(A,I0)', 'PASS f_coll on ', nprocs
  if (rank == 0 .and. total /= 0) print '(A,I0)', 'FAIL f_coll: errors ', total
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
end program f_coll
