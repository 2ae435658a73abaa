#!/usr/bin/env bash
# Install what kcoll needs on Debian (bookworm) / Ubuntu, where it is
# missing: C and Fortran compilers, CMake, pkg-config, Debian's Open MPI
# and MPICH (and the current ones from PyPI: scripts/setup-hosts.sh), hwloc,
# mpi4py with numpy (the Python test; Debian builds it against Open MPI) and
# util-linux (unshare, for the tests' fake nodes; Debian marks it essential) and
# iproute2 (ip: the fake nodes of Open MPI 5 need a network interface).
#   scripts/setup.sh          build and test dependencies
#   scripts/setup.sh --plot   also matplotlib, for the benchmark plots
set -euo pipefail
pkgs=(gcc gfortran make cmake pkg-config openmpi-bin libopenmpi-dev mpich libmpich-dev libhwloc-dev
      hwloc python3-mpi4py python3-numpy python3-venv util-linux iproute2)
[ "${1:-}" = "--plot" ] && pkgs+=(python3-matplotlib)
need=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  # a package mirror can fail for a moment: try a few times
  for attempt in 1 2 3; do
    if $sudo apt-get update -q &&
       DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${need[@]}"; then
      break
    fi
    echo "setup: apt-get failed (attempt $attempt of 3)"
    [ "$attempt" -eq 3 ] && exit 1
    sleep $((attempt * 10))
  done
fi
# mpi4py 4 and its own test suite, in a virtual environment of the build tree
"$(dirname "$0")/setup-mpi4py.sh"
# Open MPI 5.0, MPICH 5.0 and Intel MPI 2021.14 from PyPI, in virtual
# environments of the build tree (build/hosts/; nothing else changes)
"$(dirname "$0")/setup-hosts.sh"
