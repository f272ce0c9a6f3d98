#!/usr/bin/env python3
"""stage_bench.py: the transient memory of a blocking MPI_Alltoallv through
the masters (issue 17; also gathers, scatters, nonblocking all-to-alls,
broadcasts, allgathers and two communicators at once, --prog/--mode), bounded (-coll-stage BOUND) against staged whole
(-coll-stage 0), alternating, in one invocation.  Runs the test program
build/tests/flow (every byte checked) and reads --stats: each master's
STAGE_PEAK (collective data staged at once, memory and spill files) and
SPILL_PEAK, and the wall time.  Peaks are exact counts; times are
indicative on a loaded machine (the load average is printed).

  bench/stage_bench.py --build-dir build --nodes 2 --ns 4 --nr 1 --piece 1M --bound 2M --rounds 3
"""
import argparse
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def size(s):
    m = re.fullmatch(r"(\d+)([KMG]?)", s)
    if not m:
        raise argparse.ArgumentTypeError(f"bad size {s}")
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)]


def run(a, bound):
    bd = os.path.abspath(a.build_dir)
    cmd = [os.path.join(bd, "bin", "bdmpiexec"), "-nn", str(a.nodes), "-ns", str(a.ns), "-nr", str(a.nr),
           "-coll-stage", str(bound), "--stats", *a.extra, os.path.join(bd, "tests", a.prog), a.mode,
           "1", str(a.piece)]
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    wall = time.monotonic() - t0
    if p.returncode or f"{a.prog} {a.mode}: ok" not in p.stdout:
        sys.exit(f"stage_bench: {' '.join(cmd)} failed ({p.returncode}):\n{p.stdout[-2000:]}")
    stat = {}
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) > 2 and f[0] in ("STAGE_PEAK", "SPILL_PEAK"):
            stat[f[0]] = max(stat.get(f[0], 0), int(f[1]))  # the largest over the nodes
    return stat.get("STAGE_PEAK", 0), stat.get("SPILL_PEAK", 0), wall, " ".join(cmd)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default=os.path.join(os.path.dirname(HERE), "build"))
    ap.add_argument("--nodes", type=int, default=2)
    ap.add_argument("--ns", type=int, default=4, help="ranks per node")
    ap.add_argument("--nr", type=int, default=1)
    ap.add_argument("--piece", type=size, default=size("1M"))
    ap.add_argument("--bound", type=size, default=size("2M"))
    ap.add_argument("--prog", default="flow",
                    help="test program: flow, flow_ia2a (nonblocking all-to-alls), or flow_bcast "
                    "(broadcasts, allgathers, two communicators)")
    ap.add_argument("--mode", default="a2a",
                    help="its mode: flow a2a (Alltoallv), a2az, a2af (Alltoall), gather, scatter; "
                    "flow_ia2a wait, test, fixed, w, recv, probe, two, order; "
                    "flow_bcast bcast, bcast_vec, allgather, allgatherv, allgather_ip, two, two_dep")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("extra", nargs="*", help="more bdmpiexec options (after --)")
    a = ap.parse_args()
    print(f"# stage_bench.py: {a.rounds} alternating rounds, load {os.getloadavg()[0]:.1f}")
    res = {}
    for _ in range(a.rounds):
        for b in (a.bound, 0):
            stage, spill, wall, cmd = run(a, b)
            r = res.setdefault(b, {"stage": stage, "spill": spill, "walls": [], "cmd": cmd})
            r["stage"], r["spill"] = max(r["stage"], stage), max(r["spill"], spill)
            r["walls"].append(wall)
    print("\n| -coll-stage | STAGE_PEAK (largest master) | SPILL_PEAK | wall s (best; all) |")
    print("|---|---:|---:|---:|")
    for b in (a.bound, 0):
        r = res[b]
        print(f"| {b or '0 (whole)'} | {r['stage']:,} | {r['spill']:,} | {min(r['walls']):.2f} "
              f"({', '.join(f'{w:.2f}' for w in r['walls'])}) |")
    bnd, whole = res[a.bound], res[0]
    print(f"\nbounded/whole: STAGE_PEAK {bnd['stage'] / max(whole['stage'], 1):.3f}, "
          f"wall (best) {min(bnd['walls']) / min(whole['walls']):.2f}")
    print(f"# commands: {bnd['cmd']}\n#           {whole['cmd']}")
    print(f"# load at the end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
