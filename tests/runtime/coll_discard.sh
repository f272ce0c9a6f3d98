#!/bin/bash
# coll_discard.sh BDMPIEXEC PROGRAM STRATEGY: receive buffers of
# collectives are not read back from storage before they are overwritten.
# Runs tests/runtime/coll_discard.c (2 ranks, -nr 1, each phase unloads
# both ranks' receive buffers before a collective writes them) and checks
# that the memory manager read at most what the program says may be read:
# the sbpages the calls do not overwrite entirely.  Reading receive
# buffers back whole reads about 2 x 8 MiB more per phase.  Exit 0 pass,
# 1 fail.
set -u
exe=$1; prog=$2; strategy=$3
wd=$(mktemp -d /tmp/bdmpi-cd.XXXXXX)
# Look-ahead loading off: it may load a buffer the next call overwrites (a
# guess that reads more; mem.prefetch_phase measures it), and this test counts
# what the discard of receive buffers leaves to read.
common=(-ns 2 -nr 1 -mem 32M -mem-strategy "$strategy" -sbpage 64K -mem-threshold 256K -mem-prefetch off --stats)
args=(8 65536)
tag=coll_discard
show="MEM_READ MEM_WRITTEN"
fail=0
. "$(dirname "$0")/stats_run.sh"
run "$strategy" X=1 --
read=$(stat MEM_READ "$wd.$strategy")
allow=$(sed -n 's/.*reads at most \([0-9]*\) bytes.*/\1/p' "$wd.$strategy")
if [ -n "$read" ] && [ -n "$allow" ]; then
  echo "read $read bytes from storage; the program allows $allow"
  [ "$read" -le "$allow" ] ||
    { echo "FAIL: $read bytes read back, more than the $allow that are not overwritten"; fail=1; }
else
  echo "FAIL: no statistics"; fail=1
fi
[ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ] || { echo "FAIL: files left in $wd"; fail=1; }
rm -rf "$wd" "$wd".*
exit $fail
