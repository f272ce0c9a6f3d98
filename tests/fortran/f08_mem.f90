! f08_mem: memory MPI allocates, through the module mpi_f08, where the
! addresses are TYPE(C_PTR): MPI_Alloc_mem and MPI_Free_mem,
! MPI_Win_allocate's memory read by MPI_Get from the next rank,
! MPI_Win_allocate_shared with MPI_Win_shared_query's address of another
! rank's part, MPI_Buffer_detach returning the attached buffer's address
! and size.  Exit status 0 pass, 1 fail.
program f08_mem
  use mpi_f08
  use, intrinsic :: iso_c_binding
  implicit none
  integer, parameter :: n = 64
  integer :: ierr, rank, nprocs, errs, total, i, left, right, srank, ssize, peer, disp_unit, bsize
  integer(kind=MPI_ADDRESS_KIND) :: size, qsize, addr
  type(MPI_Win) :: win
  type(MPI_Comm) :: shm
  type(c_ptr) :: cp, cq
  integer, pointer :: p(:), q(:)
  integer :: got(4), msg(4), msgin(4)
  integer :: bufspace(1000)
  errs = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  right = mod(rank + 1, nprocs)
  left = mod(rank - 1 + nprocs, nprocs)

  size = n * 4
  cp = c_null_ptr
  call MPI_Alloc_mem(size, MPI_INFO_NULL, cp, ierr)
  call check(ierr == MPI_SUCCESS .and. c_associated(cp), 1)
  call c_f_pointer(cp, p, [n])
  p = [(i + rank, i = 1, n)]
  call check(sum(p) == n * (n + 1) / 2 + n * rank, 2)
  call MPI_Free_mem(p, ierr)
  call check(ierr == MPI_SUCCESS, 3)

  size = 4 * 4
  call MPI_Win_allocate(size, 4, MPI_INFO_NULL, MPI_COMM_WORLD, cp, win, ierr)
  call check(ierr == MPI_SUCCESS .and. c_associated(cp), 4)
  call c_f_pointer(cp, q, [4])
  q = [rank, rank * rank, 5, -rank]
  call MPI_Win_fence(0, win)
  call MPI_Get(got, 4, MPI_INTEGER, right, 0_MPI_ADDRESS_KIND, 4, MPI_INTEGER, win)
  call MPI_Win_fence(0, win)
  call check(all(got == [right, right * right, 5, -right]), 5)
  call MPI_Win_free(win)

  call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, shm)
  call MPI_Comm_rank(shm, srank)
  call MPI_Comm_size(shm, ssize)
  size = 4
  call MPI_Win_allocate_shared(size, 4, MPI_INFO_NULL, shm, cp, win, ierr)
  call check(ierr == MPI_SUCCESS .and. c_associated(cp), 6)
  call c_f_pointer(cp, q, [1])
  call MPI_Win_fence(0, win)
  q(1) = 1000 + srank
  call MPI_Win_fence(0, win)
  peer = mod(srank + ssize - 1, ssize)
  call MPI_Win_shared_query(win, peer, qsize, disp_unit, cq)
  call check(qsize == 4 .and. disp_unit == 4 .and. c_associated(cq), 7)
  call c_f_pointer(cq, p, [1])
  call check(p(1) == 1000 + peer, 8)
  call MPI_Win_fence(0, win)
  call MPI_Win_free(win)
  call MPI_Comm_free(shm)

  call MPI_Buffer_attach(bufspace, 4000)
  msg = [1, 2, 3, rank]
  call MPI_Bsend(msg, 4, MPI_INTEGER, right, 9, MPI_COMM_WORLD)
  call MPI_Recv(msgin, 4, MPI_INTEGER, left, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  call check(all(msgin == [1, 2, 3, left]), 9)
  call MPI_Buffer_detach(cp, bsize, ierr)
  ! (The address as MPI_Get_address gives it: Fortran lets the compiler
  ! assume no pointer to bufspace outlived MPI_Buffer_attach, so a direct
  ! comparison with C_LOC(bufspace) may be folded to false.)
  call MPI_Get_address(bufspace, addr)
  call check(ierr == MPI_SUCCESS .and. bsize == 4000 .and. transfer(cp, addr) == addr, 10)

  call MPI_Allreduce(errs, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0 .and. total == 0) print '(A,I0)', 'PASS f08_mem on ', nprocs
  if (rank == 0 .and. total /= 0) print '(A,I0)', 'FAIL f08_mem: errors ', total
  call MPI_Finalize()
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
end program f08_mem
