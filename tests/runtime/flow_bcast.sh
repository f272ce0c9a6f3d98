#!/bin/bash
# flow_bcast.sh BDMPIEXEC FLOW_BCAST CASE: bounded staging (-coll-stage) of
# MPI_Bcast and MPI_Allgather(v) (issue 17, session 18), every byte checked
# by FLOW_BCAST (flow_bcast.c), and the master's staging peak (STAGE_PEAK,
# each master's with several nodes) checked against the bound of
# docs/design.md ("Broadcasts and allgathers"):
#   one node: -coll-stage plus, per rank running at once, a piece (a
#   broadcast's part: a quarter of the bound, 512 KiB here; an allgather's
#   block) and a window (256 KiB);
#   across nodes: half the bound for the node's own ranks' pieces, plus a
#   piece and a window per running rank, plus what each other node has
#   credit for (the bound / (2 x (nodes - 1)), at least a piece).
# Staged whole (-coll-stage 0, the *_whole cases) a broadcast held its 8 MiB
# and an allgather every block, 8 MiB, in each master.
#   bcast, bcast_nr2, bcast_vec (a vector type: parts cut the packed stream),
#   bcast_file (-mem-strategy none: in the spill file, SPILL_PEAK too),
#   allgather, allgatherv (-nr 2, an empty block, blocks in reverse order),
#   allgather_ip (in place), allgather_file; across nodes bcast_nodes,
#   bcast_nodes_nr2, bcast3 (-nn 3), allgather_nodes, allgatherv_nodes
#   (-nr 2); and the contrasts bcast_whole, allgather_whole,
#   bcast_nodes_whole, allgather_nodes_whole.
#   allgather_big*: blocks of 8 MiB, four times the bound (session 21): cut
#   in parts of a quarter of the bound, each a piece of its own, so the
#   bound holds with a part (512 KiB) per running rank where a block did
#   before (8,388,608 staged at -nr 1, 16,777,307 at -nr 2):
#   allgather_big, allgatherv_big (-nr 2), allgather_big_ip,
#   allgather_big_file, allgather_big_nodes, allgatherv_big_nodes (-nr 2),
#   allgather_big_whole (64 MiB);
#   two, two_nr2, two_dep, rounds, bcast_rounds, two_nodes,
#   two_dep_nodes: instances at once (two communicators, or a rank that
#   begins the next round while pieces of this one are staged) share one
#   bound, node-wide (see design.md "One bound for the node").
# Exit 0 pass, 1 fail.
set -u
exe=$1; prog=$2; case=$3
out=$(mktemp /tmp/bdmpi-flowb-out.XXXXXX)
stat_max() { awk -v s="$1" '$1 == s && $2 > m {m = $2} END {print m + 0}' "$out"; }
B=2097152; WIN=262144; MB=1048576
nodes_bound() { # NN NR PIECE
  local nn=$1 nr=$2 piece=$3 w
  w=$(($B / (2 * ($nn - 1)))); [ $w -ge $piece ] || w=$piece
  echo $(($B - $B / 2 + $nr * ($piece + $WIN) + ($nn - 1) * $w))
}
run() { timeout -k 5 100 "$exe" --stats "$@" >"$out" 2>&1; }
P=$(($B / 4)); AG=$(($MB + 64))
case $case in
bcast) run -ns 8 -nr 1 -coll-stage 2M "$prog" bcast 1 $((8 * $MB)); bound=$(($B + $P + $WIN)) ;;
bcast_nr2) run -ns 8 -nr 2 -coll-stage 2M "$prog" bcast 1 $((8 * $MB)); bound=$(($B + 2 * ($P + $WIN))) ;;
bcast_vec) run -ns 8 -nr 1 -coll-stage 2M "$prog" bcast_vec 1 $((8 * $MB)); bound=$(($B + $P + $WIN)) ;;
bcast_file) run -ns 8 -nr 1 -coll-stage 2M -mem-strategy none "$prog" bcast 1 $((8 * $MB)); bound=$(($B + $P + $WIN)) ;;
bcast_whole) run -ns 8 -nr 1 -coll-stage 0 "$prog" bcast 1 $((8 * $MB)); bound=$((8 * $MB)) ;;
allgather) run -ns 8 -nr 1 -coll-stage 2M "$prog" allgather 1 $MB; bound=$(($B + $AG + $WIN)) ;;
allgatherv) run -ns 8 -nr 2 -coll-stage 2M "$prog" allgatherv 1 $MB; bound=$(($B + 2 * ($AG + $WIN))) ;;
allgather_ip) run -ns 8 -nr 1 -coll-stage 2M "$prog" allgather_ip 1 $MB; bound=$(($B + $AG + $WIN)) ;;
allgather_file) run -ns 8 -nr 1 -coll-stage 2M -mem-strategy none "$prog" allgather 1 $MB; bound=$(($B + $AG + $WIN)) ;;
allgather_whole) run -ns 8 -nr 1 -coll-stage 0 "$prog" allgather 1 $MB; bound=$((8 * $MB)) ;;
bcast_nodes) run -nn 2 -ns 4 -nr 1 -coll-stage 2M "$prog" bcast 1 $((8 * $MB)); bound=$(nodes_bound 2 1 $P) ;;
bcast_nodes_nr2) run -nn 2 -ns 4 -nr 2 -coll-stage 2M "$prog" bcast_vec 1 $((8 * $MB)); bound=$(nodes_bound 2 2 $P) ;;
bcast3) run -nn 3 -ns 3 -nr 2 -coll-stage 2M "$prog" bcast 1 $((8 * $MB)); bound=$(nodes_bound 3 2 $P) ;;
bcast_nodes_whole) run -nn 2 -ns 4 -nr 1 -coll-stage 0 "$prog" bcast 1 $((8 * $MB)); bound=$((8 * $MB)) ;;
allgather_nodes) run -nn 2 -ns 4 -nr 1 -coll-stage 2M "$prog" allgather 1 $MB; bound=$(nodes_bound 2 1 $AG) ;;
allgatherv_nodes) run -nn 2 -ns 4 -nr 2 -coll-stage 2M "$prog" allgatherv 1 $MB; bound=$(nodes_bound 2 2 $AG) ;;
allgather_big) run -ns 8 -nr 1 -coll-stage 2M "$prog" allgather 1 $((8 * $MB)); bound=$(($B + $P + $WIN)) ;;
allgatherv_big) run -ns 8 -nr 2 -coll-stage 2M "$prog" allgatherv 1 $((8 * $MB)); bound=$(($B + 2 * ($P + $WIN))) ;;
allgather_big_ip) run -ns 8 -nr 1 -coll-stage 2M "$prog" allgather_ip 1 $((8 * $MB)); bound=$(($B + $P + $WIN)) ;;
allgather_big_file) run -ns 8 -nr 1 -coll-stage 2M -mem-strategy none "$prog" allgather 1 $((8 * $MB)); bound=$(($B + $P + $WIN)) ;;
allgather_big_whole) run -ns 8 -nr 1 -coll-stage 0 "$prog" allgather 1 $((8 * $MB)); bound=$((64 * $MB)) ;;
allgather_big_nodes) run -nn 2 -ns 4 -nr 1 -coll-stage 2M "$prog" allgather 1 $((8 * $MB)); bound=$(nodes_bound 2 1 $P) ;;
allgatherv_big_nodes) run -nn 2 -ns 4 -nr 2 -coll-stage 2M "$prog" allgatherv 1 $((8 * $MB)); bound=$(nodes_bound 2 2 $P) ;;
allgather_nodes_whole) run -nn 2 -ns 4 -nr 1 -coll-stage 0 "$prog" allgather 1 $MB; bound=$((8 * $MB)) ;;
# several instances at once share one bound (node-wide): two communicators'
# all-to-alls at once (6.3 MB staged with a bound per instance)
two) run -ns 8 -nr 1 -coll-stage 2M "$prog" two 1 $MB; bound=$(($B + $AG + $WIN)) ;;
two_nr2) run -ns 8 -nr 2 -coll-stage 2M "$prog" two 1 $MB; bound=$(($B + 2 * ($AG + $WIN))) ;;
two_whole) run -ns 8 -nr 1 -coll-stage 0 "$prog" two 1 $MB; bound=$((16 * $MB)) ;;
# rank 1 waits in MPI_Recv for rank 0, which sends after its own
# communicator's all-to-all: the pieces staged for rank 1 (three) do not
# hold the other communicator back (no deadlock), and count on top
two_dep) run -ns 8 -nr 1 -coll-stage 2M "$prog" two_dep 1 $MB; bound=$(($B + $AG + $WIN + 3 * $AG)) ;;
# three rounds: a rank that has returned from one may put its pieces of
# the next while others still read this one's; those count only once their
# readers are in it (else they would wait for room their own pieces hold),
# so at most twice the bound of one
rounds) run -ns 8 -nr 2 -coll-stage 2M "$prog" allgatherv 3 $MB; bound=$((2 * ($B + 2 * ($AG + $WIN)))) ;;
bcast_rounds) run -ns 8 -nr 1 -coll-stage 2M "$prog" bcast 3 $((8 * $MB)); bound=$((2 * ($B + $P + $WIN))) ;;
# across nodes the node-wide bound covers only pieces read on the node
# (whether another node's reader waits elsewhere cannot be seen here), so
# each instance's own bound: these check that nothing deadlocks
two_nodes) run -nn 2 -ns 4 -nr 1 -coll-stage 2M "$prog" two 1 $MB; bound=$((2 * $(nodes_bound 2 1 $AG))) ;;
two_dep_nodes) run -nn 2 -ns 4 -nr 1 -coll-stage 2M "$prog" two_dep 1 $MB; bound=$((2 * $(nodes_bound 2 1 $AG) + 3 * $AG)) ;;
*) echo "unknown case $case"; exit 1 ;;
esac
rc=$?
grep -v '^  [A-Z_]* ' "$out" | grep -v "^bdmpi: where the time went"
staged=$(stat_max STAGE_PEAK); spill=$(stat_max SPILL_PEAK)
echo "--- exit status $rc; the largest over the nodes: STAGE_PEAK $staged, SPILL_PEAK $spill; bound $bound"
fail=0
[ $rc -eq 0 ] || { echo "FAIL: exit status $rc"; fail=1; }
want=$(grep -o "flow_bcast [a-z_]*: ok" "$out" | head -1)
[ -n "$want" ] || { echo "FAIL: no 'flow_bcast ...: ok'"; fail=1; }
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
