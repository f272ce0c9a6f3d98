! f_attr: attribute caching from the module mpi (MPI 4.0 7.7).  Keyvals
! whose copy and delete procedures are written in Fortran, with an extra
! state: on communicators (MPI_COMM_CREATE_KEYVAL, _SET_ATTR, _GET_ATTR,
! _DELETE_ATTR; MPI_COMM_DUP calls the copy procedure, MPI_COMM_FREE and a
! replacing _SET_ATTR the delete procedure), on datatypes (MPI_TYPE_DUP) and
! on windows; a copy procedure's error fails MPI_COMM_DUP; the predefined
! procedures MPI_COMM_DUP_FN, MPI_COMM_NULL_COPY_FN, MPI_TYPE_DUP_FN,
! MPI_WIN_NULL_COPY_FN, MPI_*_NULL_DELETE_FN; the predefined attributes'
! values (MPI_TAG_UB, MPI_LASTUSEDCODE after MPI_ADD_ERROR_CLASS/_CODE,
! MPI_WIN_SIZE, MPI_WIN_DISP_UNIT, MPI_WIN_BASE = MPI_GET_ADDRESS of the
! memory, MPI_WIN_CREATE_FLAVOR); the deprecated MPI-1 MPI_KEYVAL_CREATE,
! MPI_ATTR_PUT, MPI_ATTR_GET with INTEGER values, a Fortran copy procedure
! and MPI_DUP_FN.  Exit status 0 pass, 1 fail.
module f_attr_cb
  use mpi
  implicit none
  integer :: ncopy = 0, ndelete = 0, ncopy1 = 0
  integer(kind=MPI_ADDRESS_KIND) :: seen_extra = -1, last_deleted = -1
contains
  ! Copies the value plus one (handles are INTEGERs here, so one
  ! procedure serves communicators, datatypes and windows).
  subroutine copy_plus1(oldobj, keyval, extra_state, val_in, val_out, flag, ierr)
    integer :: oldobj, keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: extra_state, val_in, val_out
    logical :: flag
    ncopy = ncopy + 1
    seen_extra = extra_state
    val_out = val_in + 1
    flag = .true.
    ierr = MPI_SUCCESS
  end subroutine copy_plus1

  subroutine delete_count(obj, keyval, val, extra_state, ierr)
    integer :: obj, keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: val, extra_state
    ndelete = ndelete + 1
    last_deleted = val
    seen_extra = extra_state
    ierr = MPI_SUCCESS
  end subroutine delete_count

  subroutine copy_fails(oldobj, keyval, extra_state, val_in, val_out, flag, ierr)
    integer :: oldobj, keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: extra_state, val_in, val_out
    logical :: flag
    flag = .false.
    ierr = MPI_ERR_OTHER
  end subroutine copy_fails

  ! MPI-1: INTEGER values.
  subroutine copy1_times2(oldcomm, keyval, extra_state, val_in, val_out, flag, ierr)
    integer :: oldcomm, keyval, extra_state, val_in, val_out, ierr
    logical :: flag
    ncopy1 = ncopy1 + extra_state
    val_out = 2 * val_in
    flag = .true.
    ierr = MPI_SUCCESS
  end subroutine copy1_times2
end module f_attr_cb

