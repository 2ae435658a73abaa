#!/usr/bin/env bash
# usage: run_install.sh BUILD_DIR MPI MPICC LAUNCHER [FLAGS...] NP_FLAG
# kcoll installed like a system library, then used the two ways users do:
#   - `cmake --install` of this build into a fresh prefix lays out the
#     per-MPI library, tools and pkg-config file (nothing without the MPI
#     in its name, so the other MPI's install can go beside it);
#   - a program compiled with `pkg-config --cflags --libs kcoll-<mpi>` links
#     the installed library and its collectives run on kcoll's paths;
#   - kcoll-run (installed, and from the source tree) picks this MPI's
#     library for a program of this MPI (--print and a real run, keeping an
#     LD_PRELOAD already set; a Fortran program, where mpif90.<mpi> is;
#     a Python interpreter by its mpi4py when $KCOLL_TEST_PYTHON names
#     one), and refuses a program of the other MPI:
#     with this launcher (the MPIs differ), and with its own launcher (no
#     kcoll built for it in the prefix).
# MPI runs use 2 ranks and KCOLL_MIN_BYTES=0 (every size through kcoll).
set -uo pipefail
build=$1 mpi=$2 mpicc=$3
shift 3
launch=("$@")          # launcher, its flags, the process-count flag
launcher=$1
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d /tmp/kcoll-install-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fail=0
bad() { echo "FAIL: $*"; fail=1; }
export KCOLL_MIN_BYTES=0

echo "== cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; echo "FAIL: cmake --install"; exit 1; }
(cd "$prefix" && find . -type f -o -type l | sort)
lib=$(find "$prefix" -path "*/kcoll/$mpi/libkcoll.so" | head -n 1)
pc=$(find "$prefix" -name "kcoll-$mpi.pc" | head -n 1)
[ -n "$lib" ] || bad "no <libdir>/kcoll/$mpi/libkcoll.so"
[ -n "$pc" ] || bad "no kcoll-$mpi.pc"
[ -f "$prefix/include/kcoll.h" ] || bad "no include/kcoll.h"
for tool in kcoll-info kcoll-bench kcoll-bench-dtype kcoll-calibrate kcoll-overhead kcoll-init-cost; do
  [ -x "$prefix/bin/$tool.$mpi" ] || bad "no bin/$tool.$mpi"
done
[ -x "$prefix/bin/kcoll-run" ] || bad "no bin/kcoll-run"
# every file but the shared header and kcoll-run says which MPI it is for
unnamed=$(cd "$prefix" && find . -type f -o -type l | grep -v -e "$mpi" -e '^./include/kcoll.h$' \
          -e '^./bin/kcoll-run$')
[ -z "$unnamed" ] || bad "installed without the MPI in the name: $unnamed"
info=$("$prefix/bin/kcoll-info.$mpi")
echo "$info" | grep -q "^MPI: $mpi " || bad "kcoll-info.$mpi does not say MPI: $mpi"
[ "$fail" -eq 0 ] || exit 1

echo "== pkg-config kcoll-$mpi"
flags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs "kcoll-$mpi") ||
  { echo "FAIL: pkg-config kcoll-$mpi"; exit 1; }
echo "$flags"
libdir=$(dirname "$lib")
case " $flags " in
  *" -I$prefix/include "*) ;;
  *) bad "Cflags without -I$prefix/include" ;;
esac
case " $flags " in
  *" -L$libdir "*" -lkcoll "*) ;;
  *) bad "Libs without -L$libdir ... -lkcoll" ;;
esac
case " $flags " in
  *" -Wl,-rpath,$libdir "*) ;;
  *) bad "Libs without -Wl,-rpath,$libdir" ;;
esac
# shellcheck disable=SC2086
"$mpicc" -DKCOLL_LINKED "$here/hello_kcoll.c" $flags -o "$tmp/hello_linked" ||
  { echo "FAIL: compiling against kcoll-$mpi.pc"; exit 1; }
deps=$(ldd "$tmp/hello_linked")
echo "$deps" | grep -q "$libdir/libkcoll.so" ||
  bad "hello_linked does not load $libdir/libkcoll.so: $(echo "$deps" | grep kcoll)"
KCOLL_STATS=1 "${launch[@]}" 2 "$tmp/hello_linked" >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
[ "$rc" -eq 0 ] || bad "hello_linked exit status $rc"
grep -Eq '^  MPI_Bcast +kcoll:' "$tmp/out" || bad "no kcoll row for MPI_Bcast in the statistics"
grep -Eq '^  MPI_[A-Za-z_]+ +mpi:' "$tmp/out" && bad "calls went to the host MPI"

echo "== kcoll-run, installed"
"$mpicc" -I"$prefix/include" "$here/hello_kcoll.c" -o "$tmp/hello_plain" ||
  { echo "FAIL: compiling hello_plain"; exit 1; }
run=$prefix/bin/kcoll-run
if [ "$mpi" = openmpi ]; then want="-x LD_PRELOAD=$lib"; else want="-genv LD_PRELOAD $lib"; fi
out=$("$run" --print "${launch[@]}" 2 "$tmp/hello_plain") || bad "kcoll-run --print failed"
echo "$out"
case $out in
  "$launcher $want "*) ;;
  *) bad "kcoll-run --print: expected '$launcher $want ...'" ;;
esac
out=$(LD_PRELOAD=libm.so.6 "$run" --print "${launch[@]}" 2 "$tmp/hello_plain") || bad "kcoll-run --print with LD_PRELOAD failed"
case $out in
  *"LD_PRELOAD"?"libm.so.6:$lib "*) ;;
  *) bad "kcoll-run dropped the LD_PRELOAD already set: $out" ;;
