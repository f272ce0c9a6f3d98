#!/usr/bin/env python3
"""remote_bench.py: the remote-memory tier (-mem-remote, issue 16) against
local storage, as ratios within one invocation.

PageRank on two nodes of this machine (-nn 2, MPICH's fork launcher):
node 0's budget is a fraction of its ranks' data (--mem0), node 1's is
plenty (--mem1), so node 0 unloads every iteration and node 1 never does.
The same run is made with -mem-remote on and off, alternating, --reps
times each.  Prints per run the median seconds per iteration (iterations
2..N), the wall time, the CPU time of the whole job (user + system of every
process of it: what the tier costs the machine, and less disturbed by the
other work on it than the times), what node 0 wrote to its storage, what
went to node 1's memory and came back, and at the end the medians and the
on/off ratios.  The load of the machine (uptime) is printed before and
after: on a shared 2-core machine the ratios, not the times, are what can
be compared.  A
measurement, not a test: exit 0 whichever wins (1 if a run fails or the
answers differ).

    nice bench/remote_bench.py --build-dir build                 # ~1 minute
    nice bench/remote_bench.py --build-dir build --scale 21 --mem0 48M --reps 5
    nice bench/remote_bench.py --build-dir build --baseline /tmp/base/build  # before/after

With --baseline, the runs of another build (say, main's) alternate with
this one's in the same invocation (baseline on, off, this on, off, ...), so
that both see the same load, and the medians of both are printed.
"""
import argparse
import os
import resource
import re
import statistics
import subprocess
import sys
import tempfile

STAT = re.compile(r"^\s+(MEM_WRITTEN|MEM_READ|MEM_RMT_STORED|MEM_RMT_READ|MEM_RMT_AHEAD|MEM_RMT_AHEAD_NEXT|"
                  r"MEM_RMT_AHEAD_READY|MEM_RMT_FALLBACK|"
                  r"MEM_PEAK)\s+(\d+)", re.M)


def run(args, build, graph, wd, remote):
    exe = os.path.join(build, "bin", "bdmpiexec")
    pagerank = os.path.join(build, "apps", "pagerank")
    cmd = [exe, "-nn", "2", "-ns", str(args.ns), "-nr", "1", "-mem", args.mem1, "-mem-node",
           "%s,%s" % (args.mem0, args.mem1), "-mem-threshold", "64K", "-mem-remote", remote,
           "-wd", wd, "--stats", pagerank, "-i", str(args.iters), "-t", "10", graph]
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    # every process of the job (masters, ranks, launcher) is reaped by its
    # parent, so its CPU time ends up in bdmpiexec's children's totals
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    if p.returncode != 0:
        sys.exit("remote_bench: run failed (%d): %s\n%s" % (p.returncode, " ".join(cmd),
                                                            p.stderr[-2000:]))
    its = [float(t) for _, t in re.findall(r"^iter (\d+) time ([0-9.]+)", p.stdout, re.M)]
    wall = float(re.search(r"where the time went: ([0-9.]+) s wall", p.stderr).group(1))
    stats = {}
    for k, v in STAT.findall(p.stderr):  # both nodes' tables: summed
        stats[k] = stats.get(k, 0) + int(v)
    top = re.findall(r"^top .*$", p.stdout, re.M)
    return its, wall, cpu, stats, top


