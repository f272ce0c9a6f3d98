! f08_spawn: dynamic processes through the module mpi_f08: the program
! spawns itself from rank 0 of MPI_COMM_WORLD with MPI_Comm_spawn (an
! argument vector ended by a blank entry, MPI_ERRCODES_IGNORE) and
! MPI_Comm_spawn_multiple (two commands, MPI_ARGVS_NULL, an array of error
! codes); the children check their arguments and MPI_APPNUM, and report
! their failures to the parents over the intercommunicator.  Exit status
! 0 pass, 1 fail.
program f08_spawn
  use mpi_f08
  implicit none
  integer :: errs
  type(MPI_Comm) :: parent
  character(len=512) :: me
  errs = 0
  call MPI_Init()
  call MPI_Comm_get_parent(parent)
  call get_command_argument(0, me)
  if (parent /= MPI_COMM_NULL) then
    call child(parent)
  else
    call parents(trim(me))
  end if
contains
  subroutine parents(me)
    character(len=*), intent(in) :: me
    integer :: rank, nprocs, rsize, got, total, cerrs, ierr, codes(3)
    type(MPI_Comm) :: inter
    character(len=8) :: argv(4)
    character(len=512) :: cmds(2)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
    cerrs = 0
    argv = [character(len=8) :: 'one', 'f08', 'x', ' ']
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
    call MPI_Comm_spawn(me, argv, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter, MPI_ERRCODES_IGNORE, ierr)
    call unavailable(ierr)
    call check(ierr == MPI_SUCCESS, 1)
    call talk(inter, 1, got)
    cerrs = cerrs + got

    cmds = me
    codes = -1
    call MPI_Comm_spawn_multiple(2, cmds, MPI_ARGVS_NULL, [2, 1], [MPI_INFO_NULL, MPI_INFO_NULL], 0, &
                                 MPI_COMM_WORLD, inter, codes, ierr)
    call check(ierr == MPI_SUCCESS .and. all(codes == MPI_SUCCESS), 2)
    call MPI_Comm_remote_size(inter, rsize)
    call check(rsize == 3, 3)
    call talk(inter, 6, got)
    cerrs = cerrs + got

    call check(cerrs == 0, 4)
    call MPI_Allreduce(errs, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    if (rank == 0 .and. total == 0) print '(A,I0)', 'PASS f08_spawn on ', nprocs
    if (rank == 0 .and. total /= 0) print '(A,I0)', 'FAIL f08_spawn: errors ', total
    call MPI_Finalize()
    if (total /= 0) stop 1
  end subroutine parents

  subroutine talk(inter, want, cerrs)
    type(MPI_Comm), intent(inout) :: inter
    integer, intent(in) :: want
    integer, intent(out) :: cerrs
    integer :: sum
    call MPI_Allreduce(1, sum, 1, MPI_INTEGER, MPI_SUM, inter)
    call check(sum == want, 10)
    call MPI_Allreduce(0, cerrs, 1, MPI_INTEGER, MPI_SUM, inter)
    call MPI_Comm_disconnect(inter)
  end subroutine talk

  subroutine child(parent)
    type(MPI_Comm), intent(inout) :: parent
    integer :: rank, size, psize, sum, appnum
    integer(kind=MPI_ADDRESS_KIND) :: val
    logical :: flag
    character(len=16) :: a1, a2, a3
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, size)
    call MPI_Comm_remote_size(parent, psize)
    call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, val, flag)
    appnum = -1
    if (flag) appnum = int(val)
    if (command_argument_count() > 0) then
      call get_command_argument(1, a1)
      call get_command_argument(2, a2)
      call get_command_argument(3, a3)
      call check(command_argument_count() == 3 .and. a1 == 'one' .and. a2 == 'f08' .and. &
                 a3 == 'x' .and. size == 1, 20)
    else
      ! spawn_multiple: ranks 0 and 1 run command 1, rank 2 command 2
      call check(size == 3 .and. appnum == merge(0, 1, rank < 2), 21)
    end if
    call MPI_Allreduce(rank + 1, sum, 1, MPI_INTEGER, MPI_SUM, parent)
    call check(sum == psize, 22)
    call MPI_Allreduce(errs, sum, 1, MPI_INTEGER, MPI_SUM, parent)
    call MPI_Comm_disconnect(parent)
    call MPI_Finalize()
  end subroutine child

  ! Exit 77 (skip) when an MPI other than BDMPI cannot spawn here.
  subroutine unavailable(rc)
    integer, intent(in) :: rc
    integer :: n, rank
    character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: lib
    call MPI_Get_library_version(lib, n)
    if (rc == MPI_SUCCESS .or. index(lib, 'BDMPI') > 0) return
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    if (rank == 0) print '(A,I0,A)', 'SKIP f08_spawn: this MPI cannot create processes here (error ', rc, ')'
    call MPI_Finalize()
    stop 77
  end subroutine unavailable

  subroutine check(ok, what)
    logical, intent(in) :: ok
    integer, intent(in) :: what
    if (.not. ok) then
      errs = errs + 1
      print '(A,I0)', 'f08_spawn: failed check ', what
    end if
  end subroutine check
end program f08_spawn
