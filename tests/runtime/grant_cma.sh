#!/bin/bash
# grant_cma.sh TRACK RUNS BDMPIEXEC GRANT_CMA
# Regression (issue 18): two running ranks under a tight budget, one reading
# the other's send buffer with process_vm_readv while both wait for memory.
# The master kept the reader first (it held more) and never served the
# sender, whose request fitted but waited behind it, while the reader's
# could only be met by the sender, which may not shrink while it is read:
# both waited for ever (3 of 20 runs at -mem-track mprotect).  Each run
# must pass; -stall-timeout 4 turns a hang into a report, which fails it.
# Nothing may be left behind.  Exit 0 pass, 1 fail.
set -u
track=$1; runs=$2; exe=$3; prog=$4
wd=$(mktemp -d /tmp/bdmpi-grant-cma.XXXXXX)
tag="bdmpi-gcma-$$-$RANDOM"
fail=0; passed=0
strategies=(lrlw arlw)
for ((i = 0; i < runs; i++)); do
    m=$((9 + i % 2))M
    s=${strategies[$((i / 2 % 2))]}
    out=$wd.run$i
    env BDMPI_WD="$wd" BDMPI_TEST_TAG="$tag" timeout -k 5 60 "$exe" -ns 2 -nr 2 -mem $m \
        -mem-strategy $s -mem-track "$track" -mem-threshold 16K -sbpage 16K -stall-timeout 4 \
        "$prog" 2 20 > "$out" 2>&1
    rc=$?
    if [ $rc -eq 0 ] && grep -q "PASS grant_cma" "$out"; then
        passed=$((passed + 1))
    else
        echo "FAIL: run $i (-mem $m -mem-strategy $s -mem-track $track) exited with $rc:"
        grep -v '^  [A-Z_]' "$out" | head -8
        fail=1
    fi
    rm -f "$out"
done
echo "$passed of $runs runs passed"
sleep 0.2
left=$(find "$wd" -mindepth 1 2>/dev/null | head -3)
[ -z "$left" ] || { echo "FAIL: left behind: $left"; fail=1; }
procs=$(grep -lsa "BDMPI_TEST_TAG=$tag" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3)
[ -z "$procs" ] || { echo "FAIL: processes left: $procs"; kill -9 $procs 2>/dev/null; fail=1; }
rm -rf "$wd"
exit $fail
