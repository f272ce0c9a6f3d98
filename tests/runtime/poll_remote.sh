#!/bin/bash
# poll_remote.sh BDMPIEXEC POLL_BENCH: a rank that polls in a loop
# (MPI_Iprobe) for a message only a rank of another node can send sleeps in
# the master until it comes, instead of spinning on the CPU its master needs
# to deliver it and handing its run slot back and forth with the node's
# other rank, which polls for the other node too (src/lib/core/mt.c
# bdl_p2p_poll_failed_remote, -poll-remote).
#   poll_bench cross at -nn 2 -ns 2 -nr 1: every pair spans the nodes.
#   Default: on each node at least half as many polls slept (POLL_SLEEPS)
#   as there were exchanges, and at most 2 hand-overs per exchange (YIELDS;
#   about 0.8 measured).  With -poll-remote 0, as before, no poll sleeps and
#   each node handed over 6-8 times per exchange: that run is made too, to
#   show the check can fail.
# Counts, not times.  Exit 0 pass, 1 fail, 77 skip (no MPI launcher for -nn).
set -u
exe=$1; prog=$2
command -v mpiexec.mpich >/dev/null || command -v mpiexec.hydra >/dev/null ||
  command -v mpiexec >/dev/null || { echo "SKIP: no mpiexec for -nn 2"; exit 77; }
wd=$(mktemp -d /tmp/bdmpi-pr.XXXXXX)
trap 'rm -rf "$wd" "$wd".*' EXIT
# the largest of the nodes' totals of a stat (one --stats block per node)
stat() { awk -v k="$1" '$1 == k {if ($2 > m) m = $2; f = 1} END {if (f) print m + 0}' "$2"; }
statmin() { awk -v k="$1" '$1 == k {if (!f || $2 < m) m = $2; f = 1} END {if (f) print m + 0}' "$2"; }
fail=0
n=1000
runq() { # name args...
  local name=$1; shift
  BDMPI_WD="$wd" "$exe" --stats "$@" > "$wd.$name" 2>&1
  local rc=$?
  echo "== $name: exit $rc, per node max: YIELDS $(stat YIELDS "$wd.$name"), POLL_SLEEPS $(stat POLL_SLEEPS "$wd.$name")"
  if [ $rc -ne 0 ] || ! grep -q "^PASS poll_bench" "$wd.$name"; then cat "$wd.$name"; echo "FAIL: $name"; fail=1; fi
}
runq cross -nn 2 -ns 2 -nr 1 "$prog" cross $n
runq cross_off -nn 2 -ns 2 -nr 1 -poll-remote 0 "$prog" cross $n
y=$(stat YIELDS "$wd.cross"); s=$(statmin POLL_SLEEPS "$wd.cross")
[ -n "$y" ] && [ "$y" -le $((2 * n)) ] ||
  { echo "FAIL: cross: $y hand-overs on a node for $n exchanges (at most $((2 * n)))"; fail=1; }
[ -n "$s" ] && [ $((2 * s)) -ge $n ] ||
  { echo "FAIL: cross: $s polls slept on a node for $n exchanges (at least $((n / 2)))"; fail=1; }
y=$(stat YIELDS "$wd.cross_off"); s=$(stat POLL_SLEEPS "$wd.cross_off")
[ -n "$y" ] && [ "$y" -gt $((2 * n)) ] && [ "$s" = 0 ] ||
  { echo "FAIL: cross with -poll-remote 0: $y hand-overs, $s sleeps (the contrast: more than $((2 * n)), none)"; fail=1; }
[ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ] || { echo "FAIL: files left in $wd"; fail=1; }
[ $fail = 0 ] && echo "PASS: poll_remote"
exit $fail