esac
KCOLL_STATS=1 "$run" "${launch[@]}" 2 "$tmp/hello_plain" >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
[ "$rc" -eq 0 ] || bad "kcoll-run ... hello_plain exit status $rc"
grep -Eq '^  MPI_Allreduce +kcoll:' "$tmp/out" || bad "no kcoll row for MPI_Allreduce in the statistics"
grep -Eq '^  MPI_[A-Za-z_]+ +mpi:' "$tmp/out" && bad "calls went to the host MPI"
if [ -n "${KCOLL_TEST_PYTHON:-}" ]; then
  out=$("$run" --print "${launch[@]}" 2 "$KCOLL_TEST_PYTHON" prog.py) || bad "kcoll-run --print python failed"
  echo "$out"
  case $out in
    "$launcher $want "*) ;;
    *) bad "kcoll-run for $KCOLL_TEST_PYTHON (mpi4py): expected '$launcher $want ...'" ;;
  esac
fi

# a Fortran program links the MPI's C library through its Fortran one
fc=mpif90.$mpi
if command -v "$fc" >/dev/null; then
  printf 'program p\n  use mpi\n  integer :: ierr\n  call MPI_Init(ierr)\n  call MPI_Finalize(ierr)\nend program p\n' \
    >"$tmp/f.f90"
  if "$fc" "$tmp/f.f90" -o "$tmp/fortran_prog" 2>"$tmp/fc.log"; then
    out=$("$run" --print "${launch[@]}" 2 "$tmp/fortran_prog") || bad "kcoll-run --print (Fortran) failed"
    echo "$out"
    case $out in
      "$launcher $want "*) ;;
      *) bad "kcoll-run for a Fortran program: expected '$launcher $want ...'" ;;
    esac
  else
    echo "skipped the Fortran program: $fc cannot compile 'use mpi' here"
  fi
else
  echo "skipped the Fortran program: no $fc here"
fi

echo "== kcoll-run, from the source tree"
out=$("$src/scripts/kcoll-run" --print "${launch[@]}" 2 "$tmp/hello_plain" 2>&1)
rc=$?
echo "$out"
# the build under test, when it lies in the source tree (it is linked
# against the program's own MPI library: of several builds of one MPI
# family, e.g. build/openmpi and build/openmpi5, that one)
bdir=$(cd "$build" && pwd -P)
if [ "$(dirname "$bdir")" = "$(cd "$src/build" 2>/dev/null && pwd -P)" ]; then
  case $out in
    *"LD_PRELOAD"?"$bdir/libkcoll.so "*) ;;
    *) bad "scripts/kcoll-run did not pick $bdir/libkcoll.so" ;;
  esac
elif [ -f "$src/build/$mpi/libkcoll.so" ]; then
  case $out in
    *"LD_PRELOAD"?"$src/build/$mpi/libkcoll.so "*) ;;
    *) bad "scripts/kcoll-run did not pick $src/build/$mpi/libkcoll.so" ;;
  esac
else
  [ "$rc" -ne 0 ] && case $out in *"no kcoll built for"*) true ;; *) false ;; esac ||
    bad "scripts/kcoll-run without build/$mpi: expected 'no kcoll built for' and a failure"
fi

if [ -n "${KCOLL_TEST_PYTHON:-}" ] && [ "$(dirname "$bdir")" = "$(cd "$src/build" 2>/dev/null && pwd -P)" ]; then
  # a Python program: the MPI library its mpi4py loads decides (a venv's
  # pip-installed MPI included)
  out=$("$src/scripts/kcoll-run" --print "${launch[@]}" 2 "$KCOLL_TEST_PYTHON" prog.py 2>&1)
  echo "$out"
  case $out in
    *"LD_PRELOAD"?"$bdir/libkcoll.so "*) ;;
    *) bad "scripts/kcoll-run did not pick $bdir/libkcoll.so for $KCOLL_TEST_PYTHON" ;;
  esac
fi

echo "== kcoll-run and a program of the other MPI"
if [ "$mpi" = openmpi ]; then
  other=mpich other_cc=mpicc.mpich other_run=mpiexec.mpich
else
  other=openmpi other_cc=mpicc.openmpi other_run=mpirun.openmpi
fi
if command -v "$other_cc" >/dev/null && command -v "$other_run" >/dev/null; then
  "$other_cc" -I"$prefix/include" "$here/hello_kcoll.c" -o "$tmp/hello_other" ||
    { echo "FAIL: compiling with $other_cc"; exit 1; }
  out=$("$run" --print "${launch[@]}" 2 "$tmp/hello_other" 2>&1)
  rc=$?
  echo "$out"
  [ "$rc" -ne 0 ] && [ "$(echo "$out" | wc -l)" -eq 1 ] &&
    case $out in *"uses "*" but $launcher is "*) true ;; *) false ;; esac ||
    bad "kcoll-run did not refuse, in one line, a program of $other under $launcher"
  out=$("$run" --print "$other_run" -np 2 "$tmp/hello_other" 2>&1)
  rc=$?
  echo "$out"
  [ "$rc" -ne 0 ] && [ "$(echo "$out" | wc -l)" -eq 1 ] &&
    case $out in *"no kcoll built for it"*) true ;; *) false ;; esac ||
    bad "kcoll-run did not refuse, in one line, a program of $other (no kcoll for it in $prefix)"
else
  echo "skipped: no $other_cc or $other_run here"
fi

[ "$fail" -eq 0 ] && echo "install layout, pkg-config and kcoll-run as expected ($mpi)"
exit "$fail"
