#!/usr/bin/env bash
# The cost model against measurements at 2 ranks (docs/model-validation.md).
# For each MPI and each blocking collective: kcoll-calibrate writes
# this machine's tuning file, then kcoll-bench times the host MPI, kcoll's
# 'auto' and every algorithm of the collective with that file in force,
# printing the model's prediction beside each time (CSV: predicted_us,
# model_choice).
# scripts/model_validation.py turns the CSV files into the tables of
# docs/model-validation.md.
#   scripts/validate_model.sh [extra kcoll-bench options]       (default -m 1K:16M)
#   KCOLL_VALIDATE_MPIS=openmpi KCOLL_VALIDATE_COLLS="bcast gather" scripts/validate_model.sh
# Results: bench-results/validation/<mpi>-<collective>.json and .log (the
# calibrations and their progress lines), <mpi>.csv (the timings), summary.md. Needs scripts/build.sh first; run
# it on an otherwise idle machine (about 16 minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=bench-results/validation
mkdir -p "$out"
[ $# -gt 0 ] || set -- -m 1K:16M
# every blocking collective this kcoll-bench knows (not the i* forms)
known=$(build/openmpi/kcoll-bench -h | sed -n 's/.*collective to time: *\(.*\) (default.*/\1/p')
colls=${KCOLL_VALIDATE_COLLS:-$known}
run() { # mpi, then the program and its arguments
  local mpi=$1
  shift
  if [ "$mpi" = openmpi ]; then
    mpirun.openmpi -np 2 --bind-to core "$@"
  else
    mpiexec.mpich -np 2 -bind-to core "$@"
  fi
}
for mpi in ${KCOLL_VALIDATE_MPIS:-openmpi mpich}; do
  csv=$out/$mpi.csv
  rm -f "$csv"
  for coll in $colls; do
    # This VM's copy rates drift by up to 1.4x within minutes: each
    # collective is priced with a calibration taken just before its run.
    cal=$PWD/$out/$mpi-$coll.json
    echo "== $mpi: calibrating, then $coll"
    # preloaded: the calibration also times kcoll's own calls (call_us);
    # its default repetitions (0.25 s per host point, not --quick's 0.02 s):
    # the host's medians at 1-4 MiB moved by up to 1.4x between quick runs
    if [ "$mpi" = openmpi ]; then
      run "$mpi" -x LD_PRELOAD="$PWD/build/$mpi/libkcoll.so" \
        "build/$mpi/kcoll-calibrate" -o "$cal" 2>"$out/$mpi-$coll.log"
    else
      run "$mpi" -genv LD_PRELOAD "$PWD/build/$mpi/libkcoll.so" \
        "build/$mpi/kcoll-calibrate" -o "$cal" 2>"$out/$mpi-$coll.log"
    fi
    sizes=()
    [ "$coll" = barrier ] && sizes=(-m 0) # no size: one row
    if [ "$mpi" = openmpi ]; then
      run "$mpi" -x LD_PRELOAD="$PWD/build/$mpi/libkcoll.so" -x KCOLL_TUNING="$cal" \
        "build/$mpi/kcoll-bench" -c "$coll" -a auto,all --csv "$csv" "$@" "${sizes[@]}"
    else
      run "$mpi" -genv LD_PRELOAD "$PWD/build/$mpi/libkcoll.so" -genv KCOLL_TUNING "$cal" \
        "build/$mpi/kcoll-bench" -c "$coll" -a auto,all --csv "$csv" "$@" "${sizes[@]}"
    fi
  done
done
/usr/bin/python3 scripts/model_validation.py "$out"/*.csv >"$out/summary.md"
echo "tables: $out/summary.md"
