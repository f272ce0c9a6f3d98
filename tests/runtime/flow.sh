#!/bin/bash
# flow.sh BDMPIEXEC FLOW CASE: flow control inside a node (-p2p-tokens,
# issue 17 part 2) through bdmpiexec, every byte checked by FLOW (flow.c).
#   blocked  rank 0 floods rank 1 (32 x 256 KiB) while rank 1 waits for
#            rank 2, under -p2p-tokens 1M at -nr 1: completes; the node's
#            spill files never held more than the budget plus the one
#            message a synchronous send waits with (SPILL_PEAK <= 1.25 MiB;
#            8 MiB without flow control, so it runs under -spill-max 2M,
#            which stops it without tokens); sends waited (FLOW_WAITS > 0);
#            the overflow is logged once for the receiver;
#   isends   16 MPI_Isend of 64 KiB each to the next rank before any
#            receive, under -p2p-tokens 64K: nonblocking sends never wait
#            (FLOW_WAITS = 0) and the program completes;
#   ring     a safe ring of 256 KiB MPI_Send/MPI_Recv under -p2p-tokens
#            64K at -nr 2: every send is synchronous (FLOW_WAITS = 32) and
#            the ring completes;
#   a2a      bounded collective staging: an 8-rank MPI_Alltoallv of
#            512-516 KiB pieces (28 MiB) at -nr 1 under -coll-stage 4M:
#            every byte arrives and the master's staging peak (STAGE_PEAK)
#            stays under the bound plus one piece and one window (4M + 516K
#            + 256K), where it is the whole 28 MiB without the bound
#            (a2a_whole, -coll-stage 0, two rounds).  One round: the bound
#            is per instance, and a rank that starts the next all-to-all
#            while others still take pieces of this one adds to the node's
#            peak;
#   gather   an 8-rank MPI_Gatherv of 1 MiB pieces at -nr 1 under
#            -coll-stage 2M: the root takes pieces as they complete and the
#            others put theirs only under the bound: STAGE_PEAK <= 2M + a
#            piece + a window, 7 MiB unbounded (gather_whole);
#   scatter  an 8-rank MPI_Scatterv of 1 MiB pieces at -nr 1 under
#            -coll-stage 2M (a gather backwards): the root puts pieces only
#            under the bound, each other rank takes its piece as soon as it
#            is complete: STAGE_PEAK <= 2M + a piece + a window, 7 MiB
#            unbounded (scatter_whole); scatter_file the same in the
#            master's spill file (-mem-strategy none, SPILL_PEAK too);
#   a2a_2g   the case (label slow): 16 ranks, 2 GiB in all, at
#            -coll-stage 64M: STAGE_PEAK <= 64M + a piece + a
#            window;
#   a2a_file the same with -mem-strategy none, so every piece goes to the
#            master's spill file: the peak of the spill files (SPILL_PEAK)
#            stays under the same bound (taken pieces' blocks are given
#            back at once).
#   a2a_nodes  the all-to-all across nodes (-nn 2 -ns 4 -nr 1, 8 ranks, 1
#            MiB pieces, -coll-stage 2M): each master's STAGE_PEAK stays
#            under the bound of docs/design.md ("Across nodes"): half the
#            bound for its own ranks' pieces plus a piece and a window per
#            running rank, plus what the other nodes have credit for (a
#            quarter of the bound each here, at least one piece); whole
#            (a2a_nodes_whole, -coll-stage 0) a master holds its ranks' 28
#            pieces and the 16 from the other node, 44 MiB;
#            a2a_nodes_file in the spill files (SPILL_PEAK too);
#            a2a_nodes3z: -nn 3 -nr 2, empty pieces among them (a2az),
#            two rounds (twice the bound: a rank may begin the second
#            while pieces of the first are staged); a2a_nodes3f:
#            MPI_Alltoall at -nn 3 -nr 1; a2a_nodes2f: MPI_Alltoall at
#            -nn 2 -nr 2 in the spill files.
#   gather_nodes  MPI_Gatherv across nodes (-nn 2 -ns 4 -nr 1, 1 MiB
#            pieces, -coll-stage 2M, session 17): the pieces go to the
#            root's node as its master gives credit, as an all-to-all's
#            (the same bound); whole (gather_nodes_whole) the root's master
#            held 7 MB; scatter_nodes (and _file, in the spill files;
#            _whole: 7 MB) the same backwards; gather3: -nn 3 -ns 4 -nr 2
#            (the root's master held 11 pieces whole).
#   a2a_inplace  MPI_Alltoallv in place (a2ai: 8 ranks, -nr 1, pieces of
#            1 MiB and more, some empty, -coll-stage 2M): a rank takes the
#            piece from q only once its own block for q is PUT, and puts
#            that block next when the master has nothing else for it, so
#            STAGE_PEAK <= 2M + per running rank two pieces and a window;
#            a2a_inplace_f: MPI_Alltoall in place at -nr 3;
#            a2a_inplace_file: in the spill files; a2a_inplace_whole:
#            -coll-stage 0, the 45 MB it staged before.
#   a2a_inplace_nodes  the same across nodes (session 21; -nn 2 -ns 4
#            -nr 1): each master's STAGE_PEAK under the across-nodes bound
#            plus one more piece per running rank (the block put over the
#            bound) plus, per other node, a credit window and a piece (blocks
#            put over the bound for that node, waiting for its credit:
#            ipn_bound); a2a_inplace_nodes_f: MPI_Alltoall in place at -nn 2
#            -ns 3 -nr 2; a2a_inplace_nodes_file: in the spill files;
#            a2a_inplace_nodes3: -nn 3 -ns 3 -nr 1;
#            a2a_inplace_nodes_whole: -coll-stage 0 (37.8 MB a master).
# Exit 0 pass, 1 fail.
set -u
exe=$1; prog=$2; case=$3
out=$(mktemp /tmp/bdmpi-flow-out.XXXXXX)
stat() { awk -v s="$1" '$1 == s {print $2}' "$out"; }
# the largest of a stat over the nodes' --stats blocks
stat_max() { awk -v s="$1" '$1 == s && $2 > m {m = $2} END {print m + 0}' "$out"; }
# the bound of a bounded all-to-all across nodes: BOUND NN NR PIECE (the largest)
nodes_bound() {
  local b=$1 nn=$2 nr=$3 piece=$4 w
  w=$(($1 / (2 * ($nn - 1)))); [ $w -ge $piece ] || w=$piece
  echo $(($b - $b / 2 + $nr * ($piece + 262144) + ($nn - 1) * $w))
}
# in place across nodes: BOUND NN NR PIECE (design.md "In place across nodes")
ipn_bound() {
  local w=$(($1 / (2 * ($2 - 1)))); [ $w -ge $4 ] || w=$4
  echo $(($(nodes_bound $1 $2 $3 $4) + $3 * $4 + ($2 - 1) * ($w + $4)))
}
fail=0
case $case in
blocked) timeout -k 5 100 "$exe" -ns 3 -nr 1 -p2p-tokens 1M -spill-max 2M --stats "$prog" blocked 32 262144 >"$out" 2>&1 ;;
isends) timeout -k 5 100 "$exe" -ns 4 -nr 1 -p2p-tokens 64K --stats "$prog" isends 16 65536 >"$out" 2>&1 ;;
ring) timeout -k 5 100 "$exe" -ns 4 -nr 2 -p2p-tokens 64K --stats "$prog" ring 8 262144 >"$out" 2>&1 ;;
a2a) timeout -k 5 100 "$exe" -ns 8 -nr 1 -coll-stage 4M --stats "$prog" a2a 1 524288 >"$out" 2>&1 ;;
a2a_file) timeout -k 5 100 "$exe" -ns 8 -nr 1 -coll-stage 4M -mem-strategy none --stats "$prog" a2a 1 524288 >"$out" 2>&1 ;;
a2a_2g) timeout -k 5 900 "$exe" -ns 16 -nr 1 -coll-stage 64M --stats "$prog" a2a 1 8947848 >"$out" 2>&1 ;;
gather) timeout -k 5 100 "$exe" -ns 8 -nr 1 -coll-stage 2M --stats "$prog" gather 1 1048576 >"$out" 2>&1 ;;
gather_whole) timeout -k 5 100 "$exe" -ns 8 -nr 1 -coll-stage 0 --stats "$prog" gather 1 1048576 >"$out" 2>&1 ;;
scatter) timeout -k 5 100 "$exe" -ns 8 -nr 1 -coll-stage 2M --stats "$prog" scatter 1 1048576 >"$out" 2>&1 ;;
scatter_file) timeout -k 5 100 "$exe" -ns 8 -nr 1 -coll-stage 2M -mem-strategy none --stats "$prog" scatter 1 1048576 >"$out" 2>&1 ;;
scatter_whole) timeout -k 5 100 "$exe" -ns 8 -nr 1 -coll-stage 0 --stats "$prog" scatter 1 1048576 >"$out" 2>&1 ;;
gather_nodes) timeout -k 5 100 "$exe" -nn 2 -ns 4 -nr 1 -coll-stage 2M --stats "$prog" gather 1 1048576 >"$out" 2>&1 ;;
gather_nodes_whole) timeout -k 5 100 "$exe" -nn 2 -ns 4 -nr 1 -coll-stage 0 --stats "$prog" gather 1 1048576 >"$out" 2>&1 ;;
scatter_nodes) timeout -k 5 100 "$exe" -nn 2 -ns 4 -nr 1 -coll-stage 2M --stats "$prog" scatter 1 1048576 >"$out" 2>&1 ;;
scatter_nodes_file) timeout -k 5 100 "$exe" -nn 2 -ns 4 -nr 1 -coll-stage 2M -mem-strategy none --stats "$prog" scatter 1 1048576 >"$out" 2>&1 ;;
scatter_nodes_whole) timeout -k 5 100 "$exe" -nn 2 -ns 4 -nr 1 -coll-stage 0 --stats "$prog" scatter 1 1048576 >"$out" 2>&1 ;;
gather3) timeout -k 5 100 "$exe" -nn 3 -ns 4 -nr 2 -coll-stage 2M --stats "$prog" gather 1 1048576 >"$out" 2>&1 ;;
a2a_nodes) timeout -k 5 100 "$exe" -nn 2 -ns 4 -nr 1 -coll-stage 2M --stats "$prog" a2a 1 1048576 >"$out" 2>&1 ;;
a2a_nodes_whole) timeout -k 5 100 "$exe" -nn 2 -ns 4 -nr 1 -coll-stage 0 --stats "$prog" a2a 1 1048576 >"$out" 2>&1 ;;
a2a_nodes_file) timeout -k 5 100 "$exe" -nn 2 -ns 4 -nr 1 -coll-stage 2M -mem-strategy none --stats "$prog" a2a 1 1048576 >"$out" 2>&1 ;;
a2a_nodes3z) timeout -k 5 100 "$exe" -nn 3 -ns 2 -nr 2 -coll-stage 2M --stats "$prog" a2az 2 1048576 >"$out" 2>&1 ;;
a2a_nodes3f) timeout -k 5 100 "$exe" -nn 3 -ns 2 -nr 1 -coll-stage 2M --stats "$prog" a2af 1 1048576 >"$out" 2>&1 ;;
a2a_nodes2f) timeout -k 5 100 "$exe" -nn 2 -ns 3 -nr 2 -coll-stage 2M -mem-strategy none --stats "$prog" a2af 1 1048576 >"$out" 2>&1 ;;
a2a_inplace_nodes) timeout -k 5 100 "$exe" -nn 2 -ns 4 -nr 1 -coll-stage 2M --stats "$prog" a2ai 1 1048576 >"$out" 2>&1 ;;
a2a_inplace_nodes_f) timeout -k 5 100 "$exe" -nn 2 -ns 3 -nr 2 -coll-stage 2M --stats "$prog" a2aif 1 1048576 >"$out" 2>&1 ;;
a2a_inplace_nodes_file) timeout -k 5 100 "$exe" -nn 2 -ns 4 -nr 1 -coll-stage 2M -mem-strategy none --stats "$prog" a2ai 1 1048576 >"$out" 2>&1 ;;
a2a_inplace_nodes3) timeout -k 5 100 "$exe" -nn 3 -ns 3 -nr 1 -coll-stage 2M --stats "$prog" a2ai 1 1048576 >"$out" 2>&1 ;;
a2a_inplace_nodes_whole) timeout -k 5 100 "$exe" -nn 2 -ns 4 -nr 1 -coll-stage 0 --stats "$prog" a2ai 1 1048576 >"$out" 2>&1 ;;
a2a_inplace) timeout -k 5 100 "$exe" -ns 8 -nr 1 -coll-stage 2M --stats "$prog" a2ai 1 1048576 >"$out" 2>&1 ;;
a2a_inplace_f) timeout -k 5 100 "$exe" -ns 8 -nr 3 -coll-stage 2M --stats "$prog" a2aif 1 1048576 >"$out" 2>&1 ;;
a2a_inplace_file) timeout -k 5 100 "$exe" -ns 8 -nr 1 -coll-stage 2M -mem-strategy none --stats "$prog" a2ai 1 1048576 >"$out" 2>&1 ;;
a2a_inplace_whole) timeout -k 5 100 "$exe" -ns 8 -nr 1 -coll-stage 0 --stats "$prog" a2ai 1 1048576 >"$out" 2>&1 ;;
a2a_whole) timeout -k 5 100 "$exe" -ns 8 -nr 1 -coll-stage 0 --stats "$prog" a2a 2 524288 >"$out" 2>&1 ;;
*) echo "unknown case $case"; exit 1 ;;
esac
rc=$?
grep -v '^  [A-Z_]* ' "$out"
echo "--- exit status $rc; FLOW_WAITS $(stat FLOW_WAITS), SPILL_PEAK $(stat SPILL_PEAK), STAGE_PEAK $(stat STAGE_PEAK)"
[ $rc -eq 0 ] || { echo "FAIL: exit status $rc"; fail=1; }
want=${case%%_*}
case $case in a2a_nodes3z) want=a2az ;; a2a_nodes3f|a2a_nodes2f) want=a2af ;;
a2a_inplace_f|a2a_inplace_nodes_f) want=a2aif ;; a2a_inplace*) want=a2ai ;; gather3) want=gather ;; esac
grep -q "flow $want: ok" "$out" || { echo "FAIL: no 'flow $want: ok'"; fail=1; }
waits=$(stat FLOW_WAITS); peak=$(stat SPILL_PEAK)
case $case in
blocked)
  [ "${waits:-0}" -gt 0 ] || { echo "FAIL: no send waited"; fail=1; }
  [ -n "$peak" ] && [ "$peak" -le $((1048576 + 262144)) ] || { echo "FAIL: SPILL_PEAK $peak over 1.25 MiB"; fail=1; }
  n=$(grep -c "note: flow control: rank 0 has [0-9]* bytes of messages not yet received, a 262144-byte MPI_Send to rank 1 waits" "$out")
  [ "$n" = 1 ] || { echo "FAIL: the overflow towards rank 1 logged $n times, not once"; fail=1; } ;;
