#!/bin/bash
# remote.sh MODE BDMPIEXEC RANK_MEMORY - the remote-memory tier (-mem-remote,
# issue 16) on two nodes of this machine.  rank_memory checks every word of
# its data each round and prints "PASS rank_memory".  8 ranks of 5 MiB per
# node (40 MiB); node 0's budget is a quarter of that (10M), node 1's:
#   on      512M: answers right, node 0's data went to node 1 and came back
#           (MEM_RMT_STORED, MEM_RMT_READ > 0), part of it asked for ahead of
#           the loads (MEM_RMT_AHEAD > 0) and, with -mem-remote off in
#           the same test, all of those are 0 and the data went to storage.
#   return  (remote_return) node 1 (48M) takes node 0's data while its own
#           ranks hold nothing, and gives it back when they fill their 40
#           MiB (MEM_RMT_RETURNED > 0); every word checked.
#   ahead   512M, 4 rounds: from the second on, runs are asked for ahead
#           because they followed the previous load last time
#           (MEM_RMT_AHEAD_NEXT > 0), answers right.
#   lane    512M, with the master's copies to and from the ranks' memory
#           failing (-fault remote.cma:1+): everything goes through the
#           lanes' data areas instead; answers right, data went remote.
#   refuse  512M, node 1 refusing every chunk offered (-fault
#           remote.refuse:1+): node 0's master stores its write-behind
#           copies in its returned file (the copy is the message it sent,
#           kept until both MPICH and the refusal are done with it), its
#           ranks the rest in their own files; answers right, fallbacks
#           counted, what was refused read back (MEM_RMT_READ > 0).
#   lrlw    512M, -mem-strategy lrlw: the runs it loads start at other
#           sbpages than the runs it unloaded, so the holder cuts its
#           answers where its held chunks start (48-50 of ~195 GETs in two
#           runs, temporary counters); answers right, data came back.
#   room    three nodes, 10M, 44M and 512M: node 1 has room for little
#           besides its own 40 MiB, node 2 for everything.  Holders are
#           chosen by the room they report, so node 2 takes node 0's data
#           and nothing falls back to local storage (MEM_RMT_FALLBACK 0;
#           round robin sent half to node 1, which refused: 1-7 MiB).
#   kill    512M: node 1's master is killed (kill -9) while it holds node
#           0's data: the job ends, bdmpiexec names node 1, and nothing is
#           left (no process, no file in the job's directory).
# Every mode checks that the job leaves nothing behind.
set -u
mode=$1; exe=$2; prog=$3
wd=$(mktemp -d /tmp/bdmpi-remote.XXXXXX)
tag="bdmpi-remote-$$-$RANDOM"
fail=0
tagged() { grep -lsa "BDMPI_TEST_TAG=$tag" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3; }
# sum of a stat over the nodes' --stats tables
stat() { awk -v k="$1" '$1 == k {s += $2} END {print s + 0}' "$2"; }
leftovers() {
  sleep 0.2
  if [ -n "$(tagged)" ]; then echo "FAIL: processes left: $(tagged)"; kill -9 $(tagged) 2>/dev/null; fail=1; fi
  if [ -n "$(find "$wd" -mindepth 1 2>/dev/null)" ]; then echo "FAIL: left in $wd:"; find "$wd" -mindepth 1; fail=1; fi
}
run() { # out remote budget1 rounds [options]
  out=$1 remote=$2 b1=$3 rounds=$4; shift 4
  env BDMPI_WD="$wd" BDMPI_TEST_TAG="$tag" timeout 150 "$exe" -nn 2 -ns 8 -nr 1 -mem 512M \
    -mem-node "10M,$b1" -mem-remote "$remote" -stats "$@" "$prog" 4 "$rounds" > "$out" 2>&1
}

