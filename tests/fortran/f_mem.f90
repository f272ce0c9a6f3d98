! f_mem: memory MPI allocates, from the module mpi: MPI_ALLOC_MEM with an
! INTEGER(KIND=MPI_ADDRESS_KIND) address (made a Fortran pointer through
! TYPE(C_PTR)) and with a TYPE(C_PTR) (the standard's MPI_ALLOC_MEM_CPTR
! form), MPI_FREE_MEM; MPI_WIN_ALLOCATE's memory written by its owner and
! read by MPI_GET from the next rank; MPI_WIN_ALLOCATE_SHARED on the
! ranks that share memory with MPI_WIN_SHARED_QUERY's address of another
! rank's part; MPI_BUFFER_ATTACH/MPI_BUFFER_DETACH around MPI_BSEND (the
! detached size).  Exit status 0 pass, 1 fail.
program f_mem
  use mpi
  use, intrinsic :: iso_c_binding
  implicit none
  integer, parameter :: n = 100
  integer :: ierr, rank, nprocs, errs, total, i, win, right, left, shm, srank, ssize, du
  integer :: disp_unit, peer, bsize
  integer(kind=MPI_ADDRESS_KIND) :: addr, size, qsize, zero
  type(c_ptr) :: cp
  integer, pointer :: p(:), q(:)
  double precision, pointer :: d(:)
  integer :: got(4), msg(8), msgin(8), bufspace(2000)
  errs = 0
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  right = mod(rank + 1, nprocs)
  left = mod(rank - 1 + nprocs, nprocs)
  zero = 0

  ! MPI_ALLOC_MEM, the address as an integer.
  size = n * 4
  addr = 0
  call MPI_ALLOC_MEM(size, MPI_INFO_NULL, addr, ierr)
  call check(ierr == MPI_SUCCESS .and. addr /= 0, 1)
  call c_f_pointer(transfer(addr, cp), p, [n])
  p = [(i * rank, i = 1, n)]
  call check(sum(p) == rank * n * (n + 1) / 2, 2)
  call MPI_FREE_MEM(p, ierr)
  call check(ierr == MPI_SUCCESS, 3)
  ! and as a TYPE(C_PTR).
  size = n * 8
  cp = c_null_ptr
  call MPI_ALLOC_MEM(size, MPI_INFO_NULL, cp, ierr)
  call check(ierr == MPI_SUCCESS .and. c_associated(cp), 4)
  call c_f_pointer(cp, d, [n])
  d = 0.5d0
  call check(abs(sum(d) - 0.5d0 * n) < 1d-9, 5)
  call MPI_FREE_MEM(d, ierr)

  ! MPI_WIN_ALLOCATE: every rank's 4 integers, read by the next rank.
  size = 4 * 4
  call MPI_WIN_ALLOCATE(size, 4, MPI_INFO_NULL, MPI_COMM_WORLD, addr, win, ierr)
  call check(ierr == MPI_SUCCESS, 6)
  call c_f_pointer(transfer(addr, cp), q, [4])
  q = [rank, 10 * rank, 100 * rank, -rank]
  call MPI_WIN_FENCE(0, win, ierr)
  call MPI_GET(got, 4, MPI_INTEGER, left, zero, 4, MPI_INTEGER, win, ierr)
  call MPI_WIN_FENCE(0, win, ierr)
  call check(all(got == [left, 10 * left, 100 * left, -left]), 7)
  call MPI_WIN_FREE(win, ierr)
  ! and its TYPE(C_PTR) form
  call MPI_WIN_ALLOCATE(size, 4, MPI_INFO_NULL, MPI_COMM_WORLD, cp, win, ierr)
  call check(ierr == MPI_SUCCESS .and. c_associated(cp), 8)
  call MPI_WIN_FREE(win, ierr)

  ! MPI_WIN_ALLOCATE_SHARED among the ranks that share memory.
  call MPI_COMM_SPLIT_TYPE(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, shm, ierr)
  call MPI_COMM_RANK(shm, srank, ierr)
  call MPI_COMM_SIZE(shm, ssize, ierr)
  size = 2 * 4
  call MPI_WIN_ALLOCATE_SHARED(size, 4, MPI_INFO_NULL, shm, addr, win, ierr)
  call check(ierr == MPI_SUCCESS, 9)
  call c_f_pointer(transfer(addr, cp), q, [2])
  call MPI_WIN_FENCE(0, win, ierr)
  q = [srank, 7 * srank]
  call MPI_WIN_FENCE(0, win, ierr)
  peer = mod(srank + 1, ssize)
  call MPI_WIN_SHARED_QUERY(win, peer, qsize, disp_unit, addr, ierr)
  call check(ierr == MPI_SUCCESS .and. qsize == 8 .and. disp_unit == 4, 10)
  call c_f_pointer(transfer(addr, cp), p, [2])
  call check(all(p == [peer, 7 * peer]), 11)
  cp = c_null_ptr
  call MPI_WIN_SHARED_QUERY(win, peer, qsize, du, cp, ierr)
  call check(c_associated(cp) .and. transfer(cp, addr) == addr, 12)
  call MPI_WIN_FENCE(0, win, ierr)
  call MPI_WIN_FREE(win, ierr)
  call MPI_COMM_FREE(shm, ierr)

  ! A buffer for MPI_BSEND, attached and detached.
  call MPI_BUFFER_ATTACH(bufspace, 8000, ierr)
  msg = rank
  call MPI_BSEND(msg, 8, MPI_INTEGER, right, 3, MPI_COMM_WORLD, ierr)
  call MPI_RECV(msgin, 8, MPI_INTEGER, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check(ierr == MPI_SUCCESS .and. all(msgin == left), 13)
  call MPI_BUFFER_DETACH(bufspace, bsize, ierr)
  call check(ierr == MPI_SUCCESS .and. bsize == 8000, 14)

  call MPI_ALLREDUCE(errs, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. total == 0) print '(A,I0)', 'PASS f_mem on ', nprocs
  if (rank == 0 .and. total /= 0) print '(A,I0)', 'FAIL f_mem: errors ', total
  call MPI_FINALIZE(ierr)
  if (total /= 0) stop 1
contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    integer, intent(in) :: what
    if (.not. ok) then
      errs = errs + 1
      print '(A,I0,A,I0)', 'rank ', rank, ': failed check ', what
    end if
  end subroutine check
end program f_mem
