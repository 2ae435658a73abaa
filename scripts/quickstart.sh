#!/usr/bin/env bash
# One command on a fresh machine: install what is missing, build kcoll for
# Open MPI and MPICH, show kcoll-info, then benchmark every collective
# kcoll-bench knows at 2 ranks under each MPI: the host MPI alone (PMPI_*)
# and the host MPI with kcoll preloaded (MPI_*), in the same run,
# alternating. MPI_Bcast also shows each of its algorithms.
# Results: bench-results/<collective>.csv and .png, and
# bench-results/summary.md (one table per collective, both MPIs).
#   scripts/quickstart.sh [extra kcoll-bench options, e.g. -m 16K:1M]
#   KCOLL_QUICKSTART_COLLS="bcast allreduce" scripts/quickstart.sh   (a subset)
#   KCOLL_QUICKSTART_REPS=3 scripts/quickstart.sh   (repeat each run; the
#   summary then shows medians over the runs)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --plot
scripts/build.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo
build/openmpi/kcoll-info
mkdir -p bench-results
# the collectives this kcoll-bench knows, as listed by its help text
known=$(build/openmpi/kcoll-bench -h | sed -n 's/.*collective to time: *\(.*\) (default.*/\1/p')
colls=${KCOLL_QUICKSTART_COLLS:-$known}
for coll in $colls; do
  csv=bench-results/$coll.csv
  rm -f "$csv"
  algos=auto
  [ "$coll" = bcast ] && algos=auto,direct_read,knomial:k=2,scatter_allgather,split_rw
  for rep in $(seq "${KCOLL_QUICKSTART_REPS:-1}"); do
  for mpi in openmpi mpich; do
    lib=$PWD/build/$mpi/libkcoll.so
    bench=build/$mpi/kcoll-bench
    echo
    if [ "$mpi" = openmpi ]; then
      mpirun.openmpi -np 2 --bind-to core -x LD_PRELOAD="$lib" "$bench" -c "$coll" -a "$algos" --csv "$csv" "$@"
    else
      mpiexec.mpich -np 2 -bind-to core -genv LD_PRELOAD "$lib" "$bench" -c "$coll" -a "$algos" --csv "$csv" "$@"
    fi
  done
  done
  /usr/bin/python3 scripts/plot_bench.py "$csv" -o "bench-results/$coll.png" >/dev/null || true
done
(for coll in $colls; do /usr/bin/python3 scripts/bench_table.py "bench-results/$coll.csv"; done) \
  >bench-results/summary.md
echo
cat bench-results/summary.md
echo
echo "plots: bench-results/<collective>.png, data: bench-results/<collective>.csv, tables: bench-results/summary.md"
