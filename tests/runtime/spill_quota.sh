#!/bin/bash
# spill_quota.sh BDMPIEXEC FLOW COLL_STAGE CASE
# The spill quota (-spill-max, issue 17).  CASE:
#   p2p     rank 0 sends 8 x 256 KiB to rank 1, which receives them only
#           after a message sent last (-nr 1: all 8 wait in spill files),
#           under -spill-max 1M: the job stops with the error naming the
#           directory, the bytes and the rank, and leaves no process and no
#           file behind;
#   coll    collective data the master stages in its spill file
#           (-mem-strategy none, -msg-threshold 4K) under -spill-max 64K:
#           the same, naming the collective;
#   within  the p2p burst, three rounds of it, under -spill-max 4M passes
#           (the bytes of received messages are given back: 6 MiB in all),
#           and --stats shows a peak of exactly the 2 MiB that waited at
#           once (SPILL_PEAK).
# Exit 0 pass, 1 fail.
set -u
unset BDMPI_P2P_TOKENS # flow control would keep the burst under the quota
exe=$1; flow=$2; coll=$3; case=$4
wd=$(mktemp -d /tmp/bdmpi-quota.XXXXXX)
out=$(mktemp /tmp/bdmpi-quota-out.XXXXXX)
tag="bdmpi-quota-$$-$RANDOM"
run() { env BDMPI_TEST_TAG="$tag" timeout -k 5 100 "$exe" -wd "$wd" "$@" >"$out" 2>&1; }
fail=0
case $case in
p2p)
  run -ns 3 -nr 1 -spill-max 1M "$flow" burst 8 262144; rc=$?
  re="spill quota exceeded in $wd/bdmpi\.[^:]*: rank 0 sent 262144 bytes \(a message to rank 1\), which would make [0-9]+ bytes of communication data in the node's spill files, over -spill-max 1048576 \[MPI_ERR_QUOTA\]" ;;
coll)
  run -ns 4 -nr 1 -mem-strategy none -msg-threshold 4K -spill-max 64K "$coll"; rc=$?
  re="spill quota exceeded in $wd/bdmpi\.[^:]*: rank [0-3] sent [0-9]+ bytes \(MPI_[A-Za-z]+ data\), which would make [0-9]+ bytes of communication data in the node's spill files, over -spill-max 65536 \[MPI_ERR_QUOTA\]" ;;
within)
  run -ns 3 -nr 1 -spill-max 4M --stats "$flow" burst 8 262144; rc=$? ;;
*) echo "unknown case $case"; exit 1 ;;
esac
cat "$out"
echo "--- exit status $rc"
if [ "$case" = within ]; then
  [ $rc -eq 0 ] || { echo "FAIL: expected success, got $rc"; fail=1; }
  grep -q "flow burst: ok" "$out" || { echo "FAIL: no 'flow burst: ok'"; fail=1; }
  peak=$(awk '$1 == "SPILL_PEAK" {print $2}' "$out")
  [ "$peak" = 2097152 ] || { echo "FAIL: SPILL_PEAK is '$peak', expected 2097152 (8 x 256 KiB)"; fail=1; }
else
  [ $rc -ne 0 ] && [ $rc -ne 124 ] || { echo "FAIL: expected a non-zero status (not a timeout), got $rc"; fail=1; }
  grep -Eq -e "$re" "$out" || { echo "FAIL: no message matching: $re"; fail=1; }
fi
sleep 0.2
left=$(grep -lsa "BDMPI_TEST_TAG=$tag" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3)
[ -z "$left" ] || { echo "FAIL: processes left behind: $left"; kill -9 $left 2>/dev/null; fail=1; }
[ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ] || { echo "FAIL: files left in $wd:"; find "$wd" -mindepth 1; fail=1; }
rm -rf "$wd" "$out"
exit $fail
