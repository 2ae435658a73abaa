#!/usr/bin/env bash
# usage: run_model_choice.sh KCOLL_INFO KCOLL_BENCH LIBKCOLL KCOLL_CALIBRATE LAUNCHER [FLAGS...] NP_FLAG
# With a tuning file in force, kcoll runs what `kcoll-info --explain`
# predicts. The file is this machine's, written by `kcoll-calibrate
# --quick` with libkcoll preloaded (which this also tests: it must finish,
# time kcoll's own calls, leave nothing in /dev/shm and write a file kcoll
# reads), plus two rules (one pins an
# algorithm, one the host MPI). Then, per collective, kcoll-bench's 'auto'
# column runs at 2 ranks under KCOLL_STATS=1 at sizes 4 KiB .. 1 MiB, and
# the statistics table must hold exactly the paths --explain names for
# those sizes (at each size class's middle, where kcoll decides), each
# with the calls of as many sizes as --explain gave it. And KCOLL_TRACE
# names each call's choice.
set -uo pipefail
info=$1 bench=$2 lib=$3 cal=$4
shift 4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
say() { echo "FAIL: $*"; fail=1; }

# 1. calibration
shm_before=$(ls /dev/shm | grep -c '^kcoll-cal-' || true)
if ! "$@" 2 env LD_PRELOAD="$lib" "$cal" --quick -o "$dir/cal.json" 2>"$dir/cal.err"; then
  cat "$dir/cal.err"
  say "kcoll-calibrate failed"
  exit 1
fi
tail -3 "$dir/cal.err"
grep -q '\[12/12\] writing' "$dir/cal.err" || say "no progress lines on stderr"
grep -q 'call [0-9.]* us per call, call_data [0-9.]* us more' "$dir/cal.err" ||
  { cat "$dir/cal.err"; say "kcoll's own calls were not timed"; }
grep -q 'shm_alpha [0-9.]* us, shm [0-9.]* GB/s' "$dir/cal.err" ||
  { cat "$dir/cal.err"; say "the two-copy engine was not timed"; }
grep -q '"shm_GBps": [0-9]' "$dir/cal.json" || say "no engines.shm_GBps in the file"
grep -q 'skipped' "$dir/cal.err" && { cat "$dir/cal.err"; say "kcoll did not run a forced call"; }
[ "$(ls /dev/shm | grep -c '^kcoll-cal-' || true)" -eq "$shm_before" ] || say "left files in /dev/shm"
grep -q '"alpha_us": [0-9]' "$dir/cal.json" || say "no cma.alpha_us in the file"
sed -i 's|"rules": \[\]|"rules": [\
    {"collective": "MPI_Allgather", "procs": [2, 2], "bytes": [65536, 131072], "algorithm": "bruck"},\
    {"collective": "MPI_Bcast", "procs": [2, 2], "bytes": [262144, 524288], "algorithm": "host"}\
  ]|' "$dir/cal.json"
"$info" --explain MPI_Allgather 2 64K --machine "$dir/cal.json" >"$dir/x" 2>&1 ||
  { cat "$dir/x"; say "kcoll-info cannot read the calibrated file"; }
grep -q '^rule 1 of the tuning file decides this call: bruck' "$dir/x" ||
  { cat "$dir/x"; say "--explain does not name the rule"; }

