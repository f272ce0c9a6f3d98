# Man pages, written at build time by src/launcher/gen_man.py from what the
# programs print for --help (bdmpiexec -h: the options table, the source of
# docs/options.md too; bdmpicc -h: the wrapper's own description) and from
# include/bdmpi.h for the BDMPI_* calls, so they cannot drift from them.
# Installed under share/man; test tools.man checks them.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(NOT Python3_Interpreter_FOUND)
  message(STATUS "BDMPI: no Python 3: no man pages")
  return()
endif()
set(BDMPI_MAN_DIR ${PROJECT_BINARY_DIR}/man)
set(gen ${PROJECT_SOURCE_DIR}/src/launcher/gen_man.py)
file(MAKE_DIRECTORY ${BDMPI_MAN_DIR}/man1 ${BDMPI_MAN_DIR}/man3)
set(pages ${BDMPI_MAN_DIR}/man1/bdmpiexec.1 ${BDMPI_MAN_DIR}/man1/bdmpicc.1 ${BDMPI_MAN_DIR}/man3/bdmpi.3)
add_custom_command(OUTPUT ${BDMPI_MAN_DIR}/man1/bdmpiexec.1
  COMMAND sh -c "'$<TARGET_FILE:bdmpiexec>' -h | '${Python3_EXECUTABLE}' '${gen}' help bdmpiexec 1 'run MPI programs with BDMPI, out of core' 'bdmpicc(1)' 'bdmpi(3)' > '${BDMPI_MAN_DIR}/man1/bdmpiexec.1'"
  DEPENDS bdmpiexec ${gen} VERBATIM)
add_custom_command(OUTPUT ${BDMPI_MAN_DIR}/man1/bdmpicc.1
  COMMAND sh -c "'${CMAKE_RUNTIME_OUTPUT_DIRECTORY}/bdmpicc' -h | '${Python3_EXECUTABLE}' '${gen}' help bdmpicc 1 'compile and link MPI programs for BDMPI' 'bdmpiexec(1)' 'bdmpi(3)' > '${BDMPI_MAN_DIR}/man1/bdmpicc.1'"
  DEPENDS ${CMAKE_RUNTIME_OUTPUT_DIRECTORY}/bdmpicc ${gen} VERBATIM)
add_custom_command(OUTPUT ${BDMPI_MAN_DIR}/man3/bdmpi.3
  COMMAND ${Python3_EXECUTABLE} ${gen} header ${PROJECT_SOURCE_DIR}/include/bdmpi.h > ${BDMPI_MAN_DIR}/man3/bdmpi.3
  DEPENDS ${PROJECT_SOURCE_DIR}/include/bdmpi.h ${gen})
# The other wrappers and every BDMPI_ call point at those pages.
set(aliases1 bdmpicxx)
if(BDMPI_HAVE_FORTRAN)
  list(APPEND aliases1 bdmpifort bdmpif90 bdmpif77)
endif()
foreach(a IN LISTS aliases1)
  file(WRITE ${BDMPI_MAN_DIR}/man1/${a}.1 ".so man1/bdmpicc.1\n")
  list(APPEND pages ${BDMPI_MAN_DIR}/man1/${a}.1)
endforeach()
file(STRINGS ${PROJECT_SOURCE_DIR}/include/bdmpi.h protos REGEX "^int BDMPI_[A-Za-z_]+\\(")
foreach(p IN LISTS protos)
  string(REGEX REPLACE "^int (BDMPI_[A-Za-z_]+)\\(.*" "\\1" f "${p}")
  file(WRITE ${BDMPI_MAN_DIR}/man3/${f}.3 ".so man3/bdmpi.3\n")
  list(APPEND pages ${BDMPI_MAN_DIR}/man3/${f}.3)
endforeach()
add_custom_target(man ALL DEPENDS ${pages})
install(DIRECTORY ${BDMPI_MAN_DIR}/man1 ${BDMPI_MAN_DIR}/man3 DESTINATION ${CMAKE_INSTALL_MANDIR})
