#!/bin/bash
# Build every tests/mpi/*.c with MPICH's mpicc and run each one with
# mpiexec at several process counts.
#
#   tests/mpi/run-mpich.sh              # all tests, NPS="1 2 3 8"
#   NPS="1 4" tests/mpi/run-mpich.sh    # other process counts
#   tests/mpi/run-mpich.sh p2p_ring coll_bcast   # only these tests
#   BINDIR=D tests/mpi/run-mpich.sh --build-only # compile into D, run nothing
#   BINDIR=D NPS=3 tests/mpi/run-mpich.sh --no-build  # run what D holds
#
# The programs compile in parallel (JOBS, default nproc); they run one at a
# time.  CTest compiles once (mpich.build) and runs the one-process runs
# alongside other tests (mpich.np1) and the three-process runs alone
# (mpich.conformance: MPICH polls busily and would starve other tests).
# Environment: NPS (process counts), MPICC (default mpicc), MPIEXEC (default
# mpiexec), TIMEOUT (seconds per run, default 60), CFLAGS_EXTRA, BINDIR
# (where the programs go; a temporary directory by default), JOBS.
# Prints one line per run and "N passed, N failed, N skipped" (a test that
# exits 77 says this MPI cannot run it here); exits 1 if any failed.
set -u

here=$(cd "$(dirname "$0")" && pwd)
NPS=${NPS:-"1 2 3 8"}
MPICC=${MPICC:-mpicc}
MPIEXEC=${MPIEXEC:-mpiexec}
TIMEOUT=${TIMEOUT:-60}
export HYDRA_LAUNCHER=${HYDRA_LAUNCHER:-fork}

mode=all
case "${1:-}" in
    --build-only) mode=build; shift ;;
    --no-build) mode=run; shift ;;
esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bdmpi-mpich-tests.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
bin=${BINDIR:-$tmp}
mkdir -p "$bin" || exit 2
JOBS=${JOBS:-$(nproc)}

# Test order: TESTS first, then any other *.c (so nothing is forgotten).
names=()
if [ $# -gt 0 ]; then
    names=("$@")
else
    if [ -f "$here/TESTS" ]; then
        while read -r n _; do
            case "$n" in ''|'#'*) continue ;; esac
            names+=("$n")
        done < "$here/TESTS"
    fi
    for f in "$here"/*.c; do
        n=$(basename "$f" .c)
        case " ${names[*]} " in *" $n "*) ;; *) names+=("$n") ;; esac
    done
fi

# MPICH keeps C's conversions of the mpi_f08 status (MPI_Status_c2f08...)
# in libmpichfort: link it where there is one.
fortlib=""
if [ $mode != run ]; then
    echo 'int main(void) { return 0; }' > "$tmp/probe.c"
    $MPICC -o "$tmp/probe" "$tmp/probe.c" -lmpichfort > /dev/null 2>&1 && fortlib=-lmpichfort
fi

pass=0
fail=0
skip=0
# Compile phase: JOBS at a time; each program's compiler output goes to
# $bin/NAME.build, and a program that failed to compile has no binary.
if [ $mode != run ]; then
    for n in "${names[@]}"; do
        src="$here/$n.c"
        [ -f "$src" ] || continue
        rm -f "$bin/$n"
        $MPICC -O1 -Wall -Wextra ${CFLAGS_EXTRA:-} -I"$here" -o "$bin/$n" \
            "$src" -lm $fortlib > "$bin/$n.build" 2>&1 &
        while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
    done
    wait
fi
for n in "${names[@]}"; do
    src="$here/$n.c"
    if [ ! -f "$src" ]; then
        echo "FAIL $n (no such file $src)"
        fail=$((fail + 1))
        continue
    fi
    if [ ! -x "$bin/$n" ]; then
        echo "FAIL $n (compile error)"
        sed 's/^/    /' "$bin/$n.build" 2>/dev/null
        fail=$((fail + 1))
        continue
    fi
    if [ $mode != run ] && [ -s "$bin/$n.build" ]; then
        echo "WARN $n (compiler output)"
        sed 's/^/    /' "$bin/$n.build"
    fi
    [ $mode = build ] && continue
    for np in $NPS; do
        start=$(date +%s%N)
        timeout -k 5 "$TIMEOUT" $MPIEXEC -n "$np" "$bin/$n" > "$tmp/$n.$np.log" 2>&1
        rc=$?
        ms=$(( ($(date +%s%N) - start) / 1000000 ))
        secs=$(printf '%d.%02d' $((ms / 1000)) $(((ms % 1000) / 10)))
        if [ $rc -eq 0 ]; then
            printf 'PASS %-22s np=%-3s %6ss\n' "$n" "$np" "$secs"
            pass=$((pass + 1))
        elif [ $rc -eq 77 ]; then
            # The program found something this MPI lacks (exit 77, as in CTest).
            printf 'SKIP %-22s np=%-3s %6ss (%s)\n' "$n" "$np" "$secs" \
                "$(grep -m1 '^SKIP' "$tmp/$n.$np.log" | cut -c1-100)"
            skip=$((skip + 1))
        else
            what="rc=$rc"
            [ $rc -eq 124 ] && what="timeout ${TIMEOUT}s"
            printf 'FAIL %-22s np=%-3s %6ss (%s)\n' "$n" "$np" "$secs" "$what"
            tail -n 20 "$tmp/$n.$np.log" | sed 's/^/    /'
            fail=$((fail + 1))
        fi
    done
done

[ $mode = build ] && { echo "built ${#names[@]} programs in $bin, $fail failed"; [ $fail -eq 0 ]; exit; }
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
