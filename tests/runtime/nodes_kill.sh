#!/bin/bash
# nodes_kill.sh CASE BDMPIEXEC PROGRAM
# Kills in -nn 2 jobs that used to leave something behind (issue 18, the
# 1,000-job soak of session 12).  PROGRAM is tests/runtime/crash ("hang 1":
# rank 1 hangs, the others wait for it).  CASE:
#   proxy      kill -9 of MPICH's proxy (hydra_pmi_proxy, the masters'
#              parent): the masters must notice and end by themselves
#              (bdmpiexec must not have had to kill them) within 5 s.
#   orphan     a master stopped (SIGSTOP: it cannot end by itself), then
#              bdmpiexec killed: its guardian must end the rest of the job.
#   stopped    a master stopped, then the proxy killed: the master keeps
#              the pipes of MPICH's launcher open, so bdmpiexec must kill
#              it (saying so) for the job to end, within 10 s.
#   straggler  (PROGRAM unused) each rank leaves a process of its own
#              running, its output elsewhere: bdmpiexec must end on time
#              (MPICH's launcher must not wait on pipes that process holds)
#              and kill it, saying so; with -nn 1 and -nn 2.
#   shm        the masters' MPI shared-memory files are in the job's own
#              directory under /dev/shm (UCX) or not made (MPICH's), seen in
#              the masters' mappings; then 6 jobs whose master or proxy is
#              killed at 0.05 to 0.55 s, during the masters' MPI_Init.
#   swept      bdmpiexec and its guardian killed together (kill -9 of both)
#              leave the job's /dev/shm directory: the next -nn 2 job must
#              remove it (local_shm_sweep) and say so.
#   hostfile   the same with the masters started through a hostfile (-f)
#              naming this host only, the closest to separate hosts that
#              can be tried here; then a master stopped and the proxy
#              killed, as in "stopped".
# After each: no process of the job, nothing in -wd, no new entry in
# /dev/shm that no process holds.  Exit 0 pass, 1 fail.
set -u
what=$1; exe=$2; prog=$3
wd=$(mktemp -d /tmp/bdmpi-nkill.XXXXXX)
out=$wd.out
fail=0
# A watchdog ahead of CTest's timeout: if this script is still running
# then, say what it was doing and what of its jobs still runs (the CI of
# stop 25 timed out here once with nothing to go on).
phase=start
( sleep "${NODES_KILL_WATCHDOG:-50}"
  echo "WATCHDOG: still running after ${NODES_KILL_WATCHDOG:-50} s; the phase log:"
  cat "$wd.phase" 2>/dev/null
  echo "processes of this script and its jobs:"
  ps -eo pid,ppid,stat,etime,wchan:24,args --forest 2>/dev/null | awk '$1 != 2 && $2 != 2' | cut -c1-220 | head -80
  for p in $(grep -lsa "BDMPI_TEST_TAG=bdmpi-nkill-$$-" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3); do
    echo "  $p $(cat /proc/$p/comm 2>/dev/null) $(grep State /proc/$p/status 2>/dev/null) wchan=$(cat /proc/$p/wchan 2>/dev/null)"
  done ) &
