#!/usr/bin/env bash
# mpi4py's own test suite, for tests/python/run_mpi4py_suite.sh: a virtual
# environment in build/mpi4py-openmpi with mpi4py 4.1.2 built from its
# source against Debian's Open MPI (mpicc.openmpi) and numpy, and the
# suite's test/ folder from the same source. mpi4py 4 is what pip gives
# users today; Debian's python3-mpi4py (3.1) is older and has no suite
# installed. Built without optimization (-O0: a quarter of the build
# time; the suite tests behaviour, not speed). Needs python3-venv and the package index (PyPI); does
# nothing when the environment is there already.
#   scripts/setup-mpi4py.sh        (scripts/setup.sh runs it)
set -euo pipefail
cd "$(dirname "$0")/.."
version=4.1.2
dir=build/mpi4py-openmpi
if [ -x "$dir/venv/bin/python" ] && [ -f "$dir/mpi4py-$version/test/main.py" ] &&
   "$dir/venv/bin/python" -c "import mpi4py, numpy; assert mpi4py.__version__ == '$version'" 2>/dev/null; then
  exit 0
fi
rm -rf "$dir"
mkdir -p "$dir"
python3 -m venv "$dir/venv"
for attempt in 1 2 3; do
  if "$dir/venv/bin/pip" download -q --no-deps --no-binary :all: "mpi4py==$version" -d "$dir" &&
     CFLAGS="-O0 -g0" MPICC=mpicc.openmpi "$dir/venv/bin/pip" install -q numpy "$dir/mpi4py-$version.tar.gz"; then
    tar -xzf "$dir/mpi4py-$version.tar.gz" -C "$dir" "mpi4py-$version/test"
    echo "setup: mpi4py $version and its test suite in $dir"
    exit 0
  fi
  echo "setup: installing mpi4py $version failed (attempt $attempt of 3)"
  sleep $((attempt * 10))
done
exit 1
