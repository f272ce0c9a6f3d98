#!/bin/bash
# Builds mpi4py into a virtual environment with BDMPI's bdmpicc and runs
# mpi4py's own test suite (test/main.py) under bdmpiexec at three shapes:
# -ns 1, -ns 2 -nr 1 and -ns 4 -nr 2.  Prints, per shape, the tests run,
# passed, failed, errored and skipped (rank 0's counts; failures and errors
# of every rank count for the verdict) and the names of failing tests.
# Exits 1 if any shape has a failure or an error, ends abnormally or runs
# past its time limit.
#
#   scripts/mpi4py-suite.sh                   # with build/ (BDMPI_BUILD)
#   MPI4PY_SHAPES="-ns 2 -nr 1" scripts/mpi4py-suite.sh
#
# Environment: BDMPI_BUILD (default build/), MPI4PY_VERSION (4.1.2),
# MPI4PY_SDIST (a downloaded mpi4py-VERSION.tar.gz; otherwise pip downloads
# it from PyPI), MPI4PY_WORK (directory for the environment and logs; a
# temporary one, removed at the end, by default), MPI4PY_TIMEOUT (seconds
# per shape, 900), MPI4PY_SHAPES (shapes separated by commas),
# MPI4PY_ARGS (more arguments for test/main.py, e.g. "-e test_spawn"),
# MPI4PY_CFLAGS (compiler flags for mpi4py, "-O0 -g0").
# The CTest label mpi4py runs this; scripts/test.sh leaves it out.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BDMPI_BUILD:-$root/build}
version=${MPI4PY_VERSION:-4.1.2}
limit=${MPI4PY_TIMEOUT:-900}
IFS=',' read -r -a shapes <<<"${MPI4PY_SHAPES:--ns 1,-ns 2 -nr 1,-ns 4 -nr 2}"
python=${PYTHON:-python3}

for f in "$build/bin/bdmpicc" "$build/bin/bdmpiexec"; do
    [ -x "$f" ] || { echo "mpi4py-suite: $f not found (build BDMPI first: scripts/build.sh)" >&2; exit 2; }
done
command -v "$python" >/dev/null || { echo "mpi4py-suite: no $python" >&2; exit 77; }

if [ -n "${MPI4PY_WORK:-}" ]; then
    work=$MPI4PY_WORK
    mkdir -p "$work"
else
    work=$(mktemp -d "${TMPDIR:-/tmp}/bdmpi-mpi4py.XXXXXX") || exit 2
    trap 'rm -rf "$work"' EXIT
fi
venv=$work/venv
log=$work/build.log

echo "mpi4py-suite: building mpi4py $version in $work"
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv" >"$log" 2>&1 || { cat "$log"; exit 2; }
fi
# NumPy, so that the tests of buffers in NumPy arrays run too (about 34 of
# them, skipped "numpy" without it); where it cannot be had they skip.
if ! "$venv/bin/python" -c 'import numpy' 2>/dev/null &&
        ! "$venv/bin/pip" install numpy >>"$log" 2>&1; then
    echo "mpi4py-suite: no NumPy (pip install numpy failed): its tests will be skipped"
fi
sdist=${MPI4PY_SDIST:-}
if [ -z "$sdist" ]; then
    mkdir -p "$work/dl"
    sdist=$work/dl/mpi4py-$version.tar.gz
    if [ ! -f "$sdist" ] && ! "$venv/bin/pip" download --no-deps --no-binary mpi4py \
            "mpi4py==$version" -d "$work/dl" >>"$log" 2>&1; then
        tail -n 20 "$log"
        echo "mpi4py-suite: cannot download mpi4py $version (no network?)" >&2
        exit 77
    fi
fi
src=$work/src
if [ ! -f "$src/test/main.py" ]; then
    mkdir -p "$src" && tar -xzf "$sdist" -C "$src" --strip-components=1 || exit 2
fi
# mpi4py looks for the ULFM extensions (MPIX_) only in MPICH and Open MPI
# builds that it knows; otherwise it falls back to MPI_Allreduce and
# MPI_Iallreduce on the communicator itself, and its iagree test (one rank
# starts the agreement before a barrier, the others after it) then calls
# collectives in different orders, which MPI forbids and BDMPI reports as
# a collective mismatch.  Tell it what BDMPI's mpi.h has.
ulfm=""
for x in ERR_REVOKED ERR_PROC_FAILED ERR_PROC_FAILED_PENDING Comm_revoke Comm_is_revoked \
         Comm_agree Comm_iagree Comm_shrink Comm_ishrink Comm_get_failed Comm_ack_failed; do
    ulfm="$ulfm -DPyMPI_HAVE_MPIX_$x=1"
done
# Compiled without optimization by default: MPI.c is large, and the suite
# tests the MPI library, not mpi4py's speed.
# A work directory kept from an earlier run (MPI4PY_WORK) is used again as
# it is: the build takes long and depends only on the version and mpi.h.
have=$("$venv/bin/python" -c 'import mpi4py; print(mpi4py.__version__)' 2>/dev/null)
if [ "$have" = "$version" ]; then
    echo "mpi4py-suite: mpi4py $version is already built in $venv"