isends) [ "$waits" = 0 ] || { echo "FAIL: FLOW_WAITS $waits: a nonblocking send waited"; fail=1; } ;;
ring) [ "$waits" = 32 ] || { echo "FAIL: FLOW_WAITS $waits, expected 32"; fail=1; } ;;
a2a|a2a_file)
  bound=$((4194304 + 528384 + 262144)); staged=$(stat STAGE_PEAK)
  [ -n "$staged" ] && [ "$staged" -gt 0 ] && [ "$staged" -le $bound ] || { echo "FAIL: STAGE_PEAK '$staged' not in (0, $bound]"; fail=1; }
  if [ $case = a2a_file ]; then
    [ -n "$peak" ] && [ "$peak" -gt 0 ] && [ "$peak" -le $bound ] || { echo "FAIL: SPILL_PEAK '$peak' not in (0, $bound]"; fail=1; }
  fi ;;
gather|scatter|scatter_file)
  bound=$((2097152 + 1048576 + 4096 + 262144)); staged=$(stat STAGE_PEAK)
  [ -n "$staged" ] && [ "$staged" -gt 0 ] && [ "$staged" -le $bound ] || { echo "FAIL: STAGE_PEAK '$staged' not in (0, $bound]"; fail=1; }
  if [ $case = scatter_file ]; then
    [ -n "$peak" ] && [ "$peak" -gt 0 ] && [ "$peak" -le $bound ] || { echo "FAIL: SPILL_PEAK '$peak' not in (0, $bound]"; fail=1; }
  fi ;;
