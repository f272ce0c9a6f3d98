! f_spawn: dynamic processes from the module mpi (MPI 4.0 11.8): the
! program spawns itself three times from rank 0 of MPI_COMM_WORLD.
!  1. MPI_COMM_SPAWN with an argument vector ('child', 'two words', then a
!     blank entry that ends it) and an array of error codes: two children
!     see those arguments and a world of 2;
!  2. MPI_COMM_SPAWN_MULTIPLE of two commands whose arguments are the rows
!     of ARRAY_OF_ARGV(2, *) ('multi' 'a' / 'multi' 'b'), one process each,
!     MPI_ERRCODES_IGNORE: each child's MPI_APPNUM matches its argument;
!  3. MPI_COMM_SPAWN with MPI_ARGV_NULL: the child gets no arguments.
! Each time parents and children check the intercommunicator with
! MPI_ALLREDUCE both ways, the children's failures are summed into the
! parents' verdict, and both sides disconnect.  Exit status 0 pass, 1 fail.
program f_spawn
  use mpi
  implicit none
  integer :: ierr, parent, errs
  character(len=512) :: me
  errs = 0
  call MPI_INIT(ierr)
  call MPI_COMM_GET_PARENT(parent, ierr)
  call get_command_argument(0, me)
  if (parent /= MPI_COMM_NULL) then
    call child(parent)
  else
    call parents(trim(me))
  end if
contains
  subroutine parents(me)
    character(len=*), intent(in) :: me
    integer :: rank, nprocs, inter, codes(2), rsize, got, total, cerrs
    character(len=16) :: argv(3), argvs(2, 3)
    character(len=512) :: cmds(2)
    integer :: maxprocs(2), infos(2)
    call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
    call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
    cerrs = 0

    argv(1) = 'child'
    argv(2) = 'two words'
    argv(3) = ' '
    codes = -1
    call MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
    call MPI_COMM_SPAWN(me, argv, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter, codes, ierr)
    call unavailable(ierr)
    call check(ierr == MPI_SUCCESS .and. all(codes == MPI_SUCCESS), 1)
    call MPI_COMM_REMOTE_SIZE(inter, rsize, ierr)
    call check(rsize == 2, 2)
    call talk(inter, 3, got)
    cerrs = cerrs + got

    cmds = me
    argvs(1, :) = [character(len=16) :: 'multi', 'a', ' ']
    argvs(2, :) = [character(len=16) :: 'multi', 'b', ' ']
    maxprocs = 1
    infos = MPI_INFO_NULL
    call MPI_COMM_SPAWN_MULTIPLE(2, cmds, argvs, maxprocs, infos, 0, MPI_COMM_WORLD, inter, &
                                 MPI_ERRCODES_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS, 3)
    call MPI_COMM_REMOTE_SIZE(inter, rsize, ierr)
    call check(rsize == 2, 4)
    call talk(inter, 3, got)
    cerrs = cerrs + got

    call MPI_COMM_SPAWN(me, MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter, &
                        MPI_ERRCODES_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS, 5)
    call talk(inter, 1, got)
    cerrs = cerrs + got

    call check(cerrs == 0, 6)
    call MPI_ALLREDUCE(errs, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (rank == 0 .and. total == 0) print '(A,I0)', 'PASS f_spawn on ', nprocs
    if (rank == 0 .and. total /= 0) print '(A,I0)', 'FAIL f_spawn: errors ', total
    call MPI_FINALIZE(ierr)
    if (total /= 0) stop 1
  end subroutine parents

  ! Parents' side of one spawn: the children's ranks + 1 add up to
  ! want; returns the children's failures.  Then disconnect.
  subroutine talk(inter, want, cerrs)
    integer, intent(in) :: inter, want
    integer, intent(out) :: cerrs
    integer :: one, sum, zero
    one = 1
    call MPI_ALLREDUCE(one, sum, 1, MPI_INTEGER, MPI_SUM, inter, ierr)
    call check(sum == want, 10)
    zero = 0
    call MPI_ALLREDUCE(zero, cerrs, 1, MPI_INTEGER, MPI_SUM, inter, ierr)
    call MPI_COMM_DISCONNECT(inter, ierr)
  end subroutine talk

  subroutine child(parent)
    integer, intent(inout) :: parent
    integer :: rank, size, psize, mine, sum, appnum, cerrs
    integer(kind=MPI_ADDRESS_KIND) :: val
    logical :: flag
    character(len=64) :: a1, a2
    call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
    call MPI_COMM_SIZE(MPI_COMM_WORLD, size, ierr)
    call MPI_COMM_REMOTE_SIZE(parent, psize, ierr)
    a1 = ' '
    a2 = ' '
    if (command_argument_count() >= 1) call get_command_argument(1, a1)
    if (command_argument_count() >= 2) call get_command_argument(2, a2)
    if (a1 == 'child') then
      call check(size == 2 .and. command_argument_count() == 2 .and. a2 == 'two words', 20)
    else if (a1 == 'multi') then
      call MPI_COMM_GET_ATTR(MPI_COMM_WORLD, MPI_APPNUM, val, flag, ierr)
      appnum = -1
      if (flag) appnum = int(val)
      call check(size == 2 .and. command_argument_count() == 2, 21)
      call check((a2 == 'a' .and. appnum == 0) .or. (a2 == 'b' .and. appnum == 1), 22)
    else
      call check(size == 1 .and. command_argument_count() == 0, 23)
    end if
    mine = rank + 1
    call MPI_ALLREDUCE(mine, sum, 1, MPI_INTEGER, MPI_SUM, parent, ierr)
    call check(sum == psize, 24)
    cerrs = errs
    call MPI_ALLREDUCE(cerrs, sum, 1, MPI_INTEGER, MPI_SUM, parent, ierr)
    call MPI_COMM_DISCONNECT(parent, ierr)
    call MPI_FINALIZE(ierr)
  end subroutine child

  ! Exit 77 (skip) when an MPI other than BDMPI cannot spawn here (MPICH
  ! under a launcher that cannot add processes).
  subroutine unavailable(rc)
    integer, intent(in) :: rc
    integer :: n, rank, code, e
    character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: lib
    code = rc   ! (rc may be the host's ierr, which the calls below set)
    call MPI_GET_LIBRARY_VERSION(lib, n, e)
    if (code == MPI_SUCCESS .or. index(lib, 'BDMPI') > 0) return
    call MPI_COMM_RANK(MPI_COMM_WORLD, rank, e)
    if (rank == 0) print '(A,I0,A)', 'SKIP f_spawn: this MPI cannot create processes here (error ', code, ')'
    call MPI_FINALIZE(e)
    stop 77
  end subroutine unavailable

  subroutine check(ok, what)
    logical, intent(in) :: ok
    integer, intent(in) :: what
    if (.not. ok) then
      errs = errs + 1
      print '(A,I0)', 'f_spawn: failed check ', what
    end if
  end subroutine check
end program f_spawn
