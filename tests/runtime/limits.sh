#!/bin/bash
# limits.sh BDMPIEXEC PROGRAM
# Resource limits too low for the job give a clear error at the start
# instead of a failure halfway (issue 18):
#  1. RLIMIT_NOFILE 64 (soft and hard): status 2, "open-file limit";
#  2. a soft RLIMIT_NOFILE of 100 under a higher hard one: bdmpiexec raises
#     it and the job runs (status 0);
#  3. RLIMIT_NPROC 30 for -ns 8, as an unprivileged user (the kernel does
#     not apply it to root): status 2, "process limit" (skipped where we
#     cannot switch to the user nobody).
# Exit 0 pass, 1 fail.
set -u
exe=$1; prog=$2
fail=0
check() { # NAME WANT_STATUS REGEX COMMAND...
  local name=$1 want=$2 re=$3
  shift 3
  local out
  out=$(timeout -k 5 60 "$@" 2>&1)
  local rc=$?
  echo "--- $name: status $rc"
  echo "$out" | tail -5
  if [ "$rc" != "$want" ] || ! grep -Eq "$re" <<<"$out"; then
    echo "FAIL: $name: expected status $want and /$re/"
    fail=1
  fi
}
wd=$(mktemp -d /tmp/bdmpi-limits.XXXXXX)
chmod 0777 "$wd"
check nofile 2 "bdmpiexec: the open-file limit \(RLIMIT_NOFILE, ulimit -n\) is 64" \
  bash -c "ulimit -n 64 && exec '$exe' -wd '$wd' -ns 2 '$prog'"
check nofile_soft 0 "" bash -c "ulimit -S -n 100 && exec '$exe' -wd '$wd' -ns 2 '$prog'"
if [ "$(id -u)" = 0 ] && setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
  check nproc 2 "bdmpiexec: -ns 8 needs up to [0-9]+ processes and threads .* process limit \(RLIMIT_NPROC, ulimit -u\) is 30" \
    setpriv --reuid=65534 --regid=65534 --clear-groups bash -c "ulimit -u 30 && exec '$exe' -wd '$wd' -ns 8 '$prog'"
else
  echo "--- nproc: skipped (cannot run as the user nobody here)"
fi
[ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ] || { echo "FAIL: left in -wd:"; find "$wd" -mindepth 1; fail=1; }
rm -rf "$wd"
[ $fail = 0 ] && echo "PASS: limits too low are reported at the start"
exit $fail
