! f08_bigcount: the large-count (_c) routines through the module mpi_f08,
! those written by hand or made callable from Fortran only recently:
! MPI_Op_create_c with a Fortran procedure whose length argument is
! INTEGER(KIND=MPI_COUNT_KIND), used by MPI_Allreduce_c and
! MPI_Reduce_local_c; MPI_Type_get_envelope_c and MPI_Type_get_contents_c;
! MPI_Win_allocate_shared_c and MPI_Win_shared_query_c; MPI_Send_c,
! MPI_Recv_c and MPI_Get_count_c around a ring.  Exit status 0 pass, 1 fail.
module f08_bigcount_cb
  use mpi_f08
  use, intrinsic :: iso_c_binding
  implicit none
  integer :: ncalls = 0
contains
  subroutine big_max(invec, inoutvec, len, datatype)
    type(c_ptr), value :: invec, inoutvec
    integer(kind=MPI_COUNT_KIND) :: len
    type(MPI_Datatype) :: datatype
    integer(kind=8), pointer :: a(:), b(:)
    call c_f_pointer(invec, a, [len])
    call c_f_pointer(inoutvec, b, [len])
    b = max(a, b)
    ncalls = ncalls + 1
  end subroutine big_max
end module f08_bigcount_cb

program f08_bigcount
  use mpi_f08
  use f08_bigcount_cb
  use, intrinsic :: iso_c_binding
  implicit none
  integer :: rank, size, errs, total, i, combiner, left, right
  integer(kind=8) :: inv(5), outv(5)
  type(MPI_Op) :: op
  type(MPI_Datatype) :: vec, types(1)
  integer(kind=MPI_COUNT_KIND) :: ni, na, nl, nd, cnt
  integer :: ints(3)
  integer(kind=MPI_ADDRESS_KIND) :: addrs(1), wsize, qsize, qunit
  integer(kind=MPI_COUNT_KIND) :: larges(1)
  type(MPI_Comm) :: node
  type(MPI_Win) :: win
  type(c_ptr) :: base, qbase
  type(MPI_Status) :: st
  double precision :: sbuf(4), rbuf(4)

  errs = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, size)

  ! A user operation of the large-count form.
  do i = 1, 5
    inv(i) = rank * 10 + i
  end do
  call MPI_Op_create_c(big_max, .true., op)
  call MPI_Allreduce_c(inv, outv, 5_MPI_COUNT_KIND, MPI_INTEGER8, op, MPI_COMM_WORLD)
  do i = 1, 5
    if (outv(i) /= (size - 1) * 10 + i) then
      errs = errs + 1
      print *, 'rank', rank, ': MPI_Op_create_c max', i, '=', outv(i)
    end if
  end do
  ncalls = 0
  outv = 0
  call MPI_Reduce_local_c(inv, outv, 5_MPI_COUNT_KIND, MPI_INTEGER8, op)
  if (ncalls /= 1 .or. outv(5) /= rank * 10 + 5) then
    errs = errs + 1
    print *, 'rank', rank, ': MPI_Reduce_local_c calls', ncalls, 'value', outv(5)
  end if
  call MPI_Op_free(op)

  ! A vector's envelope and contents.
  call MPI_Type_vector(3, 2, 5, MPI_INTEGER, vec)
  call MPI_Type_get_envelope_c(vec, ni, na, nl, nd, combiner)
  if (combiner /= MPI_COMBINER_VECTOR .or. ni /= 3 .or. na /= 0 .or. nl /= 0 .or. nd /= 1) then
    errs = errs + 1
    print *, 'rank', rank, ': envelope_c', combiner, ni, na, nl, nd
  end if
  call MPI_Type_get_contents_c(vec, ni, na, nl, nd, ints, addrs, larges, types)
  if (ints(1) /= 3 .or. ints(2) /= 2 .or. ints(3) /= 5 .or. types(1) /= MPI_INTEGER) then
    errs = errs + 1
    print *, 'rank', rank, ': contents_c', ints
  end if
  call MPI_Type_free(vec)

  ! A shared window of the node, and the query of rank 0's part.
  call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, node)
  wsize = 64
  call MPI_Win_allocate_shared_c(wsize, 8_MPI_ADDRESS_KIND, MPI_INFO_NULL, node, base, win)
  call MPI_Win_shared_query_c(win, 0, qsize, qunit, qbase)
  if (qsize /= 64 .or. qunit /= 8 .or. .not. c_associated(qbase)) then
    errs = errs + 1
    print *, 'rank', rank, ': Win_shared_query_c size', qsize, 'unit', qunit
  end if
  call MPI_Win_free(win)
  call MPI_Comm_free(node)

  ! A ring of large-count sends.
  right = mod(rank + 1, size)
  left = mod(rank + size - 1, size)
  sbuf = rank
  rbuf = -1
  call MPI_Sendrecv(sbuf, 0, MPI_DOUBLE_PRECISION, right, 0, rbuf, 0, MPI_DOUBLE_PRECISION, &
                    left, 0, MPI_COMM_WORLD, st)
  if (mod(rank, 2) == 0) then
    call MPI_Send_c(sbuf, 4_MPI_COUNT_KIND, MPI_DOUBLE_PRECISION, right, 1, MPI_COMM_WORLD)
    call MPI_Recv_c(rbuf, 4_MPI_COUNT_KIND, MPI_DOUBLE_PRECISION, left, 1, MPI_COMM_WORLD, st)
  else
    call MPI_Recv_c(rbuf, 4_MPI_COUNT_KIND, MPI_DOUBLE_PRECISION, left, 1, MPI_COMM_WORLD, st)
    call MPI_Send_c(sbuf, 4_MPI_COUNT_KIND, MPI_DOUBLE_PRECISION, right, 1, MPI_COMM_WORLD)
  end if
  call MPI_Get_count_c(st, MPI_DOUBLE_PRECISION, cnt)
  if (cnt /= 4 .or. any(abs(rbuf - left) > 0.5d0)) then
    errs = errs + 1
    print *, 'rank', rank, ': ring count', cnt, 'values', rbuf
  end if

  call MPI_Allreduce(errs, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) then
    if (total == 0) then
      print '(A,I0)', 'PASS f08_bigcount on ', size
    else
      print '(A,I0,A)', 'FAIL f08_bigcount (', total, ' errors)'
    end if
  end if
  call MPI_Finalize()
  if (total /= 0) stop 1
end program f08_bigcount
