! Every collective kcoll accelerates, called from Fortran: built twice,
! with `use mpi` and (KCOLL_MPIFH) with `include 'mpif.h'`. Each call runs
! twice on the same input: on the host MPI (kcoll disabled) and through
! kcoll (every size to kcoll); the results must be the same bytes and the
! statistics must show that the second call took kcoll's path, so under
! Open MPI, whose Fortran bindings call PMPI_* directly, the test fails if
! kcoll's own Fortran entry points are not in the way. Fortran's
! MPI_IN_PLACE, the Fortran datatypes (INTEGER, INTEGER*8, REAL, DOUBLE
! PRECISION, DOUBLE COMPLEX, LOGICAL, the MAXLOC/MINLOC pairs), a Fortran
! user operation and the non-blocking forms with MPI_WAIT / MPI_WAITALL.
module fops
  implicit none
  integer :: user_calls = 0
contains
  ! a commutative, associative user operation: the host may combine in
  ! any order and still give the same bits
  subroutine addop(invec, inoutvec, n, dtype)
    integer :: n, dtype
    integer :: invec(n), inoutvec(n)
    integer :: i
    user_calls = user_calls + 1
    do i = 1, n
      inoutvec(i) = invec(i) + inoutvec(i)
    end do
  end subroutine
end module

program test_fortran
  use kcoll_ftest
  use fops
#ifndef KCOLL_MPIFH
  use mpi
#endif
  implicit none
#ifdef KCOLL_MPIFH
  include 'mpif.h'
#endif
  integer :: ierr, p, me, k, n
  integer, parameter :: sizes(3) = (/ 0, 1, 777 /)

  call MPI_INIT(ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, p, ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, me, ierr)
  do k = 1, size(sizes)
    n = sizes(k)
    call t_bcast(n)
    call t_rooted(n)
    call t_all(n)
    call t_reduce(n)
    call t_nonblocking(n)
  end do
  call t_barrier()
  call t_types()
  call t_userop()
  call t_allocmem()
  if (me == 0) then
    if (nfail == 0) then
      print '(a,i0,a,i0,a)', 'test_fortran: ', nchecks, ' checks passed at ', p, ' ranks'
    else
      print '(a,i0,a,i0)', 'test_fortran: ', nfail, ' failed of ', nchecks
    end if
  end if
  if (nfail /= 0) call MPI_ABORT(MPI_COMM_WORLD, 1, ierr)
  call MPI_FINALIZE(ierr)

