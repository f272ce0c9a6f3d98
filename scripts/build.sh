#!/bin/bash
# Configures and builds BDMPI into build/ (or $BDMPI_BUILD).
# --sanitize builds with AddressSanitizer + UndefinedBehaviorSanitizer into build-asan/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BDMPI_BUILD:-$root/build}
extra=()
if [ "${1:-}" = "--sanitize" ]; then
  build=${BDMPI_BUILD:-$root/build-asan}
  extra=(-DBDMPI_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug)
fi
cmake -S "$root" -B "$build" -DBDMPI_WERROR=ON "${extra[@]}" >/dev/null
cmake --build "$build" -j"$(nproc)"
echo "build: done in $build (programs in $build/bin)"
