# stats_run.sh: sourced by the option tests that compare --stats totals of
# runs of one MPI program (readahead.sh, predict.sh).  The caller sets exe
# (bdmpiexec), prog (the program, which prints "PASS <tag>"), tag, wd (the
# spill parent), common (bdmpiexec arguments), args (program arguments) and
# show (the stats to print per run); fail collects failures.
stat() { awk -v k="$1" '$1 == k {print $2}' "$2"; }
run() { # name env... -- bdmpiexec-args...
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  env "${envs[@]}" BDMPI_WD="$wd" "$exe" "${common[@]}" "$@" "$prog" "${args[@]}" > "$wd.$name" 2>&1
  local rc=$? s
  local line="== $name: exit $rc"
  for s in $show; do line+=", $s $(stat "$s" "$wd.$name")"; done
  echo "$line"
  if [ $rc -ne 0 ] || ! grep -q "^PASS $tag" "$wd.$name"; then
    cat "$wd.$name"; echo "FAIL: $name run failed"; fail=1
  fi
}
