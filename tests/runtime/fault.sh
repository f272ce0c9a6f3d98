#!/bin/bash
# fault.sh [--quick|--full] [--sites 'SITE ...'] [--max N] BDMPIEXEC PROGRAM
# The fault-injection driver (issue 18; the sites are in src/common/bd_fault.h).
# Runs PROGRAM (tests/runtime/fault_prog.c) once per site and call number
# N with -fault SITE:N, and checks every run:
#   - it ends within a time limit (no hang);
#   - it either completes with the right answer ("PASS fault_prog", status
#     0), or stops with a non-zero status and a message that names who
#     failed (a rank, or the master), the call that failed and its errno
#     (for the master's MPI calls between nodes, the MPI call); a run with
#     status 0 and no PASS, any "WRONG ANSWER", a process that crashed
#     (SIGSEGV, SIGBUS) or a master that died fails the test;
#   - it leaves nothing behind: no process of the run (so no memfd either:
#     a memfd lives only while a process holds it), nothing in its -wd
#     directory (spill and backing files, job directories), no new entry in
#     /dev/shm.
# N runs over 1, 2, ... up to the bound, for each site until a run no
# longer reaches the fault (the program makes fewer calls there).
#   --quick  N = 1 for each site, and 2 for some, on one node (the default
#            CTest run)
#   --full   N in 1..12, then 16, 24, 32, 48, ... up to --max (default 256),
#            also with -mem-track mprotect for the memory manager's sites,
#            and the net.* sites on two nodes (label "fault")
#   --nodes  every N from 1 to --max, on two nodes (-nn 2 -ns 5; skipped
#            without MPICH)
#   --sticky SITE:N+ instead of SITE:N (the Nth call and every later one fail)
# Exit 0 pass, 1 fail.
set -u
mode=quick
sticky=""
sites=""
max=256
while [ $# -gt 2 ]; do
  case "$1" in
    --quick) mode=quick; shift ;;
    --full) mode=full; shift ;;
    --nodes) mode=nodes; shift ;;
    --sticky) sticky=+; shift ;;
    --sites) sites=$2; shift 2 ;;
    --max) max=$2; shift 2 ;;
    *) break ;;
  esac
done
exe=$1; prog=$2
limit=${BDMPI_FAULT_LIMIT:-60}
all_sites="mem.open mem.pwrite mem.pread mem.fallocate mem.ftruncate spill.open spill.write
  spill.read io.open io.write io.read io.resize master.alloc master.memalign rpc.die net.send
  net.recv"
[ -n "$sites" ] || sites=$all_sites
have_nodes=0
if command -v mpiexec.mpich >/dev/null 2>&1 || [ -n "${BDMPI_MPIEXEC:-}" ]; then have_nodes=1; fi

# The call (and errno) a stopped run must name, per site.
call_re() {
  case "$1" in
    mem.open) echo "open" ;;
    mem.pwrite) echo "writ" ;;
    mem.pread) echo "read" ;;
    mem.fallocate) echo "fallocate|punch" ;;
    mem.ftruncate) echo "ftruncate" ;;
    spill.open) echo "open|create" ;;
    spill.write) echo "writ" ;;
    spill.read) echo "read" ;;
    io.open) echo "MPI_File_open" ;;
    io.write) echo "MPI_File_write" ;;
    io.read) echo "MPI_File_read" ;;
    io.resize) echo "MPI_File_set_size" ;;
    master.alloc) echo "malloc|calloc|realloc" ;;
    master.memalign) echo "posix_memalign" ;;
    net.send) echo "MPI_Isend" ;;
    net.recv) echo "MPI_Imrecv" ;;
    rpc.die) echo "was killed by signal 9" ;;
  esac
}
err_re() {
  case "$1" in
    master.*) echo "Cannot allocate memory|ENOMEM" ;;
    net.*) echo "MPI" ;;
    rpc.die) echo "signal 9" ;;
    *) echo "Input/output error|EIO" ;;
  esac
}
who_re="rank [0-9]+|bdmprun|node [0-9]+"

