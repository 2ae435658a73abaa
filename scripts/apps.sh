#!/usr/bin/env bash
# usage: scripts/apps.sh [-r REPS] [-n NP] [-m "openmpi mpich"] [-o DIR] [CASE...]
#   CASE: asp:<n> (Floyd-Warshall on n vertices) or isort:<class> (S W A B);
#   default: asp:2048 asp:4096 isort:A isort:B. REPS: runs of each case
#   with and without kcoll (default 5); NP: ranks (default 2).
#
# Times the applications of the papers (apps/, docs/applications.md) with
# each MPI's host collectives alone and with libkcoll.so preloaded, in
# alternating runs (host, kcoll, host, kcoll, ...), bound one rank per
# core. Every run must verify its result (check=passed; ASP's checksum the
# same in every run); a preloaded run in which kcoll took no call (its cost
# model gave them all to the host MPI) is noted.
# Prints a Markdown table of the medians: the run's time (the slowest
# rank's), the time in collectives (the ranks' mean) and their ratios;
# writes every RESULT line to DIR/apps-<mpi>.txt (default bench-results).
# Launches MPI jobs: hold the machine's MPI lock around it.
set -uo pipefail
cd "$(dirname "$0")/.."
reps=5 np=2 mpis="openmpi mpich" out=bench-results
while getopts "r:n:m:o:" o; do
  case $o in
    r) reps=$OPTARG ;;
    n) np=$OPTARG ;;
    m) mpis=$OPTARG ;;
    o) out=$OPTARG ;;
    *) sed -n '2,4p' "$0" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=(asp:2048 asp:4096 isort:A isort:B)
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }

status=0
echo "| application | size | ranks | MPI | host MPI (s) | with kcoll (s) | speed-up | in collectives: host (s) | with kcoll (s) | speed-up | share of time in collectives (host, kcoll) |"
echo "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---|"
for mpi in $mpis; do
  build=build/$mpi lib=$PWD/build/$mpi/libkcoll.so
  if [ ! -x "$build/apps/asp" ] || [ ! -f "$lib" ]; then
    echo "apps.sh: $build has no apps/asp or libkcoll.so (scripts/build.sh first)" >&2
    exit 1
  fi
  case $mpi in
    openmpi) run=(mpirun.openmpi -np "$np" --bind-to core) pre=(-x "LD_PRELOAD=$lib") ;;
    mpich) run=(mpiexec.mpich -np "$np" -bind-to core) pre=(-genv LD_PRELOAD "$lib") ;;
  esac
  log=$out/apps-$mpi.txt
  : >"$log"
  for c in "${cases[@]}"; do
    app=${c%%:*} size=${c#*:}
    case $app in
      asp) args=(-n "$size") ;;
      isort) args=(-c "$size") ;;
      *) echo "apps.sh: unknown case $c" >&2; exit 2 ;;
    esac
    for ((i = 0; i < reps; i++)); do
      for with in host kcoll; do
        cmd=("${run[@]}")
        [ $with = kcoll ] && cmd+=("${pre[@]}")
        cmd+=("$build/apps/$app" "${args[@]}")
        line=$("${cmd[@]}" 2>&1 | grep '^RESULT ')
        if [ -z "$line" ]; then
          echo "apps.sh: no result from: ${cmd[*]}" >&2
          status=1
          continue
        fi
        echo "with=$with $line" >>"$log"
        if [ "$(field check <<<"$line")" = FAILED ]; then
          echo "apps.sh: verification FAILED: ${cmd[*]}: $line" >&2
          status=1
        fi
        calls=$(field kcoll_calls <<<"$line")
        if [ $with = kcoll ] && [ "$calls" = none ]; then
          echo "apps.sh: kcoll is not loaded: ${cmd[*]}: $line" >&2
          status=1
        elif [ $with = kcoll ] && [ "${calls%%(*}" = 0 ]; then
          echo "apps.sh: note: kcoll took none of the calls (host MPI chosen): ${cmd[*]}" >&2
        fi
      done
    done
    sums=$(grep " app=$app size=[n]*$size " "$log" | field checksum | sort -u | wc -l)
    if [ "$app" = asp ] && [ "$sums" -ne 1 ]; then
      echo "apps.sh: $c: the checksums differ between runs" >&2
      status=1
    fi
    row() { grep "^with=$1 .* app=$app size=[n]*$size " "$log" | field "$2" | median; }
    th=$(row host time) tk=$(row kcoll time) ch=$(row host coll) ck=$(row kcoll coll)
    sh=$(row host share) sk=$(row kcoll share)
    label=$size
    [ "$app" = asp ] && label="n = $size ($((size * 4 / 1024)) KiB rows)"
    [ "$app" = isort ] && label="class $size"
    awk -v a="$app" -v l="$label" -v p="$np" -v m="$mpi" -v th="$th" -v tk="$tk" -v ch="$ch" \
        -v ck="$ck" -v sh="$sh" -v sk="$sk" 'BEGIN {
      printf "| %s | %s | %d | %s | %.3f | %.3f | %.2fx | %.3f | %.3f | %.2fx | %.0f%%, %.0f%% |\n",
             a, l, p, m == "openmpi" ? "Open MPI" : "MPICH", th, tk, th / tk, ch, ck, ch / ck, sh, sk }'
  done
done
echo
echo "medians of $reps alternating runs each; every RESULT line in $out/apps-<mpi>.txt"
exit $status
