#!/usr/bin/env bash
# usage: run_kill.sh PROGRAM LAUNCHER [FLAGS...] NP_FLAG
# test_kill SIGKILLs one rank while the others are in kcoll broadcasts.
# The job must end with an error (not hang), and no kcoll name may be left
# in /dev/shm.
set -uo pipefail
prog=$1
shift
shm() { ls /dev/shm 2>/dev/null | grep '^kcoll-' || true; }
before=$(shm)
out=$(mktemp)
timeout 120 "$@" 3 "$prog" >"$out" 2>&1
rc=$?
cat "$out"
rm -f "$out"
after=$(shm)
fail=0
if [ "$rc" -eq 0 ]; then echo "FAIL: the job succeeded although a rank was killed"; fail=1; fi
if [ "$rc" -eq 124 ]; then echo "FAIL: the job hung (killed after 120 s)"; fail=1; fi
if [ "$after" != "$before" ]; then echo "FAIL: left in /dev/shm: $after"; fail=1; fi
[ "$fail" -eq 0 ] && echo "job ended with status $rc; /dev/shm clean"
exit "$fail"
