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
# runs on its own (ctest -L mpi4py, or scripts/mpi4py-suite.sh).  So do the
# tests at full size labelled slow (ctest -L slow; several minutes each)
# and the full fault-injection sweep (label faults).
extra=(-LE 'mpi4py|slow|faults')
# Under the sanitizers, skip what checks something other than BDMPI's memory
# and UB safety and is already run by the plain suite: the test programs
# under MPICH, benchmark smoke runs, the build-tool checks, the formatting
# check, the real programs built from their source (realapp: HPCC's own
# code under ASan is not what is tested), the applications' serial
# out-of-core variants (no BDMPI code), the 512-rank scale runs and the
# three-node shapes (the two-node shapes cover the same inter-node code).
# Of the MPI test programs run at five shapes (name.SHAPE) only -nn 2 -ns 3
# -nr 2 runs: ranks that share run slots (so the master's scheduling
# paths run) on two nodes (the inter-node paths).  Also left to the plain
# suite, as repeats of code the sanitized suite runs elsewhere: the soak
# (a loop over the same programs), the signal tests (job control, not
# memory), the cleanup checks across nodes (cleanup.* on one node stay),
# the applications at -ns 9 (-ns 4 runs the same code), the staged
# collectives' whole-message variants (flow.*_whole: -coll-stage 0, the
# default every other test runs), the memory manager's integrity runs
# with write prediction at 4 KiB and 1 MiB sbpages (64 KiB stays for every
# strategy and both kinds of tracking; exact_* run each strategy without
# prediction at 4 KiB, 64 KiB or 1 MiB) and the pre-cleaning runs with a
# 3 s computation (the 500 ms ones take the same paths).
# This keeps CI within its budget.
[ "${1:-}" = "--sanitize" ] && extra=(-LE 'mpich|bench|tools|scale|mpi4py|slow|faults|realapp'
  -E '^format\.check$|\.nn3\.|^[A-Za-z0-9_]+\.(ns1\.nr1|ns3\.nr2|ns8\.nr1|ns8\.nr4)$|^(soak|signal|cleanup\.nodes)\.|^apps\..*\.(ns9\.nr[0-9]+|serial_ooc(\.q[0-9])?)$|^flow\..*_whole$|^mem\.mem_integrity\.(araw|arlw|lrlw)_(4k|1m)_|^mem\.mem_preclean\..*_500_3000$')
# One test more than CPUs: about a quarter of the suite's time is tests that
# sleep or wait on storage (the plain suite used 72% of 2 CPUs at -j2).
ctest -j"$(($(nproc) + 1))" --output-on-failure --timeout 600 "${extra[@]}"
