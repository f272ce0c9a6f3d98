#!/usr/bin/env python3
"""trace_bench.py: what recording a timeline (bdmpiexec -trace FILE) costs.

Runs each workload with and without -trace, alternating, --reps times, in
one invocation, and prints the best and the median of each figure with the
ratios traced/untraced (issue 13 item 5: recording must cost under 2% of run time):

  pagerank  the unmodified PageRank (apps/pagerank) out of core: 16 ranks,
            -nr 1, -mem a quarter of its data, on an R-MAT graph generated
            once (2^--scale vertices); figures: its per-iteration time and
            the whole run's wall time (which includes writing the JSON)
            and CPU time (all its processes: less disturbed than times by
            other load on the machine)
  ring      mpi_bench's ring of 8-byte messages at 16:1, where every step
            blocks every rank in the master: the most records per second;
            figures: time per step, wall and CPU time of the run

  bench/trace_bench.py --build-dir build                # both, 5 reps
  bench/trace_bench.py --quick                          # tiny sizes, 1 rep
"""
import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def drop_cache(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def run(cmd, trace, timeout):
    """Run cmd (a bdmpiexec command line); with trace, add -trace. Returns
    (stdout, wall seconds, trace file size) or None."""
    tf = None
    if trace:
        fd, tf = tempfile.mkstemp(prefix="bdmpi-tracebench.", suffix=".json")
        os.close(fd)
        cmd = cmd[:1] + ["-trace", tf] + cmd[1:]
    t0 = time.monotonic()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    wall = time.monotonic() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    size = os.path.getsize(tf) if tf and os.path.exists(tf) else 0
    if tf and os.path.exists(tf):
        os.unlink(tf)
    if p.returncode != 0:
        sys.stderr.write("trace_bench: %s exited %d\n%s\n" % (" ".join(cmd), p.returncode, p.stderr))
        return None
    return p.stdout, wall, size, cpu


def figures_pagerank(out, wall):
    m = re.search(r"^time total \S+ iterations \S+ per-iteration (\S+)", out, re.M)
    return {"per-iteration (s)": float(m.group(1)), "wall (s)": wall} if m else None


def figures_ring(out, wall):
    m = re.search(r"^RESULT ring 8 (\S+) us", out, re.M)
    return {"ring step (us)": float(m.group(1)), "wall (s)": wall} if m else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--scale", type=int, default=20, help="log2 of the graph's vertices")
    ap.add_argument("--workloads", default="pagerank,ring")
    ap.add_argument("--data", default=os.path.join(tempfile.gettempdir(), "bdmpi-tracebench"))
    ap.add_argument("--quick", action="store_true", help="tiny sizes, one repetition (a smoke test)")
    a = ap.parse_args()
    if a.quick:
        a.reps, a.scale = 1, 14
    b = a.build_dir
    exe = os.path.join(b, "bin", "bdmpiexec")
    work = []
    if "pagerank" in a.workloads:
        os.makedirs(a.data, exist_ok=True)
        graph = os.path.join(a.data, "rmat%d.csr" % a.scale)
        if not os.path.exists(graph):
            subprocess.run([os.path.join(b, "apps", "bdmpi-gen"), "rmat", "-s", str(a.scale), "-e", "16",
                            "--seed", "1", "-o", graph], check=True, capture_output=True)
        mem = max(4 << 20, os.path.getsize(graph) // 4)
        cmd = [exe, "-ns", "16", "-nr", "1", "-mem", str(mem), os.path.join(b, "apps", "pagerank"),
               "-i", "2" if a.quick else "5", graph]
        print("pagerank: %s (graph %d MB, -mem %d MB)" % (" ".join(cmd), os.path.getsize(graph) >> 20, mem >> 20))
        work.append(("pagerank", cmd, figures_pagerank, graph))
    if "ring" in a.workloads:
        cmd = [exe, "-ns", "16", "-nr", "1", os.path.join(b, "bin", "mpi_bench"), "--tests", "ring",
               "--min", "8", "--max", "8", "--reps", "1" if a.quick else "3",
               "--budget", "0.01" if a.quick else "0.3"]
        print("ring: %s" % " ".join(cmd))
        work.append(("ring", cmd, figures_ring, None))
    ok = True
    for name, cmd, figs, graph in work:
        res = {False: [], True: []}
        sizes = []
        for rep in range(a.reps):
            for trace in (False, True) if rep % 2 == 0 else (True, False):
                if graph:
                    drop_cache(graph)
                r = run(cmd, trace, 1800)
                if r is None:
                    ok = False
                    continue
                f = figs(r[0], r[1])
                if f is not None:
                    f["cpu (s)"] = r[3]
                if f is None:
                    sys.stderr.write("trace_bench: %s printed no result\n" % name)
                    ok = False
                    continue
                res[trace].append(f)
                print("  %s %-9s %s" % (name, "traced" if trace else "untraced",
                                        ", ".join("%s %.4g" % (k, v) for k, v in f.items())), flush=True)
                if trace:
                    sizes.append(r[2])
        if not res[False] or not res[True]:
            continue
        print("\n%s, %d runs each (traced and untraced alternating); best and median:" % (name, len(res[True])))
        print("| figure | without -trace | with -trace | ratio best | ratio median |")
        print("|---|---:|---:|---:|---:|")
        for k in res[False][0]:
            ub, tb = min(f[k] for f in res[False]), min(f[k] for f in res[True])
            um = statistics.median(f[k] for f in res[False])
            tm = statistics.median(f[k] for f in res[True])
            print("| %s | %.4g / %.4g | %.4g / %.4g | %.3f | %.3f |" % (k, ub, um, tb, tm, tb / ub, tm / um))
            print("RATIO %s %s best %.4f median %.4f" % (name, k.split(" ")[0], tb / ub, tm / um))
        print("timeline size: %.1f MB" % (statistics.median(sizes) / 1e6))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
