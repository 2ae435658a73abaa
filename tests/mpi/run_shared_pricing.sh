#!/usr/bin/env bash
# usage: run_shared_pricing.sh LAUNCHER [FLAGS...] NP_FLAG -- PROGRAM...
# The ranks of a node price the model's decisions together
# (KCOLL_SHARED_PRICING, docs/model.md): each prices a share of the
# candidates and they exchange their cheapest. Each program runs at 4 ranks
# twice, pricing shared and alone, without the run-time checks (whose
# switches follow timings); both runs must pass, rank 0 must report its
# decisions priced shared in the first and alone in the second, as many in
# each, and the statistics tables (every call's path: the algorithm each
# decision ran) must be the same.
set -uo pipefail
launcher=()
while [ "$1" != "--" ]; do launcher+=("$1"); shift; done
shift
fail=0
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for prog in "$@"; do
  name=$(basename "$prog")
  for sp in 1 0; do
    KCOLL_SHARED_PRICING=$sp KCOLL_ADAPT=0 KCOLL_STATS=1 "${launcher[@]}" 4 "$prog" -q \
      >"$dir/$sp.txt" 2>&1 ||
      { cat "$dir/$sp.txt"; echo "FAIL: $name (shared $sp) exited $?"; fail=1; }
  done
  line() { grep '^# cost model:' "$dir/$1.txt"; }
  echo "$name shared: $(line 1)"
  echo "$name alone:  $(line 0)"
  read -r n1 s1 < <(line 1 | awk '{print $4, $10}')
  read -r n0 s0 < <(line 0 | awk '{print $4, $10}')
  if [ -z "${n1:-}" ] || [ -z "${n0:-}" ] || [ "$n1" -eq 0 ] || [ "$s1" != "$n1" ] ||
     [ "$s0" != 0 ] || [ "$n0" != "$n1" ]; then
    echo "FAIL: $name: decisions priced (shared run) '$n1' of them shared '$s1'; alone '$n0', '$s0'"
    fail=1
  fi
  table() { awk '/^# kcoll statistics/,/^# prices/' "$dir/$1.txt"; }
  if ! diff <(table 1) <(table 0); then
    echo "FAIL: $name: the paths differ with pricing shared (<) and alone (>)"
    fail=1
  fi
  [ "$(table 1 | grep -c 'kcoll:')" -gt 0 ] || { echo "FAIL: $name: no call ran in kcoll"; fail=1; }
done
exit $fail
