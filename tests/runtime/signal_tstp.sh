#!/bin/bash
# signal_tstp.sh NN BDMPIEXEC RANK_MEMORY
# A terminal's Ctrl-Z, then fg: SIGTSTP to bdmpiexec's process group (as
# a shell with job control makes it: its own group in the shell's
# session), with ranks in sessions of their own (-rank-session on, the
# default), so that only the launcher and the masters get it.  Every rank
# must be stopped (state T in /proc) within a few seconds; held stopped
# for 3 s (longer than -stall-timeout 1: the pause is not a stall); then
# SIGCONT to the group, and the job must complete with the right answer
# (rank_memory checks every word), status 0, nothing left.  NN: 1 or 2
# nodes.  Exit 0 pass, 1 fail.
set -u
. "$(dirname "$0")/stopped_job_end.sh"
nn=$1; exe=$2; prog=$3
wd=$(mktemp -d /tmp/bdmpi-tstp.XXXXXX)
tag="bdmpi-tstp-$$-$RANDOM"
set -m # job control: the job gets a process group of its own
env BDMPI_WD="$wd" BDMPI_TEST_TAG="$tag" "$exe" -nn "$nn" -ns 4 -nr 2 -stall-timeout 1 \
    "$prog" 8 60 > "$wd.out" 2>&1 &
launcher=$!
set +m
tagged() { grep -lsa "BDMPI_TEST_TAG=$tag" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3; }
state() { awk '{print $3}' /proc/$1/stat 2>/dev/null; }
# the ranks: tagged processes that are neither the launcher, a master nor MPICH's
ranks() {
    for p in $(tagged); do
        case "$(cat /proc/$p/comm 2>/dev/null)" in
            bdmpiexec | bdmprun | mpiexec* | hydra*) ;;
            *) echo $p ;;
        esac
    done
}
fail=0
r=
for i in $(seq 200); do
    r=$(ranks)
    [ "$(echo $r | wc -w)" -ge $((4 * nn)) ] && break
    sleep 0.05
done
pgid=$(awk '{print $5}' /proc/$launcher/stat 2>/dev/null)
if [ "$(echo $r | wc -w)" -lt $((4 * nn)) ] || [ "$pgid" != "$launcher" ]; then
    echo "FAIL: the job's ranks did not start (ranks: $r; launcher group $pgid)"
    fail=1
else
    # none of the ranks is in the launcher's group: only the forwarding stops them
    for p in $r; do
        [ "$(awk '{print $5}' /proc/$p/stat)" != "$pgid" ] ||
            { echo "FAIL: rank pid $p is in the launcher's process group"; fail=1; }
    done
    kill -TSTP -- -"$pgid"
    stopped=0
    for i in $(seq 100); do # up to 10 s on a loaded machine
        stopped=0
        for p in $r; do [ "$(state $p)" = T ] && stopped=$((stopped + 1)); done
        [ $stopped = $(echo $r | wc -w) ] && break
        sleep 0.1
    done
    echo "after SIGTSTP: $stopped of $(echo $r | wc -w) ranks stopped;" \
        "launcher state $(state $launcher)"
    [ $stopped = $(echo $r | wc -w) ] || { echo "FAIL: not every rank was stopped"; fail=1; }
    # they stay stopped: nothing of the job continues them by itself
    sleep 3
    for p in $r; do
        s=$(state $p)
        [ -z "$s" ] || [ "$s" = T ] || { echo "FAIL: rank pid $p runs again (state $s) before SIGCONT"; fail=1; }
    done
    kill -CONT -- -"$pgid"
fi
job_end 90 "PASS: Ctrl-Z stopped every rank, fg continued the job to its end"
