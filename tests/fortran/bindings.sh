#!/bin/bash
# bindings.sh BINDINGS_TXT LIBBDMPI_F: every routine src/fortran/gen_fortran.py
# says it bound has its function in the library (gfortran's name: lower case
# and one trailing underscore) and its module procedure in mpi_f08, the
# routines every Fortran MPI program needs are among them, the predefined
# procedures and the descriptor forms (mpi_f08's and the module mpi's) are
# there too, and no routine
# of mpi.h is left unbound ("not bound" lines: each names why).  The C-only
# conversions (c-only lines) have no Fortran binding by the standard.
# Exit 0 pass, 1 fail.
set -u
list=$1; lib=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bdmpi-bindings.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
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
echo "$n08 routines in mpi_f08 ($nd with descriptor buffers), $np predefined procedures"
echo "$n routines bound; C-only: $(grep -c '^c-only' "$list"); not bound: $(grep -c '^not bound' "$list") (see $list)"
exit $fail
