#!/bin/bash
# readahead.sh BDMPIEXEC PROGRAM: -mem-readahead reaches the ranks.
# Runs tests/runtime/readahead.c (2 ranks read back 8 MiB of stored data
# each under -mem-strategy lrlw) with the read-ahead off, once with the
# option and once with BDMPI_MEM_READAHEAD=off, and on (-mem-readahead 8M),
# and compares the --stats totals: off reads exactly what is touched
# (2 x 8 MiB) and faults once per 64 KiB chunk; on reads beyond it or
# faults less (both, usually).  Exit 0 pass, 1 fail.
set -u
exe=$1; prog=$2
wd=$(mktemp -d /tmp/bdmpi-ra.XXXXXX)
common=(-ns 2 -nr 1 -mem 20M -mem-strategy lrlw -sbpage 64K --stats)
args=(16 8)
tag=readahead
show="MEM_READ MEM_FAULTS"
fail=0
. "$(dirname "$0")/stats_run.sh"
run off X=1 -- -mem-readahead off
run env_off BDMPI_MEM_READAHEAD=off --
run on X=1 -- -mem-readahead 8M
want=$((2 * 8 * 1048576))
for r in off env_off; do
  [ "$(stat MEM_READ "$wd.$r")" = "$want" ] ||
    { echo "FAIL: $r read $(stat MEM_READ "$wd.$r") bytes from storage, not exactly the $want touched"; fail=1; }
done
[ "$(stat MEM_FAULTS "$wd.off")" = "$(stat MEM_FAULTS "$wd.env_off")" ] ||
  { echo "FAIL: -mem-readahead off and BDMPI_MEM_READAHEAD=off fault differently"; fail=1; }
read_on=$(stat MEM_READ "$wd.on"); faults_on=$(stat MEM_FAULTS "$wd.on"); faults_off=$(stat MEM_FAULTS "$wd.off")
if [ -n "$read_on" ] && [ -n "$faults_on" ] && [ -n "$faults_off" ]; then
  [ "$read_on" -gt "$want" ] || [ "$faults_on" -lt "$faults_off" ] ||
    { echo "FAIL: with -mem-readahead 8M nothing was read ahead ($read_on bytes read, $faults_on faults, $faults_off without)"; fail=1; }
else
  echo "FAIL: no statistics"; fail=1
fi
[ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ] || { echo "FAIL: files left in $wd"; fail=1; }
rm -rf "$wd" "$wd".*
exit $fail
