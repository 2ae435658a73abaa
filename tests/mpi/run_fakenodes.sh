#!/usr/bin/env bash
# usage: run_fakenodes.sh FLAVOR BUILD_DIR TEST_EXE [ARGS...]
#   FLAVOR: openmpi or mpich (the build's KCOLL_MPI_FLAVOR); BUILD_DIR: the
#   CMake build directory (its launcher, MPIEXEC_EXECUTABLE, is used).
#
# Runs TEST_EXE (test_hier) under several layouts of fake nodes on this one
# machine and fails if any run fails. Open MPI: a hostfile of made-up node
# names, launched through fakenode_agent.sh instead of ssh (each node's
# daemon in its own UTS namespace with the node's name as host name; TCP
# over loopback between nodes). MPICH: hydra's -hosts list with the fork
# launcher (hydra itself tells each process its node; Intel MPI's hydra
# starts its proxies through fakenode_agent.sh). Every run gets
# --expect-nodes=..., so a launcher that places ranks otherwise than the
# layout intends fails the run. Layouts:
#   2 nodes x 1 rank, 2 x 2, 2 x 3, 3 x 2, 3 nodes 2+1+2 and 2+3+1, 2 nodes 3+1, 2 nodes
#   4+2, 2 x 2 placed round robin (rank i on node i mod 2), 4 nodes x 2 (8
#   ranks); Open MPI also
#   2 x 2 with each node in its own PID namespace (process ids repeat
#   across nodes) with its own /dev/shm.
# FAKENODES_ONLY=<regex>: only the layouts whose name matches it.
# One line per layout with its command, the program's output, then its
# verdict and run time. After each run no kcoll-* segment may be left in
# /dev/shm (new ones only: a concurrent job's live segments would count
# too) nor in the strict layout's per-node /dev/shm.
#
# MPICH's collectives busy-poll, which costs milliseconds per call with
# more ranks than cores: there the program gets -q above 2 ranks. The fake
# nodes need unshare (util-linux) and root (UTS, PID and mount namespaces).
set -uo pipefail

if [ $# -lt 3 ]; then
  echo "usage: run_fakenodes.sh openmpi|mpich BUILD_DIR TEST_EXE [ARGS...]" >&2
  exit 2
fi
flavor=$1 build=$2 exe=$3
shift 3
args=("$@")
here=$(cd "$(dirname "$0")" && pwd)
agent=$here/fakenode_agent.sh

launcher=$(sed -n 's/^MPIEXEC_EXECUTABLE:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null)
case "$flavor" in
  openmpi) : "${launcher:=mpirun.openmpi}" ;;
  mpich) : "${launcher:=mpiexec.mpich}" ;;
  *) echo "run_fakenodes.sh: unknown MPI flavor '$flavor' (openmpi or mpich)" >&2; exit 2 ;;
esac
case " nodeA nodeB nodeC nodeD " in
  *" $(hostname) "*) echo "run_fakenodes.sh: this machine's name, $(hostname), is a fake node's" >&2; exit 2 ;;
esac
if ! unshare --uts true 2>/dev/null; then
  echo "run_fakenodes.sh: 'unshare --uts' does not work here (needs util-linux and root)" >&2
  exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/fakenodes.XXXXXX") || exit 1
shmdir=
trap 'rm -rf "$work" ${shmdir:+"$shmdir"}; [ -n "${made_veth:-}" ] && ip link del "$made_veth"' EXIT
shmdir=$(mktemp -d /dev/shm/fakenodes.XXXXXX) || exit 1

# Open MPI: allowed as root; loopback only; a process that waits yields
# its core (the hostfile's slots hide that ranks outnumber the cores).
# The default tree spawn stays: with plm_rsh_no_tree_spawn the daemons get
# --daemonize, and a daemon that leaves its shell, PID 1 of the strict
# layout's namespace, is killed with it (the job hangs). Its routing radix
# (64) makes every daemon here a child of mpirun anyway.
ompi_common=(--mca oob_tcp_if_include lo --mca btl_tcp_if_include lo
             --mca btl self,vader,tcp --bind-to none --mca mpi_yield_when_idle 1)
