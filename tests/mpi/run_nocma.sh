#!/usr/bin/env bash
# usage: run_nocma.sh PROGRAM FLAVOR LAUNCHER [FLAGS...] NP_FLAG
# test_nocma forbids cross-memory attach between its ranks, twice:
#  - KCOLL_ENGINE=auto: every call must run on kcoll's two-copy engine and
#    kcoll must say so in exactly one warning line (for the job);
#  - KCOLL_ENGINE=cma: the host MPI must do every call, and kcoll must say
#    in exactly one line that the forced engine cannot run here.
set -uo pipefail
prog=$1
shift 2
# The host MPI must not use CMA itself in this job, or its own large
# messages would fail: Open MPI's vader, UCX and MPICH 4.1+ can use it.
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export UCX_TLS=^cma
# (MPICH 4.1 and later: its own IPC through CMA)
export MPIR_CVAR_CH4_CMA_ENABLE=0
status=0
for engine in auto cma; do
  if [ "$engine" = auto ]; then
    line='kcoll: warning: single-copy transfers are not permitted here, so kcoll runs with two copies through shared memory'
  else
    line='kcoll: warning: KCOLL_ENGINE=cma, but single-copy transfers are not permitted here, so communicators use the host MPI'
  fi
  err=$(mktemp)
  KCOLL_ENGINE=$engine "$@" 2 "$prog" 2>"$err"
  rc=$?
  cat "$err" >&2
  n=$(grep -c "$line" "$err")
  others=$(grep -c 'kcoll: warning' "$err")
  rm -f "$err"
  echo "KCOLL_ENGINE=$engine: exit status $rc, $n expected warning line(s), $others kcoll warning(s) in all"
  [ "$rc" -eq 0 ] && [ "$n" -eq 1 ] && [ "$others" -eq 1 ] || status=1
done
exit $status
