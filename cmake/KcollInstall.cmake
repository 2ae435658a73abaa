# How kcoll installs: both builds (one per MPI) into one prefix, side by
# side, the way a distribution packages a library built for several MPIs:
#
#   include/kcoll.h                            the same header for every MPI
#   <libdir>/kcoll/<mpi>/libkcoll.so(.0...)    the library for that MPI
#   <libdir>/pkgconfig/kcoll-<mpi>.pc          pkg-config --libs kcoll-<mpi>
#   bin/kcoll-info.<mpi>, kcoll-bench.<mpi>,   the tools, named like the
#   kcoll-bench-dtype.<mpi>, kcoll-calibrate.<mpi>,  MPI's own (mpirun.openmpi)
#   kcoll-overhead.<mpi>, kcoll-init-cost.<mpi>
#   bin/kcoll-run                              preloads the matching library
#
# <mpi> is KCOLL_MPI_FLAVOR ("openmpi", "mpich"). The build tree keeps its
# own names (build/<mpi>/libkcoll.so, build/<mpi>/kcoll-info).
include(GNUInstallDirs)

set(KCOLL_INSTALL_LIBDIR ${CMAKE_INSTALL_LIBDIR}/kcoll/${KCOLL_MPI_FLAVOR})
# the library finds the MPI it was linked with where the build found it
set_target_properties(kcoll PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS kcoll LIBRARY DESTINATION ${KCOLL_INSTALL_LIBDIR})
install(FILES ${CMAKE_SOURCE_DIR}/include/kcoll.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# The tools link no library of the build tree (they carry the core), so
# they are copied as built, under their MPI's name.
foreach(tool kcoll-info kcoll-bench kcoll-bench-dtype kcoll-calibrate kcoll-overhead
             kcoll-init-cost)
  install(PROGRAMS $<TARGET_FILE:${tool}> DESTINATION ${CMAKE_INSTALL_BINDIR}
          RENAME ${tool}.${KCOLL_MPI_FLAVOR})
endforeach()
install(PROGRAMS ${CMAKE_SOURCE_DIR}/scripts/kcoll-run DESTINATION ${CMAKE_INSTALL_BINDIR})

# The pkg-config file names absolute paths under the prefix the install
# goes to, which `cmake --install --prefix` may change after configuring:
# it is written at install time (DESTDIR stays out of the paths).
if(KCOLL_MPI_FLAVOR STREQUAL "openmpi")
  set(KCOLL_MPI_NAME "Open MPI")
else()
  set(KCOLL_MPI_NAME "MPICH")
endif()
# (directories given relative to the prefix are written as ${prefix}/...)
foreach(d includedir libdir)
  if(d STREQUAL "includedir")
    set(_dir ${CMAKE_INSTALL_INCLUDEDIR})
  else()
    set(_dir ${KCOLL_INSTALL_LIBDIR})
  endif()
  if(IS_ABSOLUTE "${_dir}")
    set(_pc_${d} "${_dir}")
  else()
    set(_pc_${d} "\\\${prefix}/${_dir}")   # kept as ${prefix} in the file
  endif()
endforeach()
set(_pc_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(NOT IS_ABSOLUTE "${_pc_dir}")
  set(_pc_dir "\${CMAKE_INSTALL_PREFIX}/${_pc_dir}")
endif()
install(CODE "
  set(KCOLL_MPI_FLAVOR \"${KCOLL_MPI_FLAVOR}\")
  set(KCOLL_MPI_NAME \"${KCOLL_MPI_NAME}\")
  set(KCOLL_VERSION \"${PROJECT_VERSION}\")
  set(KCOLL_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  set(KCOLL_PC_INCLUDEDIR \"${_pc_includedir}\")
  set(KCOLL_PC_LIBDIR \"${_pc_libdir}\")
  set(_pc \"\$ENV{DESTDIR}${_pc_dir}/kcoll-${KCOLL_MPI_FLAVOR}.pc\")
  message(STATUS \"Installing: \${_pc}\")
  configure_file(\"${CMAKE_SOURCE_DIR}/cmake/kcoll.pc.in\" \"\${_pc}\" @ONLY)
  list(APPEND CMAKE_INSTALL_MANIFEST_FILES \"\${_pc}\")
")