def uptime():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build-dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build"))
    ap.add_argument("--graph", help="an existing graph (else one is generated in --data-dir)")
    ap.add_argument("--data-dir", default=os.path.join(tempfile.gettempdir(), "bdmpi-remote-bench"))
    ap.add_argument("--scale", type=int, default=20)
    ap.add_argument("--edges", type=int, default=16)
    ap.add_argument("--mem0", default="24M", help="node 0's budget (about a quarter of its data)")
    ap.add_argument("--mem1", default="1G", help="node 1's budget (room for both nodes' data)")
    ap.add_argument("--ns", type=int, default=8, help="ranks per node")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--iters", type=int, default=6)
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--baseline", help="another build directory whose runs alternate with these")
    args = ap.parse_args()
    b = os.path.abspath(args.build_dir)
    builds = [("", b)]
    if args.baseline:
        builds = [("base ", os.path.abspath(args.baseline)), ("", b)]
    os.makedirs(args.data_dir, exist_ok=True)
    graph = args.graph or os.path.join(args.data_dir, "g%d-%d.csr" % (args.scale, args.edges))
    if not os.path.exists(graph):
        subprocess.run([os.path.join(b, "apps", "bdmpi-gen"), "rmat", "-s", str(args.scale), "-e",
                        str(args.edges), "--seed", "1", "-o", graph], check=True, capture_output=True)
    wd = os.path.join(args.data_dir, "spill")
    os.makedirs(wd, exist_ok=True)
    print("graph %s (%.1f MB), -nn 2 -ns %d -nr 1, budgets node 0 %s, node 1 %s, %d iterations, "
          "%d runs each, load %s" % (graph, os.path.getsize(graph) / 1e6, args.ns, args.mem0,
                                     args.mem1, args.iters, args.reps, uptime()))
    print("%-9s %9s %8s %6s %11s %11s %10s %8s %9s %8s %9s" % ("run", "s/iter", "wall s", "cpu s", "disk wr MB",
                                                              "disk rd MB", "remote MB", "back MB",
                                                              "ahead MB", "next MB", "ready MB"))
    res = {}
    answer = None
    for _ in range(args.reps):
        for tag, build in builds:
            for remote in ("on", "off"):
                its, wall, cpu, st, top = run(args, build, graph, wd, remote)
                if answer is None:
                    answer = top
                elif top != answer:
                    sys.exit("remote_bench: the answers differ between runs")
                steady = statistics.median(its[1:] or its)
                r = res.setdefault(tag + remote, ([], [], []))
                r[0].append(steady)
                r[1].append(wall)
                r[2].append(cpu)
                print("%-9s %9.3f %8.2f %6.2f %11.1f %11.1f %10.1f %8.1f %9.1f %8.1f %9.1f" % (
                    tag + remote, steady, wall, cpu, st.get("MEM_WRITTEN", 0) / 1e6,
                    st.get("MEM_READ", 0) / 1e6, st.get("MEM_RMT_STORED", 0) / 1e6,
                    st.get("MEM_RMT_READ", 0) / 1e6, st.get("MEM_RMT_AHEAD", 0) / 1e6,
                    st.get("MEM_RMT_AHEAD_NEXT", 0) / 1e6, st.get("MEM_RMT_AHEAD_READY", 0) / 1e6))
                sys.stdout.flush()
    for tag, _ in builds:
        on_it, off_it = (statistics.median(res[tag + k][0]) for k in ("on", "off"))
        on_w, off_w = (statistics.median(res[tag + k][1]) for k in ("on", "off"))
        on_c, off_c = (statistics.median(res[tag + k][2]) for k in ("on", "off"))
        print("%smedian s/iter: on %.3f, off %.3f, on/off %.2f; median wall: on %.2f, off %.2f, "
              "on/off %.2f; median cpu: on %.2f, off %.2f, on/off %.2f" % (
                  tag or "this: ", on_it, off_it, on_it / off_it, on_w, off_w, on_w / off_w,
                  on_c, off_c, on_c / off_c))
    if args.baseline:
        # the two builds against each other, mode by mode (same invocation, same load)
        for k in ("on", "off"):
            t, base = res[k], res["base " + k]
            print("this/base %-3s: s/iter %.2f, wall %.2f, cpu %.2f" % (
                k, statistics.median(t[0]) / statistics.median(base[0]),
                statistics.median(t[1]) / statistics.median(base[1]),
                statistics.median(t[2]) / statistics.median(base[2])))
    print("load %s" % uptime())


if __name__ == "__main__":
    main()
