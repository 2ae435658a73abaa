#!/usr/bin/env bash
# usage: run_mpi4py.sh PYTHON LIBKCOLL NP LAUNCHER [FLAGS...] NP_FLAG
# Runs test_mpi4py.py (a Python program using mpi4py) at NP ranks with
# kcoll preloaded into the ranks only, KCOLL_MIN_BYTES=0 so that every call
# is kcoll's whatever its size, and KCOLL_STATS=1. The program checks each
# result and its own statistics; here the table rank 0 prints at
# MPI_Finalize (summed over the ranks) must show kcoll rows for every
# collective the program calls and no row of the host MPI.
set -uo pipefail
python=$1 lib=$2 np=$3
shift 3
here=$(dirname "$0")
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$@" "$np" env LD_PRELOAD="$lib" KCOLL_MIN_BYTES=0 KCOLL_STATS=1 \
    "$python" "$here/test_mpi4py.py" >"$out"
rc=$?
cat "$out"
fail=0
[ "$rc" -eq 0 ] || { echo "FAIL: exit status $rc"; fail=1; }
grep -q "^test_mpi4py: $np ranks, .* none by the host MPI" "$out" ||
  { echo "FAIL: test_mpi4py did not finish"; fail=1; }
grep -q "^# kcoll statistics, summed over $np ranks" "$out" ||
  { echo "FAIL: no statistics table for $np ranks"; fail=1; }
for coll in MPI_Bcast MPI_Scatter MPI_Scatterv MPI_Gather MPI_Gatherv MPI_Allgather \
            MPI_Allgatherv MPI_Alltoall MPI_Alltoallv MPI_Allreduce MPI_Barrier \
            MPI_Ibcast MPI_Iallreduce; do
  calls=$(awk -v c="$coll" '$1 == c && $2 ~ /^kcoll:/ { n += $3 } END { print n + 0 }' "$out")
  [ "$calls" -gt 0 ] || { echo "FAIL: no kcoll row for $coll"; fail=1; }
done
if grep -E '^  MPI_[A-Za-z_]+ +mpi:' "$out"; then
  echo "FAIL: calls went to the host MPI (rows above)"
  fail=1
fi
[ "$fail" -eq 0 ] && echo "mpi4py at $np ranks: every collective through kcoll, results correct"
exit "$fail"
