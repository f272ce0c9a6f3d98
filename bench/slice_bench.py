#!/usr/bin/env python3
"""slice_bench.py: how late a small send to another node arrives while its
sender computes, with the pinned master's short scheduler slice
(-master-slice, default) against the kernel's default slice
(-master-slice 0), alternating in one invocation.

Runs bench/send_delay.c (build/bin/send_delay) at -nn 2 -ns 1 -nr 1 (one
rank a node, so each master is pinned with its rank: -pin auto) and prints,
per setting, the medians over --reps runs of each run's p50 and p90 delay,
and the ratios default/0 (below 1: the short slice is faster).  The load
is printed before and after; compare ratios, not absolute numbers.
A measurement, not a test: exit 0 whichever wins (1 if a run fails).

    nice bench/slice_bench.py --build-dir build --reps 5
"""
import argparse
import os
import re
import statistics
import subprocess
import sys


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def run(bindir, slice_us, n, compute):
    cmd = [os.path.join(bindir, "bdmpiexec"), "-nn", "2", "-ns", "1", "-nr", "1",
           "-master-slice", str(slice_us), os.path.join(bindir, "send_delay"), str(n), str(compute)]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    if p.returncode != 0:
        sys.exit("slice_bench: %s failed (%d):\n%s" % (" ".join(cmd), p.returncode, p.stdout))
    got = dict(re.findall(r"^RESULT send_delay (\w+) ([0-9.]+) us", p.stdout, re.M))
    return float(got["p50"]), float(got["p90"])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--n", type=int, default=300, help="sends per run")
    ap.add_argument("--compute", type=float, default=2000, help="microseconds of work after each send")
    ap.add_argument("--slice", type=int, default=100, help="the -master-slice to compare with 0")
    a = ap.parse_args()
    bindir = os.path.join(a.build_dir, "bin")
    print("load at start: %s" % load())
    res = {0: [], a.slice: []}
    for _ in range(a.reps):
        for s in (0, a.slice):
            res[s].append(run(bindir, s, a.n, a.compute))
    print("load at end:   %s" % load())
    print("%d sends a run, %.0f us of work after each, %d runs per setting (medians of runs)" %
          (a.n, a.compute, a.reps))
    print("| -master-slice | p50 (us) | p90 (us) |")
    print("|---|---:|---:|")
    med = {}
    for s, v in res.items():
        med[s] = (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v))
        print("| %d | %.0f | %.0f |" % (s, med[s][0], med[s][1]))
    print("ratio %d/0: p50 %.2f, p90 %.2f" % (a.slice, med[a.slice][0] / med[0][0], med[a.slice][1] / med[0][1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