ompi_agent=(--mca plm_rsh_agent)
# Open MPI 5 launches through PRRTE, whose out-of-band messages refuse the
# loopback interface once several hosts are named: they (and the TCP
# transport) take this machine's first interface with a global IPv4
# address, or else a veth pair made for the run (and removed after)
made_veth=
# the launcher's version read whole first: under pipefail, grep -q leaving a
# pipe early would fail the launcher that still writes to it (SIGPIPE)
version=$("$launcher" --version 2>&1)
if [ "$flavor" = openmpi ] && grep -q "Open MPI) [5-9]" <<<"$version"; then
  ifc=$(ip -o -4 addr show scope global 2>/dev/null | awk '{print $2; exit}')
  if [ -z "$ifc" ]; then
    ifc=kcollfn0
    ip link add kcollfn0 type veth peer name kcollfn1 &&
      ip addr add 10.213.0.1/24 dev kcollfn0 && ip link set kcollfn0 up && ip link set kcollfn1 up ||
      { echo "run_fakenodes.sh: no network interface for PRRTE (and no veth pair)" >&2; exit 1; }
    made_veth=kcollfn0
  fi
  # coll/han of Open MPI 5.0.11 gives wrong MPI_Gather and MPI_Scatter
  # results (and their non-blocking forms) on communicators whose ranks
  # interleave the nodes (round-robin placement; KCOLL_DISABLE=1 too): the
  # host's references would be wrong, so its other components serve here
  ompi_common=(--prtemca oob_tcp_if_include "$ifc" --mca btl_tcp_if_include "$ifc" --mca coll ^han
               --mca btl self,sm,tcp --bind-to none --mca mpi_yield_when_idle 1)
  ompi_agent=(--prtemca plm_ssh_agent)
fi
intel=
if [ "$flavor" = mpich ] && grep -q "Intel(R) MPI" <<<"$version"; then
  intel=1
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# MPICH with UCX: loopback only (UCX_TLS=tcp would hang)
export UCX_NET_DEVICES=lo

kcoll_segments() {
  find /dev/shm -maxdepth 1 -name 'kcoll-*' 2>/dev/null | sort
}

# Open MPI's daemons of a failed layout that outlived their launcher
# (orphans of this installation's prted/orted): ended before the next one
reap_daemons() {
  local bin
  bin=$(dirname "$(command -v "$launcher" 2>/dev/null || echo "$launcher")")
  pkill -f "^$bin/(prted|orted) " 2>/dev/null
  return 0
}

# startup_failed LOG PROGRAM: did the host fail to start the job?
. "$here/launch.sh"

