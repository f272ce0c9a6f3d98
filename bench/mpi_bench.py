#!/usr/bin/env python3
"""mpi_bench.py: BDMPI's message passing against MPICH's, in one invocation.

Builds bench/mpi_bench.c twice (MPICH's mpicc and BDMPI's bdmpicc), runs
each shape under both runtimes, alternating, and prints every figure with
the ratio BDMPI/MPICH (times: lower is better; bandwidth and message rate:
higher is better, and the ratio is still BDMPI/MPICH).

Shapes (issue 12's targets):
  2:2   bdmpiexec -ns 2 -nr 2   vs  mpiexec -n 2
  8:2   bdmpiexec -ns 8 -nr 2   vs  mpiexec -n 8
  16:1  bdmpiexec -ns 16 -nr 1  (ring and allreduce)
  N*S:R bdmpiexec -nn N -ns S -nr R  vs  mpiexec -n N*S (several nodes;
        2*1:1 is one rank on each of two masters)
  With --baseline-build, every shape also runs the same program linked
  against another BDMPI build, alternating with the others, and prints
  baseline/current (for times, > 1: current faster).

  bench/mpi_bench.py --build-dir build                      # 2:2 and 8:2
  bench/mpi_bench.py --shapes 2:2 --max 1M --reps 5
  bench/mpi_bench.py --shapes 2:2,8:2 --tests sendrecv,pingpong
  bench/mpi_bench.py --shapes 16:1 --baseline-build /tmp/build-old
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def build(cc, out, extra=()):
    cmd = [cc, "-O2", "-o", out, os.path.join(HERE, "mpi_bench.c"), *extra]
    subprocess.run(cmd, check=True)
    return out


def result_lines(cmd, timeout, who):
    """The RESULT lines (RESULT test size value unit) of one run of cmd, split;
    None, said on stderr as `who`, when it failed or did not finish in time."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        sys.stderr.write(f"{who}: {' '.join(cmd)} did not finish in {timeout} s\n")
        return None
    if p.returncode != 0:
        sys.stderr.write(f"{who}: {' '.join(cmd)} exited {p.returncode}\n{p.stderr}\n")
        return None
    return [f for f in (line.split() for line in p.stdout.splitlines()) if len(f) == 5 and f[0] == "RESULT"]


def run(cmd, timeout):
    rs = result_lines(cmd, timeout, "mpi_bench")
    return None if rs is None else {(f[1], int(f[2])): (float(f[3]), f[4]) for f in rs}


def best(runs):
    """Per figure, the best over runs (min time, max rate)."""
    out = {}
    for r in runs:
        for k, (v, unit) in r.items():
            better = max if unit in ("MB/s", "msgs/s") else min
            out[k] = (better(out[k][0], v), unit) if k in out else (v, unit)
    return out


