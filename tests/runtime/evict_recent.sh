#!/bin/bash
# evict_recent.sh BDMPIEXEC PROGRAM STRATEGY: when a grant needs room, the
# budget takes the memory of the rank whose last turn began longest ago,
# not that of a rank that just ran (src/master/memacct.c evict_before).
# Runs tests/runtime/evict_recent.c (3 ranks, -nr 1, 4 MiB arrays under
# -mem 10M: room for two; ranks 0 and 1 exchange a token 20 times while
# rank 2 waits) and checks MEM_READ: at most 3 arrays (rank 2's read back
# at the end, and what the first turns load), where taking the memory of
# the exchanging peer (the largest first, the lowest index on ties, as
# before) read an array back in each of the 40 turns (about 160 MiB).
# Also that something was unloaded at all, or nothing was tested.
# Exit 0 pass, 1 fail.
set -u
exe=$1; prog=$2; strategy=$3
wd=$(mktemp -d /tmp/bdmpi-er.XXXXXX)
common=(-ns 3 -nr 1 -mem 10M -mem-strategy "$strategy" --stats)
args=(20 4)
tag=evict_recent
show="MEM_READ MEM_WRITTEN MEM_UNLOADS"
fail=0
. "$(dirname "$0")/stats_run.sh"
run "$strategy" X=1 --
out="$wd.$strategy"
read=$(stat MEM_READ "$out"); unloads=$(stat MEM_UNLOADS "$out")
allow=$((3 * 4 << 20))
if [ -n "$read" ] && [ -n "$unloads" ]; then
  [ "$read" -le "$allow" ] ||
    { echo "FAIL: $read bytes read back, more than $allow (3 arrays)"; fail=1; }
  [ "$unloads" -gt 0 ] || { echo "FAIL: nothing was unloaded: the budget was not short"; fail=1; }
else
  echo "FAIL: no statistics"; fail=1
fi
[ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ] || { echo "FAIL: files left in $wd"; fail=1; }
rm -rf "$wd" "$wd".*
exit $fail