gather_whole|scatter_whole)
  staged=$(stat STAGE_PEAK)
  [ -n "$staged" ] && [ "$staged" -ge $((7 * 1048576)) ] || { echo "FAIL: STAGE_PEAK '$staged': the unbounded ${case%%_*} should stage it whole"; fail=1; } ;;
a2a_2g)
  bound=$((67108864 + 8951940 + 262144)); staged=$(stat STAGE_PEAK)
  [ -n "$staged" ] && [ "$staged" -gt 0 ] && [ "$staged" -le $bound ] || { echo "FAIL: STAGE_PEAK '$staged' not in (0, $bound]"; fail=1; } ;;
gather_nodes*|scatter_nodes*|gather3)
  staged=$(stat_max STAGE_PEAK); peak=$(stat_max SPILL_PEAK)
  case $case in
  *_whole) bound=$((6 * 1048576)) ;;
  gather3) bound=$(nodes_bound 2097152 3 2 $((1048576 + 4095))) ;;
  *) bound=$(nodes_bound 2097152 2 1 $((1048576 + 4095))) ;;
  esac
  echo "--- the largest over the nodes: STAGE_PEAK $staged, SPILL_PEAK $peak; bound $bound"
  case $case in
  *_whole) [ "$staged" -ge $bound ] || { echo "FAIL: STAGE_PEAK $staged: unbounded, it should be staged whole"; fail=1; } ;;
  *) [ "$staged" -gt 0 ] && [ "$staged" -le $bound ] || { echo "FAIL: STAGE_PEAK $staged not in (0, $bound]"; fail=1; } ;;
  esac
  case $case in *_file)
    [ "$peak" -gt 0 ] && [ "$peak" -le $bound ] || { echo "FAIL: SPILL_PEAK $peak not in (0, $bound]"; fail=1; } ;;
  esac ;;
