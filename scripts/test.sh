#!/bin/bash
# Builds BDMPI and runs the whole test suite: unit, memory manager,
# conformance (every MPI test program at several shapes under bdmpiexec),
# integration (failures, cleanup, options, 512 ranks), applications, and
# the same MPI test programs under MPICH.
# --sanitize runs the suite on an ASan+UBSan build instead.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh" "$@"
build=${BDMPI_BUILD:-$root/build}
[ "${1:-}" = "--sanitize" ] && build=${BDMPI_BUILD:-$root/build-asan}
cd "$build"
# Leak checking would flag memory the MPI programs deliberately keep until exit.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# mpi4py's suite (label mpi4py) takes longer than the suite's budget: it
# runs on its own (ctest -L mpi4py, or scripts/mpi4py-suite.sh).
extra=(-LE mpi4py)
# The MPICH run checks the test programs, not BDMPI: once per suite is enough.
[ "${1:-}" = "--sanitize" ] && extra=(-LE 'mpich|mpi4py')
ctest -j"$(nproc)" --output-on-failure --timeout 600 "${extra[@]}"
