#!/bin/bash
# poll_quantum.sh BDMPIEXEC POLL_BENCH: unsuccessful polls keep the run slot
# of a rank that works between them and hand it over at once for a rank
# that only waits (src/lib/core/mt.c bdl_p2p_poll_failed, -poll-quantum).
#  1. poll_bench work (HPCC's RandomAccess pattern: a test after every
#     update) at -ns 4 -nr 1: at most one poll in 10 hands the slot over
#     (YIELDS / POLLS; about 3% measured).  With -poll-quantum 0, as before
#     the quantum, every other one did (about 50%, 4 hand-overs an update
#     against 0.2), and the run took 100x as long: that run is made too, to
#     show the check can fail.
#  2. poll_bench pingpong (each rank waits for the other's message only by
#     MPI_Test) at -ns 2 -nr 1: every exchange still hands the slot over at
#     once (YIELDS >= rounds) and the quantum stays at 0 (POLLS_KEPT at
#     most a tenth of the rounds; 0 measured).
# Exit 0 pass, 1 fail.
set -u
exe=$1; prog=$2
wd=$(mktemp -d /tmp/bdmpi-pq.XXXXXX)
trap 'rm -rf "$wd" "$wd".*' EXIT
stat() { awk -v k="$1" '$1 == k {print $2; exit}' "$2"; }
fail=0
runq() { # name args...
  local name=$1; shift
  BDMPI_WD="$wd" "$exe" --stats "$@" > "$wd.$name" 2>&1
  local rc=$?
  echo "== $name: exit $rc, POLLS $(stat POLLS "$wd.$name"), YIELDS $(stat YIELDS "$wd.$name"), POLLS_KEPT $(stat POLLS_KEPT "$wd.$name")"
  if [ $rc -ne 0 ] || ! grep -q "^PASS poll_bench" "$wd.$name"; then cat "$wd.$name"; echo "FAIL: $name"; fail=1; fi
}
runq work -ns 4 -nr 1 "$prog" work 20000
runq work_q0 -ns 4 -nr 1 -poll-quantum 0 "$prog" work 5000
runq pingpong -ns 2 -nr 1 "$prog" pingpong 3000
p=$(stat POLLS "$wd.work"); y=$(stat YIELDS "$wd.work")
[ -n "$p" ] && [ -n "$y" ] && [ $((y * 10)) -le "$p" ] ||
  { echo "FAIL: work: $y of $p unsuccessful polls handed the slot over (at most a tenth)"; fail=1; }
# The contrast by hand-overs per update (20000 updates against 5000), not
# by their share of the polls: under load a poll also fails when no other
# rank is runnable yet, and such polls once made the share 7% (273194 polls,
# 20007 hand-overs) where a quiet machine gives 50%.
y=$(stat YIELDS "$wd.work"); y0=$(stat YIELDS "$wd.work_q0")
[ -n "$y" ] && [ -n "$y0" ] && [ $((y0 * 4)) -gt $((y * 5)) ] ||
  { echo "FAIL: work with -poll-quantum 0: $y0 hand-overs in 5000 updates, against $y in 20000 with the quantum (the contrast: at least 5x as many per update)"; fail=1; }
y=$(stat YIELDS "$wd.pingpong"); k=$(stat POLLS_KEPT "$wd.pingpong")
[ -n "$y" ] && [ "$y" -ge 3000 ] || { echo "FAIL: pingpong: $y hand-overs for 3000 exchanges"; fail=1; }
[ -n "$k" ] && [ "$k" -le 300 ] || { echo "FAIL: pingpong: $k polls kept the slot (at most 300)"; fail=1; }
[ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ] || { echo "FAIL: files left in $wd"; fail=1; }
[ $fail = 0 ] && echo "PASS: poll_quantum"
exit $fail
