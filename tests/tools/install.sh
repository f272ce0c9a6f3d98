#!/bin/bash
# install.sh BUILD_DIR SOURCE_DIR LANGS [CMAKE ARGS...]: an installed BDMPI
# (cmake --install into a temporary prefix, then moved elsewhere: every
# installed file finds its tree from where it is) serves a user's build in
# each way the README gives:
#   - pkg-config (bdmpi.pc, bdmpi-fort.pc) with a plain compiler;
#   - the CMake package: find_package(BDMPI), targets BDMPI::mpi_c/_cxx/_f;
#   - the installed wrappers (bdmpicc -show points into the tree);
#   - the opt-in compatibility directory libexec/bdmpi/compat/bin first on
#     PATH: mpicc/mpiexec by those names, and CMake's find_package(MPI) with
#     no hints at all.
# Every program is run with the installed bdmpiexec and checked to be BDMPI.
# LANGS: ";"-separated, e.g. "C;CXX" or "C;CXX;Fortran".  Exit 0 pass, 1 fail.
set -u
build=$(cd "$1" && pwd); src=$(cd "$2" && pwd); langs=$3; shift 3
user_args=("$@")  # for the find_package(MPI) project (see tests/tools/CMakeLists.txt)
tmp=$(mktemp -d /tmp/bdmpi-install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; return 1; fi; }
has() { [[ ";$langs;" == *";$1;"* ]]; }
hello=$src/tests/tools/findmpi

cmake --install "$build" --prefix "$tmp/staged" > "$tmp/install.log" 2>&1
check "cmake --install succeeds" '[ $? -eq 0 ]'
mv "$tmp/staged" "$tmp/moved"   # relocated: nothing may point at the old place
p=$tmp/moved
lib=$(ls -d "$p"/lib*/ | head -1); lib=${lib%/}
check "the packages are installed" '[ -f "$lib/pkgconfig/bdmpi.pc" ] && [ -f "$lib/cmake/BDMPI/BDMPIConfig.cmake" ] && [ -f "$lib/cmake/BDMPI/BDMPIConfigVersion.cmake" ]'
if has Fortran; then
  check "bdmpi-fort.pc, mpif.h, mpi.mod, mpi_f08.mod and bdmpifort are installed" '[ -f "$lib/pkgconfig/bdmpi-fort.pc" ] && [ -f "$p/include/mpif.h" ] && [ -f "$p/include/mpi.mod" ] && [ -f "$p/include/mpi_f08.mod" ] && [ -x "$p/bin/bdmpifort" ]'
fi
run() {  # run WHAT PROG: 4 ranks under the installed bdmpiexec, output names BDMPI
  local out rc name
  out=$("$p/bin/bdmpiexec" -n 4 -nr 2 "$2" 2>&1); rc=$?
  name=$(basename "$2")
  check "$1" '[ $rc -eq 0 ] && [[ "$out" == *"$name: 4 ranks, BDMPI"* ]]' || echo "$out"
}

# pkg-config
export PKG_CONFIG_PATH=$lib/pkgconfig
cc $(pkg-config --cflags bdmpi) -o "$tmp/pc_c" "$hello/hello_c.c" $(pkg-config --libs bdmpi) \
  && mv "$tmp/pc_c" "$tmp/hello_c" 2>/dev/null
check "pkg-config bdmpi builds a C program" '[ -x "$tmp/hello_c" ]'
run "  which runs" "$tmp/hello_c"
check "pkg-config --variable=mpiexec names the installed bdmpiexec" '[ "$(readlink -f "$(pkg-config --variable=mpiexec bdmpi)")" = "$(readlink -f "$p/bin/bdmpiexec")" ]'
check "pkg-config --modversion is the project version" '[ "$(pkg-config --modversion bdmpi)" = "$("$p/bin/bdmpicc" --showme:version | sed "s/.* //")" ]'
if has Fortran; then
  mkdir -p "$tmp/pcf" && (cd "$tmp/pcf" && gfortran $(pkg-config --cflags bdmpi-fort) -o hello_f "$hello/hello_f.f90" $(pkg-config --libs bdmpi-fort))
  check "pkg-config bdmpi-fort builds a Fortran program" '[ -x "$tmp/pcf/hello_f" ]'
  run "  which runs" "$tmp/pcf/hello_f"
