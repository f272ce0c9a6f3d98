#!/usr/bin/env python3
"""Plots of a bdbench results directory, or of one timeline (needs matplotlib).

  bdplots.py RESULTS_DIR
  bdplots.py --trace TRACE.json [-o OUT.png]

time_vs_ratio.png: seconds per iteration against D/M (data over memory
budget), one panel per application, one line per runtime variant, the I/O
lower bound dashed; checksum mismatches are drawn as red crosses.
memory_over_time.png: resident memory of all processes of each run against
time, for one configuration per application (of those with the most
finished runs, the largest D/M), with the
budget as a horizontal line.
timeline-<run id>.png: for each run that bdbench ran with --trace, its
timeline (see --trace below).
--trace: a timeline written by bdmpiexec -trace FILE (Chrome trace-event
JSON) drawn as three panels over time: each rank's state (running, in an MPI
call, blocked, waiting for a run slot, and below it loading, unloading and
waiting for memory), the accounted resident memory of each node against its
budget, and the storage bandwidth of the memory manager.
Prints the names of the files it wrote."""
import csv
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TITLES = {"pagerank": "PageRank", "kmeans": "K-means", "sgd": "SGD"}


def load(res):
    with open(os.path.join(res, "runs.csv")) as f:
        return list(csv.DictReader(f))


def num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def style(variant):
    if variant.startswith("MPI"):
        return dict(color="black", marker="s", linestyle="-")
    if variant.startswith("Serial"):
        return dict(color="tab:green", marker="D", linestyle="-")
    if variant.startswith("BDMPI-ooc"):
        return dict(color="tab:purple", marker="^", linestyle="-")
    for s, c in (("none", "tab:gray"), ("araw", "tab:blue"), ("arlw", "tab:orange"), ("lrlw", "tab:red")):
        if (" %s " % s) in variant:
            return dict(color=c, marker="o", linestyle="-")
    return dict(marker="o")


def shared_legend(fig, axes):
    """One legend below the panels (the union of their labels)."""
    handles, labels = [], []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="lower center", ncol=min(4, len(labels)), fontsize=8, frameon=False)
    rows = (len(labels) + 3) // 4
    fig.tight_layout(rect=(0, 0.06 * rows, 1, 1))


def time_vs_ratio(rows, res):
    apps = [a for a in TITLES if any(r["app"] == a for r in rows)]
    fig, axes = plt.subplots(1, len(apps), figsize=(5.2 * len(apps), 5.0), squeeze=False)
    for ax, app in zip(axes[0], apps):
        rs = [r for r in rows if r["app"] == app]
        variants = []
        for r in rs:
            if r["variant"] not in variants:
                variants.append(r["variant"])
        for v in variants:
            pts = sorted((num(r["ratio"]), num(r["per_iter_s"]), r["status"]) for r in rs
                         if r["variant"] == v and r["status"] in ("ok", "mismatch") and num(r["per_iter_s"]))
            if not pts:
                continue
            ax.plot([p[0] for p in pts], [p[1] for p in pts], label=v, **style(v))
            bad = [p for p in pts if p[2] == "mismatch"]
            if bad:
                ax.plot([p[0] for p in bad], [p[1] for p in bad], "x", color="red", markersize=12, mew=2)
        lb = {}
        for r in rs:
            if num(r["lb_s"]) is not None:
                lb[num(r["ratio"])] = num(r["lb_s"])
        lbp = sorted((k, v) for k, v in lb.items() if v > 0)
        if lbp:
            ax.plot([p[0] for p in lbp], [p[1] for p in lbp], "k--", label="I/O lower bound")
        ax.set_yscale("log")
        ax.set_xlabel("data / memory budget (D/M)")
        ax.set_ylabel("seconds per iteration")
        ax.set_title(TITLES[app])
        ax.grid(True, which="both", alpha=0.3)
    shared_legend(fig, axes[0])
    out = os.path.join(res, "time_vs_ratio.png")
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def memory_over_time(rows, res):
    apps = [a for a in TITLES if any(r["app"] == a and r["status"] in ("ok", "mismatch") for r in rows)]
    if not apps:
        return None
    fig, axes = plt.subplots(1, len(apps), figsize=(5.2 * len(apps), 5.0), squeeze=False)
    for ax, app in zip(axes[0], apps):
        rs = [r for r in rows if r["app"] == app and r["status"] in ("ok", "mismatch")]
        # the configuration with the most finished runs, the largest D/M among those
        count = {}
        for r in rs:
            count[num(r["ratio"])] = count.get(num(r["ratio"]), 0) + 1
        top = max(count, key=lambda k: (count[k], k))
        rs = [r for r in rs if num(r["ratio"]) == top]
        budget = num(rs[0]["budget"])
        for r in rs:
            path = os.path.join(res, "runs", r["run_id"] + ".mem.csv")
            if not os.path.exists(path):
                continue
            with open(path) as f:
                pts = [(float(x["t_s"]), float(x["resident_bytes"]) / 2 ** 20) for x in csv.DictReader(f)]
            if pts:
                st = style(r["variant"])
                st.pop("marker", None)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], label=r["variant"], linewidth=1.2, **st)
        ax.axhline(budget / 2 ** 20, color="k", linestyle=":", label="budget M")
        ax.set_xlabel("seconds since start")
        ax.set_ylabel("resident memory of the run (MiB)")
        ax.set_title("%s, D = %.0f MiB, M = %.0f MiB" % (TITLES[app], num(rs[0]["data_bytes"]) / 2 ** 20,
                                                        budget / 2 ** 20))
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
    shared_legend(fig, axes[0])
    out = os.path.join(res, "memory_over_time.png")
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


