#!/bin/bash
# budget.sh --watch RSS_WATCH BDMPIEXEC PROGRAM BUDGET_MIB -- bdmpiexec-args... -- program-args...
# Runs the job under -mem BUDGET_MIB and, every 20 ms, takes a snapshot of
# the job's resident memory with RSS_WATCH (rss_watch.c: Pss_Anon +
# Pss_Shmem of the master and all its ranks, read while they are stopped,
# so memory handed from one rank to another is never counted twice).
# Fails if the job fails or if the peak ever exceeds the budget plus the
# stated overhead of issue 13: 16 MiB + 512 KiB per rank (-ns of the
# arguments; see CMakeLists.txt for what it covers).
set -u
[ "${1:-}" = "--watch" ] || { echo "usage: budget.sh --watch RSS_WATCH BDMPIEXEC PROGRAM BUDGET_MIB -- ..."; exit 2; }
watch=$2; shift 2
exe=$1; prog=$2; budget=$3; shift 3
[ "$1" = "--" ] && shift
args=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do args+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
ns=1
for ((i = 0; i < ${#args[@]}; i++)); do
  [ "${args[$i]}" = "-ns" ] && ns=${args[$((i + 1))]}
done
wd=$(mktemp -d /tmp/bdmpi-budget.XXXXXX)
BDMPI_WD=$wd "$exe" "${args[@]}" -mem "${budget}M" "$prog" "$@" > "$wd.out" 2>&1 &
launcher=$!
"$watch" $launcher 20 > "$wd.rss" 2>&1
wait $launcher
rc=$?
cat "$wd.out"
cat "$wd.rss"
peak=$(awk '$1 == "peak" {print $2}' "$wd.rss")
overhead=$((16384 + 512 * ns))
limit=$((budget * 1024 + overhead))
echo "peak resident of the job (Pss_Anon + Pss_Shmem): ${peak:-?} KiB; budget $((budget * 1024)) KiB" \
     "+ overhead $overhead KiB (16 MiB + 512 KiB x $ns ranks) = $limit KiB;" \
     "peak - budget = $(( ${peak:-0} - budget * 1024 )) KiB"
fail=0
[ $rc -eq 0 ] || { echo "FAIL: the job exited with $rc"; fail=1; }
[ -n "$peak" ] && [ "$peak" -gt 0 ] || { echo "FAIL: no snapshot of the job's memory"; fail=1; }
[ "${peak:-0}" -le $limit ] || { echo "FAIL: peak ${peak} KiB exceeds $limit KiB"; fail=1; }
[ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ] || { echo "FAIL: files left in $wd"; fail=1; }
rm -rf "$wd" "$wd.out" "$wd.rss"
exit $fail
