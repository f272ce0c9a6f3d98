#!/bin/bash
# trace_check_selftest.sh TRACE_CHECK: trace_check.py accepts a correct
# timeline and rejects each of the faults it exists to find.
set -u
check=$1
d=$(mktemp -d /tmp/bdmpi-tracecheck.XXXXXX)
trap 'rm -rf "$d"' EXIT
head='{"traceEvents":[
{"ph":"M","pid":0,"name":"process_name","args":{"name":"node 0"}},
{"ph":"M","pid":0,"tid":0,"name":"thread_name","args":{"name":"rank 0"}},
{"ph":"M","pid":0,"tid":1,"name":"thread_name","args":{"name":"rank 1"}},
{"ph":"C","pid":0,"ts":0,"name":"budget","args":{"bytes":1000000}},
{"ph":"C","pid":0,"ts":0,"name":"queued messages","args":{"bytes":0}},'
r0='{"ph":"X","pid":0,"tid":0,"ts":0,"dur":10,"cat":"state","name":"running"},
{"ph":"X","pid":0,"tid":0,"ts":10,"dur":20,"cat":"mpi","name":"MPI_Recv","args":{"request":"P2P_WAIT"}},
{"ph":"X","pid":0,"tid":0,"ts":12,"dur":10,"cat":"state","name":"blocked in MPI_Recv","args":{"call":"MPI_Recv"}},
{"ph":"X","pid":0,"tid":0,"ts":22,"dur":8,"cat":"state","name":"waiting for a run slot","args":{"call":"MPI_Recv"}},'
r1='{"ph":"X","pid":0,"tid":1,"ts":0,"dur":30,"cat":"state","name":"running"},'
mem='{"ph":"C","pid":0,"ts":5,"name":"accounted resident","args":{"bytes":500000}}'
tail=']}'
mk() { printf '%s\n' "$head" "$@" "$tail" > "$d/t.json"; }
fail=0
expect() { # status description
  python3 "$check" "$d/t.json" --ranks 2 --calls MPI_Init,MPI_Recv,MPI_Finalize > "$d/out" 2>&1
  local rc=$?
  if [ $rc -ne $1 ]; then echo "FAIL: $2: exit $rc, expected $1"; cat "$d/out"; fail=1; else echo "ok: $2"; fi
}
mk "$r0" "$r1" "$mem"; expect 0 "a correct timeline"
mk "$r0" "$r1" '{"ph":"X","pid":0,"tid":1,"ts":25,"dur":10,"cat":"state","name":"running"},' "$mem"
expect 1 "overlapping slices"
mk "$r0" "$r1" '{"ph":"X","pid":0,"tid":1,"ts":40,"dur":5,"cat":"state","name":"blocked in MPI_Bcast","args":{"call":"MPI_Bcast"}},' "$mem"
expect 1 "a blocked call the program does not make"
mk "$r0" "$mem"; expect 1 "a rank without a track"
mk "$r0" "$r1" '{"ph":"C","pid":0,"ts":5,"name":"accounted resident","args":{"bytes":900000000}}'
expect 1 "memory above the budget and the overhead"
mk "$r0" "$r1"; expect 1 "no memory counter"
echo '{"traceEvents":[' > "$d/t.json"; expect 1 "truncated JSON"
exit $fail
