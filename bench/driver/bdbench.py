#!/usr/bin/env python3
"""bdbench: the application benchmark driver of BDMPI (bdmpi.txt sections 6-7).

One command runs a matrix  application x runtime x memory budget x data size:

  runtimes   mpich       the plain MPI program under MPICH's mpiexec (in memory,
                         only when the data fits in this machine's memory)
             bdmpi       the plain MPI program under bdmpiexec -ns/-nr, once per
                         -mem-strategy (none, araw, arlw, lrlw)
             bdmpi-ooc   the explicit out-of-core variant under bdmpiexec
                         (-mem-strategy none, spill files in the spill directory)
             serial-ooc  the serial out-of-core program with -m BUDGET

For every run it drops the page cache of the input and of the spill
directories first, keeps dropping it while the run goes (see --no-evict),
samples the resident memory of the run every 50 ms (PSS of anonymous and
shared-memory pages, summed over the master and the ranks; see "Memory"),
counts the bytes the run's processes read from and wrote to storage, parses
the per-iteration times and --stats, and compares the result with the
reference program's output (apps/check.py).  The device's sequential
bandwidth (O_DIRECT, 1 MiB requests) is measured in the same invocation and
gives the I/O lower bound of each configuration:

  D  = bytes of data an iteration works on: the input matrix (the CSR file)
       plus the state the algorithm cannot do without (PageRank: two rank
       vectors, K-means: assignment vector and two centroid sets, SGD: U, V);
  M  = the memory budget;
  lower bound per iteration = max(0, D - M) / measured read bandwidth:
       whatever does not fit in the budget must be read from storage at
       least once per iteration (writes are not counted, so it is a bound).

Memory: the job's resident memory is Pss_Anon + Pss_Shmem from
/proc/PID/smaps_rollup summed over its processes (for BDMPI runs the master
and the ranks, not the launcher), as issue 13 states the budget.  Every
BDMPI run is checked against -mem + 16 MiB + 512 KiB per rank (in-memory
runs, -mem-strategy none, are not bounded); the ratio of its peak to that
bound is in runs.csv (bound_ratio) and results.md, and the worst one of the
bdmpi runs (the runtime's memory manager; BDMPI-ooc's ratio is shown too,
but its memory is the program's own) is printed at the end.  The samples are consistent snapshots: the
processes are stopped while they are read (as tests/runtime/rss_watch.c
does; read while they run, memory handed from one rank to the next between
two reads counted twice), at most about 2% of the run (a sample waits 50
times as long as it stopped the job; stopped_s in runs.csv).  The memory manager's bytes read and written (--stats MEM_READ,
MEM_WRITTEN, setup included) are divided by the iterations and compared
with D and D - M.

Output in --results: runs.csv (one line per run), results.md (tables shaped
like the paper's Tables 3-5), machine.json, runs/ (each run's stdout,
stderr, memory timeline; with --trace DIR, the timeline of every bdmpiexec
run is DIR/<run id>.trace.json, drawn as timeline-<run id>.png) and PNG plots (if matplotlib can be imported by
this interpreter or by /usr/bin/python3; otherwise plots are skipped with a
message).  Exit status 0 when every run succeeded and matched the
reference, 1 otherwise.

  bench/driver/bdbench.py --quick                 # ~2 minutes, small data
  bench/driver/bdbench.py                         # the default (full) matrix
  bench/driver/bdbench.py --apps pagerank --mem 64M --ratios 4,8 --shapes 16:1,16:2
  bench/driver/bdbench.py --dry-run               # print the matrix and commands
  bench/driver/bdbench.py --quick --apps pagerank --trace /tmp/traces   # with timelines
"""

import argparse
import csv
import hashlib
import json
import math
import mmap
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC_ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))

STRATEGIES = ("none", "araw", "arlw", "lrlw")
RUNTIMES = ("mpich", "bdmpi", "bdmpi-ooc", "serial-ooc")
APPS = ("pagerank", "kmeans", "sgd")
CHECK_RTOL = {"pagerank": "1e-9", "kmeans": "0", "sgd": "0"}

# The two settings.  Sizes are derived from the budget: D = ratio * M.
QUICK = dict(apps="pagerank,kmeans,sgd", mem="8M", ratios="4", shapes="16:1", iters=3,
             mem_threshold="64K", sbpage="16K", bw_size="64M", timeout=120, mpich_np=1)
FULL = dict(apps="pagerank,kmeans,sgd", mem="48M", ratios="4,6,8", shapes="16:1,16:2", iters=5,
            mem_threshold="256K", sbpage="64K", bw_size="512M", timeout=900, mpich_np=1)

SAMPLE_DT = 0.05
STOP_PACE = 50  # a sample that stopped the job for t waits at least 50 t
EVICT_PACE = 5  # an eviction pass that took t of CPU waits at least 5 t (20% of a CPU, at nice 19)
# The stated overhead of a BDMPI job beyond -mem (issue 13).
BOUND_FIXED = 16 << 20
BOUND_PER_RANK = 512 << 10


def mem_bound(budget, ns):
    return budget + BOUND_FIXED + BOUND_PER_RANK * ns


def log(msg):
    print(msg, flush=True)


# ----------------------------------------------------------------- sizes
def parse_size(s):
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)[bB]?\s*", s)
    if not m:
        raise argparse.ArgumentTypeError("bad size %r" % s)
    mult = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[m.group(2).lower()]
    return int(float(m.group(1)) * mult)


