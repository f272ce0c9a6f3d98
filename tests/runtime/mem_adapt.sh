#!/bin/bash
# mem_adapt.sh BDMPIEXEC RANK_MEMORY MEM_HOG
# The adaptive budget (issue 16) under another process's memory pressure.
# A memory cgroup with a 300 MiB limit holds a 4-rank job (4 x 40 MiB of
# managed memory, no -mem: -mem-adapt is on) and, 1.5 s into it, a second
# process that takes 200 MiB in 4 MiB steps every 50 ms, holds it 3 s and frees it.
#   - with the adaptive budget: both finish (the job with its answers
#     checked) and the cgroup saw no OOM kill;
#   - with -mem-adapt off the same scenario must end in an OOM kill (of the
#     hog or a rank), or the test proves nothing: it fails then too.
# Skips (77) without root or without a cgroup memory controller (v1, or v2
# with memory delegated to our cgroup).  Leaves no cgroup behind.
set -u
exe=$1; prog=$2; hog=$3
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to make a cgroup"; exit 77; }
v1=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ {print $3}' /proc/self/cgroup)
if [ -n "$v1" ] && [ -d "/sys/fs/cgroup/memory$v1" ]; then
  parent=/sys/fs/cgroup/memory$v1; limitf=memory.limit_in_bytes; usagef=memory.usage_in_bytes
else
  v2=$(awk -F: '$1 == "0" {print $3}' /proc/self/cgroup)
  mnt=$(awk '$9 == "cgroup2" {print $5; exit}' /proc/self/mountinfo)
  parent=$mnt$v2; limitf=memory.max; usagef=memory.current
  grep -qw memory "$parent/cgroup.subtree_control" 2>/dev/null ||
    { echo "SKIP: no cgroup memory controller to use"; exit 77; }
fi
fail=0
run() { # run MODE: prints the outcome, returns 0
  local mode=$1 cg=$parent/bdmpi-adapt-$$-$1 out
  mkdir "$cg" 2>/dev/null || { echo "SKIP: cannot create a cgroup under $parent"; exit 77; }
  echo $((300 << 20)) > "$cg/$limitf" || { rmdir "$cg"; echo "SKIP: cannot set $limitf"; exit 77; }
  out=$(mktemp /tmp/bdmpi-adapt.XXXXXX)
  (
    echo $BASHPID > "$cg/cgroup.procs"
    timeout -k 5 120 "$exe" -ns 4 -nr 1 -mem-adapt "$mode" --stats "$prog" 32 40 >"$out.job" 2>&1 &
    job=$!
    # the other process starts once the job holds most of its memory
    for i in $(seq 600); do
      [ "$(cat "$cg/$usagef")" -gt $((150 << 20)) ] && break
      sleep 0.05
    done
    "$hog" 200 4 50 3000; echo "hog status $?"
    wait $job; echo "job status $?"
  ) >"$out" 2>&1
  cat "$out.job" >>"$out"
  local kills
  if [ "$limitf" = memory.max ]; then
    kills=$(awk '$1 == "oom_kill" {print $2}' "$cg/memory.events")
  else
    kills=$(awk '$1 == "oom_kill" {print $2}' "$cg/memory.oom_control")
  fi
  echo "== -mem-adapt $mode: oom kills ${kills:-?}"
  grep -E 'status|PASS|warning|adaptive budget|killed|mem_hog' "$out"
  RES_KILLS=${kills:-0}
  RES_OK=0
  grep -q '^hog status 0$' "$out" && grep -q '^job status 0$' "$out" && grep -q 'PASS rank_memory' "$out" && RES_OK=1
  rm -f "$out" "$out.job"
  for i in 1 2 3 4 5; do rmdir "$cg" 2>/dev/null && break; sleep 0.5; done
}
run on
if [ "$RES_OK" != 1 ] || [ "$RES_KILLS" != 0 ]; then
  echo "FAIL: with the adaptive budget the job and the other process must both finish, without an OOM kill"
  fail=1
fi
run off
if [ "$RES_KILLS" = 0 ] && [ "$RES_OK" = 1 ]; then
  echo "FAIL: without the adaptive budget the scenario did not run out of memory: the test shows nothing"
  fail=1
fi
[ $fail = 0 ] && echo "PASS mem_adapt"
exit $fail
