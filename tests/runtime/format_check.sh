#!/bin/bash
# Fails when a tracked C source or header differs from what .clang-format
# makes of it; prints the files and how to fix them.  Exit 77 without
# clang-format or outside a git checkout.
root=$1
command -v clang-format >/dev/null || { echo "clang-format not installed"; exit 77; }
cd "$root" && git rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "not a git checkout"; exit 77; }
# One clang-format per file, as many at once as there are CPUs.
mapfile -t bad < <(git ls-files -z '*.c' '*.h' '*.cc' '*.cpp' |
  xargs -0 -r -n 8 -P "$(nproc)" sh -c \
    'for f; do [ -f "$f" ] || continue; clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || echo "$f"; done' sh)
if [ ${#bad[@]} -gt 0 ]; then
  printf 'not formatted: %s\n' "${bad[@]}"
  echo "fix with: clang-format -i ${bad[*]}"
  exit 1
fi
echo "all sources formatted"
