#!/bin/bash
# signal_stop.sh TARGET BDMPIEXEC RANK_MEMORY
# SIGSTOP, then 2 s later SIGCONT, of TARGET (launcher: bdmpiexec; master:
# bdmprun) in the middle of a run whose ranks' data is partly on storage
# (4 ranks of 10 MiB under -mem 12M): the job must complete with the right
# answer (rank_memory checks every word), status 0, and leave nothing
# behind.  The stop is longer than -stall-timeout 1: a master that was
# stopped must not take its own pause for a stall.  Exit 0 pass, 1 fail.
set -u
. "$(dirname "$0")/stopped_job_end.sh"
target=$1; exe=$2; prog=$3
wd=$(mktemp -d /tmp/bdmpi-stop.XXXXXX)
tag="bdmpi-stop-$$-$RANDOM"
env BDMPI_WD="$wd" BDMPI_TEST_TAG="$tag" "$exe" -ns 4 -nr 1 -mem 12M -stall-timeout 1 \
    "$prog" 8 40 > "$wd.out" 2>&1 &
launcher=$!
tagged() { grep -lsa "BDMPI_TEST_TAG=$tag" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3; }
# data on storage: a backing file with something in it
stored=
for i in $(seq 300); do
    stored=$(find "$wd" -name 'bdmem.*' -size +0 2>/dev/null | head -1)
    [ -n "$stored" ] && break
    sleep 0.05
done
master=$(for p in $(tagged); do [ "$(cat /proc/$p/comm 2>/dev/null)" = bdmprun ] && echo $p; done | head -1)
case "$target" in
    launcher) victim=$launcher ;;
    master) victim=$master ;;
    *) echo "usage: signal_stop.sh launcher|master ..."; exit 1 ;;
esac
fail=0
if [ -z "$stored" ] || [ -z "$victim" ] || ! kill -0 "$victim" 2>/dev/null; then
    echo "FAIL: no $target process, or no data on storage, while the job ran"
    fail=1
else
    kill -STOP "$victim"
    sleep 2
    state=$(awk '{print $3}' /proc/$victim/stat 2>/dev/null)
    kill -CONT "$victim"
    echo "the $target (pid $victim) was stopped for 2 s (state '$state') with $stored on storage"
    [ "$state" = T ] || { echo "FAIL: the $target was not stopped"; fail=1; }
fi
job_end 60 "PASS: SIGSTOP/SIGCONT of the $target lost nothing"