# Colours of the states on a rank's row (full height) and of the memory
# manager's work (a thinner bar at the bottom of the row).
STATE_COLOURS = [("running", "tab:green"), ("in MPI", "lightgray"), ("blocked", "tab:red"),
                 ("waiting for a run slot", "tab:orange")]
MEM_COLOURS = [("loading", "tab:blue"), ("unloading", "tab:purple"), ("waiting for memory", "gold")]


def state_of(e):
    """Which colour a slice of a rank's track gets (None: not drawn)."""
    n = e["name"]
    if n == "running":
        return "running"
    if n.startswith("blocked in "):
        return "blocked"
    if n == "waiting for a run slot":
        return "waiting for a run slot"
    if e.get("cat") == "mpi":
        return "in MPI"
    if e.get("cat") == "memory":
        if "unloading" in n:
            return "unloading"
        return "loading" if "loading" in n else "waiting for memory"
    return None


def timeline(path, out):
    """Draw a -trace timeline to out (PNG)."""
    from matplotlib.patches import Patch
    with open(path) as f:
        evs = json.load(f)["traceEvents"]
    ranks = {}
    for e in evs:
        if e.get("ph") == "M" and e.get("name") == "thread_name" and e["args"]["name"].startswith("rank "):
            ranks[(e["pid"], e["tid"])] = int(e["args"]["name"][5:])
    bars, counters = {}, {}
    t0 = min((e["ts"] for e in evs if "ts" in e), default=0)
    for e in evs:
        if e.get("ph") == "X" and (e["pid"], e["tid"]) in ranks:
            k = state_of(e)
            if k:
                bars.setdefault((ranks[(e["pid"], e["tid"])], k), []).append(((e["ts"] - t0) / 1e6, e["dur"] / 1e6))
        elif e.get("ph") == "C":
            for key, v in e["args"].items():
                counters.setdefault((e["pid"], e["name"]), []).append(((e["ts"] - t0) / 1e6, v))
    nr = max(ranks.values(), default=0) + 1
    fig, axes = plt.subplots(3, 1, figsize=(12, 3 + 0.25 * nr + 5), sharex=True,
                             gridspec_kw=dict(height_ratios=[max(2.0, 0.25 * nr), 1.6, 1.2]))
    ax = axes[0]
    for r in range(nr):
        for k, c in STATE_COLOURS:
            if (r, k) in bars:
                ax.broken_barh(bars[(r, k)], (r - 0.4, 0.8), facecolors=c, linewidth=0)
        for k, c in MEM_COLOURS:
            if (r, k) in bars:
                ax.broken_barh(bars[(r, k)], (r - 0.4, 0.3), facecolors=c, linewidth=0)
    ax.set_ylim(nr - 0.5, -0.5)
    ax.set_ylabel("rank")
    ax.set_yticks(range(nr) if nr <= 32 else range(0, nr, max(1, nr // 16)))
    ax.legend(handles=[Patch(color=c, label=k) for k, c in STATE_COLOURS + MEM_COLOURS], loc="upper center",
              bbox_to_anchor=(0.5, 1.0 + 1.2 / max(2.0, 0.25 * nr + 2)), ncol=7, fontsize=8, frameon=False)
    ax.set_title(os.path.basename(path), pad=28)

    def steps(ax, key, **kw):
        pts = sorted(counters.get(key, []))
        if pts:
            ax.step([p[0] for p in pts], [p[1] for p in pts], where="post", **kw)

    pids = sorted(set(p for p, _ in counters))
    for pid in pids:
        lab = (" node %d" % pid) if len(pids) > 1 else ""
        steps(axes[1], (pid, "accounted resident"), label="accounted resident" + lab, linewidth=1.2)
        pts = counters.get((pid, "budget"))
        if pts and pts[0][1]:
            axes[1].axhline(pts[0][1], color="k", linestyle=":", label="budget" + lab)
        steps(axes[2], (pid, "storage read"), label="read" + lab, color="tab:blue")
        steps(axes[2], (pid, "storage written"), label="written" + lab, color="tab:purple")
    axes[1].set_ylabel("bytes")
    axes[1].set_ylim(bottom=0)
    axes[2].set_ylabel("storage MB/s")
    axes[2].set_xlabel("seconds since the first event")
    for a in axes[1:]:
        a.grid(True, alpha=0.3)
        if a.get_legend_handles_labels()[0]:
            a.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "--trace":
        out = sys.argv[4] if len(sys.argv) == 5 and sys.argv[3] == "-o" else \
            os.path.splitext(sys.argv[2])[0] + ".png"
        print(timeline(sys.argv[2], out))
        return 0
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    res = sys.argv[1]
    rows = load(res)
    outs = [time_vs_ratio(rows, res), memory_over_time(rows, res)]
    for r in rows:
        if r.get("trace") and os.path.exists(r["trace"]):
            outs.append(timeline(r["trace"], os.path.join(res, "timeline-%s.png" % r["run_id"])))
    print(" ".join(os.path.basename(o) for o in outs if o))
    return 0


if __name__ == "__main__":
    sys.exit(main())
