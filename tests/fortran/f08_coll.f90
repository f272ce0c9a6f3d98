! f08_coll: collectives and derived types through the module mpi_f08:
! MPI_Bcast, MPI_Allreduce with MPI_IN_PLACE, MPI_Gather, MPI_Scan, a
! user-defined operation written as the standard's BIND(C) MPI_User_function
! (not commutative), a column type with MPI_Type_vector, MPI_Cart_create
! with LOGICAL periods, names, MPI_ERRORS_RETURN.  Exit status 0 pass, 1 fail.
module f08_coll_ops
  use mpi_f08
  use, intrinsic :: iso_c_binding
  implicit none
contains
  ! Affine maps x -> a*x + b as MPI_2INTEGER pairs: inoutvec becomes
  ! "invec, then inoutvec".  Associative, not commutative.
  subroutine compose(invec, inoutvec, len, datatype) bind(C)
    type(c_ptr), value :: invec, inoutvec
    integer(c_int) :: len
    type(MPI_Datatype) :: datatype
    integer(c_int), pointer :: a(:, :), b(:, :)
    integer :: i
    if (datatype /= MPI_2INTEGER) return
    call c_f_pointer(invec, a, [2, len])
    call c_f_pointer(inoutvec, b, [2, len])
    do i = 1, len
      b(2, i) = b(1, i) * a(2, i) + b(2, i)
      b(1, i) = b(1, i) * a(1, i)
    end do
  end subroutine compose
end module f08_coll_ops

program f08_coll
  use mpi_f08
  use f08_coll_ops
  implicit none
  integer :: ierr, rank, nprocs, errs, total, i, want, scanned, nlen, src, dst
  integer :: pair(2), res(2), grid(3, 4), col(3), rowin(4)
  integer, allocatable :: vals(:)
  type(MPI_Op) :: op
  type(MPI_Datatype) :: rowtype
  type(MPI_Comm) :: cart
  character(len=MPI_MAX_OBJECT_NAME) :: name
  errs = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  allocate(vals(nprocs))

  grid = 0
  if (rank == 0) grid = reshape([(i, i = 1, 12)], [3, 4])
  call MPI_Bcast(grid, 12, MPI_INTEGER, 0, MPI_COMM_WORLD)
  call check(grid(3, 4) == 12 .and. grid(1, 2) == 4, 1)

  col = rank
  call MPI_Allreduce(MPI_IN_PLACE, col, 3, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD)
  call check(all(col == nprocs - 1), 2)
  call MPI_Gather(rank * 3, 1, MPI_INTEGER, vals, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
  if (rank == 0) call check(all(vals == [(3 * i, i = 0, nprocs - 1)]), 3)
  call MPI_Scan(1, scanned, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call check(scanned == rank + 1, 4)

  call MPI_Op_create(compose, .false., op)
  pair = [2, rank + 1]
  call MPI_Reduce(pair, res, 1, MPI_2INTEGER, op, 0, MPI_COMM_WORLD)
  if (rank == 0) then
    want = 0
    do i = 0, nprocs - 1
      want = 2 * want + i + 1
    end do
    call check(res(1) == 2**nprocs .and. res(2) == want, 5)
  end if
  call MPI_Op_free(op)
  call check(op == MPI_OP_NULL, 6)

  ! Row 2 of the 3x4 grid (stride 3), to the next rank.
  call MPI_Type_vector(4, 1, 3, MPI_INTEGER, rowtype)
  call MPI_Type_commit(rowtype)
  call MPI_Cart_create(MPI_COMM_WORLD, 1, [nprocs], [.true.], .false., cart)
  call MPI_Cart_shift(cart, 0, 1, src, dst)
  call check(src == mod(rank - 1 + nprocs, nprocs) .and. dst == mod(rank + 1, nprocs), 7)
  grid(2, :) = grid(2, :) + 100 * rank
  call MPI_Sendrecv(grid(2, 1), 1, rowtype, dst, 0, rowin, 4, MPI_INTEGER, src, 0, cart, &
                    MPI_STATUS_IGNORE)
  call check(all(rowin == [2, 5, 8, 11] + 100 * src), 8)
  call MPI_Type_free(rowtype)
  call check(rowtype == MPI_DATATYPE_NULL, 9)
  call MPI_Comm_set_name(cart, 'torus')
  call MPI_Comm_get_name(cart, name, nlen)
  call check(name == 'torus' .and. nlen == 5, 10)

  call MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN)
  call MPI_Send(rank, 1, MPI_INTEGER, nprocs + 3, 0, cart, ierr)
  call check(ierr /= MPI_SUCCESS, 11)
  call MPI_Comm_free(cart)

  call MPI_Allreduce(errs, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0 .and. total == 0) print '(A,I0)', 'PASS f08_coll on ', nprocs
  if (rank == 0 .and. total /= 0) print '(A,I0)', 'FAIL f08_coll: errors ', total
  call MPI_Finalize()
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
end program f08_coll
