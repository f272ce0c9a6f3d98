#!/bin/bash
# expect.sh STATUS REGEX -- COMMAND...
# Runs COMMAND (a bdmpiexec line) with a private -wd directory and checks
#  - its exit status: a number, "nonzero", or "any";
#  - that its stderr+stdout match the extended regex REGEX ("" = no check);
#  - that it finished within the time limit of BDMPI_TEST_LIMIT seconds (default 30);
#  - that it left nothing behind: no spill directory, no live process of the program.
# Exit 0 pass, 1 fail.
set -u
want=$1; regex=$2; shift 2
[ "$1" = "--" ] && shift
wd=$(mktemp -d /tmp/bdmpi-test.XXXXXX)
out=$(mktemp /tmp/bdmpi-test-out.XXXXXX)
limit=${BDMPI_TEST_LIMIT:-30}
start=$(date +%s.%N)
# Every process of the run inherits a unique tag, so leftovers can be found
# without confusing them with other tests running the same program.
tag="bdmpi-test-$$-$RANDOM"
env BDMPI_WD="$wd" BDMPI_TEST_TAG="$tag" timeout -k 5 "$limit" "$@" >"$out" 2>&1
rc=$?
end=$(date +%s.%N)
fail=0
cat "$out"
echo "--- exit status $rc after $(echo "$end - $start" | bc) s"
case "$want" in
  any) ;;
  nonzero) [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || { echo "FAIL: expected a non-zero status (not a timeout), got $rc"; fail=1; } ;;
  *) [ "$rc" -eq "$want" ] || { echo "FAIL: expected status $want, got $rc"; fail=1; } ;;
esac
if [ -n "$regex" ] && ! grep -Eq -e "$regex" "$out"; then
  echo "FAIL: output does not match /$regex/"; fail=1
fi
sleep 0.2
left=$(find "$wd" -mindepth 1 2>/dev/null | head -5)
if [ -n "$left" ]; then echo "FAIL: left behind in the working directory: $left"; fail=1; fi
leftover=$(grep -lsa "BDMPI_TEST_TAG=$tag" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3)
if [ -n "$leftover" ]; then
  echo "FAIL: processes of this run are still alive:"; ps -o pid,comm -p $leftover; fail=1
  kill -9 $leftover 2>/dev/null
fi
rm -rf "$wd" "$out"
exit $fail
