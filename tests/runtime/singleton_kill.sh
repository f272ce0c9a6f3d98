#!/bin/bash
# singleton_kill.sh TARGET PROGRAM
# Starts PROGRAM (built with bdmpicc) without bdmpiexec, as a singleton whose
# one rank hangs (crash hang 0), then ends it from outside: TARGET "term"
# sends SIGTERM to the process started (the singleton's master: MPI_Init
# exec'ed bdmprun there), "rank" kill -9's the rank.  Within 5 seconds
# nothing of the job may be left: no process, no job directory.
set -u
target=$1; prog=$2
wd=$(mktemp -d /tmp/bdmpi-single.XXXXXX)
tag="bdmpi-single-$$-$RANDOM"
env BDMPI_WD="$wd" BDMPI_TEST_TAG="$tag" setsid "$prog" hang 0 >"$wd.out" 2>&1 &
started=$!
tagged() { grep -lsa "BDMPI_TEST_TAG=$tag" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3; }
# Wait until the started process is the master and has its rank.
rank=
for i in $(seq 100); do
  if [ "$(cat /proc/$started/comm 2>/dev/null)" = bdmprun ]; then
    rank=$(pgrep -P "$started" | head -1)
    # up: its 1 MiB message to itself is in a spill file (the job directory
    # alone appears before the master is ready for a rank to die)
    [ -n "$rank" ] && [ -n "$(find "$wd" -name 'msg-*' 2>/dev/null)" ] && break
  fi
  sleep 0.1
done
if [ -z "$rank" ]; then
  echo "FAIL: the singleton did not become a master with a rank"; cat "$wd.out"
  kill -9 $(tagged) 2>/dev/null; rm -rf "$wd" "$wd.out"; exit 1
fi
case "$target" in
  term) kill -TERM "$started" ;;
  rank) kill -9 "$rank" ;;
esac
fail=1
for i in $(seq 50); do
  if [ -z "$(tagged)" ] && [ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ]; then fail=0; break; fi
  sleep 0.1
done
wait $started
rc=$?
cat "$wd.out"
if [ "$fail" = 1 ]; then
  echo "FAIL: after ending the singleton ($target), left behind:"
  for p in $(tagged); do ps -o pid,comm -p "$p" | tail -1; done
  find "$wd" -mindepth 1
  kill -9 $(tagged) 2>/dev/null
elif [ "$rc" -eq 0 ]; then
  echo "FAIL: the singleton ended with status 0 after its rank was ended ($target)"; fail=1
elif ! grep -q "rank 0 (pid $rank)\|received signal" "$wd.out"; then
  echo "FAIL: no message naming the cause"; fail=1
else
  echo "PASS: ending the singleton ($target) left nothing behind; status $rc"
fi
rm -rf "$wd" "$wd.out"
exit $fail
