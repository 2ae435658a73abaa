#!/usr/bin/env bash
# usage: run_mpi4py_suite.sh PYTHON TESTS LIBKCOLL NP LAUNCHER [FLAGS...] NP_FLAG
# mpi4py's own test suite (TESTS: its test/ folder, which
# scripts/setup-mpi4py.sh fetches; PYTHON: an interpreter whose mpi4py 4
# uses this build's MPI) at NP ranks with kcoll preloaded
# and KCOLL_MIN_BYTES=0, so that kcoll takes every collective it can
# whatever its size. The modules run in the order that once broke kcoll:
# the buffer collectives, then the non-blocking vector ones (mpi4py 4.1.2's
# Iallgatherv lets its count and displacement arrays go when the call
# returns: kcoll must read them at the start, as the host does), then the
# persistent vector ones. Every test must pass, and the statistics must
# show that kcoll ran the calls.
set -uo pipefail
py=$1 tests=$2 lib=$3 np=$4
shift 4
if [ ! -x "$py" ] || [ ! -f "$tests/main.py" ]; then
  echo "FAIL: no mpi4py test suite in $tests or no $py (scripts/setup-mpi4py.sh makes them)"
  exit 1
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
(cd "$tests/.." && "$@" "$np" env LD_PRELOAD="$lib" KCOLL_MIN_BYTES=0 KCOLL_STATS=1 \
    KCOLL_WAIT_WARN_MS=20000 "$py" test/main.py -q \
    -i test_cco_buf -i test_cco_nb_vec -i test_cco_pr_vec) >"$out" 2>&1
rc=$?
grep -v '^\.*$' "$out" | tail -40
fail=0
[ "$rc" -eq 0 ] || { echo "FAIL: exit status $rc"; fail=1; }
# every rank's unittest summary ("Ran N tests", then OK or FAILED (...));
# the ranks' lines may interleave, so they are counted where they stand
[ "$(grep -o 'Ran [0-9]* tests' "$out" | wc -l)" -eq "$np" ] && ! grep -q 'FAILED (' "$out" ||
  { echo "FAIL: not every rank's suite passed"; fail=1; }
if grep -q '^kcoll: error' "$out"; then
  echo "FAIL: kcoll reported errors"
  fail=1
fi
for coll in MPI_Allgather MPI_Allreduce MPI_Iallgatherv MPI_Igatherv MPI_Iscatterv MPI_Ialltoallv; do
  calls=$(awk -v c="$coll" '$1 == c && $2 ~ /^kcoll:/ { n += $3 } END { print n + 0 }' "$out")
  [ "$calls" -gt 0 ] || { echo "FAIL: kcoll ran no $coll"; fail=1; }
done
[ "$fail" -eq 0 ] && echo "mpi4py's own suite at $np ranks with kcoll: passed"
exit "$fail"
