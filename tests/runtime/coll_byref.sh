#!/bin/bash
# coll_byref.sh BDMPIEXEC PROGRAM STRATEGY: collective pieces out of memory
# go to the master by reference to their stored copy, arrive right, and
# survive their sender rewriting its buffer at once (coll_byref.c), a
# reader's pieces read from the store together when the budget has room
# (the master's line for them must be there).  Runs
# 8 ranks at -nr 1 under -mem 20M (each rank 8 MiB of arrays), checks the
# program's own verdict, that some bytes went by reference (COLL_BYTES_REF
# of --stats), and that nothing is left in the working directory.  A second
# run with -mem-dedup off (no node store: everything by value) must pass
# too and send nothing by reference, and so must one with -coll-byref off.
# Exit 0 pass, 1 fail.
# STRATEGY "nodes": two nodes of 4 ranks under -mem 10M each, where pieces
# handed over by reference are read from the store at once (other nodes
# ship them): the master's line for those bytes must be there.
set -u
exe=$1; prog=$2; strategy=$3
wd=$(mktemp -d /tmp/bdmpi-br.XXXXXX)
common=(-ns 8 -nr 1 -mem 20M -mem-strategy "$strategy" -sbpage 64K -mem-threshold 256K --stats)
args=(4 3)
tag=coll_byref
show="COLL_BYTES_UP COLL_BYTES_REF MEM_READ"
fail=0
. "$(dirname "$0")/stats_run.sh"
if [ "$strategy" = nodes ]; then
  common=(-nn 2 -ns 4 -nr 1 -mem 10M -mem-strategy arlw -sbpage 64K -mem-threshold 256K --stats)
  args=(4 2)
  run nodes --
  read_now=$(sed -n "s/.*read from the node's store at once.* \([0-9]*\)$/\1/p" "$wd.nodes" |
             awk '{s += $1} END {print s + 0}')
  echo "read from the store at once: $read_now bytes"
  [ "$read_now" -gt 0 ] || { echo "FAIL: no piece went by reference across nodes"; fail=1; }
  [ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ] || { echo "FAIL: files left in $wd"; fail=1; }
  rm -rf "$wd" "$wd".*
  exit $fail
fi
run on --
run nr4 -- -nr 4
run off -- -mem-dedup off
run byref_off -- -coll-byref off
ref_on=$(stat COLL_BYTES_REF "$wd.on"); ref_off=$(stat COLL_BYTES_REF "$wd.off")
ref_byoff=$(stat COLL_BYTES_REF "$wd.byref_off")
[ "${ref_on:-0}" -gt 0 ] || { echo "FAIL: nothing went by reference (COLL_BYTES_REF ${ref_on:-none})"; fail=1; }
# a reader's pieces read from the store together (coll_ref.c's batches)
batched=$(sed -n "s/.*with the same reader's other pieces, all at once \([0-9]*\)$/\1/p" "$wd.on")
echo "read with the same reader's other pieces at once: ${batched:-0} bytes"
[ "${batched:-0}" -gt 0 ] || { echo "FAIL: no reader's pieces were read together"; fail=1; }
# four readers GETting in turns: a batch given up for a newer one is not
# read again whole, so no piece is read twice
ref4=$(stat COLL_BYTES_REF "$wd.nr4")
batched4=$(sed -n "s/.*with the same reader's other pieces, all at once \([0-9]*\)$/\1/p" "$wd.nr4")
echo "-nr 4: by reference ${ref4:-0} bytes, read in batches ${batched4:-0}"
[ "${batched4:-0}" -le "${ref4:-0}" ] || { echo "FAIL: batches read more than the pieces held by reference"; fail=1; }
[ "${ref_off:-1}" -eq 0 ] || { echo "FAIL: COLL_BYTES_REF ${ref_off:-none} without a node store"; fail=1; }
[ "${ref_byoff:-1}" -eq 0 ] || { echo "FAIL: COLL_BYTES_REF ${ref_byoff:-none} with -coll-byref off"; fail=1; }
[ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ] || { echo "FAIL: files left in $wd"; fail=1; }
rm -rf "$wd" "$wd".*
exit $fail
