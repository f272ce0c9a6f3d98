#!/usr/bin/env python3
"""evict_check.py: bdbench.py keeps the page cache from serving a run's
input, whatever its memory snapshots cost.

1. Cadence: with snapshots made slow (each stops the job 20 ms, so they
   are paced to one a second), the sampler still ages the run's files
   every SAMPLE_DT.  Session 26 found the two paced together: a process in
   a long read holds up its stop, and Serial-ooc was then evicted for about
   once a second and read 4 of its 5 passes over its input from the cache.
2. End to end: a process reading a 32 MiB file 6 times, 0.25 s apart, reads
   it from the device every time (/proc/PID/io read_bytes of the run), at
   least 4.5 passes' worth.  Skipped (77) where the file's directory does
   not count device reads (tmpfs, or read_bytes not reported).
Exit 0 pass, 1 fail, 77 skip."""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bdbench  # noqa: E402

SIZE = 32 << 20
READER = r"""
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
for _ in range(6):
    off = 0
    while off < %d:
        off += len(os.pread(fd, 8 << 20, off))
    time.sleep(0.25)
""" % SIZE


def cadence(path):
    calls = []
    orig_evict, orig_snap = bdbench.Sampler._evict, bdbench.snapshot_mem

    def counting(self, pids):
        calls.append(time.monotonic())
        return orig_evict(self, pids)

    def slow_snapshot(pids, timeout=0.5):
        time.sleep(0.02)
        return 0, 0, 0.02

    bdbench.Sampler._evict, bdbench.snapshot_mem = counting, slow_snapshot
    try:
        r = bdbench.run_measured(["sleep", "1.5"], os.devnull, os.devnull, dict(os.environ), 30, [],
                                 [path])
    finally:
        bdbench.Sampler._evict, bdbench.snapshot_mem = orig_evict, orig_snap
    snaps = len(r["sampler"].timeline)
    want = int(1.5 / bdbench.SAMPLE_DT / 2)
    print("cadence: %d evictions, %d snapshots in %.2f s (want >= %d evictions, <= 4 snapshots)"
          % (len(calls), snaps, r["wall"], want))
    return len(calls) >= want and snaps <= 4


def end_to_end(path):
    bdbench.drop_cache_tree(path)
    r = bdbench.run_measured([sys.executable, "-c", READER, path], os.devnull, os.devnull,
                             dict(os.environ), 60, [], [path])
    got = r["io"].get("read_bytes")
    if not got:
        print("end to end: no device reads counted here (tmpfs?): skipped")
        return None
    print("end to end: %.2f passes of %d MiB read from the device of 6 (want >= 4.5)"
          % (got / SIZE, SIZE >> 20))
    return got >= 4.5 * SIZE


def main():
    base = os.environ.get("BDMPI_TEST_DISK_DIR", "/var/tmp")
    d = tempfile.mkdtemp(prefix="bdmpi-evict.", dir=base if os.path.isdir(base) else None)
    path = os.path.join(d, "input")
    try:
        with open(path, "wb") as f:
            for _ in range(SIZE >> 20):
                f.write(os.urandom(1 << 20))
            f.flush()
            os.fsync(f.fileno())
        ok = cadence(path)
        e2e = end_to_end(path)
    finally:
        os.unlink(path)
        os.rmdir(d)
    if not ok or e2e is False:
        print("FAIL evict_check")
        return 1
    if e2e is None:
        return 77
    print("PASS evict_check")
    return 0


if __name__ == "__main__":
    sys.exit(main())
