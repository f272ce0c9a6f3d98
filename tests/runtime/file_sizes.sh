#!/bin/bash
# file_sizes.sh ROOT [MAX]
# Fails when a file under src/ is longer than MAX lines (1200 by default),
# naming each with its length: a file that size holds more than one concern
# and should be split along them.  Exit 0 pass, 1 fail.
set -u
root=$1
max=${2:-1200}
cd "$root" || exit 1
long=$(find src -type f -print0 | xargs -0 wc -l | awk -v max="$max" '$2 != "total" && $1 > max' |
       sort -rn)
if [ -n "$long" ]; then
  echo "FAIL: files under src/ longer than $max lines:"
  awk '{printf "  %s: %d lines\n", $2, $1}' <<<"$long"
  exit 1
fi
echo "PASS: no file under src/ is longer than $max lines"