elif ! CFLAGS="${MPI4PY_CFLAGS:--O0 -g0}$ulfm" MPICC="$build/bin/bdmpicc" "$venv/bin/pip" install --force-reinstall --no-deps \
        --no-binary mpi4py "$sdist" >>"$log" 2>&1; then
    tail -n 40 "$log"
    echo "mpi4py-suite: building mpi4py with $build/bin/bdmpicc failed (log above)" >&2
    exit 1
fi

# The README's example (apps/python/hello.py) first: 8 ranks, 2 running.
if ! "$build/bin/bdmpiexec" -ns 8 -nr 2 "$venv/bin/python" "$root/apps/python/hello.py" \
        | grep -q ' right$'; then
    echo "mpi4py-suite: apps/python/hello.py did not give the right sum" >&2
    exit 1
fi
echo "mpi4py-suite: apps/python/hello.py at -ns 8 -nr 2: right"

# test_spawn's "SelfMany" classes have every rank spawn up to 6 processes
# on MPI_COMM_SELF at once: 24 at -ns 4, within the 64 spawned ranks a node
# keeps by default (-max-spawn, docs/options.md).

# Each rank's unittest output goes to a file of its own: interleaved on one
# stream, the summaries of several ranks could not be told apart.
cat >"$work/rank.py" <<'EOF'
import os
import runpy
import sys

from mpi4py import MPI

out = os.environ["MPI4PY_SUITE_OUT"]
rank = MPI.COMM_WORLD.Get_rank()
f = open(os.path.join(out, "rank%d.log" % rank), "w")
os.dup2(f.fileno(), 1)
os.dup2(f.fileno(), 2)
main = sys.argv[1]
sys.argv = sys.argv[1:]
sys.path.insert(0, os.path.dirname(main))
runpy.run_path(main, run_name="__main__")
EOF

# "Ran N tests" and "OK (skipped=S)" / "FAILED (failures=F, errors=E, skipped=S)".
count() { # file key
    grep -E '^(OK|FAILED)' "$1" | tail -n 1 | grep -oE "$2=[0-9]+" | cut -d= -f2
}

status=0
for shape in "${shapes[@]}"; do
    tag=$(echo "$shape" | tr -d ' -')
    out=$work/out-$tag
    rm -rf "$out" && mkdir -p "$out"
    start=$(date +%s)
    # shellcheck disable=SC2086
    MPI4PY_SUITE_OUT=$out timeout -k 10 "$limit" "$build/bin/bdmpiexec" $shape \
        "$venv/bin/python" "$work/rank.py" "$src/test/main.py" ${MPI4PY_ARGS:-} \
        >"$out/job.log" 2>&1
    rc=$?
    secs=$(($(date +%s) - start))
    r0=$out/rank0.log
    ran=$(grep -oE '^Ran [0-9]+' "$r0" 2>/dev/null | tail -n 1 | cut -d' ' -f2)
    fails=0 errs=0
    for f in "$out"/rank*.log; do
        [ -f "$f" ] || continue
        fails=$((fails + $(count "$f" failures || echo 0)))
        errs=$((errs + $(count "$f" errors || echo 0)))
    done
    skipped=$(count "$r0" skipped 2>/dev/null || true)
    r0f=$(count "$r0" failures 2>/dev/null || true)
    r0e=$(count "$r0" errors 2>/dev/null || true)
    ran=${ran:-0} skipped=${skipped:-0} r0f=${r0f:-0} r0e=${r0e:-0}
    passed=$((ran - r0f - r0e - skipped))
    verdict=PASS
    what=""
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        verdict=FAIL what=" (timeout after ${limit}s)"
    elif [ $rc -ne 0 ] || [ "$fails" -ne 0 ] || [ "$errs" -ne 0 ] || [ "$ran" -eq 0 ]; then
        verdict=FAIL what=" (exit status $rc)"
    fi
    printf '%s %-14s %4ss: ran %s, passed %s, failures %s, errors %s, skipped %s (all ranks: %s failures, %s errors)%s\n' \
        "$verdict" "$shape" "$secs" "$ran" "$passed" "$r0f" "$r0e" "$skipped" "$fails" "$errs" "$what"
    if [ $verdict = FAIL ]; then
        status=1
        cat "$out"/rank*.log 2>/dev/null | grep -E '^(FAIL|ERROR): ' | sort | uniq -c | sed 's/^/    /'
        grep -hE 'bdmpi|bdmprun|Error|error' "$out/job.log" | head -n 10 | sed 's/^/    job: /'
        # With MPI4PY_ARGS=-v each rank names the test it is in (a hang's).
        for f in "$out"/rank*.log; do
            [ -f "$f" ] && grep -aE ' \.\.\. ' "$f" | tail -n 1 | cut -c1-160 | sed "s|^|    last test of $(basename "$f" .log): |"
        done
    fi
done
[ -n "${MPI4PY_WORK:-}" ] && echo "mpi4py-suite: logs in $work/out-*"
exit $status
