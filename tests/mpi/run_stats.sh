#!/usr/bin/env bash
# usage: run_stats.sh TEST_ERRORS LAUNCHER [FLAGS...] NP_FLAG
# KCOLL_STATS=1: rank 0 prints, at MPI_Finalize, one row per (collective,
# path) summed over ranks. test_errors at 2 ranks makes per rank 2 kcoll
# broadcasts of 256 KiB (forced direct_read), 4 invalid calls and 2 with a bad
# algorithm; the table must say exactly that, and its transfers row that
# the non-root moved 2 x 256 KiB through the cma engine.
set -uo pipefail
prog=$1
shift
out=$(mktemp)
KCOLL_STATS=1 "$@" 2 "$prog" >"$out" 2>/dev/null
rc=$?
cat "$out"
row() { awk -v c="${2:-MPI_Bcast}" -v p="$1" '$1 == c && $2 == p { print $3, $4 }' "$out"; }
fail=0
check() {
  local got
  got=$(row "$1" "${3:-}")
  if [ "$got" != "$2" ]; then echo "FAIL: row $1: '$got', expected '$2'"; fail=1; fi
}
[ "$rc" -eq 0 ] || { echo "FAIL: exit status $rc"; fail=1; }
check kcoll:direct_read "4 1048576"
check mpi:invalid_args "8 0"
check mpi:bad_algo "4 1048576"
check mpi:disabled "2 524288"
check mpi:intercomm "2 524288"
check engine:cma "2 524288" transfers
grep -q '^# kcoll statistics, summed over 2 ranks' "$out" || { echo "FAIL: no header"; fail=1; }
rm -f "$out"
[ "$fail" -eq 0 ] && echo "statistics table as expected"
exit "$fail"
