#!/bin/bash
# dedup.sh BDMPIEXEC PROGRAM NS TABLE_MIB OWN_MIB [-- bdmpiexec-args...]:
# identical memory is stored once per node (issue 17, -mem-dedup).
# Runs tests/runtime/dedup_table.c (NS ranks each hold the same TABLE_MIB
# table and OWN_MIB of their own data, under a budget of a quarter of all
# of it, then change their own copies of the table and check every word)
# with -mem-dedup on and off, and compares what reached storage before the
# change: the ranks' write_bytes of /proc/PID/io at the checkpoint, and the
# --stats totals.
#  - on: at most 1.25 x (TABLE + NS x OWN) + 4 MiB written at the
#    checkpoint (one table, not NS), and MEM_DEDUP and the saving in
#    MEM_WRITTEN (whole run) each at least half of (NS - 1) tables;
#  - off: at least 3/4 of NS x (TABLE + OWN) (the budget does force every
#    rank's copy out; otherwise the test would show nothing);
#  - both: the program's checks pass, and nothing is left in the spill
#    parent (store file, backing files);
#  - kill: a third run in which the last rank kills itself after the
#    checkpoint ends with an error naming it, and leaves neither files nor
#    processes behind.
# Where the spill directory is not on a block device (tmpfs), write_bytes
# stays 0 and only the --stats checks run.  Exit 0 pass, 1 fail.
set -u
exe=$1; prog=$2; ns=$3; tab=$4; own=$5
shift 5
[ "${1:-}" = "--" ] && shift
MiB=1048576
mem=$((ns * (tab + own) / 4))M
wd=$(mktemp -d "${TMPDIR:-/tmp}/bdmpi-dd.XXXXXX")
common=(-ns "$ns" -nr 1 -mem "$mem" -mem-strategy arlw --stats "$@")
args=("$tab" "$own")
tag=dedup_table
show="MEM_WRITTEN MEM_DEDUP MEM_DEDUP_VERIFY MEM_READ"
fail=0
. "$(dirname "$0")/stats_run.sh"
run on X=1 -- -mem-dedup on
run off X=1 -- -mem-dedup off
for r in on off; do echo "$r: $(grep -h '^bdmpi stats:' "$wd.$r")"; done
wb() { awk '$1 == "CHECKPOINT" {print $3}' "$1"; }
won=$(wb "$wd.on"); woff=$(wb "$wd.off")
echo "checkpoint write_bytes: on ${won:-?}, off ${woff:-?}"
if [ -n "$woff" ] && [ "$woff" -gt 0 ]; then
  lim=$(( (tab + ns * own) * MiB * 5 / 4 + 4 * MiB ))
  [ -n "$won" ] && [ "$won" -le "$lim" ] ||
    { echo "FAIL: with -mem-dedup on ${won:-?} bytes were written before the change (at most $lim)"; fail=1; }
  least=$(( ns * (tab + own) * MiB * 3 / 4 ))
  [ "$woff" -ge "$least" ] ||
    { echo "FAIL: with -mem-dedup off only $woff bytes were written (at least $least): the budget did not force the tables out"; fail=1; }
else
  echo "note: write_bytes is 0 (spill directory not on a block device): --stats checks only"
fi
d=$(stat MEM_DEDUP "$wd.on")
[ -n "$d" ] && [ "$d" -ge $(( (ns - 1) * tab * MiB / 2 )) ] ||
  { echo "FAIL: MEM_DEDUP ${d:-missing} with -mem-dedup on"; fail=1; }
[ "$(stat MEM_DEDUP "$wd.off")" = 0 ] || { echo "FAIL: MEM_DEDUP nonzero with -mem-dedup off"; fail=1; }
m_on=$(stat MEM_WRITTEN "$wd.on"); m_off=$(stat MEM_WRITTEN "$wd.off")
saved=$(( (ns - 1) * tab * MiB / 2 ))
[ -n "$m_on" ] && [ -n "$m_off" ] && [ $((m_off - m_on)) -ge $saved ] ||
  { echo "FAIL: MEM_WRITTEN on ${m_on:-?} is not at least $saved below off ${m_off:-?}"; fail=1; }
[ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ] || { echo "FAIL: files left in $wd:"; find "$wd"; fail=1; }
tagk="bdmpi-dd-$$-$RANDOM"
env BDMPI_TEST_TAG="$tagk" BDMPI_WD="$wd" timeout -k 5 120 "$exe" "${common[@]}" "$prog" "$tab" "$own" kill > "$wd.kill" 2>&1
rc=$?
echo "== kill: exit $rc"
if [ $rc -eq 0 ] || [ $rc -eq 124 ] || ! grep -q "rank $((ns - 1)) (pid [0-9]*) was killed by signal 9" "$wd.kill"; then
  cat "$wd.kill"; echo "FAIL: the run whose rank $((ns - 1)) was killed did not end as expected"; fail=1
fi
sleep 0.2
left=$(grep -lsa "BDMPI_TEST_TAG=$tagk" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3)
[ -z "$left" ] || { echo "FAIL: processes left behind: $left"; kill -9 $left 2>/dev/null; fail=1; }
[ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ] || { echo "FAIL: files left in $wd after the kill:"; find "$wd"; fail=1; }
rm -rf "$wd" "$wd".*
exit $fail