fi
unset PKG_CONFIG_PATH

# The CMake package
cmake -S "$src/tests/tools/bdmpi_pkg" -B "$tmp/pkg" "-DUSER_LANGS=$langs" "-DCMAKE_PREFIX_PATH=$p" > "$tmp/pkg.log" 2>&1 \
  && cmake --build "$tmp/pkg" > "$tmp/pkg-build.log" 2>&1
check "find_package(BDMPI) configures and builds (BDMPI::mpi_c/_cxx/_f)" '[ $? -eq 0 ]' || cat "$tmp/pkg.log" "$tmp/pkg-build.log"
(cd "$tmp/pkg" && ctest --output-on-failure > "$tmp/pkg-test.log" 2>&1)
check "  and its programs run under BDMPI_MPIEXEC" '[ $? -eq 0 ] && [ "$(cd "$tmp/pkg" && ctest -N | grep -c "Test *#")" -eq "$(echo "$langs" | tr ";" "\n" | grep -c .)" ]' || cat "$tmp/pkg-test.log"
out=$(cd "$tmp" && cmake -DCMAKE_PREFIX_PATH="$p" --find-package -DNAME=BDMPI -DCOMPILER_ID=GNU -DLANGUAGE=C -DMODE=EXIST 2>&1)
check "cmake --find-package finds BDMPI" '[[ "$out" == *"BDMPI found"* ]]'

# The man pages
if [ -d "$build/man" ]; then
  check "the man pages are installed and man shows them" '[ -f "$p/share/man/man1/bdmpiexec.1" ] && [[ "$(MANWIDTH=100 man -M "$p/share/man" -P cat bdmpiexec 2>&1)" == *"BDMPIEXEC(1)"*"-genv NAME VALUE"* ]] && [[ "$(man -M "$p/share/man" -P cat 3 BDMPI_Mem_info 2>&1)" == *"BDMPI_Mem_info("* ]]'
fi

# The installed wrappers
out=$("$p/bin/bdmpicc" -show)
check "the installed bdmpicc points into its tree" '[[ "$out" == *"-I$p/"* && "$out" == *"-L$p/"* ]]'
"$p/bin/bdmpicc" -o "$tmp/w_c" "$hello/hello_c.c" && mv "$tmp/w_c" "$tmp/hello_c"
run "the installed bdmpicc builds a program that runs" "$tmp/hello_c"

# The compatibility directory
compat=$p/libexec/bdmpi/compat/bin
mkdir -p "$tmp/cd"
(export PATH=$compat:$PATH
 cd "$tmp/cd" && mpicc -o hello_c "$hello/hello_c.c" && mpiexec -n 4 -nr 2 ./hello_c > out 2>&1)
check "compat: mpicc and mpiexec are BDMPI's" '[ $? -eq 0 ] && grep -q "hello_c: 4 ranks, BDMPI" "$tmp/cd/out"'
(export PATH=$compat:$PATH
 cmake -S "$src/tests/tools/findmpi" -B "$tmp/fm" "-DUSER_LANGS=$langs" "${user_args[@]}" > "$tmp/fm.log" 2>&1 \
   && cmake --build "$tmp/fm" > /dev/null 2>&1 && cd "$tmp/fm" && ctest --output-on-failure > "$tmp/fm-test.log" 2>&1)
check "compat: find_package(MPI) with no hints finds BDMPI's compilers and mpiexec, whose programs run" \
  '[ $? -eq 0 ] && grep -q "USER MPI_C_LIBRARIES=$p/.*libbdmpi" "$tmp/fm.log" && grep -q "USER MPIEXEC_EXECUTABLE=$compat/mpiexec" "$tmp/fm.log"' \
  || { cat "$tmp/fm.log"; cat "$tmp/fm-test.log" 2>/dev/null; }
exit $fail
