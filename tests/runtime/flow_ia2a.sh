#!/bin/bash
# flow_ia2a.sh BDMPIEXEC FLOW_IA2A CASE: bounded staging of nonblocking
# all-to-alls (issue 17, session 17; docs/design.md "Nonblocking").  Every
# byte is checked by FLOW_IA2A (flow_ia2a.c); 8 ranks, pieces of 1 MiB to
# 1 MiB + 4095, -coll-stage 2M, one round unless said.  The master's
# staging peak (STAGE_PEAK; each master's, across nodes) must stay under
# the bound of a blocking all-to-all: 2M plus a piece and a window per
# running rank (across nodes: nodes_bound, as flow.sh).  Staged whole
# (what main did with every nonblocking all-to-all) it is 56 MiB.
#   ia2a         MPI_Ialltoallv, compute, MPI_Wait, -nr 1;
#   ia2a_test    completed by an MPI_Test loop;
#   ia2a_fixed   MPI_Ialltoall; ia2a_w: MPI_Ialltoallw;
#   ia2a_nr2     -nr 2, two rounds;
#   ia2a_recv    rank 1 receives from rank 0 before its MPI_Wait, and
#                rank 0 sends only after its own MPI_Wait: completes (the
#                pieces for rank 1, which waits elsewhere, do not count,
#                and rank 1 put all of its own before it waited: at most
#                2 x 7 pieces more than the bound);
#   ia2a_probe   the same, rank 1 polling MPI_Iprobe first: each poll that
#                finds nothing steps the all-to-all (puts within the bound,
#                takes), so the bound holds;
#   ia2a_two     two at once, MPI_Waitall: twice the bound (per instance);
#   ia2a_order   two at once, waited for in opposite orders by rank 0 and
#                the others: completes, twice the bound;
#   ia2a_file    -mem-strategy none: the same in the spill file (SPILL_PEAK);
#   ia2a_whole   -coll-stage 0: staged whole (the contrast);
#   ia2a_ip*     the same in place (MPI_IN_PLACE, session 21; ipwait etc.
#                in flow_ia2a.c, empty pieces among them): ia2a_ip (wait),
#                _test, _fixed (MPI_Ialltoall), _w, _nr2, _recv, _probe,
#                _two, _file, _whole.  The bound of a blocking all-to-all
#                in place: 2M plus two pieces and a window per running
#                rank (the block a rank is told to put over the bound is
#                followed by a piece of its size taken);
#   ia2a_ip_nodes  in place across nodes (session 21): the across-nodes
#                bound plus a piece per running rank plus a credit window
#                and a piece (flow.sh, ipn_bound); _nodes_recv, _nodes_nr2
#                (MPI_Test at -nr 2), _nodes_whole;
#   ia2a_nodes   -nn 2 -ns 4 -nr 1; ia2a_nodes_recv: the recv case across
#                nodes; ia2a_nodes_nr2: MPI_Test at -nr 2; ia2a_nodes_whole:
#                -coll-stage 0.
# Exit 0 pass, 1 fail.
set -u
exe=$1; prog=$2; case=$3
out=$(mktemp /tmp/bdmpi-flow-ia2a.XXXXXX)
stat_max() { awk -v s="$1" '$1 == s && $2 > m {m = $2} END {print m + 0}' "$out"; }
piece=$((1048576 + 4095)); win=262144; B=2097152
nodes_bound() {
  local nn=$1 nr=$2 w
  w=$(($B / (2 * ($nn - 1)))); [ $w -ge $piece ] || w=$piece
  echo $(($B - $B / 2 + $nr * ($piece + $win) + ($nn - 1) * $w))
}
run() { timeout -k 5 100 "$exe" "$@" >"$out" 2>&1; }
one="-ns 8 -nr 1 -coll-stage 2M --stats"
nodes="-nn 2 -ns 4 -nr 1 -coll-stage 2M --stats"
mode=wait; bound=$(($B + $piece + $win)); ipb=$(($B + 2 * $piece + $win))
case $case in
ia2a) run $one "$prog" wait 1 1048576 ;;
ia2a_test) mode=test; run $one "$prog" test 1 1048576 ;;
ia2a_fixed) mode=fixed; bound=$(($B + 1048576 + $win)); run $one "$prog" fixed 1 1048576 ;;
ia2a_w) mode=w; run $one "$prog" w 1 1048576 ;;
ia2a_nr2) bound=$(($B + 2 * ($piece + $win))); run -ns 8 -nr 2 -coll-stage 2M --stats "$prog" wait 2 1048576 ;;
ia2a_recv) mode=recv; bound=$(($bound + 14 * $piece)); run $one "$prog" recv 1 1048576 ;;
ia2a_probe) mode=probe; run $one "$prog" probe 1 1048576 ;;
ia2a_two) mode=two; bound=$((2 * $bound)); run $one "$prog" two 1 1048576 ;;
ia2a_order) mode=order; bound=$((2 * $bound)); run $one "$prog" order 1 1048576 ;;
ia2a_file) run -ns 8 -nr 1 -coll-stage 2M -mem-strategy none --stats "$prog" wait 1 1048576 ;;
ia2a_whole) run -ns 8 -nr 1 -coll-stage 0 --stats "$prog" wait 1 1048576 ;;
ia2a_ip) mode=ipwait; bound=$ipb; run $one "$prog" ipwait 1 1048576 ;;
ia2a_ip_test) mode=iptest; bound=$ipb; run $one "$prog" iptest 1 1048576 ;;
ia2a_ip_fixed) mode=ipfixed; bound=$(($B + 2 * 1048576 + $win)); run $one "$prog" ipfixed 1 1048576 ;;
ia2a_ip_w) mode=ipw; bound=$ipb; run $one "$prog" ipw 1 1048576 ;;
ia2a_ip_nr2) mode=ipwait; bound=$(($B + 2 * (2 * $piece + $win))); run -ns 8 -nr 2 -coll-stage 2M --stats "$prog" ipwait 2 1048576 ;;
ia2a_ip_recv) mode=iprecv; bound=$(($ipb + 14 * $piece)); run $one "$prog" iprecv 1 1048576 ;;
ia2a_ip_probe) mode=ipprobe; bound=$ipb; run $one "$prog" ipprobe 1 1048576 ;;
ia2a_ip_two) mode=iptwo; bound=$((2 * $ipb)); run $one "$prog" iptwo 1 1048576 ;;
ia2a_ip_file) mode=ipwait; bound=$ipb; run -ns 8 -nr 1 -coll-stage 2M -mem-strategy none --stats "$prog" ipwait 1 1048576 ;;
ia2a_ip_whole) mode=ipwait; run -ns 8 -nr 1 -coll-stage 0 --stats "$prog" ipwait 1 1048576 ;;
ia2a_ip_nodes) mode=ipwait; bound=$(($(nodes_bound 2 1) + 3 * $piece)); run $nodes "$prog" ipwait 1 1048576 ;;
ia2a_ip_nodes_recv) mode=iprecv; bound=$(($(nodes_bound 2 1) + 17 * $piece)); run $nodes "$prog" iprecv 1 1048576 ;;
ia2a_ip_nodes_nr2) mode=iptest; bound=$(($(nodes_bound 2 2) + 4 * $piece)); run -nn 2 -ns 4 -nr 2 -coll-stage 2M --stats "$prog" iptest 1 1048576 ;;
ia2a_ip_nodes_whole) mode=ipwait; run -nn 2 -ns 4 -nr 1 -coll-stage 0 --stats "$prog" ipwait 1 1048576 ;;
ia2a_nodes) bound=$(nodes_bound 2 1); run $nodes "$prog" wait 1 1048576 ;;
ia2a_nodes_recv) mode=recv; bound=$(($(nodes_bound 2 1) + 14 * $piece)); run $nodes "$prog" recv 1 1048576 ;;
ia2a_nodes_nr2) mode=test; bound=$(nodes_bound 2 2); run -nn 2 -ns 4 -nr 2 -coll-stage 2M --stats "$prog" test 1 1048576 ;;
ia2a_nodes_whole) run -nn 2 -ns 4 -nr 1 -coll-stage 0 --stats "$prog" wait 1 1048576 ;;
*) echo "unknown case $case"; exit 1 ;;
esac
rc=$?
fail=0
grep -v '^  [A-Z_]* ' "$out"
staged=$(stat_max STAGE_PEAK); spill=$(stat_max SPILL_PEAK)
echo "--- exit status $rc; STAGE_PEAK $staged, SPILL_PEAK $spill (largest over the nodes); bound $bound"
[ $rc -eq 0 ] || { echo "FAIL: exit status $rc"; fail=1; }
grep -q "flow_ia2a $mode: ok" "$out" || { echo "FAIL: no 'flow_ia2a $mode: ok'"; fail=1; }
case $case in
*_whole)
  whole=$((40 * 1048576)); [ $case = ia2a_ip_nodes_whole ] && whole=$((30 * 1048576))
  [ "$staged" -ge $whole ] || { echo "FAIL: STAGE_PEAK $staged: unbounded, it should be staged whole"; fail=1; } ;;
*)
  [ "$staged" -gt 0 ] && [ "$staged" -le $bound ] || { echo "FAIL: STAGE_PEAK $staged not in (0, $bound]"; fail=1; } ;;
esac
if [ $case = ia2a_file ] || [ $case = ia2a_ip_file ]; then
  [ "$spill" -gt 0 ] && [ "$spill" -le $bound ] || { echo "FAIL: SPILL_PEAK $spill not in (0, $bound]"; fail=1; }
fi
rm -f "$out"
exit $fail
