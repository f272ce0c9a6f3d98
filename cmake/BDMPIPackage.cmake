# Install the packages that let other build systems find BDMPI:
#  - bdmpi.pc (and bdmpi-fort.pc with Fortran) for pkg-config;
#  - the CMake package BDMPI (find_package(BDMPI), targets BDMPI::mpi_c,
#    BDMPI::mpi_cxx, BDMPI::mpi_f), hand-written rather than exported
#    because its targets are the installed files, not the build's;
#  - libexec/bdmpi/compat/bin: links named mpicc, mpicxx, mpifort, mpiexec,
#    ... to BDMPI's programs, for tools that only know those names (opt-in:
#    put the directory first on PATH, or give it as MPI_HOME to CMake).
#    The build tree has the same directory.
# All files find their tree relative to where they are installed.
include(CMakePackageConfigHelpers)
file(RELATIVE_PATH BDMPI_REL_BINDIR ${CMAKE_INSTALL_PREFIX} ${CMAKE_INSTALL_FULL_BINDIR})
set(BDMPI_PKGCONFIGDIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
set(BDMPI_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/BDMPI)
file(RELATIVE_PATH BDMPI_PC_TO_PREFIX ${CMAKE_INSTALL_PREFIX}/${BDMPI_PKGCONFIGDIR} ${CMAKE_INSTALL_PREFIX})
file(RELATIVE_PATH BDMPI_CMAKE_TO_PREFIX ${CMAKE_INSTALL_PREFIX}/${BDMPI_CMAKEDIR} ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" BDMPI_PC_TO_PREFIX "${BDMPI_PC_TO_PREFIX}")
string(REGEX REPLACE "/$" "" BDMPI_CMAKE_TO_PREFIX "${BDMPI_CMAKE_TO_PREFIX}")
if(NOT DEFINED BDMPI_FORTRAN_FLAGS)
  set(BDMPI_FORTRAN_FLAGS "")
endif()

set(BDMPI_PC_CFLAGS "${BDMPI_SAN_FLAGS}")
set(BDMPI_PC_LDFLAGS "${BDMPI_SAN_FLAGS}")
set(BDMPI_PC_LIBS "bdmpi")
configure_file(${CMAKE_CURRENT_LIST_DIR}/bdmpi.pc.in ${PROJECT_BINARY_DIR}/pkg/bdmpi.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/pkg/bdmpi.pc DESTINATION ${BDMPI_PKGCONFIGDIR})
if(BDMPI_HAVE_FORTRAN)
  set(BDMPI_PC_CFLAGS "${BDMPI_FORTRAN_FLAGS} ${BDMPI_SAN_FLAGS}")
  set(BDMPI_PC_LIBS "bdmpi_f -lbdmpi")
  configure_file(${CMAKE_CURRENT_LIST_DIR}/bdmpi.pc.in ${PROJECT_BINARY_DIR}/pkg/bdmpi-fort.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/pkg/bdmpi-fort.pc DESTINATION ${BDMPI_PKGCONFIGDIR})
endif()

configure_file(${CMAKE_CURRENT_LIST_DIR}/BDMPIConfig.cmake.in ${PROJECT_BINARY_DIR}/pkg/BDMPIConfig.cmake @ONLY)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/pkg/BDMPIConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/pkg/BDMPIConfig.cmake ${PROJECT_BINARY_DIR}/pkg/BDMPIConfigVersion.cmake
        DESTINATION ${BDMPI_CMAKEDIR})

# The compatibility links: name -> BDMPI program.
set(BDMPI_COMPAT_LINKS mpicc:bdmpicc mpicxx:bdmpicxx mpic++:bdmpicxx mpiCC:bdmpicxx
                       mpiexec:bdmpiexec mpirun:bdmpiexec)
if(BDMPI_HAVE_FORTRAN)
  list(APPEND BDMPI_COMPAT_LINKS mpifort:bdmpifort mpif90:bdmpifort mpif77:bdmpifort)
endif()
set(BDMPI_COMPAT_DIR ${CMAKE_INSTALL_LIBEXECDIR}/bdmpi/compat/bin)
file(RELATIVE_PATH BDMPI_COMPAT_TO_BIN ${CMAKE_INSTALL_PREFIX}/${BDMPI_COMPAT_DIR} ${CMAKE_INSTALL_FULL_BINDIR})
file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/${BDMPI_COMPAT_DIR})
file(RELATIVE_PATH BDMPI_BUILD_COMPAT_TO_BIN ${PROJECT_BINARY_DIR}/${BDMPI_COMPAT_DIR} ${CMAKE_RUNTIME_OUTPUT_DIRECTORY})
foreach(pair IN LISTS BDMPI_COMPAT_LINKS)
  string(REPLACE ":" ";" pair "${pair}")
  list(GET pair 0 link)
  list(GET pair 1 target)
  file(CREATE_LINK ${BDMPI_BUILD_COMPAT_TO_BIN}/${target} ${PROJECT_BINARY_DIR}/${BDMPI_COMPAT_DIR}/${link} SYMBOLIC)
  install(CODE "file(MAKE_DIRECTORY \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${BDMPI_COMPAT_DIR}\")
file(CREATE_LINK \"${BDMPI_COMPAT_TO_BIN}/${target}\" \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${BDMPI_COMPAT_DIR}/${link}\" SYMBOLIC)")
endforeach()
