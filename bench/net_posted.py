#!/usr/bin/env python3
"""net_posted.py: small messages between nodes, one build against another
(issue 12, session 17: small sends posted to the master without a request).

Builds bench/net_posted.c with each build's bdmpicc, then runs every mode
(rate, pp, flood) at each shape with both builds, alternating, --rounds
times, and prints the medians (us per message / ping-pong / round) and
new/base.  A timing: no assertion, read it with the load average it prints.

  bench/net_posted.py --base /tmp/build-main --new build --rounds 4
"""
import argparse, os, re, statistics, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument("--base", required=True, help="build directory of the baseline")
ap.add_argument("--new", required=True, help="build directory to measure")
ap.add_argument("--rounds", type=int, default=4)
ap.add_argument("--modes", default="rate:20000:-nn 2 -ns 1 -nr 1,pp:2000:-nn 2 -ns 1 -nr 1,"
                "flood:1000:-nn 2 -ns 4 -nr 4,flood:1000:-nn 1 -ns 8 -nr 8")
a = ap.parse_args()
tmp = tempfile.mkdtemp(prefix="net_posted.")
builds = {"base": os.path.abspath(a.base), "new": os.path.abspath(a.new)}
exe = {}
for k, b in builds.items():
    exe[k] = os.path.join(tmp, "net_posted_" + k)
    subprocess.run([os.path.join(b, "bin", "bdmpicc"), "-O2", "-o", exe[k],
                    os.path.join(HERE, "net_posted.c")], check=True)
print("load average:", open("/proc/loadavg").read().split()[:3])
for spec in a.modes.split(","):
    mode, n, shape = spec.split(":")
    res = {k: [] for k in builds}
    for _ in range(a.rounds):
        for k, b in builds.items():
            env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(b, "lib"))
            out = subprocess.run([os.path.join(b, "bin", "bdmpiexec")] + shape.split() +
                                 [exe[k], mode, n], env=env, capture_output=True, text=True,
                                 timeout=600).stdout
            m = re.search(r"RESULT \S+ ([0-9.]+)", out)
            if not m:
                sys.exit(f"no result from {k} {mode} {shape}: {out[-500:]}")
            res[k].append(float(m.group(1)))
    mb, mn = statistics.median(res["base"]), statistics.median(res["new"])
    print(f"{mode:5} n={n:>5} {shape:18}  base {mb:9.2f} us  new {mn:9.2f} us  new/base {mn / mb:5.2f}"
          f"   (base {' '.join('%.1f' % x for x in res['base'])}; new {' '.join('%.1f' % x for x in res['new'])})")
print("load average:", open("/proc/loadavg").read().split()[:3])
