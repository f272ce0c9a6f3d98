#!/bin/bash
# ksm.sh BDMPIEXEC PROGRAM: identical resident memory merged by the kernel
# (issue 17, -mem-share on).  4 ranks each hold the same 16 MiB table and
# 4 MiB of their own, all fitting in the budget; tests/runtime/dedup_table.c
# (mode ksm) waits until KSM has merged the tables and prints the ranks'
# Pss_Anon sum before and after.  Passes when the footprint dropped by at
# least half of the 3 redundant tables, MEM_KSM (--stats) is nonzero, and
# the data is right after every rank changed its own copy (copy on write of
# merged pages).  KSM's settings are global: the test turns ksmd on with a
# fast scan rate for its run and puts back what it found; only processes
# that asked for merging are scanned.  Skips (77) without root, without KSM
# in the kernel, or where the ranks' memory cannot be made mergeable.
set -u
exe=$1; prog=$2
k=/sys/kernel/mm/ksm
[ "$(id -u)" = 0 ] || { echo "SKIP: not root (KSM is switched in $k)"; exit 77; }
[ -w "$k/run" ] || { echo "SKIP: this kernel has no KSM ($k/run)"; exit 77; }
old_run=$(cat "$k/run"); old_scan=$(cat "$k/pages_to_scan"); old_sleep=$(cat "$k/sleep_millisecs")
restore() {
  echo "$old_scan" > "$k/pages_to_scan"; echo "$old_sleep" > "$k/sleep_millisecs"
  echo "$old_run" > "$k/run"
}
trap restore EXIT
echo 1 > "$k/run" || { echo "SKIP: cannot start ksmd"; exit 77; }
echo 4000 > "$k/pages_to_scan"; echo 20 > "$k/sleep_millisecs"
tab=16; own=4; ns=4
out=$("$exe" -ns $ns -nr 1 -mem 512M -mem-share on --stats "$prog" $tab $own ksm 2>&1); rc=$?
echo "$out"
grep -q "^SKIP ksm" <<<"$out" && exit 77
fail=0
[ $rc = 0 ] && grep -q "^PASS dedup_table" <<<"$out" || { echo "FAIL: the run failed"; fail=1; }
read -r before after merged < <(awk '$1 == "KSM" {print $3, $5, $7}' <<<"$out")
want=$(( (ns - 1) * tab * 1024 / 2 ))
[ -n "${before:-}" ] && [ $((before - after)) -ge $want ] ||
  { echo "FAIL: the ranks' Pss_Anon fell by $(( ${before:-0} - ${after:-0} )) kB (at least $want kB wanted)"; fail=1; }
ksm=$(awk '$1 == "MEM_KSM" {print $2}' <<<"$out")
[ -n "$ksm" ] && [ "$ksm" -gt 0 ] || { echo "FAIL: MEM_KSM ${ksm:-missing}"; fail=1; }
exit $fail
