#!/bin/bash
# grant_stress.sh BDMPIEXEC RANK_MEMORY RUNS
# Many short jobs whose running ranks together need more memory than the
# budget (-nr 2..4, budgets of 1-5 MiB, ranks of 1.25 MiB, every strategy
# and both write-tracking paths).  Every job must end within its timeout:
# either it passes, or it stops with the clear "cannot fit" message.  A job
# that outlives the timeout is the hang this guards against (running ranks
# waiting for grants nobody could satisfy).  Nothing may be left behind.
set -u
exe=$1; prog=$2; runs=${3:-24}
wd=$(mktemp -d /tmp/bdmpi-grant.XXXXXX)
mkdir -p "$wd/jobs"
strategies=(araw arlw lrlw)
tracks=(uffd mprotect)
fail=0; passed=0; refused=0
for ((i = 0; i < runs; i++)); do
    nr=$((2 + i % 3))
    s=${strategies[$((i / 3 % 3))]}
    t=${tracks[$((i / 9 % 2))]}
    m=$((1 + (i * 7) % 5))
    out=$wd/run$i.out
    BDMPI_WD=$wd/jobs timeout -k 5 60 "$exe" -ns 8 -nr $nr -mem ${m}M -mem-strategy $s -mem-track $t \
        -mem-threshold 16K -sbpage 16K "$prog" 1 2 > "$out" 2>&1
    rc=$?
    what="run $i: -nr $nr -mem ${m}M -mem-strategy $s -mem-track $t"
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        echo "FAIL: $what did not finish within 60 s"; tail -5 "$out"; fail=1
    elif [ $rc -eq 0 ] && grep -q "PASS rank_memory" "$out"; then
        passed=$((passed + 1))
    elif [ $rc -ne 0 ] && grep -Eq "needs [0-9]+ more bytes of memory .* cannot fit" "$out"; then
        refused=$((refused + 1))
    else
        echo "FAIL: $what exited with $rc"; tail -5 "$out"; fail=1
    fi
done
echo "$runs runs: $passed passed, $refused refused with 'cannot fit'"
left=$(find "$wd/jobs" -mindepth 1 2>/dev/null | head -3)
[ -z "$left" ] || { echo "FAIL: files left behind: $left"; fail=1; }
if pgrep -f "$prog 1 2" > /dev/null; then echo "FAIL: ranks left running"; fail=1; fi
rm -rf "$wd"
[ $passed -gt 0 ] || { echo "FAIL: no job passed (budgets too small to test the grant path)"; fail=1; }
exit $fail