failed=() summary=()
# run_layout NAME NP EXPECTED_NODES HOSTS [strict|bynode]
#   HOSTS: name:slots,...  EXPECTED_NODES: node of each world rank
run_layout() {
  local name=$1 np=$2 expect=$3 hosts=$4 mode=${5:-} cmd=() q=()
  if [ -n "${FAKENODES_ONLY:-}" ] && ! [[ $name =~ $FAKENODES_ONLY ]]; then
    return
  fi
  if [ "$flavor" = mpich ] && [ "$np" -gt 2 ]; then
    q=(-q)
  fi
  if [ "$flavor" = openmpi ]; then
    local hostfile=$work/hosts.$np.${hosts//[:,]/_} agent_cmd=$agent
    tr ',' '\n' <<<"$hosts" | sed 's/:/ slots=/' >"$hostfile"
    cmd=("$launcher" --hostfile "$hostfile" -np "$np")
    [ "$mode" = strict ] && agent_cmd="$agent --strict"
    cmd+=("${ompi_agent[@]}" "$agent_cmd" "${ompi_common[@]}")
    [ "$mode" = bynode ] && cmd+=(--map-by node)
  else
    local h=$hosts
    # hydra: "host:n" places n ranks on host, in blocks; without ":n" (one
    # slot each) ranks go round robin over the hosts
    [ "$mode" = bynode ] && h=$(sed 's/:[0-9]*//g' <<<"$hosts")
    if [ -n "$intel" ]; then
      # Intel MPI's hydra has no fork launcher for a host list: its
      # proxies start through the agent, as Open MPI's daemons do; it
      # places "host:n" blocks from a machine file, round robin with -ppn 1
      local mf=$work/machines.$np.${hosts//[:,]/_}
      tr ',' '\n' <<<"$hosts" >"$mf"
      cmd=("$launcher" -n "$np" -bootstrap ssh -bootstrap-exec "$agent")
      if [ "$mode" = bynode ]; then
        cmd+=(-hosts "$h" -ppn 1)
      else
        cmd+=(-machinefile "$mf")
      fi
    else
      cmd=("$launcher" -n "$np" -hosts "$h" -launcher fork -iface lo)
    fi
  fi
  cmd+=("$exe" "--expect-nodes=$expect" "${q[@]}" "${args[@]}")
  echo "== layout: $name: ${cmd[*]}"
  local before after t0 t1 rc left
  before=$(kcoll_segments)
  t0=$(date +%s.%N)
  local log=$work/out.$np.${hosts//[:,]/_}.$mode try
  for try in 1 2; do
    # into a file, not through a pipe: a daemon the launcher leaves behind
    # would keep a pipe's reader waiting
    FAKENODE_SHM_DIR=$shmdir timeout -k 10 300 "${cmd[@]}" >"$log" 2>&1
    rc=$?
    cat "$log"
    [ "$rc" -eq 0 ] || reap_daemons
    # start-up failures of the host's, before the program (or kcoll) ran
    # (launch.sh says which), tried once more
    if [ "$rc" -eq 0 ] || [ "$try" -eq 2 ] || ! startup_failed "$log" "$(basename "$exe")"; then
      break
    fi
    echo "== layout: $name: the host's start-up failed; once more"
  done
  t1=$(date +%s.%N)
  after=$(kcoll_segments)
  left=$(comm -13 <(echo "$before") <(echo "$after"); find "$shmdir" -name 'kcoll-*' 2>/dev/null)
  local secs
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  if [ -n "$left" ]; then
    echo "FAIL: segments left in /dev/shm after layout '$name':"
    echo "$left"
    find "$shmdir" -name 'kcoll-*' -delete 2>/dev/null
    [ "$rc" -eq 0 ] && rc=1
  fi
  [ "$rc" -eq 124 ] && echo "FAIL: layout '$name' timed out"
  if [ "$rc" -eq 0 ]; then
    summary+=("PASS  ${secs} s  $name")
  else
    summary+=("FAIL  ${secs} s  $name (exit status $rc)")
    failed+=("$name")
  fi
  echo "== layout: $name: exit status $rc, ${secs} s"
}

run_layout "2 nodes x 1 rank" 2 0,1 nodeA:1,nodeB:1
run_layout "2 nodes x 2 ranks" 4 0,0,1,1 nodeA:2,nodeB:2
run_layout "2 nodes x 3 ranks" 6 0,0,0,1,1,1 nodeA:3,nodeB:3
run_layout "3 nodes x 2 ranks" 6 0,0,1,1,2,2 nodeA:2,nodeB:2,nodeC:2
run_layout "3 nodes, 2+1+2 ranks" 5 0,0,1,2,2 nodeA:2,nodeB:1,nodeC:2
run_layout "3 nodes, 2+3+1 ranks" 6 0,0,1,1,1,2 nodeA:2,nodeB:3,nodeC:1
run_layout "2 nodes, 3+1 ranks" 4 0,0,0,1 nodeA:3,nodeB:1
run_layout "2 nodes, 4+2 ranks" 6 0,0,0,0,1,1 nodeA:4,nodeB:2
run_layout "2 nodes x 2 ranks, round robin" 4 0,1,0,1 nodeA:2,nodeB:2 bynode
run_layout "4 nodes x 2 ranks" 8 0,0,1,1,2,2,3,3 nodeA:2,nodeB:2,nodeC:2,nodeD:2
if [ "$flavor" = openmpi ]; then
  run_layout "2 nodes x 2 ranks, own PID namespace and /dev/shm per node" 4 0,0,1,1 \
    nodeA:2,nodeB:2 strict
fi

echo "== fake-node layouts ($flavor):"
printf '   %s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAIL: ${#failed[@]} layout(s) failed"
  exit 1
fi
echo "all layouts passed"
