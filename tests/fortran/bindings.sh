#!/bin/bash
# bindings.sh BINDINGS_TXT LIBBDMPI_F: every routine src/fortran/gen_fortran.py
# says it bound has its function in the library (gfortran's name: lower case
# and one trailing underscore) and its module procedure in mpi_f08, the
# routines every Fortran MPI program needs are among them, the predefined
# procedures and the descriptor forms (mpi_f08's and the module mpi's) are
# there too, and no routine
# of mpi.h is left unbound ("not bound" lines: each names why).  The C-only
# conversions (c-only lines) have no Fortran binding by the standard.
# With CC INCDIR MPIF_H MPI_F90 MPI_F08_F90 also: every integer constant of
# mpi.h and bdmpi.h (each #define the C compiler evaluates to an integer,
# whatever its spelling: hex, suffixes, casts, other constants) has its C
# value in mpif.h, in the module mpi and in mpi_f08, unless bindings.txt
# says why it is not a Fortran PARAMETER (a sentinel, say).
# Exit 0 pass, 1 fail.
set -u
list=$1; lib=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bdmpi-bindings.XXXXXX") || exit 1
[ -n "${KEEP:-}" ] || trap 'rm -rf "$tmp"' EXIT
nm -g --defined-only "$lib" | awk 'NF >= 3 {print $3}' | sort -u > "$tmp/syms"
fail=0
# missing WHAT: the names of stdin that are not symbols of the library.
missing() {
  sort -u > "$tmp/want"
  comm -23 "$tmp/want" "$tmp/syms" | sed "s/^/FAIL: no $1 /"
  [ -z "$(comm -23 "$tmp/want" "$tmp/syms")" ]
}
for f in MPI_Init MPI_Finalize MPI_Comm_rank MPI_Send MPI_Recv MPI_Allreduce MPI_Wtime \
         MPI_Type_create_struct MPI_Comm_split MPI_Waitall MPI_Comm_create_keyval MPI_Alloc_mem \
         MPI_Grequest_start MPI_Register_datarep MPI_Comm_spawn MPI_Status_f2f08; do
  grep -q "^bound $f\b" "$list" || { echo "FAIL: $f is not bound"; fail=1; }
done
awk '/^bound/ {print tolower($2) "_"}' "$list" | missing "function for" || fail=1
n=$(grep -c '^bound' "$list")
[ "$n" -gt 0 ] || { echo "FAIL: nothing bound"; fail=1; }
# mpi_f08: a module procedure for each bound routine it does not leave out.
awk 'NR == FNR {if (/^not in mpi_f08 /) {sub(":", "", $4); skip[$4] = 1}; next}
     /^bound/ && !($2 in skip) {print "__mpi_f08_MOD_" tolower($2)}' "$list" "$list" > "$tmp/f08"
n08=$(wc -l < "$tmp/f08")
missing "mpi_f08 procedure" < "$tmp/f08" || fail=1
np=$(grep -c '^procedure' "$list")
awk '/^procedure/ {print tolower($2) "_"}' "$list" | missing "predefined procedure" || fail=1
nd=$(grep -c '^f08 descriptor ' "$list")
awk '/^f08 descriptor / {print $4; print $5}' "$list" | missing "descriptor form" || fail=1
if grep -q '^not bound' "$list"; then
  echo "FAIL: routines of mpi.h without a Fortran binding:"
  grep '^not bound' "$list" | sed 's/^/  /'
  fail=1
