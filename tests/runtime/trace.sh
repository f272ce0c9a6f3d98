#!/bin/bash
# trace.sh BDMPIEXEC PROGRAM -- bdmpiexec-args... -- program-args... -- trace_check-args...
# Runs PROGRAM (which prints "PASS ...") under bdmpiexec -trace into a
# fresh file and checks the timeline with trace_check.py.  Fails if the job
# fails, the trace is invalid, a node's part is left over (-nn > 1: the
# parts are merged into one file), or anything is left in the spill
# directory.
set -u
here=$(cd "$(dirname "$0")" && pwd)
exe=$1; prog=$2; shift 2
[ "${1:-}" = "--" ] && shift
args=(); pargs=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do args+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
while [ $# -gt 0 ] && [ "$1" != "--" ]; do pargs+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
wd=$(mktemp -d /tmp/bdmpi-trace.XXXXXX)
out=$wd.json
BDMPI_WD=$wd "$exe" "${args[@]}" -trace "$out" "$prog" "${pargs[@]}" > "$wd.out" 2>&1
rc=$?
cat "$wd.out"
fail=0
[ $rc -eq 0 ] || { echo "FAIL: the job exited with $rc"; fail=1; }
grep -q "^PASS" "$wd.out" || { echo "FAIL: the program did not pass"; fail=1; }
grep -q "timeline in $out" "$wd.out" || { echo "FAIL: bdmpiexec did not name the timeline"; fail=1; }
if [ -f "$out" ]; then
  ls -l "$out"
  python3 "$here/trace_check.py" "$out" "$@" || fail=1
else
  echo "FAIL: no timeline in $out"; fail=1
fi
ls "$out".node* >/dev/null 2>&1 && { echo "FAIL: nodes' parts left: $(ls "$out".node*)"; fail=1; }
[ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ] || { echo "FAIL: files left in $wd"; fail=1; }
rm -rf "$wd" "$wd.out" "$out" "$out".node*
exit $fail
