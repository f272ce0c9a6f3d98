#!/bin/bash
# flow_inb.sh BDMPIEXEC FLOW_INB CASE: bounded staging (-coll-stage) of the
# nonblocking MPI_Iallgather(v), MPI_Ibcast, MPI_Igather(v) and
# MPI_Iscatter(v), one node and across nodes (issue 17, session 19), every byte checked by
# FLOW_INB (flow_inb.c), and the master's staging peak (STAGE_PEAK) against
# the bound of docs/design.md ("Nonblocking gathers, scatters, allgathers
# and broadcasts"): per instance -coll-stage plus, per rank running at
# once, a piece (an allgather's, gather's or scatter's block, 1 MiB here;
# a broadcast's part, a quarter of the bound) and a window (256 KiB);
# rounds back to back, or instances at once, add one such bound each.
# Staged whole (-coll-stage 0, the *_whole cases) an 8-rank allgather of
# 1 MiB blocks held 8 MiB, a broadcast its 8 MiB.
#   iallgather (-ns 8 -nr 1, 1 MiB blocks), iallgather16 (16 ranks, 512 KiB
#   blocks), iallgather_test (an MPI_Test loop, -nr 2), iallgather_late
#   (the lower the rank the later its MPI_Wait, two rounds),
#   iallgatherv (-nr 2, an empty block, reverse order, two rounds),
#   iallgather_ip (in place), iallgather_file (-mem-strategy none: the
#   spill file, SPILL_PEAK too), ibcast (8 MiB), ibcast_nr2 (two rounds,
#   roots 0 and 1), igather, iscatter (the v forms, roots 0 and 1), mix
#   (all four at once, completed in opposite orders by even and odd ranks),
#   mix_late, mix_test (-nr 2, each completed by an MPI_Test loop on it
#   alone), recv (rank 1 waits in MPI_Recv for rank 0, which sends after
#   its MPI_Wait: completes; the blocks unread by rank 1 count on top),
#   persist (MPI_Allgather_init and MPI_Bcast_init started 3 times: two
#   instances at once, rounds back to back; 15.7 MB staged whole); across
#   nodes iallgather_nodes, ibcast_nodes, igather_nodes, iscatter_nodes,
#   mix_nodes (MPI_Test loops), recv_nodes, and iallgather_nodes_whole.
#   iallgather_big (8 MiB blocks, session 21: in parts of P, a part per
#   running rank where a block was before), iallgather_big_test
#   (MPI_Iallgatherv, an MPI_Test loop, -nr 2), iallgather_big_ip,
#   iallgather_big_nodes.
# Exit 0 pass, 1 fail.
set -u
exe=$1; prog=$2; case=$3
out=$(mktemp /tmp/bdmpi-flowinb-out.XXXXXX)
stat_max() { awk -v s="$1" '$1 == s && $2 > m {m = $2} END {print m + 0}' "$out"; }
B=2097152; WIN=262144; MB=1048576
run() { timeout -k 5 100 "$exe" --stats "$@" >"$out" 2>&1; }
P=$(($B / 4)); AG=$(($MB + 4096))
one=$(($B + $AG + $WIN)); two=$(($B + 2 * ($AG + $WIN)))
nodes="-nn 2 -ns 4 -nr 1 -coll-stage 2M"
nodes_bound() { # PIECE, at -nn 2 -nr 1
  local w=$(($B / 2)); [ $w -ge $1 ] || w=$1
  echo $(($B - $B / 2 + $1 + $WIN + $w))
}
# blocks of 8 MiB (four times the bound) go in parts of P (session 21)
BIG=$((8 * $MB))
case $case in
iallgather) run -ns 8 -nr 1 -coll-stage 2M "$prog" iallgather 1 $MB; bound=$one ;;
iallgather16) run -ns 16 -nr 1 -coll-stage 2M "$prog" iallgather 1 $(($MB / 2)); bound=$(($B + $MB / 2 + $WIN)) ;;
iallgather_test) run -ns 8 -nr 2 -coll-stage 2M "$prog" iallgather 1 $MB test; bound=$two ;;
iallgather_late) run -ns 8 -nr 1 -coll-stage 2M "$prog" iallgather 2 $MB late; bound=$((2 * $one)) ;;
iallgatherv) run -ns 8 -nr 2 -coll-stage 2M "$prog" iallgatherv 2 $MB; bound=$((2 * $two)) ;;
iallgather_ip) run -ns 8 -nr 1 -coll-stage 2M "$prog" iallgather_ip 1 $MB; bound=$one ;;
iallgather_file) run -ns 8 -nr 1 -coll-stage 2M -mem-strategy none "$prog" iallgather 1 $MB; bound=$one ;;
iallgather_big) run -ns 8 -nr 1 -coll-stage 2M "$prog" iallgather 1 $BIG; bound=$(($B + $P + $WIN)) ;;
iallgather_big_test) run -ns 8 -nr 2 -coll-stage 2M "$prog" iallgatherv 1 $BIG test; bound=$(($B + 2 * ($P + $WIN))) ;;
iallgather_big_ip) run -ns 8 -nr 1 -coll-stage 2M "$prog" iallgather_ip 1 $BIG; bound=$(($B + $P + $WIN)) ;;
iallgather_big_nodes) run $nodes "$prog" iallgather 1 $BIG; bound=$(nodes_bound $P) ;;
iallgather_whole) run -ns 8 -nr 1 -coll-stage 0 "$prog" iallgather 1 $MB; bound=$((8 * $MB)) ;;
ibcast) run -ns 8 -nr 1 -coll-stage 2M "$prog" ibcast 1 $((8 * $MB)); bound=$(($B + $P + $WIN)) ;;
ibcast_nr2) run -ns 8 -nr 2 -coll-stage 2M "$prog" ibcast 2 $((8 * $MB)); bound=$((2 * ($B + 2 * ($P + $WIN)))) ;;
ibcast_whole) run -ns 8 -nr 1 -coll-stage 0 "$prog" ibcast 1 $((8 * $MB)); bound=$((8 * $MB)) ;;
igather) run -ns 8 -nr 1 -coll-stage 2M "$prog" igather 2 $MB; bound=$((2 * $one)) ;;
iscatter) run -ns 8 -nr 1 -coll-stage 2M "$prog" iscatter 2 $MB; bound=$((2 * $one)) ;;
mix) run -ns 8 -nr 1 -coll-stage 2M "$prog" mix 1 $MB; bound=$((4 * $one)) ;;
mix_late) run -ns 8 -nr 1 -coll-stage 2M "$prog" mix 1 $MB late; bound=$((4 * $one)) ;;
mix_test) run -ns 8 -nr 2 -coll-stage 2M "$prog" mix 1 $MB test; bound=$((4 * $two)) ;;
recv) run -ns 8 -nr 1 -coll-stage 2M "$prog" recv 2 $MB; bound=$(($one + 7 * $AG)) ;;
# across nodes (-nn 2 -ns 4 -nr 1): each master's peak against half the
# bound for its own ranks' pieces plus a piece and a window per running
# rank plus the other node's credit (flow_bcast.sh, nodes_bound)
iallgather_nodes) run $nodes "$prog" iallgather 1 $MB; bound=$(nodes_bound $AG) ;;
iallgather_nodes_whole) run -nn 2 -ns 4 -nr 1 -coll-stage 0 "$prog" iallgather 1 $MB; bound=$((8 * $MB)) ;;
ibcast_nodes) run $nodes "$prog" ibcast 1 $((8 * $MB)); bound=$(nodes_bound $P) ;;
igather_nodes) run $nodes "$prog" igather 2 $MB; bound=$((2 * $(nodes_bound $AG))) ;;
iscatter_nodes) run $nodes "$prog" iscatter 2 $MB; bound=$((2 * $(nodes_bound $AG))) ;;
mix_nodes) run $nodes "$prog" mix 1 $MB test; bound=$((4 * $(nodes_bound $AG))) ;;
recv_nodes) run $nodes "$prog" recv 2 $MB; bound=$(($(nodes_bound $AG) + 7 * $AG)) ;;
persist) run -ns 8 -nr 1 -coll-stage 2M "$prog" persist 3 $MB; bound=$((4 * $one)) ;;
*) echo "unknown case $case"; exit 1 ;;
esac
rc=$?
grep -v '^  [A-Z_]* ' "$out" | grep -v "^bdmpi: where the time went"
staged=$(stat_max STAGE_PEAK); spill=$(stat_max SPILL_PEAK)
echo "--- exit status $rc; STAGE_PEAK $staged, SPILL_PEAK $spill; bound $bound"
fail=0
[ $rc -eq 0 ] || { echo "FAIL: exit status $rc"; fail=1; }
grep -q "flow_inb [a-z_0-9]*: ok" "$out" || { echo "FAIL: no 'flow_inb ...: ok'"; fail=1; }
case $case in
*_whole)
  [ "$staged" -ge $bound ] || { echo "FAIL: STAGE_PEAK $staged: staged whole it should reach $bound"; fail=1; } ;;
*)
  [ "$staged" -gt 0 ] && [ "$staged" -le $bound ] || { echo "FAIL: STAGE_PEAK $staged not in (0, $bound]"; fail=1; } ;;
esac
case $case in *_file)
  [ "$spill" -gt 0 ] && [ "$spill" -le $bound ] || { echo "FAIL: SPILL_PEAK $spill not in (0, $bound]"; fail=1; } ;;
esac
rm -f "$out"
exit $fail
