#!/bin/bash
# prefetch_onoff.sh BDMPIEXEC PROGRAM STRATEGY NS MEM MAX_X10 AHEAD_DIV -- ARGS...
# Look-ahead loading of PROGRAM (which prints "PASS <its name>"), run at
# -ns NS -nr 1 -mem MEM -mem-strategy STRATEGY with -mem-prefetch off and
# on: on, at least 1/AHEAD_DIV of the bytes the manager reads must have
# been loaded ahead, and it may read at most MAX_X10/10 times the bytes off
# reads.  The programs and why their bounds are what they are:
# tests/runtime/CMakeLists.txt (mem.prefetch_phase.*, mem.prefetch_fresh.*).
# Exit 0 pass, 1 fail.
set -u
exe=$1; prog=$2; strategy=$3; ns=$4; mem=$5; max_x10=$6; ahead_div=$7; shift 7
[ "${1:-}" = "--" ] && shift
wd=$(mktemp -d /tmp/bdmpi-pfonoff.XXXXXX)
common=(-ns "$ns" -nr 1 -mem "$mem" -mem-strategy "$strategy" --stats)
args=("$@")
tag=$(basename "$prog")
show="MEM_READ MEM_PREFETCHED"
fail=0
. "$(dirname "$0")/stats_run.sh"
run off X=1 -- -mem-prefetch off
run on X=1 -- -mem-prefetch on
r_off=$(stat MEM_READ "$wd.off"); r_on=$(stat MEM_READ "$wd.on"); pf=$(stat MEM_PREFETCHED "$wd.on")
if [ -n "$r_off" ] && [ -n "$r_on" ] && [ -n "$pf" ]; then
  [ $((pf * ahead_div)) -ge "$r_on" ] ||
    { echo "FAIL: $pf of $r_on bytes read were loaded ahead, less than 1/$ahead_div"; fail=1; }
  [ $((r_on * 10)) -le $((r_off * max_x10)) ] ||
    { echo "FAIL: look-ahead read $r_on bytes, more than $max_x10/10 times the $r_off read without it"; fail=1; }
else
  echo "FAIL: no statistics"; fail=1
fi
[ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ] || { echo "FAIL: files left in $wd"; fail=1; }
rm -rf "$wd" "$wd".*
exit $fail
