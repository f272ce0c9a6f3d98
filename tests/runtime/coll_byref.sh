#!/bin/bash
# coll_byref.sh BDMPIEXEC PROGRAM STRATEGY: collective pieces out of memory
# go to the master by reference to their stored copy, arrive right, and
# survive their sender rewriting its buffer at once (coll_byref.c).  Runs
# 8 ranks at -nr 1 under -mem 20M (each rank 8 MiB of arrays), checks the
# program's own verdict, that some bytes went by reference (COLL_BYTES_REF
# of --stats), and that nothing is left in the working directory.  A second
# run with -mem-dedup off (no node store: everything by value) must pass
# too and send nothing by reference.  Exit 0 pass, 1 fail.
set -u
exe=$1; prog=$2; strategy=$3
wd=$(mktemp -d /tmp/bdmpi-br.XXXXXX)
common=(-ns 8 -nr 1 -mem 20M -mem-strategy "$strategy" -sbpage 64K -mem-threshold 256K --stats)
args=(4 3)
tag=coll_byref
show="COLL_BYTES_UP COLL_BYTES_REF MEM_READ"
fail=0
. "$(dirname "$0")/stats_run.sh"
run on --
run off -- -mem-dedup off
ref_on=$(stat COLL_BYTES_REF "$wd.on"); ref_off=$(stat COLL_BYTES_REF "$wd.off")
[ "${ref_on:-0}" -gt 0 ] || { echo "FAIL: nothing went by reference (COLL_BYTES_REF ${ref_on:-none})"; fail=1; }
[ "${ref_off:-1}" -eq 0 ] || { echo "FAIL: COLL_BYTES_REF ${ref_off:-none} without a node store"; fail=1; }
[ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ] || { echo "FAIL: files left in $wd"; fail=1; }
rm -rf "$wd" "$wd".*
exit $fail
