#!/bin/bash
# bindings.sh BINDINGS_TXT LIBBDMPI_F: every routine src/fortran/gen_fortran.py
# says it bound has its function in the library (gfortran's name: lower case
# and one trailing underscore), and the routines every Fortran MPI program
# needs are among them.  Exit 0 pass, 1 fail.
set -u
list=$1; lib=$2
syms=$(nm -g --defined-only "$lib" | awk '{print $3}')
fail=0
for f in MPI_Init MPI_Finalize MPI_Comm_rank MPI_Send MPI_Recv MPI_Allreduce MPI_Wtime \
         MPI_Type_create_struct MPI_Comm_split MPI_Waitall; do
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
echo "$n08 routines in mpi_f08"
echo "$n routines bound; not bound: $(grep -c '^not bound' "$list") (see $list)"
exit $fail
