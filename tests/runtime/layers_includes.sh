#!/bin/bash
# layers_includes.sh ROOT
# Checks the include rules of the source layout (docs/design.md): each
# room of src/ includes only its own headers and those of the rooms it is
# allowed to use.  Reads every `#include "..."` line of the C sources and
# headers under src/, finds the header (next to the including file first,
# then by name under src/ and include/, as the build's include paths do)
# and prints each include that breaks the rules as file:line: include.
# Exit 0 pass, 1 fail.
set -u
root=$1
cd "$root" || exit 1

# room -> rooms it may include from ("public" is include/).
declare -A may=(
  [common]="common public"
  [mem]="mem common public"
  [core]="core common mem public"
  [objects]="objects core common mem public"
  [mpi]="mpi objects core common mem public"
  # MPI-IO sits beside mpi/, on the same rooms.
  [io]="io objects core common mem public"
  # The master includes mpi.h for the handle and datatype constants.
  [master]="master common public"
  [launcher]="launcher common"
  # The Fortran bindings are a client of the public C API.
  [fortran]="fortran public"
)

# room_of PATH: the room a file of the tree belongs to ("" if none).
room_of() {
  case "$1" in
    include/*) echo public ;;
    src/common/*) echo common ;;
    src/mem/*) echo mem ;;
    src/lib/core/*) echo core ;;
    src/lib/objects/*) echo objects ;;
    src/lib/mpi/*) echo mpi ;;
    src/lib/io/*) echo io ;;
    src/master/*) echo master ;;
    src/launcher/*) echo launcher ;;
    src/fortran/*) echo fortran ;;
    *) echo "" ;;
  esac
}

tree=$(find src include -type f \( -name '*.h' -o -name '*.c' \) | sort)
bad=0
report() {
  echo "$1"
  bad=$((bad + 1))
}

while IFS= read -r f; do
  room=$(room_of "$f")
  if [ -z "$room" ]; then
    report "$f: in no room of the layout (tests/runtime/layers_includes.sh lists them)"
    continue
  fi
  while IFS=: read -r line text; do
    name=$(sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1/' <<<"$text")
    if [ -f "$(dirname "$f")/$name" ]; then
      hdr=$(realpath -m --relative-to=. "$(dirname "$f")/$name")
    else
      hdr=$(grep -E "(^|/)${name//./\\.}\$" <<<"$tree")
      if [ -z "$hdr" ]; then
        report "$f:$line: #include \"$name\": no such header under src/ or include/"
        continue
      fi
      if [ "$(wc -l <<<"$hdr")" -gt 1 ]; then
        report "$f:$line: #include \"$name\": ambiguous:" $hdr
        continue
      fi
    fi
    to=$(room_of "$hdr")
    case " ${may[$room]} " in
      *" $to "*) ;;
      *) report "$f:$line: #include \"$name\" ($room may not include ${to:-$hdr}: $hdr)" ;;
    esac
  done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f")
done < <(grep '^src/' <<<"$tree")

if [ $bad -gt 0 ]; then
  echo "FAIL: $bad includes break the layering (docs/design.md, \"Layers\")"
  exit 1
fi
echo "PASS: every include of src/ follows the layering"