def size_arg(n):
    """A size as bdmpiexec/-m accept it (whole K/M when exact)."""
    for suf, mult in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n % mult == 0:
            return "%d%s" % (n // mult, suf)
    return str(n)


def mb(n):
    return n / float(1 << 20)


def human(n):
    if n is None or n == "":
        return "-"
    n = float(n)
    for suf, mult in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if abs(n) >= mult:
            return "%.1f%s" % (n / mult, suf)
    return "%d" % n


# ----------------------------------------------------------------- helpers
def file_key(*parts):
    h = hashlib.sha1()
    for p in parts:
        h.update(repr(p).encode())
        h.update(b"\0")
    return h.hexdigest()[:12]


def read_header(path):
    """The BDMPICSR header (apps/FORMAT.md)."""
    import struct
    with open(path, "rb") as f:
        b = f.read(64)
    if len(b) < 64 or b[:8] != b"BDMPICSR":
        raise RuntimeError("%s: not a BDMPICSR file" % path)
    version, idxsize, valtype, _ = struct.unpack_from("<IIII", b, 8)
    nrows, ncols, nnz = struct.unpack_from("<qqq", b, 24)
    return dict(nrows=nrows, ncols=ncols, nnz=nnz, idxsize=idxsize, valtype=valtype)


def drop_cache_file(path):
    """Write back and drop one file's pages from the page cache."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return
    try:
        try:
            os.fdatasync(fd)
        except OSError:
            pass
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def drop_cache_tree(path):
    if os.path.isfile(path):
        drop_cache_file(path)
        return
    for d, _, files in os.walk(path):
        for f in files:
            p = os.path.join(d, f)
            if os.path.isfile(p) and not os.path.islink(p):
                drop_cache_file(p)


def clear_dir(path):
    if os.path.isdir(path):
        for e in os.listdir(path):
            p = os.path.join(path, e)
            if os.path.isdir(p) and not os.path.islink(p):
                shutil.rmtree(p, ignore_errors=True)
            else:
                try:
                    os.unlink(p)
                except OSError:
                    pass
    os.makedirs(path, exist_ok=True)


# ----------------------------------------------------------------- device bandwidth
def measure_bandwidth(dirpath, size, req=1 << 20, passes=2):
    """Sequential write then read of a SIZE file with O_DIRECT and REQ-byte
    requests; returns the best of PASSES for each (the highest bandwidth
    gives the lowest, hence still valid, lower bound)."""
    path = os.path.join(dirpath, "bdbench-bandwidth.tmp")
    buf = mmap.mmap(-1, req)  # page aligned, as O_DIRECT needs
    buf.write(os.urandom(req))
    size = max(req, size // req * req)
    best_w = best_r = 0.0
    direct = True
    for _ in range(passes):
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        try:
            fd = os.open(path, flags | os.O_DIRECT, 0o600)
        except OSError:
            fd = os.open(path, flags, 0o600)
            direct = False
        try:
            t = time.perf_counter()
            for off in range(0, size, req):
                os.pwrite(fd, buf, off)
            os.fsync(fd)
            best_w = max(best_w, size / (time.perf_counter() - t))
        finally:
            os.close(fd)
        drop_cache_file(path)
        try:
            fd = os.open(path, os.O_RDONLY | (os.O_DIRECT if direct else 0))
        except OSError:
            fd = os.open(path, os.O_RDONLY)
            direct = False
        try:
            t = time.perf_counter()
            for off in range(0, size, req):
                os.preadv(fd, [buf], off)
            best_r = max(best_r, size / (time.perf_counter() - t))
        finally:
            os.close(fd)
        os.unlink(path)
    buf.close()
    return dict(read_bps=best_r, write_bps=best_w, file_bytes=size, request_bytes=req,
                o_direct=direct, passes=passes)


# ----------------------------------------------------------------- process tree sampling
def tree_pids(root):
    """ROOT and all its descendants (through /proc/PID/task/TID/children)."""
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        try:
            tids = os.listdir("/proc/%d/task" % pid)
        except OSError:
            continue
        for tid in tids:
            try:
                with open("/proc/%d/task/%s/children" % (pid, tid)) as f:
                    todo.extend(int(c) for c in f.read().split())
            except OSError:
                pass
    return out


def proc_mem(pid):
    """(anon+shmem PSS, RSS) of one process in bytes, from smaps_rollup."""
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            txt = f.read()
    except OSError:
        return 0, 0
    v = {}
    for line in txt.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].endswith(":") and parts[1].isdigit():
            v[parts[0][:-1]] = int(parts[1]) * 1024
    if "Pss_Anon" in v:
        own = v["Pss_Anon"] + v.get("Pss_Shmem", 0)
    else:  # older kernels: the whole PSS
        own = v.get("Pss", 0)
    return own, v.get("Rss", 0)


class PageAge:
    """Page-cache residency of files through mincore(2) (ctypes), so that the
    sampler can drop only pages that have been cached for a whole sampling
    period: data just read (or read ahead) is left to its reader, anything
    older goes.  Without ctypes/mincore, whole files are dropped."""

    def __init__(self):
        self.ok = False
        try:
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            libc.mmap.restype = ctypes.c_void_p
            libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                  ctypes.c_long)
            libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
            libc.mincore.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p)
            self.ct, self.libc = ctypes, libc
            self.page = os.sysconf("SC_PAGE_SIZE")
            self.ok = True

            class _Range(ctypes.Structure):
                _fields_ = [("off", ctypes.c_uint64), ("len", ctypes.c_uint64)]

            class _Stat(ctypes.Structure):
                _fields_ = [(f, ctypes.c_uint64) for f in
                            ("nr_cache", "nr_dirty", "nr_writeback", "nr_evicted", "nr_recently_evicted")]

            libc.syscall.restype = ctypes.c_long
            self.cs_range, self.cs_stat = _Range(0, 0), _Stat()
        except (OSError, AttributeError, ValueError):
            pass
        self.cs_ok = self.ok and platform.machine() == "x86_64"
        self.prev = {}

    def cached(self, fd):
        """Pages of fd in the page cache (cachestat(2), Linux 6.5+: it walks
        only the cached ones), or None where it cannot tell.  A file with
        none needs no mincore: the O_DIRECT store and backing files of a
        BDMPI run are gigabytes that the page cache never holds."""
        if not self.cs_ok:
            return None
        ct = self.ct
        if self.libc.syscall(451, fd, ct.byref(self.cs_range), ct.byref(self.cs_stat), 0) != 0:
            self.cs_ok = False  # ENOSYS: an older kernel
            return None
        return self.cs_stat.nr_cache

    def resident(self, fd, size):
        """mincore vector of the file (one byte per page, 1 = cached), or None."""
        ct = self.ct
        addr = self.libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        if addr in (None, ct.c_void_p(-1).value):
            return None
        try:
            n = (size + self.page - 1) // self.page
            vec = ct.create_string_buffer(n)
            if self.libc.mincore(addr, size, vec) != 0:
                return None
            return vec.raw[:n]
        finally:
            self.libc.munmap(addr, size)

    def drop_old(self, fd, key):
        """Drop the pages of FD cached now and at the previous call."""
        size = os.fstat(fd).st_size
        if size == 0:
            return
        if self.cached(fd) == 0:
            self.prev[key] = None
            return
        now = self.resident(fd, size) if self.ok else None
        if now is None:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            return
        now = now.translate(_LOWBIT)
        prev = self.prev.get(key)
        if prev is not None:
            m = min(len(prev), len(now))
            both = (int.from_bytes(now[:m], "little") & int.from_bytes(prev[:m], "little")).to_bytes(m, "little")
            for run in re.finditer(b"\x01+", both):
                os.posix_fadvise(fd, run.start() * self.page, (run.end() - run.start()) * self.page,
                                 os.POSIX_FADV_DONTNEED)
        self.prev[key] = now


_LOWBIT = bytes(b & 1 for b in range(256))


def _stopped(pid):
    """Whether every thread of PID is stopped (state T or t), or PID is gone."""
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return True
    for tid in tids:
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                st = f.read()
        except OSError:
            continue
        state = st[st.rfind(")") + 2:st.rfind(")") + 3]
        if state not in ("T", "t", "Z", "X", ""):
            return False
    return True


def snapshot_mem(pids, timeout=0.5):
    """(own, rss, stopped seconds) summed over PIDS read while all of them are
    stopped (SIGSTOP, then wait until every thread is), as
    tests/runtime/rss_watch.c does: read one after another while they run,
    memory one rank gives back after it was read and another loads before
    it is read counts twice.  Continued in all cases (finally).  A process
    not stopped within TIMEOUT is read as it is."""
    t0 = time.monotonic()
    stopped = []
    try:
        for p in pids:
            try:
                os.kill(p, signal.SIGSTOP)
                stopped.append(p)
            except OSError:
                pass
        for p in stopped:
            while not _stopped(p) and time.monotonic() - t0 < timeout:
                time.sleep(0.0002)
        own = rss = 0
        for p in pids:
            a, b = proc_mem(p)
            own += a
            rss += b
    finally:
        for p in stopped:
            try:
                os.kill(p, signal.SIGCONT)
            except OSError:
                pass
    return own, rss, time.monotonic() - t0


class Sampler(threading.Thread):
    """The run's resident memory (sum over its processes of PSS anon+shmem,
    and of RSS), paced as below, and, with evict, every SAMPLE_DT (or 5
    times the CPU the previous drop took, EVICT_PACE; in a thread of its
    own at nice 19, _evict_loop) a page-cache drop of the files of the run
    under the evict roots (files open in the run's processes, found through
    /proc/PID/fd, so unlinked spill files too; the files in the spill
    directories; the input).  Only pages cached at two
    consecutive passes are dropped (PageAge): the run keeps no more page
    cache than about two sampling periods of its own I/O, yet data it has
    just read, or that the kernel has just read ahead for it, is not thrown
    away under its feet.

    The memory is read in consistent snapshots (snapshot_mem: the counted
    processes stopped while they are read).  The job is stopped for the
    reads, so the next sample waits at least STOP_PACE times as long as
    this one stopped it (at most about 1/STOP_PACE of the run: the pace
    drops below one per SAMPLE_DT with many processes); stopped_s says
    how long it was stopped in all."""

    def __init__(self, pid, evict_roots, evict_files, skip_root=False):
        super().__init__(daemon=True)
        self.pid = pid
        self.skip_root = skip_root  # the launcher (bdmpiexec) is not counted
        self.roots = [os.path.realpath(r) + os.sep for r in evict_roots]
        self.files = list(evict_files)
        self.timeline = []  # (t, own, rss, nprocs)
        self.peak_own = self.peak_rss = 0
        self.max_procs = 0
        self.stop = threading.Event()
        self.t0 = time.monotonic()
        self.cpu_s = 0.0
        self.stopped_s = 0.0
        self.evict_cpu_s = 0.0
        self.age = PageAge()

    def _candidates(self, pids):
        """Paths (through /proc/PID/fd for open files) of the files to age."""
        for pid in pids:
            fddir = "/proc/%d/fd" % pid
            try:
                fds = os.listdir(fddir)
            except OSError:
                continue
            for fdn in fds:
                try:
                    target = os.readlink(os.path.join(fddir, fdn))
                except OSError:
                    continue
                if target.endswith(" (deleted)"):
                    target = target[:-len(" (deleted)")]
                if any(target.startswith(r) for r in self.roots):
                    yield os.path.join(fddir, fdn)
        for root in self.roots:
            for d, _, files in os.walk(root):
                for f in files:
                    yield os.path.join(d, f)
        for p in self.files:
            yield p

    def _evict(self, pids):
        seen = set()
        for path in self._candidates(pids):
            try:
                fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            except OSError:
                continue
            try:
                st = os.fstat(fd)
                key = (st.st_dev, st.st_ino)
                if key not in seen and (st.st_mode & 0o170000) == 0o100000:
                    seen.add(key)
                    self.age.drop_old(fd, key)
            except OSError:
                pass
            finally:
                os.close(fd)

    def _evict_loop(self):
        """The page-cache aging, in a thread of its own at nice 19: it stops
        nothing, so it keeps its own pace.  Paced with the snapshots, a
        process in a long read (a stop waits for it: 10-20 ms for
        Serial-ooc's 36 MiB preads) was evicted for about once a second,
        and 4 of its 5 passes over the input came from the page cache
        (docs/performance.md, session 26).  Its own CPU paces it: a pass over
        a 10 GiB input (mincore of 2.6 M pages) every 50 ms took most of a
        CPU from the job; so the CPU the job leaves idle is what keeps the
        page cache honest.  Not the snapshots' thread: at nice 19 a snapshot
        waited for a CPU with the job stopped (stopped 11% of a run under
        ctest -j in CI)."""
        try:  # the job's CPU first (Linux: a thread's own nice value)
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        except (OSError, AttributeError):
            pass
        while not self.stop.is_set():
            c_ev = time.thread_time()
            self._evict(tree_pids(self.pid))
            spent = time.thread_time() - c_ev
            self.evict_cpu_s = time.thread_time()
            self.stop.wait(max(SAMPLE_DT, EVICT_PACE * spent))

    def run(self):
        evictor = None
        if self.roots or self.files:
            evictor = threading.Thread(target=self._evict_loop, daemon=True)
            evictor.start()
        next_mem = 0.0
        while not self.stop.is_set():
            if time.monotonic() >= next_mem:
                pids = tree_pids(self.pid)
                counted = [p for p in pids if not (self.skip_root and p == self.pid)]
                own, rss, held = snapshot_mem(counted)
                self.stopped_s += held
                t = time.monotonic() - self.t0
                self.timeline.append((t, own, rss, len(pids)))
                self.peak_own = max(self.peak_own, own)
                self.peak_rss = max(self.peak_rss, rss)
                self.max_procs = max(self.max_procs, len(pids))
                next_mem = time.monotonic() + max(SAMPLE_DT, STOP_PACE * held) - SAMPLE_DT / 2
            self.cpu_s = time.thread_time() + self.evict_cpu_s
            self.stop.wait(SAMPLE_DT)
        if evictor:
            evictor.join()
            self.cpu_s = time.thread_time() + self.evict_cpu_s


def read_proc_io(pid):
    out = {}
    try:
        with open("/proc/%d/io" % pid) as f:
            for line in f:
                k, v = line.split(":")
                out[k.strip()] = int(v)
    except OSError:
        pass
    return out


def run_measured(cmd, out_path, err_path, env, timeout, evict_roots, evict_files, skip_root=False):
    """Run CMD in its own session; returns a dict with status, wall time,
    the storage I/O of the whole process tree (/proc/PID/io of the top
    process read while it is a zombie: the kernel has added every reaped
    descendant into it), and the sampler."""
    with open(out_path, "wb") as fo, open(err_path, "wb") as fe:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=fo, stderr=fe, env=env, start_new_session=True)
        sampler = Sampler(p.pid, evict_roots, evict_files, skip_root)
        sampler.t0 = t0
        sampler.start()
        timed_out = threading.Event()

        def kill():
            timed_out.set()
            try:
                os.killpg(p.pid, signal.SIGTERM)
                time.sleep(3)
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass

        timer = threading.Timer(timeout, kill)
        timer.daemon = True
        timer.start()
        io = {}
        try:
            os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)
            io = read_proc_io(p.pid)
        except (OSError, AttributeError):
            pass
        rc = p.wait()
        wall = time.monotonic() - t0
        timer.cancel()
        sampler.stop.set()
        sampler.join()
    return dict(rc=rc, wall=wall, timed_out=timed_out.is_set(), io=io, sampler=sampler)


# ----------------------------------------------------------------- output parsing
def parse_app_output(text):
    r = dict(iter_times=[], per_iter=None, total=None, iters_time=None)
    for line in text.splitlines():
        m = re.match(r"^iter (\d+) .*?time ([0-9.eE+-]+)\s*$", line)
        if m:
            r["iter_times"].append(float(m.group(2)))
        m = re.match(r"^time total (\S+) iterations (\S+) per-iteration (\S+)", line)
        if m:
            r["total"], r["iters_time"], r["per_iter"] = (float(m.group(i)) for i in (1, 2, 3))
        m = re.match(r"^spill: wrote (\d+) bytes, read (\d+) bytes", line)
        if m:
            r["ooc_written_rank0"], r["ooc_read_rank0"] = int(m.group(1)), int(m.group(2))
    return r


def parse_stats(text):
    """bdmpiexec --stats: the totals column and 'where the time went'."""
    st = {}
    for line in text.splitlines():
        m = re.match(r"^\s+([A-Z_]+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s", line)
        if m:
            st[m.group(1)] = int(m.group(2))
            st[m.group(1) + "_max"] = int(m.group(5))
        m = re.search(r"bytes of collective data in spill files (\d+)", line)
        if m:
            st["COLL_SPILL"] = int(m.group(1))
        # the parts of the ranks' time, which add up (bd_stats.c); builds
        # before issue 13 session 18 have no "waiting for a CPU" part
        m = re.search(r"where the time went: ([0-9.]+) s wall; the ranks' time from MPI_Init to MPI_Finalize, "
                      r"([0-9.]+) s in total, = ([0-9.]+) s computing "
                      r"(?:\+ ([0-9.]+) s waiting for a CPU while running \([^)]*\) )?"
                      r"\+ ([0-9.]+) s storage I/O while running "
                      r"\+ ([0-9.]+) s waiting for memory grants \+ ([0-9.]+) s storage I/O while waiting in MPI "
                      r"\+ ([0-9.]+) s waiting in MPI", line)
        if m:
            v = [float(m.group(i)) if m.group(i) is not None else None for i in range(1, 9)]
            st["where"] = line.strip()
            st["ranks_time_s"], st["compute_s"], st["cpu_wait_s"] = v[1], v[2], v[3]
            st["mem_io_s"] = round(v[4] + v[6], 3)
            st["grant_s"], st["wait_s"] = v[5], v[7]
    return st


# ----------------------------------------------------------------- applications
class App:
    """One application: how to generate its data, its state size, its programs."""

    def __init__(self, name, iters):
        self.name = name
        self.iters = iters

    def args(self):
        if self.name == "pagerank":
            return ["-i", str(self.iters), "-t", "10"]
        if self.name == "kmeans":
            return ["-k", "16", "-i", str(self.iters), "-s", "1"]
        return ["-k", "10", "-i", str(self.iters), "-s", "1", "-l", "0.01", "-r", "0.05"]

    def gen_args(self, target, quick):
        """bdmpi-gen arguments for an input of about TARGET bytes of D."""
        if self.name == "pagerank":
            e = 32  # average degree of the paper's web graph (uk-2007-05) is ~31
            stored = 0.88  # fraction of generated edges left after dedup (measured)
            per_vertex = 8 + 4 * e * stored + 16
            s = max(10, int(round(math.log2(target / per_vertex))))
            e = max(4, int(round((target / 2.0 ** s - 24) / (4 * stored))))
            return ["rmat", "-s", str(s), "-e", str(e), "--seed", "1"]
        if self.name == "kmeans":
            cols, avg = (2000, 60) if quick else (5000, 80)
            per_row = 12 + 8 * 0.59 * avg
            rows = max(1000, int(target / per_row))
            return ["docs", "-r", str(rows), "-c", str(cols), "-l", str(avg), "--seed", "1"]
        avg = 60
        per_row = 8 + 8 * 0.8 * avg + 4 * 10 * 1.1
        rows = max(1000, int(target / per_row))
        return ["ratings", "-r", str(rows), "-c", str(max(100, rows // 10)), "-l", str(avg), "-k", "10",
                "--seed", "1"]

    def state_bytes(self, h):
        """The state an iteration cannot do without, beyond the input matrix."""
        if self.name == "pagerank":
            return 16 * h["nrows"]  # current and next rank vectors (double)
        if self.name == "kmeans":
            return 4 * h["nrows"] + 2 * 16 * h["ncols"] * 8  # assignment + centroids and sums
        return 4 * 10 * (h["nrows"] + h["ncols"])  # U and V (float, k=10)

    def sgd_q_serial(self, h, input_bytes, budget, q0):
        """Smallest q >= q0 whose blocks fit the serial program's budget
        (its own estimate: nnz*(12+8) + rows*12 + (rows+cols)*k*4 per block)."""
        q = max(1, q0)
        while q < 64:
            maxnz = h["nnz"] / float(q * q) * 1.6  # power-law rows: blocks are uneven
            need = maxnz * 20 + (h["nrows"] / q + 1) * 12 + (h["nrows"] + h["ncols"]) / q * 10 * 4
            if need <= budget:
                return q
            q += 1
        return q


# ----------------------------------------------------------------- the driver
class Bench:
    def __init__(self, a):
        self.a = a
        self.bin = a.bin_dir
        self.apps_bin = a.apps_dir
        self.data = os.path.abspath(a.data_dir)
        self.res = os.path.abspath(a.results)
        self.spill = os.path.join(self.data, "spill")
        self.rows = []
        self.failures = []
        os.makedirs(self.data, exist_ok=True)
        os.makedirs(self.res, exist_ok=True)
        os.makedirs(os.path.join(self.res, "runs"), exist_ok=True)
        os.makedirs(self.spill, exist_ok=True)
        self.env = dict(os.environ)
        self.env.setdefault("HYDRA_LAUNCHER", "fork")
        self.check_py = os.path.join(SRC_ROOT, "apps", "check.py")
        self.mpich_bin = None
        self.mpiexec_path = shutil.which(a.mpiexec) or a.mpiexec

    # ---- data and references
    def gen_input(self, app, target):
        gargs = app.gen_args(target, self.a.quick)
        key = file_key("gen", gargs)
        path = os.path.join(self.data, "%s-%s.csr" % (app.name, key))
        meta = path + ".json"
        if os.path.exists(path) and os.path.exists(meta):
            with open(meta) as f:
                m = json.load(f)
            log("  data: %s (cached, %s)" % (os.path.basename(path), human(m["bytes"])))
            return path, m
        log("  data: generating %s: bdmpi-gen %s" % (os.path.basename(path), " ".join(gargs)))
        t = time.monotonic()
        tmp = path + ".tmp"
        cmd = [os.path.join(self.apps_bin, "bdmpi-gen")] + gargs + ["-o", tmp]
        if gargs[0] == "rmat":
            cmd += ["-m", self.a.gen_mem, "-t", self.spill]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        if r.returncode != 0:
            raise RuntimeError("bdmpi-gen failed:\n" + r.stdout)
        os.rename(tmp, path)
        h = read_header(path)
        m = dict(gen=gargs, bytes=os.path.getsize(path), header=h, seconds=time.monotonic() - t)
        with open(meta, "w") as f:
            json.dump(m, f)
        log("        %s, %d rows, %d non-zeros, %.1f s" % (human(m["bytes"]), h["nrows"], h["nnz"], m["seconds"]))
        return path, m

    def reference(self, app, inp, q):
        if self.a.no_reference:
            return None
        args = app.args() + (["-q", str(q)] if app.name == "sgd" else [])
        key = file_key("ref", os.path.basename(inp), args)
        path = os.path.join(self.data, "%s-%s.ref" % (app.name, key))
        if os.path.exists(path):
            return path
        log("  reference: %s_ref %s" % (app.name, " ".join(args)))
        cmd = [os.path.join(self.apps_bin, app.name + "_ref")] + args + [inp]
        with open(path + ".tmp", "w") as f:
            r = subprocess.run(cmd, stdout=f, stderr=subprocess.PIPE, universal_newlines=True)
        if r.returncode != 0:
            raise RuntimeError("%s failed: %s" % (" ".join(cmd), r.stderr))
        os.rename(path + ".tmp", path)
        return path

    def check(self, app, ref, out_path):
        r = subprocess.run([sys.executable, self.check_py, app.name, ref, out_path, "--rtol", CHECK_RTOL[app.name]],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        return r.returncode == 0, r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""

    # ---- MPICH builds of the plain MPI programs
    def build_mpich(self, apps):
        mpicc = shutil.which(self.a.mpicc)
        mpiexec = shutil.which(self.a.mpiexec)
        if not mpicc or not mpiexec:
            log("mpich: %s or %s not found: the mpich runs are skipped" % (self.a.mpicc, self.a.mpiexec))
            return None
        srcs = [os.path.join(SRC_ROOT, "apps", "common", f) for f in ("bdcsr.c", "bdooc.c")]
        h = hashlib.sha1(mpicc.encode())
        for a in apps:
            d = os.path.join(SRC_ROOT, "apps", a.name)
            for f in sorted(os.listdir(d)) + ["../common/bdcsr.c", "../common/bdcsr.h", "../common/bdooc.c",
                                             "../common/bdooc.h"]:
                p = os.path.join(d, f)
                if os.path.isfile(p):
                    with open(p, "rb") as fh:
                        h.update(fh.read())
        out = os.path.join(self.data, "mpich-bin", h.hexdigest()[:12])
        os.makedirs(out, exist_ok=True)
        for a in apps:
            exe = os.path.join(out, a.name)
            if os.path.exists(exe):
                continue
            d = os.path.join(SRC_ROOT, "apps", a.name)
            cmd = [mpicc, "-std=gnu11", "-O2", "-D_GNU_SOURCE", "-ffp-contract=off",
                   "-I" + os.path.join(SRC_ROOT, "apps", "common"), "-I" + d,
                   os.path.join(d, a.name + ".c")] + srcs + ["-lm", "-o", exe + ".tmp"]
            log("mpich: building %s with %s" % (a.name, mpicc))
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
            if r.returncode != 0:
                log("mpich: build of %s failed, mpich runs skipped:\n%s" % (a.name, r.stdout))
                return None
            os.rename(exe + ".tmp", exe)
        self.mpiexec_path = mpiexec
        return out

    # ---- the matrix
    def variants(self):
        """(runtime, strategy, ns, nr) in table order."""
        out = []
        rts = self.a.runtimes.split(",")
        if "mpich" in rts:
            out.append(("mpich", "", self.a.mpich_np, 0))
        for ns, nr in self.shapes:
            if "bdmpi" in rts:
                for s in self.a.strategies.split(","):
                    out.append(("bdmpi", s, ns, nr))
            if "bdmpi-ooc" in rts:
                out.append(("bdmpi-ooc", "none", ns, nr))
        if "serial-ooc" in rts:
            out.append(("serial-ooc", "", 1, 1))
        return out

    def label(self, rt, strat, ns, nr):
        if rt == "mpich":
            return "MPI (MPICH -n %d, in memory)" % ns
        if rt == "bdmpi":
            return "BDMPI %s (%d/%d)" % (strat, ns, nr)
        if rt == "bdmpi-ooc":
            return "BDMPI-ooc (%d/%d)" % (ns, nr)
        return "Serial-ooc"

    def command(self, app, rt, strat, ns, nr, inp, budget, q_serial):
        args = app.args()
        if rt == "mpich":
            return [self.mpiexec_path, "-n", str(ns), os.path.join(self.mpich_bin, app.name)] + args + [inp]
        if rt in ("bdmpi", "bdmpi-ooc"):
            cmd = [os.path.join(self.bin, "bdmpiexec"), "-ns", str(ns), "-nr", str(nr), "-mem", size_arg(budget),
                   "-mem-strategy", strat, "-mem-threshold", self.a.mem_threshold, "-sbpage", self.a.sbpage,
                   "-wd", self.spill, "--stats"]
            if rt == "bdmpi":
                return cmd + [os.path.join(self.apps_bin, app.name)] + args + [inp]
            return cmd + [os.path.join(self.apps_bin, app.name + "_ooc")] + args + ["-d", self.spill, inp]
        cmd = [os.path.join(self.apps_bin, app.name + "_serial_ooc")] + args + ["-m", size_arg(budget)]
        if app.name != "pagerank":
            cmd += ["-d", self.spill]
        if app.name == "sgd":
            cmd += ["-q", str(q_serial)]
        return cmd + [inp]

    def fits_in_memory(self, d_bytes):
        avail = 0
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
        # the in-memory runs hold the data plus the application's buffers
        return 3 * d_bytes < avail / 2

    def run(self):
        a = self.a
        self.shapes = []
        for s in a.shapes.split(","):
            ns, nr = s.split(":")
            self.shapes.append((int(ns), int(nr)))
        apps = [App(n, a.iters) for n in a.apps.split(",")]
        for ap in apps:
            if ap.name not in APPS:
                raise SystemExit("unknown application %s" % ap.name)
        budgets = [parse_size(x) for x in a.mem.split(",")]
        if a.sizes:
            configs = [(b, parse_size(s)) for b in budgets for s in a.sizes.split(",")]
        else:
            configs = [(b, int(b * float(r))) for b in budgets for r in a.ratios.split(",")]
        variants = self.variants()
        if "sgd" in a.apps:
            for ns, _ in self.shapes:
                if int(round(math.sqrt(ns))) ** 2 != ns:
                    raise SystemExit("sgd needs -ns a perfect square (shape %d)" % ns)
        if a.dry_run:
            self.mpich_bin = os.path.join(self.data, "mpich-bin", "HASH")
            for ap in apps:
                for b, t in configs:
                    log("%s  M=%s  D~%s  gen: %s" % (ap.name, human(b), human(t), " ".join(ap.gen_args(t, a.quick))))
                    for v in variants:
                        log("    %-32s %s" % (self.label(*v), " ".join(self.command(
                            ap, v[0], v[1], v[2], v[3], "INPUT", b, 1))))
            return 0
        if a.prepare:
            # Inputs of the big configurations take minutes to generate:
            # make them (and the references) ahead, while the machine may be busy.
            for ap in apps:
                for b, t in configs:
                    inp, _ = self.gen_input(ap, t)
                    self.reference(ap, inp, 1)
            return 0

        t_start = time.monotonic()
        self.machine = machine_facts(self.data, self.bin)
        log("bdbench: %s setting, %d application(s) x %d configuration(s) x %d variant(s)" % (
            "quick" if a.quick else ("full" if a.full_defaults else "custom"), len(apps), len(configs), len(variants)))
        log("machine: %s, %d cores, %s RAM, kernel %s; data in %s (%s)" % (
            self.machine["cpu"], self.machine["cores"], human(self.machine["mem_total"]), self.machine["kernel"],
            self.data, self.machine["data_fs"]))
        if self.machine.get("build_type", "").startswith("Debug") or self.machine.get("sanitize"):
            log("WARNING: %s is a %s build: the times say little about BDMPI (configure a release build, "
                "e.g. BDMPI_BUILD=/tmp/b bash scripts/build.sh on a fresh directory, and pass --build-dir)" % (
                    os.path.dirname(self.bin), self.machine["build_type"]))
        log("measuring the device: O_DIRECT, 1 MiB requests, %s file in %s ..." % (a.bw_size, self.data))
        self.bw = measure_bandwidth(self.data, parse_size(a.bw_size))
        self.machine["bandwidth"] = self.bw
        log("  sequential read %.0f MB/s, write %.0f MB/s%s" % (
            self.bw["read_bps"] / 1e6, self.bw["write_bps"] / 1e6, "" if self.bw["o_direct"] else " (no O_DIRECT)"))
        if any(v[0] == "mpich" for v in variants):
            self.mpich_bin = self.build_mpich(apps)

        total = len(apps) * len(configs) * len(variants)
        n = 0
        for ap in apps:
            for budget, target in configs:
                inp, meta = self.gen_input(ap, target)
                h = meta["header"]
                d_bytes = meta["bytes"] + ap.state_bytes(h)
                ratio = d_bytes / float(budget)
                lb_bytes = max(0, d_bytes - budget)
                lb_s = lb_bytes / self.bw["read_bps"]
                log("== %s: D = %s (input %s + state %s), M = %s, D/M = %.1f, I/O lower bound %s/iter = %.3f s" % (
                    ap.name, human(d_bytes), human(meta["bytes"]), human(d_bytes - meta["bytes"]), human(budget),
                    ratio, human(lb_bytes), lb_s))
                q_mpi = int(round(math.sqrt(self.shapes[0][0])))
                q_serial = ap.sgd_q_serial(h, meta["bytes"], budget, q_mpi) if ap.name == "sgd" else 1
                for rt, strat, ns, nr in variants:
                    n += 1
                    row = dict(app=ap.name, runtime=rt, strategy=strat, ns=ns, nr=nr, variant=self.label(rt, strat, ns, nr),
                               budget=budget, data_bytes=d_bytes, input_bytes=meta["bytes"], ratio=round(ratio, 3),
                               nrows=h["nrows"], ncols=h["ncols"], nnz=h["nnz"], iters=ap.iters,
                               lb_bytes=lb_bytes, lb_s=lb_s, read_bw=self.bw["read_bps"], write_bw=self.bw["write_bps"])
                    tag = "[%d/%d] %s D/M=%.1f %s" % (n, total, ap.name, ratio, row["variant"])
                    if rt == "mpich" and not self.mpich_bin:
                        row.update(status="skipped", note="no MPICH")
                    elif rt in ("mpich",) or (rt == "bdmpi" and strat == "none"):
                        if not self.fits_in_memory(d_bytes):
                            row.update(status="skipped", note="data does not fit in memory")
                    if row.get("status") == "skipped":
                        log("%s: skipped (%s)" % (tag, row["note"]))
                        self.rows.append(row)
                        continue
                    if ap.name == "sgd":
                        q = {"mpich": int(round(math.sqrt(ns))), "serial-ooc": q_serial}.get(rt, int(round(math.sqrt(ns))))
                    else:
                        q = 1
                    ref = self.reference(ap, inp, q)
                    cmd = self.command(ap, rt, strat, ns, nr, inp, budget, q_serial)
                    self.one_run(row, tag, ap, cmd, inp, ref, q)
                    self.rows.append(row)
                self.write_outputs()  # after every configuration: partial results survive
        self.finish(time.monotonic() - t_start)
        return 1 if self.failures else 0

    def one_run(self, row, tag, ap, cmd, inp, ref, q):
        rid = "%03d-%s-%s-%s%s" % (len(self.rows) + 1, ap.name, human(row["budget"]), row["runtime"],
                                  ("-" + row["strategy"]) if row["runtime"] == "bdmpi" else "")
        out = os.path.join(self.res, "runs", rid + ".out")
        err = os.path.join(self.res, "runs", rid + ".err")
        clear_dir(self.spill)
        drop_cache_tree(inp)
        drop_cache_tree(self.spill)
        if self.a.trace and os.path.basename(cmd[0]) == "bdmpiexec":
            row["trace"] = os.path.join(self.a.trace, rid + ".trace.json")
            cmd = cmd[:1] + ["-trace", row["trace"]] + cmd[1:]
        log("%s ..." % tag)
        r = run_measured(cmd, out, err, self.env, self.a.timeout,
                         [] if self.a.no_evict else [self.spill], [] if self.a.no_evict else [inp],
                         skip_root=row["runtime"] in ("bdmpi", "bdmpi-ooc"))
        clear_dir(self.spill)
        with open(out, errors="replace") as f:
            text = f.read()
        with open(err, errors="replace") as f:
            etext = f.read()
        p = parse_app_output(text)
        st = parse_stats(etext + "\n" + text)
        smp = r["sampler"]
        with open(os.path.join(self.res, "runs", rid + ".mem.csv"), "w") as f:
            f.write("t_s,resident_bytes,rss_bytes,processes\n")
            for t, own, rss, npr in smp.timeline:
                f.write("%.3f,%d,%d,%d\n" % (t, own, rss, npr))
        io = r["io"]
        row.update(run_id=rid, q=q, command=" ".join(cmd), wall_s=round(r["wall"], 3), rc=r["rc"],
                   per_iter_s=p["per_iter"], total_s=p["total"], iter_times=" ".join("%.4f" % x for x in p["iter_times"]),
                   peak_resident=smp.peak_own, peak_rss=smp.peak_rss, max_procs=smp.max_procs,
                   sampler_cpu_s=round(smp.cpu_s, 3), stopped_s=round(smp.stopped_s, 3),
                   dev_read=io.get("read_bytes"), dev_written=(io["write_bytes"] - io.get("cancelled_write_bytes", 0))
                   if "write_bytes" in io else None, rchar=io.get("rchar"), wchar=io.get("wchar"),
                   mem_read=st.get("MEM_READ"), mem_written=st.get("MEM_WRITTEN"), mem_peak_managed=st.get("MEM_PEAK"),
                   msg_spill_bytes=st.get("BYTES_FILE"), coll_spill_bytes=st.get("COLL_SPILL"),
                   mem_io_s=st.get("mem_io_s"), compute_s=st.get("compute_s"), cpu_wait_s=st.get("cpu_wait_s"),
                   wait_s=st.get("wait_s"),
                   grant_s=st.get("grant_s"),
                   ooc_read_rank0=p.get("ooc_read_rank0"), ooc_written_rank0=p.get("ooc_written_rank0"))
        row["x_lb_ok"] = not (row["runtime"] == "mpich" or (row["runtime"] == "bdmpi" and row["strategy"] == "none"))
        if row["runtime"] in ("bdmpi", "bdmpi-ooc") and row["x_lb_ok"]:
            row["mem_bound"] = mem_bound(row["budget"], row["ns"])
            row["bound_ratio"] = round(smp.peak_own / float(row["mem_bound"]), 3)
        for k in ("mem_read", "mem_written"):
            if row.get(k) is not None and row.get("iters"):
                row[k + "_iter"] = int(row[k] / row["iters"])
        if ap.name == "sgd" and "a block needs" in etext:
            row["note"] = "serial-ooc block over budget"
        if r["timed_out"]:
            row.update(status="timeout", checksum="-")
        elif r["rc"] != 0 or p["per_iter"] is None:
            row.update(status="failed", checksum="-")
        elif ref is None:
            row.update(status="ok", checksum="unchecked")  # --no-reference
        else:
            ok, msg = self.check(ap, ref, out)
            row.update(status="ok" if ok else "mismatch", checksum="ok" if ok else "MISMATCH", check_msg=msg)
        if row["status"] != "ok":
            # the runtime's own message, not the --stats lines that follow it
            msgs = [x for x in etext.splitlines() if x.strip() and not x.startswith(" ")
                    and not x.startswith(("bdmpi: where", "bdmpi stats"))]
            tail = (msgs or etext.strip().splitlines() or [""])[0][:200]
            self.failures.append("%s: %s (%s) %s" % (rid, row["status"], " ".join(cmd), tail))
            log("%s: %s%s  [%s]" % (tag, row["status"].upper(), (": " + row.get("check_msg", "")) if row["status"] ==
                                    "mismatch" else "", tail))
            return
        lb = row["lb_s"] if row["x_lb_ok"] else 0
        bound = (" (%.2f of -mem + 16M + 512K x %d%s)" % (row["bound_ratio"], row["ns"],
                                                           ", OVER" if row["bound_ratio"] > 1 else "")
                 if row.get("bound_ratio") is not None else "")
        mio = (", manager read %s written %s per iter" % (human(row["mem_read_iter"]), human(row["mem_written_iter"]))
               if row.get("mem_read_iter") is not None else "")
        log("%s: %.3f s/iter (%s), wall %.1f s, peak %s%s, read %s written %s%s, checksum ok" % (
            tag, p["per_iter"], ("%.1fx LB" % (p["per_iter"] / lb)) if lb > 0 else "in memory" if not row["x_lb_ok"]
            else "LB 0", r["wall"],
            human(smp.peak_own), bound, human(row["dev_read"]), human(row["dev_written"]), mio))

    # ---- outputs
    CSV_FIELDS = ["run_id", "app", "runtime", "strategy", "ns", "nr", "q", "variant", "budget", "data_bytes",
                  "input_bytes", "ratio", "nrows", "ncols", "nnz", "iters", "status", "checksum", "per_iter_s",
                  "total_s", "wall_s", "iter_times", "lb_bytes", "lb_s", "x_lb", "x_serial", "read_bw", "write_bw",
                  "dev_read", "dev_written", "rchar", "wchar", "mem_read", "mem_written", "mem_peak_managed",
                  "msg_spill_bytes", "coll_spill_bytes", "ooc_read_rank0", "ooc_written_rank0", "mem_io_s",
                  "compute_s", "cpu_wait_s", "wait_s", "grant_s", "peak_resident", "peak_rss", "mem_bound", "bound_ratio",
                  "mem_read_iter", "mem_written_iter", "max_procs", "sampler_cpu_s", "stopped_s", "rc", "note", "check_msg",
                  "trace", "command"]

    def serial_time(self, row):
        for r in self.rows:
            if (r["app"], r["budget"], r["data_bytes"], r["runtime"]) == (row["app"], row["budget"], row["data_bytes"],
                                                                         "serial-ooc") and r.get("status") == "ok":
                return r["per_iter_s"]
        return None

    def write_outputs(self):
        for r in self.rows:
            t = r.get("per_iter_s")
            if t and r.get("status") in ("ok", "mismatch"):
                in_memory = r["runtime"] == "mpich" or (r["runtime"] == "bdmpi" and r["strategy"] == "none")
                r["x_lb"] = round(t / r["lb_s"], 2) if r["lb_s"] > 0 and not in_memory else ""
                s = self.serial_time(r)
                r["x_serial"] = round(t / s, 2) if s else ""
        with open(os.path.join(self.res, "runs.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=self.CSV_FIELDS, extrasaction="ignore")
            w.writeheader()
            for r in self.rows:
                w.writerow(r)
        with open(os.path.join(self.res, "machine.json"), "w") as f:
            json.dump(self.machine, f, indent=1)
        with open(os.path.join(self.res, "results.md"), "w") as f:
            f.write(self.markdown())

    def markdown(self):
        a = self.a
        m = self.machine
        out = []
        argv = " ".join(sys.argv[1:])
        out.append("Command: `bench/driver/bdbench.py %s`\n" % argv.strip())
        out.append("Machine: %s, %d cores, %s RAM, kernel %s, data on %s; sequential %s bandwidth read %.0f MB/s, "
                   "write %.0f MB/s (%s requests, %s file). BDMPI %s, build type %s.\n" % (
                       m["cpu"], m["cores"], human(m["mem_total"]), m["kernel"], m["data_fs"],
                       "O_DIRECT" if self.bw["o_direct"] else "buffered", self.bw["read_bps"] / 1e6,
                       self.bw["write_bps"] / 1e6, human(self.bw["request_bytes"]), human(self.bw["file_bytes"]),
                       m.get("git", "?"), m.get("build_type", "?")))
        out.append("Seconds per iteration (the applications' own average over the iterations), then in "
                   "parentheses the ratio to the I/O lower bound (LB) and to Serial-ooc (S). "
                   "D = input matrix + the state an iteration needs; M = memory budget (`-mem`, `-m`); "
                   "LB = max(0, D - M) / read bandwidth. "
                   "%s marks a checksum that differs from the reference; `failed`/`timeout` a run that did not "
                   "finish; `-` a run not made. %s\n" % (
                       "**MISMATCH**", "Page cache of the input and spill files dropped before each run and, during it, "
                       "every 50 ms for pages cached since the previous sample." if not a.no_evict else "Page cache dropped before each run only."))
        for app in [x for x in APPS if any(r["app"] == x for r in self.rows)]:
            rows = [r for r in self.rows if r["app"] == app]
            cfgs = []
            for r in rows:
                c = (r["budget"], r["data_bytes"])
                if c not in cfgs:
                    cfgs.append(c)
            cfgs.sort()
            first = {c: next(r for r in rows if (r["budget"], r["data_bytes"]) == c) for c in cfgs}
            title = {"pagerank": "PageRank", "kmeans": "Spherical K-means", "sgd": "SGD matrix factorization"}[app]
            r0 = rows[0]
            out.append("\n### %s (%d iterations, %s)\n" % (title, r0["iters"], {
                "pagerank": "R-MAT graph", "kmeans": "K = 16, generated documents",
                "sgd": "k = 10, generated ratings, row-wise random traversal"}[app]))
            hdr = ["runtime"] + ["D %s, M %s (%.1fx)<br>%s rows, %s nnz" % (
                human(d), human(b), d / float(b), human(first[(b, d)]["nrows"]).replace("K", "k"),
                human(first[(b, d)]["nnz"]).replace("K", "k")) for b, d in cfgs]
            out.append("| " + " | ".join(hdr) + " |")
            out.append("|" + "---|" * len(hdr))
            variants = []
            for r in rows:
                if r["variant"] not in variants:
                    variants.append(r["variant"])
            mem_rows = []
            for v in variants:
                cells, mcells = [v], [v]
                for c in cfgs:
                    r = next((x for x in rows if x["variant"] == v and (x["budget"], x["data_bytes"]) == c), None)
                    cells.append(self.cell(r))
                    mcells.append(self.mem_cell(r))
                out.append("| " + " | ".join(cells) + " |")
                mem_rows.append(mcells)
            lbc = ["I/O lower bound"] + ["%.3f (%s/iter)" % (first[c]["lb_s"], human(first[c]["lb_bytes"])) for c in cfgs]
            out.append("| " + " | ".join(lbc) + " |")
            if app == "sgd":
                qs = ", ".join("%s for D %s" % (r["q"], human(r["data_bytes"])) for r in rows
                               if r["runtime"] == "serial-ooc" and r.get("q"))
                out.append("\nThe result of SGD depends on the q x q block split: the MPI programs use q = sqrt(ranks) "
                           "and Serial-ooc the smallest q whose blocks fit in M (q = %s); every run is checked "
                           "against the reference computed with its own q." % (qs or "-"))
            out.append("\nPeak resident memory of the run (PSS of anonymous and shared-memory pages, BDMPI: master "
                       "and ranks; its ratio to M and, for BDMPI runs, to the bound -mem + 16 MiB + 512 KiB x ranks) / "
                       "bytes read from the device (bytes the processes asked to read) / bytes written to the device; "
                       "whole run, setup included:\n")
            out.append("| " + " | ".join(["runtime"] + ["D %s, M %s" % (human(d), human(b)) for b, d in cfgs]) + " |")
            out.append("|" + "---|" * (len(cfgs) + 1))
            for mc in mem_rows:
                out.append("| " + " | ".join(mc) + " |")
            io_rows = []
            for v in variants:
                cells, any_io = [v], False
                for c in cfgs:
                    r = next((x for x in rows if x["variant"] == v and (x["budget"], x["data_bytes"]) == c), None)
                    if (r is None or r.get("mem_read_iter") is None or r.get("status") not in ("ok", "mismatch")
                            or r["runtime"] != "bdmpi" or r["strategy"] == "none"):
                        cells.append("-")
                        continue
                    any_io = True
                    d, dm = float(r["data_bytes"]), float(max(1, r["data_bytes"] - r["budget"]))
                    cells.append("%s (%.2fx D, %.2fx D-M) / %s (%.2fx D)" % (
                        human(r["mem_read_iter"]), r["mem_read_iter"] / d, r["mem_read_iter"] / dm,
                        human(r["mem_written_iter"]), r["mem_written_iter"] / d))
                if any_io:
                    io_rows.append(cells)
            if io_rows:
                out.append("\nThe memory manager's storage I/O per iteration (--stats MEM_READ / MEM_WRITTEN divided "
                           "by the iterations, setup included): read (against D and D - M) / written (against D):\n")
                out.append("| " + " | ".join(["runtime"] + ["D %s, M %s" % (human(d), human(b)) for b, d in cfgs]) + " |")
                out.append("|" + "---|" * (len(cfgs) + 1))
                for cells in io_rows:
                    out.append("| " + " | ".join(cells) + " |")
        worst = self.worst_bound()
        if worst:
            out.append("\nMemory bound (-mem + 16 MiB + 512 KiB x ranks, every bdmpi run but the in-memory ones): "
                       "worst ratio %.2f (%s); %d of %d runs over it.\n" % worst)
        if self.failures:
            out.append("\nRuns that failed or did not match the reference:\n")
            for f in self.failures:
                out.append("* `%s`" % f)
        return "\n".join(out) + "\n"

    def cell(self, r):
        if r is None or r.get("status") in (None, "skipped"):
            return "-" if r is None or not r.get("note") else "- (%s)" % r["note"]
        if r["status"] in ("failed", "timeout"):
            return r["status"]
        t = r["per_iter_s"]
        parts = []
        if r.get("x_lb") not in (None, ""):
            parts.append("%.1fx LB" % r["x_lb"])
        if r.get("x_serial") not in (None, "") and r["runtime"] != "serial-ooc":
            parts.append("%.2fx S" % r["x_serial"])
        s = "%.3f" % t + (" (%s)" % ", ".join(parts) if parts else "")
        if r["status"] == "mismatch":
            s += " **MISMATCH**"
        return s

    def mem_cell(self, r):
        if r is None or r.get("status") in (None, "skipped", "failed", "timeout"):
            return "-"
        if r.get("bound_ratio") is not None:
            return "%s (%.1fx M, %.2fx bound) / %s (%s) / %s" % (
                human(r["peak_resident"]), r["peak_resident"] / float(r["budget"]), r["bound_ratio"],
                human(r["dev_read"]), human(r["rchar"]), human(r["dev_written"]))
        return "%s (%.1fx M) / %s (%s) / %s" % (human(r["peak_resident"]), r["peak_resident"] / float(r["budget"]),
                                                human(r["dev_read"]), human(r["rchar"]), human(r["dev_written"]))

    def worst_bound(self):
        """(worst ratio, its run, runs over the bound, runs checked), or None."""
        checked = [r for r in self.rows if r.get("bound_ratio") is not None and r["runtime"] == "bdmpi"]
        if not checked:
            return None
        w = max(checked, key=lambda r: r["bound_ratio"])
        over = sum(1 for r in checked if r["bound_ratio"] > 1)
        return (w["bound_ratio"], "%s, %s, D %s" % (w["app"], w["variant"], human(w["data_bytes"])), over,
                len(checked))

    def finish(self, elapsed):
        self.write_outputs()
        plots = make_plots(self.res)
        log("")
        log("results: %s (runs.csv, results.md%s)" % (self.res, ", " + ", ".join(plots) if plots else ""))
        bad = self.failures
        log("%d runs, %d ok, %d failed or mismatched, %d skipped, %.0f s" % (
            len(self.rows), sum(1 for r in self.rows if r.get("status") == "ok"), len(bad),
            sum(1 for r in self.rows if r.get("status") == "skipped"), elapsed))
        for f in bad:
            log("  " + f)
        worst = self.worst_bound()
        if worst:
            log("memory bound (-mem + 16 MiB + 512 KiB x ranks, PSS of master and ranks): worst ratio %.2f (%s); "
                "%d of %d bdmpi runs over it" % worst)
        missing = [p for p in ("runs.csv", "results.md", "machine.json") if not os.path.exists(os.path.join(self.res, p))]
        if missing:
            self.failures.append("missing outputs: " + " ".join(missing))
            log("missing outputs: " + " ".join(missing))


def machine_facts(data_dir, bin_dir):
    m = dict(cores=os.cpu_count(), kernel=platform.release(), cpu="?", mem_total=0)
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    m["cpu"] = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    m["mem_total"] = int(line.split()[1]) * 1024
                if line.startswith("SwapTotal:"):
                    m["swap_total"] = int(line.split()[1]) * 1024
    except OSError:
        pass
    best, fs = "", "?"
    real = os.path.realpath(data_dir)
    try:
        with open("/proc/mounts") as f:
            for line in f:
                dev, mnt, typ = line.split()[:3]
                if (real == mnt or real.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best):
                    best, fs = mnt, "%s %s" % (typ, dev)
    except OSError:
        pass
    m["data_fs"] = fs
    src = SRC_ROOT
    cache = os.path.join(os.path.dirname(os.path.abspath(bin_dir)), "CMakeCache.txt")
    try:
        with open(cache) as f:
            for line in f:
                if line.startswith("CMAKE_BUILD_TYPE:"):
                    m["build_type"] = line.split("=", 1)[1].strip()
                if line.startswith("BDMPI_SANITIZE:") and line.strip().endswith("ON"):
                    m["sanitize"] = True
                if line.startswith("bdmpi_SOURCE_DIR:"):
                    src = line.split("=", 1)[1].strip()
    except OSError:
        pass
    if m.get("sanitize"):
        m["build_type"] = m.get("build_type", "?") + " + sanitizers"
    m["source"] = src
    try:
        m["git"] = subprocess.run(["git", "-C", src, "rev-parse", "--short", "HEAD"], stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, universal_newlines=True).stdout.strip()
    except OSError:
        m["git"] = ""
    if not m["git"]:  # an exported tree (git archive) may carry its commit in BDMPI_COMMIT
        try:
            with open(os.path.join(src, "BDMPI_COMMIT")) as f:
                m["git"] = f.read().strip()
        except OSError:
            m["git"] = "?"
    return m


def make_plots(res):
    """Plots need matplotlib: this interpreter's, else /usr/bin/python3's
    (Debian's python3-matplotlib); without it they are skipped."""
    script = os.path.join(HERE, "bdplots.py")
    for py in (sys.executable, "/usr/bin/python3"):
        if not py or not os.path.exists(py):
            continue
        r = subprocess.run([py, "-c", "import matplotlib"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if r.returncode != 0:
            continue
        r = subprocess.run([py, script, res], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True)
        if r.returncode != 0:
            log("plots: %s failed:\n%s" % (script, r.stdout))
            return []
        return r.stdout.split()
    log("plots: matplotlib is not installed (apt-get install python3-matplotlib): plots skipped")
    return []


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--quick", action="store_true", help="small matrix for CI (about 2 minutes on 2 cores)")
    ap.add_argument("--build-dir", default=os.path.join(SRC_ROOT, "build"),
                    help="build tree (bin/ and apps/ under it); default <repo>/build")
    ap.add_argument("--bin-dir", help="where bdmpiexec is (default BUILD/bin)")
    ap.add_argument("--apps-dir", help="where the applications and bdmpi-gen are (default BUILD/apps)")
    ap.add_argument("--data-dir", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "bdbench-data"),
                    help="generated inputs, references, spill files, MPICH builds (cached across runs)")
    ap.add_argument("--results", default="bdbench-results", help="output directory")
    ap.add_argument("--apps", help="comma-separated subset of pagerank,kmeans,sgd")
    ap.add_argument("--runtimes", default=",".join(RUNTIMES), help="subset of " + ",".join(RUNTIMES))
    ap.add_argument("--strategies", default=",".join(STRATEGIES), help="-mem-strategy values for bdmpi runs")
    ap.add_argument("--shapes", help="comma-separated NS:NR for the bdmpi runs, e.g. 16:1,16:2")
    ap.add_argument("--mem", help="comma-separated memory budgets, e.g. 48M,96M")
    ap.add_argument("--ratios", help="data sizes as multiples of each budget, e.g. 4,8")
    ap.add_argument("--sizes", help="data sizes instead of --ratios, e.g. 200M,400M")
    ap.add_argument("--iters", type=int, help="iterations of each application")
    ap.add_argument("--mem-threshold", help="bdmpiexec -mem-threshold")
    ap.add_argument("--sbpage", help="bdmpiexec -sbpage")
    ap.add_argument("--mpich-np", type=int, help="processes of the MPICH runs (SGD: a perfect square)")
    ap.add_argument("--bw-size", help="size of the bandwidth test file")
    ap.add_argument("--timeout", type=int, help="seconds before a run is killed")
    ap.add_argument("--no-reference", action="store_true",
                    help="do not run the reference programs (they hold the whole input in memory, PageRank's "
                         "about 2x D) and do not check the outputs (checksum 'unchecked'): compare the runs' "
                         "outputs with apps/check.py yourself")
    ap.add_argument("--gen-mem", default="64M",
                    help="memory budget of bdmpi-gen rmat (its -m): more sorts a multi-GiB graph in fewer "
                         "passes; the graph does not depend on it")
    ap.add_argument("--no-evict", action="store_true",
                    help="drop the page cache before each run only, not also during it")
    ap.add_argument("--mpicc", default="mpicc")
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--dry-run", action="store_true", help="print the matrix and the commands, run nothing")
    ap.add_argument("--prepare", action="store_true",
                    help="generate the inputs and the reference outputs of the matrix, run nothing else")
    ap.add_argument("--trace", metavar="DIR",
                    help="pass -trace DIR/<run id>.trace.json to every bdmpiexec run; bdplots.py draws "
                         "each as timeline-<run id>.png in the results")
    a = ap.parse_args(argv)
    base = QUICK if a.quick else FULL
    a.full_defaults = not a.quick and not any(getattr(a, k) for k in ("apps", "mem", "ratios", "sizes", "shapes"))
    for k, v in base.items():
        if getattr(a, k, None) in (None, ""):
            setattr(a, k, v)
    a.bin_dir = os.path.abspath(a.bin_dir or os.path.join(a.build_dir, "bin"))
    a.apps_dir = os.path.abspath(a.apps_dir or os.path.join(a.build_dir, "apps"))
    if a.trace:
        a.trace = os.path.abspath(a.trace)
        os.makedirs(a.trace, exist_ok=True)
    if not a.dry_run:
        for p in (os.path.join(a.bin_dir, "bdmpiexec"), os.path.join(a.apps_dir, "bdmpi-gen")):
            if not os.access(p, os.X_OK):
                raise SystemExit("bdbench: %s not found: build first (bash scripts/build.sh)" % p)
    return Bench(a).run()


if __name__ == "__main__":
    sys.exit(main())