a2a_nodes*)
  staged=$(stat_max STAGE_PEAK); peak=$(stat_max SPILL_PEAK)
  case $case in
  a2a_nodes|a2a_nodes_file) bound=$(nodes_bound 2097152 2 1 $((1048576 + 4095))) ;;
  # two rounds: a rank may start the second while the first's pieces are
  # still staged (the bound is per instance), so at most twice the bound
  a2a_nodes3z) bound=$((2 * $(nodes_bound 2097152 3 2 $((1048576 + 4095))))) ;;
  a2a_nodes3f) bound=$(nodes_bound 2097152 3 1 1048576) ;;
  a2a_nodes2f) bound=$(nodes_bound 2097152 2 2 1048576) ;;
  a2a_nodes_whole) bound=$((40 * 1048576)) ;;
  esac
  echo "--- the largest over the nodes: STAGE_PEAK $staged, SPILL_PEAK $peak; bound $bound"
  if [ $case = a2a_nodes_whole ]; then
    [ "$staged" -ge $bound ] || { echo "FAIL: STAGE_PEAK $staged: the unbounded all-to-all should stage it whole"; fail=1; }
  else
    [ "$staged" -gt 0 ] && [ "$staged" -le $bound ] || { echo "FAIL: STAGE_PEAK $staged not in (0, $bound]"; fail=1; }
  fi
  case $case in *_file|a2a_nodes2f)
    [ "$peak" -gt 0 ] && [ "$peak" -le $bound ] || { echo "FAIL: SPILL_PEAK $peak not in (0, $bound]"; fail=1; } ;;
  esac ;;
