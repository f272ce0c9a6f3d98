#!/usr/bin/env python3
"""trace_check.py: check a timeline written by bdmpiexec -trace FILE.

  trace_check.py FILE --ranks N [--nodes K] [--calls MPI_Recv,...] [--memory]
                      [--overhead BYTES] [--served REQUEST]

Fails (exit 1, naming every problem) unless:
  - FILE is valid JSON with a traceEvents list;
  - every rank 0..N-1 has a track (thread "rank R" of process "node K")
    with slices on it, and there are K processes;
  - on every track the complete ("X") slices nest strictly: two slices are
    disjoint or one lies within the other;
  - every slice "blocked in C" (and every top-level MPI call slice) names a
    call C of --calls, and there is at least one blocked slice, one
    "waiting for a run slot" and one "running";
  - every node has the counters "accounted resident", "budget" and "queued
    messages", and accounted resident memory never exceeds the budget plus
    --overhead (default 16 MiB + 512 KiB per rank of the node, issue 13's
    stated overhead);
  - with --memory: there are "loading" and "unloading" slices and "storage
    read" / "storage written" counters with a nonzero value;
  - no record was dropped (otherData);
  - with --served REQ: some top-level call slice is a request REQ that the
    master served without the rank giving up its slot (args.request starts
    with REQ, e.g. COLL_GET), named after a call of --calls.
Exit 0 when all hold."""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--nodes", type=int, default=1)
    ap.add_argument("--calls", default="")
    ap.add_argument("--memory", action="store_true")
    ap.add_argument("--overhead", type=float)
    ap.add_argument("--served")
    a = ap.parse_args()
    errs = []

    try:
        with open(a.trace) as f:
            doc = json.load(f)
        evs = doc["traceEvents"]
        assert isinstance(evs, list)
    except (OSError, ValueError, KeyError, AssertionError) as e:
        print("FAIL: %s is not a trace-event JSON file: %s" % (a.trace, e))
        return 1

    calls = set(c for c in a.calls.split(",") if c)
    threads, procs, slices, counters = {}, {}, {}, {}
    for e in evs:
        ph = e.get("ph")
        if ph == "M" and e.get("name") == "thread_name":
            threads[(e["pid"], e["tid"])] = e["args"]["name"]
        elif ph == "M" and e.get("name") == "process_name":
            procs[e["pid"]] = e["args"]["name"]
        elif ph == "X":
            if not isinstance(e.get("ts"), int) or not isinstance(e.get("dur"), int) or e["dur"] <= 0:
                errs.append("slice with a bad ts/dur: %s" % e)
                continue
            slices.setdefault((e["pid"], e["tid"]), []).append(e)
        elif ph == "C":
            for k, v in e["args"].items():
                counters.setdefault((e["pid"], e["name"]), []).append((e["ts"], v))

    if len(procs) != a.nodes:
        errs.append("%d processes (nodes) named, expected %d: %s" % (len(procs), a.nodes, procs))
    rank_track = {}
    for (pid, tid), name in threads.items():
        if name.startswith("rank "):
            rank_track[int(name[5:])] = (pid, tid)
    for r in range(a.ranks):
        if r not in rank_track:
            errs.append("rank %d has no track" % r)
        elif not slices.get(rank_track[r]):
            errs.append("rank %d's track has no slices" % r)

    # Strict nesting on every track.
    for key, sl in slices.items():
        sl.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in sl:
            end = e["ts"] + e["dur"]
            while stack and e["ts"] >= stack[-1][0]:
                stack.pop()
            if stack and end > stack[-1][0]:
                errs.append("track %s: %r [%d, %d) overlaps %r ending at %d" %
                            (key, e["name"], e["ts"], end, stack[-1][1], stack[-1][0]))
            stack.append((end, e["name"]))

    allx = [e for sl in slices.values() for e in sl]
    names = set(e["name"] for e in allx)
    blocked = [e for e in allx if e["name"].startswith("blocked in ")]
    if not blocked:
        errs.append("no slice 'blocked in ...'")
    for e in blocked:
        c = e["name"][len("blocked in "):]
        if calls and c not in calls:
            errs.append("slice %r names %s, which the program does not call" % (e["name"], c))
        if e.get("args", {}).get("call") != c:
            errs.append("slice %r has args %s" % (e["name"], e.get("args")))
    for e in allx:
        if e.get("cat") == "mpi" and calls and e["name"] not in calls:
            errs.append("call slice %r: the program does not call it" % e["name"])
    for want in ("running", "waiting for a run slot"):
        if want not in names:
            errs.append("no slice %r" % want)
    if a.memory:
        for want in ("loading", "unloading"):
            if not any(n == want or n.startswith(want + " +") or n.endswith("+ " + want) for n in names):
                errs.append("no slice %r" % want)

    if a.served:
        served = [e for e in allx if e.get("cat") == "mpi" and
                  str(e.get("args", {}).get("request", "")).startswith(a.served)]
        if not served:
            errs.append("no call slice of a served request %s" % a.served)
        else:
            print("%d slices of served %s requests, the longest %d us" %
                  (len(served), a.served, max(e["dur"] for e in served)))

    # Counters per node.
    for pid in procs:
        for want in ("accounted resident", "budget", "queued messages"):
            if not counters.get((pid, want)):
                errs.append("node %s: no counter %r" % (pid, want))
        budget = max((v for _, v in counters.get((pid, "budget"), [])), default=0)
        nranks = sum(1 for r, (p, _) in rank_track.items() if p == pid)
        over = a.overhead if a.overhead is not None else 16 * 2**20 + 512 * 1024 * nranks
        peak = max((v for _, v in counters.get((pid, "accounted resident"), [])), default=0)
        if budget and peak > budget + over:
            errs.append("node %s: accounted resident memory reached %d bytes, above the budget %d + %d"
                        % (pid, peak, budget, over))
        print("node %s: %d ranks, budget %d, peak accounted resident %d" % (pid, nranks, budget, peak))
        if a.memory:
            for want in ("storage read", "storage written"):
                if not any(v > 0 for _, v in counters.get((pid, want), [])):
                    errs.append("node %s: counter %r missing or always 0" % (pid, want))

    other = doc.get("otherData", {})
    for k, v in other.items():
        if k.startswith("bdmpi_node") and isinstance(v, dict) and v.get("dropped_records"):
            errs.append("%s: %d records dropped" % (k, v["dropped_records"]))

    print("%d events, %d slices on %d tracks, %d blocked slices, calls seen: %s" %
          (len(evs), len(allx), len(slices), len(blocked),
           ", ".join(sorted(set(e["name"] for e in allx if e.get("cat") == "mpi")))))
    for e in errs[:40]:
        print("FAIL:", e)
    if len(errs) > 40:
        print("FAIL: ... and %d more" % (len(errs) - 40))
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
