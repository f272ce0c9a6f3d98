#!/bin/bash
# poll_parked.sh BDMPIEXEC POLL_BENCH: a rank that polls in a loop
# (MPI_Iprobe) for a rank of its own node that waits in the master (parked:
# neither running nor waiting for a run slot) sleeps in the master until
# the message comes, as a poll for another node's message does, instead of
# keeping the slot spinning for -poll-quantum while the rank it waits for,
# or the one that would release it, waits for that slot
# (src/lib/core/match.c bdl_p2p_parked).
#   poll_bench relay at -ns 4 -nr 1: a token around the ranks, each waiting
#   for its predecessor by MPI_Iprobe; every rank but the token's holder is
#   parked.  Default: at most 4 unsuccessful polls kept the slot per round
#   (POLLS_KEPT; 0-1 measured; such a poll sleeps in the master or, when
#   another rank waits for the slot, hands it over: POLL_SLEEPS and YIELDS
#   are printed).  With -poll-remote 0 (no poll sleeps in the
#   master, the behaviour before) the ranks kept the slot for millions of
#   polls (29 M for 500 rounds): that run is made too, to show the check can
#   fail.
# Counts, not times.  Exit 0 pass, 1 fail.
set -u
exe=$1; prog=$2
wd=$(mktemp -d /tmp/bdmpi-pp.XXXXXX)
trap 'rm -rf "$wd" "$wd".*' EXIT
stat() { awk -v k="$1" '$1 == k {if ($2 > m) m = $2; f = 1} END {if (f) print m + 0}' "$2"; }
fail=0
n=500
runq() { # name args...
  local name=$1; shift
  BDMPI_WD="$wd" timeout -k 5 100 "$exe" --stats "$@" > "$wd.$name" 2>&1
  local rc=$?
  echo "== $name: exit $rc: POLLS_KEPT $(stat POLLS_KEPT "$wd.$name"), POLL_SLEEPS $(stat POLL_SLEEPS "$wd.$name"), YIELDS $(stat YIELDS "$wd.$name"), $(grep -h '^RESULT' "$wd.$name")"
  if [ $rc -ne 0 ] || ! grep -q "^PASS poll_bench" "$wd.$name"; then cat "$wd.$name"; echo "FAIL: $name"; fail=1; fi
}
runq relay -ns 4 -nr 1 "$prog" relay $n
runq relay_off -ns 4 -nr 1 -poll-remote 0 "$prog" relay $n
k=$(stat POLLS_KEPT "$wd.relay")
[ -n "$k" ] && [ "$k" -le $((4 * n)) ] ||
  { echo "FAIL: relay: $k polls kept the slot for $n rounds (at most $((4 * n)))"; fail=1; }
k=$(stat POLLS_KEPT "$wd.relay_off"); s=$(stat POLL_SLEEPS "$wd.relay_off")
[ -n "$k" ] && [ "$k" -gt $((4 * n)) ] && [ "$s" = 0 ] ||
  { echo "FAIL: relay with -poll-remote 0: $k polls kept, $s slept (the contrast: more than $((4 * n)), none)"; fail=1; }
[ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ] || { echo "FAIL: files left in $wd"; fail=1; }
[ $fail = 0 ] && echo "PASS: poll_parked"
exit $fail
