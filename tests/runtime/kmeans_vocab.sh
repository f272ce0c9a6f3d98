#!/bin/bash
# kmeans_vocab.sh BDMPIEXEC KMEANS CHECK_PY REFERENCE INPUT [K-means args...]
# Issue 17's replicated-data application: K-means with a vocabulary every
# rank holds in full (kmeans -V 4: 4 MiB per rank, 4 ranks) under a budget
# that forces the copies out (-mem 10M).  Run with -mem-dedup on and off:
# both must give the reference's answers; with dedup on the manager must
# store every copy after the first by reference (MEM_DEDUP) and write that
# much less (MEM_WRITTEN).  Two ranks unloaded at the same moment may both
# write their copy (neither is indexed yet: src/mem/mem_dedup.c), which
# happens since the ranks' memory outside the manager is measured at more
# stops (session 24: MEM_DEDUP 8 of 12 MiB, two copies written), so one
# copy more than the first may be written.
set -u
exe=$1 prog=$2 check=$3 ref=$4 input=$5; shift 5
MiB=1048576; ns=4; vocab=4
wd=$(mktemp -d "${TMPDIR:-/tmp}/bdmpi-kv.XXXXXX")
trap 'rm -rf "$wd" "$wd".*' EXIT
stat() { awk -v k="$1" '$1 == k {print $2}' "$2"; }
fail=0
for d in on off; do
  BDMPI_WD="$wd" "$exe" -ns $ns -nr 1 -mem 10M -mem-strategy arlw -mem-dedup $d --stats \
    "$prog" "$@" -V $vocab "$input" > "$wd.$d" 2> "$wd.$d.err"
  rc=$?
  echo "== -mem-dedup $d: exit $rc, MEM_WRITTEN $(stat MEM_WRITTEN "$wd.$d.err") MEM_DEDUP $(stat MEM_DEDUP "$wd.$d.err")"
  if [ $rc -ne 0 ] || ! python3 "$check" kmeans "$ref" "$wd.$d" --rtol 0; then
    cat "$wd.$d" "$wd.$d.err"; echo "FAIL: run with -mem-dedup $d"; fail=1
  fi
done
[ $fail = 0 ] || exit 1
# Without dedup every copy the budget forced out is written; with it, all
# but the first two are stored by reference (a quarter of a copy of slack
# for sbpages a rank's own data shares an sbpage with).
w_on=$(stat MEM_WRITTEN "$wd.on.err"); w_off=$(stat MEM_WRITTEN "$wd.off.err")
d=$(stat MEM_DEDUP "$wd.on.err")
copy=$((vocab * MiB))
if [ -z "$w_off" ] || [ "$w_off" -lt $((2 * copy)) ]; then
  echo "FAIL: without dedup only ${w_off:-?} bytes were written: the budget did not force two copies out"; fail=1
else
  least=$(( w_off - 2 * copy - copy / 4 ))
  [ -n "$d" ] && [ "$d" -ge $least ] || { echo "FAIL: MEM_DEDUP ${d:-missing}, at least $least expected"; fail=1; }
  [ -n "$w_on" ] && [ $((w_off - w_on)) -ge $least ] ||
    { echo "FAIL: MEM_WRITTEN with dedup ${w_on:-?} is not at least $least below ${w_off} without"; fail=1; }
fi
[ "$(stat MEM_DEDUP "$wd.off.err")" = 0 ] || { echo "FAIL: MEM_DEDUP nonzero with -mem-dedup off"; fail=1; }
[ -z "$(find "$wd" -mindepth 1 2>/dev/null)" ] || { echo "FAIL: files left in $wd:"; find "$wd"; fail=1; }
[ $fail = 0 ] && echo "PASS kmeans_vocab"
exit $fail