a2a_inplace_nodes*)
  staged=$(stat_max STAGE_PEAK); peak=$(stat_max SPILL_PEAK); p=$((1048576 + 4095))
  case $case in
  a2a_inplace_nodes_f) bound=$(ipn_bound 2097152 2 2 1048576) ;;
  a2a_inplace_nodes3) bound=$(ipn_bound 2097152 3 1 $p) ;;
  a2a_inplace_nodes_whole) bound=$((30 * 1048576)) ;;
  *) bound=$(ipn_bound 2097152 2 1 $p) ;;
  esac
  echo "--- the largest over the nodes: STAGE_PEAK $staged, SPILL_PEAK $peak; bound $bound"
  if [ $case = a2a_inplace_nodes_whole ]; then
    [ "$staged" -ge $bound ] || { echo "FAIL: STAGE_PEAK $staged: in place unbounded should stage it whole"; fail=1; }
  else
    [ "$staged" -gt 0 ] && [ "$staged" -le $bound ] || { echo "FAIL: STAGE_PEAK $staged not in (0, $bound]"; fail=1; }
  fi
  if [ $case = a2a_inplace_nodes_file ]; then
    [ "$peak" -gt 0 ] && [ "$peak" -le $bound ] || { echo "FAIL: SPILL_PEAK $peak not in (0, $bound]"; fail=1; }
  fi ;;
