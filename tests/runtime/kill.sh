#!/bin/bash
# kill.sh TARGET BDMPIEXEC PROGRAM
# Starts a job whose rank 1 hangs, then kill -9's TARGET (rank | master |
# launcher) and checks that within 5 seconds nothing of the job is left:
# no process, no spill directory.
set -u
target=$1; exe=$2; prog=$3
wd=$(mktemp -d /tmp/bdmpi-kill.XXXXXX)
BDMPI_WD=$wd "$exe" -ns 4 -nr 2 "$prog" hang 1 >/dev/null 2>&1 &
launcher=$!
# Wait until the ranks are up and the spill file exists.
for i in $(seq 50); do
  [ -n "$(find "$wd" -name 'msg-*' 2>/dev/null)" ] && break
  sleep 0.1
done
master=$(pgrep -P "$launcher" -x bdmprun)
ranks=$(pgrep -P "$master")
case "$target" in
  rank) victim=$(echo "$ranks" | head -1) ;;
  master) victim=$master ;;
  launcher) victim=$launcher ;;
esac
if [ -z "$victim" ]; then echo "FAIL: could not find the $target process"; kill -9 $launcher $master $ranks 2>/dev/null; rm -rf "$wd"; exit 1; fi
kill -9 "$victim"
fail=1
for i in $(seq 50); do
  alive=0
  for p in $launcher $master $ranks; do kill -0 "$p" 2>/dev/null && alive=1; done
  if [ "$alive" = 0 ] && [ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ]; then fail=0; break; fi
  sleep 0.1
done
if [ "$fail" = 1 ]; then
  echo "FAIL: after kill -9 of the $target, left behind:"
  for p in $launcher $master $ranks; do kill -0 "$p" 2>/dev/null && ps -o pid,comm -p "$p" | tail -1; done
  find "$wd" -mindepth 1
  kill -9 $launcher $master $ranks 2>/dev/null
else
  echo "PASS: kill -9 of the $target left nothing behind ($((i)) tenths of a second)"
fi
wait $launcher 2>/dev/null
rm -rf "$wd"
exit $fail
