#!/usr/bin/env bash
# usage: run_quick.sh TEST_ERRORS LAUNCHER [FLAGS...] NP_FLAG
# The quick calibration at MPI_Init (mpi/quick.c, docs/tuning.md): with
# no tuning file, the first job on a machine measures and keeps a file in
# the cache folder, the next one reads it; a damaged file is measured
# again; KCOLL_QUICK_CALIBRATE=0 and a tuning file each leave it out; a
# folder that cannot be written says so in one line and the job runs.
# KCOLL_STATS=1 makes rank 0 say where its prices came from.
set -uo pipefail
prog=$1
shift
dir=$(mktemp -d)
out=$dir/out
fail=0
say() { echo "FAIL: $*"; fail=1; }
run() { # ENV... : one job at 2 ranks, its report in $out
  env KCOLL_STATS=1 KCOLL_CACHE_DIR="$dir/cache" "$@" "${launch[@]}" 2 "$prog" >"$out" 2>&1 ||
    { cat "$out"; say "job failed ($*)"; }
}
launch=("$@")
run KCOLL_QUICK_CALIBRATE=1
grep -E '^# (prices|quick)' "$out"
grep -q '^# quick calibration: measured at MPI_Init in [0-9.]* ms (2 ranks' "$out" || say "first job did not measure"
file=$(ls "$dir"/cache/machine-*.json 2>/dev/null)
[ -n "$file" ] && [ "$(echo "$file" | wc -l)" -eq 1 ] || say "no single cache file: '$file'"
grep -q "^# prices: quick calibration .*, file $file" "$out" || say "first job's prices not the quick calibration's"
grep -q '"source": "quick calibration' "$file" || say "cache file has no quick calibration source"

run KCOLL_QUICK_CALIBRATE=1
grep -E '^# (prices|quick)' "$out"
grep -q "^# quick calibration: read in [0-9.]* ms from $file" "$out" || say "second job did not read the cache"

echo '{ "kcoll_tuning": 1, "cma": { "alpha_us": ' >"$file" # cut short
run KCOLL_QUICK_CALIBRATE=1
grep -q '^# quick calibration: measured' "$out" || say "a damaged cache file was not measured again"
grep -q '"source": "quick calibration' "$file" || say "the damaged cache file was not rewritten"

run KCOLL_QUICK_CALIBRATE=0
grep -q '^# quick calibration' "$out" && say "KCOLL_QUICK_CALIBRATE=0 still calibrated"
grep -q '^# prices: built-in defaults' "$out" || say "KCOLL_QUICK_CALIBRATE=0: not the built-in defaults"

run KCOLL_QUICK_CALIBRATE=1 KCOLL_TUNING="$file"
grep -q '^# quick calibration' "$out" && say "a tuning file was not used alone"
grep -q "^# prices: .*, file $file" "$out" || say "KCOLL_TUNING's file not named"

env KCOLL_STATS=1 KCOLL_QUICK_CALIBRATE=1 KCOLL_CACHE_DIR=/proc/kcoll "${launch[@]}" 2 "$prog" >"$out" 2>&1 ||
  { cat "$out"; say "job with an unwritable cache folder failed"; }
grep -q 'quick calibration not kept in /proc/kcoll/machine-' "$out" || say "unwritable folder: no warning"
grep -q '^# quick calibration: measured .* not kept in' "$out" || say "unwritable folder: report"
rm -rf "$dir"
[ "$fail" -eq 0 ] && echo "quick calibration: measured, kept, read, measured again, left out as told"
exit "$fail"
