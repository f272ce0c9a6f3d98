#!/usr/bin/env python3
"""net_bench.py: BDMPI between nodes against one node and against MPICH
(issue 12, inter-node progress), in one invocation.

Runs bench/mpi_bench.c (ping-pong, bandwidth, Allreduce) with 2 ranks as
  nn2   bdmpiexec -nn 2 -ns 1 -nr 1   (one rank on each of two masters)
  nn1   bdmpiexec -nn 1 -ns 2 -nr 2   (both ranks on one master)
  mpich mpiexec -n 2                  (plain MPICH)
and bench/net_loops.c (10000 8-byte Allreduces, 1000 Comm_dup/free) at
nn2 and nn1, alternating the runtimes, and prints the best of the rounds
with the ratios nn2/nn1 and nn2/mpich.  --conformance also times every
MPI test program of tests/mpi (built in --build-dir/tests) at
-nn 2 -ns 3 -nr 2 against -nn 1 -ns 6 -nr 4 (same ranks, same runnable).

  bench/net_bench.py --build-dir /tmp/build-net
  bench/net_bench.py --build-dir build --rounds 3 --conformance
  bench/net_bench.py --alt-env MPIR_CVAR_NOLOCAL=0 --only-nn2

--alt-env VAR=VALUE (repeatable) adds a shape nn2alt, nn2 with those
variables set, alternating with nn2, and the ratio nn2/nn2alt: the cost of
a setting bdmpiexec makes (e.g. the masters' MPIR_CVAR_NOLOCAL=1, issue 18,
session 13).  --only-nn2 leaves out nn1 and MPICH.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from mpi_bench import best, build, run  # noqa: E402


def timed(cmd, timeout):
    t = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    return time.monotonic() - t, p.returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default=os.path.join(os.path.dirname(HERE), "build"))
    ap.add_argument("--max", default="16M")
    ap.add_argument("--min", default="8")
    ap.add_argument("--tests", default="pingpong,bandwidth,allreduce",
                    help="mpi_bench tests (and no net_loops unless allreduce is among them)")
    ap.add_argument("--reps", default="3")
    ap.add_argument("--budget", default="0.05")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--conformance", action="store_true")
    ap.add_argument("--old", action="store_true",
                    help="also nn2 with -net-direct 0 (large messages through spill files on "
                         "both nodes, the path before issue 12 session 13), column nn2old")
    ap.add_argument("--alt-env", action="append", default=[])
    ap.add_argument("--only-nn2", action="store_true")
    args = ap.parse_args()

    bd = os.path.abspath(args.build_dir)
    bdmpiexec = os.path.join(bd, "bin", "bdmpiexec")
    mpicc = shutil.which("mpicc.mpich") or shutil.which("mpicc")
    mpiexec = shutil.which("mpiexec.mpich") or shutil.which("mpiexec")
    tmp = tempfile.mkdtemp(prefix="net_bench.")
    bench_bd = build(os.path.join(bd, "bin", "bdmpicc"), os.path.join(tmp, "bench_bd"))
    bench_mp = build(mpicc, os.path.join(tmp, "bench_mp"))
    loops_src = os.path.join(HERE, "net_loops.c")
    loops_bd = os.path.join(tmp, "loops_bd")
    subprocess.run([os.path.join(bd, "bin", "bdmpicc"), "-O2", "-o", loops_bd, loops_src], check=True)

    opts = ["--tests", args.tests, "--min", args.min, "--max", args.max, "--reps", args.reps,
            "--budget", args.budget]
    shapes = {
        "nn2": [bdmpiexec, "-nn", "2", "-ns", "1", "-nr", "1"],
        "nn1": [bdmpiexec, "-nn", "1", "-ns", "2", "-nr", "2"],
        "mpich": [mpiexec, "-n", "2"],
    }
    if args.old:
        shapes["nn2old"] = [bdmpiexec, "-nn", "2", "-ns", "1", "-nr", "1", "-net-direct", "0"]
    if args.alt_env:
        shapes["nn2alt"] = ["env", *args.alt_env] + shapes["nn2"]
    if args.only_nn2:
        del shapes["nn1"], shapes["mpich"]
    cols = [c for c in ("nn2", "nn1", "mpich", "nn2old", "nn2alt") if c in shapes]
    runs = {k: [] for k in shapes}
    for _ in range(args.rounds):
        for k, pre in shapes.items():
            prog = bench_mp if k == "mpich" else bench_bd
            r = run(pre + [prog] + opts, args.timeout)
            if r:
                runs[k].append(r)
            if k not in ("mpich", "nn2old") and "allreduce" in args.tests:
                r = run(pre + [loops_bd], args.timeout)
                if r:
                    runs[k].append(r)
    res = {k: best(v) for k, v in runs.items() if v}
    print(f"# net_bench.py: build {bd}, {args.rounds} alternating rounds, best of them\n")
    if args.alt_env:
        print(f"nn2alt: nn2 with {' '.join(args.alt_env)}\n")
    print(f"| test | size | {' | '.join(cols)} | {' | '.join('nn2/' + c for c in cols[1:])} |")
    print("|---|---:|" + "---:|" * (2 * len(cols) - 1))
    keys = sorted(set().union(*[set(r) for r in res.values()]), key=lambda k: (k[0], k[1]))
    for k in keys:
        vals = [res.get(s, {}).get(k) for s in cols]
        cells = [f"{v[0]:.2f} {v[1]}" if v else "" for v in vals]
        rat = [f"{vals[0][0] / v[0]:.2f}" if vals[0] and v and v[0] else "" for v in vals[1:]]
        print(f"| {k[0]} | {k[1]} | {' | '.join(cells)} | {' | '.join(rat)} |")

    if args.conformance:
        tdir = os.path.join(bd, "tests")
        names = [t.strip() for t in open(os.path.join(os.path.dirname(HERE), "tests", "mpi", "TESTS"))
                 if t[:1].isalpha()]
        print("\n| program | -nn 2 -ns 3 -nr 2 | -nn 1 -ns 6 -nr 4 | ratio |")
        print("|---|---:|---:|---:|")
        worst, total2, total1 = 0.0, 0.0, 0.0
        for t in names:
            prog = os.path.join(tdir, t)
            if not os.path.exists(prog):
                continue
            t2 = min(timed([bdmpiexec, "-nn", "2", "-ns", "3", "-nr", "2", prog], 300)[0] or 1e9
                     for _ in range(args.rounds))
            t1 = min(timed([bdmpiexec, "-nn", "1", "-ns", "6", "-nr", "4", prog], 300)[0] or 1e9
                     for _ in range(args.rounds))
            total2 += t2
            total1 += t1
            worst = max(worst, t2 / t1)
            print(f"| {t} | {t2:.2f} s | {t1:.2f} s | {t2 / t1:.2f} |")
        print(f"| all | {total2:.1f} s | {total1:.1f} s | {total2 / total1:.2f} (worst {worst:.2f}) |")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
