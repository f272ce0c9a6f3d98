#!/bin/bash
# Build the benchmark applications with MPICH's mpicc (and the serial
# programs with cc) in a temporary directory, generate small inputs, and run
# every MPI variant with mpiexec at several process counts, comparing each
# run's checksum with the serial reference (check.py).
#
#   apps/run-mpich.sh                 # all apps
#   apps/run-mpich.sh pagerank        # only these apps
#
# Environment: NPS (process counts, default "1 2 4 9"; SGD uses only the
# perfect squares), MPICC (mpicc), MPIEXEC (mpiexec), CC (cc),
# TIMEOUT (seconds per run, default 120), KEEP=1 keeps the temp directory.
# PageRank must match the reference within 1e-9 (relative); K-means and SGD
# exactly.  Prints one line per run and "N passed, N failed"; exits 1 if any
# failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
NPS=${NPS:-"1 2 4 9"}
MPICC=${MPICC:-mpicc}
MPIEXEC=${MPIEXEC:-mpiexec}
CC=${CC:-cc}
TIMEOUT=${TIMEOUT:-120}
export HYDRA_LAUNCHER=${HYDRA_LAUNCHER:-fork}
CFLAGS="-std=gnu11 -O2 -g -Wall -Wextra -D_GNU_SOURCE -ffp-contract=off -I$here/common"
COMMON="$here/common/bdcsr.c $here/common/bdooc.c"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bdmpi-apps-mpich.XXXXXX") || exit 2
if [ "${KEEP:-0}" = 1 ]; then echo "keeping $tmp"; else trap 'rm -rf "$tmp"' EXIT; fi
mkdir -p "$tmp/spill"

apps=("$@")
[ ${#apps[@]} -eq 0 ] && apps=(pagerank kmeans sgd)

pass=0
fail=0
ok()  { echo "PASS $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; [ -n "${2:-}" ] && sed 's/^/    /' "$2" | tail -15; fail=$((fail + 1)); }

build() { # build NAME CC SRC... ; returns non-zero on failure
    local name=$1 cc=$2
    shift 2
    if ! $cc $CFLAGS "$@" $COMMON -lm -o "$tmp/$name" > "$tmp/$name.build" 2>&1; then
        bad "build $name" "$tmp/$name.build"
        return 1
    fi
    if [ -s "$tmp/$name.build" ]; then # warnings count as failures: the apps are warning-free
        bad "build $name (warnings)" "$tmp/$name.build"
        return 1
    fi
    return 0
}

# run LABEL KIND REF -- COMMAND...
run() {
    local label=$1 kind=$2 ref=$3
    shift 4
    local out="$tmp/$(echo "$label" | tr ' /' '__').out"
    if timeout "$TIMEOUT" "$here/runcheck.sh" "$kind" "$ref" "$out" "${copt[@]}" -- "$@" > "$out.log" 2>&1; then
        ok "$label: $(tail -1 "$out.log")"
    else
        bad "$label" "$out.log"
    fi
}

if ! build bdmpi-gen "$CC" "$here/gen/bdmpi-gen.c"; then
    echo "$pass passed, $fail failed"
    exit 1
fi
gen="$tmp/bdmpi-gen"

for app in "${apps[@]}"; do
    d="$here/$app"
    [ -d "$d" ] || { bad "$app (no directory $d)"; continue; }
    case $app in
    pagerank)
        input="$tmp/pr.csr"; args=(-i 10); kind=pagerank; copt=(--rtol 1e-9)
        $gen rmat -s 15 -e 8 --seed 7 -m 2M -o "$input" 2> /dev/null || { bad "generate $app"; continue; } ;;
    kmeans)
        input="$tmp/docs.csr"; args=(-k 8 -i 60 -s 3); kind=kmeans; copt=(--rtol 0)
        $gen docs -r 12000 -c 3000 -l 40 --seed 11 -o "$input" 2> /dev/null || { bad "generate $app"; continue; } ;;
    sgd)
        input="$tmp/ratings.csr"; args=(-i 5 -k 8 -s 5); kind=sgd; copt=(--rtol 0)
        $gen ratings -r 6000 -c 2000 -l 30 -k 8 --seed 13 -o "$input" 2> /dev/null || { bad "generate $app"; continue; } ;;
    *) bad "$app (unknown app)"; continue ;;
    esac
    build "${app}_ref" "$CC" -I"$d" "$d/${app}_ref.c" || continue
    build "${app}_serial_ooc" "$CC" -I"$d" "$d/${app}_serial_ooc.c" || continue
    build "$app" "$MPICC" -I"$d" "$d/$app.c" || continue
    build "${app}_ooc" "$MPICC" -I"$d" "$d/${app}_ooc.c" || continue
    for np in $NPS; do
        refarg=()
        if [ "$app" = sgd ]; then
            q=$(awk -v n="$np" 'BEGIN { q = int(sqrt(n) + 0.5); print (q * q == n) ? q : 0 }')
            [ "$q" = 0 ] && continue
            refarg=(-q "$q")
        fi
        ref="$tmp/$app${refarg[1]:-}.ref"
        if [ ! -f "$ref" ]; then
            "$tmp/${app}_ref" "${args[@]}" "${refarg[@]}" "$input" > "$ref" 2> "$ref.err" || { bad "$app reference" "$ref.err"; continue; }
            run "$app serial_ooc ${refarg[*]}" $kind "$ref" -- "$tmp/${app}_serial_ooc" "${args[@]}" "${refarg[@]}" -m 16K -d "$tmp/spill" "$input"
        fi
        run "$app mpiexec -n $np" $kind "$ref" -- $MPIEXEC -n "$np" "$tmp/$app" "${args[@]}" "$input"
        run "${app}_ooc mpiexec -n $np" $kind "$ref" -- $MPIEXEC -n "$np" "$tmp/${app}_ooc" "${args[@]}" -d "$tmp/spill" "$input"
    done
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
