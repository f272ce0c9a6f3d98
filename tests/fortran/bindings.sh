#!/bin/bash
# bindings.sh BINDINGS_TXT LIBBDMPI_F: every routine src/fortran/gen_fortran.py
# says it bound has its function in the library (gfortran's name: lower case
# and one trailing underscore) and its module procedure in mpi_f08, the
# routines every Fortran MPI program needs are among them, the predefined
# procedures and mpi_f08's descriptor forms are there too, and no routine
# of mpi.h is left unbound ("not bound" lines: each names why).  The C-only
# conversions (c-only lines) have no Fortran binding by the standard.
# Exit 0 pass, 1 fail.
set -u
list=$1; lib=$2
syms=$(nm -g --defined-only "$lib" | awk '{print $3}')
fail=0
for f in MPI_Init MPI_Finalize MPI_Comm_rank MPI_Send MPI_Recv MPI_Allreduce MPI_Wtime \
         MPI_Type_create_struct MPI_Comm_split MPI_Waitall MPI_Comm_create_keyval MPI_Alloc_mem \
         MPI_Grequest_start MPI_Register_datarep MPI_Comm_spawn MPI_Status_f2f08; do
  grep -q "^bound $f\b" "$list" || { echo "FAIL: $f is not bound"; fail=1; }
done
n=0
for f in $(awk '/^bound/ {print $2}' "$list"); do
  n=$((n + 1))
  grep -qx "$(echo "$f" | tr A-Z a-z)_" <<<"$syms" || { echo "FAIL: no symbol for $f"; fail=1; }
done
[ "$n" -gt 0 ] || { echo "FAIL: nothing bound"; fail=1; }
# mpi_f08: a module procedure for each bound routine it does not leave out.
n08=0
for f in $(awk '/^bound/ {print $2}' "$list"); do
  grep -q "^not in mpi_f08 $f:" "$list" && continue
  n08=$((n08 + 1))
  grep -qx "__mpi_f08_MOD_$(echo "$f" | tr A-Z a-z)" <<<"$syms" || { echo "FAIL: no mpi_f08 procedure for $f"; fail=1; }
done
np=0
for f in $(awk '/^procedure/ {print $2}' "$list"); do
  np=$((np + 1))
  grep -qx "$(echo "$f" | tr A-Z a-z)_" <<<"$syms" || { echo "FAIL: no predefined procedure $f"; fail=1; }
done
nd=0
while read -r _ _ f sym _; do
  nd=$((nd + 1))
  grep -qx "$sym" <<<"$syms" || { echo "FAIL: no descriptor form $sym of $f"; fail=1; }
done < <(grep '^f08 descriptor ' "$list")
if grep -q '^not bound' "$list"; then
  echo "FAIL: routines of mpi.h without a Fortran binding:"
  grep '^not bound' "$list" | sed 's/^/  /'
  fail=1
fi
echo "$n08 routines in mpi_f08 ($nd with descriptor buffers), $np predefined procedures"
echo "$n routines bound; C-only: $(grep -c '^c-only' "$list"); not bound: $(grep -c '^not bound' "$list") (see $list)"
exit $fail
