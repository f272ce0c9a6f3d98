! f_ext: the routines that call back into Fortran, and the Fortran-only
! ones, from the module mpi: generalized requests (MPI_GREQUEST_START with
! query, free and cancel procedures and an extra state; MPI_WAIT gets the
! status the query procedure fills; MPI_CANCEL); a data representation of
! Fortran conversion procedures (MPI_REGISTER_DATAREP: byte-swapped
! integers in the file, read back raw and through the representation);
! error handlers written in Fortran for communicators, windows, files and
! sessions (MPI_*_CREATE_ERRHANDLER, called for a real error and by
! MPI_*_CALL_ERRHANDLER); MPI_INFO_CREATE_ENV; MPI_SIZEOF; MPI_F_SYNC_REG
! around a nonblocking receive.  Exit status 0 pass, 1 fail.
module f_ext_cb
  use mpi
  implicit none
  integer :: nquery = 0, nfree = 0, ncancel = 0, ncomm = 0, nwin = 0, nfile = 0, nsession = 0
  integer :: last_code = 0, last_handle = -1
  integer(kind=MPI_ADDRESS_KIND) :: seen_extra = -1
  logical :: cancel_complete = .true.
contains
  subroutine query_fn(extra_state, status, ierr)
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer :: status(MPI_STATUS_SIZE), ierr
    nquery = nquery + 1
    seen_extra = extra_state
    call MPI_STATUS_SET_ELEMENTS(status, MPI_INTEGER, 3, ierr)
    call MPI_STATUS_SET_CANCELLED(status, .false., ierr)
    status(MPI_SOURCE) = MPI_UNDEFINED
    status(MPI_TAG) = int(extra_state)
    ierr = MPI_SUCCESS
  end subroutine query_fn

  subroutine free_fn(extra_state, ierr)
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer :: ierr
    nfree = nfree + 1
    ierr = MPI_SUCCESS
  end subroutine free_fn

  subroutine cancel_fn(extra_state, complete, ierr)
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    logical :: complete
    integer :: ierr
    ncancel = ncancel + 1
    cancel_complete = complete
    ierr = MPI_SUCCESS
  end subroutine cancel_fn

  ! The representation "f_ext_swapped": 4-byte integers with their bytes
  ! reversed.  (The buffers arrive as addresses: assumed-size arrays.)
  subroutine swap_read(userbuf, datatype, count, filebuf, position, extra_state, ierr)
    integer :: userbuf(*), filebuf(*), datatype, count, ierr
    integer(kind=MPI_OFFSET_KIND) :: position
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer :: i
    do i = 1, count
      userbuf(position + i) = swapped(filebuf(i))
    end do
    ierr = MPI_SUCCESS
  end subroutine swap_read

  subroutine swap_write(userbuf, datatype, count, filebuf, position, extra_state, ierr)
    integer :: userbuf(*), filebuf(*), datatype, count, ierr
    integer(kind=MPI_OFFSET_KIND) :: position
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer :: i
    do i = 1, count
      filebuf(i) = swapped(userbuf(position + i))
    end do
    ierr = MPI_SUCCESS
  end subroutine swap_write

  subroutine swap_extent(datatype, extent, extra_state, ierr)
    integer :: datatype, ierr
    integer(kind=MPI_ADDRESS_KIND) :: extent, extra_state
    extent = 4
    ierr = MPI_SUCCESS
  end subroutine swap_extent

  integer function swapped(v)
    integer, intent(in) :: v
    integer(kind=1) :: b(4)
    b = transfer(v, b)
    swapped = transfer(b(4:1:-1), v)
  end function swapped

  subroutine comm_handler(comm, code)
    integer :: comm, code
    ncomm = ncomm + 1
    last_code = code
    last_handle = comm
  end subroutine comm_handler

  subroutine win_handler(win, code)
    integer :: win, code
    nwin = nwin + 1
    last_code = code
  end subroutine win_handler

  subroutine file_handler(fh, code)
    integer :: fh, code
    nfile = nfile + 1
    last_code = code
  end subroutine file_handler

  subroutine session_handler(session, code)
    integer :: session, code
    nsession = nsession + 1
    last_code = code
  end subroutine session_handler
end module f_ext_cb

