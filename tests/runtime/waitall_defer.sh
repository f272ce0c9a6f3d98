#!/bin/bash
# waitall_defer.sh BDMPIEXEC PROGRAM STRATEGY: a receive completed in an
# MPI_Waitall that must still wait for another request is not filled, then
# written to storage when its rank is unloaded, then read back.  Runs
# tests/runtime/waitall_defer.c (4 ranks, -nr 1, rank 0 unloaded while its
# Waitall waits for V with U already matched) and checks, from
# -mem-alloc-stats, that rank 0's U buffer was not written, and that rank 0
# was unloaded meanwhile (else nothing was tested).  Exit 0 pass, 1 fail.
set -u
exe=$1; prog=$2; strategy=$3
wd=$(mktemp -d /tmp/bdmpi-wd.XXXXXX)
common=(-ns 4 -nr 1 -mem 32M -mem-strategy "$strategy" -sbpage 64K -mem-threshold 256K --stats
        -mem-alloc-stats)
args=(8)
tag=waitall_defer
show="MEM_WRITTEN MEM_READ MEM_UNLOADS RECVS_DEFERRED"
fail=0
. "$(dirname "$0")/stats_run.sh"
run "$strategy" X=1 --
out="$wd.$strategy"
usize=$(sed -n 's/.*waitall_defer: U is \([0-9]*\) bytes, W \([0-9]*\).*/\1/p' "$out")
wsize=$(sed -n 's/.*waitall_defer: U is \([0-9]*\) bytes, W \([0-9]*\).*/\2/p' "$out")
# rank 0's lines: "rank 0: mem alloc ID size S read R in N written W in M"
moved() { # size field(written: NF-2, read: NF-6)
  awk -v s="$1" -v f="$2" '/^rank 0: mem alloc [0-9]+ size / && $7 == s {n += $(NF - f)} END {print n + 0}' "$out"
}
if [ -n "$usize" ] && [ -n "$wsize" ]; then
  uw=$(moved "$usize" 2); ur=$(moved "$usize" 6); ww=$(moved "$wsize" 2)
  echo "rank 0's U ($usize bytes): written $uw, read $ur; W ($wsize bytes): written $ww"
  [ "$uw" -eq 0 ] && [ "$ur" -eq 0 ] ||
    { echo "FAIL: U was written ($uw bytes) or read back ($ur bytes) around the Waitall"; fail=1; }
  # rank 0 must have been unloaded while it waited (rank 2's 20 MiB ballast)
  [ "$ww" -ge "$wsize" ] ||
    { echo "FAIL: rank 0 was not unloaded while it waited (W written: $ww): nothing tested"; fail=1; }
else
  echo "FAIL: no result line"; fail=1
fi
[ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ] || { echo "FAIL: files left in $wd"; fail=1; }
rm -rf "$wd" "$wd".*
exit $fail
