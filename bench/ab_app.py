#!/usr/bin/env python3
"""ab_app.py: one application under two builds of BDMPI, runs alternating
(A B A B ...), the page cache dropped before each run, so that a change is
measured as a ratio within one invocation on a noisy machine.

    bench/ab_app.py --a /tmp/base/build --b build --reps 3 -- \\
        -ns 16 -nr 1 -mem 48M -mem-strategy arlw @pagerank -i 3 -t 10 GRAPH

Everything after -- is the bdmpiexec command line; @NAME is replaced by
BUILD/apps/NAME of each build, and --stats is added.  --a-extra/--b-extra
add options to one side only (e.g. the same build twice with --a-extra
"-nr 1" --b-extra "-nr 2"), placed before the rest.  Prints, per build,
the seconds per iteration (the application's 'per-iteration' line), the wall
time and the memory manager's bytes, each as the median of the runs, and
B/A of the medians.  Needs root to drop the page cache (else it warns and
measures with the cache as it is)."""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time


def drop_cache():
    try:
        subprocess.run(["sync"], check=False)
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def stat_total(out, name):
    m = re.search(r"^\s*%s\s+(\d+)" % name, out, re.M)
    return int(m.group(1)) if m else None


def run(build, args, timeout, extra):
    exe = os.path.join(build, "bin", "bdmpiexec")
    cmd = [exe, "--stats"] + extra + [os.path.join(build, "apps", a[1:]) if a.startswith("@") else a
                              for a in args]
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=timeout)
    wall = time.monotonic() - t0
    out = p.stdout
    if p.returncode != 0:
        sys.exit("ab_app: %s failed (%d):\n%s" % (" ".join(cmd), p.returncode, out[-3000:]))
    m = re.search(r"per-iteration ([0-9.]+)", out)
    return {
        "s/iter": float(m.group(1)) if m else float("nan"),
        "wall s": wall,
        "read MB": (stat_total(out, "MEM_READ") or 0) / 1e6,
        "written MB": (stat_total(out, "MEM_WRITTEN") or 0) / 1e6,
        "grant wait s": (stat_total(out, "TIME_GRANT_NS") or 0) / 1e9,
        # computing, and (builds from issue 13 session 18 on) the part of
        # running spent waiting for a CPU, which older builds count as computing
        "compute s": (stat_total(out, "TIME_COMPUTE_NS") or 0) / 1e9,
        "cpu wait s": (stat_total(out, "TIME_CPU_WAIT_NS") or 0) / 1e9,
        "load": os.getloadavg()[0],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--a", required=True, help="build directory A (the baseline)")
    ap.add_argument("--b", required=True, help="build directory B")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--a-extra", default="", help="options for A's runs only")
    ap.add_argument("--b-extra", default="", help="options for B's runs only")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    o = ap.parse_args()
    args = o.args[1:] if o.args[:1] == ["--"] else o.args
    if not args:
        ap.error("give the bdmpiexec command line after --")
    res = {"A": [], "B": []}
    cached = False
    extra = {"A": o.a_extra.split(), "B": o.b_extra.split()}
    print("load average at start: %.2f %.2f %.2f" % os.getloadavg(), flush=True)
    for r in range(o.reps):
        for k, b in (("A", o.a), ("B", o.b)):
            cached |= not drop_cache()
            res[k].append(run(b, args, o.timeout, extra[k]))
            print("rep %d %s: %s" % (r + 1, k, "  ".join("%s %.3f" % kv for kv in res[k][-1].items())),
                  flush=True)
    print("load average at end: %.2f %.2f %.2f" % os.getloadavg())
    if cached:
        print("warning: could not drop the page cache (not root): storage costs are hidden")
    print("%-14s %12s %12s %8s" % ("median", "A", "B", "B/A"))
    for f in res["A"][0]:
        a = statistics.median(x[f] for x in res["A"])
        b = statistics.median(x[f] for x in res["B"])
        print("%-14s %12.3f %12.3f %8.3f" % (f, a, b, b / a if a else float("nan")))


if __name__ == "__main__":
    main()
