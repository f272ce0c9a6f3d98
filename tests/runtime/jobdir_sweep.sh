#!/bin/bash
# jobdir_sweep.sh BDMPIEXEC PROGRAM
# A job whose launcher and guardian are killed together (kill -9 of both,
# as CTest's timeout does to a whole process tree) leaves its directory,
# spill files included, under -wd.  The next bdmpiexec with the same -wd
# must remove it and say so, and must leave alone the directories it
# cannot prove dead: one whose owner still runs, one made on another boot
# or machine (its boot id differs: a -wd shared with other hosts), one
# without an owner file.  One whose owner's pid now names another process
# (another start time) is dead.  Exit 0 pass, 1 fail.
set -u
exe=$1; prog=$2
wd=$(mktemp -d /tmp/bdmpi-sweep.XXXXXX)
out=$wd.out
tag="bdmpi-sweep-$$-$RANDOM"
trap 'kill -9 $(tagged) 2>/dev/null; rm -rf "$wd" "$out"' EXIT
tagged() { grep -lsa "BDMPI_TEST_TAG=$tag" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3; }
fail=0

env BDMPI_WD="$wd" BDMPI_TEST_TAG="$tag" setsid "$exe" -ns 4 -nr 2 "$prog" hang 1 >/dev/null 2>&1 &
launcher=$!
for i in $(seq 100); do
  [ -n "$(find "$wd" -name 'msg-*' 2>/dev/null)" ] && break
  sleep 0.1
done
d=$(ls -d "$wd"/bdmpi.$launcher.* 2>/dev/null | head -1)
[ -n "$d" ] || { echo "FAIL: no job directory $wd/bdmpi.$launcher.*"; exit 1; }
[ -n "$(find "$d" -name 'msg-*')" ] || { echo "FAIL: no spill file in $d after 10 s"; exit 1; }
grep -q "^boot " "$d/owner" && [ "$(grep -c '^pid ' "$d/owner")" = 2 ] ||
  { echo "FAIL: $d/owner does not name the launcher and its guardian:"; cat "$d/owner"; exit 1; }
# Every process of the job stopped first, then killed: none gets to clean
# up (a master told of its launcher's death removes the directory itself).
pids=$(tagged)
kill -STOP $pids 2>/dev/null
kill -9 $pids 2>/dev/null
for i in $(seq 50); do [ -z "$(tagged)" ] && break; sleep 0.1; done
wait $launcher 2>/dev/null
[ -d "$d" ] || { echo "FAIL: $d is gone although its launcher and guardian were killed (the test proves nothing)"; exit 1; }

# Directories that must stay, and one more that must go.
mk() { mkdir -m 700 "$wd/$1" && touch "$wd/$1/msg-0-1" && printf '%b' "$2" >"$wd/$1/owner"; }
boot=$(cat /proc/sys/kernel/random/boot_id)
start=$(awk '{sub(/.*\) /, ""); print $20}' /proc/$$/stat)
mk bdmpi.$$.alive1 "boot $boot\npid $$ $start\n"                 # its owner runs
mk bdmpi.99999.other1 "boot 00000000-0000-0000-0000-000000000000\npid 99999 1\n"
mkdir -m 700 "$wd/bdmpi.99998.nownr1"                             # no owner file
mk bdmpi.$$.reuse1 "boot $boot\npid $$ $((start + 1))\n"          # pid reused
touch -d '1 minute ago' "$wd"/bdmpi.*                             # older than a job takes to end

env BDMPI_WD="$wd" "$exe" -ns 2 "$prog" exit0 >"$out" 2>&1
for keep in bdmpi.$$.alive1 bdmpi.99999.other1 bdmpi.99998.nownr1; do
  [ -d "$wd/$keep" ] || { echo "FAIL: the next job removed $keep, which it cannot know to be dead"; fail=1; }
done
for gone in "$d" "$wd/bdmpi.$$.reuse1"; do
  [ -d "$gone" ] && { echo "FAIL: the next job did not remove $gone"; fail=1; }
  grep -q "removed $gone, the directory of a job whose launcher" "$out" ||
    { echo "FAIL: the next job did not say it removed $gone"; fail=1; }
done
# a directory younger than an orphaned job takes to end is not judged yet
mk bdmpi.$$.young1 "boot $boot\npid $$ $((start + 1))\n"
env BDMPI_WD="$wd" "$exe" -ns 2 "$prog" exit0 >"$out" 2>&1
[ -d "$wd/bdmpi.$$.young1" ] || { echo "FAIL: the next job removed a directory changed a moment ago"; fail=1; }
[ $fail = 1 ] && { cat "$out"; cat "$d/owner"; for p in $(awk "/^pid/{print \$2}" "$d/owner"); do ps -o pid,stat,comm,lstart -p $p; done; }
[ $fail = 0 ] && echo "PASS: jobdir_sweep"
exit $fail
