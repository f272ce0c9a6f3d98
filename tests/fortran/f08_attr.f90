! f08_attr: attribute caching through the module mpi_f08: keyvals whose
! copy and delete procedures (ordinary module procedures with the
! standard's abstract interfaces MPI_Comm_copy_attr_function, ...) are
! written in Fortran, on communicators, datatypes and windows, with
! ierror left out; the predefined procedures MPI_COMM_DUP_FN,
! MPI_COMM_NULL_COPY_FN, MPI_TYPE_DUP_FN, MPI_WIN_NULL_COPY_FN and the
! NULL_DELETE_FNs; MPI_Win_get_attr's predefined values; MPI_Comm_get_attr
! of MPI_TAG_UB and MPI_LASTUSEDCODE.  Exit status 0 pass, 1 fail.
module f08_attr_cb
  use mpi_f08
  implicit none
  integer :: ncopy = 0, ndelete = 0
  integer(kind=MPI_ADDRESS_KIND) :: seen_extra = -1, last_deleted = -1
contains
  subroutine comm_copy(oldcomm, comm_keyval, extra_state, attribute_val_in, attribute_val_out, &
                       flag, ierror)
    type(MPI_Comm) :: oldcomm
    integer :: comm_keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
    logical :: flag
    integer :: size
    call MPI_Comm_size(oldcomm, size)   ! the old communicator is a usable handle
    ncopy = ncopy + 1
    seen_extra = extra_state
    attribute_val_out = attribute_val_in + size
    flag = .true.
    ierror = MPI_SUCCESS
  end subroutine comm_copy

  subroutine comm_delete(comm, comm_keyval, attribute_val, extra_state, ierror)
    type(MPI_Comm) :: comm
    integer :: comm_keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state
    ndelete = ndelete + 1
    last_deleted = attribute_val
    ierror = MPI_SUCCESS
  end subroutine comm_delete

  subroutine type_copy(oldtype, type_keyval, extra_state, attribute_val_in, attribute_val_out, &
                       flag, ierror)
    type(MPI_Datatype) :: oldtype
    integer :: type_keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
    logical :: flag
    integer :: size
    call MPI_Type_size(oldtype, size)
    ncopy = ncopy + 1
    attribute_val_out = attribute_val_in * size + extra_state
    flag = .true.
    ierror = MPI_SUCCESS
  end subroutine type_copy

  subroutine type_delete(datatype, type_keyval, attribute_val, extra_state, ierror)
    type(MPI_Datatype) :: datatype
    integer :: type_keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state
    ndelete = ndelete + 1
    last_deleted = attribute_val
    ierror = MPI_SUCCESS
  end subroutine type_delete

  subroutine win_delete(win, win_keyval, attribute_val, extra_state, ierror)
    type(MPI_Win) :: win
    integer :: win_keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state
    ndelete = ndelete + 1
    last_deleted = attribute_val + extra_state
    ierror = MPI_SUCCESS
  end subroutine win_delete
end module f08_attr_cb

program f08_attr
  use mpi_f08
  use f08_attr_cb
  implicit none
  integer :: ierr, rank, nprocs, errs, total, key, key2, key3, tkey, wkey, cls, code
  type(MPI_Comm) :: c1, c2
  type(MPI_Datatype) :: t1, t2
  type(MPI_Win) :: win
  integer(kind=MPI_ADDRESS_KIND) :: val, base
  logical :: flag
  double precision :: wbuf(8)
  errs = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  call MPI_Comm_dup(MPI_COMM_WORLD, c1)

  call MPI_Comm_create_keyval(comm_copy, comm_delete, key, 11_MPI_ADDRESS_KIND, ierr)
  call check(ierr == MPI_SUCCESS .and. key /= MPI_KEYVAL_INVALID, 1)
  val = 20 + rank
  call MPI_Comm_set_attr(c1, key, val)
  call MPI_Comm_get_attr(c1, key, val, flag)
  call check(flag .and. val == 20 + rank, 2)
  call MPI_Comm_dup(c1, c2)
  call check(ncopy == 1 .and. seen_extra == 11, 3)
  call MPI_Comm_get_attr(c2, key, val, flag)
  call check(flag .and. val == 20 + rank + nprocs, 4)
  call MPI_Comm_free(c2)
  call check(ndelete == 1 .and. last_deleted == 20 + rank + nprocs, 5)
  call MPI_Comm_delete_attr(c1, key)
  call check(ndelete == 2 .and. last_deleted == 20 + rank, 6)
  call MPI_Comm_free_keyval(key)
  call check(key == MPI_KEYVAL_INVALID, 7)

  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, key2, 0_MPI_ADDRESS_KIND)
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, key3, 0_MPI_ADDRESS_KIND)
  val = 77
  call MPI_Comm_set_attr(c1, key2, val)
  call MPI_Comm_set_attr(c1, key3, val)
  call MPI_Comm_dup(c1, c2)
  val = 0
  call MPI_Comm_get_attr(c2, key2, val, flag)
  call check(flag .and. val == 77, 8)
  call MPI_Comm_get_attr(c2, key3, val, flag)
  call check(.not. flag, 9)
  call MPI_Comm_free(c2)
  call MPI_Comm_free_keyval(key2)
  call MPI_Comm_free_keyval(key3)

  ncopy = 0
  ndelete = 0
  call MPI_Type_contiguous(3, MPI_INTEGER, t1)
  call MPI_Type_create_keyval(type_copy, type_delete, tkey, 2_MPI_ADDRESS_KIND)
  val = 5
  call MPI_Type_set_attr(t1, tkey, val)
  call MPI_Type_dup(t1, t2)
  call MPI_Type_get_attr(t2, tkey, val, flag)
  call check(ncopy == 1 .and. flag .and. val == 5 * 12 + 2, 10)
  call MPI_Type_free(t2)
  call check(ndelete == 1 .and. last_deleted == 62, 11)
  call MPI_Type_free_keyval(tkey)
  call MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, tkey, 0_MPI_ADDRESS_KIND)
  val = 8
  call MPI_Type_set_attr(t1, tkey, val)
  call MPI_Type_dup(t1, t2)
  call MPI_Type_get_attr(t2, tkey, val, flag)
  call check(flag .and. val == 8, 12)
  call MPI_Type_delete_attr(t2, tkey)
  call MPI_Type_get_attr(t2, tkey, val, flag)
  call check(.not. flag, 13)
  call MPI_Type_free(t2)
  call MPI_Type_free(t1)
  call MPI_Type_free_keyval(tkey)

  ndelete = 0
  call MPI_Win_create(wbuf, 64_MPI_ADDRESS_KIND, 8, MPI_INFO_NULL, MPI_COMM_WORLD, win)
  call MPI_Win_get_attr(win, MPI_WIN_SIZE, val, flag)
  call check(flag .and. val == 64, 14)
  call MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, val, flag)
  call check(flag .and. val == 8, 15)
  call MPI_Get_address(wbuf, base)
  call MPI_Win_get_attr(win, MPI_WIN_BASE, val, flag)
  call check(flag .and. val == base, 16)
  call MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, win_delete, wkey, 1000_MPI_ADDRESS_KIND)
  val = rank
  call MPI_Win_set_attr(win, wkey, val)
  call MPI_Win_get_attr(win, wkey, val, flag)
  call check(flag .and. val == rank, 17)
  call MPI_Win_free(win)
  call check(ndelete == 1 .and. last_deleted == 1000 + rank, 18)
  call MPI_Win_free_keyval(wkey)

  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, val, flag)
  call check(flag .and. val >= 32767, 19)
  call MPI_Add_error_class(cls)
  call MPI_Add_error_code(cls, code)
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, val, flag)
  call check(flag .and. val >= cls, 20)
  if (flag .and. val >= cls .and. val <= huge(code)) then
    call MPI_Error_class(int(val), code, ierr)
    call check(ierr == MPI_SUCCESS .and. code == cls, 21)
  end if
  call MPI_Comm_free(c1)

  call MPI_Allreduce(errs, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0 .and. total == 0) print '(A,I0)', 'PASS f08_attr on ', nprocs
  if (rank == 0 .and. total /= 0) print '(A,I0)', 'FAIL f08_attr: errors ', total
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
end program f08_attr
