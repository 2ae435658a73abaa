#!/usr/bin/env bash
# usage: run_quick.sh TEST_ERRORS LAUNCHER [FLAGS...] NP_FLAG
# The quick calibration at MPI_Init (mpi/quick.c, docs/tuning.md): with
# no tuning file, the first job on a machine measures and keeps a file in
# the cache folder, the next one reads it; a damaged file is measured
# again; KCOLL_QUICK_CALIBRATE=0 and a tuning file each leave it out; a
# folder that cannot be written says so in one line and the job runs; two
# ranks on one CPU measure nothing, and a measurement beside other work on
# the CPUs is neither used nor kept.
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
run KCOLL_QUICK_CALIBRATE=1 KCOLL_QUICK_BUSY=100
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
run KCOLL_QUICK_CALIBRATE=1 KCOLL_QUICK_BUSY=100
grep -q '^# quick calibration: measured' "$out" || say "a damaged cache file was not measured again"
grep -q '"source": "quick calibration' "$file" || say "the damaged cache file was not rewritten"

run KCOLL_QUICK_CALIBRATE=0
grep -q '^# quick calibration' "$out" && say "KCOLL_QUICK_CALIBRATE=0 still calibrated"
grep -q '^# prices: built-in defaults' "$out" || say "KCOLL_QUICK_CALIBRATE=0: not the built-in defaults"

run KCOLL_QUICK_CALIBRATE=1 KCOLL_TUNING="$file"
grep -q '^# quick calibration' "$out" && say "a tuning file was not used alone"
grep -q "^# prices: .*, file $file" "$out" || say "KCOLL_TUNING's file not named"

env KCOLL_STATS=1 KCOLL_QUICK_CALIBRATE=1 KCOLL_QUICK_BUSY=100 KCOLL_CACHE_DIR=/proc/kcoll "${launch[@]}" 2 "$prog" >"$out" 2>&1 ||
  { cat "$out"; say "job with an unwritable cache folder failed"; }
grep -q 'quick calibration not kept in /proc/kcoll/machine-' "$out" || say "unwritable folder: no warning"
grep -q '^# quick calibration: measured .* not kept in' "$out" || say "unwritable folder: report"
# Two ranks that may run on one CPU only (the launcher bound to it, the
# ranks inheriting it): a crowded node, though the machine has more CPUs;
# timed, every call would wait for the other rank's time slice (seconds).
rm -rf "$dir/cache"
if [ "$(nproc --all)" -ge 2 ]; then
  run KCOLL_QUICK_CALIBRATE=1 taskset -c 0
  grep -E '^# (prices|quick)' "$out"
  grep -q '^# quick calibration: none (2 ranks on 1 CPU: a crowded node' "$out" ||
    say "two ranks on one CPU were not a crowded node"
  ls "$dir"/cache/machine-*.json >/dev/null 2>&1 && say "two ranks on one CPU kept a file"
fi

# Other work on every CPU while the job measures (two busy loops pinned to
# each): a rank that waited for its CPU more than KCOLL_QUICK_BUSY (10%)
# of the measurement's time, twice, leaves it neither used nor kept, and
# says how long it waited; one that waited less keeps it. Which of the two
# happens is the kernel's: a short measurement beside a busy loop now and
# then runs undisturbed, as newly woken tasks are favoured (and ranks the
# launcher does not bind now and then start on one CPU: the jobs above
# accept any wait, KCOLL_QUICK_BUSY=100). Either way the report, the file
# and the prices must agree.
if [ -r /proc/thread-self/schedstat ]; then
  spin=()
  for c in $(seq 0 $(($(nproc) - 1))); do
    for _ in 1 2; do
      taskset -c "$c" sh -c 'while :; do :; done' &
      spin+=($!)
    done
  done
  sleep 0.5
  run KCOLL_QUICK_CALIBRATE=1
  kill "${spin[@]}"
  wait "${spin[@]}" 2>/dev/null
  grep -E '^# (prices|quick)' "$out"
  left=$(sed -n 's/^# quick calibration: measured .* neither used nor kept: a rank waited for its CPU \([0-9.]*\)% of the time, 2 times .*/\1/p' "$out")
  kept=$(sed -n 's/^# quick calibration: measured .* (2 ranks, waited for a CPU \([0-9.]*\)% of it), kept in .*/\1/p' "$out")
  if [ -n "$left" ]; then
    echo "beside busy loops: left out (a rank waited $left% of the time)"
    awk -v w="$left" 'BEGIN { exit !(w > 10) }' || say "left out at a wait of $left%, not over 10%"
    grep -q '^# prices: built-in defaults' "$out" || say "left out, but not the built-in defaults"
    ls "$dir"/cache/machine-*.json >/dev/null 2>&1 && say "left out, but a file was kept"
  elif [ -n "$kept" ]; then
    echo "beside busy loops: the ranks hardly waited ($kept%), kept"
    awk -v w="$kept" 'BEGIN { exit !(w <= 10) }' || say "kept at a wait of $kept%, over 10%"
    ls "$dir"/cache/machine-*.json >/dev/null 2>&1 || say "kept, but no file"
  else
    say "beside busy loops: the report names no wait"
  fi
  rm -rf "$dir/cache"
  run KCOLL_QUICK_CALIBRATE=1 KCOLL_QUICK_BUSY=100
  grep -E '^# (prices|quick)' "$out"
  grep -q '^# quick calibration: measured at MPI_Init in [0-9.]* ms (2 ranks, waited for a CPU' \
    "$out" || say "the job after the busy one did not measure (or did not say its CPU wait)"
  ls "$dir"/cache/machine-*.json >/dev/null 2>&1 || say "the job after the busy one kept no file"
else
  echo "no run delay from this kernel (/proc/thread-self/schedstat): busy-node case not run"
fi
rm -rf "$dir"
[ "$fail" -eq 0 ] &&
  echo "quick calibration: measured, kept, read, measured again, left out as told, not on shared CPUs"
exit "$fail"
