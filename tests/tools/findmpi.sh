#!/bin/bash
# findmpi.sh BUILD_DIR SOURCE_DIR LANGS [EXTRA CMAKE ARGS...]: a user's CMake
# project (tests/tools/findmpi) finds BDMPI with plain find_package(MPI),
# given MPI_<LANG>_COMPILER = BDMPI's wrappers as CMake documents, builds its
# programs with the imported targets MPI::MPI_<LANG> and runs them with the
# MPIEXEC_EXECUTABLE and MPIEXEC_NUMPROC_FLAG it found.  LANGS is a
# ;-separated list such as "C;CXX".  Exit 0 pass, 1 fail.
set -u
build=$1; src=$2; langs=$3; shift 3
tmp=$(mktemp -d /tmp/bdmpi-findmpi.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
args=()
for l in ${langs//;/ }; do
  case $l in
    C) args+=("-DMPI_C_COMPILER=$build/bin/bdmpicc") ;;
    CXX) args+=("-DMPI_CXX_COMPILER=$build/bin/bdmpicxx") ;;
    Fortran) args+=("-DMPI_Fortran_COMPILER=$build/bin/bdmpifort") ;;
  esac
done
echo "== configure"
cmake -S "$src/tests/tools/findmpi" -B "$tmp/b" "-DUSER_LANGS=$langs" "${args[@]}" "$@" > "$tmp/conf" 2>&1
rc=$?
cat "$tmp/conf"
[ $rc -eq 0 ] || { echo "FAIL: find_package(MPI) did not succeed"; exit 1; }
grep -q "USER MPI_C_LIBRARIES=.*libbdmpi" "$tmp/conf" || { echo "FAIL: MPI_C_LIBRARIES is not libbdmpi"; exit 1; }
if [[ ";$langs;" == *";Fortran;"* ]]; then
  grep -q "USER Fortran mpif.h=TRUE mpi=TRUE mpi_f08=TRUE" "$tmp/conf" ||
    { echo "FAIL: FindMPI does not see mpif.h, the module mpi and mpi_f08"; exit 1; }
fi
echo "== build"
cmake --build "$tmp/b" -j2 || { echo "FAIL: the project does not build"; exit 1; }
echo "== run"
(cd "$tmp/b" && ctest --output-on-failure) || { echo "FAIL: its tests failed"; exit 1; }
ntests=$(cd "$tmp/b" && ctest -N | grep -c "Test *#")
nlangs=$(echo "$langs" | tr ';' '\n' | grep -c .)
[ "$ntests" -eq "$nlangs" ] || { echo "FAIL: $ntests tests for $nlangs languages"; exit 1; }
echo "PASS"
