#!/bin/bash
# The main demo: 64 MPI ranks on this node, one running at a time, doing
# point-to-point rings and every collective, with end-of-run statistics.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BDMPI_BUILD:-$root/build}
[ -x "$build/bin/bdmpiexec" ] || "$root/scripts/build.sh"
set -x
"$build/bin/bdmpiexec" -ns 64 -nr 1 --stats "$build/tests/all_ops"