program f_attr
  use mpi
  use f_attr_cb
  implicit none
  integer :: ierr, rank, nprocs, errs, total
  integer :: key, key2, key3, tkey, wkey, okey, okey2, c1, c2, c3, c4, t1, t2, win, cls, ival
  integer(kind=MPI_ADDRESS_KIND) :: val, base, extra
  logical :: flag
  integer :: wbuf(10)
  errs = 0
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  call MPI_COMM_DUP(MPI_COMM_WORLD, c1, ierr)

  ! A communicator keyval with Fortran procedures and an extra state.
  extra = 777
  call MPI_COMM_CREATE_KEYVAL(copy_plus1, delete_count, key, extra, ierr)
  call check(ierr == MPI_SUCCESS .and. key /= MPI_KEYVAL_INVALID, 1)
  call MPI_COMM_GET_ATTR(c1, key, val, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. .not. flag, 2)
  val = 1000 + rank
  call MPI_COMM_SET_ATTR(c1, key, val, ierr)
  val = -1
  call MPI_COMM_GET_ATTR(c1, key, val, flag, ierr)
  call check(flag .and. val == 1000 + rank, 3)
  call MPI_COMM_DUP(c1, c2, ierr)
  call check(ncopy == 1 .and. seen_extra == 777, 4)
  call MPI_COMM_GET_ATTR(c2, key, val, flag, ierr)
  call check(flag .and. val == 1001 + rank, 5)
  val = 5
  call MPI_COMM_SET_ATTR(c1, key, val, ierr)   ! replaces: the old value is deleted
  call check(ndelete == 1 .and. last_deleted == 1000 + rank, 6)
  call MPI_COMM_DELETE_ATTR(c1, key, ierr)
  call check(ndelete == 2 .and. last_deleted == 5, 7)
  call MPI_COMM_GET_ATTR(c1, key, val, flag, ierr)
  call check(.not. flag, 8)
  call MPI_COMM_FREE(c2, ierr)
  call check(ndelete == 3 .and. last_deleted == 1001 + rank, 9)
  call MPI_COMM_FREE_KEYVAL(key, ierr)
  call check(key == MPI_KEYVAL_INVALID, 10)

  ! The predefined procedures: copied as is, or not at all.
  call MPI_COMM_CREATE_KEYVAL(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, key2, 0_MPI_ADDRESS_KIND, ierr)
  call MPI_COMM_CREATE_KEYVAL(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, key3, &
                              0_MPI_ADDRESS_KIND, ierr)
  val = 42
  call MPI_COMM_SET_ATTR(c1, key2, val, ierr)
  call MPI_COMM_SET_ATTR(c1, key3, val, ierr)
  call MPI_COMM_DUP(c1, c3, ierr)
  val = 0
  call MPI_COMM_GET_ATTR(c3, key2, val, flag, ierr)
  call check(flag .and. val == 42, 11)
  call MPI_COMM_GET_ATTR(c3, key3, val, flag, ierr)
  call check(.not. flag, 12)
  call MPI_COMM_FREE(c3, ierr)

  ! A copy procedure's error fails the duplication.
  call MPI_COMM_SET_ERRHANDLER(c1, MPI_ERRORS_RETURN, ierr)
  call MPI_COMM_CREATE_KEYVAL(copy_fails, MPI_COMM_NULL_DELETE_FN, key, 0_MPI_ADDRESS_KIND, ierr)
  call MPI_COMM_SET_ATTR(c1, key, val, ierr)
  c4 = MPI_COMM_NULL
  call MPI_COMM_DUP(c1, c4, ierr)
  call check(ierr /= MPI_SUCCESS, 13)
  if (ierr == MPI_SUCCESS) call MPI_COMM_FREE(c4, ierr)
  call MPI_COMM_DELETE_ATTR(c1, key, ierr)
  call MPI_COMM_FREE_KEYVAL(key, ierr)

  ! Datatypes.
  ncopy = 0
  ndelete = 0
  call MPI_TYPE_CONTIGUOUS(2, MPI_INTEGER, t1, ierr)
  call MPI_TYPE_CREATE_KEYVAL(copy_plus1, delete_count, tkey, 31_MPI_ADDRESS_KIND, ierr)
  val = 10
  call MPI_TYPE_SET_ATTR(t1, tkey, val, ierr)
  call MPI_TYPE_DUP(t1, t2, ierr)
  call check(ncopy == 1 .and. seen_extra == 31, 14)
  call MPI_TYPE_GET_ATTR(t2, tkey, val, flag, ierr)
  call check(flag .and. val == 11, 15)
  call MPI_TYPE_FREE(t2, ierr)
  call check(ndelete == 1 .and. last_deleted == 11, 16)
  call MPI_TYPE_DELETE_ATTR(t1, tkey, ierr)
  call MPI_TYPE_GET_ATTR(t1, tkey, val, flag, ierr)
  call check(.not. flag .and. ndelete == 2, 17)
  call MPI_TYPE_FREE_KEYVAL(tkey, ierr)
  call MPI_TYPE_CREATE_KEYVAL(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, tkey, 0_MPI_ADDRESS_KIND, ierr)
  val = 9
  call MPI_TYPE_SET_ATTR(t1, tkey, val, ierr)
  call MPI_TYPE_DUP(t1, t2, ierr)
  call MPI_TYPE_GET_ATTR(t2, tkey, val, flag, ierr)
  call check(flag .and. val == 9, 18)
  call MPI_TYPE_FREE(t2, ierr)
  call MPI_TYPE_FREE(t1, ierr)
  call MPI_TYPE_FREE_KEYVAL(tkey, ierr)

  ! Windows: the predefined attributes' values, and a keyval.
  call MPI_WIN_CREATE(wbuf, 40_MPI_ADDRESS_KIND, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call MPI_WIN_GET_ATTR(win, MPI_WIN_SIZE, val, flag, ierr)
  call check(flag .and. val == 40, 19)
  call MPI_WIN_GET_ATTR(win, MPI_WIN_DISP_UNIT, val, flag, ierr)
  call check(flag .and. val == 4, 20)
  call MPI_GET_ADDRESS(wbuf, base, ierr)
  call MPI_WIN_GET_ATTR(win, MPI_WIN_BASE, val, flag, ierr)
  call check(flag .and. val == base, 21)
  call MPI_WIN_GET_ATTR(win, MPI_WIN_CREATE_FLAVOR, val, flag, ierr)
  call check(flag .and. val == MPI_WIN_FLAVOR_CREATE, 22)
  ndelete = 0
  call MPI_WIN_CREATE_KEYVAL(MPI_WIN_NULL_COPY_FN, delete_count, wkey, 5_MPI_ADDRESS_KIND, ierr)
  val = 300 + rank
  call MPI_WIN_SET_ATTR(win, wkey, val, ierr)
  call MPI_WIN_GET_ATTR(win, wkey, val, flag, ierr)
  call check(flag .and. val == 300 + rank, 23)
  call MPI_WIN_FREE(win, ierr)
  call check(ndelete == 1 .and. last_deleted == 300 + rank .and. seen_extra == 5, 24)
  call MPI_WIN_FREE_KEYVAL(wkey, ierr)

  ! Predefined attributes of communicators are values in Fortran.
  call MPI_COMM_GET_ATTR(MPI_COMM_WORLD, MPI_TAG_UB, val, flag, ierr)
  call check(flag .and. val >= 32767, 25)
  ! MPI_LASTUSEDCODE is a value too (it was the C attribute's address): an
  ! error code or class of the class just added.
  call MPI_ADD_ERROR_CLASS(cls, ierr)
  call MPI_ADD_ERROR_CODE(cls, ival, ierr)
  call MPI_COMM_GET_ATTR(MPI_COMM_WORLD, MPI_LASTUSEDCODE, val, flag, ierr)
  call check(flag .and. val >= cls, 26)
  if (flag .and. val >= cls .and. val <= huge(ival)) then
    call MPI_ERROR_CLASS(int(val), ival, ierr)
    call check(ierr == MPI_SUCCESS .and. ival == cls, 32)
  end if

  ! The deprecated MPI-1 interface: INTEGER values.
  call MPI_KEYVAL_CREATE(MPI_DUP_FN, MPI_NULL_DELETE_FN, okey, 0, ierr)
  call MPI_KEYVAL_CREATE(copy1_times2, MPI_NULL_DELETE_FN, okey2, 3, ierr)
  call MPI_ATTR_PUT(c1, okey, 123, ierr)
  call MPI_ATTR_PUT(c1, okey2, 50 + rank, ierr)
  call MPI_ATTR_GET(c1, okey, ival, flag, ierr)
  call check(flag .and. ival == 123, 27)
  call MPI_COMM_DUP(c1, c2, ierr)
  call MPI_ATTR_GET(c2, okey, ival, flag, ierr)
  call check(flag .and. ival == 123, 28)
  call MPI_ATTR_GET(c2, okey2, ival, flag, ierr)
  call check(flag .and. ival == 100 + 2 * rank .and. ncopy1 == 3, 29)
  call MPI_ATTR_GET(MPI_COMM_WORLD, MPI_TAG_UB, ival, flag, ierr)
  call check(flag .and. ival >= 32767, 30)
  call MPI_ATTR_DELETE(c2, okey, ierr)
  call MPI_ATTR_GET(c2, okey, ival, flag, ierr)
  call check(.not. flag, 31)
  call MPI_COMM_FREE(c2, ierr)
  call MPI_KEYVAL_FREE(okey, ierr)
  call MPI_KEYVAL_FREE(okey2, ierr)
  call MPI_COMM_FREE(c1, ierr)

  call MPI_ALLREDUCE(errs, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. total == 0) print '(A,I0)', 'PASS f_attr on ', nprocs
  if (rank == 0 .and. total /= 0) print '(A,I0)', 'FAIL f_attr: errors ', total
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
end program f_attr
