#!/bin/bash
# Build the Fortran test programs with MPICH's mpif90 and run each with its
# mpiexec at several process counts: proof that they test MPI, not BDMPI.
#   tests/fortran/run-mpich.sh f_p2p f_coll     # these (default: every f_*)
# Environment: NPS (default "1 3"), MPIF90 (default mpif90.mpich), MPIEXEC
# (default mpiexec.mpich), TIMEOUT (seconds per run, default 60).
# Prints one line per run and "N passed, N failed, N skipped" (a program that
# exits 77 says this MPI cannot run it here, as in CTest); exits 1 if any
# failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
NPS=${NPS:-"1 3"}
MPIF90=${MPIF90:-mpif90.mpich}
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
TIMEOUT=${TIMEOUT:-60}
export HYDRA_LAUNCHER=${HYDRA_LAUNCHER:-fork}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bdmpi-mpich-fortran.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for f in "$here"/f_*.f90 "$here"/f_*.f; do names+=("$(basename "${f%.*}")"); done
fi
pass=0; fail=0; skip=0
for n in "${names[@]}"; do
  src=$here/$n.f90; [ -f "$src" ] || src=$here/$n.f
  mkdir -p "$tmp/$n"
  if ! (cd "$tmp/$n" && $MPIF90 -O1 -o "$tmp/$n/prog" "$src" > build.log 2>&1); then
    # Declared in its modules but not in its library (Debian's MPICH 4.0.2
    # and the large-count routines): this MPI cannot run the program.
    miss=$(grep -o "undefined reference to \`mpi_[a-z0-9_]*_c_'" "$tmp/$n/build.log" | sort -u)
    if [ -n "$miss" ] && ! grep -v -e "undefined reference to \`mpi_[a-z0-9_]*_c_'" \
         -e "in function" -e "ld returned" "$tmp/$n/build.log" | grep -q .; then
      echo "SKIP $n (this MPI's library lacks $(echo "$miss" | wc -l) large-count routines its modules declare, e.g. $(echo "$miss" | head -1 | cut -d'`' -f2 | tr -d "'"))"
      skip=$((skip + 1)); continue
    fi
    echo "FAIL $n (compile error)"; sed 's/^/    /' "$tmp/$n/build.log"; fail=$((fail + 1)); continue
  fi
  for np in $NPS; do
    timeout -k 5 "$TIMEOUT" $MPIEXEC -n "$np" "$tmp/$n/prog" > "$tmp/$n/$np.log" 2>&1
    rc=$?
    if [ $rc -eq 0 ] && grep -q "PASS $n on $np" "$tmp/$n/$np.log"; then
      echo "PASS $n np=$np"; pass=$((pass + 1))
    elif [ $rc -eq 77 ] && grep -q "^SKIP $n" "$tmp/$n/$np.log"; then
      echo "SKIP $n np=$np ($(grep -m1 "^SKIP $n" "$tmp/$n/$np.log" | cut -c1-100))"; skip=$((skip + 1))
    else
      echo "FAIL $n np=$np (rc=$rc)"; tail -n 20 "$tmp/$n/$np.log" | sed 's/^/    /'; fail=$((fail + 1))
    fi
  done
done
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
