# The host MPIs kcoll is built and tested against (sourced by build.sh,
# test.sh and quickstart.sh; scripts/setup.sh installs them). One line per
# build directory under build/:
#   NAME  MPICC  ENV (KEY=VALUE,... for configure, build and run; - none)  PYTHON (its mpi4py, or -)
# Debian's Open MPI 4.1 and MPICH 4.0, and, from PyPI in virtual
# environments of the build tree (scripts/setup-hosts.sh), Open MPI 5.0,
# MPICH 5.0, MPICH 5.0's MPI-5 standard ABI (mpicc_abi, libmpi_abi) and
# Intel MPI 2021.14.
kcoll_hosts() {
  local h=$PWD/build/hosts
  cat <<HOSTS
openmpi mpicc.openmpi - -
mpich mpicc.mpich - -
openmpi5 $h/openmpi5/bin/mpicc - $h/openmpi5/bin/python
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
