#!/usr/bin/env python3
"""Plots of a bdbench results directory (needs matplotlib).

  bdplots.py RESULTS_DIR

time_vs_ratio.png: seconds per iteration against D/M (data over memory
budget), one panel per application, one line per runtime variant, the I/O
lower bound dashed; checksum mismatches are drawn as red crosses.
memory_over_time.png: resident memory of all processes of each run against
time, for one configuration per application (of those with the most
finished runs, the largest D/M), with the
budget as a horizontal line.
Prints the names of the files it wrote."""
import csv
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


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    res = sys.argv[1]
    rows = load(res)
    outs = [time_vs_ratio(rows, res), memory_over_time(rows, res)]
    print(" ".join(os.path.basename(o) for o in outs if o))
    return 0


if __name__ == "__main__":
    sys.exit(main())