a2a_inplace*)
  staged=$(stat STAGE_PEAK)
  case $case in
  a2a_inplace_f) bound=$((2097152 + 3 * (2 * 1048576 + 262144))) ;;
  a2a_inplace_whole) bound=$((40 * 1048576)) ;;
  *) bound=$((2097152 + 2 * (1048576 + 4095) + 262144)) ;;
  esac
  echo "--- STAGE_PEAK $staged, bound $bound"
  if [ $case = a2a_inplace_whole ]; then
    [ -n "$staged" ] && [ "$staged" -ge $bound ] || { echo "FAIL: STAGE_PEAK '$staged': in place unbounded should stage it whole"; fail=1; }
  else
    [ -n "$staged" ] && [ "$staged" -gt 0 ] && [ "$staged" -le $bound ] || { echo "FAIL: STAGE_PEAK '$staged' not in (0, $bound]"; fail=1; }
  fi
  if [ $case = a2a_inplace_file ]; then
    [ -n "$peak" ] && [ "$peak" -gt 0 ] && [ "$peak" -le $bound ] || { echo "FAIL: SPILL_PEAK '$peak' not in (0, $bound]"; fail=1; }
  fi ;;
a2a_whole)
  staged=$(stat STAGE_PEAK)
  [ -n "$staged" ] && [ "$staged" -ge $((8 * 7 * 524288)) ] || { echo "FAIL: STAGE_PEAK '$staged': the unbounded all-to-all should stage it whole"; fail=1; } ;;
esac
rm -f "$out"
exit $fail
