#!/bin/bash
# readme_options.sh BDMPIEXEC README: the README's Options section cannot
# drift from the options table: it links to docs/options.md (generated from
# the table, test docs.options_current), keeps no table of its own, and
# every option it names is in the table.  Exit 0 pass, 1 fail.
set -u
exe=$1; readme=$2
sec=$(awk '/^## Options/ {on = 1; next} /^## / {on = 0} on' "$readme")
[ -n "$sec" ] || { echo "FAIL: no '## Options' section in $readme"; exit 1; }
fail=0
grep -q '(docs/options.md)' <<<"$sec" || { echo "FAIL: no link to docs/options.md"; fail=1; }
if grep -q '^|' <<<"$sec"; then
  echo "FAIL: the section has a table of its own (docs/options.md is the table)"; fail=1
fi
table=$("$exe" --help-md)
for o in $(grep -o '`-[a-z][a-z-]*`' <<<"$sec" | tr -d '`' | sort -u); do
  [ "$o" = -h ] && continue
  # The first column holds the option and its alias: | `-ns`, `-ppn` |
  grep -q "^| \(\`-[a-z-]*\`, \)\?\`$o\`[,| ]" <<<"$table" || { echo "FAIL: the README names $o, which is not an option"; fail=1; }
done
[ $fail = 0 ] && echo "PASS readme_options"
exit $fail
