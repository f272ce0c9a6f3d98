#!/usr/bin/env python3
"""startup_bench.py: the wall time of a short job at -nn 2 against -nn 1, for
two builds of BDMPI, runs alternating (a nn1, a nn2, b nn1, b nn2, ...) so
that both ratios come from one invocation on a noisy machine.

    bench/startup_bench.py --a /tmp/base/build --b build --reps 20

The program (built with each build's bdmpicc) is MPI_Init, one MPI_Allreduce
of a double and MPI_Finalize, or MPI_Init and MPI_Finalize alone with
--empty; --prog PATH runs an existing program (built by the caller) with
both builds instead.  nn1 is `-nn 1 -ns 2N -nr 2N`, nn2 is
`-nn 2 -ns N -nr N` (N from --ns, default 1).  Prints per build the median
wall time of each shape, nn2/nn1 of the medians, and b/a per shape.
Without --b, only --a is run."""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

PROG = r"""
#include <mpi.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    double x = 1, y = 0;
    if (!EMPTY)
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
"""


def build_prog(build, empty, tmp, tag):
    src = os.path.join(tmp, "startup.c")
    with open(src, "w") as f:
        f.write(PROG.replace("EMPTY", "1" if empty else "0"))
    exe = os.path.join(tmp, "startup_" + tag)
    subprocess.run([os.path.join(build, "bin", "bdmpicc"), "-O2", "-o", exe, src], check=True)
    return exe


def run(build, exe, nn, ns, timeout):
    cmd = [os.path.join(build, "bin", "bdmpiexec"), "-nn", str(nn), "-ns", str(ns), "-nr", str(ns), exe]
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout)
    t = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr.decode(errors="replace")))
    return t


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True, help="build directory A (the baseline)")
    ap.add_argument("--b", help="build directory B")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--ns", type=int, default=1, help="ranks per master at -nn 2")
    ap.add_argument("--empty", action="store_true", help="MPI_Init and MPI_Finalize only")
    ap.add_argument("--prog", help="run this program instead of the built-in one")
    ap.add_argument("--timeout", type=float, default=60)
    a = ap.parse_args()
    builds = [("a", os.path.abspath(a.a))] + ([("b", os.path.abspath(a.b))] if a.b else [])
    with tempfile.TemporaryDirectory(prefix="startup_bench.") as tmp:
        exes = {tag: a.prog or build_prog(b, a.empty, tmp, tag) for tag, b in builds}
        times = {(tag, nn): [] for tag, _ in builds for nn in (1, 2)}
        for _ in range(a.reps):
            for tag, b in builds:
                for nn in (1, 2):
                    times[(tag, nn)].append(run(b, exes[tag], nn, a.ns * (3 - nn), a.timeout))
    med = {k: statistics.median(v) * 1000 for k, v in times.items()}
    load = os.getloadavg()[0]
    print("reps %d, -ns %d at nn2, %s, load %.1f" %
          (a.reps, a.ns, a.prog or ("MPI_Init+MPI_Finalize" if a.empty else "MPI_Init+Allreduce+Finalize"), load))
    print("%-6s %10s %10s %8s" % ("build", "nn1 ms", "nn2 ms", "nn2/nn1"))
    for tag, b in builds:
        print("%-6s %10.1f %10.1f %8.2f   (%s)" % (tag, med[(tag, 1)], med[(tag, 2)],
                                                  med[(tag, 2)] / med[(tag, 1)], b))
    if a.b:
        print("b/a    %10.2f %10.2f" % (med[("b", 1)] / med[("a", 1)], med[("b", 2)] / med[("a", 2)]))


if __name__ == "__main__":
    main()
