#!/usr/bin/env bash
# Configure and build kcoll once per MPI: build/openmpi and build/mpich.
# Extra arguments go to cmake's configure step (e.g. -DKCOLL_WERROR=ON).
set -euo pipefail
cd "$(dirname "$0")/.."
for mpi in openmpi mpich; do
  cmake -S . -B "build/$mpi" -DMPI_C_COMPILER="mpicc.$mpi" "$@" >"build-$mpi.log" 2>&1 ||
    { cat "build-$mpi.log"; exit 1; }
  rm -f "build-$mpi.log"
  cmake --build "build/$mpi" -j"$(nproc)" 2>&1 | grep -E "warning:|error:|Error [0-9]" || true
  test -f "build/$mpi/libkcoll.so" || { echo "build/$mpi: build failed"; exit 1; }
  echo "build: build/$mpi/libkcoll.so ($mpi)"
done