def table(title, a_name, a, b_name, b):
    print(f"\n### {title}\n")
    print(f"| test | size | {a_name} | {b_name} | {a_name}/{b_name} |")
    print("|---|---:|---:|---:|---:|")
    for k in sorted(a, key=lambda k: (k[0], k[1])):
        if k not in b:
            continue
        va, unit = a[k]
        vb, _ = b[k]
        ratio = va / vb if vb else float("nan")
        print(f"| {k[0]} | {k[1]} | {va:.2f} {unit} | {vb:.2f} {unit} | {ratio:.2f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--baseline-build", help="another BDMPI build to compare against (old/new)")
    ap.add_argument("--shapes", default="2:2,8:2")
    ap.add_argument("--min", default="8", help="smallest message size (sizes grow by 4x)")
    ap.add_argument("--max", default="16M", help="largest message size")
    ap.add_argument("--reps", default="3", help="repetitions inside the program (best is kept)")
    ap.add_argument("--rounds", type=int, default=2, help="alternating runs of each runtime")
    ap.add_argument("--budget", default="0.05", help="seconds per repetition")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--tests", help="comma-separated tests of mpi_bench (default: all)")
    args = ap.parse_args()

    bd = os.path.abspath(args.build_dir)
    bdmpicc = os.path.join(bd, "bin", "bdmpicc")
    bdmpiexec = os.path.join(bd, "bin", "bdmpiexec")
    mpicc = shutil.which("mpicc.mpich") or shutil.which("mpicc")
    mpiexec = shutil.which("mpiexec.mpich") or shutil.which("mpiexec")
    tmp = tempfile.mkdtemp(prefix="mpi_bench.")
    prog_bd = build(bdmpicc, os.path.join(tmp, "bench_bdmpi"))
    prog_mp = build(mpicc, os.path.join(tmp, "bench_mpich")) if mpicc else None
    prog_old = None
    if args.baseline_build:
        ob = os.path.abspath(args.baseline_build)
        prog_old = build(os.path.join(ob, "bin", "bdmpicc"), os.path.join(tmp, "bench_old"))
        old_exec = os.path.join(ob, "bin", "bdmpiexec")
    common = ["--min", args.min, "--max", args.max, "--reps", args.reps, "--budget", args.budget]
    if args.tests:
        common += ["--tests", args.tests]
    print(f"# mpi_bench.py: build {bd}, MPICH {mpicc}, {args.rounds} alternating rounds")
    for shape in args.shapes.split(","):
        nodes, _, rest = shape.rpartition("*")
        nn = int(nodes) if nodes else 1
        ns, nr = (int(x) for x in rest.split(":"))
        if nn > 1:
            where = ["-nn", str(nn), "-ns", str(ns), "-nr", str(nr)]
            bd_runs, mp_runs, old_runs = [], [], []
            for _ in range(args.rounds):
                for prog, exe, runs in ((prog_bd, bdmpiexec, bd_runs),
                                        (prog_old, old_exec if prog_old else None, old_runs)):
                    if prog:
                        r = run([exe, *where, prog, *common], args.timeout)
                        if r:
                            runs.append(r)
                if prog_mp:
                    r = run([mpiexec, "-n", str(nn * ns), prog_mp, *common], args.timeout)
                    if r:
                        mp_runs.append(r)
            if not bd_runs:
                return 1
            if mp_runs:
                table(f"{nn * ns} ranks: bdmpiexec {' '.join(where)} vs mpiexec -n {nn * ns}",
                      "BDMPI", best(bd_runs), "MPICH", best(mp_runs))
            if old_runs:
                table(f"bdmpiexec {' '.join(where)}: baseline against current (same invocation)",
                      "baseline", best(old_runs), "current", best(bd_runs))
            continue
        if nr == 1 and ns > 2:
            opts = common + ([] if args.tests else ["--tests", "ring,allreduce"]) + ["--max", "64K"]
            new_runs, old_runs = [], []
            for _ in range(args.rounds):
                r = run([bdmpiexec, "-ns", str(ns), "-nr", "1", prog_bd, *opts], args.timeout)
                if r:
                    new_runs.append(r)
                if prog_old:
                    r = run([old_exec, "-ns", str(ns), "-nr", "1", prog_old, *opts], args.timeout)
                    if r:
                        old_runs.append(r)
            if prog_old and old_runs and new_runs:
                table(f"{ns} ranks, -nr 1: baseline/current (old/new > 1: current faster)",
                      "baseline", best(old_runs), "current", best(new_runs))
            elif new_runs:
                table(f"{ns} ranks, -nr 1", "current", best(new_runs), "current", best(new_runs))
            continue
        if not prog_mp:
            print("mpi_bench: MPICH's mpicc not found: no comparison", file=sys.stderr)
            return 1
        bd_runs, mp_runs, old_runs = [], [], []
        for _ in range(args.rounds):
            r = run([bdmpiexec, "-ns", str(ns), "-nr", str(nr), prog_bd, *common], args.timeout)
            if r:
                bd_runs.append(r)
            r = run([mpiexec, "-n", str(ns), prog_mp, *common], args.timeout)
            if r:
                mp_runs.append(r)
            if prog_old:
                r = run([old_exec, "-ns", str(ns), "-nr", str(nr), prog_old, *common], args.timeout)
                if r:
                    old_runs.append(r)
        if not bd_runs or not mp_runs:
            return 1
        table(f"{ns} ranks: bdmpiexec -ns {ns} -nr {nr} vs mpiexec -n {ns}",
              "BDMPI", best(bd_runs), "MPICH", best(mp_runs))
        if old_runs:
            table(f"{ns} ranks, -nr {nr}: baseline against current (same invocation)",
                  "baseline", best(old_runs), "current", best(bd_runs))
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
