#!/usr/bin/env bash
# usage: run_preload.sh LIBKCOLL PROGRAM LAUNCHER [FLAGS...] NP_FLAG
# Runs an MPI program that is not linked with kcoll under LD_PRELOAD, the
# way users run existing binaries. Only the ranks get the preload, not the
# launcher.
set -euo pipefail
lib=$1 prog=$2
shift 2
exec "$@" 2 env LD_PRELOAD="$lib" "$prog"
