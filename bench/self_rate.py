#!/usr/bin/env python3
"""self_rate.py: CPU nanoseconds per small message (send and receive, one
rank to itself; bench/self_rate.c), BDMPI against MPICH and optionally
against another BDMPI build, alternating, in one invocation.  CPU time,
not wall time: a loaded machine delays the process, it does not make its
instructions dearer.  (MPICH's self-messages take a path of their own, so
its figure is a floor, not the same path.)

  bench/self_rate.py --build-dir build --baseline-build /tmp/base/build --rounds 3
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from mpi_bench import result_lines  # noqa: E402


def run(cmd):
    return {f[1]: float(f[3]) for f in result_lines(cmd, 300, "self_rate") or []}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default=os.path.join(os.path.dirname(HERE), "build"))
    ap.add_argument("--baseline-build")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="self_rate.")
    src = os.path.join(HERE, "self_rate.c")
    runs = {}
    bd = os.path.abspath(a.build_dir)
    progs = [("BDMPI", os.path.join(bd, "bin", "bdmpicc"), [os.path.join(bd, "bin", "bdmpiexec"), "-ns", "1"])]
    if a.baseline_build:
        ob = os.path.abspath(a.baseline_build)
        progs.append(("baseline", os.path.join(ob, "bin", "bdmpicc"), [os.path.join(ob, "bin", "bdmpiexec"), "-ns", "1"]))
    mpicc = shutil.which("mpicc.mpich") or shutil.which("mpicc")
    mpiexec = shutil.which("mpiexec.mpich") or shutil.which("mpiexec")
    if mpicc and mpiexec:
        progs.append(("MPICH", mpicc, [mpiexec, "-n", "1"]))
    for name, cc, _ in progs:
        subprocess.run([cc, "-O2", "-o", os.path.join(tmp, name), src], check=True)
    print(f"# self_rate.py: {a.rounds} alternating rounds, load {os.getloadavg()[0]:.1f}")
    for _ in range(a.rounds):
        for name, _, ex in progs:
            for k, v in run([*ex, os.path.join(tmp, name)]).items():
                runs.setdefault(name, {}).setdefault(k, []).append(v)
    names = [p[0] for p in progs]
    print("\n| test | " + " | ".join(f"{n} ns (best; all)" for n in names) + " | BDMPI/others |")
    print("|---|" + "---:|" * (len(names) + 1))
    for t in ("self_posted", "self_unexpected"):
        cells, best = [], {}
        for n in names:
            v = runs.get(n, {}).get(t, [])
            best[n] = min(v) if v else None
            cells.append(f"{min(v):.1f} ({', '.join(f'{x:.0f}' for x in v)})" if v else "-")
        ratios = ", ".join(f"{best['BDMPI'] / best[n]:.2f} vs {n}" for n in names[1:]
                           if best.get(n) and best.get("BDMPI"))
        print(f"| {t} | " + " | ".join(cells) + f" | {ratios} |")
    print(f"\n# load at the end {os.getloadavg()[0]:.1f}")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
