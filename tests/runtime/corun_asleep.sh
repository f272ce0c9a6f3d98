#!/bin/bash
# corun_asleep.sh BDMPIEXEC PROGRAM: a rank asleep outside MPI waiting for
# the rank whose free run slot is kept from it for memory gets its slot
# lent, as when no slot is free (issue 13, session 16).  Runs
# tests/runtime/corun_asleep.c (2 ranks, -nr 2, 3.5 MiB each under -mem 5M)
# under a 60 s limit and checks that the slot was kept (CORUN_HELD) and
# lent (LENDS).  Then 3 MiB each, which leaves room for more than half of
# the other's (session 17): the other runs beside the sleeper with its
# grants capped (CORUN_CAPPED), and must not wait for ever for memory the
# sleeper's turn was expected to load (memacct.c reserved_for_elders).
# Exit 0 pass, 1 fail.
set -u
exe=$1; prog=$2
wd=$(mktemp -d /tmp/bdmpi-wd.XXXXXX)
out=$wd.out
fail=0
stat() { awk -v k="$1" '$1 == k {print $2}' "$out"; }
for kib in 3584 3072; do
  BDMPI_WD="$wd" timeout -k 5 60 "$exe" -ns 2 -nr 2 -mem 5M -mem-strategy arlw -sbpage 64K \
    -mem-threshold 256K -lend-asleep 100 --stats "$prog" $kib > "$out" 2>&1
  rc=$?
  echo "$kib KiB: exit $rc, CORUN_HELD $(stat CORUN_HELD), LENDS $(stat LENDS), CORUN_CAPPED $(stat CORUN_CAPPED)"
  if [ $rc -ne 0 ] || ! grep -q "^PASS corun_asleep" "$out"; then
    cat "$out"; echo "FAIL: the run failed or hung (exit $rc)"; fail=1
  elif [ $kib = 3584 ]; then
    [ "$(stat CORUN_HELD)" -ge 1 ] || { echo "FAIL: no slot was kept free: nothing tested"; fail=1; }
    [ "$(stat LENDS)" -ge 1 ] || { echo "FAIL: no slot was lent"; fail=1; }
  else
    [ "$(stat CORUN_CAPPED)" -ge 1 ] || { echo "FAIL: no rank ran with a cap: nothing tested"; fail=1; }
  fi
done
[ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ] || { echo "FAIL: files left in $wd"; fail=1; }
rm -rf "$wd" "$out"
exit $fail