fi
if [ $# -ge 7 ]; then
  cc=$3; incdir=$4; mpif=$5; f90=$6; f08=$7
  # The names, read without the generator's parser: #define NAME (not NAME().
  sed -nE 's/^[[:space:]]*#[[:space:]]*define[[:space:]]+((MPI|BDMPI)_[A-Za-z0-9_]+)([[:space:]].*|$)/\1/p' \
    "$incdir/mpi.h" "$incdir/bdmpi.h" | sort -u > "$tmp/names"
  # Each becomes a line of C printing its value if it is an integer; a
  # name the compiler refuses (not an expression) is left out and tried
  # again without it.
  for attempt in $(seq 20); do
    {
      echo '#include <mpi.h>'
      echo '#include <stdio.h>'
      echo '#define INT_P(x) _Generic((x), char: 1, signed char: 1, unsigned char: 1, short: 1, \'
      echo '    unsigned short: 1, int: 1, unsigned: 1, long: 1, unsigned long: 1, long long: 1, \'
      echo '    unsigned long long: 1, default: 0)'
      echo '#define INT_V(x) _Generic((x), char: (long long)(x), signed char: (long long)(x), \'
      echo '    unsigned char: (long long)(x), short: (long long)(x), unsigned short: (long long)(x), \'
      echo '    int: (long long)(x), unsigned: (long long)(x), long: (long long)(x), \'
      echo '    unsigned long: (long long)(x), long long: (long long)(x), \'
      echo '    unsigned long long: (long long)(x), default: 0LL)'
      echo '#define SHOW(x) if (INT_P(x)) printf("%s %lld\n", #x, INT_V(x));'
      echo 'int main(void) {'
      awk '{print "SHOW(" $1 ")"}' "$tmp/names"
      echo 'return 0; }'
    } > "$tmp/consts.c"
    if "$cc" -w -I"$incdir" -o "$tmp/consts" "$tmp/consts.c" 2> "$tmp/cc.log"; then break; fi
    # Drop the lines the compiler named (line L of consts.c is name L-12).
    # (An error inside the macros is named again at the line using them.)
    sed -nE 's/^[^:]*consts\.c:([0-9]+):[0-9]+: (error|note: in expansion of macro).*/\1/p' "$tmp/cc.log" |
      awk '$1 >= 13' | sort -un > "$tmp/bad"
    [ -s "$tmp/bad" ] || { echo "FAIL: the constants' C program does not compile:"; head -20 "$tmp/cc.log"; fail=1; break; }
    awk 'NR == FNR {bad[$1 - 12] = 1; next} !(FNR in bad)' "$tmp/bad" "$tmp/names" > "$tmp/names2"
    mv "$tmp/names2" "$tmp/names"
  done
  if [ -x "$tmp/consts" ]; then
    "$tmp/consts" | sort > "$tmp/cvals"
    # The generator's reasons for a constant that is no PARAMETER.
    sed -nE 's/^(not a parameter|c-only constant) ([A-Z0-9_]+):.*/\2/p' "$list" | sort -u > "$tmp/excused"
    sed -nE 's/^[[:space:]]*PARAMETER *\(([A-Z0-9_]+)=(-?[0-9]+)\)[[:space:]]*$/\1 \2/p' "$mpif" | sort > "$tmp/fh"
    sed -nE 's/^[[:space:]]*PARAMETER *\(([A-Z0-9_]+)=(-?[0-9]+)\)[[:space:]]*$/\1 \2/p' "$f90" | sort > "$tmp/f90"
    sed -nE 's/^.*PARAMETER :: ([A-Z0-9_]+) = ([A-Za-z_]+\()?(-?[0-9]+)\)?[[:space:]]*$/\1 \3/p' "$f08" | sort > "$tmp/f08c"
    nc=$(wc -l < "$tmp/cvals")
    for where in "mpif.h:$tmp/fh" "module mpi:$tmp/f90" "mpi_f08:$tmp/f08c"; do
      what=${where%%:*}; file=${where#*:}
      bad=$(awk -v what="$what" 'FILENAME == ARGV[1] {ex[$1] = 1; next}
                FILENAME == ARGV[2] {f[$1] = $2; next}
                ($1 in ex) {next}
                !($1 in f) {print "FAIL: " $1 " (" $2 " in C) is not a constant of " what; next}
                f[$1] != $2 {print "FAIL: " $1 " is " f[$1] " in " what ", " $2 " in C"}' \
                "$tmp/excused" "$file" "$tmp/cvals")
      [ -z "$bad" ] || { echo "$bad"; fail=1; }
    done
    [ "$nc" -gt 200 ] || { echo "FAIL: only $nc integer constants found in mpi.h"; fail=1; }
    echo "$nc integer constants of mpi.h checked in mpif.h, mpi and mpi_f08 ($(wc -l < "$tmp/excused") no PARAMETER by design)"
  fi
fi
echo "$n08 routines in mpi_f08 ($nd with descriptor buffers), $np predefined procedures"
echo "$n routines bound; C-only: $(grep -c '^c-only' "$list"); not bound: $(grep -c '^not bound' "$list") (see $list)"
exit $fail
