#!/usr/bin/env bash
# usage: run_kill.sh PROGRAM LAUNCHER [FLAGS...] NP_FLAG
# Runs test_kill (3 ranks) once per case, up to 3 jobs at a time:
#  - a SIGKILL of the last rank in the middle of collectives of every
#    family kcoll runs, blocking and non-blocking (18 cases): the job must
#    end with an error, within the time limit, every other rank must
#    report its collective's failure within 5 s of the death, and kcoll's
#    error line of every other rank must name the dead rank and its pid;
#  - the last rank returning from main without MPI_Finalize while the
#    others are in a collective (blocking Bcast and non-blocking Alltoall):
#    the same checks as a kill;
#  - the last rank calling MPI_Abort while the others are in a collective
#    (the same two): the job must end with an error status, in time.
# Afterwards no kcoll name may be left in /dev/shm. For kills and exits
# the launcher is told not to kill the other ranks when one dies (Open MPI
# 4: orte_enable_recovery; Open MPI 5: --enable-recovery; MPICH:
# -disable-auto-cleanup), so that they are
# seen noticing it themselves (the job's status says nothing then: Open
# MPI's mpirun returns 0 when the survivors do); MPI_Abort runs with the
# launcher's defaults, which end the whole job. Under MPICH a survivor may
# be ended by the launcher before it reports (see below).
set -uo pipefail
prog=$1
shift
launcher=("$@")
np_flag=${launcher[-1]}
unset 'launcher[-1]'
np=3 victim=2 limit=60
# read whole first: under pipefail, grep -q leaving the pipe early fails it
version=$("${launcher[0]}" --version 2>&1)
if grep -q "Open MPI) [5-9]" <<<"$version"; then
  keep=() keep_flags=(--enable-recovery) # PRRTE's (Open MPI 5)
elif grep -q "Open MPI\|OpenRTE" <<<"$version"; then
  keep=(env OMPI_MCA_orte_enable_recovery=1) keep_flags=()
else
  keep=() keep_flags=(-disable-auto-cleanup)
  # MPICH 4.0's hydra still ends the other ranks soon after one died by a
  # signal, often before they notice (in under 200 ms): there a survivor
  # that did not report is no failure, one that did must be right
  lenient=1
fi
shm() { ls /dev/shm 2>/dev/null | grep '^kcoll-' || true; }
# MPICH's own segments: with -disable-auto-cleanup nobody unlinks those of
# a job whose rank was killed (22 of them per run under MPICH 5), so the
# ones that appear during these jobs are removed at the end (the ranks
# that mapped them are gone; a segment unlinked while mapped stays valid)
host_shm() { ls /dev/shm 2>/dev/null | grep '^mpich_shm_' || true; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
before=$(shm)
host_before=$(host_shm)

cases=()
for fam in bcast scatter gather allgather alltoall barrier reduce allreduce reduce_scatter; do
  for form in blocking nonblocking; do cases+=("$fam $form kill"); done
done
cases+=("bcast blocking exit" "alltoall nonblocking exit" "bcast blocking abort" "alltoall nonblocking abort")

# run_case I: case I into $work/I.out, its status into $work/I.rc
run_case() {
  local i=$1 c pre=() flags=()
  read -r -a c <<<"${cases[$i]}"
  if [ "${c[2]}" != abort ]; then
    pre=("${keep[@]}") flags=("${keep_flags[@]}")
  fi
  timeout -k 5 "$limit" "${pre[@]}" "${launcher[@]}" "${flags[@]}" "$np_flag" "$np" "$prog" "${c[@]}" \
    "$work/stamp.$i" >"$work/$i.out" 2>&1
  echo $? >"$work/$i.rc"
  cat "$work/stamp.$i".log.* >>"$work/$i.out" 2>/dev/null
}

running=0
for i in "${!cases[@]}"; do
  run_case "$i" &
  running=$((running + 1))
  if [ "$running" -ge 3 ]; then
    wait -n
    running=$((running - 1))
  fi
done
wait

fail=0
for i in "${!cases[@]}"; do
  read -r fam form how <<<"${cases[$i]}"
  out=$work/$i.out rc=$(cat "$work/$i.rc")
  bad=()
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    bad+=("the job hung (stopped after $limit s)")
  elif [ "$how" = abort ] && [ "$rc" -eq 0 ]; then
    bad+=("the job succeeded although a rank called MPI_Abort")
  fi
  if [ "$how" != abort ]; then
    pid=$(sed -n 's/^test_kill: victim: rank [0-9]* pid \([0-9]*\).*/\1/p' "$out" | head -1)
    for ((r = 0; r < victim; r++)); do
      ms=$(sed -n "s/^test_kill: rank $r: .* failed after \(-*[0-9]*\) ms: .*/\1/p" "$out" | head -1)
      if [ -z "$ms" ] && [ -n "${lenient:-}" ]; then
        continue
      elif [ -z "$ms" ]; then
        bad+=("rank $r did not report its collective's failure")
      elif [ "$ms" -lt 0 ] || [ "$ms" -gt 5000 ]; then
        bad+=("rank $r noticed the death after $ms ms (more than 5 s)")
      fi
      if [ -z "$pid" ] || ! grep -q "^kcoll: error: .* failed on MPI_COMM_WORLD rank $r: .*rank $victim (pid $pid)" "$out"; then
        bad+=("no kcoll error line of rank $r naming rank $victim (pid ${pid:-?})")
      fi
    done
  fi
  if [ ${#bad[@]} -gt 0 ]; then
    echo "== FAIL: $fam $form $how (exit status $rc):"
    printf '   %s\n' "${bad[@]}"
    sed 's/^/   | /' "$out" | head -40
    fail=1
  else
    echo "== ok: $fam $form $how: exit status $rc; $(grep -c '^test_kill: rank .* failed after' "$out") ranks reported:" \
      "$(sed -n 's/^test_kill: rank \([0-9]*\): .* failed after \([0-9]*\) ms.*/rank \1 after \2 ms/p' "$out" | tr '\n' ';')"
  fi
done
host_left=$(comm -13 <(echo "$host_before") <(host_shm))
for n in $host_left; do rm -f "/dev/shm/$n"; done
[ -n "$host_left" ] && echo "removed $(echo "$host_left" | wc -w) segments the host MPI left for its killed jobs"
left=$(comm -13 <(echo "$before") <(shm))
if [ -n "$left" ]; then
  echo "FAIL: left in /dev/shm: $left"
  fail=1
fi
[ "$fail" -eq 0 ] && echo "all ${#cases[@]} cases: the jobs ended, the deaths were reported, /dev/shm clean"
exit "$fail"
