#!/bin/bash
# runcheck.sh KIND REFERENCE OUTPUT [--rtol R] -- COMMAND...
# Run COMMAND with its stdout saved in OUTPUT (and shown), fail if it fails,
# then compare OUTPUT with REFERENCE using check.py KIND.
set -u
here=$(cd "$(dirname "$0")" && pwd)
kind=$1 ref=$2 out=$3
shift 3
opts=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do opts+=("$1"); shift; done
[ $# -gt 0 ] && shift
if [ $# -eq 0 ]; then echo "usage: runcheck.sh KIND REF OUT [--rtol R] -- COMMAND..." >&2; exit 2; fi
"$@" > "$out"
rc=$?
cat "$out"
if [ $rc -ne 0 ]; then
    echo "CHECK FAILED: command exited with status $rc: $*"
    exit 1
fi
exec python3 "$here/check.py" "$kind" "$ref" "$out" "${opts[@]}"
