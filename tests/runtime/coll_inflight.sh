#!/bin/bash
# coll_inflight.sh BDMPIEXEC PROGRAM MEM [stored]
# The master writes collective data to its spill files from an I/O thread
# (src/master/coll_stage.c).  Here every such write is held back 20 ms
# (BDMPI_STAGE_WRITE_DELAY_US, for tests), so the ranks GET pieces whose
# writes are still in flight: PROGRAM (coll_stage) checks every byte it
# receives, and --stats must show bytes read while being written.  With
# "stored", pieces the master first kept in memory must also have been
# moved to the file when a rank needed the memory (bdr_coll_shrink).
# Exit 0 pass, 1 fail.
set -u
exe=$1; prog=$2; mem=$3; want_stored=${4:-}
out=$(mktemp /tmp/bdmpi-inflight.XXXXXX)
BDMPI_STAGE_WRITE_DELAY_US=20000 timeout -k 5 200 "$exe" -ns 4 -nr 1 -mem "$mem" --stats "$prog" >"$out" 2>&1
rc=$?
grep -E "PASS|FAIL|master: bytes of collective|rank [0-9]+:" "$out" | head -40
echo "--- exit status $rc"
fail=0
[ $rc -eq 0 ] || { echo "FAIL: exit status $rc"; tail -20 "$out"; fail=1; }
grep -q "PASS coll_stage" "$out" || { echo "FAIL: the program did not pass"; fail=1; }
line=$(grep -E "master: bytes of collective data moved from memory to spill files" "$out")
stored=$(sed -nE 's/.*moved from memory to spill files ([0-9]+).*/\1/p' <<<"$line")
hits=$(sed -nE 's/.*read while being written ([0-9]+).*/\1/p' <<<"$line")
[ -n "$hits" ] && [ "$hits" -gt 0 ] || { echo "FAIL: no GET read data still being written (${hits:-no stats line})"; fail=1; }
if [ "$want_stored" = stored ]; then
  [ -n "$stored" ] && [ "$stored" -gt 0 ] || { echo "FAIL: no piece kept in memory was moved to the file (${stored:-no stats line})"; fail=1; }
fi
rm -f "$out"
exit $fail
