#!/bin/bash
# man.sh BUILD_DIR SOURCE_DIR: the man pages (cmake/BDMPIMan.cmake) are valid
# roff that man renders without warnings, say what the programs' --help
# says (every option of the options table in bdmpiexec(1), every query of
# the wrapper in bdmpicc(1), every BDMPI_ call of bdmpi.h in bdmpi(3)), and
# the pages of the other wrappers and of each BDMPI_ call lead to them.
# Exit 0 pass, 1 fail, 77 skip (no groff/man).
set -u
build=$1; src=$2
command -v groff > /dev/null && command -v man > /dev/null || { echo "SKIP: no groff or man"; exit 77; }
m=$build/man
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; return 1; fi; }
render() { MANWIDTH=200 man -M "$m" -P cat "$@" 2>&1; }
for page in "$m"/man1/bdmpiexec.1 "$m"/man1/bdmpicc.1 "$m"/man3/bdmpi.3; do
  warn=$(groff -man -ww -z "$page" 2>&1)
  check "$(basename "$page") is roff without warnings" '[ -z "$warn" ]' || echo "$warn"
done
page=$(render 1 bdmpiexec)
missing=""
for o in $("$build/bin/bdmpiexec" --help-md | grep -o '^| `-[a-z-]*`' | tr -d '|` '); do
  grep -q -- "^ *$o\b" <<<"$page" || missing="$missing $o"
done
check "bdmpiexec(1) has every option of the table" '[ -z "$missing" ]' || echo "missing:$missing"
check "and its synopsis is the usage line" '[[ "$page" == *"bdmpiexec [-n N | -ns N]"* ]]'
page=$(render 1 bdmpicc)
missing=""
for q in $("$build/bin/bdmpicc" -h | grep -o -- '--showme:[a-z]*\|-compile-info\|-link-info' | sort -u); do
  grep -q -- "$q" <<<"$page" || missing="$missing $q"
done
check "bdmpicc(1) has every query of bdmpicc -h" '[ -z "$missing" ]' || echo "missing:$missing"
page=$(render 3 bdmpi)
missing=""
for f in $(grep -o '^int BDMPI_[A-Za-z_]*' "$src/include/bdmpi.h" | sed 's/^int //'); do
  grep -q "$f(" <<<"$page" || missing="$missing $f"
  [[ "$(render 3 "$f")" == *"BDMPI(3)"* ]] || missing="$missing $f.3"
done
check "bdmpi(3) has every BDMPI_ call of bdmpi.h, each with its own name" '[ -z "$missing" ]' || echo "missing:$missing"
for w in bdmpicxx bdmpifort; do
  [ -x "$build/bin/$w" ] || continue
  check "man $w shows bdmpicc(1)" '[[ "$(render 1 $w)" == *"BDMPICC(1)"* ]]'
done
exit $fail
