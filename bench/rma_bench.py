#!/usr/bin/env python3
"""rma_bench.py: BDMPI's one-sided throughput against MPICH's, in one invocation.

Builds bench/rma_bench.c with MPICH's mpicc and BDMPI's bdmpicc, runs it
with two ranks under both, alternating, --reps times, and prints for every
test and size the best operations per second of each and the ratio
BDMPI/MPICH (higher is better for both; < 1: BDMPI slower).

BDMPI shapes: -ns 2 -nr 2 (both ranks run) and -ns 2 -nr 1 (the target
waits for the run slot while the origin works).

  bench/rma_bench.py --build-dir build
  bench/rma_bench.py --build-dir build --reps 3 --max 32768 --tests put_fence,acc_lock
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
    rs = result_lines(cmd, timeout, "rma_bench")
    return None if rs is None else {(f[1], int(f[2])): float(f[3]) for f in rs}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--max", default="32768")
    ap.add_argument("--budget", default="0.3")
    ap.add_argument("--tests", default="")
    ap.add_argument("--timeout", type=int, default=300)
    a = ap.parse_args()
    mpicc = shutil.which("mpicc.mpich") or shutil.which("mpicc")
    mpiexec = shutil.which("mpiexec.mpich") or shutil.which("mpiexec")
    bdmpicc = os.path.join(a.build_dir, "bin", "bdmpicc")
    bdmpiexec = os.path.join(a.build_dir, "bin", "bdmpiexec")
    src = os.path.join(HERE, "rma_bench.c")
    tmp = tempfile.mkdtemp(prefix="rma_bench.")
    try:
        exe_b = os.path.join(tmp, "rma_bdmpi")
        subprocess.run([bdmpicc, "-O2", "-o", exe_b, src], check=True)
        exe_m = None
        if mpicc and mpiexec:
            exe_m = os.path.join(tmp, "rma_mpich")
            subprocess.run([mpicc, "-O2", "-o", exe_m, src], check=True)
        args = ["--max", a.max, "--budget", a.budget]
        if a.tests:
            args += ["--tests", a.tests]
        runs = {"mpich": [], "bdmpi 2:2": [], "bdmpi 2:1": []}
        for _ in range(a.reps):
            if exe_m:
                runs["mpich"].append(run([mpiexec, "-n", "2", exe_m, *args], a.timeout))
            runs["bdmpi 2:2"].append(run([bdmpiexec, "-ns", "2", "-nr", "2", exe_b, *args], a.timeout))
            runs["bdmpi 2:1"].append(run([bdmpiexec, "-ns", "2", "-nr", "1", exe_b, *args], a.timeout))
        best = {}
        for k, rs in runs.items():
            best[k] = {}
            for r in rs:
                for key, v in (r or {}).items():
                    best[k][key] = max(best[k].get(key, 0.0), v)
        keys = sorted({key for b in best.values() for key in b}, key=lambda x: (x[0], x[1]))
        print(f"{'test':<10} {'bytes':>6} {'MPICH ops/s':>12} {'BDMPI 2:2':>12} {'ratio':>7} "
              f"{'BDMPI 2:1':>12} {'ratio':>7}")
        for key in keys:
            m = best["mpich"].get(key)
            row = f"{key[0]:<10} {key[1]:>6} {m if m else float('nan'):>12.0f}"
            for shape in ("bdmpi 2:2", "bdmpi 2:1"):
                v = best[shape].get(key)
                if v is None:
                    row += f" {'-':>12} {'-':>7}"
                else:
                    row += f" {v:>12.0f} {v / m if m else float('nan'):>7.3f}"
            print(row)
        failed = any(r is None for rs in runs.values() for r in rs)
        return 1 if failed else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
