! What the Fortran tests share: kcoll's C API through ISO_C_BINDING (its
! parameters, to run a reference call on the host MPI with kcoll disabled,
! and its statistics, to see which path a call took) and the checks.
module kcoll_ftest
  use, intrinsic :: iso_c_binding
  implicit none
  interface
    integer(c_int) function kcoll_param_set(name, value) bind(C, name="kcoll_param_set")
      import :: c_int, c_char
      character(kind=c_char), dimension(*), intent(in) :: name, value
    end function
    integer(c_int) function kcoll_stats_get(coll, path, calls, bytes) &
        bind(C, name="kcoll_stats_get")
      import :: c_int, c_char, c_int64_t
      character(kind=c_char), dimension(*), intent(in) :: coll, path
      integer(c_int64_t), intent(out) :: calls, bytes
    end function
  end interface
  integer :: nfail = 0, nchecks = 0
contains
  ! kcoll on (the call goes where kcoll decides; every size to kcoll) or
  ! off (the host MPI does it: the reference)
  subroutine kcoll_on(on)
    logical, intent(in) :: on
    integer(c_int) :: rc
    if (on) then
      rc = kcoll_param_set("DISABLE"//c_null_char, "0"//c_null_char)
    else
      rc = kcoll_param_set("DISABLE"//c_null_char, "1"//c_null_char)
    end if
    rc = kcoll_param_set("MIN_BYTES"//c_null_char, "0"//c_null_char)
  end subroutine

  ! calls kcoll ran for collective coll (the C name, "MPI_Bcast") so far
  integer(c_int64_t) function kcoll_calls(coll)
    character(len=*), intent(in) :: coll
    integer(c_int64_t) :: calls, bytes
    if (kcoll_stats_get(trim(coll)//c_null_char, "kcoll:*"//c_null_char, calls, bytes) /= 0) &
      calls = 0
    kcoll_calls = calls
  end function

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    nchecks = nchecks + 1
    if (.not. ok) then
      nfail = nfail + 1
      if (nfail <= 20) print '(a,a)', 'FAIL: ', what
    end if
  end subroutine

  ! the collective coll ran on kcoll's path once more than `before`
  subroutine check_path(coll, before, what)
    character(len=*), intent(in) :: coll, what
    integer(c_int64_t), intent(in) :: before
    call check(kcoll_calls(coll) == before + 1, trim(what)//': not on kcoll''s path')
  end subroutine
end module
