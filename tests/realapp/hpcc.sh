#!/bin/bash
# hpcc.sh BDMPIEXEC BDMPICC WORKDIR build | [bdmpiexec shape arguments...]
# A real MPI program, unmodified: the HPC Challenge suite (HPL, DGEMM,
# STREAM, PTRANS, RandomAccess, FFT, latency and bandwidth), as Debian
# ships its source.  The source is fetched from Debian's archive (apt-get
# source, through a private sources list: nothing of the system's apt
# configuration changes) into WORKDIR, built with bdmpicc against OpenBLAS
# from HPL's own template makefile, and run under bdmpiexec with the given
# shape (default -ns 4 -nr 1; "build": only fetch and build) on HPCC's
# sample input, its process grid set
# to the number of ranks.  Passes when HPCC's own checks pass: HPL's and
# PTRANS's residual checks, STREAM's validation, RandomAccess's
# verification (MPI, star and single), and its summary's Success=1.
# Exit 0 pass, 1 fail, 77 skip (no network to Debian's archive, or no
# OpenBLAS).  Set HPCC_OUT=FILE to keep HPCC's output file, HPCC_LOG=FILE
# bdmpiexec's output (--stats), HPCC_N=N for
# HPL's matrix order instead of the sample's 1000 (the other tests size
# themselves from it: N=4000 is 128 MB of matrix, an out-of-core run).
set -u
exe=$1; cc=$2; work=$3; shift 3
[ $# -gt 0 ] || set -- -ns 4 -nr 1
mkdir -p "$work" || exit 1
src=$work/hpcc-1.5.0
if [ ! -x "$src/hpcc.bdmpi" ]; then
  if [ ! -f "$work/hpcc_1.5.0.orig.tar.gz" ]; then
    echo "deb-src http://deb.debian.org/debian bookworm main" > "$work/sources.list"
    mkdir -p "$work/lists/partial"
    apt=(apt-get -q -o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
         -o "Dir::State::Lists=$work/lists" -o APT::Sandbox::User=root)
    ( cd "$work" && timeout 120 "${apt[@]}" update >/dev/null 2>&1 &&
      timeout 120 "${apt[@]}" source --download-only hpcc >/dev/null 2>&1 )
    [ -f "$work/hpcc_1.5.0.orig.tar.gz" ] ||
      { echo "SKIP: cannot fetch HPCC's source from deb.debian.org"; exit 77; }
  fi
  [ -e /usr/lib/x86_64-linux-gnu/libopenblas.so ] || ls /usr/lib/*/libopenblas.so >/dev/null 2>&1 ||
    { echo "SKIP: no OpenBLAS (libopenblas-dev)"; exit 77; }
  rm -rf "$src" && tar xzf "$work/hpcc_1.5.0.orig.tar.gz" -C "$work" || exit 1
  # HPL's template for a CBLAS build, pointed at bdmpicc and OpenBLAS
  sed -e 's|^MPdir .*|MPdir =|; s|^MPinc .*|MPinc =|; s|^MPlib .*|MPlib =|; s|^LAdir .*|LAdir =|' \
      -e 's|^LAlib .*|LAlib = -lopenblas|; s|^CCFLAGS .*|CCFLAGS = $(HPL_DEFS) -O2 -fcommon|' \
      -e "s|^CC  .*|CC = $cc|; s|^LINKER .*|LINKER = $cc|" \
      "$src/hpl/setup/Make.Linux_PII_CBLAS" > "$src/hpl/Make.bdmpi" || exit 1
  if ! make -C "$src" arch=bdmpi -j"$(nproc)" > "$work/build.log" 2>&1; then
    tail -20 "$work/build.log"; echo "FAIL: HPCC did not build with bdmpicc"; exit 1
  fi
  mv "$src/hpcc" "$src/hpcc.bdmpi"
fi
[ "$1" = build ] && { echo "PASS: HPCC built with bdmpicc in $src"; exit 0; }
# the number of ranks in the shape: -ns per node times -nn
ns=1; nn=1; a=("$@")
for ((i = 0; i < ${#a[@]}; i++)); do
  case "${a[i]}" in -ns) ns=${a[i+1]} ;; -nn) nn=${a[i+1]} ;; esac
done
np=$((ns * nn)); p=1
for ((d = 1; d * d <= np; d++)); do [ $((np % d)) = 0 ] && p=$d; done
run=$(mktemp -d /tmp/bdmpi-hpcc.XXXXXX)
trap 'rm -rf "$run"' EXIT
sed -e "s/^2            Ps/$p            Ps/; s/^2            Qs/$((np / p))            Qs/" \
    -e "s/^1000         Ns/${HPCC_N:-1000}         Ns/" \
    "$src/_hpccinf.txt" > "$run/hpccinf.txt"
(cd "$run" && BDMPI_WD="$run" "$exe" "$@" "$src/hpcc.bdmpi" > "$run/stdout" 2>&1)
rc=$?
out=$run/hpccoutf.txt
[ -n "${HPCC_OUT:-}" ] && cp "$out" "$HPCC_OUT" 2>/dev/null
[ -n "${HPCC_LOG:-}" ] && cp "$run/stdout" "$HPCC_LOG" 2>/dev/null
fail=0
[ $rc = 0 ] || { cat "$run/stdout"; echo "FAIL: bdmpiexec $* hpcc exited with $rc"; fail=1; }
need() { grep -q -- "$1" "$out" 2>/dev/null || { echo "FAIL: $2 ('$1' not in HPCC's output)"; fail=1; }; }
need "^Success=1" "HPCC did not report success"
need "Solution Validates" "STREAM did not validate"
# RandomAccess's rules allow errors in up to 1% of the table (its MPI
# version runs for a time bound; MPICH's own runs show some at 8
# processes): HPCC's verdict, "(passed)", is what counts.
[ "$(grep -c 'Found [0-9]* errors in [0-9]* locations (passed)' "$out" 2>/dev/null)" -ge 4 ] ||
  { grep "Found [0-9]* errors" "$out"; echo "FAIL: fewer than 4 RandomAccess checks passed"; fail=1; }
[ "$(grep -c '0 tests completed and failed residual checks' "$out" 2>/dev/null)" -ge 2 ] ||
  { echo "FAIL: HPL's or PTRANS's residual checks did not all pass"; fail=1; }
grep -q "FAILED" "$out" 2>/dev/null && { grep "FAILED" "$out" | head -5; echo "FAIL: a check FAILED"; fail=1; }
left=$(find "$run" -mindepth 1 -name 'bdmpi.*' 2>/dev/null | head -3)
[ -z "$left" ] || { echo "FAIL: left behind: $left"; fail=1; }
if [ $fail = 0 ]; then
  echo "PASS: HPCC under bdmpiexec $* ($np ranks, grid ${p}x$((np / p))): $(grep -E '^(MPIRandomAccess_GUPs|HPL_Tflops|PTRANS_GBs)=' "$out" | tr '\n' ' ')"
fi
exit $fail
