#!/bin/bash
# own_block.sh BDMPIEXEC PROGRAM STRATEGY: a blocking all-to-all does not
# read its unloaded send buffer back to give its own block, and
# -mem-alloc-stats accounts for every byte the memory manager moved.
# Runs tests/runtime/own_block.c (4 ranks, -nr 1, each rank unloaded while
# it waits in MPI_Alltoallv) and checks that MEM_READ is at most what the
# program allows (each rank's own receive block), and that the per-
# allocation lines of -mem-alloc-stats add up to MEM_READ and MEM_WRITTEN.
# Exit 0 pass, 1 fail.
set -u
exe=$1; prog=$2; strategy=$3
wd=$(mktemp -d /tmp/bdmpi-ob.XXXXXX)
common=(-ns 4 -nr 1 -mem 32M -mem-strategy "$strategy" -sbpage 64K -mem-threshold 256K --stats
        -mem-alloc-stats)
args=(8 65536)
tag=own_block
show="MEM_READ MEM_WRITTEN MEM_UNLOADS"
fail=0
. "$(dirname "$0")/stats_run.sh"
run "$strategy" X=1 --
out="$wd.$strategy"
read=$(stat MEM_READ "$out"); written=$(stat MEM_WRITTEN "$out"); unloads=$(stat MEM_UNLOADS "$out")
allow=$(sed -n 's/.*reads at most \([0-9]*\) bytes.*/\1/p' "$out")
if [ -n "$read" ] && [ -n "$allow" ]; then
  echo "read $read bytes from storage; the program allows $allow"
  [ "$read" -le "$allow" ] ||
    { echo "FAIL: $read bytes read back, more than the $allow of the own blocks"; fail=1; }
  # the ballasts must have made the waiting ranks unload, or nothing was tested
  [ "${unloads:-0}" -gt 0 ] && [ "${written:-0}" -ge $((3 * 8 << 20)) ] ||
    { echo "FAIL: the waiting ranks were not unloaded (MEM_UNLOADS $unloads, MEM_WRITTEN $written)"; fail=1; }
  sums=$(awk '/: mem alloc [0-9]+ size [0-9]+ read/ {r += $(NF-6); w += $(NF-2)} END {print r + 0, w + 0}' "$out")
  echo "-mem-alloc-stats: read, written = $sums"
  [ "$sums" = "$read $written" ] ||
    { echo "FAIL: the per-allocation lines add up to $sums, not MEM_READ $read MEM_WRITTEN $written"; fail=1; }
else
  echo "FAIL: no statistics"; fail=1
fi
[ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ] || { echo "FAIL: files left in $wd"; fail=1; }
rm -rf "$wd" "$wd".*
exit $fail
