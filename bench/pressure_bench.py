#!/usr/bin/env python3
"""pressure_bench.py: the adaptive budget (-mem-adapt, issue 16) under a
square wave of memory pressure from another process.

PageRank runs under bdmpiexec inside a memory cgroup (v2 memory.max, or v1
memory.limit_in_bytes) while a second process in the same cgroup takes
--hog of memory, holds it for --period seconds, frees it for --period
seconds, and so on until the job ends (tests' mem_hog, started once per
period).  Three runs, in one invocation:

  alone        the job in the cgroup, no other process       (-mem-adapt on)
  wave         the job and the square wave                   (-mem-adapt on)
  wave, off    the job and the square wave, fixed budget     (-mem-adapt off)

For each: seconds per iteration (PageRank's own line), wall time, the job's
peak memory (Pss_Anon + Pss_Shmem summed over the master and the ranks,
sampled every 20 ms), the lowest budget and the number of budget changes
(--stats), the OOM kills the cgroup recorded and whether the answer matched
the 'alone' run's.  Ratios are against 'alone'.  Needs root and a cgroup
memory controller; prints why and exits 77 otherwise.

    bench/pressure_bench.py --build-dir build            # ~2-4 minutes
    bench/pressure_bench.py --build-dir build --graph G --mem 48M --ns 16 --limit 128M --hog 64M
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "driver"))
from bdbench import parse_size, proc_mem, tree_pids  # noqa: E402


def cgroup_parent():
    """(directory, limit file, usage file) of a cgroup we may create children in."""
    with open("/proc/self/cgroup") as f:
        lines = [l.rstrip("\n").split(":", 2) for l in f]
    for hid, ctrls, path in lines:
        if "memory" in ctrls.split(","):
            d = "/sys/fs/cgroup/memory" + path
            if os.path.isdir(d):
                return d, "memory.limit_in_bytes", "memory.usage_in_bytes"
    mnt = None
    with open("/proc/self/mountinfo") as f:
        for line in f:
            parts = line.split()
            if "cgroup2" in parts[parts.index("-") + 1:parts.index("-") + 2]:
                mnt = parts[4]
                break
    for hid, ctrls, path in lines:
        if hid == "0" and mnt:
            d = mnt + path
            try:
                with open(os.path.join(d, "cgroup.subtree_control")) as f:
                    if "memory" in f.read().split():
                        return d, "memory.max", "memory.current"
            except OSError:
                pass
    return None


def oom_kills(cg, limitf):
    name = "memory.events" if limitf == "memory.max" else "memory.oom_control"
    try:
        with open(os.path.join(cg, name)) as f:
            for line in f:
                k, _, v = line.partition(" ")
                if k == "oom_kill":
                    return int(v)
    except OSError:
        pass
    return 0


class Wave(threading.Thread):
    """Runs mem_hog (take, hold a period, free) then sleeps a period, again
    and again, inside the cgroup, until stopped."""

    def __init__(self, hog, mib, period, cg):
        super().__init__(daemon=True)
        self.hog, self.mib, self.period, self.cg = hog, mib, period, cg
        self.stop = threading.Event()
        self.cycles = self.failed = 0
        self.proc = None

    def run(self):
        ms = int(self.period * 1000)
        while not self.stop.is_set():
            # 8 MiB steps every 10 ms: the pressure arrives within a fraction
            # of the period, as a job starting would.
            self.proc = subprocess.Popen([self.hog, str(self.mib), "8", "10", str(ms)],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                         preexec_fn=lambda: open(os.path.join(self.cg, "cgroup.procs"),
                                                                 "w").write(str(os.getpid())))
            rc = self.proc.wait()
            self.cycles += 1
            if rc != 0:
                self.failed += 1
            self.stop.wait(self.period)

    def end(self):
        self.stop.set()
        p = self.proc
        if p and p.poll() is None:
            p.kill()
            p.wait()
        self.join()


def run_job(args, mode, wave):
    parent, limitf, _ = args.cg
    cg = os.path.join(parent, "bdmpi-pressure-%d-%s" % (os.getpid(), mode.replace(" ", "")))
    os.mkdir(cg)
    try:
        with open(os.path.join(cg, limitf), "w") as f:
            f.write(str(args.limit))
        exe = os.path.join(args.build_dir, "bin", "bdmpiexec")
        app = os.path.join(args.build_dir, "apps", "pagerank")
        adapt = "off" if "off" in mode else "on"
        cmd = [exe] + (["-verbose", "2"] if args.log else []) + ["-ns", str(args.ns), "-nr", "1", "-mem", args.mem, "-mem-adapt", adapt,
               "-mem-strategy", args.strategy, "-mem-threshold", args.mem_threshold, "-sbpage", "64K",
               "-wd", args.wd, "--stats", app, "-i", str(args.iters),
               "-t", "10", args.graph]
        subprocess.run(["sync"])
        try:
            with open("/proc/sys/vm/drop_caches", "w") as f:
                f.write("3\n")
        except OSError:
            pass
        out = tempfile.TemporaryFile()
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                             preexec_fn=lambda: open(os.path.join(cg, "cgroup.procs"), "w").write(
                                 str(os.getpid())))
        w = None
        if wave:
            w = Wave(args.hog_exe, args.hog >> 20, args.period, cg)
            w.start()
        peak = 0
        deadline = t0 + args.timeout
        while p.poll() is None:
            if time.monotonic() > deadline:
                os.killpg(p.pid, signal.SIGKILL)
                break
            tot = 0
            for pid in tree_pids(p.pid):
                tot += proc_mem(pid)[0]
            peak = max(peak, tot)
            time.sleep(0.02)
        rc = p.wait()
        wall = time.monotonic() - t0
        if w:
            w.end()
        out.seek(0)
        text = out.read().decode(errors="replace")
        if args.log:
            os.makedirs(args.log, exist_ok=True)
            with open(os.path.join(args.log, mode.replace(" ", "-") + ".out"), "w") as f:
                f.write(text)
        r = dict(mode=mode, rc=rc, wall=wall, peak=peak, kills=oom_kills(cg, limitf),
                 cycles=w.cycles if w else 0, hog_failed=w.failed if w else 0, text=text)
        m = re.search(r"per-iteration ([0-9.]+)", text)
        r["s_iter"] = float(m.group(1)) if m else None
        m = re.search(r"adaptive budget: ceiling (\d+) bytes, lowest (\d+), (\d+) changes, ([0-9.]+) s below",
                      text)
        r["budget"] = tuple(float(x) for x in m.groups()) if m else None
        r["answer"] = [l for l in text.splitlines() if re.match(r"^(sum|top) ", l)]
        return r
    finally:
        for _ in range(20):
            try:
                os.rmdir(cg)
                break
            except OSError:
                time.sleep(0.25)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--graph", help="an existing graph (else one is generated in --data-dir)")
    ap.add_argument("--data-dir", default="/tmp/bdbench-data")
    ap.add_argument("--scale", type=int, default=20)
    ap.add_argument("--edges", type=int, default=48)
    ap.add_argument("--mem", default="24M", help="the budget's ceiling (-mem)")
    ap.add_argument("--ns", type=int, default=32)
    ap.add_argument("--strategy", default="arlw")
    ap.add_argument("--mem-threshold", default="64K",
                    help="-mem-threshold: low enough that the ranks' arrays are managed")
    ap.add_argument("--limit", default="96M", help="the cgroup's memory limit")
    ap.add_argument("--hog", default="48M", help="what the other process takes in each high phase")
    ap.add_argument("--period", type=float, default=2.0, help="seconds high, then seconds low")
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--modes", default="alone,wave,wave off")
    ap.add_argument("--log", help="directory for each run's output (with -verbose 2: every budget change)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("SKIP: needs root to create a cgroup")
        return 77
    args.cg = cgroup_parent()
    if not args.cg:
        print("SKIP: no cgroup memory controller to use")
        return 77
    args.build_dir = os.path.abspath(args.build_dir)
    args.limit, args.hog = parse_size(args.limit), parse_size(args.hog)
    args.hog_exe = os.path.join(args.build_dir, "tests", "mem_hog")
    os.makedirs(args.data_dir, exist_ok=True)
    args.wd = tempfile.mkdtemp(prefix="pressure-", dir=args.data_dir)
    if not args.graph:
        args.graph = os.path.join(args.data_dir, "pressure-rmat-%d-%d.csr" % (args.scale, args.edges))
        if not os.path.exists(args.graph):
            gen = os.path.join(args.build_dir, "apps", "bdmpi-gen")
            subprocess.run([gen, "rmat", "-s", str(args.scale), "-e", str(args.edges), "--seed", "1", "-o",
                            args.graph], check=True, stdout=subprocess.DEVNULL)
    d = os.path.getsize(args.graph)
    print("pressure_bench: PageRank on %s (%.1f MB), -ns %d -nr 1 -mem %s (D/M %.1f), cgroup limit %.0f MiB, "
          "square wave %.0f MiB for %.1f s then free for %.1f s; load %s" %
          (args.graph, d / 1e6, args.ns, args.mem, d / parse_size(args.mem), args.limit / 2**20,
           args.hog / 2**20, args.period, args.period, open("/proc/loadavg").read().split()[0]))
    res = []
    try:
        for mode in args.modes.split(","):
            r = run_job(args, mode, mode != "alone")
            res.append(r)
            print("  %-9s rc %d, %s" % (mode, r["rc"], r["text"].strip().splitlines()[-1][:100]
                                       if r["rc"] else "done"), flush=True)
    finally:
        subprocess.run(["rm", "-rf", args.wd])
    base = next((r for r in res if r["mode"] == "alone" and r["rc"] == 0), None)
    print("\n| run | status | s/iter | wall s | vs alone | peak job MiB | lowest budget MiB | budget "
          "changes | s below ceiling | hog cycles | OOM kills | answer |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in res:
        b = r["budget"]
        ok = "done" if r["rc"] == 0 else "failed (%d)" % r["rc"]
        same = "-" if not base or r["rc"] else ("same" if r["answer"] == base["answer"] else "DIFFERS")
        ratio = "%.2f" % (r["wall"] / base["wall"]) if base and r["rc"] == 0 else "-"
        print("| %s | %s | %s | %.1f | %s | %.1f | %s | %s | %s | %d | %d | %s |" %
              (r["mode"], ok, "%.3f" % r["s_iter"] if r["s_iter"] else "-", r["wall"], ratio,
               r["peak"] / 2**20, "%.1f" % (b[1] / 2**20) if b else "-", "%d" % b[2] if b else "-",
               "%.1f" % b[3] if b else "-", r["cycles"], r["kills"], same))
    return 0


if __name__ == "__main__":
    sys.exit(main())
