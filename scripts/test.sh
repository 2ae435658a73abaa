#!/usr/bin/env bash
# The test suite (what CI runs): installs what is missing (scripts/setup.sh:
# Debian's MPIs and, from PyPI into build/hosts/, Open MPI 5.0, MPICH 5.0 and
# Intel MPI 2021.14), builds kcoll against every host MPI with warnings as
# errors (scripts/build.sh), then runs
#   - the unit tests (simulator, executor, model, parameters) once;
#   - the MPI tests, every family at every process count, under the two
#     current MPIs, Open MPI 5.0 and MPICH 5.0 (MPICH 5.0 leaves out 6 and
#     7 ranks: 5 and 8 stand for the odd and the larger counts there):
#     what users run today, and hosts whose own collectives are right, so
#     a difference is kcoll's (but mpi4py's own suite and the fake nodes'
#     mpi.hier under Open MPI 4.1, where they take a third of the time:
#     Open MPI 5's launcher costs more per job; MPICH 5 runs four of
#     mpi.hier's ten layouts);
#   - a subset under each of the others, chosen for what that host still
#     tells: Debian's Open MPI 4.1 its Fortran bindings (which call PMPI_*
#     directly), Debian's python3-mpi4py and mpi4py's own suite built
#     against it, the semantics tests where their defects were found, the
#     dead-peer and preload paths; Debian's MPICH 4.0 the persistent and
#     non-blocking forms at 2 ranks (3 under the others), the semantics
#     test at 2 and 3, and its Fortran bindings; Intel MPI and MPICH 5.0
#     through the MPI-5 standard ABI every collective, blocking and
#     non-blocking, persistent, large-count and derived datatypes, at 2 and
#     3 ranks, byte for byte against that host and on kcoll's paths.
# README "Tests" explains the split (about 30 minutes on 2 cores:
# docs/hosts.md has the parts' times). KCOLL_HOSTS="openmpi5 ..." runs a
# subset of the hosts.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh -DKCOLL_WERROR=ON
. scripts/hosts.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# NAME: what ctest runs in build/NAME (the arguments after ctest); every
# collective, at 2 and 3 ranks, where a host gets a part
every='allgather|alltoall|barrier|bcast|reduce|rooted|nonblocking|persistent|large_count|dtype|semantics|progress|adapt|shortcut|streak|later'
declare -A select=(
  [openmpi5]="-L mpi -E (\\.np7|mpi4py_suite\\.np[34]|^mpi\\.hier)$"
  [mpich5]="-L mpi -E (\\.np[67]|mpi4py_suite\\.np4)$"
  [openmpi]="-R ^mpi\.(fortran\..*|mpi4py.*|semantics\..*|hier|progress\.np3|adapt\.np2|shortcut\.np2|streak\.np2|later\.np2|kill\.np3|preload\.np2|install\..*)$"
  [mpich]="-R ^mpi\.((nonblocking|persistent)\.np2|semantics\.np[23]|progress\.np3|adapt\.np2|shortcut\.np2|streak\.np2|later\.np2|fortran\..*\.np2)$"
  [impi]="-R ^mpi\.(($every)\.np[23]|engines\.np2|semantics\.fakenodes)$"
  [mpich5-abi]="-R ^mpi\.(($every|sessions)\.np[23]|engines\.np2)$"
)
# NAME: the environment of its MPI tests, where a part is thinner. MPICH
# 5's mpi.hier runs four of the ten layouts across fake nodes (one rank a
# node, two uneven ones, round robin): Open MPI 4.1 runs all ten (the
# other fake-node tests choose their own layouts)
declare -A thin=(
  [mpich5]="FAKENODES_ONLY=^2 nodes x 1 rank$|3 nodes, 2.3.1 ranks|2 nodes, 3.1 ranks|round robin"
)
want=" ${KCOLL_HOSTS:-$(kcoll_hosts | cut -d' ' -f1 | tr '\n' ' ')} "
status=0 ran=()
first=
while read -r name cc env _; do
  [[ $want == *" $name "* ]] || continue
  if [ ! -f "build/$name/libkcoll.so" ]; then
    echo "== $name: not built (no $cc): FAIL"
    status=1
    continue
  fi
  (
    kcoll_host_env "$env"
    cd "build/$name"
    if [ -z "$first" ]; then
      echo "== unit tests (build/$name)"
      # (scripts/build.sh builds them in its first build only)
      if ! grep -q '^KCOLL_UNIT_TESTS:BOOL=ON' CMakeCache.txt; then
        echo "build/$name has no unit test programs: FAIL"
        exit 1
      fi
      ctest --output-on-failure -j2 -L unit # simulators: one core each
    fi
    # shellcheck disable=SC2086 # the selection is words
    echo "== MPI tests under $name: ctest ${select[$name]}"
    [ -n "${thin[$name]:-}" ] && export "${thin[$name]}" && echo "   (${thin[$name]})"
    # shellcheck disable=SC2086
    ctest --output-on-failure ${select[$name]} </dev/null
  ) </dev/null || status=1
  first=done
  ran+=("$name")
done < <(kcoll_hosts)
leftover=$(ls /dev/shm | grep '^kcoll-' || true)
if [ -n "$leftover" ]; then
  echo "FAIL: left in /dev/shm: $leftover"
  status=1
fi
[ "$status" -eq 0 ] && echo "all tests passed (unit; MPI under ${ran[*]})"
exit "$status"
