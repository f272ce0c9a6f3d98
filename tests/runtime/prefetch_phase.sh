#!/bin/bash
# prefetch_phase.sh BDMPIEXEC PROGRAM STRATEGY: look-ahead loading of a
# program with K-means' call pattern (tests/runtime/prefetch_phase.c: the
# pass over a rank's arrays follows a Broadcast answered at once, after an
# Allreduce it waited in).  8 ranks x 8 MiB, -nr 1, -mem 28M, with
# -mem-prefetch off and on.  On, at least an eighth of what is read must be
# loaded ahead (0-5% when the phase was keyed to the Broadcast and several
# queued ranks took crumbs of the room, issue 13, session 23; 45-70% now on
# a quiet machine, 23% once under ctest -j3), reading at most 1.3x what off
# reads.  Exit 0 pass, 1 fail.
set -u
exe=$1; prog=$2; strategy=$3
wd=$(mktemp -d /tmp/bdmpi-pfph.XXXXXX)
common=(-ns 8 -nr 1 -mem 28M -mem-strategy "$strategy" --stats)
args=(8 6)
tag=prefetch_phase
show="MEM_READ MEM_PREFETCHED"
fail=0
. "$(dirname "$0")/stats_run.sh"
run off X=1 -- -mem-prefetch off
run on X=1 -- -mem-prefetch on
r_off=$(stat MEM_READ "$wd.off"); r_on=$(stat MEM_READ "$wd.on"); pf=$(stat MEM_PREFETCHED "$wd.on")
if [ -n "$r_off" ] && [ -n "$r_on" ] && [ -n "$pf" ]; then
  [ $((pf * 8)) -ge "$r_on" ] ||
    { echo "FAIL: $pf of $r_on bytes read were loaded ahead, less than an eighth"; fail=1; }
  [ $((r_on * 10)) -le $((r_off * 13)) ] ||
    { echo "FAIL: look-ahead read $r_on bytes, more than 1.3x the $r_off read without it"; fail=1; }
else
  echo "FAIL: no statistics"; fail=1
fi
[ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ] || { echo "FAIL: files left in $wd"; fail=1; }
rm -rf "$wd" "$wd".*
exit $fail
