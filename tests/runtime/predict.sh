#!/bin/bash
# predict.sh BDMPIEXEC PROGRAM: -mem-predict reaches the ranks.
# Runs tests/runtime/readahead.c (2 ranks write 16 MiB each, which the
# other's turn forces to storage under -mem 20M, then read part of it back)
# with write prediction on, off, and off through BDMPI_MEM_PREDICT, and
# compares the --stats totals: with prediction the first write-back hashes
# what it writes (MEM_HASHED >= 2 x 16 MiB); without it nothing is hashed.
# The data the ranks read back is checked by the program either way.
# Exit 0 pass, 1 fail ("on" works everywhere, with the portable hash too).
set -u
exe=$1; prog=$2
wd=$(mktemp -d /tmp/bdmpi-pr.XXXXXX)
common=(-ns 2 -nr 1 -mem 20M -mem-strategy arlw -sbpage 64K --stats)
args=(16 8)
tag=readahead
show="MEM_WRITTEN MEM_HASHED"
fail=0
. "$(dirname "$0")/stats_run.sh"
run on X=1 -- -mem-predict on
run off X=1 -- -mem-predict off
run env_off BDMPI_MEM_PREDICT=off --
h=$(stat MEM_HASHED "$wd.on")
[ -n "$h" ] && [ "$h" -ge $((2 * 16 * 1048576)) ] ||
  { echo "FAIL: with -mem-predict on only ${h:-no} bytes were hashed"; fail=1; }
for r in off env_off; do
  [ "$(stat MEM_HASHED "$wd.$r")" = 0 ] || { echo "FAIL: $r hashed $(stat MEM_HASHED "$wd.$r") bytes"; fail=1; }
done
[ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ] || { echo "FAIL: files left in $wd"; fail=1; }
rm -rf "$wd" "$wd".*
exit $fail
