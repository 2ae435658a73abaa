#!/usr/bin/env bash
# One command on a fresh machine: install what is missing, build kcoll for
# Open MPI and MPICH, show kcoll-info, then run the broadcast benchmark at
# 2 ranks under each MPI: the host MPI alone (PMPI_Bcast) and the host MPI
# with kcoll preloaded (MPI_Bcast), in the same run, alternating.
# Results: bench-results/bcast.csv and bench-results/bcast.png.
#   scripts/quickstart.sh [extra kcoll-bench options, e.g. -m 16K:1M]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --plot
scripts/build.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo
build/openmpi/kcoll-info
mkdir -p bench-results
csv=bench-results/bcast.csv
rm -f "$csv"
algos=auto,direct_read,knomial:k=2,scatter_allgather,split_rw
for mpi in openmpi mpich; do
  lib=$PWD/build/$mpi/libkcoll.so
  bench=build/$mpi/kcoll-bench
  echo
  if [ "$mpi" = openmpi ]; then
    mpirun.openmpi -np 2 --bind-to core -x LD_PRELOAD="$lib" "$bench" -a "$algos" --csv "$csv" "$@"
  else
    mpiexec.mpich -np 2 -bind-to core -genv LD_PRELOAD "$lib" "$bench" -a "$algos" --csv "$csv" "$@"
  fi
done
if /usr/bin/python3 scripts/plot_bench.py "$csv" -o bench-results/bcast.png; then
  echo
  echo "plot: bench-results/bcast.png, data: $csv"
fi
