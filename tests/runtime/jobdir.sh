#!/bin/bash
# jobdir.sh BDMPIEXEC BDMPRUN PROGRAM
# The job's private directory (issue 18, docs/design.md "Faults", trust
# model).  BDMPI_JOBDIR names it to a master; a master started by hand
# with one that is not private (mode 0755, a symbolic link, another
# user's) stops at the start with a clear error, writes nothing there and
# removes nothing.  Through bdmpiexec a BDMPI_JOBDIR of the user's
# environment changes nothing: the job makes its own private directory,
# gives the right answer, and leaves nothing in either.  Exit 0 pass, 1 fail.
set -u
exe=$1; master=$2; prog=$3
base=$(mktemp -d /tmp/bdmpi-jobdir.XXXXXX)
fail=0
expect_refused() { # DIR WHAT
    local dir=$1 what=$2 out
    out=$(env BDMPI_JOBDIR="$dir" timeout -k 2 20 "$master" "$prog" 2>&1)
    local rc=$?
    echo "$out" | head -3
    if [ $rc -eq 0 ] || [ $rc -eq 124 ]; then
        echo "FAIL: $what: the master ran (status $rc)"; fail=1
    elif ! grep -Eq "BDMPI_JOBDIR '.*' is not a private directory: .*$what" <<< "$out"; then
        echo "FAIL: $what: no clear error"; fail=1
    fi
}
mkdir -m 0755 "$base/open"
expect_refused "$base/open" "it has mode 0755"
mkdir -m 0700 "$base/private"
ln -s "$base/private" "$base/link"
expect_refused "$base/link" "it is a symbolic link"
touch "$base/file"
expect_refused "$base/file" "it is not a directory"
if [ "$(id -u)" = 0 ]; then
    mkdir -m 0700 "$base/theirs"
    chown 65534 "$base/theirs"
    expect_refused "$base/theirs" "it is owned by uid 65534, not by this user"
    [ -z "$(find "$base/theirs" -mindepth 1)" ] || { echo "FAIL: written in another user's directory"; fail=1; }
fi
[ -z "$(find "$base/open" "$base/private" -mindepth 1)" ] || { echo "FAIL: files written in a refused directory"; fail=1; }
[ -f "$base/file" ] && [ -d "$base/private" ] || { echo "FAIL: a refused path was removed"; fail=1; }
# Through bdmpiexec: the user's BDMPI_JOBDIR (open to all) is not used.
mkdir -m 0777 "$base/wd" "$base/evil"
tag="bdmpi-jobdir-$$-$RANDOM"
out=$(env BDMPI_JOBDIR="$base/evil" BDMPI_TEST_TAG="$tag" timeout -k 2 60 "$exe" -ns 2 -wd "$base/wd" \
      -mem 4M "$prog" 2 2 2>&1)
rc=$?
echo "$out" | tail -2
[ $rc = 0 ] && grep -q "PASS rank_memory" <<< "$out" || { echo "FAIL: the job through bdmpiexec failed ($rc)"; fail=1; }
[ -z "$(find "$base/evil" "$base/wd" -mindepth 1)" ] || { echo "FAIL: files left:"; find "$base/evil" "$base/wd" -mindepth 1; fail=1; }
left=$(grep -lsa "BDMPI_TEST_TAG=$tag" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3)
[ -z "$left" ] || { echo "FAIL: processes left: $left"; kill -9 $left; fail=1; }
rm -rf "$base"
[ $fail = 0 ] && echo "PASS: BDMPI_JOBDIR must be private; bdmpiexec always makes its own"
exit $fail
