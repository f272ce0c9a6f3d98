#!/bin/bash
# soak.sh [-n RUNS] [-s SEED] [-k PERCENT] [-f PERCENT] [-d] [-2] [BUILD]
# Many short jobs in a row (issue 18): random shapes (-ns 1..8, -nr 1..ns,
# -nn 1 or 2 when MPICH is there, -mem-strategy, budgets from 12M to none,
# -mem-track) of tests/runtime/fault_prog.c, which checks every byte it gets
# back.  -k PERCENT of them (default 30) get, at a random moment, a kill -9
# of a random process of the job (the launcher, a master or a rank) or a
# SIGTERM of the launcher.  -f PERCENT others (default 10) run with an
# injected fault (-fault) at a random site and call: an error (EIO, ENOMEM,
# ...; sometimes every call from the Nth on), a hang of the master's event
# loop (master.loop, found by its stall watchdog: -stall-timeout 1), or a
# delay of every storage call or loop turn from the Nth on; such a job must
# give the right answer (always, for a delay) or stop with a non-zero status and a message naming the rank or
# the master, the call and the error.  After each job: no process of it is
# left, its -wd directory is empty, no new /dev/shm entry; a job neither
# killed nor faulted must print its PASS line with status 0, and no job
# may ever say WRONG ANSWER.  A killed job may end any way but must leave
# nothing behind either.  First, unless -d, one longer job checks that the
# open file descriptors of its long-lived processes (the master, the
# ranks) do not grow from its first half to its second.
# -2: every job on two nodes (-nn 2), for the kills of multi-node jobs.
# Prints one line per job that fails a check and a summary; exit 0 when
# none did.  BUILD is the build directory (default build/).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
runs=1000
seed=$$
killpct=30
faultpct=10
fdcheck=1
only2=0
while getopts "n:s:k:f:d2" o; do
  case $o in
    n) runs=$OPTARG ;;
    s) seed=$OPTARG ;;
    k) killpct=$OPTARG ;;
    f) faultpct=$OPTARG ;;
    d) fdcheck=0 ;;
    2) only2=1 ;;
    *) echo "usage: soak.sh [-n RUNS] [-s SEED] [-k PERCENT] [-f PERCENT] [-d] [-2] [BUILD]"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
build=${1:-$root/build}
exe=$build/bin/bdmpiexec
prog=$build/tests/fault_prog
[ -x "$exe" ] && [ -x "$prog" ] || { echo "soak: build first (no $exe or $prog)"; exit 2; }
RANDOM=$seed
have_nn=0
command -v mpiexec.mpich >/dev/null 2>&1 && have_nn=1
tmp=$(mktemp -d /tmp/bdmpi-soak.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
strategies=(none araw arlw lrlw)
budgets=(12M 16M 24M 48M 0)
tracks=(auto mprotect)
# /dev/shm entries not in $1 that no live process holds or maps (the job's
# processes are gone by then: one still in use is another job's), nor
# another job's directory for its masters' shared memory (bdmpi.PID.*,
# made and removed by the bdmpiexec PID, still running).
shm_orphans() {
  local e p
  for e in $(comm -13 <(echo "$1") <(ls /dev/shm 2>/dev/null | sort)); do
    case "$e" in bdmpi.*) p=${e#bdmpi.}; [ -d "/proc/${p%%.*}" ] && continue ;; esac
    if ! ls -l /proc/[0-9]*/fd 2>/dev/null | grep -q "/dev/shm/$e" &&
      ! grep -qs "/dev/shm/$e" /proc/[0-9]*/maps; then
      echo "$e"
    fi
  done
}
# Fault sites (src/common/bd_fault.h) and what a stopped job must name:
# the call, and the error.
sites=(mem.open mem.pwrite mem.pread mem.fallocate mem.ftruncate spill.open spill.write
  spill.read io.open io.write io.read io.resize master.alloc master.memalign rpc.die master.loop)
# Delays: of every storage call, or of every turn of the master's loop, from
# the Nth on.
storage_sites=(mem.pwrite mem.pread spill.write spill.read io.write io.read master.loop)
errnos=(EIO EIO ENOSPC EACCES)
call_re() {
  case "$1" in
    mem.open | spill.open) echo "open|create" ;;
    mem.pwrite | spill.write) echo "writ" ;;
    mem.pread | spill.read) echo "read" ;;
    mem.fallocate) echo "fallocate|punch" ;;
    mem.ftruncate) echo "ftruncate" ;;
    io.open) echo "MPI_File_open" ;;
    io.write) echo "MPI_File_write" ;;
    io.read) echo "MPI_File_read" ;;
    io.resize) echo "MPI_File_set_size" ;;
    master.alloc) echo "malloc|calloc|realloc" ;;
    master.memalign) echo "posix_memalign" ;;
    net.send) echo "MPI_Isend" ;;
    net.recv) echo "MPI_Imrecv" ;;
    rpc.die) echo "was killed by signal 9" ;;
    master.loop) echo "event loop" ;;
  esac
}
err_re() { # SITE ERRNO
  case "$1" in
    master.loop) echo "has not turned" ;;
    master.*) echo "Cannot allocate memory|ENOMEM" ;;
    net.*) echo "MPI" ;;
    rpc.die) echo "signal 9" ;;
    *) case "$2" in
         ENOSPC) echo "No space left on device|ENOSPC|storage full|full" ;;
         EACCES) echo "Permission denied|EACCES" ;;
         *) echo "Input/output error|EIO" ;;
       esac ;;
  esac
}

