# The host MPIs kcoll is built and tested against (sourced by build.sh,
# test.sh and quickstart.sh; scripts/setup.sh installs them). One line per
# build directory under build/:
#   NAME  MPICC  ENV (KEY=VALUE,... for configure, build and run; - none)  PYTHON (its mpi4py, or -)
# Debian's Open MPI 4.1 and MPICH 4.0, and, from PyPI in virtual
# environments of the build tree (scripts/setup-hosts.sh), Open MPI 5.0,
# MPICH 5.0, MPICH 5.0's MPI-5 standard ABI (mpicc_abi, libmpi_abi) and
# Intel MPI 2021.14.
# Open MPI probes its cm and ucx PMLs in every MPI_Init before it
# chooses ob1 on a machine without a fabric (0.2 s under 4.1), and 5.0's
# wheel also libfabric for its ofi BTL (1.1 s; the component then fails
# its init): named, the same components run (ob1 over shared memory, TCP
# and 5.0's uct) and a 2-rank job starts in 0.13-0.2 s instead of 0.5 and
# 1.2 s.
kcoll_hosts() {
  local h=$PWD/build/hosts
  cat <<HOSTS
openmpi mpicc.openmpi OMPI_MCA_pml=ob1 -
mpich mpicc.mpich - -
openmpi5 $h/openmpi5/bin/mpicc OMPI_MCA_btl=^ofi,OMPI_MCA_pml=ob1 $h/openmpi5/bin/python
mpich5 $h/mpich5/bin/mpicc - $h/mpich5/bin/python
mpich5-abi $h/mpich5/bin/mpicc_abi - -
impi $h/impi/bin/mpicc I_MPI_ROOT=$h/impi -
HOSTS
}
# kcoll_host_env ENV: export the KEY=VALUE pairs of a host's ENV field
kcoll_host_env() {
  [ "$1" = - ] && return 0
  local kv
  IFS=, read -ra kv <<<"$1"
  for p in "${kv[@]}"; do export "${p?}"; done
}
# kcoll_host_run NAME NP LIB PROGRAM [ARGS...]: run PROGRAM on NP ranks of
# this machine, each bound to a core, under host NAME's launcher (the one
# its build found: build/NAME/CMakeCache.txt) and environment, with LIB
# preloaded on every rank (- for none). The ranks inherit the caller's
# environment (a local launch), so KCOLL_* variables set by the caller
# reach them; LD_PRELOAD goes to the ranks only, never to the launcher.
kcoll_host_run() {
  local name=$1 np=$2 lib=$3 env launcher
  shift 3
  env=$(kcoll_hosts | awk -v n="$name" '$1 == n { print $3 }')
  launcher=$(sed -n 's/^MPIEXEC_EXECUTABLE:[A-Z]*=//p' "build/$name/CMakeCache.txt")
  (
    kcoll_host_env "${env:--}"
    # (the whole output first: grep closing the pipe early would make the
    # launcher die of SIGPIPE)
    local version pre=() bind=()
    version=$("$launcher" --version 2>&1 || true)
    # (Open MPI 4.1's mpirun calls itself OpenRTE, 5.0's prterun PRRTE)
    if [[ $version == *"Open MPI"* || $version == *OpenRTE* || $version == *PRRTE* ||
          $version == *open-mpi* ]]; then
      [ "$lib" = - ] || pre=(-x "LD_PRELOAD=$lib")
      "$launcher" -np "$np" --bind-to core "${pre[@]}" "$@"
    else
      # hydra binds with -bind-to; Intel MPI's pins each rank to a core of
      # its own by itself (I_MPI_PIN) and knows no -bind-to
      [[ $version == *"Intel(R) MPI"* ]] || bind=(-bind-to core)
      [ "$lib" = - ] || pre=(-genv LD_PRELOAD "$lib")
      "$launcher" -np "$np" "${bind[@]}" "${pre[@]}" "$@"
    fi
  )
}
