#!/bin/bash
# budget.sh --watch RSS_WATCH BDMPIEXEC PROGRAM BUDGET_MIB OVERHEAD_MIB -- bdmpiexec-args... -- program-args...
# Runs the job under -mem BUDGET_MIB and, every 20 ms, takes a snapshot of
# the resident memory (VmRSS) of the master and all its ranks with
# RSS_WATCH (rss_watch.c: the processes are stopped while they are read, so
# memory handed from one rank to another is never counted twice).  Fails if
# the job fails or if the peak ever exceeds BUDGET + OVERHEAD (the stated
# overhead of what is not managed memory, see CMakeLists.txt).
set -u
[ "${1:-}" = "--watch" ] || { echo "usage: budget.sh --watch RSS_WATCH BDMPIEXEC PROGRAM BUDGET_MIB OVERHEAD_MIB ..."; exit 2; }
watch=$2; shift 2
exe=$1; prog=$2; budget=$3; overhead=$4; shift 4
[ "$1" = "--" ] && shift
args=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do args+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
wd=$(mktemp -d /tmp/bdmpi-budget.XXXXXX)
BDMPI_WD=$wd "$exe" "${args[@]}" -mem "${budget}M" "$prog" "$@" > "$wd.out" 2>&1 &
launcher=$!
"$watch" $launcher 20 > "$wd.rss" 2>&1
wait $launcher
rc=$?
cat "$wd.out"
cat "$wd.rss"
peak=$(awk '$1 == "peak" {print $2}' "$wd.rss")
peak_mib=$(( ${peak:-0} / 1024 ))
limit=$((budget + overhead))
echo "peak resident of the job: $peak_mib MiB (budget $budget MiB + overhead $overhead MiB = $limit MiB)"
fail=0
[ $rc -eq 0 ] || { echo "FAIL: the job exited with $rc"; fail=1; }
[ -n "$peak" ] && [ "$peak" -gt 0 ] || { echo "FAIL: no snapshot of the job's memory"; fail=1; }
[ $peak_mib -le $limit ] || { echo "FAIL: peak $peak_mib MiB exceeds $limit MiB"; fail=1; }
[ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ] || { echo "FAIL: files left in $wd"; fail=1; }
rm -rf "$wd" "$wd.out" "$wd.rss"
exit $fail
