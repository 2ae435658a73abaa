#!/usr/bin/env bash
# usage: launch.sh MPIEXEC [ARGS...]
#
# Runs one MPI job (the whole launcher command line) and, where the host
# MPI failed to start it before the program ran, runs it once more. Every
# MPI test goes through it (KCOLL_RUN in tests/CMakeLists.txt): Open MPI
# 5.0's launcher now and then cannot start its PMIx server ("listener
# thread failed to start"), now and then crashes adopting the launcher's
# shared topology inside PMIx_Init, and PRRTE now and then loses a daemon
# ("failed to report back"). Those failures say nothing about kcoll; a
# failure after the program started (a wrong result, a crash, a time-out)
# is never run again.
#
# The job's output goes to a file, then out: a daemon the launcher leaves
# behind would keep a pipe's reader waiting.
#
# Sourced (run_fakenodes.sh), it only defines startup_failed.

# startup_failed LOG [PROGRAM]: did the host fail to start the job whose
# output is LOG? With PROGRAM (the program's name) also a process killed by
# a signal, where neither the host's report of it ("Process received
# signal", printed once its handler is in place) nor a word of the
# program's or kcoll's came out.
startup_failed() {
  grep -aq 'PMIx_Init\|daemon failed to report back\|listener thread failed to start' "$1" &&
    return 0
  [ -n "${2:-}" ] && grep -aq '^signal [0-9]* (' "$1" &&
    ! grep -aq 'Process received signal' "$1" && ! grep -aq "kcoll\|$2" "$1"
}

if [[ "${BASH_SOURCE[0]}" != "$0" ]]; then
  return 0
fi

set -uo pipefail
if [ $# -lt 1 ]; then
  echo "usage: launch.sh MPIEXEC [ARGS...]" >&2
  exit 2
fi
log=$(mktemp /tmp/kcoll-launch.XXXXXX) || exit 2
trap 'rm -f "$log"' EXIT
for try in 1 2; do
  "$@" >"$log" 2>&1 </dev/null
  rc=$?
  cat "$log"
  if [ "$rc" -eq 0 ] || [ "$try" -eq 2 ] || ! startup_failed "$log"; then
    break
  fi
  echo "launch.sh: the host MPI failed to start the job; once more" >&2
done
exit "$rc"
