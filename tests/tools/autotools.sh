#!/bin/bash
# autotools.sh BUILD_DIR SOURCE_DIR LANGS: the README's recipes for an
# existing Autotools project and a plain Makefile, followed as written:
#   - Autotools (tests/tools/autotools: configure.ac, Makefile.am):
#     autoreconf, ./configure CC=$B/bin/bdmpicc CXX=... FC=... MPICC=...,
#     make, $B/bin/bdmpiexec -n 8 ./app;
#   - a plain Makefile: make CC=$B/bin/bdmpicc CXX=... FC=...;
#   - the same Makefile with CFLAGS/LDLIBS from pkg-config (bdmpi.pc,
#     bdmpi-fort.pc), PKG_CONFIG_PATH=$B/lib/pkgconfig;
# with B an installed tree (cmake --install to a temporary prefix), and the
# wrappers' recipes also with B the build tree.  Every program runs under
# $B/bin/bdmpiexec -n 8 and must say it ran as 8 ranks of BDMPI.
# LANGS: ";"-separated, e.g. "C;CXX;Fortran".  Exit 0 pass, 1 fail, 77 skip
# (autoreconf, automake or make missing).
set -u
build=$(cd "$1" && pwd); src=$(cd "$2" && pwd); langs=$3
for tool in autoreconf autoconf automake aclocal make pkg-config; do
  command -v $tool > /dev/null || { echo "SKIP: $tool is not installed (scripts/install-deps.sh installs it)"; exit 77; }
done
tmp=$(mktemp -d /tmp/bdmpi-autotools.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; return 1; fi; }
has() { [[ ";$langs;" == *";$1;"* ]]; }
progs=(hello_c)
has CXX && progs+=(hello_cxx)
has Fortran && progs+=(hello_f)

# project DIR: a fresh copy of the user's project and its sources.
project() {
  mkdir -p "$1"
  cp "$src"/tests/tools/findmpi/hello_c.c "$src"/tests/tools/findmpi/hello_cxx.cpp \
     "$src"/tests/tools/findmpi/hello_f.f90 "$src"/tests/tools/autotools/Makefile.am "$1"/
  cp "$src"/tests/tools/autotools/Makefile.plain "$1"/Makefile
  local cxx=dnl fc=dnl
  has CXX && cxx=""
  has Fortran && fc=""
  sed -e "s/@CXX@/${cxx:+$cxx }/; s/@FC@/${fc:+$fc }/" \
      -e "s/@HAVE_CXX@/$([ -z "$cxx" ] && echo yes || echo no)/" \
      -e "s/@HAVE_FC@/$([ -z "$fc" ] && echo yes || echo no)/" \
      "$src"/tests/tools/autotools/configure.ac.in > "$1"/configure.ac
}
# runs WHAT DIR B: each program of DIR under $B/bin/bdmpiexec -n 8.
runs() {
  local p out rc
  for p in "${progs[@]}"; do
    out=$(cd "$2" && "$3/bin/bdmpiexec" -n 8 ./$p 2>&1); rc=$?
    check "$1: bdmpiexec -n 8 ./$p" '[ $rc -eq 0 ] && [[ "$out" == *"$p: 8 ranks, BDMPI"* ]]' || echo "$out"
  done
}
extra() {  # the Makefile's EXTRA_PROGS
  local e=""
  has CXX && e="$e hello_cxx"
  has Fortran && e="$e hello_f"
  echo "$e"
}

cmake --install "$build" --prefix "$tmp/inst" > "$tmp/install.log" 2>&1
check "cmake --install" '[ $? -eq 0 ]' || cat "$tmp/install.log"
inst=$tmp/inst
libdir=$(ls -d "$inst"/lib*/pkgconfig 2>/dev/null | head -1)

for where in installed build; do
  B=$inst
  [ $where = build ] && B=$build
  # Autotools, as the README says.
  d=$tmp/at-$where
  project "$d"
  (cd "$d" && autoreconf -i > autoreconf.log 2>&1)
  check "autotools ($where tree): autoreconf -i" '[ $? -eq 0 ]' || cat "$d/autoreconf.log"
  (cd "$d" && ./configure CC=$B/bin/bdmpicc CXX=$B/bin/bdmpicxx FC=$B/bin/bdmpifort F77=$B/bin/bdmpifort \
                MPICC=$B/bin/bdmpicc MPICXX=$B/bin/bdmpicxx MPIFC=$B/bin/bdmpifort > configure.log 2>&1)
  check "autotools ($where tree): ./configure CC=\$B/bin/bdmpicc ..." '[ $? -eq 0 ]' || tail -n 30 "$d/configure.log" "$d/config.log"
  (cd "$d" && make > make.log 2>&1)
  check "autotools ($where tree): make" '[ $? -eq 0 ]' || cat "$d/make.log"
  runs "autotools ($where tree)" "$d" "$B"

  # A plain Makefile with the wrappers.
  d=$tmp/mk-$where
  project "$d"
  (cd "$d" && make CC=$B/bin/bdmpicc CXX=$B/bin/bdmpicxx FC=$B/bin/bdmpifort EXTRA_PROGS="$(extra)" > make.log 2>&1)
  check "Makefile ($where tree): make CC=\$B/bin/bdmpicc ..." '[ $? -eq 0 ]' || cat "$d/make.log"
  runs "Makefile ($where tree)" "$d" "$B"
done

# A plain Makefile with pkg-config (an installed tree's lib/pkgconfig).
d=$tmp/pc
project "$d"
export PKG_CONFIG_PATH=$libdir
fflags=""; flibs=""
if has Fortran; then
  fflags=$(pkg-config --cflags bdmpi-fort); flibs=$(pkg-config --libs bdmpi-fort)
fi
(cd "$d" && make CFLAGS="$(pkg-config --cflags bdmpi)" CXXFLAGS="$(pkg-config --cflags bdmpi)" \
                 LDLIBS="$(pkg-config --libs bdmpi)" FC=gfortran FFLAGS="$fflags" FLIBS="$flibs" \
                 EXTRA_PROGS="$(extra)" > make.log 2>&1)
check "Makefile with pkg-config: make CFLAGS=\$(pkg-config --cflags bdmpi) ..." '[ $? -eq 0 ]' || cat "$d/make.log"
runs "Makefile with pkg-config" "$d" "$inst"
exit $fail
