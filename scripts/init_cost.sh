#!/usr/bin/env bash
# What kcoll adds to MPI_Init, measured as a program sees it
# (bench/kcoll_init_cost.c: a program of one MPI_Init, the slowest rank's
# time), 2 ranks bound to cores, under each host MPI named (default: every
# one built), three variants taken in turn, each round in another order:
#   host   the host MPI alone (nothing preloaded)
#   warm   kcoll preloaded, its cache folder holding this machine's files
#          (the quick calibration and the topology: what every run but a
#          machine's first finds)
#   cold   kcoll preloaded, an empty cache folder (a machine's first run:
#          hwloc loads the topology and the quick calibration measures)
# Three times per run: MPI_Init; MPI_Init and a first MPI_Barrier (a host
# sets much of itself up at its first collective, where kcoll's start-up
# calls the host inside MPI_Init); the whole job, launcher start to exit
# (kcoll's loading and MPI_Finalize too). Prints per MPI and time the
# median of each variant and the median of the paired differences
# (warm - host, cold - host: the same round), in milliseconds.
#   scripts/init_cost.sh [-n ROUNDS] [MPI ...]      (default 15 rounds)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=15
if [ "${1:-}" = -n ]; then rounds=$2; shift 2; fi
. scripts/hosts.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpis=("$@")
[ ${#mpis[@]} -gt 0 ] || mapfile -t mpis < <(kcoll_hosts | awk '{ print $1 }')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "| MPI | time | host alone (ms) | kcoll, warm cache (ms) | kcoll, empty cache (ms) | warm - host | empty - host |"
echo "|---|---|---:|---:|---:|---:|---:|"
for mpi in "${mpis[@]}"; do
  [ -x "build/$mpi/kcoll-init-cost" ] || { echo "init_cost: no build/$mpi/kcoll-init-cost: left out" >&2; continue; }
  lib=$PWD/build/$mpi/libkcoll.so
  prog=build/$mpi/kcoll-init-cost
  warm=$work/$mpi-warm
  mkdir -p "$warm"
  # one run to fill the warm folder (not counted)
  KCOLL_CACHE_DIR=$warm kcoll_host_run "$mpi" 2 "$lib" "$prog" >/dev/null
  one() { # variant: prints init,first,job in ms
    local t0 out
    t0=$(date +%s%N)
    out=$(case $1 in
      host) kcoll_host_run "$mpi" 2 - "$prog" ;;
      warm) KCOLL_CACHE_DIR=$warm kcoll_host_run "$mpi" 2 "$lib" "$prog" ;;
      cold) rm -rf "$work/cold"; mkdir "$work/cold"
            KCOLL_CACHE_DIR=$work/cold kcoll_host_run "$mpi" 2 "$lib" "$prog" ;;
    esac)
    echo "$out" | awk -v job="$(( ($(date +%s%N) - t0) / 1000 ))" \
      '$1 == "init_ms" { printf "%s,%s,%.3f", $2, $4, job / 1000 }'
  }
  : >"$work/$mpi.txt"
  orders=("host warm cold" "warm cold host" "cold host warm")
  for r in $(seq "$rounds"); do
    line=$r
    for v in ${orders[$((r % 3))]}; do line="$line $v=$(one "$v")"; done
    echo "$line" >>"$work/$mpi.txt"
  done
  /usr/bin/python3 - "$mpi" "$work/$mpi.txt" <<'PY'
import statistics, sys
mpi, path = sys.argv[1], sys.argv[2]
rows = []
for line in open(path):
    kv = dict(f.split("=") for f in line.split()[1:])
    rows.append({k: [float(x) for x in v.split(",")] for k, v in kv.items()})
names = ("MPI_Init", "MPI_Init + first barrier", "whole job")
for i, name in enumerate(names):
    med = {k: statistics.median(r[k][i] for r in rows) for k in ("host", "warm", "cold")}
    dw = statistics.median(r["warm"][i] - r["host"][i] for r in rows)
    dc = statistics.median(r["cold"][i] - r["host"][i] for r in rows)
    print(f"| {mpi} | {name} | {med['host']:.1f} | {med['warm']:.1f} | {med['cold']:.1f} | "
          f"{dw:+.1f} | {dc:+.1f} |")
PY
done
echo
echo "(${rounds} rounds, medians; the differences are each round's own; 2 ranks, bound to cores)"
