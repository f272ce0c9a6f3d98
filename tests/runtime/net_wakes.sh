#!/bin/bash
# net_wakes.sh BDMPIEXEC PROGRAM N [bdmpiexec options...]
# Runs net_reports (N ping-pongs between two nodes) with --stats and counts
# the masters' system calls that a round trip used to cost twice over
# (issue 12, session 18):
#  - safety-net reaps (a wait4 for a SIGCHLD not seen): done at every turn
#    of the event loop that found nothing, about 2 in 3 turns; now at most
#    every 10 ms: the bound is a quarter of the turns;
#  - reads of the doorbell socket: a read until EAGAIN took 2 per doorbell;
#    now one recvmmsg takes what is there: at most 1.1 per doorbell heard.
# Exit 0 pass, 1 fail.
set -u
exe=$1; prog=$2; n=$3; shift 3
out=$(mktemp /tmp/bdmpi-netwakes.XXXXXX)
fail=0
"$exe" --stats "$@" "$prog" "$n" > "$out" 2>&1
rc=$?
grep -v '^  [A-Z]' "$out"
[ $rc = 0 ] || { echo "FAIL: exit status $rc"; fail=1; }
grep -q "PASS net_reports $n" "$out" || { echo "FAIL: no PASS line"; fail=1; }
lines=$(grep -c "event-loop turns" "$out")
sum() { sed -n "s/.*$1 \([0-9]*\).*/\1/p" "$out" | awk '{s += $1} END {print s + 0}'; }
reaps=$(sum "safety-net reaps")
turns=$(sum "event-loop turns")
heard=$(sum "heard")
reads=$(sed -n 's/.* in \([0-9]*\) reads.*/\1/p' "$out" | awk '{s += $1} END {print s + 0}')
echo "masters: $turns event-loop turns, $reaps safety-net reaps, $heard doorbells heard in $reads reads, for $n round trips ($lines masters)"
[ "$lines" -ge 2 ] || { echo "FAIL: expected a stats line from every master"; fail=1; }
[ "$heard" -ge "$n" ] || { echo "FAIL: fewer doorbells than round trips (each answer rings one)"; fail=1; }
if [ "$reaps" -gt $((turns / 4)) ]; then
    echo "FAIL: a safety-net reap in more than 1 of 4 turns of the event loop"
    fail=1
fi
if [ "$reads" -gt $((heard + heard / 10 + 10)) ]; then
    echo "FAIL: more than 1.1 reads of the doorbell socket per doorbell"
    fail=1
fi
rm -f "$out"
exit $fail