# fd_watch: one job of a few seconds (4 ranks of 10 MiB under -mem 12M, 25
# rounds of the same work); the number of open descriptors of its master
# and of its ranks together is sampled every 0.1 s.  A leak of one
# descriptor a round would make the second half's highest count exceed the
# first half's; a few more (a spill file open at that moment) are allowed.
children() { cat /proc/$1/task/$1/children 2>/dev/null; }
fd_watch() {
  local wd="$tmp/fdwd" tag="bdmpi-soak-fd-$$" out="$tmp/fdout"
  local rm_prog=$build/tests/rank_memory
  [ -x "$rm_prog" ] || { echo "soak: fd check skipped (no $rm_prog)"; return 0; }
  mkdir -p "$wd"
  env BDMPI_WD="$wd" BDMPI_TEST_TAG="$tag" timeout -k 5 120 "$exe" -ns 4 -nr 1 -mem 12M \
    "$rm_prog" 8 25 >"$out" 2>&1 &
  local job=$! m=() r=() master="" p n
  while kill -0 $job 2>/dev/null; do
    # The master is the child named bdmprun of bdmpiexec, timeout's child
    # ($job): found through the children lists, not a scan of every
    # process's environment, which on a loaded machine took so long that
    # too few samples were taken (soak.ci, session 14).
    [ -n "$master" ] && [ -d /proc/$master ] || master=$(for l in $(children $job); do
      for p in $(children $l); do
        [ "$(cat /proc/$p/comm 2>/dev/null)" = bdmprun ] && echo $p; done; done | head -1)
    if [ -n "$master" ]; then
      n=$(ls /proc/$master/fd 2>/dev/null | wc -l)
      local rn=0 kids
      kids=$(children "$master")
      for p in $kids; do rn=$((rn + $(ls /proc/$p/fd 2>/dev/null | wc -l))); done
      [ "$n" -gt 0 ] && [ -n "$kids" ] && { m+=("$n"); r+=("$rn"); }
    fi
    sleep 0.1
  done
  wait $job
  local rc=$? k=${#m[@]}
  local h=$((k / 2)) m1=0 m2=0 r1=0 r2=0 i
  for ((i = 0; i < k; i++)); do
    if [ $i -lt $h ]; then
      [ "${m[i]}" -gt $m1 ] && m1=${m[i]}
      [ "${r[i]}" -gt $r1 ] && r1=${r[i]}
    else
      [ "${m[i]}" -gt $m2 ] && m2=${m[i]}
      [ "${r[i]}" -gt $r2 ] && r2=${r[i]}
    fi
  done
  echo "soak: open descriptors over $k samples of a long job: master at most $m1, then $m2; its ranks together at most $r1, then $r2"
  local why=""
  [ $rc = 0 ] && grep -q "PASS rank_memory" "$out" || why="the job failed (status $rc)"
  [ $k -ge 6 ] || why="${why:+$why; }too few samples ($k)"
  [ $m2 -le $((m1 + 2)) ] || why="${why:+$why; }the master's descriptors grew"
  [ $r2 -le $((r1 + 4)) ] || why="${why:+$why; }the ranks' descriptors grew"
  [ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ] || why="${why:+$why; }left in -wd"
  if [ -n "$why" ]; then
    echo "soak: fd check: $why"
    tail -3 "$out" | sed 's/^/    | /'
    return 1
  fi
  return 0
}

bad=0
killed=0
passed=0
faulted=0
fault_ok=0
fault_err=0
t0=$(date +%s)
[ $fdcheck = 1 ] && { fd_watch || bad=$((bad + 1)); }
for ((i = 1; i <= runs; i++)); do
  ns=$((RANDOM % 8 + 1))
  nr=$((RANDOM % ns + 1))
  nn=1
  [ $have_nn = 1 ] && [ $((RANDOM % 4)) = 0 ] && nn=2
  [ $only2 = 1 ] && [ $have_nn = 1 ] && nn=2
  st=${strategies[RANDOM % 4]}
  mem=${budgets[RANDOM % 5]}
  tr=${tracks[RANDOM % 2]}
  mib=$((RANDOM % 4 + 1))
  shape=(-nn $nn -ns $ns -nr $nr -mem-strategy $st -mem-track $tr)
  [ "$mem" != 0 ] && shape+=(-mem $mem)
  dice=$((RANDOM % 100))
  fault="" fsite="" ferr=""
  if [ $dice -ge "$killpct" ] && [ $dice -lt $((killpct + faultpct)) ]; then
    if [ $((RANDOM % 4)) = 0 ]; then
      fsite=${storage_sites[RANDOM % ${#storage_sites[@]}]}
      fault="$fsite:$((RANDOM % 4 + 1))+:delay=$((RANDOM % 5 + 1))ms"
    else
      all=("${sites[@]}")
      [ $nn -gt 1 ] && all+=(net.send net.recv)
      fsite=${all[RANDOM % ${#all[@]}]}
      ferr=${errnos[RANDOM % ${#errnos[@]}]}
      case $fsite in master.* | net.* | rpc.*) ferr="" ;; esac
      fault="$fsite:$((RANDOM % 4 + 1))"
      [ $((RANDOM % 3)) = 0 ] && fault="$fault+"
      [ -n "$ferr" ] && fault="$fault:$ferr"
      # a master whose loop hangs is reported by its stall watchdog
      [ $fsite = master.loop ] && shape+=(-stall-timeout 1)
    fi
    shape+=(-fault "$fault")
  fi
  wd="$tmp/wd"
  rm -rf "$wd" "$tmp/io"
  mkdir -p "$wd" "$tmp/io"
  tag="bdmpi-soak-$$-$i"
  shm_before=$(ls /dev/shm 2>/dev/null | sort)
  started=$SECONDS
  env BDMPI_WD="$wd" BDMPI_TEST_TAG="$tag" timeout -k 5 120 "$exe" "${shape[@]}" "$prog" $mib "$tmp/io/data" \
    >"$tmp/out" 2>&1 &
  job=$!
  kill_what=""
  if [ $dice -lt "$killpct" ]; then
    sleep "0.$((RANDOM % 10))$((RANDOM % 10))"
    # the job's processes (not env/timeout, which only watch it)
    pids=$(for p in $(grep -lsa "BDMPI_TEST_TAG=$tag" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3); do
      case "$(cat /proc/$p/comm 2>/dev/null)" in env | timeout | "") ;; *) echo $p ;; esac
    done)
    launcher=$(for p in $pids; do [ "$(cat /proc/$p/comm 2>/dev/null)" = bdmpiexec ] && echo $p; done | head -1)
    if [ -n "$pids" ]; then
      if [ $((RANDOM % 3)) = 0 ] && [ -n "$launcher" ]; then
        kill -TERM "$launcher" 2>/dev/null && kill_what="SIGTERM to the launcher"
      else
        victims=($pids)
        v=${victims[RANDOM % ${#victims[@]}]}
        kill_what="kill -9 of $(cat /proc/$v/comm 2>/dev/null) ($v)"
        kill -9 "$v" 2>/dev/null || kill_what=""
      fi
    fi
  fi
  # (timeout re-raises the signal that killed the job: no notice of it)
  { wait $job; } 2>/dev/null
  rc=$?
  took=$((SECONDS - started))
  [ -n "$kill_what" ] && killed=$((killed + 1))
  why=""
  grep -q "WRONG ANSWER" "$tmp/out" && why="wrong answer"
  if [ -n "$fault" ]; then
    faulted=$((faulted + 1))
    msg=$(grep -v '^bdmpi-fault: ' "$tmp/out")
    if [ $took -ge 120 ]; then
      why="${why:+$why; }no end within 120 s"
    elif grep -Eq "signal 11|Segmentation fault|signal 7 |Bus error" "$tmp/out"; then
      why="${why:+$why; }a process crashed"
    elif [ $rc = 0 ]; then
      if grep -q "^PASS fault_prog" "$tmp/out"; then fault_ok=$((fault_ok + 1)); else why="${why:+$why; }status 0 without PASS"; fi
    elif [[ $fault == *delay=* ]]; then
      why="${why:+$why; }status $rc with slow storage only"
    elif ! grep -Eq "rank [0-9]+|bdmprun|node [0-9]+" <<<"$msg"; then
      why="${why:+$why; }status $rc, but no message names a rank or the master"
    elif ! grep -Eq "$(call_re "$fsite")" <<<"$msg"; then
      why="${why:+$why; }status $rc, but no message names the call"
    elif ! grep -Eq "$(err_re "$fsite" "$ferr")" <<<"$msg"; then
      why="${why:+$why; }status $rc, but no message names the error"
    else
      fault_err=$((fault_err + 1))
    fi
  elif [ -z "$kill_what" ]; then
    if [ $took -ge 120 ]; then
      why="${why:+$why; }no end within 120 s"
    elif [ $rc != 0 ] || ! grep -q "^PASS fault_prog" "$tmp/out"; then
      why="${why:+$why; }status $rc without a kill"
    fi
  fi
  left=""
  for k in 1 2 3 4 5 6 7 8 9 10; do
    left=$(grep -lsa "BDMPI_TEST_TAG=$tag" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3)
    files=$(find "$wd" -mindepth 1 2>/dev/null | head -3)
    [ -z "$left" ] && [ -z "$files" ] && break
    sleep 0.5
  done
  [ -z "$left" ] || { why="${why:+$why; }processes left: $left"; kill -9 $left 2>/dev/null; }
  [ -z "$files" ] || why="${why:+$why; }left in -wd: $files"
  # BDMPI itself puts nothing in /dev/shm (its shared memory is memfds);
  # MPICH, which connects the masters of -nn 2, does.  Other jobs on the
  # machine make entries too, which sit unheld for seconds while their MPI
  # starts: only -nn 2 jobs are checked, for entries still unheld 3 s on.
  shm_new=""
  [ $nn -gt 1 ] && shm_new=$(shm_orphans "$shm_before")
  [ -n "$shm_new" ] && sleep 3 && shm_new=$(shm_orphans "$shm_before")
  [ -z "$shm_new" ] || why="${why:+$why; }new in /dev/shm: $shm_new"
  if [ -n "$why" ]; then
    bad=$((bad + 1))
    echo "job $i [${shape[*]} $mib MiB${kill_what:+; $kill_what}]: status $rc: $why"
    tail -5 "$tmp/out" | sed 's/^/    | /'
  elif [ -z "$kill_what" ] && [ -z "$fault" ]; then
    passed=$((passed + 1))
  fi
  [ $((i % 50)) = 0 ] && echo "soak: $i jobs, $killed killed, $faulted with faults, $passed passed otherwise, $bad failed a check ($(($(date +%s) - t0)) s)"
done
echo "soak: $runs jobs (seed $seed) in $(($(date +%s) - t0)) s: $killed killed at random; $faulted with an injected fault ($fault_ok gave the right answer, $fault_err stopped with a clear error); $passed of the others gave the right answer; $bad failed a check"
[ $bad = 0 ]
