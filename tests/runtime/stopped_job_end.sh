# stopped_job_end.sh: sourced by the tests that stop and continue a running
# rank_memory job (signal_stop.sh, signal_tstp.sh).  The caller sets
# launcher (bdmpiexec's pid, a child of the script), wd (its -wd; its output
# is in $wd.out), fail, and defines tagged (the job's processes).
# job_end SECS PASS_MESSAGE: wait up to SECS for the launcher, then the job
# must have ended with status 0 and its PASS line, and left no process and
# nothing in -wd; prints PASS_MESSAGE when nothing failed.  Exits with fail.
job_end() {
  local secs=$1 msg=$2 rc= i left
  for i in $(seq $((secs * 10))); do
    # a zombie counts as ended: wait collects it
    if ! kill -0 "$launcher" 2>/dev/null || [ "$(awk '{print $3}' /proc/$launcher/stat 2>/dev/null)" = Z ]; then
      wait "$launcher"; rc=$?; break
    fi
    sleep 0.1
  done
  cat "$wd.out"
  if [ -z "$rc" ]; then
    echo "FAIL: the job did not end within $secs s of SIGCONT"
    kill -9 $(tagged) 2>/dev/null
    fail=1
  else
    echo "--- exit status $rc"
    [ "$rc" = 0 ] || { echo "FAIL: expected status 0"; fail=1; }
    grep -q "PASS rank_memory" "$wd.out" || { echo "FAIL: no PASS line"; fail=1; }
  fi
  sleep 0.3
  left=$(tagged)
  [ -z "$left" ] || { echo "FAIL: processes left: $left"; kill -9 $left 2>/dev/null; fail=1; }
  [ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ] || { echo "FAIL: left in -wd:"; find "$wd" -mindepth 1; fail=1; }
  rm -rf "$wd" "$wd.out"
  [ $fail = 0 ] && echo "$msg"
  exit $fail
}
