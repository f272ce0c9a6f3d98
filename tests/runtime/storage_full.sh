#!/bin/bash
# storage_full.sh BDMPIEXEC PROGRAM STRATEGY
# The job's storage fills up: -wd is a 4 MiB tmpfs, 4 ranks hold 10 MiB of
# managed memory each under -mem 24M (messages stay in memory), so unloading
# a rank cannot store its data.  The job must stop with a non-zero status
# and a message naming the directory and the bytes it could not store, and
# leave nothing behind (no process, no file).  The tmpfs is mounted in a
# private mount namespace, so it disappears with the test whatever happens.
# Exit 0 pass, 1 fail, 77 skip (cannot mount here).
set -u
if [ -z "${BDMPI_IN_NS:-}" ]; then
  unshare --mount --propagation private true 2>/dev/null || { echo "SKIP: cannot make a mount namespace"; exit 77; }
  exec env BDMPI_IN_NS=1 unshare --mount --propagation private "$0" "$@"
fi
exe=$1; prog=$2; strategy=$3
mnt=$(mktemp -d /tmp/bdmpi-full.XXXXXX)
mount -t tmpfs -o size=4m,mode=0700 tmpfs "$mnt" 2>/dev/null || { echo "SKIP: cannot mount a tmpfs"; rmdir "$mnt"; exit 77; }
out=$(mktemp /tmp/bdmpi-full-out.XXXXXX)
tag="bdmpi-full-$$-$RANDOM"
env BDMPI_TEST_TAG="$tag" timeout -k 5 120 "$exe" -wd "$mnt" -ns 4 -nr 1 -mem 24M -mem-strategy "$strategy" \
  -msg-threshold 4M "$prog" 8 2 >"$out" 2>&1
rc=$?
cat "$out"
echo "--- exit status $rc"
fail=0
[ $rc -ne 0 ] && [ $rc -ne 124 ] || { echo "FAIL: expected a non-zero status (not a timeout), got $rc"; fail=1; }
# Which write hits the full disk first depends on timing: an unload, or a
# single-copy message whose receiver did not read it in time (it becomes a
# spill file).  Either must name the bytes and the directory.
re="cannot write [1-9][0-9]* bytes (of managed memory to storage|to spill file [^ ]*) in $mnt/bdmpi\.[^ ]*: No space left on device"
grep -Eq -e "$re" "$out" || { echo "FAIL: no message matching: $re"; fail=1; }
left=$(grep -lsa "BDMPI_TEST_TAG=$tag" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3)
[ -z "$left" ] || { echo "FAIL: processes left behind: $left"; kill -9 $left 2>/dev/null; fail=1; }
[ -z "$(find "$mnt" -mindepth 1 2>/dev/null)" ] || { echo "FAIL: files left in $mnt:"; find "$mnt" -mindepth 1; fail=1; }
umount "$mnt"
rmdir "$mnt"
rm -f "$out"
exit $fail