program f_ext
  use mpi
  use f_ext_cb
  implicit none
  integer :: ierr, rank, nprocs, errs, total, req, n, eh, dup, win, fh, session, info, nkeys
  integer :: status(MPI_STATUS_SIZE), vals(4), back(4), raw(4), i, sz, left, right, got
  integer :: pid
  integer(kind=MPI_OFFSET_KIND) :: disp
  integer(kind=MPI_ADDRESS_KIND) :: extra
  logical :: flag, is_mpich
  character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: lib
  character(len=MPI_MAX_INFO_VAL) :: value
  character(len=256) :: fname, me
  double precision :: d(3)
  complex :: z
  errs = 0
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  call MPI_GET_LIBRARY_VERSION(lib, n, ierr)
  is_mpich = index(lib, 'MPICH') > 0
  right = mod(rank + 1, nprocs)
  left = mod(rank - 1 + nprocs, nprocs)

  ! Generalized requests.
  extra = 17
  call MPI_GREQUEST_START(query_fn, free_fn, cancel_fn, extra, req, ierr)
  call check(ierr == MPI_SUCCESS .and. req /= MPI_REQUEST_NULL, 1)
  call MPI_TEST(req, flag, status, ierr)
  call check(.not. flag .and. nquery == 0, 2)
  call MPI_GREQUEST_COMPLETE(req, ierr)
  call MPI_WAIT(req, status, ierr)
  call check(req == MPI_REQUEST_NULL .and. nquery == 1 .and. nfree == 1 .and. seen_extra == 17, 3)
  call MPI_GET_COUNT(status, MPI_INTEGER, n, ierr)
  call check(n == 3 .and. status(MPI_TAG) == 17, 4)
  call MPI_GREQUEST_START(query_fn, free_fn, cancel_fn, extra, req, ierr)
  call MPI_CANCEL(req, ierr)
  call check(ncancel == 1 .and. .not. cancel_complete, 5)
  call MPI_GREQUEST_COMPLETE(req, ierr)
  call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)
  call check(nfree == 2, 6)

  ! A data representation written in Fortran.
  if (rank == 0) then
    pid = getpid()
    write (fname, '(A,I0,A,I0)') '/tmp/ftest-f_ext-', pid, '-', int(mod(MPI_WTIME() * 1d6, 1d9))
  end if
  call MPI_BCAST(fname, len(fname), MPI_CHARACTER, 0, MPI_COMM_WORLD, ierr)
  call MPI_REGISTER_DATAREP('f_ext_swapped', swap_read, swap_write, swap_extent, &
                            0_MPI_ADDRESS_KIND, ierr)
  if (ierr /= MPI_SUCCESS .and. is_mpich) then
    if (rank == 0) print '(A)', 'note: MPICH does not support user data representations'
  else
    call check(ierr == MPI_SUCCESS, 7)
    call MPI_FILE_OPEN(MPI_COMM_WORLD, fname, MPI_MODE_CREATE + MPI_MODE_RDWR + MPI_MODE_DELETE_ON_CLOSE, &
                       MPI_INFO_NULL, fh, ierr)
    call check(ierr == MPI_SUCCESS, 8)
    disp = 16 * rank
    call MPI_FILE_SET_VIEW(fh, disp, MPI_INTEGER, MPI_INTEGER, 'f_ext_swapped', MPI_INFO_NULL, ierr)
    call check(ierr == MPI_SUCCESS, 9)
    vals = [1, 256, 65536, 1000 + rank]
    call MPI_FILE_WRITE(fh, vals, 4, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
    call MPI_FILE_SYNC(fh, ierr)
    call MPI_BARRIER(MPI_COMM_WORLD, ierr)
    call MPI_FILE_SYNC(fh, ierr)
    call MPI_FILE_SET_VIEW(fh, disp, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL, ierr)
    call MPI_FILE_READ_AT(fh, 0_MPI_OFFSET_KIND, raw, 4, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
    call check(all(raw == [(swapped(vals(i)), i = 1, 4)]), 10)
    call MPI_FILE_SET_VIEW(fh, disp, MPI_INTEGER, MPI_INTEGER, 'f_ext_swapped', MPI_INFO_NULL, ierr)
    back = 0
    call MPI_FILE_READ_AT(fh, 0_MPI_OFFSET_KIND, back, 4, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
    call check(all(back == vals), 11)
    call MPI_FILE_CLOSE(fh, ierr)
  end if

  ! Error handlers written in Fortran.
  call MPI_COMM_DUP(MPI_COMM_WORLD, dup, ierr)
  call MPI_COMM_CREATE_ERRHANDLER(comm_handler, eh, ierr)
  call MPI_COMM_SET_ERRHANDLER(dup, eh, ierr)
  call MPI_ERRHANDLER_FREE(eh, ierr)
  call MPI_SEND(vals, 1, MPI_INTEGER, nprocs + 5, 0, dup, ierr)   ! an invalid rank
  call check(ncomm == 1 .and. last_handle == dup, 12)
  call MPI_ERROR_CLASS(last_code, n, ierr)
  call check(n == MPI_ERR_RANK, 13)
  call MPI_COMM_CALL_ERRHANDLER(dup, MPI_ERR_OTHER, ierr)
  call check(ncomm == 2 .and. last_code == MPI_ERR_OTHER, 14)
  call MPI_COMM_FREE(dup, ierr)

  call MPI_WIN_CREATE(vals, 16_MPI_ADDRESS_KIND, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call MPI_WIN_CREATE_ERRHANDLER(win_handler, eh, ierr)
  call MPI_WIN_SET_ERRHANDLER(win, eh, ierr)
  call MPI_ERRHANDLER_FREE(eh, ierr)
  call MPI_WIN_CALL_ERRHANDLER(win, MPI_ERR_WIN, ierr)
  call check(nwin == 1 .and. last_code == MPI_ERR_WIN, 15)
  call MPI_WIN_FREE(win, ierr)

  call MPI_FILE_CREATE_ERRHANDLER(file_handler, eh, ierr)
  call MPI_FILE_OPEN(MPI_COMM_WORLD, fname, MPI_MODE_CREATE + MPI_MODE_RDWR + MPI_MODE_DELETE_ON_CLOSE, &
                     MPI_INFO_NULL, fh, ierr)
  call MPI_FILE_SET_ERRHANDLER(fh, eh, ierr)
  call MPI_ERRHANDLER_FREE(eh, ierr)
  call MPI_FILE_CALL_ERRHANDLER(fh, MPI_ERR_IO, ierr)
  call check(nfile == 1 .and. last_code == MPI_ERR_IO, 16)
  call MPI_FILE_CLOSE(fh, ierr)

  call MPI_SESSION_CREATE_ERRHANDLER(session_handler, eh, ierr)
  call check(ierr == MPI_SUCCESS, 17)
  call MPI_SESSION_INIT(MPI_INFO_NULL, MPI_ERRORS_RETURN, session, ierr)
  call MPI_SESSION_SET_ERRHANDLER(session, eh, ierr)
  call check(ierr == MPI_SUCCESS, 18)
  call MPI_SESSION_CALL_ERRHANDLER(session, MPI_ERR_OTHER, ierr)
  call check(nsession == 1 .and. last_code == MPI_ERR_OTHER, 19)
  call MPI_SESSION_FINALIZE(session, ierr)
  call MPI_ERRHANDLER_FREE(eh, ierr)

  ! MPI_INFO_CREATE_ENV: what is there is right.
  call MPI_INFO_CREATE_ENV(info, ierr)
  call check(ierr == MPI_SUCCESS .and. info /= MPI_INFO_NULL, 20)
  call MPI_INFO_GET_NKEYS(info, nkeys, ierr)
  call check(nkeys >= 0, 21)
  call MPI_INFO_GET(info, 'command', MPI_MAX_INFO_VAL, value, flag, ierr)
  call get_command_argument(0, me)
  if (flag) call check(index(value, trim(basename(me))) > 0, 22)
  if (index(lib, 'BDMPI') > 0) call check(flag, 28)   ! BDMPI reads the command line
  call MPI_INFO_GET(info, 'maxprocs', MPI_MAX_INFO_VAL, value, flag, ierr)
  if (flag) then
    read (value, *) n
    call check(n >= 1, 23)
  end if
  call MPI_INFO_FREE(info, ierr)

  ! MPI_SIZEOF of scalars and arrays.
  call MPI_SIZEOF(n, sz, ierr)
  call check(sz == 4, 24)
  call MPI_SIZEOF(d, sz, ierr)
  call check(sz == 8, 25)
  call MPI_SIZEOF(z, sz, ierr)
  call check(sz == 8, 26)

  ! MPI_F_SYNC_REG around a nonblocking receive.  (MPICH 4.0's MPI_F_SYNC_REG
  ! of the module mpi crashes: not called there.)
  got = -1
  call MPI_IRECV(got, 1, MPI_INTEGER, left, 4, MPI_COMM_WORLD, req, ierr)
  if (.not. is_mpich) call MPI_F_SYNC_REG(got)
  call MPI_SEND(rank, 1, MPI_INTEGER, right, 4, MPI_COMM_WORLD, ierr)
  call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)
  if (.not. is_mpich) call MPI_F_SYNC_REG(got)
  if (is_mpich .and. rank == 0) print '(A)', 'note: MPICH: MPI_F_SYNC_REG not called'
  call check(got == left, 27)

  call MPI_ALLREDUCE(errs, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. total == 0) print '(A,I0)', 'PASS f_ext on ', nprocs
  if (rank == 0 .and. total /= 0) print '(A,I0)', 'FAIL f_ext: errors ', total
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

  function basename(path) result(b)
    character(len=*), intent(in) :: path
    character(len=len(path)) :: b
    b = path(index(path, '/', back=.true.) + 1:)
  end function basename
end program f_ext
