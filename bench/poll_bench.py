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

With --remote: polls for another node's message (-poll-remote, mt.c
bdl_p2p_poll_failed_remote) instead: mode cross (pairs spanning the nodes,
each waiting by MPI_Iprobe) at -nn 2 -ns 2 -nr 1 and -nn 2 -ns 1 -nr 1 with
-poll-remote 0 (as before) against the default, and the same pairs within
one node (-nn 1, where nothing changes) as the baseline of the ratio
nn2/nn1, all alternating in one invocation.

    nice bench/poll_bench.py --build-dir build --remote --rounds 2000
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


def run(args, shape, quantum, mode, n, knob="-poll-quantum"):
    exe = os.path.join(args.build_dir, "bin", "bdmpiexec")
    prog = os.path.join(args.build_dir, "bin", "poll_bench")
    opt = [] if quantum is None else [knob, str(quantum)]
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
    ap.add_argument("--remote", action="store_true",
                    help="compare -poll-remote 0 with the default on mode cross across nodes")
    args = ap.parse_args()
    if args.remote:
        return remote(args)
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


def remote(args):
    n = args.rounds
    shapes = [("-nn 2 -ns 2 -nr 1", "-nn 1 -ns 4 -nr 1"), ("-nn 2 -ns 1 -nr 1", "-nn 1 -ns 2 -nr 1")]
    print("load before: %s" % load())
    print("%-18s %12s %12s %10s %8s %10s %10s" % ("shape (cross)", "off us", "default us", "nn1 us",
                                                 "def/off", "off/nn1", "def/nn1"))
    for nn2, nn1 in shapes:
        off, on, base = [], [], []
        for _ in range(args.reps):
            off.append(run(args, nn2, 0, "cross", n, "-poll-remote") * 1e6 / n)
            on.append(run(args, nn2, None, "cross", n, "-poll-remote") * 1e6 / n)
            base.append(run(args, nn1, None, "cross", n, "-poll-remote") * 1e6 / n)
        a, b, c = statistics.median(off), statistics.median(on), statistics.median(base)
        print("%-18s %12.1f %12.1f %10.1f %8.3f %10.2f %10.2f ratio" % (nn2, a, b, c, b / a, a / c,
                                                                         b / c))
    print("load after: %s" % load())


if __name__ == "__main__":
    main()