# shm_orphans BEFORE: /dev/shm entries not in BEFORE that no live process
# holds or maps.  The run's own processes are all gone when this is asked,
# so an entry some process still uses is another job's (other tests run
# MPICH at the same time), and only one nobody uses can be our leak.
shm_orphans() {
  local e p
  for e in $(comm -13 <(echo "$1") <(ls /dev/shm 2>/dev/null | sort)); do
    # another job's directory (bdmpi.PID.*: its bdmpiexec still runs); it
    # holds no file of its own, the files in it are the masters'
    case "$e" in bdmpi.*) p=${e#bdmpi.}; [ -d "/proc/${p%%.*}" ] && continue ;; esac
    if ! ls -l /proc/[0-9]*/fd 2>/dev/null | grep -q "/dev/shm/$e" &&
      ! grep -qs "/dev/shm/$e" /proc/[0-9]*/maps; then
      echo "$e"
    fi
  done
}

fails=0
runs=0
tmp=$(mktemp -d /tmp/bdmpi-fault.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# run SITE N SHAPE...: one run; prints a line; returns 0 if the fault was
# reached, 1 if not (the caller stops raising N), 2 if the run failed a check.
run() {
  local site=$1 nth=$2
  shift 2
  local wd="$tmp/wd" io="$tmp/io" out="$tmp/out" tag="bdmpi-fault-$$-$RANDOM"
  rm -rf "$wd" "$io"
  mkdir -p "$wd" "$io"
  local shm_before
  shm_before=$(ls /dev/shm 2>/dev/null | sort)
  local t0=$SECONDS
  env BDMPI_WD="$wd" BDMPI_TEST_TAG="$tag" timeout -k 5 "$limit" \
    "$exe" "$@" -fault "$site:$nth$sticky" "$prog" 6 "$io/data" >"$out" 2>&1
  local rc=$?
  # timeout's own status (124, or 137 after -k): a rank killed by SIGKILL
  # also makes 137, so the time tells them apart
  local hung=0
  { [ $rc -eq 124 ] || [ $rc -eq 137 ]; } && [ $((SECONDS - t0)) -ge "$limit" ] && hung=1
  runs=$((runs + 1))
  local bad="" fired=0
  grep -q "^bdmpi-fault: injected" "$out" && fired=1
  local msg
  msg=$(grep -v '^bdmpi-fault: ' "$out")
  if [ $hung = 1 ]; then
    bad="no end within $limit s (hang)"
  elif grep -q "WRONG ANSWER" "$out"; then
    bad="wrong answer"
  elif grep -Eq "signal 11|Segmentation fault|signal 7 |Bus error" "$out"; then
    bad="a process crashed"
  elif grep -q "the master (bdmprun, pid [0-9]*) was killed" "$out"; then
    bad="the master died"
  elif [ $rc -eq 0 ]; then
    grep -q "^PASS fault_prog" "$out" || bad="status 0 without PASS"
  else
    local c e
    c=$(call_re "$site")
    e=$(err_re "$site")
    if ! grep -Eq "$who_re" <<<"$msg"; then
      bad="status $rc, but no message names a rank or the master"
    elif ! grep -Eq "$c" <<<"$msg"; then
      bad="status $rc, but no message names the call (/$c/)"
    elif ! grep -Eq "$e" <<<"$msg"; then
      bad="status $rc, but no message names the error (/$e/)"
    fi
  fi
  sleep 0.3
  local left
  left=$(grep -lsa "BDMPI_TEST_TAG=$tag" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3)
  if [ -n "$left" ]; then
    sleep 2
    left=$(grep -lsa "BDMPI_TEST_TAG=$tag" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3)
  fi
  if [ -n "$left" ]; then
    bad="${bad:+$bad; }processes left: $(ps -o pid=,comm= -p $left | tr '\n' ' ')"
    kill -9 $left 2>/dev/null
  fi
  local files
  files=$(find "$wd" -mindepth 1 2>/dev/null | head -3)
  [ -z "$files" ] || bad="${bad:+$bad; }left in -wd: $files"
  # BDMPI itself puts nothing in /dev/shm (memfds); MPICH, which connects
  # the masters of -nn 2, does, and so do other jobs on the machine, whose
  # entries sit unheld for seconds while their MPI starts: only runs on
  # several nodes are checked, for entries still unheld 3 s on
  local shm_new=""
  case " $* " in *" -nn 2 "*) shm_new=$(shm_orphans "$shm_before") ;; esac
  if [ -n "$shm_new" ]; then
    sleep 3
    shm_new=$(shm_orphans "$shm_before")
    [ -z "$shm_new" ] || bad="${bad:+$bad; }new in /dev/shm: $shm_new"
  fi
  local first
  first=$(grep -m1 -E "$who_re" <<<"$msg" | cut -c1-160)
  local what="completed"
  [ $rc -eq 0 ] || what="stopped ($rc): $first"
  [ $fired = 1 ] || what="not reached; $what"
  if [ -n "$bad" ]; then
    echo "FAIL $site:$nth$sticky [$*]: $bad"
    sed 's/^/    | /' "$out" | tail -15
    fails=$((fails + 1))
    return 2
  fi
  echo "ok   $site:$nth$sticky [$*]: $what"
  [ $fired = 1 ] && return 0
  return 1
}

