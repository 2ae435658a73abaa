#!/usr/bin/env bash
# usage: run_nocma.sh PROGRAM FLAVOR LAUNCHER [FLAGS...] NP_FLAG
# test_nocma forbids cross-memory attach between its ranks; the job must
# pass and print kcoll's warning exactly once (one line, for the job).
set -uo pipefail
prog=$1 flavor=$2
shift 2
# The host MPI must not use CMA itself in this job, or its own large
# messages would fail: Open MPI's vader and UCX both can use it.
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export UCX_TLS=^cma
err=$(mktemp)
"$@" 2 "$prog" 2>"$err"
rc=$?
cat "$err" >&2
n=$(grep -c 'kcoll: warning: single-copy transfers are not permitted' "$err")
rm -f "$err"
echo "exit status $rc, $n warning line(s) from kcoll"
[ "$rc" -eq 0 ] && [ "$n" -eq 1 ]
