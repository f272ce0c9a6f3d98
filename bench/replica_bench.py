#!/usr/bin/env python3
"""replica_bench: what storing identical memory once buys an application
(issue 17), measured as ratios within one invocation.

The application is K-means with a replicated vocabulary (apps/kmeans -V
MIB: every rank holds the same table of term weights, as text-clustering
codes hold their dictionary).  Two settings, each run with the technique
off and on, alternating, REPS times:

  in memory    -mem large enough for everything; -mem-share off/on (KSM
               merges identical resident pages; ksmd is switched on with a
               fast scan rate for the runs and put back afterwards).
               Footprint = the job's resident memory (PSS anon+shmem summed
               over the master and ranks, sampled every 50 ms): its peak and
               its mean over the second half of the run (KSM merges while
               the job runs).  A run with -V 0 gives the footprint without
               the vocabulary, so the replicated part is known.
  out of core  -mem a fraction of the data; -mem-dedup off/on (an sbpage
               equal to a copy already stored on the node is stored by
               reference).  Bytes the manager wrote (MEM_WRITTEN, MEM_DEDUP)
               and the wall time; the page cache of the input and the spill
               directory is dropped while the job runs, as bdbench does.

Prints a table per setting with medians and on/off ratios, and the
footprint reduction to compare with SBLLmalloc's (32% on average in its
paper).  Needs root for KSM; without it the in-memory part is skipped.

  bench/replica_bench.py --build-dir build --ns 16 --vocab 16,64 --rows 200000 \\
      --iters 20 --ooc-mem 256M --reps 2
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "driver"))
import bdbench  # noqa: E402  (run_measured, parse_stats, parse_app_output, drop_cache_tree)

KSM = "/sys/kernel/mm/ksm"


def ksm_start():
    """Switch ksmd on with a fast scan; returns the settings to put back, or None."""
    try:
        old = {k: open(os.path.join(KSM, k)).read().strip() for k in ("run", "pages_to_scan", "sleep_millisecs")}
        for k, v in (("pages_to_scan", "4000"), ("sleep_millisecs", "20"), ("run", "1")):
            with open(os.path.join(KSM, k), "w") as f:
                f.write(v)
        return old
    except OSError as e:
        print("note: KSM not available (%s): in-memory part skipped" % e)
        return None


def ksm_restore(old):
    for k in ("pages_to_scan", "sleep_millisecs", "run"):
        try:
            with open(os.path.join(KSM, k), "w") as f:
                f.write(old[k])
        except OSError:
            pass


def one(a, wd, label, vocab, extra, evict, iters=None):
    cmd = [a.exe, "-ns", str(a.ns), "-nr", str(a.nr), "--stats"] + extra + [
        a.kmeans, "-k", "16", "-i", str(iters or a.iters), "-s", "1", "-V", str(vocab), a.input]
    env = dict(os.environ, BDMPI_WD=wd)
    out, err = os.path.join(wd, "..", label + ".out"), os.path.join(wd, "..", label + ".err")
    if evict:
        bdbench.drop_cache_tree(wd)
        bdbench.drop_cache_file(a.input)
    r = bdbench.run_measured(cmd, out, err, env, a.timeout, [wd] if evict else [], [a.input] if evict else [],
                             skip_root=True)
    text = open(out).read()
    st = bdbench.parse_stats(open(err).read())
    app = bdbench.parse_app_output(text)
    terms = [l for l in text.splitlines() if l.startswith("terms ")]
    tl = r["sampler"].timeline
    half = [own for t, own, _, _ in tl if t >= r["wall"] / 2] or [0]
    tail = [own for t, own, _, _ in tl if t >= r["wall"] * 0.9] or [0]
    res = dict(rc=r["rc"], wall=r["wall"], per_iter=app["per_iter"], peak=r["sampler"].peak_own,
               late=statistics.mean(half), end=statistics.mean(tail), written=st.get("MEM_WRITTEN", 0), dedup=st.get("MEM_DEDUP", 0),
               read=st.get("MEM_READ", 0), ksm=st.get("MEM_KSM", 0), terms=terms[-1] if terms else None,
               dev_write=r["io"].get("write_bytes", 0))
    ok = r["rc"] == 0 and not r["timed_out"] and (vocab == 0 or res["terms"])
    print("  %-34s exit %d wall %.2f s per-iter %s peak %s late %s end %s written %s dedup %s ksm %s" % (
        label, r["rc"], r["wall"], "%.3f" % app["per_iter"] if app["per_iter"] else "-", bdbench.human(res["peak"]),
        bdbench.human(res["late"]), bdbench.human(res["end"]), bdbench.human(res["written"]), bdbench.human(res["dedup"]),
        bdbench.human(res["ksm"])), flush=True)
    if not ok:
        sys.exit("run %s failed: see %s and %s" % (label, out, err))
    return res


def med(rs, k):
    return statistics.median(r[k] for r in rs)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--ns", type=int, default=16)
    ap.add_argument("--nr", type=int, default=1)
    ap.add_argument("--vocab", default="16,64", help="vocabulary sizes per rank, MiB, comma-separated")
    ap.add_argument("--rows", type=int, default=200000, help="documents to generate (5000 columns, 80 terms each)")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--mem-iters", type=int, help="iterations of the in-memory runs (default --iters): "
                    "KSM needs time to scan large vocabularies")
    ap.add_argument("--mem", default="8G", help="-mem of the in-memory runs")
    ap.add_argument("--ooc-mem", default="256M", help="-mem of the out-of-core runs")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--skip", default="", help="'mem' or 'ooc' to leave that part out")
    a = ap.parse_args()
    b = os.path.abspath(a.build_dir)
    a.exe, a.kmeans = os.path.join(b, "bin", "bdmpiexec"), os.path.join(b, "apps", "kmeans")
    vocabs = [int(v) for v in a.vocab.split(",")]
    top = tempfile.mkdtemp(prefix="replica-", dir=os.environ.get("BENCH_DIR", "/var/tmp"))
    wd = os.path.join(top, "wd")
    os.mkdir(wd)
    a.input = os.path.join(top, "docs.csr")
    subprocess.run([os.path.join(b, "apps", "bdmpi-gen"), "docs", "-r", str(a.rows), "-c", "5000", "-l", "80",
                    "--seed", "1", "-o", a.input], check=True, stderr=subprocess.DEVNULL)
    print("input %s (%s), %d ranks, -nr %d, %d iterations, load %s" % (
        a.input, bdbench.human(os.path.getsize(a.input)), a.ns, a.nr, a.iters, os.getloadavg()))
    try:
        if "mem" not in a.skip:
            old = ksm_start()
            if old:
                try:
                    print("in memory (-mem %s): -mem-share off/on" % a.mem)
                    base = [one(a, wd, "mem.V0.%d" % i, 0, ["-mem", a.mem, "-mem-share", "off"], False, a.mem_iters)
                            for i in range(a.reps)]
                    for v in vocabs:
                        runs = {"off": [], "on": []}
                        for i in range(a.reps):
                            for s in ("off", "on") if i % 2 == 0 else ("on", "off"):
                                runs[s].append(one(a, wd, "mem.V%d.%s.%d" % (v, s, i), v,
                                                   ["-mem", a.mem, "-mem-share", s], False, a.mem_iters))
                        repl = med(runs["off"], "late") - med(base, "late")
                        print("| -V %d MiB x %d ranks | share off | share on | on/off |" % (v, a.ns))
                        print("|---|---:|---:|---:|")
                        for k, name in (("late", "footprint, 2nd half (mean)"), ("end", "footprint, last 10% (mean)"),
                                        ("peak", "footprint, peak")):
                            print("| %s | %s | %s | %.2f |" % (name, bdbench.human(med(runs["off"], k)),
                                                              bdbench.human(med(runs["on"], k)),
                                                              med(runs["on"], k) / max(1, med(runs["off"], k))))
                        print("| s/iter | %.3f | %.3f | %.2f |" % (med(runs["off"], "per_iter"), med(runs["on"], "per_iter"),
                                                                   med(runs["on"], "per_iter") / med(runs["off"], "per_iter")))
                        print("without the vocabulary: footprint %s (2nd half); the replicated part %s, of which "
                              "%d/%d is redundant (%s); KSM saved %s = %.0f%% of the footprint, %.0f%% of the redundant part"
                              % (bdbench.human(med(base, "late")), bdbench.human(repl), a.ns - 1, a.ns,
                                 bdbench.human(repl * (a.ns - 1) / a.ns),
                                 bdbench.human(med(runs["off"], "late") - med(runs["on"], "late")),
                                 100.0 * (1 - med(runs["on"], "late") / med(runs["off"], "late")),
                                 100.0 * (med(runs["off"], "late") - med(runs["on"], "late"))
                                 / max(1, repl * (a.ns - 1) / a.ns)))
                finally:
                    ksm_restore(old)
        if "ooc" not in a.skip:
            print("out of core (-mem %s): -mem-dedup off/on" % a.ooc_mem)
            for v in vocabs:
                runs = {"off": [], "on": []}
                for i in range(a.reps):
                    for s in ("off", "on") if i % 2 == 0 else ("on", "off"):
                        runs[s].append(one(a, wd, "ooc.V%d.%s.%d" % (v, s, i), v,
                                           ["-mem", a.ooc_mem, "-mem-dedup", s], True))
                print("| -V %d MiB x %d ranks | dedup off | dedup on | on/off |" % (v, a.ns))
                print("|---|---:|---:|---:|")
                for k, name in (("written", "managed memory written"), ("dev_write", "bytes written to the device"),
                                ("read", "managed memory read"), ("dedup", "stored by reference (MEM_DEDUP)")):
                    off, on = med(runs["off"], k), med(runs["on"], k)
                    print("| %s | %s | %s | %s |" % (name, bdbench.human(off), bdbench.human(on),
                                                     "%.2f" % (on / off) if off else "-"))
                for k, name in (("per_iter", "s/iter"), ("wall", "wall, s")):
                    off, on = med(runs["off"], k), med(runs["on"], k)
                    print("| %s | %.3f | %.3f | %.2f |" % (name, off, on, on / off))
    finally:
        subprocess.run(["rm", "-rf", top])


if __name__ == "__main__":
    main()
