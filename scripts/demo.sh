#!/bin/bash
# The main demo: PageRank out of core.  Generates an R-MAT graph (Graph500
# parameters, 2^21 vertices, ~32M edges, ~150 MB on disk and more in
# memory), then runs the unmodified MPI PageRank as 16 ranks, one running at
# a time, under a memory budget of 40 MB — the ranks' data is about 5 times
# the budget — and prints per-iteration times, the result and where the
# time went.  DEMO_SCALE=N changes the graph size (2^N vertices).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BDMPI_BUILD:-$root/build}
[ -x "$build/bin/bdmpiexec" ] && [ -x "$build/apps/pagerank" ] || "$root/scripts/build.sh"
scale=${DEMO_SCALE:-21}
data=${TMPDIR:-/tmp}/bdmpi-demo
mkdir -p "$data"
graph=$data/rmat$scale.csr
if [ ! -f "$graph" ]; then
  echo "== generating an R-MAT graph with 2^$scale vertices into $graph"
  "$build/apps/bdmpi-gen" rmat -s "$scale" -e 16 --seed 1 -o "$graph"
fi
echo "== graph file: $(du -h "$graph" | cut -f1); memory budget: 40M"
# Drop the graph's pages from the page cache so its reads are real reads.
python3 -c "import os,sys; fd=os.open(sys.argv[1],os.O_RDONLY); os.posix_fadvise(fd,0,0,os.POSIX_FADV_DONTNEED)" "$graph"
set -x
"$build/bin/bdmpiexec" -ns 16 -nr 1 -mem 40M --stats "$build/apps/pagerank" -i 5 "$graph"
