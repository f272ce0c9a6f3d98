#!/bin/bash
# coll_stage_full.sh BDMPIEXEC PROGRAM
# The master's collective spill file cannot be written: -wd is a 4 MiB
# tmpfs and PROGRAM (coll_stage) moves tens of MiB through Alltoallv with
# -mem-strategy none and -msg-threshold 4K, so every large piece goes to
# the file (nothing of the ranks does) and a write of the master's I/O
# thread fails.  The job must stop with a non-zero status and the message
# of a failed collective write, naming the bytes, the call and the
# directory, and leave no process and no file behind.  The tmpfs lives in
# a private mount namespace.  Exit 0 pass, 1 fail, 77 skip.
set -u
if [ -z "${BDMPI_IN_NS:-}" ]; then
  unshare --mount --propagation private true 2>/dev/null || { echo "SKIP: cannot make a mount namespace"; exit 77; }
  exec env BDMPI_IN_NS=1 unshare --mount --propagation private "$0" "$@"
fi
exe=$1; prog=$2
mnt=$(mktemp -d /tmp/bdmpi-cfull.XXXXXX)
mount -t tmpfs -o size=4m,mode=0700 tmpfs "$mnt" 2>/dev/null || { echo "SKIP: cannot mount a tmpfs"; rmdir "$mnt"; exit 77; }
out=$(mktemp /tmp/bdmpi-cfull-out.XXXXXX)
tag="bdmpi-cfull-$$-$RANDOM"
env BDMPI_TEST_TAG="$tag" timeout -k 5 120 "$exe" -wd "$mnt" -ns 4 -nr 1 -mem-strategy none \
  -msg-threshold 4K "$prog" >"$out" 2>&1
rc=$?
cat "$out"
echo "--- exit status $rc"
fail=0
[ $rc -ne 0 ] && [ $rc -ne 124 ] || { echo "FAIL: expected a non-zero status (not a timeout), got $rc"; fail=1; }
re="cannot write [1-9][0-9]* bytes of MPI_[A-Za-z]+ data to the spill file in $mnt/bdmpi\.[^ ]*: No space left on device"
grep -Eq -e "$re" "$out" || { echo "FAIL: no message matching: $re"; fail=1; }
left=$(grep -lsa "BDMPI_TEST_TAG=$tag" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3)
[ -z "$left" ] || { echo "FAIL: processes left behind: $left"; kill -9 $left 2>/dev/null; fail=1; }
[ -z "$(find "$mnt" -mindepth 1 2>/dev/null)" ] || { echo "FAIL: files left in $mnt:"; find "$mnt" -mindepth 1; fail=1; }
umount "$mnt"
rmdir "$mnt"
rm -f "$out"
exit $fail
