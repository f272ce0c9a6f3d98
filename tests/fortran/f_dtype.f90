! f_dtype: derived datatypes from the module mpi, on Fortran's column-major
! arrays: a row of a matrix with MPI_TYPE_VECTOR, MPI_TYPE_CONTIGUOUS,
! MPI_TYPE_CREATE_SUBARRAY with MPI_ORDER_FORTRAN, a struct of a derived
! type's components built with MPI_GET_ADDRESS and sent from MPI_BOTTOM,
! MPI_TYPE_SIZE, MPI_TYPE_GET_EXTENT (INTEGER(KIND=MPI_ADDRESS_KIND)),
! MPI_TYPE_CREATE_RESIZED, MPI_PACK/MPI_UNPACK, MPI_TYPE_GET_NAME.
! Rank 0 sends to the last rank (to itself when alone: nonblocking, so a
! lone rank does not wait for its own receive).
! Exit status 0 pass, 1 fail.
program f_dtype
  use mpi
  implicit none
  type :: particle
    integer :: id
    double precision :: x(3)
    real :: w
  end type particle
  integer :: ierr, rank, nprocs, errs, total, i, j, last, sz, pos, nlen
  integer :: rowtype, contig, sub, ptype, resized, blocklens(3), types(3)
  integer(kind=MPI_ADDRESS_KIND) :: lb, extent, disps(3), base
  double precision :: a(4, 5), b(5), c(4, 5)
  integer :: cube(4, 4, 4), piece(2, 3, 2)
  type(particle) :: p, q
  character(len=64) :: packbuf
  character(len=MPI_MAX_OBJECT_NAME) :: tname
  integer :: ivals(3), iout(3), req
  errs = 0
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  last = nprocs - 1

  ! Row 2 of a 4x5 matrix: 5 elements, stride 4.
  call MPI_TYPE_VECTOR(5, 1, 4, MPI_DOUBLE_PRECISION, rowtype, ierr)
  call MPI_TYPE_COMMIT(rowtype, ierr)
  call MPI_TYPE_SIZE(rowtype, sz, ierr)
  call check(sz == 5 * 8, 1)
  call MPI_TYPE_GET_EXTENT(rowtype, lb, extent, ierr)
  call check(lb == 0 .and. extent == (4 * 4 + 1) * 8, 2)
  a = reshape([(dble(i), i = 1, 20)], [4, 5])
  if (rank == 0) call MPI_ISEND(a(2, 1), 1, rowtype, last, 1, MPI_COMM_WORLD, req, ierr)
  if (rank == last) then
    call MPI_RECV(b, 5, MPI_DOUBLE_PRECISION, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call check(all(nint(b) == [(nint(a(2, j)), j = 1, 5)]), 3)
  end if
  if (rank == 0) call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)

  ! Two columns at once: contiguous in Fortran.
  call MPI_TYPE_CONTIGUOUS(8, MPI_DOUBLE_PRECISION, contig, ierr)
  call MPI_TYPE_COMMIT(contig, ierr)
  c = 0
  if (rank == 0) call MPI_ISEND(a(1, 3), 1, contig, last, 2, MPI_COMM_WORLD, req, ierr)
  if (rank == last) then
    call MPI_RECV(c(1, 3), 1, contig, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call check(all(nint(c(:, 3:4)) == nint(a(:, 3:4))) .and. all(nint(c(:, 1:2)) == 0), 4)
  end if
  if (rank == 0) call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)

  ! A 2x3x2 block of a 4x4x4 cube at (2,1,3) (1-based), Fortran order.
  cube = reshape([(i, i = 1, 64)], [4, 4, 4])
  call MPI_TYPE_CREATE_SUBARRAY(3, [4, 4, 4], [2, 3, 2], [1, 0, 2], MPI_ORDER_FORTRAN, &
                                MPI_INTEGER, sub, ierr)
  call MPI_TYPE_COMMIT(sub, ierr)
  if (rank == 0) call MPI_ISEND(cube, 1, sub, last, 3, MPI_COMM_WORLD, req, ierr)
  if (rank == last) then
    call MPI_RECV(piece, 12, MPI_INTEGER, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call check(all(piece == cube(2:3, 1:3, 3:4)), 5)
  end if
  if (rank == 0) call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)

  ! A derived type's components, by absolute address from MPI_BOTTOM.
  p%id = 42 + rank
  p%x = [1.5d0, 2.5d0, 3.5d0]
  p%w = 0.25
  call MPI_GET_ADDRESS(q%id, disps(1), ierr)
  call MPI_GET_ADDRESS(q%x, disps(2), ierr)
  call MPI_GET_ADDRESS(q%w, disps(3), ierr)
  call MPI_GET_ADDRESS(q, base, ierr)
  disps = disps - base  ! relative to the start of the type
  blocklens = [1, 3, 1]
  types = [MPI_INTEGER, MPI_DOUBLE_PRECISION, MPI_REAL]
  call MPI_TYPE_CREATE_STRUCT(3, blocklens, disps, types, ptype, ierr)
  call MPI_TYPE_CREATE_RESIZED(ptype, 0_MPI_ADDRESS_KIND, int(storage_size(p) / 8, MPI_ADDRESS_KIND), &
                               resized, ierr)
  call MPI_TYPE_COMMIT(resized, ierr)
  call MPI_TYPE_GET_EXTENT(resized, lb, extent, ierr)
  call check(extent * 8 == storage_size(p), 6)
  if (rank == 0) then
    call MPI_GET_ADDRESS(p, base, ierr)
    block
      integer :: abstype
      integer(kind=MPI_ADDRESS_KIND) :: absd(3)
      call MPI_GET_ADDRESS(p%id, absd(1), ierr)
      call MPI_GET_ADDRESS(p%x, absd(2), ierr)
      call MPI_GET_ADDRESS(p%w, absd(3), ierr)
      call MPI_TYPE_CREATE_STRUCT(3, blocklens, absd, types, abstype, ierr)
      call MPI_TYPE_COMMIT(abstype, ierr)
      call MPI_ISEND(MPI_BOTTOM, 1, abstype, last, 4, MPI_COMM_WORLD, req, ierr)
      call MPI_TYPE_FREE(abstype, ierr)
    end block
  end if
  if (rank == last) then
    q%id = -1
    q%x = 0
    q%w = 0
    call MPI_RECV(q, 1, resized, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call check(q%id == 42 .and. nint(q%x(3) * 2) == 7 .and. nint(q%w * 4) == 1, 7)
  end if
  if (rank == 0) call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)

  ! MPI_PACK and MPI_UNPACK through a CHARACTER buffer.
  ivals = [7, 8, 9]
  pos = 0
  call MPI_PACK(ivals, 3, MPI_INTEGER, packbuf, len(packbuf), pos, MPI_COMM_WORLD, ierr)
  call MPI_PACK(a(1, 1), 1, MPI_DOUBLE_PRECISION, packbuf, len(packbuf), pos, MPI_COMM_WORLD, ierr)
  call check(pos >= 3 * 4 + 8, 8)
  pos = 0
  call MPI_UNPACK(packbuf, len(packbuf), pos, iout, 3, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call MPI_UNPACK(packbuf, len(packbuf), pos, b, 1, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
  call check(all(iout == ivals) .and. nint(b(1)) == 1, 9)

  call MPI_TYPE_GET_NAME(MPI_DOUBLE_PRECISION, tname, nlen, ierr)
  call check(tname == 'MPI_DOUBLE_PRECISION' .and. nlen == 20, 10)

  call MPI_TYPE_FREE(rowtype, ierr)
  call MPI_TYPE_FREE(contig, ierr)
  call MPI_TYPE_FREE(sub, ierr)
  call MPI_TYPE_FREE(ptype, ierr)
  call MPI_TYPE_FREE(resized, ierr)
  call check(rowtype == MPI_DATATYPE_NULL .and. resized == MPI_DATATYPE_NULL, 11)

  call MPI_ALLREDUCE(errs, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. total == 0) print '(A,I0)', 'PASS f_dtype on ', nprocs
  if (rank == 0 .and. total /= 0) print '(A,I0)', 'FAIL f_dtype: errors ', total
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
end program f_dtype
