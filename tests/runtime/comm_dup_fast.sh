#!/bin/bash
# comm_dup_fast.sh BDMPIEXEC PROGRAM N [bdmpiexec options...]
# Runs comm_dup_fast (N iterations of dups used and freed, then 300 dups
# kept; it checks what it gets), then its bare loop of 4N dups and frees
# with --stats: a dup must not be a collective through the master.  One
# through the master costs each rank 6 requests and its free one more;
# from a reserved range a dup and its free cost none (notices in shared
# memory; one request when 32 wait), and one dup in 256 reserves the next
# ones through the master.  The bound is 1 request per 4 dups.
# Exit 0 pass, 1 fail.
set -u
exe=$1; prog=$2; n=$3; shift 3
out=$(mktemp /tmp/bdmpi-dup.XXXXXX)
fail=0
"$exe" "$@" "$prog" "$n" > "$out" 2>&1
rc=$?
cat "$out"
[ $rc = 0 ] || { echo "FAIL: exit status $rc"; fail=1; }
grep -q "PASS comm_dup_fast $n" "$out" || { echo "FAIL: no PASS line"; fail=1; }
bare=$((4 * n))
"$exe" --stats "$@" "$prog" "$bare" bare > "$out" 2>&1
rc=$?
grep -v '^  [A-Z]' "$out"
[ $rc = 0 ] || { echo "FAIL: exit status $rc (bare)"; fail=1; }
grep -q "PASS comm_dup_fast $bare bare" "$out" || { echo "FAIL: no PASS line (bare)"; fail=1; }
rpcs=$(awk '$1 == "RPCS" {print $5}' "$out" | sort -n | tail -1)
echo "requests to the master: at most $rpcs of a rank for $bare dups and as many frees"
if [ -z "$rpcs" ] || [ "$rpcs" -gt $((bare / 4)) ]; then
    echo "FAIL: more than 1 request per 4 dups (a dup through the master costs 7 with its free)"
    fail=1
fi
rm -f "$out"
exit $fail
