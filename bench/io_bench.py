#!/usr/bin/env python3
"""io_bench.py: collective MPI-IO through an interleaved view with two-phase
aggregation (src/lib/io/coll.c) against each rank's own access (the hint
collective_buffering=false), as ratios within one invocation.

Runs bench/io_bench.c under bdmpiexec, alternating "on" and "off", and
prints each run's write and read time (the read comes from storage: the
program drops the file's pages first) and the aggregators' file requests,
then the medians and on/off ratios (< 1: aggregation faster).

  bench/io_bench.py --build-dir build --ns 16 --nr 1 --block 4K --size 16M --reps 3
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def run(args, cb):
    cmd = [os.path.join(args.build_dir, "bin", "bdmpiexec"), "-ns", str(args.ns), "-nr",
           str(args.nr), "--stats"] + (["-mem", args.mem] if args.mem else []) + [
        os.path.join(args.build_dir, "bin", "io_bench"), "--block", args.block, "--size",
        args.size, "--cb", cb, "--dir", args.dir]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    if p.returncode != 0 or "PASS io_bench" not in p.stdout:
        sys.exit("io_bench.py: run failed (%d): %s\n%s%s" % (p.returncode, " ".join(cmd),
                                                             p.stdout[-1000:], p.stderr[-2000:]))
    res = {m.group(1): float(m.group(2)) for m in re.finditer(r"^RESULT (\S+) ([0-9.]+)", p.stdout, re.M)}
    m = re.search(r"^\s+IO_AGG_REQUESTS\s+(\d+)", p.stderr, re.M)
    res["syscalls"] = int(m.group(1)) if m else 0
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--ns", type=int, default=16)
    ap.add_argument("--nr", type=int, default=1)
    ap.add_argument("--block", default="4K", help="bytes of each rank's pieces in the file")
    ap.add_argument("--size", default="16M", help="bytes each rank writes and reads")
    ap.add_argument("--mem", help="-mem for bdmpiexec")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--dir", default=tempfile.gettempdir(), help="where the file is written")
    ap.add_argument("--timeout", type=int, default=600)
    args = ap.parse_args()
    args.build_dir = os.path.abspath(args.build_dir)
    print("io_bench: -ns %d -nr %d, pieces of %s, %s per rank, in %s, %d runs each, load %s" % (
        args.ns, args.nr, args.block, args.size, args.dir, args.reps, load()))
    print("%-4s %10s %10s %12s" % ("cb", "write s", "read s", "agg requests"))
    res = {"on": [], "off": []}
    for _ in range(args.reps):
        for cb in ("on", "off"):
            r = run(args, cb)
            res[cb].append(r)
            print("%-4s %10.3f %10.3f %12d" % (cb, r["write_s"], r["read_s"], r["syscalls"]))
            sys.stdout.flush()
    med = {cb: {k: statistics.median(r[k] for r in res[cb]) for k in ("write_s", "read_s")}
           for cb in res}
    for k in ("write_s", "read_s"):
        print("median %s: on %.3f, off %.3f, on/off %.2f" % (k, med["on"][k], med["off"][k],
                                                             med["on"][k] / med["off"][k]))
    print("load %s" % load())


if __name__ == "__main__":
    main()
