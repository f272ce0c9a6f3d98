#!/bin/bash
# corun_capped.sh BDMPIEXEC PROGRAM STRATEGY: at -nr 2, a rank whose working
# set does not fit beside the running rank's, but with room for more than
# half of it, runs beside it with its grants capped (issue 13, session 17).
# Runs tests/runtime/corun_fit.c (4 ranks, 4 x 1 MiB each, 15 rounds, 30 ms
# of computing between two arrays) under -mem 6656K: one rank's 4 MiB
# leaves 2.5 MiB, room for two or three of the next rank's arrays but not
# four.  Checks from --stats that ranks got the second
# slot so (CORUN_CAPPED, about once a round; 0 where such a rank was kept
# from the slot, CORUN_HELD, and -nr 2 ran as -nr 1), and that the rank
# running first never gave memory back to the one let in beside it
# (MEM_SHRINKS about the first round's, at most 4, 0-2 in 12 runs: its
# grants keep what the first one's turn loads; let in without that cap,
# the pair got stuck and shrank 6-17 times in 6 runs).  Without the cap
# and the admission, a rank that does not fit is kept from the slot
# (CORUN_HELD) and there is no CORUN_CAPPED.  The program checks every
# word it reads.
# Exit 0 pass, 1 fail.
set -u
exe=$1; prog=$2; strategy=$3
wd=$(mktemp -d /tmp/bdmpi-wd.XXXXXX)
common=(-ns 4 -nr 2 -mem 6656K -mem-strategy "$strategy" -sbpage 64K -mem-threshold 256K --stats)
args=(1024 15 4)
tag=corun_fit
show="MEM_SHRINKS MEM_SHRUNK CORUN_CAPPED CORUN_HELD MEM_READ MEM_WRITTEN"
fail=0
. "$(dirname "$0")/stats_run.sh"
run "$strategy" X=1 --
out="$wd.$strategy"
shrinks=$(stat MEM_SHRINKS "$out"); capped=$(stat CORUN_CAPPED "$out")
if [ -z "$shrinks" ] || [ -z "$capped" ]; then
  echo "FAIL: no MEM_SHRINKS or CORUN_CAPPED in --stats"; fail=1
else
  [ "$shrinks" -le 4 ] ||
    { echo "FAIL: running ranks gave memory back $shrinks times (at most 4: about the first round's)"; fail=1; }
  [ "$capped" -ge 10 ] ||
    { echo "FAIL: a rank got the second slot with a cap only $capped times in 20 rounds (at least 10)"; fail=1; }
fi
[ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ] || { echo "FAIL: files left in $wd"; fail=1; }
rm -rf "$wd" "$wd".*
exit $fail