watchdog=$!
trap 'pkill -P $watchdog 2>/dev/null; kill $watchdog 2>/dev/null; rm -rf "$wd" "$out" "$wd.phase" "$wd.hosts"' EXIT
hf=() # -f HOSTFILE for the case hostfile
# note TEXT: a line of the phase log, with the seconds since the start.
note() { echo "[$SECONDS s] $*" >>"$wd.phase"; }
# Reading another process's environ or maps takes its memory map's lock: a
# scan is bounded (and reported) so that one process of another test stuck
# with that lock cannot hang this one silently.
scan() { timeout -s KILL 20 "$@" || { [ $? = 137 ] && note "a /proc scan ($1) took over 20 s"; }; }
tagged() { scan grep -lsa "BDMPI_TEST_TAG=$tag" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3; }
named() { for p in $(tagged); do [ "$(cat /proc/$p/comm 2>/dev/null)" = "$1" ] && echo $p; done; }
# A master: a child of the proxy $1 (a rank being started is, until its
# exec, a process named bdmprun too, a child of a master: stopping one of
# those instead failed the case stopped once).
master_of() { [ -n "$1" ] && pgrep -P "$1" -x bdmprun | tail -1; }
# /dev/shm entries of MPICH, UCX or BDMPI not in $1 that no process holds or
# maps (another user of the machine may be making some of its own).
shm_orphans() {
  local e p
  for e in $(comm -13 <(echo "$1") <(ls /dev/shm 2>/dev/null | sort)); do
    case "$e" in mpich_* | ucx_shm_* | bdmpi.*) ;; *) continue ;; esac
    # another job's directory, its bdmpiexec (bdmpi.PID.*) still running
    case "$e" in bdmpi.*) p=${e#bdmpi.}; [ -d "/proc/${p%%.*}" ] && continue ;; esac
    scan ls -l /proc/[0-9]*/fd 2>/dev/null | grep -q "/dev/shm/$e" && continue
    scan grep -qs "/dev/shm/$e" /proc/[0-9]*/maps && continue
    echo "$e"
  done
}
start() { # start a job (-nn ${nn:-2}, PROGRAM or the arguments given); tag names it
  tag="bdmpi-nkill-$$-$RANDOM$RANDOM"
  rm -rf "$wd"/*
  shm_before=$(ls /dev/shm 2>/dev/null | sort)
  [ $# = 0 ] && set -- "$prog" hang 1
  env BDMPI_WD="$wd" BDMPI_TEST_TAG="$tag" setsid "$exe" -nn "${nn:-2}" -ns 2 -nr 1 ${hf[@]+"${hf[@]}"} "$@" >"$out" 2>&1 &
  launcher=$!
  note "started job $tag (bdmpiexec $launcher)"
}
wait_up() { # until the ranks are up (rank 1 has sent its spill-file message)
  for i in $(seq 100); do
    [ -n "$(find "$wd" -name 'msg-*' 2>/dev/null)" ] && return 0
    sleep 0.1
  done
  echo "FAIL: $what: the job did not start"
  return 1
}
# check LIMIT_TENTHS LABEL: nothing of the job left within the limit.
check() {
  local i left
  for i in $(seq "$1"); do
    left=$(tagged)
    [ -z "$left" ] && [ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ] && break
    sleep 0.1
  done
  if [ -n "$left" ]; then
    echo "FAIL: $2: processes left after $(($1 / 10)) s:"
    for p in $left; do echo "  $p $(cat /proc/$p/comm 2>/dev/null)"; done
    kill -CONT $left 2>/dev/null
    kill -9 $left 2>/dev/null
    fail=1
  fi
  # bdmpiexec is one of the tagged processes, so it has ended or was just
  # killed; if it is still there, say in which state rather than wait.
  running() { grep -qs '^State:[[:space:]]*[^Z]' /proc/$launcher/status; }
  for i in $(seq 50); do running || break; sleep 0.1; done
  if running; then
    echo "FAIL: $2: bdmpiexec ($launcher) still runs: $(grep State /proc/$launcher/status) wchan=$(cat /proc/$launcher/wchan 2>/dev/null)"
    kill -9 $launcher 2>/dev/null
    fail=1
  fi
  wait $launcher 2>/dev/null
  note "$2: job ended, checking what it left"
  [ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ] || { echo "FAIL: $2: left in -wd:"; find "$wd" -mindepth 1 | head; fail=1; }
  local shm
  shm=$(shm_orphans "$shm_before")
  [ -n "$shm" ] && sleep 2 && shm=$(shm_orphans "$shm_before")
  [ -z "$shm" ] || { echo "FAIL: $2: left in /dev/shm: $shm"; fail=1; }
  note "$2: checked"
}

case "$what" in
  proxy | orphan | stopped)
    start
    wait_up || { kill -9 $(tagged) 2>/dev/null; exit 1; }
    proxy=$(named hydra_pmi_proxy | head -1)
    master=$(master_of "$proxy")
    [ -n "$proxy" ] && [ -n "$master" ] || { echo "FAIL: no proxy ($proxy) or master ($master)"; kill -9 $(tagged) 2>/dev/null; exit 1; }
    case "$what" in
      proxy) kill -9 "$proxy"; check 50 "kill -9 of the proxy" ;;
      orphan) kill -STOP "$master"; kill -9 "$launcher"; check 100 "kill -9 of bdmpiexec, a master stopped" ;;
      stopped) kill -STOP "$master"; kill -9 "$proxy"; check 100 "kill -9 of the proxy, a master stopped" ;;
    esac
    [ "$what" = stopped ] && ! grep -q "master .*(bdmprun, pid $master) still ran .* after the process that started it .* ended: killed" "$out" &&
      { echo "FAIL: bdmpiexec did not say it killed the stopped master ($master, proxy $proxy):"; cat "$out"; cat "$wd.phase"; fail=1; }
    [ "$what" = proxy ] && grep -q "still ran" "$out" && { echo "FAIL: the masters did not end by themselves:"; grep "still ran" "$out"; fail=1; }
    ;;
  straggler)
    for nn in 1 2; do
      start sh -c 'sleep 60 </dev/null >/dev/null 2>&1 & exit 0'
      check 100 "-nn $nn, processes the ranks left"
      grep -q "$((2 * nn)) processes of the job still ran .* killed" "$out" ||
        { echo "FAIL: -nn $nn: bdmpiexec did not say it killed the $((2 * nn)) processes left:"; tail -3 "$out"; fail=1; }
    done
    ;;
  shm | hostfile)
    [ "$what" = hostfile ] && { echo "localhost:2" >"$wd.hosts"; hf=(-f "$wd.hosts"); }
    start
    wait_up || { kill -9 $(tagged) 2>/dev/null; exit 1; }
    maps=$(for p in $(named bdmprun); do grep /dev/shm /proc/$p/maps | awk '{print $6}'; done | sort -u)
    kill -TERM $launcher
    check 50 "SIGTERM of bdmpiexec"
    echo "$maps" | sed 's/^/  mapped: /'
    if echo "$maps" | grep -Eq "^/dev/shm/(mpich_|ucx_shm_)"; then
      echo "FAIL: the masters map MPI shared memory made in /dev/shm itself"
      fail=1
    elif ! echo "$maps" | grep -Eq "^/dev/shm/bdmpi\.[0-9]+\.[^/]+/ucx_shm_posix_"; then
      echo "FAIL: no UCX shared memory in a job directory under /dev/shm"
      fail=1
    fi
    for k in 0 1 2 3 4 5; do
      start
      sleep "$(printf '0.%02d' $((k * 10 + 5)))"
      # the victim may not be up yet on a loaded machine (the sanitizer
      # build's start is slower): wait for it rather than leave the job,
      # which hangs by design, running (the sanitizer pass failed so once)
      victim=
      for i in $(seq 60); do
        victim=$( ([ $((k % 2)) = 0 ] && named bdmprun || named hydra_pmi_proxy) | head -1)
        [ -n "$victim" ] && break
        sleep 0.05
      done
      [ -n "$victim" ] || { echo "FAIL: no $( [ $((k % 2)) = 0 ] && echo master || echo proxy) of job $tag within 3 s"; fail=1; kill -9 $(tagged) 2>/dev/null; }
      [ -n "$victim" ] && kill -9 "$victim" 2>/dev/null
      check 50 "kill -9 at $(printf '0.%02d' $((k * 10 + 5))) s of $(if [ $((k % 2)) = 0 ]; then echo a master; else echo the proxy; fi) ($victim)"
    done
    if [ "$what" = hostfile ]; then
      start
      wait_up || { kill -9 $(tagged) 2>/dev/null; exit 1; }
      proxy=$(named hydra_pmi_proxy | head -1)
      master=$(master_of "$proxy")
      kill -STOP "$master"; kill -9 "$proxy"
      check 100 "kill -9 of the proxy, a master stopped"
    fi
    ;;
  swept)
    # Any -nn 2 launcher on the machine sweeps the directory once it is old
    # enough, so another test's job (ctest -j, or another user's) can take
    # it between the touch and our launcher's sweep: then the case is made
    # again, at most 3 times; it must be our job that says it removed it.
    for attempt in 1 2 3; do
      start
      wait_up || { kill -9 $(tagged) 2>/dev/null; exit 1; }
      d=$(ls -d /dev/shm/bdmpi.$launcher.* 2>/dev/null | head -1)
      [ -n "$d" ] || { echo "FAIL: no /dev/shm/bdmpi.$launcher.* for the job"; kill -9 $(tagged) 2>/dev/null; exit 1; }
      # the launcher and its guardian (both named bdmpiexec) at once, as
      # "pkill -9 bdmpiexec" does, then the rest of the job
      kill -9 $(named bdmpiexec) 2>/dev/null
      kill -9 $(tagged) 2>/dev/null
      for i in $(seq 50); do [ -z "$(tagged)" ] && break; sleep 0.1; done
      wait $launcher 2>/dev/null
      [ -d "$d" ] || { echo "FAIL: $d was removed although its launcher and guardian were killed (the case proves nothing)"; exit 1; }
      note "left: $d"
      touch -d '1 minute ago' "$d" # older than an orphaned job takes to end
      start "$prog" segv
      check 50 "the next -nn 2 job"
      [ -d "$d" ] && { echo "FAIL: the next -nn 2 job did not remove $d"; rm -rf "$d"; fail=1; break; }
      grep -q "removed $d, left by a launcher" "$out" && break
      if [ $attempt = 3 ]; then
        echo "FAIL: the next job did not say it removed $d (3 attempts):"; cat "$out"; fail=1
      else
        note "$d was removed by another job, not ours: again"
        echo "note: $d was removed by another launcher on the machine; making the case again"
      fi
    done
    ;;
  *) echo "usage: nodes_kill.sh proxy|orphan|stopped|straggler|shm|hostfile|swept BDMPIEXEC PROGRAM"; exit 2 ;;
esac
[ $fail = 0 ] && echo "PASS: nodes_kill $what"
exit $fail
