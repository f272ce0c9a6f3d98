#!/bin/bash
# syscall_io.sh BDMPIEXEC PROGRAM TRACK STRATEGY
# Runs the syscall_io program (4 ranks, one at a time, three 4 MiB buffers
# each under -mem 16M, so buffers are unloaded between the calls) with
# -mem-strategy STRATEGY on tracking path TRACK:
#   none       the manager is off (STRATEGY none)
#   uffd       userfaultfd, with the kernel's own faults handled (root here)
#   mprotect   the mprotect + SIGSEGV fallback (-mem-track mprotect)
#   uffd-user  userfaultfd with a user-mode-only descriptor: run as root,
#              the job is started as nobody, who gets no other kind
# Checks the exit status and PASS line, and that nothing is left behind: no
# process of the job, no file in its -wd.  Exit 0 pass, 1 fail, 77 skip.
set -u
exe=$1; prog=$2; track=$3; strategy=$4
wd=$(mktemp -d /tmp/bdmpi-sysio.XXXXXX)
out=$(mktemp /tmp/bdmpi-sysio-out.XXXXXX)
tag="bdmpi-sysio-$$-$RANDOM"
run=()
mode=$track
case "$track" in
  none) mode=auto ;;
  uffd-user)
    mode=uffd
    if [ "$(id -u)" = 0 ]; then
      chmod 0777 "$wd"
      run=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    fi ;;
esac
env BDMPI_WD="$wd" TMPDIR="$wd" BDMPI_TEST_TAG="$tag" BDMPI_MEM_TRACK="$mode" timeout -k 5 240 \
  "${run[@]}" "$exe" -ns 4 -nr 1 -mem 16M -mem-strategy "$strategy" "$prog" 4 "$track" >"$out" 2>&1
rc=$?
cat "$out"
fail=0
if grep -q '^SKIP' "$out"; then
  fail=77
else
  [ $rc -eq 0 ] || { echo "FAIL: the job exited with $rc"; fail=1; }
  grep -q '^PASS syscall_io' "$out" || { echo "FAIL: no PASS line"; fail=1; }
fi
left=$(grep -lsa "BDMPI_TEST_TAG=$tag" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3)
[ -z "$left" ] || { echo "FAIL: processes left behind: $left"; kill -9 $left 2>/dev/null; fail=1; }
[ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ] || { echo "FAIL: files left in $wd:"; find "$wd" -mindepth 1; fail=1; }
rm -rf "$wd" "$out"
exit $fail
