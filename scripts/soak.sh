#!/bin/bash
# soak.sh [-n RUNS] [-s SEED] [-k PERCENT] [BUILD]
# Many short jobs in a row (issue 18): random shapes (-ns 1..8, -nr 1..ns,
# -nn 1 or 2 when MPICH is there, -mem-strategy, budgets from 12M to none,
# -mem-track) of tests/runtime/fault_prog.c, which checks every byte it gets
# back.  PERCENT of them (default 30) get, at a random moment, a kill -9 of
# a random process of the job (the launcher, a master or a rank) or a
# SIGTERM of the launcher.  After each job: no process of it is left, its
# -wd directory is empty, no new /dev/shm entry; a job that was not killed
# must print its PASS line with status 0 and must never say WRONG ANSWER.
# A killed job may end any way but must leave nothing behind either.
# Prints one line per job that fails a check and a summary; exit 0 when
# none did.  BUILD is the build directory (default build/).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
runs=1000
seed=$$
killpct=30
while getopts "n:s:k:" o; do
  case $o in
    n) runs=$OPTARG ;;
    s) seed=$OPTARG ;;
    k) killpct=$OPTARG ;;
    *) echo "usage: soak.sh [-n RUNS] [-s SEED] [-k PERCENT] [BUILD]"; exit 2 ;;
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
# processes are gone by then: one still in use is another job's).
shm_orphans() {
  local e
  for e in $(comm -13 <(echo "$1") <(ls /dev/shm 2>/dev/null | sort)); do
    if ! ls -l /proc/[0-9]*/fd 2>/dev/null | grep -q "/dev/shm/$e" &&
      ! grep -qs "/dev/shm/$e" /proc/[0-9]*/maps; then
      echo "$e"
    fi
  done
}
bad=0
killed=0
passed=0
t0=$(date +%s)
for ((i = 1; i <= runs; i++)); do
  ns=$((RANDOM % 8 + 1))
  nr=$((RANDOM % ns + 1))
  nn=1
  [ $have_nn = 1 ] && [ $((RANDOM % 4)) = 0 ] && nn=2
  st=${strategies[RANDOM % 4]}
  mem=${budgets[RANDOM % 5]}
  tr=${tracks[RANDOM % 2]}
  mib=$((RANDOM % 4 + 1))
  shape=(-nn $nn -ns $ns -nr $nr -mem-strategy $st -mem-track $tr)
  [ "$mem" != 0 ] && shape+=(-mem $mem)
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
  if [ $((RANDOM % 100)) -lt "$killpct" ]; then
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
  if [ -z "$kill_what" ]; then
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
  elif [ -z "$kill_what" ]; then
    passed=$((passed + 1))
  fi
  [ $((i % 50)) = 0 ] && echo "soak: $i jobs, $killed killed, $passed passed unkilled, $bad failed a check ($(($(date +%s) - t0)) s)"
done
echo "soak: $runs jobs (seed $seed) in $(($(date +%s) - t0)) s: $killed killed at random, $passed of the others gave the right answer, $bad failed a check"
[ $bad = 0 ]
