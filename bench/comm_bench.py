#!/usr/bin/env python3
"""comm_bench.py: the cost of communicator creation, BDMPI against MPICH in
one invocation (issue 12: MPICH's ctxalloc test, 200,000 MPI_Comm_dup and
MPI_Comm_free, did not finish in 300 s under BDMPI).

Builds bench/comm_bench.c with BDMPI's bdmpicc and MPICH's mpicc and runs,
alternating, each shape under both: microseconds per iteration of
  dup      MPI_Comm_dup + MPI_Comm_free
  dupkeep  N dups kept, then N frees (per dup)
  split    MPI_Comm_split (2 colors) + MPI_Comm_free
Shapes NN:NS:NR: bdmpiexec -nn NN -ns NS -nr NR against mpiexec -n NN*NS.

  bench/comm_bench.py --build-dir build --shapes 1:2:2,1:2:1,2:1:1 --n 20000
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from mpi_bench import result_lines  # noqa: E402


def run(cmd, timeout):
    rs = result_lines(cmd, timeout, "comm_bench")
    return None if rs is None else {f[1]: float(f[3]) for f in rs}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--baseline-build", help="another BDMPI build, run alternating too (its column: old)")
    ap.add_argument("--shapes", default="1:2:2,1:2:1,2:1:1")
    ap.add_argument("--n", default="20000", help="iterations per repetition")
    ap.add_argument("--reps", default="3", help="repetitions inside the program (best is kept)")
    ap.add_argument("--rounds", type=int, default=2, help="alternating runs of each runtime")
    ap.add_argument("--tests", default="dup,dupkeep,split")
    ap.add_argument("--timeout", type=int, default=600)
    args = ap.parse_args()
    bd = os.path.abspath(args.build_dir)
    mpicc = shutil.which("mpicc.mpich") or shutil.which("mpicc")
    mpiexec = shutil.which("mpiexec.mpich") or shutil.which("mpiexec")
    if not mpicc or not mpiexec:
        print("comm_bench: MPICH's mpicc/mpiexec not found", file=sys.stderr)
        return 1
    tmp = tempfile.mkdtemp(prefix="comm_bench.")
    src = os.path.join(HERE, "comm_bench.c")
    prog_bd, prog_mp = os.path.join(tmp, "bd"), os.path.join(tmp, "mp")
    subprocess.run([os.path.join(bd, "bin", "bdmpicc"), "-O2", "-o", prog_bd, src], check=True)
    subprocess.run([mpicc, "-O2", "-o", prog_mp, src], check=True)
    old = os.path.abspath(args.baseline_build) if args.baseline_build else None
    prog_old = os.path.join(tmp, "old")
    if old:
        subprocess.run([os.path.join(old, "bin", "bdmpicc"), "-O2", "-o", prog_old, src], check=True)
    opts = ["--n", args.n, "--reps", args.reps, "--tests", args.tests]
    load = os.getloadavg()[0]
    print(f"# comm_bench.py: build {bd}, MPICH {mpicc}, n {args.n}, {args.rounds} rounds, load {load:.1f}")
    print("\n| shape | test | BDMPI us | MPICH us | BDMPI/MPICH | old BDMPI us | old/new |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for shape in args.shapes.split(","):
        nn, ns, nr = (int(x) for x in shape.split(":"))
        bds, mps, olds = [], [], []
        for _ in range(args.rounds):
            if old:
                r = run([os.path.join(old, "bin", "bdmpiexec"), "-nn", str(nn), "-ns", str(ns), "-nr",
                         str(nr), prog_old, *opts], args.timeout)
                if r:
                    olds.append(r)
            r = run([os.path.join(bd, "bin", "bdmpiexec"), "-nn", str(nn), "-ns", str(ns), "-nr", str(nr),
                     prog_bd, *opts], args.timeout)
            if r:
                bds.append(r)
            r = run([mpiexec, "-n", str(nn * ns), prog_mp, *opts], args.timeout)
            if r:
                mps.append(r)
        for t in args.tests.split(","):
            b = min((r[t] for r in bds if t in r), default=None)
            m = min((r[t] for r in mps if t in r), default=None)
            fb = f"{b:.2f}" if b is not None else "-"
            fm = f"{m:.2f}" if m is not None else "-"
            ratio = f"{b / m:.2f}" if b is not None and m else "-"
            o = min((r[t] for r in olds if t in r), default=None)
            fo = f"{o:.2f}" if o is not None else "-"
            orat = f"{o / b:.1f}" if o is not None and b else "-"
            print(f"| -nn {nn} -ns {ns} -nr {nr} vs -n {nn * ns} | {t} | {fb} | {fm} | {ratio} | {fo} | {orat} |")
    print(f"\n# load at the end {os.getloadavg()[0]:.1f}")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