case "$mode" in
on)
  run "$wd.on" on 512M 2; rc=$?
  st=$(stat MEM_RMT_STORED "$wd.on"); rd=$(stat MEM_RMT_READ "$wd.on"); ah=$(stat MEM_RMT_AHEAD "$wd.on")
  echo "on: exit $rc, stored remotely $st, read back $rd (asked ahead $ah), written locally $(stat MEM_WRITTEN "$wd.on")"
  grep -q '^PASS rank_memory' "$wd.on" && [ $rc = 0 ] || { cat "$wd.on"; echo "FAIL: -mem-remote on"; fail=1; }
  [ "$st" -gt 0 ] && [ "$rd" -gt 0 ] || { echo "FAIL: nothing went through the remote tier"; fail=1; }
  # rank_memory reads its data in order: runs after the first come ahead
  [ "$ah" -gt 0 ] || { echo "FAIL: nothing was asked for ahead of the loads"; fail=1; }
  leftovers
  run "$wd.off" off 512M 2; rc=$?
  st=$(stat MEM_RMT_STORED "$wd.off"); rd=$(stat MEM_RMT_READ "$wd.off"); fb=$(stat MEM_RMT_FALLBACK "$wd.off")
  wr=$(stat MEM_WRITTEN "$wd.off")
  echo "off: exit $rc, stored remotely $st, read back $rd, fallbacks $fb, written locally $wr"
  grep -q '^PASS rank_memory' "$wd.off" && [ $rc = 0 ] || { cat "$wd.off"; echo "FAIL: -mem-remote off"; fail=1; }
  [ "$st" = 0 ] && [ "$rd" = 0 ] && [ "$fb" = 0 ] && [ "$wr" -gt 0 ] ||
    { echo "FAIL: -mem-remote off used the tier, or stored nothing"; fail=1; }
  leftovers
  ;;
ahead)
  # rank_memory's rounds load the same runs in the same order: from the
  # second round on, the master asks ahead for what followed each load
  # last time, and for a rank given its run slot what followed its last
  # load (remote_ahead.c's successor table: MEM_RMT_AHEAD_NEXT > 0; before
  # it, only the run after the one asked in the same stream was asked)
  run "$wd.ah" on 512M 4; rc=$?
  rd=$(stat MEM_RMT_READ "$wd.ah"); ah=$(stat MEM_RMT_AHEAD "$wd.ah"); nx=$(stat MEM_RMT_AHEAD_NEXT "$wd.ah")
  echo "ahead: exit $rc, read back $rd, asked ahead $ah, of it because it came next last time $nx, all there when asked $(stat MEM_RMT_AHEAD_READY "$wd.ah")"
  grep -q '^PASS rank_memory' "$wd.ah" && [ $rc = 0 ] || { cat "$wd.ah"; echo "FAIL: run"; fail=1; }
  [ "$nx" -gt 0 ] && [ "$nx" -le "$ah" ] && [ "$ah" -le "$rd" ] ||
    { echo "FAIL: want 0 < MEM_RMT_AHEAD_NEXT <= MEM_RMT_AHEAD <= MEM_RMT_READ"; fail=1; }
  leftovers
  ;;
lane)
  run "$wd.lane" on 512M 2 -fault remote.cma:1+; rc=$?
  st=$(stat MEM_RMT_STORED "$wd.lane"); rd=$(stat MEM_RMT_READ "$wd.lane")
  echo "lane: exit $rc, stored remotely $st, read back $rd, written locally $(stat MEM_WRITTEN "$wd.lane")"
  grep -q '^PASS rank_memory' "$wd.lane" && [ $rc = 0 ] || { cat "$wd.lane"; echo "FAIL: run"; fail=1; }
  grep -q 'injected .* remote.cma' "$wd.lane" || { cat "$wd.lane"; echo "FAIL: the fault was not reached"; fail=1; }
  [ "$st" -gt 0 ] && [ "$rd" -gt 0 ] || { echo "FAIL: nothing went through the remote tier"; fail=1; }
  leftovers
  ;;
refuse)
  run "$wd.ref" on 512M 2 -fault remote.refuse:1+; rc=$?
  fb=$(stat MEM_RMT_FALLBACK "$wd.ref"); rd=$(stat MEM_RMT_READ "$wd.ref")
  echo "refuse: exit $rc, fallbacks $fb, read back from the returned file $rd, stored remotely $(stat MEM_RMT_STORED "$wd.ref"), written locally $(stat MEM_WRITTEN "$wd.ref")"
  grep -q '^PASS rank_memory' "$wd.ref" && [ $rc = 0 ] || { cat "$wd.ref"; echo "FAIL: run"; fail=1; }
  grep -q 'injected .* remote.refuse' "$wd.ref" || { cat "$wd.ref"; echo "FAIL: the fault was not reached"; fail=1; }
  [ "$fb" -gt 0 ] && [ "$rd" -gt 0 ] || { echo "FAIL: want fallbacks > 0 and refused copies read back > 0"; fail=1; }
  leftovers
  ;;
lrlw)
  run "$wd.lrlw" on 512M 2 -mem-strategy lrlw; rc=$?
  st=$(stat MEM_RMT_STORED "$wd.lrlw"); rd=$(stat MEM_RMT_READ "$wd.lrlw")
  echo "lrlw: exit $rc, stored remotely $st, read back $rd, written locally $(stat MEM_WRITTEN "$wd.lrlw")"
  grep -q '^PASS rank_memory' "$wd.lrlw" && [ $rc = 0 ] || { cat "$wd.lrlw"; echo "FAIL: run"; fail=1; }
  [ "$st" -gt 0 ] && [ "$rd" -gt 0 ] || { echo "FAIL: nothing went through the remote tier"; fail=1; }
  leftovers
  ;;
