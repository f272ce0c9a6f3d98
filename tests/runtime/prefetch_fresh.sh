#!/bin/bash
# prefetch_fresh.sh BDMPIEXEC PROGRAM STRATEGY: look-ahead loading of a
# program with SGD's call pattern (tests/runtime/prefetch_fresh.c: each turn
# receives a block into a fresh allocation, beside the rank's array, and
# rank 0 gathers).  16 ranks, 4 MiB arrays, an 8 MiB block, -nr 1, -mem 20M,
# with -mem-prefetch off and on.  On, the look-ahead for the next rank must
# leave free the room the running rank's block takes, and pass over the
# Gather's root, woken by every piece: at most 1.2x the bytes off reads
# (1.30-1.46x when it filled that room and loaded the root's memory before
# each of its brief resumes, issue 13, session 24; 1.06-1.13x now, the
# rest mostly the root's block, loaded ahead and then freed), with at least
# a sixteenth of them loaded ahead (15-70% now).  Exit 0 pass, 1 fail.
set -u
exe=$1; prog=$2; strategy=$3
wd=$(mktemp -d /tmp/bdmpi-pffr.XXXXXX)
common=(-ns 16 -nr 1 -mem 20M -mem-strategy "$strategy" --stats)
args=(4 8 6)
tag=prefetch_fresh
show="MEM_READ MEM_PREFETCHED"
fail=0
. "$(dirname "$0")/stats_run.sh"
run off X=1 -- -mem-prefetch off
run on X=1 -- -mem-prefetch on
r_off=$(stat MEM_READ "$wd.off"); r_on=$(stat MEM_READ "$wd.on"); pf=$(stat MEM_PREFETCHED "$wd.on")
if [ -n "$r_off" ] && [ -n "$r_on" ] && [ -n "$pf" ]; then
  [ $((pf * 16)) -ge "$r_on" ] ||
    { echo "FAIL: $pf of $r_on bytes read were loaded ahead, less than a sixteenth"; fail=1; }
  [ $((r_on * 10)) -le $((r_off * 12)) ] ||
    { echo "FAIL: look-ahead read $r_on bytes, more than 1.2x the $r_off read without it"; fail=1; }
else
  echo "FAIL: no statistics"; fail=1
fi
[ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ] || { echo "FAIL: files left in $wd"; fail=1; }
rm -rf "$wd" "$wd".*
exit $fail
