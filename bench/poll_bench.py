#!/usr/bin/env python3
"""poll_bench.py: programs that poll (MPI_Test) instead of blocking, with
the poll quantum (-poll-quantum, default) against every unsuccessful poll
handing the run slot over (-poll-quantum 0, the behaviour before it), as
ratios within one invocation.

Runs bench/poll_bench.c (build/bin/poll_bench):
  work      ranks make table updates and test for incoming ones after each
            (HPCC's MPIRandomAccess pattern), with more ranks than run slots;
  pingpong  two ranks exchange small messages, each waiting for the other
            by polling only.
Each shape runs --reps times per setting, alternating; the medians and the
ratio default/0 are printed (below 1: the quantum is faster).  The load
(uptime) is printed before and after: on a shared machine, compare ratios.
A measurement, not a test: exit 0 whichever wins (1 if a run fails).

    nice bench/poll_bench.py --build-dir build
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


def run(args, shape, quantum, mode, n):
    exe = os.path.join(args.build_dir, "bin", "bdmpiexec")
    prog = os.path.join(args.build_dir, "bin", "poll_bench")
    opt = [] if quantum is None else ["-poll-quantum", str(quantum)]
    cmd = [exe] + shape.split() + opt + [prog, mode, str(n)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    m = re.search(r"^RESULT %s ([0-9.]+) ([0-9.]+)" % mode, p.stdout, re.M)
    if p.returncode != 0 or not m or ("PASS poll_bench " + mode) not in p.stdout:
        sys.exit("poll_bench: run failed (%d): %s\n%s%s" % (p.returncode, " ".join(cmd),
                                                             p.stdout[-1000:], p.stderr[-1000:]))
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--updates", type=int, default=200000, help="updates per rank (work)")
    ap.add_argument("--rounds", type=int, default=20000, help="exchanges (pingpong)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--quantum", type=int, default=None,
                    help="-poll-quantum to compare with 0 (default: the option's default)")
    ap.add_argument("--timeout", type=int, default=600)
    args = ap.parse_args()
    q = args.quantum
    qname = "default" if q is None else str(q)
    cases = [("work", "-ns 4 -nr 1", args.updates), ("work", "-ns 8 -nr 2", args.updates),
             ("pingpong", "-ns 2 -nr 1", args.rounds), ("pingpong", "-ns 4 -nr 1", args.rounds)]
    print("load before: %s" % load())
    print("%-9s %-12s %12s %12s %8s" % ("mode", "shape", "quantum 0 s", qname + " s", "ratio"))
    for mode, shape, n in cases:
        t0, t1 = [], []
        for _ in range(args.reps):
            t0.append(run(args, shape, 0, mode, n))
            t1.append(run(args, shape, q, mode, n))  # None: the option's default
        a, b = statistics.median(t0), statistics.median(t1)
        print("%-9s %-12s %12.4f %12.4f %8.3f ratio" % (mode, shape, a, b, b / a if a else 0))
    print("load after: %s" % load())


if __name__ == "__main__":
    main()
