! The mpi_f08 module: its procedures reach kcoll (Open MPI's through its
! ompi_*_f functions, MPICH's through the C MPI_* functions). A collective
! of each family, in place, a Fortran datatype and a non-blocking call,
! each run on the host MPI (kcoll disabled) and through kcoll, compared
! and checked on kcoll's path, as test_fortran does for `use mpi`.
program test_fortran_f08
  use kcoll_ftest
  use mpi_f08
  implicit none
  integer, parameter :: m = 1000
  integer :: p, me, i, root, ierr
  integer :: s(m), a(m * 8), b(m * 8)
  double precision :: d1(m), d2(m)
  type(MPI_Request) :: req
  integer(c_int64_t) :: before

  call MPI_Init()
  call MPI_Comm_size(MPI_COMM_WORLD, p)
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  do i = 1, m
    s(i) = me * 100003 + i * 7
    d1(i) = dble(s(i)) * 0.25d0
  end do

  do root = 0, p - 1
    a(1:m) = s
    b(1:m) = s
    call kcoll_on(.false.)
    call MPI_Bcast(a, m, MPI_INTEGER, root, MPI_COMM_WORLD)
    call kcoll_on(.true.)
    before = kcoll_calls('MPI_Bcast')
    call MPI_Bcast(b, m, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS .and. all(a(1:m) == b(1:m)), 'MPI_Bcast result')
    call check_path('MPI_Bcast', before, 'MPI_Bcast')
  end do

  a = -1
  b = -1
  call kcoll_on(.false.)
  call MPI_Allgather(s, m, MPI_INTEGER, a, m, MPI_INTEGER, MPI_COMM_WORLD)
  call kcoll_on(.true.)
  before = kcoll_calls('MPI_Allgather')
  call MPI_Allgather(s, m, MPI_INTEGER, b, m, MPI_INTEGER, MPI_COMM_WORLD)
  call check(all(a == b), 'MPI_Allgather result')
  call check_path('MPI_Allgather', before, 'MPI_Allgather')

  a = -1
  a(1:m) = s
  b = a
  call kcoll_on(.false.)
  call MPI_Alltoall(MPI_IN_PLACE, m / p, MPI_INTEGER, a, m / p, MPI_INTEGER, MPI_COMM_WORLD)
  call kcoll_on(.true.)
  before = kcoll_calls('MPI_Alltoall')
  call MPI_Alltoall(MPI_IN_PLACE, m / p, MPI_INTEGER, b, m / p, MPI_INTEGER, MPI_COMM_WORLD)
  call check(all(a == b), 'MPI_Alltoall in place result')
  call check_path('MPI_Alltoall', before, 'MPI_Alltoall in place')

  call kcoll_on(.false.)
  call MPI_Allreduce(d1, d2, m, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  call kcoll_on(.true.)
  before = kcoll_calls('MPI_Allreduce')
  call MPI_Allreduce(MPI_IN_PLACE, d1, m, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  call check(all(transfer(d1, [0_1]) == transfer(d2, [0_1])), 'MPI_Allreduce in place result')
  call check_path('MPI_Allreduce', before, 'MPI_Allreduce in place')

  a(1:m) = s
  b(1:m) = s
  call kcoll_on(.false.)
  call MPI_Reduce(s, a, m, MPI_INTEGER, MPI_MAX, p - 1, MPI_COMM_WORLD)
  call kcoll_on(.true.)
  before = kcoll_calls('MPI_Ireduce')
  call MPI_Ireduce(s, b, m, MPI_INTEGER, MPI_MAX, p - 1, MPI_COMM_WORLD, req)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  call check(all(a(1:m) == b(1:m)), 'MPI_Ireduce result')
  call check_path('MPI_Ireduce', before, 'MPI_Ireduce')

  before = kcoll_calls('MPI_Barrier')
  call MPI_Barrier(MPI_COMM_WORLD)
  call check_path('MPI_Barrier', before, 'MPI_Barrier')
  before = kcoll_calls('MPI_Ibarrier')
  call MPI_Ibarrier(MPI_COMM_WORLD, req)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  call check_path('MPI_Ibarrier', before, 'MPI_Ibarrier')

  if (me == 0) then
    if (nfail == 0) then
      print '(a,i0,a,i0,a)', 'test_fortran_f08: ', nchecks, ' checks passed at ', p, ' ranks'
    else
      print '(a,i0,a,i0)', 'test_fortran_f08: ', nfail, ' failed of ', nchecks
    end if
  end if
  if (nfail /= 0) call MPI_Abort(MPI_COMM_WORLD, 1)
  call MPI_Finalize()
end program
