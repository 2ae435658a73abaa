#!/usr/bin/env bash
# The test suite (what CI runs): installs what is missing, builds kcoll for
# Open MPI and MPICH with warnings as errors, then runs
#   - the unit tests (simulator, executor, parameters) once, and
#   - the MPI tests under both MPIs (np 1..8, oversubscribed; MPICH 1..5 and 8).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh -DKCOLL_WERROR=ON
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
status=0
echo "== unit tests and Open MPI tests"
(cd build/openmpi && ctest --output-on-failure) || status=1
echo "== MPICH tests"
(cd build/mpich && ctest --output-on-failure -L mpi) || status=1
leftover=$(ls /dev/shm | grep '^kcoll-' || true)
if [ -n "$leftover" ]; then
  echo "FAIL: left in /dev/shm: $leftover"
  status=1
fi
[ "$status" -eq 0 ] && echo "all tests passed (unit, Open MPI, MPICH)"
exit "$status"