# 2. choices
sizes="4096 8192 16384 32768 65536 131072 262144 524288 1048576"
for coll in bcast scatter gather allgather alltoall reduce allreduce reduce_scatter_block; do
  out=$dir/$coll.out
  "$@" 2 env LD_PRELOAD="$lib" KCOLL_TUNING="$dir/cal.json" KCOLL_STATS=1 \
    "$bench" -c "$coll" -m 4K:1M -i 2 --no-model >"$out" 2>"$dir/err" ||
    { cat "$out" "$dir/err"; say "$coll: kcoll-bench failed"; continue; }
  name=$(sed -n 's/^# kcoll-bench: \(MPI_[A-Za-z_]*\),.*/\1/p' "$out")
  # expected path per size, from --explain at the class's middle
  : >"$dir/want"
  for b in $sizes; do
    mid=$(awk -v b="$b" 'BEGIN { printf "%d", b * 1.4142135623730951 }')
    KCOLL_TUNING="$dir/cal.json" "$info" --explain "$coll" 2 "$mid" >"$dir/x" 2>&1
    pick=$(sed -n 's/^rule [0-9]* of the tuning file decides this call: \([^;]*\);.*/\1/p' "$dir/x")
    # one engine per call: the model may run the call on shm instead
    [ -n "$pick" ] || pick=$(sed -n 's/^one engine per call.*: on shm the best is \([^ ]*\) at .*: the call runs on shm$/\1/p' "$dir/x")
    # the host at the class's lower end takes the class
    [ -n "$pick" ] || ! grep -q 'the host MPI takes the class' "$dir/x" || pick=host
    [ -n "$pick" ] || pick=$(awk '$1 == "best" { print ($2 == "host" ? "host" : $2) }' "$dir/x")
    pick=${pick%%@*}
    if [ "$pick" = host ]; then echo mpi:below_min_bytes; else echo "kcoll:${pick%%:*}"; fi >>"$dir/want"
  done
  sort "$dir/want" | uniq -c | awk '{ print $2, $1 }' | sort >"$dir/want.n"
  # the paths calls took (not the rows that count some of them again:
  # "shortcut", "adapt:...")
  awk -v c="$name" '$1 == c && $2 ~ /^(kcoll|mpi):/ && $3 > 0 { print $2, $3 }' "$out" |
    sort >"$dir/got"
  total=$(awk '{ s += $2 } END { print s + 0 }' "$dir/got")
  per=$((total / 9))
  awk -v per="$per" '{ print $1, $2 * per }' "$dir/want.n" >"$dir/want.calls"
  echo "$name: predicted $(tr '\n' ' ' <"$dir/want.n")| ran $(tr '\n' ' ' <"$dir/got")"
  if [ "$per" -le 0 ] || ! cmp -s "$dir/want.calls" "$dir/got"; then
    say "$name: the statistics differ from --explain's choices"
    sed -n '/^# kcoll statistics/,$p' "$out"
  fi
done
# 3. KCOLL_TRACE names every call's choice: kcoll's algorithm, or the host
# MPI and why (here KCOLL_MIN_BYTES sends 1 KiB to the host); the columns
# take turns in blocks of 3 iterations, the last one short (7 = 3 + 3 + 1):
# kcoll-bench checks every result against the host's
"$@" 2 env LD_PRELOAD="$lib" KCOLL_TRACE=1 KCOLL_MIN_BYTES=4k \
  "$bench" -c bcast -m 1K:8K -i 7 -b 3 --no-model >"$dir/trace.out" 2>"$dir/trace.err" ||
  { cat "$dir/trace.out" "$dir/trace.err"; say "KCOLL_TRACE: kcoll-bench failed"; }
grep -q '^# kcoll-bench: MPI_Bcast, .*, columns in turns of 3 iterations,' "$dir/trace.out" &&
  [ "$(grep -Ec '^ +[0-9]+ .* 7 +[0-9]+$' "$dir/trace.out")" = 4 ] ||
  { cat "$dir/trace.out"; say "kcoll-bench -i 7 -b 3: not 4 sizes of 7 iterations in turns of 3"; }
grep -q '^kcoll: trace: MPI_Bcast host MPI (below_min_bytes), 1024 bytes$' "$dir/trace.err" ||
  { head -20 "$dir/trace.err"; say "KCOLL_TRACE does not name the host MPI's calls"; }
grep -Eq '^kcoll: trace: MPI_Bcast [a-z_]+[^ ]*, 8192 bytes, root 0' "$dir/trace.err" ||
  { head -20 "$dir/trace.err"; say "KCOLL_TRACE does not name kcoll's algorithm"; }

[ "$fail" -eq 0 ] && echo "kcoll ran what --explain predicts, with the calibrated file and its rules"
exit "$fail"
