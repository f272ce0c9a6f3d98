#!/bin/bash
# repeat.sh RUNS REGEX -- COMMAND...
# Runs expect.sh 0 REGEX -- COMMAND RUNS times (each within
# BDMPI_TEST_LIMIT seconds, leaving nothing): for failures that show in
# some runs only (a hang that needs an unlucky timing).  Exit 0 when every
# run passed, 1 at the first that did not.
set -u
runs=$1; regex=$2; shift 2
[ "$1" = "--" ] && shift
here=$(cd "$(dirname "$0")" && pwd)
for ((i = 1; i <= runs; i++)); do
    if ! out=$("$here/expect.sh" 0 "$regex" -- "$@" 2>&1); then
        echo "$out" | tail -15
        echo "FAIL: run $i of $runs"
        exit 1
    fi
done
echo "PASS: $runs runs"
