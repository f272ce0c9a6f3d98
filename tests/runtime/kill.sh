#!/bin/bash
# kill.sh TARGET BDMPIEXEC PROGRAM [NN]
# Starts a job (on NN nodes, default 1) whose rank 1 hangs, then kill -9's
# TARGET (rank | master | launcher | group: the launcher's whole process
# group at once, as `timeout -s KILL` does) and checks that within 5 seconds
# nothing of the job is left: no process, no spill directory.
set -u
target=$1; exe=$2; prog=$3; nn=${4:-1}
wd=$(mktemp -d /tmp/bdmpi-kill.XXXXXX)
tag="bdmpi-kill-$$-$RANDOM"
env BDMPI_WD="$wd" BDMPI_TEST_TAG="$tag" setsid "$exe" -nn "$nn" -ns 4 -nr 2 "$prog" hang 1 >/dev/null 2>&1 &
launcher=$!
# Wait until the ranks are up and the spill file exists.
for i in $(seq 50); do
  [ -n "$(find "$wd" -name 'msg-*' 2>/dev/null)" ] && break
  sleep 0.1
done
tagged() { grep -lsa "BDMPI_TEST_TAG=$tag" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3; }
masters=$(for p in $(tagged); do [ "$(cat /proc/$p/comm 2>/dev/null)" = bdmprun ] && echo $p; done)
master=$(echo "$masters" | tail -1)
ranks=$(pgrep -P "$master")
case "$target" in
  rank) victim=$(echo "$ranks" | head -1) ;;
  master) victim=$master ;;
  launcher) victim=$launcher ;;
  group) victim=-$launcher ;;
esac
if [ -z "$victim" ]; then echo "FAIL: could not find the $target process"; kill -9 $launcher $master $ranks 2>/dev/null; rm -rf "$wd"; exit 1; fi
kill -9 -- "$victim"
fail=1
for i in $(seq 50); do
  alive=0
  [ -n "$(tagged)" ] && alive=1
  if [ "$alive" = 0 ] && [ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ]; then fail=0; break; fi
  sleep 0.1
done
if [ "$fail" = 1 ]; then
  echo "FAIL: after kill -9 of the $target, left behind:"
  for p in $(tagged); do ps -o pid,comm -p "$p" | tail -1; done
  find "$wd" -mindepth 1
  kill -9 $(tagged) 2>/dev/null
else
  echo "PASS: kill -9 of the $target left nothing behind ($((i)) tenths of a second)"
fi
wait $launcher 2>/dev/null
rm -rf "$wd"
exit $fail
