#!/bin/bash
# coll_small.sh BDMPIEXEC PROGRAM ROUNDS [bdmpiexec options...]
# Runs coll_small (small blocking collectives, checked) with --stats and
# checks the requests the ranks made to their masters: one per collective
# (BD_REQ_COLL_SMALL, session 27) besides those of the rounds with a
# receive posted, start-up and the end; five per collective before (BEGIN,
# PUT, WAIT, GET, END).  The bound is 1.2 per collective (in place too
# since session 28: 1.32-1.35 before), or $BOUND.
# Also runs coll_local_nb (small nonblocking collectives in the ranks,
# session 28: at most one per collective, about 4 through the master).
# PROGRAM prints "PASS <its name> ROUNDS".  Exit 0 pass, 1 fail.
set -u
exe=$1; prog=$2; rounds=$3; shift 3
out=$(mktemp /tmp/bdmpi-collsmall.XXXXXX)
fail=0
"$exe" --stats "$@" "$prog" "$rounds" > "$out" 2>&1
rc=$?
grep -v '^  [A-Z]' "$out" | grep -v '^  master' | head -20
[ $rc = 0 ] || { echo "FAIL: exit status $rc"; fail=1; }
bound=${BOUND:-1.2}
grep -q "PASS $(basename "$prog") $rounds" "$out" || { echo "FAIL: no PASS line"; fail=1; }
# every master's block: total requests and collectives of its ranks
bad=$(awk -v bound="$bound" '$1 == "RPCS" {r = $2} $1 == "COLLS" {c = $2}
    /^  master: memory budget/ {n++; printf "node block %d: %d requests for %d collectives\n", n, r, c > "/dev/stderr";
        if (c < 100 || r > bound * c) b++}
    END {print b + 0 " of " n + 0}' "$out")
case $bad in
    "0 of "[1-9]*) ;;
    *) echo "FAIL: more than $bound requests to the master per collective, or no stats ($bad blocks)"; fail=1 ;;
esac
rm -f "$out"
exit $fail