room)
  env BDMPI_WD="$wd" BDMPI_TEST_TAG="$tag" timeout 150 "$exe" -nn 3 -ns 8 -nr 1 -mem 512M \
    -mem-node 10M,44M,512M -mem-remote on -stats "$prog" 4 2 > "$wd.room" 2>&1
  rc=$?
  st=$(stat MEM_RMT_STORED "$wd.room"); fb=$(stat MEM_RMT_FALLBACK "$wd.room")
  echo "room: exit $rc, stored remotely $st, fallbacks $fb, given back $(stat MEM_RMT_RETURNED "$wd.room")"
  grep -q '^PASS rank_memory' "$wd.room" && [ $rc = 0 ] || { cat "$wd.room"; echo "FAIL: run"; fail=1; }
  [ "$st" -gt 0 ] && [ "$fb" = 0 ] || { echo "FAIL: stored $st, fell back to storage $fb (want > 0, 0)"; fail=1; }
  leftovers
  ;;
return)
  # remote_return (beside rank_memory): node 0 fills first, then node 1,
  # whose 48M hold its own 40 MiB only if it gives node 0's data back
  env BDMPI_WD="$wd" BDMPI_TEST_TAG="$tag" timeout 150 "$exe" -nn 2 -ns 8 -nr 1 -mem 512M \
    -mem-node 10M,48M -mem-remote on -stats "$(dirname "$prog")/remote_return" 5 > "$wd.ret" 2>&1
  rc=$?
  ret=$(stat MEM_RMT_RETURNED "$wd.ret")
  echo "return: exit $rc, stored remotely $(stat MEM_RMT_STORED "$wd.ret"), given back $ret, fallbacks $(stat MEM_RMT_FALLBACK "$wd.ret"), read back $(stat MEM_RMT_READ "$wd.ret")"
  grep -q '^PASS remote_return' "$wd.ret" && [ $rc = 0 ] || { cat "$wd.ret"; echo "FAIL: run"; fail=1; }
  [ "$ret" -gt 0 ] || { echo "FAIL: node 1 gave nothing back"; fail=1; }
  leftovers
  ;;
kill)
  env BDMPI_WD="$wd" BDMPI_TEST_TAG="$tag" setsid "$exe" -nn 2 -ns 8 -nr 1 -mem 512M -mem-node 10M,512M \
    -mem-remote on "$prog" 4 100000 > "$wd.kill" 2>&1 &
  launcher=$!
  victim=
  # node 1's master, once it holds node 0's data (its memory grows past 20 MiB)
  for i in $(seq 150); do
    for p in $(tagged); do
      [ "$(cat /proc/$p/comm 2>/dev/null)" = bdmprun ] || continue
      tr '\0' '\n' < /proc/$p/environ 2>/dev/null | grep -qx 'PMI_RANK=1' || continue
      rss=$(awk '/^VmRSS/ {print $2}' /proc/$p/status 2>/dev/null)
      [ "${rss:-0}" -gt 20000 ] && victim=$p
    done
    [ -n "$victim" ] && break
    sleep 0.1
  done
  if [ -z "$victim" ]; then
    echo "FAIL: node 1's master never held node 0's data"; cat "$wd.kill"; kill -9 $(tagged) 2>/dev/null; fail=1
  else
    kill -9 "$victim"
    for i in $(seq 100); do kill -0 $launcher 2>/dev/null || break; sleep 0.1; done
    wait $launcher; rc=$?
    echo "kill: exit $rc"
    [ $rc != 0 ] || { echo "FAIL: the job went on"; fail=1; }
    # (on a loaded machine bdmpiexec may see MPICH's kill of node 0's master
    # in the same moment, and then names both)
    grep -Eq 'the master of node (0 or of node )?1( \(seen dead together\))? \(bdmprun\) ended before the job did.*-mem-remote on' "$wd.kill" ||
      { cat "$wd.kill"; echo "FAIL: no message naming node 1"; fail=1; }
    grep -m1 'master of node 1' "$wd.kill"
  fi
  leftovers
  ;;
*) echo "usage: remote.sh on|lane|room|return|kill BDMPIEXEC RANK_MEMORY"; exit 2 ;;
esac
rm -rf "$wd" "$wd".*
[ $fail = 0 ] && echo "PASS remote $mode"
exit $fail
