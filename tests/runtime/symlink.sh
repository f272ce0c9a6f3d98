#!/bin/bash
# symlink.sh BDMPIEXEC CORRUPT_PROGRAM
# A planted symlink (issue 18): with -wd a world-writable sticky directory
# (mode 1777, as /tmp; a fresh one, so leftovers can be told), rank 0 of
# tests/runtime/corrupt.c plants symlinks where rank 1's backing files
# will be created, pointing at a file of ours, and makes rank 1 store its
# memory.  The runtime must not follow them: the job stops with "File
# exists" (files are created with O_EXCL|O_NOFOLLOW), the file they point
# at is unchanged, and nothing is left behind.  Exit 0 pass, 1 fail.
set -u
exe=$1; prog=$2
victim_dir=$(mktemp -d /tmp/bdmpi-victim.XXXXXX)
victim=$victim_dir/precious
echo "precious data, not to be overwritten" >"$victim"
sum=$(md5sum <"$victim")
wd=$(mktemp -d /tmp/bdmpi-wd.XXXXXX)
chmod 1777 "$wd"
out=$(mktemp /tmp/bdmpi-symlink-out.XXXXXX)
tag="bdmpi-symlink-$$-$RANDOM"
env BDMPI_TEST_TAG="$tag" timeout -k 5 60 "$exe" -wd "$wd" -ns 2 -nr 1 -mem 12M -mem-dedup off -mem-strategy arlw \
  "$prog" symlink "$victim" >"$out" 2>&1
rc=$?
cat "$out"
echo "--- exit status $rc"
fail=0
[ $rc -ne 0 ] && [ $rc -ne 124 ] || { echo "FAIL: expected a non-zero status (not a timeout), got $rc"; fail=1; }
grep -q "WRONG ANSWER" "$out" && { echo "FAIL: see WRONG ANSWER above"; fail=1; }
grep -Eq "rank 1: cannot write [0-9]+ bytes of managed memory to storage in $wd/bdmpi\.[^ ]*: File exists" "$out" ||
  { echo "FAIL: no message that rank 1 could not create its backing file (File exists)"; fail=1; }
[ "$(md5sum <"$victim")" = "$sum" ] && [ -f "$victim" ] && [ ! -L "$victim" ] ||
  { echo "FAIL: the file the symlinks point at was changed"; fail=1; }
sleep 0.3
left=$(grep -lsa "BDMPI_TEST_TAG=$tag" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3)
[ -z "$left" ] || { echo "FAIL: processes left behind: $left"; kill -9 $left 2>/dev/null; fail=1; }
[ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ] || { echo "FAIL: left in -wd:"; find "$wd" -mindepth 1; fail=1; }
rm -rf "$victim_dir" "$out" "$wd"
[ $fail = 0 ] && echo "PASS: the planted symlinks were not followed"
exit $fail
