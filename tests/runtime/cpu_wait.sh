#!/bin/bash
# cpu_wait.sh BDMPIEXEC PROGRAM: a running rank that waits for a CPU taken
# by another process is shown waiting for a CPU (TIME_CPU_WAIT_NS, from the
# kernel's run_delay of its MPI thread), not computing (issue 13, session
# 18: SGD's "computing" doubled between two matrix cells only because the
# machine was busier).  The job and a busy loop of our own (in a session of
# its own, as the ranks are, so autogroup gives each its share) are bound to
# one CPU; each rank needs 2 x 300 ms of CPU, so about half of its wall time
# running is spent waiting for the CPU.  Checks that at least a quarter of
# computing + waiting for a CPU is the latter, and that "where the time
# went" names it.  Exit 0 pass, 1 fail, 77 skip (no schedstat or taskset).
set -u
exe=$1; prog=$2
[ -r /proc/thread-self/schedstat ] || { echo "SKIP: no /proc/thread-self/schedstat"; exit 77; }
command -v taskset > /dev/null || { echo "SKIP: no taskset"; exit 77; }
cpu=$(taskset -pc $$ | sed 's/.*: *//; s/[-,].*//')
wd=$(mktemp -d /tmp/bdmpi-wd.XXXXXX)
setsid taskset -c "$cpu" bash -c 'while :; do :; done' &
hog=$!
trap 'kill "$hog" 2> /dev/null' EXIT
BDMPI_WD=$wd taskset -c "$cpu" "$exe" -ns 2 -nr 1 --stats "$prog" 2 300 > "$wd.out" 2>&1
rc=$?
kill "$hog"
wait "$hog" 2> /dev/null
cat "$wd.out"
stat() { awk -v k="$1" '$1 == k {print $2}' "$wd.out"; }
comp=$(stat TIME_COMPUTE_NS); cw=$(stat TIME_CPU_WAIT_NS)
fail=0
if [ $rc -ne 0 ] || ! grep -q "^PASS cpu_wait" "$wd.out"; then
  echo "FAIL: the job failed ($rc)"; fail=1
elif [ -z "$comp" ] || [ -z "$cw" ]; then
  echo "FAIL: no TIME_COMPUTE_NS or TIME_CPU_WAIT_NS in --stats"; fail=1
else
  echo "computing $comp ns, waiting for a CPU while running $cw ns (CPU $cpu shared with a busy loop)"
  [ $((4 * cw)) -ge $((comp + cw)) ] ||
    { echo "FAIL: less than a quarter of the running time counted as waiting for a CPU"; fail=1; }
  grep -q "s waiting for a CPU while running" "$wd.out" ||
    { echo "FAIL: 'where the time went' does not show the wait for a CPU"; fail=1; }
fi
[ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ] || { echo "FAIL: files left in $wd"; fail=1; }
rm -rf "$wd" "$wd.out"
exit $fail
