#!/usr/bin/env bash
# One command on a fresh machine: install what is missing, build kcoll for
# every host MPI (scripts/hosts.sh), show kcoll-info, then benchmark every
# collective kcoll-bench knows at 2 ranks under each of Debian's Open MPI
# 4.1 and MPICH 4.0 and pip's Open MPI 5.0 and MPICH 5.0
# (KCOLL_QUICKSTART_MPIS="openmpi5 mpich5 impi" chooses others; names as in
# scripts/hosts.sh): the host MPI alone (PMPI_*)
# and the host MPI with kcoll preloaded (MPI_*), in the same run,
# alternating (kcoll's own choice: docs/benchmarks.md shows the algorithms
# side by side, kcoll-bench -a).
# Each in both cache states: off-cache (kcoll-bench --cache cold, rotating
# buffers) and on-cache (--cache hot, one buffer, as OSU measures).
# Results: bench-results/<collective>.csv and .png (off-cache),
# bench-results/hot/<collective>.csv and .png (on-cache), and
# bench-results/summary.md (the README's table with both cache states, then
# one table per collective and cache state, every MPI).
#   scripts/quickstart.sh [extra kcoll-bench options, e.g. -m 16K:1M]
#   KCOLL_QUICKSTART_COLLS="bcast allreduce" scripts/quickstart.sh   (a subset)
#   KCOLL_QUICKSTART_CACHE=cold scripts/quickstart.sh   (one cache state)
#   KCOLL_QUICKSTART_REPS=3 scripts/quickstart.sh   (repeat each run; the
#   summary then shows medians over the runs)
#   KCOLL_QUICKSTART_KCOLL=0 scripts/quickstart.sh   (kcoll not preloaded:
#   both columns are the host MPI, and the tables show what the method
#   reads of a library that changes nothing: their noise floor)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --plot
scripts/build.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo
build/openmpi/kcoll-info
mkdir -p bench-results/hot
. scripts/hosts.sh
mpis=
for mpi in ${KCOLL_QUICKSTART_MPIS:-openmpi mpich openmpi5 mpich5}; do
  if [ -f "build/$mpi/libkcoll.so" ]; then mpis="$mpis $mpi"; else echo "quickstart: no build/$mpi: left out"; fi
done
# the collectives this kcoll-bench knows, as listed by its help text
known=$(build/openmpi/kcoll-bench -h | sed -n 's/.*collective to time: *\(.*\) (default.*/\1/p')
colls=${KCOLL_QUICKSTART_COLLS:-$known}
caches=${KCOLL_QUICKSTART_CACHE:-cold hot}
dir_of() { if [ "$1" = hot ]; then echo bench-results/hot; else echo bench-results; fi; }
for coll in $colls; do
  # kcoll's own choice only: a forced algorithm set between calls empties
  # the decision cache, and with it the checks of decisions (docs/adapt.md)
  algos=auto
  for cache in $caches; do
  csv=$(dir_of "$cache")/$coll.csv
  rm -f "$csv"
  for rep in $(seq "${KCOLL_QUICKSTART_REPS:-1}"); do
  for mpi in $mpis; do
    echo
    lib=$PWD/build/$mpi/libkcoll.so
    [ "${KCOLL_QUICKSTART_KCOLL:-1}" = 0 ] && lib=-
    kcoll_host_run "$mpi" 2 "$lib" "build/$mpi/kcoll-bench" -c "$coll" \
      -a "$algos" --cache "$cache" --csv "$csv" "$@"
  done
  done
  /usr/bin/python3 scripts/plot_bench.py "$csv" -o "${csv%.csv}.png" >/dev/null || true
  done
done
files() { for coll in $colls; do f=$(dir_of "$1")/$coll.csv; [ -f "$f" ] && echo "$f"; done; }
cold=$(echo "$caches" | grep -qw cold && files cold || true)
hot=$(echo "$caches" | grep -qw hot && files hot || true)
# (kcoll-bench names its second column nokcoll:auto where kcoll is not preloaded)
variant=kcoll:auto
[ "${KCOLL_QUICKSTART_KCOLL:-1}" = 0 ] && variant=nokcoll:auto
{
  # shellcheck disable=SC2086  # lists of file names without blanks
  if [ -n "$cold" ] && [ -n "$hot" ]; then
    /usr/bin/python3 scripts/bench_table.py --variant $variant --summary $cold --hot $hot
  else
    /usr/bin/python3 scripts/bench_table.py --variant $variant --summary $cold $hot
  fi
  for f in $cold; do echo; echo "off-cache:"; /usr/bin/python3 scripts/bench_table.py --variant $variant "$f"; done
  for f in $hot; do echo; echo "on-cache:"; /usr/bin/python3 scripts/bench_table.py --variant $variant "$f"; done
} >bench-results/summary.md
echo
cat bench-results/summary.md
echo
echo "plots: bench-results/[hot/]<collective>.png, data: bench-results/[hot/]<collective>.csv, tables: bench-results/summary.md"
