#!/bin/sh
# usage: fakenode_agent.sh [--strict] [ssh options] HOST COMMAND...
#
# Stands in for ssh as Open MPI's launch agent (--mca plm_rsh_agent), so
# that one machine looks like several nodes (run_fakenodes.sh): it skips
# ssh's options, takes the host name and runs the command here, inside a
# new UTS namespace whose host name is HOST. Open MPI then counts every
# distinct name as a node (MPI_COMM_TYPE_SHARED, its shared-memory
# transport).
#
# --strict: the node also gets its own PID namespace (with its own /proc),
# so process ids repeat across nodes, and its own /dev/shm: the directory
# $FAKENODE_SHM_DIR/HOST bind-mounted there when FAKENODE_SHM_DIR is set
# (the caller can then look for leftover segments after the job), else a
# fresh tmpfs. Needs root (or CAP_SYS_ADMIN) for unshare and mount.
strict=0
if [ "${1:-}" = "--strict" ]; then
  strict=1
  shift
fi
while [ $# -gt 0 ]; do
  case "$1" in
    -o|-p|-l|-i|-F|-b|-c|-D|-E|-e|-I|-J|-L|-m|-O|-Q|-R|-S|-W|-w) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
if [ $# -lt 2 ]; then
  echo "fakenode_agent.sh: usage: fakenode_agent.sh [--strict] [ssh options] HOST COMMAND..." >&2
  exit 255
fi
host=$1
shift
if [ "$strict" = 0 ]; then
  exec unshare --uts sh -c 'hostname "$0" && exec sh -c "$1"' "$host" "$*"
fi
# shellcheck disable=SC2016 # expanded by the inner shell
exec unshare --uts --mount --pid --fork --mount-proc sh -c '
  hostname "$0" || exit 255
  if [ -n "${FAKENODE_SHM_DIR:-}" ]; then
    mkdir -p "$FAKENODE_SHM_DIR/$0" && mount --bind "$FAKENODE_SHM_DIR/$0" /dev/shm
  else
    mount -t tmpfs -o mode=1777 tmpfs /dev/shm
  fi || { echo "fakenode_agent.sh: cannot give $0 its own /dev/shm" >&2; exit 255; }
  exec sh -c "$1"' "$host" "$*"
