#!/bin/bash
# wrappers.sh BUILD_DIR SOURCE_DIR [EXTRA_CFLAGS]: the compiler wrappers behave like a
# compiler (status and messages pass through, -c adds no link flags, -show
# prints the command), C++ programs build with bdmpicxx, and an installed
# tree (cmake --install) works on its own.
set -u
build=$1; src=$2; extra_cflags=${3:-}
tmp=$(mktemp -d /tmp/bdmpi-wrap.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
cc=$build/bin/bdmpicc; cxx=$build/bin/bdmpicxx; run=$build/bin/bdmpiexec

out=$("$cc" -show -O2 -o prog prog.c)
check "-show prints include and link flags" '[[ "$out" == *"-I"*"prog.c"*"-lbdmpi"* ]]'
out=$("$cc" -show -c prog.c)
check "-show -c has no link flags" '[[ "$out" != *"-lbdmpi"* ]]'
out=$("$cc" -show)
check "-show alone prints the whole compile-and-link command (as MPICH's)" '[[ "$out" == *" -I"*" -L"*"-Wl,-rpath,"*" -lbdmpi"* ]]'
out=$("$cc" -compile-info)
check "-compile-info: compiler and include flags" '[[ "$out" == *" -I"* && "$out" != *"-lbdmpi"* ]]'
out=$("$cc" -link-info)
check "-link-info: compiler and link flags" '[[ "$out" == *" -L"*" -lbdmpi"* ]]'
out=$("$cc" --showme:compile)
check "--showme:compile: only the compile flags" '[[ "$out" == "-I"* && "$out" != *"-lbdmpi"* ]]'
out=$("$cc" -showme:link)
check "-showme:link: only the link flags" '[[ "$out" == "-L"*"-lbdmpi"* && "$out" != *"-I"* ]]'
out=$("$cxx" --showme)
check "--showme: the whole command" '[[ "$out" == *" -I"*" -lbdmpi"* ]]'
want=$(sed -n 's/^#define BDMPI_VERSION_STRING "\(.*\)"/\1/p' "$src/include/mpi.h")
out=$("$cc" --showme:version)
check "--showme:version prints mpi.h's version ($want)" '[ -n "$want" ] && [ "$out" = "bdmpicc: $want" ]'
out=$(BDMPI_CC=my-cc "$cc" -show -c x.c)
check "BDMPI_CC overrides the C compiler" '[[ "$out" == "my-cc "* ]]'
out=$(BDMPI_CXX=my-cxx "$cxx" -show -c x.cpp)
check "BDMPI_CXX overrides the C++ compiler" '[[ "$out" == "my-cxx "* ]]'
out=$("$cc" -show -o "a b" "it's.c")
check "-show quotes words the shell would split" '[[ "$out" == *"-o '"'"'a b'"'"'"* ]]'
"$cc" --showme:nonsense > /dev/null 2> "$tmp/err"; rc=$?
check "an unknown --showme: query fails with a message" '[ $rc -eq 2 ] && grep -q "unknown option" "$tmp/err"'
if [ -x "$build/bin/bdmpifort" ]; then
  fc=$build/bin/bdmpifort
  out=$("$fc" -show)
  check "bdmpifort -show links the Fortran bindings before libbdmpi" '[[ "$out" == *" -I"*" -lbdmpi_f -lbdmpi"* ]]'
  out=$(BDMPI_FC=my-fc "$fc" -show -c x.f90)
  check "BDMPI_FC overrides the Fortran compiler" '[[ "$out" == "my-fc "* && "$out" != *"-lbdmpi"* ]]'
  check "bdmpif90 and bdmpif77 are bdmpifort" '[ "$("$build/bin/bdmpif90" -show)" = "$("$fc" -show)" ] && [ "$("$build/bin/bdmpif77" -show)" = "$("$fc" -show)" ]'
fi
out=$("$cc" -h)
check "-h describes the queries" '[[ "$out" == *"--showme:link"* && "$out" == *"BDMPI_CC"* ]]'

printf 'int main(void) { return syntax error; }\n' > "$tmp/bad.c"
"$cc" -c "$tmp/bad.c" -o "$tmp/bad.o" 2> "$tmp/err"; rc=$?
check "a compile error keeps the compiler's status" '[ $rc -ne 0 ]'
check "and its message" 'grep -q "error" "$tmp/err"'

cat > "$tmp/hello.cpp" <<'CPP'
#include <mpi.h>
#include <vector>
#include <cstdio>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<int> v(1 << 20, rank);  // a managed allocation through operator new
    long sum = 0, tot = 0;
    for (int x : v) sum += x;
    MPI_Allreduce(&sum, &tot, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) std::printf("cxx ok %ld\n", tot);
    MPI_Finalize();
    return tot == (long)(1 << 20) * size * (size - 1) / 2 ? 0 : 1;
}
CPP
"$cxx" -O1 -o "$tmp/hello" "$tmp/hello.cpp"
check "bdmpicxx builds a C++ program" '[ -x "$tmp/hello" ]'
out=$("$run" -ns 3 "$tmp/hello" 2>&1); rc=$?
check "and it runs under bdmpiexec" '[ $rc -eq 0 ] && [[ "$out" == *"cxx ok 3145728"* ]]'

cmake --install "$build" --prefix "$tmp/prefix" > /dev/null 2>&1
# The install-tree wrapper points at the configured prefix; check its files
# and use it against the temporary prefix through its own flags.
check "install puts mpi.h, bdmpi.h, the library and the programs in place" \
  '[ -f "$tmp/prefix/include/mpi.h" ] && [ -f "$tmp/prefix/include/bdmpi.h" ] && ls "$tmp/prefix"/lib*/libbdmpi.so* >/dev/null 2>&1 && [ -x "$tmp/prefix/bin/bdmpiexec" ] && [ -x "$tmp/prefix/bin/bdmprun" ] && [ -x "$tmp/prefix/bin/bdmpicc" ]'
lib=$(dirname "$(ls "$tmp/prefix"/lib*/libbdmpi.so | head -1)")
gcc $extra_cflags -I"$tmp/prefix/include" -o "$tmp/inst" "$src/tests/runtime/extensions.c" -L"$lib" -Wl,-rpath,"$lib" -lbdmpi
out=$("$tmp/prefix/bin/bdmpiexec" -ns 2 "$tmp/inst" 2>&1); rc=$?
check "the installed bdmpiexec runs a program linked to the installed library" '[ $rc -eq 0 ] && [[ "$out" == *PASS* ]]'
exit $fail
