#!/usr/bin/env bash
# usage: run_keep.sh KCOLL_BENCH LIBKCOLL KCOLL_INFO LAUNCHER [FLAGS...] NP_FLAG
# Decisions kept between jobs (KCOLL_KEEP_DECISIONS, docs/model.md): in a
# fresh cache folder, a job of kcoll-bench (MPI_Allreduce, 8 B - 4 MiB, 2
# ranks, preloaded, without the run-time checks, whose switches follow
# timings) prices its decisions and keeps them; the same job again reads
# them, prices none and runs every call on the same path; a job with
# another model parameter (KCOLL_SHM_CELL) or with keeping off reads
# none; a file that is not one of ours is not read, and the next job's
# end writes a good one. kcoll-info says how many the folder keeps.
set -uo pipefail
bench=$1 lib=$2 info=$3
shift 3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
say() { echo "FAIL: $*"; fail=1; }
job() { # NAME [VAR=VALUE...]: one job, its output in $dir/NAME.txt
  local name=$1
  shift
  env KCOLL_CACHE_DIR="$dir/cache" KCOLL_KEEP_DECISIONS=1 KCOLL_ADAPT=0 KCOLL_STATS=1 "$@" \
    "${launcher[@]}" 2 env LD_PRELOAD="$lib" "$bench" -c allreduce -m 8:4M -i 10 --no-model \
    >"$dir/$name.txt" 2>&1 || { cat "$dir/$name.txt"; say "$name: exit status $?"; }
  line=$(grep '^# cost model:' "$dir/$name.txt")
  echo "$name: $line"
  priced=$(awk '{print $4}' <<<"$line")
  read_=$(awk '{print $21}' <<<"$line")
}
table() { awk '/^# kcoll statistics/,/^# prices/' "$dir/$1.txt"; }
launcher=("$@")

job first
[ "${priced:-0}" -gt 0 ] && [ "$read_" = 0 ] || say "first job: priced '$priced', read '$read_'"
[ -s "$dir/cache/decisions.bin" ] || say "no decisions.bin after the first job"
first=$priced
kept=$(KCOLL_CACHE_DIR="$dir/cache" KCOLL_KEEP_DECISIONS=1 "$info" | grep '^decisions:')
echo "kcoll-info: $kept"
grep -q "^decisions: [1-9][0-9]* kept in $dir/cache/decisions.bin" <<<"$kept" ||
  say "kcoll-info does not name the kept decisions"
job again
[ "$priced" = 0 ] && [ "${read_:-0}" -ge "$first" ] ||
  say "the same job again: priced '$priced' (expected 0), read '$read_' (expected >= $first)"
diff <(table first) <(table again) || say "the paths differ between the first job (<) and again (>)"
[ "$(table again | grep -c 'kcoll:')" -gt 0 ] || say "no call ran in kcoll"
job other KCOLL_SHM_CELL=32KiB
[ "$read_" = 0 ] && [ "${priced:-0}" -gt 0 ] || say "another parameter: read '$read_', priced '$priced'"
job off KCOLL_KEEP_DECISIONS=0
[ "$read_" = 0 ] && [ "${priced:-0}" -gt 0 ] || say "keeping off: read '$read_', priced '$priced'"
head -c 300 /dev/urandom >"$dir/cache/decisions.bin"
job garbage
[ "$read_" = 0 ] && [ "${priced:-0}" -gt 0 ] || say "a foreign file: read '$read_', priced '$priced'"
job after
[ "$priced" = 0 ] && [ "${read_:-0}" -gt 0 ] || say "after a foreign file: read '$read_', priced '$priced'"
ls /dev/shm | grep -q '^kcoll' && say "files left in /dev/shm: $(ls /dev/shm | grep '^kcoll')"
exit $fail