nths() {
  if [ $mode = nodes ]; then
    seq 1 "$max"
  elif [ $mode = quick ]; then
    # the second call too where it takes another path (an unload after a
    # load, a read after the check of a trailer, another allocation)
    case "$1" in
      mem.pwrite | mem.pread | spill.read | spill.write | master.*) echo 1 2 ;;
      *) echo 1 ;;
    esac
  else
    local k
    for k in $(seq 1 12); do echo $k; done
    k=16
    while [ $k -le "$max" ]; do
      echo $k $((k * 3 / 2))
      k=$((k * 2))
    done
  fi
}

# sweep SITE SHAPE...: N over nths() until the fault is no longer reached.
sweep() {
  local site=$1
  shift
  local n
  for n in $(nths "$site"); do
    run "$site" "$n" "$@"
    [ $? -eq 1 ] && break
  done
}

base=(-ns 4 -nr 1 -mem 16M)
if [ $mode = nodes ]; then
  if [ $have_nodes = 0 ]; then
    echo "skip: no MPICH mpiexec for -nn 2"
    exit 77
  fi
  base=(-nn 2 -ns 5 -nr 1 -mem 16M)
fi
for site in $sites; do
  case "$site" in
    net.*)
      if [ $have_nodes = 0 ]; then
        echo "skip $site: no MPICH mpiexec for -nn 2"
        continue
      fi
      [ $mode = quick ] && continue
      sweep "$site" -nn 2 -ns 2 -nr 1 -mem 16M
      ;;
    mem.ftruncate)
      # on the uffd path only a shrinking realloc truncates; the mprotect
      # path truncates its memfd at the start
      sweep "$site" "${base[@]}" -mem-track mprotect
      ;;
    mem.*)
      sweep "$site" "${base[@]}"
      [ $mode = full ] && sweep "$site" "${base[@]}" -mem-track mprotect
      ;;
    spill.*)
      sweep "$site" "${base[@]}"
      [ $mode = full ] && [ $have_nodes = 1 ] && sweep "$site" -nn 2 -ns 2 -nr 1 -mem 16M
      ;;
    *)
      sweep "$site" "${base[@]}"
      ;;
  esac
done
if [ $fails -gt 0 ]; then
  echo "FAIL: $fails of $runs runs failed a check"
  exit 1
fi
echo "PASS: $runs runs, each completed with the right answer or stopped with a message naming the failure, nothing left behind"
exit 0