contains

  ! rank r's i-th value for input `seed`
  integer function val(r, i, seed)
    integer, intent(in) :: r, i, seed
    val = r * 100003 + i * 7 + seed
  end function

  subroutine fill(a, r, seed)
    integer, intent(out) :: a(:)
    integer, intent(in) :: r, seed
    integer :: i
    do i = 1, size(a)
      a(i) = val(r, i, seed)
    end do
  end subroutine

  ! MPI_ALLOC_MEM gives kcoll's shareable memory (under Open MPI through
  ! kcoll's own Fortran entry point), a broadcast on it moves by loads and
  ! stores (the direct engine), MPI_FREE_MEM frees it
  subroutine t_allocmem()
    integer, parameter :: n = 8192
    integer(kind=MPI_ADDRESS_KIND) :: sz, base
    integer, pointer :: a(:)
    integer :: x(n)
    type(c_ptr) :: cp
    integer(c_int64_t) :: calls, d0, d1
    sz = 4 * n
    call kcoll_on(.true.)
    call MPI_ALLOC_MEM(sz, MPI_INFO_NULL, base, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_ALLOC_MEM')
    cp = transfer(base, cp)
    call c_f_pointer(cp, a, [n])
    call fill(a, me, 5)
    call fill(x, 0, 5)
    if (kcoll_stats_get("transfers"//c_null_char, "engine:direct"//c_null_char, calls, d0) /= 0) &
      d0 = 0
    call MPI_BCAST(a, n, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    if (kcoll_stats_get("transfers"//c_null_char, "engine:direct"//c_null_char, calls, d1) /= 0) &
      d1 = 0
    call check(ierr == MPI_SUCCESS .and. all(a == x), 'MPI_BCAST on MPI_ALLOC_MEM memory')
    call check(p == 1 .or. d1 > d0, 'MPI_BCAST on MPI_ALLOC_MEM memory: no loads and stores')
    call MPI_FREE_MEM(a, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_FREE_MEM')
  end subroutine

  subroutine t_bcast(n)
    integer, intent(in) :: n
    integer :: x(max(n, 1)), y(max(n, 1)), root
    integer(c_int64_t) :: before
    do root = 0, p - 1
      call fill(x, me, root)
      if (me /= root) x = -1
      y = x
      call kcoll_on(.false.)
      call MPI_BCAST(x, n, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
      call kcoll_on(.true.)
      before = kcoll_calls('MPI_Bcast')
      call MPI_BCAST(y, n, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
      call check(ierr == MPI_SUCCESS .and. all(x == y), 'MPI_BCAST result')
      call check_path('MPI_Bcast', before, 'MPI_BCAST')
    end do
  end subroutine

  ! Scatter, Gather and their v forms at every root, in place at the root
  ! in every other round
  subroutine t_rooted(n)
    integer, intent(in) :: n
    integer :: big(max(n, 1) * p), big2(max(n, 1) * p), small(max(n, 1)), small2(max(n, 1))
    integer :: counts(p), displs(p), root, r, inplace
    integer(c_int64_t) :: before
    do r = 1, p
      counts(r) = n - mod(r, 2) * (n / 3)
      displs(r) = (r - 1) * max(n, 1)
    end do
    do root = 0, p - 1
      do inplace = 0, 1
        ! Scatter: the root's send buffer holds every block
        call fill(big, me, 11 + root)
        small = -1
        small2 = -1
        if (inplace == 1 .and. me == root) then
          call kcoll_on(.false.)
          call MPI_SCATTER(big, n, MPI_INTEGER, MPI_IN_PLACE, n, MPI_INTEGER, root, &
                           MPI_COMM_WORLD, ierr)
          call kcoll_on(.true.)
          before = kcoll_calls('MPI_Scatter')
          call MPI_SCATTER(big, n, MPI_INTEGER, MPI_IN_PLACE, n, MPI_INTEGER, root, &
                           MPI_COMM_WORLD, ierr)
        else
          call kcoll_on(.false.)
          call MPI_SCATTER(big, n, MPI_INTEGER, small, n, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
          call kcoll_on(.true.)
          before = kcoll_calls('MPI_Scatter')
          call MPI_SCATTER(big, n, MPI_INTEGER, small2, n, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
        end if
        call check(ierr == MPI_SUCCESS .and. all(small == small2), 'MPI_SCATTER result')
        call check_path('MPI_Scatter', before, 'MPI_SCATTER')

        ! Scatterv: uneven blocks
        small = -1
        small2 = -1
        call kcoll_on(.false.)
        call MPI_SCATTERV(big, counts, displs, MPI_INTEGER, small, counts(me + 1), MPI_INTEGER, &
                          root, MPI_COMM_WORLD, ierr)
        call kcoll_on(.true.)
        before = kcoll_calls('MPI_Scatterv')
        call MPI_SCATTERV(big, counts, displs, MPI_INTEGER, small2, counts(me + 1), MPI_INTEGER, &
                          root, MPI_COMM_WORLD, ierr)
        call check(ierr == MPI_SUCCESS .and. all(small == small2), 'MPI_SCATTERV result')
        call check_path('MPI_Scatterv', before, 'MPI_SCATTERV')

        ! Gather: in place, the root's own block is already in its place
        call fill(small, me, 21 + root)
        big = -1
        big2 = -1
        if (inplace == 1 .and. me == root) then
          big(me * max(n, 1) + 1:me * max(n, 1) + n) = small(1:n)
          big2 = big
          call kcoll_on(.false.)
          call MPI_GATHER(MPI_IN_PLACE, n, MPI_INTEGER, big, n, MPI_INTEGER, root, &
                          MPI_COMM_WORLD, ierr)
          call kcoll_on(.true.)
          before = kcoll_calls('MPI_Gather')
          call MPI_GATHER(MPI_IN_PLACE, n, MPI_INTEGER, big2, n, MPI_INTEGER, root, &
                          MPI_COMM_WORLD, ierr)
        else
          call kcoll_on(.false.)
          call MPI_GATHER(small, n, MPI_INTEGER, big, n, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
          call kcoll_on(.true.)
          before = kcoll_calls('MPI_Gather')
          call MPI_GATHER(small, n, MPI_INTEGER, big2, n, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
        end if
        call check(ierr == MPI_SUCCESS .and. all(big == big2), 'MPI_GATHER result')
        call check_path('MPI_Gather', before, 'MPI_GATHER')

        ! Gatherv: uneven blocks, gaps untouched
        big = -1
        big2 = -1
        call kcoll_on(.false.)
        call MPI_GATHERV(small, counts(me + 1), MPI_INTEGER, big, counts, displs, MPI_INTEGER, &
                         root, MPI_COMM_WORLD, ierr)
        call kcoll_on(.true.)
        before = kcoll_calls('MPI_Gatherv')
        call MPI_GATHERV(small, counts(me + 1), MPI_INTEGER, big2, counts, displs, MPI_INTEGER, &
                         root, MPI_COMM_WORLD, ierr)
        call check(ierr == MPI_SUCCESS .and. all(big == big2), 'MPI_GATHERV result')
        call check_path('MPI_Gatherv', before, 'MPI_GATHERV')
      end do
    end do
  end subroutine

  ! Allgather(v) (in place too) and Alltoall(v)
  subroutine t_all(n)
    integer, intent(in) :: n
    integer :: s(max(n, 1) * p), a(max(n, 1) * p), b(max(n, 1) * p)
    integer :: counts(p), displs(p), r
    integer(c_int64_t) :: before
    do r = 1, p
      counts(r) = n - mod(r, 2) * (n / 3)
      displs(r) = (r - 1) * max(n, 1)
    end do
    call fill(s, me, 31)

    a = -1
    b = -1
    call kcoll_on(.false.)
    call MPI_ALLGATHER(s, n, MPI_INTEGER, a, n, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call kcoll_on(.true.)
    before = kcoll_calls('MPI_Allgather')
    call MPI_ALLGATHER(s, n, MPI_INTEGER, b, n, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS .and. all(a == b), 'MPI_ALLGATHER result')
    call check_path('MPI_Allgather', before, 'MPI_ALLGATHER')

    ! in place: each rank's block already sits at its place
    a = -1
    a(me * max(n, 1) + 1:me * max(n, 1) + n) = s(1:n)
    b = a
    call kcoll_on(.false.)
    call MPI_ALLGATHER(MPI_IN_PLACE, n, MPI_INTEGER, a, n, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call kcoll_on(.true.)
    before = kcoll_calls('MPI_Allgather')
    call MPI_ALLGATHER(MPI_IN_PLACE, n, MPI_INTEGER, b, n, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS .and. all(a == b), 'MPI_ALLGATHER in place result')
    call check_path('MPI_Allgather', before, 'MPI_ALLGATHER in place')

    a = -1
    b = -1
    call kcoll_on(.false.)
    call MPI_ALLGATHERV(s, counts(me + 1), MPI_INTEGER, a, counts, displs, MPI_INTEGER, &
                        MPI_COMM_WORLD, ierr)
    call kcoll_on(.true.)
    before = kcoll_calls('MPI_Allgatherv')
    call MPI_ALLGATHERV(s, counts(me + 1), MPI_INTEGER, b, counts, displs, MPI_INTEGER, &
                        MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS .and. all(a == b), 'MPI_ALLGATHERV result')
    call check_path('MPI_Allgatherv', before, 'MPI_ALLGATHERV')

    a = -1
    b = -1
    call kcoll_on(.false.)
    call MPI_ALLTOALL(s, n, MPI_INTEGER, a, n, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call kcoll_on(.true.)
    before = kcoll_calls('MPI_Alltoall')
    call MPI_ALLTOALL(s, n, MPI_INTEGER, b, n, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS .and. all(a == b), 'MPI_ALLTOALL result')
    call check_path('MPI_Alltoall', before, 'MPI_ALLTOALL')

    ! in place: the receive buffer is also the send buffer
    a = s
    b = s
    call kcoll_on(.false.)
    call MPI_ALLTOALL(MPI_IN_PLACE, n, MPI_INTEGER, a, n, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call kcoll_on(.true.)
    before = kcoll_calls('MPI_Alltoall')
    call MPI_ALLTOALL(MPI_IN_PLACE, n, MPI_INTEGER, b, n, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS .and. all(a == b), 'MPI_ALLTOALL in place result')
    call check_path('MPI_Alltoall', before, 'MPI_ALLTOALL in place')

    ! Alltoallv: rank r sends counts(r+1) to everybody (so everybody
    ! receives counts of the senders)
    a = -1
    b = -1
    call kcoll_on(.false.)
    call MPI_ALLTOALLV(s, spread(counts(me + 1), 1, p), displs, MPI_INTEGER, a, counts, &
                       displs, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call kcoll_on(.true.)
    before = kcoll_calls('MPI_Alltoallv')
    call MPI_ALLTOALLV(s, spread(counts(me + 1), 1, p), displs, MPI_INTEGER, b, counts, &
                       displs, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS .and. all(a == b), 'MPI_ALLTOALLV result')
    call check_path('MPI_Alltoallv', before, 'MPI_ALLTOALLV')
  end subroutine

  ! Reduce (every root, in place at the root), Allreduce (in place), the
  ! Reduce_scatter pair: INTEGER sums
  subroutine t_reduce(n)
    integer, intent(in) :: n
    integer :: s(max(n, 1) * p), a(max(n, 1) * p), b(max(n, 1) * p), counts(p), root, r
    integer(c_int64_t) :: before
    call fill(s, me, 41)
    do root = 0, p - 1
      a = -1
      b = -1
      call kcoll_on(.false.)
      call MPI_REDUCE(s, a, n, MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD, ierr)
      call kcoll_on(.true.)
      before = kcoll_calls('MPI_Reduce')
      call MPI_REDUCE(s, b, n, MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD, ierr)
      call check(ierr == MPI_SUCCESS .and. all(a == b), 'MPI_REDUCE result')
      call check_path('MPI_Reduce', before, 'MPI_REDUCE')

      ! the reference not in place: MPICH 4.0's own Reduce crashes in
      ! place at a non-zero root
      a = -1
      b = s
      call kcoll_on(.false.)
      call MPI_REDUCE(s, a, n, MPI_INTEGER, MPI_MAX, root, MPI_COMM_WORLD, ierr)
      if (me /= root) a = s
      call kcoll_on(.true.)
      before = kcoll_calls('MPI_Reduce')
      if (me == root) then
        call MPI_REDUCE(MPI_IN_PLACE, b, n, MPI_INTEGER, MPI_MAX, root, MPI_COMM_WORLD, ierr)
      else
        call MPI_REDUCE(b, s, n, MPI_INTEGER, MPI_MAX, root, MPI_COMM_WORLD, ierr)
      end if
      call check(ierr == MPI_SUCCESS .and. all(a(1:n) == b(1:n)) .and. &
                 all(b(n + 1:) == s(n + 1:)), 'MPI_REDUCE in place result')
      call check_path('MPI_Reduce', before, 'MPI_REDUCE in place')
    end do

    a = s
    b = s
    call kcoll_on(.false.)
    call MPI_ALLREDUCE(MPI_IN_PLACE, a, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call kcoll_on(.true.)
    before = kcoll_calls('MPI_Allreduce')
    call MPI_ALLREDUCE(MPI_IN_PLACE, b, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS .and. all(a == b), 'MPI_ALLREDUCE in place result')
    call check_path('MPI_Allreduce', before, 'MPI_ALLREDUCE in place')

    a = -1
    b = -1
    call kcoll_on(.false.)
    call MPI_REDUCE_SCATTER_BLOCK(s, a, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call kcoll_on(.true.)
    before = kcoll_calls('MPI_Reduce_scatter_block')
    call MPI_REDUCE_SCATTER_BLOCK(s, b, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS .and. all(a == b), 'MPI_REDUCE_SCATTER_BLOCK result')
    call check_path('MPI_Reduce_scatter_block', before, 'MPI_REDUCE_SCATTER_BLOCK')

    do r = 1, p
      counts(r) = n - mod(r, 2) * (n / 3)
    end do
    a = -1
    b = -1
    call kcoll_on(.false.)
    call MPI_REDUCE_SCATTER(s, a, counts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call kcoll_on(.true.)
    before = kcoll_calls('MPI_Reduce_scatter')
    call MPI_REDUCE_SCATTER(s, b, counts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS .and. all(a == b), 'MPI_REDUCE_SCATTER result')
    call check_path('MPI_Reduce_scatter', before, 'MPI_REDUCE_SCATTER')
  end subroutine

  ! non-blocking forms, completed with MPI_WAIT and MPI_WAITALL
  subroutine t_nonblocking(n)
    integer, intent(in) :: n
    integer :: s(max(n, 1) * p), a(max(n, 1) * p), b(max(n, 1) * p), c(max(n, 1) * p)
    integer :: d(max(n, 1) * p), req, reqs(2)
    integer(c_int64_t) :: b1, b2
    call fill(s, me, 51)
    a = s
    b = s
    c = -1
    d = -1
    call kcoll_on(.false.)
    call MPI_IBCAST(a, n, MPI_INTEGER, 0, MPI_COMM_WORLD, req, ierr)
    call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)
    call MPI_IALLTOALL(s, n, MPI_INTEGER, c, n, MPI_INTEGER, MPI_COMM_WORLD, req, ierr)
    call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)
    call kcoll_on(.true.)
    b1 = kcoll_calls('MPI_Ibcast')
    b2 = kcoll_calls('MPI_Ialltoall')
    call MPI_IBCAST(b, n, MPI_INTEGER, 0, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_IALLTOALL(s, n, MPI_INTEGER, d, n, MPI_INTEGER, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_WAITALL(2, reqs, MPI_STATUSES_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS .and. all(a == b) .and. all(c == d), &
               'MPI_IBCAST / MPI_IALLTOALL results')
    call check(all(reqs == MPI_REQUEST_NULL), 'MPI_WAITALL frees the requests')
    call check_path('MPI_Ibcast', b1, 'MPI_IBCAST')
    call check_path('MPI_Ialltoall', b2, 'MPI_IALLTOALL')

    a = s
    b = s
    call kcoll_on(.false.)
    call MPI_IALLREDUCE(MPI_IN_PLACE, a, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req, ierr)
    call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)
    call kcoll_on(.true.)
    b1 = kcoll_calls('MPI_Iallreduce')
    call MPI_IALLREDUCE(MPI_IN_PLACE, b, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req, ierr)
    call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS .and. all(a == b), 'MPI_IALLREDUCE in place result')
    call check_path('MPI_Iallreduce', b1, 'MPI_IALLREDUCE')
  end subroutine

  subroutine t_barrier()
    integer(c_int64_t) :: before
    call kcoll_on(.true.)
    before = kcoll_calls('MPI_Barrier')
    call MPI_BARRIER(MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_BARRIER')
    call check_path('MPI_Barrier', before, 'MPI_BARRIER')
  end subroutine

  ! The Fortran datatypes with the operations MPI defines on them; the
  ! values are exact in every order of summation, so any order the host
  ! uses gives the same bits
  subroutine t_types()
    integer, parameter :: m = 301
    double precision :: d1(m), d2(m)
    real :: r1(m), r2(m)
    double complex :: z1(m), z2(m)
    logical :: l1(m), l2(m)
    integer(kind=8) :: i1(m), i2(m)
    double precision :: dp1(2, m), dp2(2, m)
    real :: rp1(2, m), rp2(2, m)
    integer :: ip1(2, m), ip2(2, m), i, op, lops(3)
    integer(c_int64_t) :: before

    do i = 1, m
      d1(i) = dble(val(me, i, 61)) * 0.5d0
      r1(i) = real(mod(val(me, i, 62), 1000))
      z1(i) = dcmplx(dble(me + i), dble(i - me))
      i1(i) = int(val(me, i, 63), 8) * 4294967311_8
      dp1(1, i) = dble(mod(val(me, i, 64), 5))   ! ties: the smaller index wins
      dp1(2, i) = dble(me)
      rp1(1, i) = real(mod(val(me, i, 65), 3))
      rp1(2, i) = real(me)
      ip1(1, i) = mod(val(me, i, 66), 4)
      ip1(2, i) = me
    end do

    call kcoll_on(.false.)
    call MPI_ALLREDUCE(d1, d2, m, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    call kcoll_on(.true.)
    before = kcoll_calls('MPI_Allreduce')
    call MPI_ALLREDUCE(MPI_IN_PLACE, d1, m, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(all(transfer(d1, [0_1]) == transfer(d2, [0_1])), 'DOUBLE PRECISION SUM')
    call check_path('MPI_Allreduce', before, 'DOUBLE PRECISION SUM')

    call kcoll_on(.false.)
    call MPI_ALLREDUCE(r1, r2, m, MPI_REAL, MPI_MAX, MPI_COMM_WORLD, ierr)
    call kcoll_on(.true.)
    before = kcoll_calls('MPI_Allreduce')
    call MPI_ALLREDUCE(MPI_IN_PLACE, r1, m, MPI_REAL, MPI_MAX, MPI_COMM_WORLD, ierr)
    call check(all(transfer(r1, [0_1]) == transfer(r2, [0_1])), 'REAL MAX')
    call check_path('MPI_Allreduce', before, 'REAL MAX')

    call kcoll_on(.false.)
    call MPI_ALLREDUCE(z1, z2, m, MPI_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD, ierr)
    call kcoll_on(.true.)
    before = kcoll_calls('MPI_Allreduce')
    call MPI_ALLREDUCE(MPI_IN_PLACE, z1, m, MPI_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(all(transfer(z1, [0_1]) == transfer(z2, [0_1])), 'DOUBLE COMPLEX SUM')
    call check_path('MPI_Allreduce', before, 'DOUBLE COMPLEX SUM')

    call kcoll_on(.false.)
    call MPI_ALLREDUCE(i1, i2, m, MPI_INTEGER8, MPI_BXOR, MPI_COMM_WORLD, ierr)
    call kcoll_on(.true.)
    before = kcoll_calls('MPI_Allreduce')
    call MPI_ALLREDUCE(MPI_IN_PLACE, i1, m, MPI_INTEGER8, MPI_BXOR, MPI_COMM_WORLD, ierr)
    call check(all(i1 == i2), 'INTEGER*8 BXOR')
    call check_path('MPI_Allreduce', before, 'INTEGER*8 BXOR')

    lops = (/ MPI_LAND, MPI_LOR, MPI_LXOR /)
    do op = 1, 3
      do i = 1, m
        l1(i) = mod(i + me, op + 1) == 0
      end do
      call kcoll_on(.false.)
      call MPI_ALLREDUCE(l1, l2, m, MPI_LOGICAL, lops(op), MPI_COMM_WORLD, ierr)
      call kcoll_on(.true.)
      before = kcoll_calls('MPI_Allreduce')
      call MPI_ALLREDUCE(MPI_IN_PLACE, l1, m, MPI_LOGICAL, lops(op), MPI_COMM_WORLD, ierr)
      call check(all(transfer(l1, [0_1]) == transfer(l2, [0_1])), 'LOGICAL LAND/LOR/LXOR')
      call check_path('MPI_Allreduce', before, 'LOGICAL LAND/LOR/LXOR')
    end do

    call kcoll_on(.false.)
    call MPI_ALLREDUCE(dp1, dp2, m, MPI_2DOUBLE_PRECISION, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
    call kcoll_on(.true.)
    before = kcoll_calls('MPI_Allreduce')
    call MPI_ALLREDUCE(MPI_IN_PLACE, dp1, m, MPI_2DOUBLE_PRECISION, MPI_MAXLOC, &
                       MPI_COMM_WORLD, ierr)
    call check(all(transfer(dp1, [0_1]) == transfer(dp2, [0_1])), '2DOUBLE_PRECISION MAXLOC')
    call check_path('MPI_Allreduce', before, '2DOUBLE_PRECISION MAXLOC')

    call kcoll_on(.false.)
    call MPI_ALLREDUCE(rp1, rp2, m, MPI_2REAL, MPI_MINLOC, MPI_COMM_WORLD, ierr)
    call kcoll_on(.true.)
    before = kcoll_calls('MPI_Allreduce')
    call MPI_ALLREDUCE(MPI_IN_PLACE, rp1, m, MPI_2REAL, MPI_MINLOC, MPI_COMM_WORLD, ierr)
    call check(all(transfer(rp1, [0_1]) == transfer(rp2, [0_1])), '2REAL MINLOC')
    call check_path('MPI_Allreduce', before, '2REAL MINLOC')

    ip2 = -1
    call kcoll_on(.false.)
    call MPI_REDUCE(ip1, ip2, m, MPI_2INTEGER, MPI_MINLOC, 0, MPI_COMM_WORLD, ierr)
    call kcoll_on(.true.)
    before = kcoll_calls('MPI_Reduce')
    if (me == 0) then
      call MPI_REDUCE(MPI_IN_PLACE, ip1, m, MPI_2INTEGER, MPI_MINLOC, 0, MPI_COMM_WORLD, ierr)
      call check(all(ip1 == ip2), '2INTEGER MINLOC')
    else
      call MPI_REDUCE(ip1, ip2, m, MPI_2INTEGER, MPI_MINLOC, 0, MPI_COMM_WORLD, ierr)
    end if
    call check_path('MPI_Reduce', before, '2INTEGER MINLOC')
  end subroutine

  ! a user operation written in Fortran, called by kcoll with Fortran's
  ! arguments
  subroutine t_userop()
    integer, parameter :: m = 500
    integer :: uop, x(m), y(m), calls0
    integer(c_int64_t) :: before
    call MPI_OP_CREATE(addop, .true., uop, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_OP_CREATE')
    call fill(x, me, 71)
    call kcoll_on(.false.)
    call MPI_ALLREDUCE(x, y, m, MPI_INTEGER, uop, MPI_COMM_WORLD, ierr)
    call kcoll_on(.true.)
    calls0 = user_calls
    before = kcoll_calls('MPI_Allreduce')
    call MPI_ALLREDUCE(MPI_IN_PLACE, x, m, MPI_INTEGER, uop, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS .and. all(x == y), 'user operation result')
    call check_path('MPI_Allreduce', before, 'user operation')
    call MPI_ALLREDUCE(user_calls - calls0, calls0, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(calls0 > 0, 'kcoll called the Fortran function')
    call MPI_OP_FREE(uop, ierr)
    call check(ierr == MPI_SUCCESS .and. uop == MPI_OP_NULL, 'MPI_OP_FREE')
  end subroutine
end program
