#!/usr/bin/env python3
"""prefetch_bench: what look-ahead loading (-mem-prefetch) buys, measured as
ratios within one invocation.  --option mem-preclean measures pre-cleaning
(write-behind) the same way; any on|off option of bdmpiexec can be named.

For each strategy and -nr, the same PageRank run (out of core: the graph
is several times -mem) is made with -mem-prefetch on and off, alternating,
REPS times each.  Before every run the page cache of the graph and of the
spill directory is dropped (POSIX_FADV_DONTNEED on every file, and
/proc/sys/vm/drop_caches when writable), so reads come from the device.
Prints, per cell, the median per-iteration time (iterations 2..N; the first
one loads the graph), the bytes the memory manager read and wrote per
iteration, and the ratio on/off.  Exit status 0 even when prefetch loses:
this is a measurement, not a test.

  bench/prefetch_bench.py --build-dir build --scale 21 --edges 48 --mem 48M \\
      --ns 16 --nr 1,2 --strategies araw,arlw,lrlw --reps 3 --iters 5

Besides the table, one line per run (in the order run) gives s/iter and the
"where the time went" totals of --stats over the ranks: computing, storage
while running, waiting for grants, storage while waiting (unloads).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile


def drop_cache(paths):
    for root in paths:
        walk = os.walk(root) if os.path.isdir(root) else [
            (os.path.dirname(root), None, [os.path.basename(root)])]
        for dirpath, _, files in walk:
            for f in files:
                p = os.path.join(dirpath, f)
                try:
                    fd = os.open(p, os.O_RDONLY)
                except OSError:
                    continue
                try:
                    os.fsync(fd)
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                except OSError:
                    pass
                os.close(fd)
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("1\n")
    except OSError:
        pass


STAT = re.compile(r"^\s+(MEM_READ|MEM_WRITTEN|MEM_PREFETCHED|MEM_PRECLEANED|TIME_COMPUTE_NS|TIME_IO_RUN_NS|"
                  r"TIME_GRANT_NS|TIME_IO_WAIT_NS)\s+(\d+)", re.M)


def run(args, exe, graph, wd, strategy, nr, prefetch):
    drop_cache([graph, wd])
    cmd = [exe, "-ns", str(args.ns), "-nr", str(nr), "-mem", args.mem, "-mem-strategy", strategy,
           "-mem-threshold", args.mem_threshold, "-sbpage", args.sbpage, "-" + args.option, prefetch,
           "-wd", wd, "--stats"] + args.extra.split() + [args.pagerank, "-i", str(args.iters), "-t", "10", graph]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    if p.returncode != 0:
        sys.exit("prefetch_bench: run failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr[-2000:]))
    its = [float(t) for _, t in re.findall(r"^iter (\d+) time ([0-9.]+)", p.stdout, re.M)]
    stats = {k: int(v) for k, v in STAT.findall(p.stderr)}
    return its, stats


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build-dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build"))
    ap.add_argument("--graph", help="an existing graph (else one is generated in --data-dir)")
    ap.add_argument("--data-dir", default=os.path.join(tempfile.gettempdir(), "bdmpi-prefetch-bench"))
    ap.add_argument("--scale", type=int, default=18)
    ap.add_argument("--edges", type=int, default=16)
    ap.add_argument("--mem", default="6M")
    ap.add_argument("--mem-threshold", default="64K")
    ap.add_argument("--sbpage", default="64K")
    ap.add_argument("--ns", type=int, default=16)
    ap.add_argument("--nr", default="1,2")
    ap.add_argument("--strategies", default="araw,arlw,lrlw")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--option", default="mem-prefetch", help="the on|off option compared (without the dash)")
    ap.add_argument("--extra", default="", help="more bdmpiexec options for every run, e.g. '-mem-preclean-tick 30000'")
    args = ap.parse_args()
    b = os.path.abspath(args.build_dir)
    exe = os.path.join(b, "bin", "bdmpiexec")
    args.pagerank = os.path.join(b, "apps", "pagerank")
    os.makedirs(args.data_dir, exist_ok=True)
    graph = args.graph or os.path.join(args.data_dir, "g%d-%d.csr" % (args.scale, args.edges))
    if not os.path.exists(graph):
        subprocess.run([os.path.join(b, "apps", "bdmpi-gen"), "rmat", "-s", str(args.scale), "-e",
                        str(args.edges), "--seed", "1", "-o", graph], check=True, capture_output=True)
    wd = os.path.join(args.data_dir, "spill")
    os.makedirs(wd, exist_ok=True)
    print("graph %s (%.1f MB), -mem %s, -ns %d, %d iterations, %d runs each, -%s on vs off"
          % (graph, os.path.getsize(graph) / 1e6, args.mem, args.ns, args.iters, args.reps, args.option))
    print("%-6s %3s  %10s %10s %6s  %11s %11s  %11s %11s" % (
        "strat", "nr", "on s/it", "off s/it", "on/off", "on rd MB/it", "off rd MB/it",
        "on wr MB/it", "off wr MB/it"))
    for strategy in args.strategies.split(","):
        for nr in [int(x) for x in args.nr.split(",")]:
            res = {"on": ([], [], []), "off": ([], [], [])}
            for _ in range(args.reps):
                for pf in ("on", "off"):
                    its, st = run(args, exe, graph, wd, strategy, nr, pf)
                    steady = its[1:] or its
                    print("  run %-6s nr %d %-3s: %.3f s/it; compute %.2f s, storage running %.2f s, grant %.2f s, "
                          "storage waiting %.2f s; read %.0f MB, written %.0f MB (%.0f MB while running)" % (
                              strategy, nr, pf, statistics.median(steady), st.get("TIME_COMPUTE_NS", 0) / 1e9,
                              st.get("TIME_IO_RUN_NS", 0) / 1e9, st.get("TIME_GRANT_NS", 0) / 1e9,
                              st.get("TIME_IO_WAIT_NS", 0) / 1e9, st.get("MEM_READ", 0) / 1e6,
                              st.get("MEM_WRITTEN", 0) / 1e6, st.get("MEM_PRECLEANED", 0) / 1e6))
                    sys.stdout.flush()
                    res[pf][0].extend(steady)
                    res[pf][1].append(st.get("MEM_READ", 0) / max(1, args.iters) / 1e6)
                    res[pf][2].append(st.get("MEM_WRITTEN", 0) / max(1, args.iters) / 1e6)
            on, off = (statistics.median(res[k][0]) for k in ("on", "off"))
            print("%-6s %3d  %10.3f %10.3f %6.2f  %11.1f %11.1f  %11.1f %11.1f" % (
                strategy, nr, on, off, on / off, statistics.median(res["on"][1]),
                statistics.median(res["off"][1]), statistics.median(res["on"][2]),
                statistics.median(res["off"][2])))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
