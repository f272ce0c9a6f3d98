#!/bin/bash
# net_reports.sh BDMPIEXEC PROGRAM N [bdmpiexec options...]
# Runs net_reports (N ping-pongs between two nodes) with --stats and sums
# the masters' "deadlock-detection reports": a node reports being stuck
# only after staying so for 10 ms, so N round trips of well under that
# cost a handful.  Reporting every wait for the other node (and its end)
# cost about 2 per round trip: 2N.  The bound, N/10, leaves room for a
# loaded machine that keeps a master off the CPU for 10 ms now and then.
# Exit 0 pass, 1 fail.
set -u
exe=$1; prog=$2; n=$3; shift 3
out=$(mktemp /tmp/bdmpi-netrep.XXXXXX)
fail=0
"$exe" --stats "$@" "$prog" "$n" > "$out" 2>&1
rc=$?
grep -v '^  [A-Z]' "$out"
[ $rc = 0 ] || { echo "FAIL: exit status $rc"; fail=1; }
grep -q "PASS net_reports $n" "$out" || { echo "FAIL: no PASS line"; fail=1; }
lines=$(grep -c "deadlock-detection reports" "$out")
reports=$(sed -n 's/.*deadlock-detection reports \([0-9]*\).*/\1/p' "$out" | awk '{s += $1} END {print s + 0}')
echo "deadlock-detection reports of the masters: $reports for $n round trips ($lines masters)"
[ "$lines" -ge 2 ] || { echo "FAIL: expected a stats line from every master"; fail=1; }
if [ "$reports" -gt $((n / 10)) ]; then
    echo "FAIL: more than 1 report per 10 round trips (one per wait costs 2 per round trip)"
    fail=1
fi
rm -f "$out"
exit $fail
