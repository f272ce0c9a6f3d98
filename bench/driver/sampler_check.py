#!/usr/bin/env python3
"""sampler_check.py BDMPIEXEC PROGRAM: bdbench.py's memory sampler takes
consistent snapshots.  Runs PROGRAM (tests/runtime/rank_memory: 8 ranks of
16 + 4 MiB under -mem 40M, -nr 1, their memory moving at every turn)
through bdbench's run_measured and checks:
  - a snapshot finds every counted process stopped (snapshot_mem, checked
    here on a job of its own before the measured one);
  - the job passes, and the processes were stopped at most 5% of its wall
    time in all (the sampler paces itself: STOP_PACE), with every CPU also
    busy with other work, as under ctest -j (session 26's sampler ran its
    snapshots at nice 19 and stopped the job 11-30% of such a run);
  - the peak (Pss_Anon + Pss_Shmem of the master and the ranks) is within
    -mem + 16 MiB + 512 KiB per rank, as tests/runtime/budget.sh checks
    with rss_watch.
Exit 0 pass, 1 fail."""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bdbench  # noqa: E402


def main():
    exe, prog = sys.argv[1], sys.argv[2]
    fail = 0
    wd = tempfile.mkdtemp(prefix="bdmpi-smp.")
    env = dict(os.environ, BDMPI_WD=wd)
    ns, budget = 8, 40
    cmd = [exe, "-ns", str(ns), "-nr", "1", "-mem", "%dM" % budget, prog, "16", "3"]
    # 1. every counted process stopped while read
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                         start_new_session=True)
    seen = 0
    t0 = time.monotonic()
    while p.poll() is None and time.monotonic() - t0 < 60:
        pids = [q for q in bdbench.tree_pids(p.pid) if q != p.pid]
        if len(pids) >= ns + 1:
            orig = bdbench.proc_mem
            states = []

            def probe(pid):
                states.append(bdbench._stopped(pid))
                return orig(pid)
            bdbench.proc_mem = probe
            try:
                bdbench.snapshot_mem(pids)
            finally:
                bdbench.proc_mem = orig
            if not all(states):
                print("FAIL: a snapshot read %d of %d processes not stopped" % (states.count(False), len(states)))
                fail = 1
            seen += 1
            if seen >= 5:
                break
        time.sleep(0.05)
    p.wait()
    if seen == 0:
        print("FAIL: no snapshot of the job was taken")
        fail = 1
    # 2. the measured run, the CPUs busy
    hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range((os.cpu_count() or 1) + 1)]
    try:
        r = bdbench.run_measured(cmd, os.path.join(wd, "out"), os.path.join(wd, "err"), env, 120, [], [],
                                 skip_root=True)
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    smp = r["sampler"]
    bound = (budget << 20) + (16 << 20) + ns * (512 << 10)
    print("rc %d, wall %.2f s, %d samples, stopped %.3f s, peak %d bytes, bound %d (ratio %.3f)"
          % (r["rc"], r["wall"], len(smp.timeline), smp.stopped_s, smp.peak_own, bound, smp.peak_own / bound))
    if r["rc"] != 0:
        print("FAIL: the job exited with %d" % r["rc"])
        fail = 1
    if not smp.timeline or smp.peak_own <= 0:
        print("FAIL: no sample")
        fail = 1
    if smp.stopped_s > 0.05 * r["wall"]:
        print("FAIL: the job was stopped %.3f s of %.2f s" % (smp.stopped_s, r["wall"]))
        fail = 1
    if smp.peak_own > bound:
        print("FAIL: peak %d over the bound %d" % (smp.peak_own, bound))
        fail = 1
    subprocess.call(["rm", "-rf", wd])
    print("PASS sampler_check" if not fail else "FAIL sampler_check")
    return fail


if __name__ == "__main__":
    sys.exit(main())
