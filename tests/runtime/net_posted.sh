#!/bin/bash
# net_posted.sh BDMPIEXEC PROGRAM N[:MAX] [bdmpiexec options...]
# Runs net_posted (N small sends of 1..MAX bytes from rank 0 to a rank of
# another node)
# with --stats and reads rank 0's requests to the master (RPCS): posted to
# the master's queue, the sends cost none (the 1 in 100 Ssends wait for
# their match, the rest is start-up and the end); a request each before
# (issue 12, session 17): N.  The bound is N/4.  Exit 0 pass, 1 fail.
set -u
exe=$1; prog=$2; n=${3%%:*}; max=1000
case $3 in *:*) max=${3#*:} ;; esac
shift 3
out=$(mktemp /tmp/bdmpi-netpost.XXXXXX)
fail=0
"$exe" --stats "$@" "$prog" "$n" "$max" > "$out" 2>&1
rc=$?
grep -v '^  [A-Z]' "$out" | head -40
[ $rc = 0 ] || { echo "FAIL: exit status $rc"; fail=1; }
grep -q "PASS net_posted $n" "$out" || { echo "FAIL: no PASS line"; fail=1; }
# one stats block per master: the sender's is the one with N sends (-ns 1)
read -r rpcs posted < <(awk -v n="$n" '/^bdmpi stats:/ {s = r = p = -1}
    $1 == "SENDS_MEM" {s = $2} $1 == "RPCS" {r = $2} $1 == "SENDS_POSTED" {p = $2}
    $1 == "master:" && s >= n {print r, p; exit}' "$out")
# each master's report is written whole (master.c:print_stats): every block
# names RPCS once, which lines of two reports interleaved did not
bad=$(awk '/^bdmpi stats:/ {if (nb && c != 1) bad++; nb++; c = 0} $1 == "RPCS" {c++}
    END {if (nb && c != 1) bad++; print bad + 0 " of " nb}' "$out")
case $bad in
    "0 of 2") ;;
    *) echo "FAIL: the two masters' reports are not two whole blocks ($bad blocks wrong)"; fail=1 ;;
esac
echo "rank 0: $rpcs requests to the master, $posted sends posted, for $n sends"
[ -n "$rpcs" ] || { echo "FAIL: no RPCS line"; fail=1; rpcs=999999999; }
if [ "$rpcs" -gt $((n / 4)) ]; then
    echo "FAIL: more than 1 request to the master per 4 small sends to another node"
    fail=1
fi
rm -f "$out"
exit $fail
