#!/bin/bash
# budget.sh BDMPIEXEC PROGRAM BUDGET_MIB OVERHEAD_MIB -- bdmpiexec-args... -- program-args...
# Runs the job under -mem BUDGET_MIB and samples, every 20 ms, the resident
# memory of the master and all its ranks.  Fails if the job fails or if the
# peak ever exceeds BUDGET + OVERHEAD (the stated per-process overhead of
# code, libraries and shared windows, which is not managed memory).
set -u
exe=$1; prog=$2; budget=$3; overhead=$4; shift 4
[ "$1" = "--" ] && shift
args=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do args+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
wd=$(mktemp -d /tmp/bdmpi-budget.XXXXXX)
page=$(getconf PAGESIZE)
BDMPI_WD=$wd "$exe" "${args[@]}" -mem "${budget}M" "$prog" "$@" > "$wd.out" 2>&1 &
launcher=$!
peak=0
while kill -0 $launcher 2>/dev/null; do
  master=$(pgrep -P $launcher -x bdmprun | head -1)
  if [ -n "$master" ]; then
    tot=0
    for p in $master $(pgrep -P "$master"); do
      r=$(awk '{print $2}' /proc/$p/statm 2>/dev/null)
      [ -n "$r" ] && tot=$((tot + r))
    done
    [ $tot -gt $peak ] && peak=$tot
  fi
  sleep 0.02
done
wait $launcher
rc=$?
cat "$wd.out"
peak_mib=$((peak * page / 1048576))
limit=$((budget + overhead))
echo "peak resident of the job: $peak_mib MiB (budget $budget MiB + overhead $overhead MiB = $limit MiB)"
fail=0
[ $rc -eq 0 ] || { echo "FAIL: the job exited with $rc"; fail=1; }
[ $peak_mib -le $limit ] || { echo "FAIL: peak $peak_mib MiB exceeds $limit MiB"; fail=1; }
[ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ] || { echo "FAIL: files left in $wd"; fail=1; }
rm -rf "$wd" "$wd.out"
exit $fail
