#!/bin/bash
# signal.sh SIG BDMPIEXEC PROGRAM
# SIGINT or SIGTERM (SIG: INT or TERM) to bdmpiexec while its job runs
# (rank 1 of crash.c hangs, the others wait for it), as a user's Ctrl-C or
# a batch system's kill does: the job must end with status 128+signal
# (130, 143), with nothing left behind (no process, nothing in -wd).  How
# long it took is printed (issue 18 asks for 2 s); the test only fails
# past 20 s, where it would be a hang, not slowness of a loaded machine.
# Exit 0 pass, 1 fail.
set -u
sig=$1; exe=$2; prog=$3
case "$sig" in INT) want=130 ;; TERM) want=143 ;; *) echo "usage: signal.sh INT|TERM ..."; exit 1 ;; esac
wd=$(mktemp -d /tmp/bdmpi-signal.XXXXXX)
tag="bdmpi-signal-$$-$RANDOM"
env BDMPI_WD="$wd" BDMPI_TEST_TAG="$tag" "$exe" -ns 4 -nr 2 "$prog" hang 1 >"$wd.out" 2>&1 &
launcher=$!
tagged() { grep -lsa "BDMPI_TEST_TAG=$tag" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3; }
# the ranks are up once rank 1 hangs with its spill file written
for i in $(seq 100); do
  [ -n "$(find "$wd" -name 'msg-*' 2>/dev/null)" ] && break
  sleep 0.1
done
t0=$(date +%s.%N)
kill -"$sig" "$launcher"
rc=
for i in $(seq 200); do
  if ! kill -0 "$launcher" 2>/dev/null; then
    wait "$launcher"
    rc=$?
    break
  fi
  sleep 0.1
done
t1=$(date +%s.%N)
fail=0
cat "$wd.out"
if [ -z "$rc" ]; then
  echo "FAIL: bdmpiexec still runs 20 s after SIG$sig"
  fail=1
  kill -9 $(tagged) 2>/dev/null
  wait "$launcher" 2>/dev/null
else
  echo "--- exit status $rc, $(echo "$t1 - $t0" | bc) s after SIG$sig"
  [ "$rc" = "$want" ] || { echo "FAIL: expected status $want"; fail=1; }
fi
sleep 0.3
left=$(tagged)
[ -z "$left" ] || { echo "FAIL: processes left: $left"; kill -9 $left 2>/dev/null; fail=1; }
[ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ] || { echo "FAIL: left in -wd:"; find "$wd" -mindepth 1; fail=1; }
rm -rf "$wd" "$wd.out"
[ $fail = 0 ] && echo "PASS: SIG$sig ended the job with status $want, nothing left behind"
exit $fail
