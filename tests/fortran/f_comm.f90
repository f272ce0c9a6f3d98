! f_comm: communicators and groups from the module mpi: MPI_COMM_SPLIT,
! MPI_COMM_DUP and MPI_COMM_COMPARE, MPI_COMM_GROUP, MPI_GROUP_INCL,
! MPI_GROUP_TRANSLATE_RANKS and MPI_COMM_CREATE, a periodic Cartesian
! topology (LOGICAL periods and reorder) with MPI_CART_SHIFT and
! MPI_CART_COORDS, names (MPI_COMM_SET_NAME/GET_NAME, blank-padded
! strings), MPI_ERRORS_RETURN with an error code, MPI_ERROR_CLASS and
! MPI_ERROR_STRING, MPI_COMM_FREE.  Exit status 0 pass, 1 fail.
program f_comm
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, errs, total, i, half, hrank, hsize, dup, res, sum
  integer :: wgroup, egroup, evens, erank, nevens, cart, src, dst, len, cls, rc
  integer :: dims(1), coords(1), ranks(64), tr(2)
  character(len=MPI_MAX_OBJECT_NAME) :: name
  character(len=MPI_MAX_ERROR_STRING) :: msg
  errs = 0
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)

  ! Halves by parity, ordered by decreasing world rank.
  call MPI_COMM_SPLIT(MPI_COMM_WORLD, mod(rank, 2), -rank, half, ierr)
  call MPI_COMM_RANK(half, hrank, ierr)
  call MPI_COMM_SIZE(half, hsize, ierr)
  call check(hsize == (nprocs + 1 - mod(rank, 2)) / 2, 1)
  call check(hrank == hsize - 1 - rank / 2, 2)
  call MPI_ALLREDUCE(rank, sum, 1, MPI_INTEGER, MPI_SUM, half, ierr)
  res = 0
  do i = mod(rank, 2), nprocs - 1, 2
    res = res + i
  end do
  call check(sum == res, 3)

  call MPI_COMM_DUP(MPI_COMM_WORLD, dup, ierr)
  call MPI_COMM_COMPARE(MPI_COMM_WORLD, dup, res, ierr)
  call check(res == MPI_CONGRUENT, 4)
  call MPI_COMM_COMPARE(dup, dup, res, ierr)
  call check(res == MPI_IDENT, 5)

  ! The even ranks' group and communicator.
  call MPI_COMM_GROUP(MPI_COMM_WORLD, wgroup, ierr)
  nevens = (nprocs + 1) / 2
  ranks(1:nevens) = [(2 * i, i = 0, nevens - 1)]
  call MPI_GROUP_INCL(wgroup, nevens, ranks, egroup, ierr)
  call MPI_GROUP_TRANSLATE_RANKS(egroup, 1, [nevens - 1], wgroup, tr, ierr)
  call check(tr(1) == 2 * (nevens - 1), 6)
  call MPI_COMM_CREATE(MPI_COMM_WORLD, egroup, evens, ierr)
  if (mod(rank, 2) == 0) then
    call MPI_COMM_RANK(evens, erank, ierr)
    call check(erank == rank / 2, 7)
    call MPI_COMM_FREE(evens, ierr)
  else
    call check(evens == MPI_COMM_NULL, 8)
  end if
  call MPI_GROUP_FREE(egroup, ierr)
  call MPI_GROUP_FREE(wgroup, ierr)

  ! A ring as a periodic 1-D Cartesian topology.
  dims = 0
  call MPI_DIMS_CREATE(nprocs, 1, dims, ierr)
  call check(dims(1) == nprocs, 9)
  call MPI_CART_CREATE(MPI_COMM_WORLD, 1, dims, [.true.], .false., cart, ierr)
  call MPI_CART_SHIFT(cart, 0, 1, src, dst, ierr)
  call check(src == mod(rank - 1 + nprocs, nprocs) .and. dst == mod(rank + 1, nprocs), 10)
  call MPI_CART_COORDS(cart, rank, 1, coords, ierr)
  call check(coords(1) == rank, 11)

  ! Names: set from a blank-padded variable, read back without the blanks.
  name = 'ring'
  call MPI_COMM_SET_NAME(cart, name, ierr)
  name = 'overwritten'
  call MPI_COMM_GET_NAME(cart, name, len, ierr)
  call check(name == 'ring' .and. len == 4, 12)
  call MPI_COMM_GET_NAME(MPI_COMM_WORLD, name, len, ierr)
  call check(name(1:len) == 'MPI_COMM_WORLD', 13)

  ! Errors returned, not fatal: a send to a rank that does not exist.
  call MPI_COMM_SET_ERRHANDLER(dup, MPI_ERRORS_RETURN, ierr)
  call MPI_SEND(rank, 1, MPI_INTEGER, nprocs + 5, 0, dup, rc)
  call check(rc /= MPI_SUCCESS, 14)
  call MPI_ERROR_CLASS(rc, cls, ierr)
  call check(cls == MPI_ERR_RANK, 15)
  call MPI_ERROR_STRING(rc, msg, len, ierr)
  call check(len > 0 .and. len <= MPI_MAX_ERROR_STRING .and. msg(1:1) /= ' ', 16)

  call MPI_COMM_FREE(cart, ierr)
  call MPI_COMM_FREE(dup, ierr)
  call MPI_COMM_FREE(half, ierr)
  call check(dup == MPI_COMM_NULL .and. half == MPI_COMM_NULL, 17)

  call MPI_ALLREDUCE(errs, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. total == 0) print '(A,I0)', 'PASS f_comm on ', nprocs
  if (rank == 0 .and. total /= 0) print '(A,I0)', 'FAIL f_comm: errors ', total
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
end program f_comm
