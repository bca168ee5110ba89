#!/usr/bin/python3
"""Plots for docs/testbed.md from the testbed's CSV outputs (matplotlib).

  plot_testbed.py --min-rate MIN_RATE.csv --out DIR
  plot_testbed.py --ttd TTD.csv --by alpha|ttl --out DIR [--name NAME]
  plot_testbed.py --timeseries A.csv [B.csv ...] --labels A,B --out DIR [--name NAME]
                  [--marks "label@ms,..."]

Inputs are what `uroce-testbed sweep ... --csv` and a run's timeseries.csv
write. Run with Debian's /usr/bin/python3 (it has matplotlib).
"""
import argparse
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# PNGs without the matplotlib version in their metadata.
SAVE = {"dpi": 110, "metadata": {"Software": None}}


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def plot_min_rate(path, out):
    rows = read_csv(path)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    loops = sorted({int(r["loop"]) for r in rows})
    for n in loops:
        rs = sorted((r for r in rows if int(r["loop"]) == n), key=lambda r: int(r["ttl"]))
        ttls = [int(r["ttl"]) for r in rs]
        line = ax.plot(ttls, [float(r["bound_gbps"]) for r in rs], "--", alpha=0.6,
                       label=f"n={n}: bound n·B/TTL")
        ok = [r for r in rs if r["bracketed"] == "1"]
        ax.plot([int(r["ttl"]) for r in ok], [float(r["min_rate_gbps"]) for r in ok], "o-",
                color=line[0].get_color(), label=f"n={n}: measured minimum")
        ax2.plot([int(r["ttl"]) for r in ok], [float(r["ratio"]) for r in ok], "o-",
                 color=line[0].get_color(), label=f"n={n}, to n·B/TTL")
        ax2.plot([int(r["ttl"]) for r in ok], [float(r["ratio_exact"]) for r in ok], "x:",
                 color=line[0].get_color(), label=f"n={n}, to B/⌈(TTL-1)/n⌉")
    for a in (ax, ax2):
        a.set_xscale("log", base=2)
        a.set_xticks([16, 32, 64, 128])
        a.set_xticklabels(["16", "32", "64", "128"])
        a.set_xlabel("TTL")
        a.grid(True, alpha=0.3)
    ax.set_yscale("log")
    ax.set_ylabel("injection rate (Gb/s)")
    ax.set_title("Minimum deadlocking injection rate")
    ax.legend(fontsize=7)
    ax2.axhline(1.0, color="grey", lw=0.8)
    ax2.set_ylabel("measured minimum / bound")
    ax2.set_title("Ratio to the bound")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    dst = os.path.join(out, "min_rate.png")
    fig.savefig(dst, **SAVE)
    print("wrote", dst)


def plot_ttd(path, by, out, name):
    rows = read_csv(path)
    key = "alpha" if by == "alpha" else "ttl"
    groups = []
    for r in rows:
        if r[key] not in groups:
            groups.append(r[key])
    fig, ax = plt.subplots(figsize=(7, 4.4))
    for g in groups:
        rs = [r for r in rows if r[key] == g and r["deadlocked"] == "1"]
        rs.sort(key=lambda r: float(r["rate_gbps"]))
        label = f"α={g}" if by == "alpha" else f"TTL={g}"
        ax.plot([float(r["rate_gbps"]) for r in rs], [float(r["ttd_ms"]) for r in rs], "o-",
                label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    rates = sorted({float(r["rate_gbps"]) for r in rows})
    ax.set_xticks(rates)
    ax.set_xticklabels([f"{x:g}" for x in rates])
    ax.minorticks_off()
    ax.set_xlabel("injection rate (Gb/s)")
    ax.set_ylabel("time to deadlock (ms)")
    fixed = rows[0]
    title = (f"Time to deadlock, loop n={fixed['loop']}, " +
             (f"TTL {fixed['ttl']}" if by == "alpha" else f"α={fixed['alpha']}"))
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    dst = os.path.join(out, (name or f"ttd_by_{by}") + ".png")
    fig.savefig(dst, **SAVE)
    print("wrote", dst)


def plot_timeseries(paths, labels, marks, out, name):
    panels = [
        ("s1->s2.gbps", "s1→s2 link (Gb/s)"),
        ("h4.rx_gbps", "victim h3→h4 delivered (Gb/s)"),
        ("hd.rx_gbps", "h1→hd delivered (Gb/s)"),
        ("s1.buffer_bytes", "s1 buffer (MB)"),
    ]
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, 8.5), sharex=True)
    for path, label in zip(paths, labels):
        rows = read_csv(path)
        t = [float(r["time_us"]) / 1000.0 for r in rows]
        for ax, (col, _) in zip(axes, panels):
            if col not in rows[0]:
                continue
            ys = [float(r[col]) for r in rows]
            if col.endswith("_bytes"):
                ys = [y / 1e6 for y in ys]
            ax.plot(t, ys, label=label, lw=1.1)
    for ax, (_, title) in zip(axes, panels):
        ax.set_ylabel(title, fontsize=8)
        ax.grid(True, alpha=0.3)
        for m in marks:
            ax.axvline(m[1], color="grey", ls=":", lw=1)
    for m in marks:
        axes[0].annotate(m[0], (m[1], axes[0].get_ylim()[1]), fontsize=7, rotation=90,
                         va="top", ha="right")
    axes[0].legend(fontsize=8)
    axes[-1].set_xlabel("virtual time (ms)")
    fig.tight_layout()
    dst = os.path.join(out, (name or "timeseries") + ".png")
    fig.savefig(dst, **SAVE)
    print("wrote", dst)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--min-rate")
    p.add_argument("--ttd")
    p.add_argument("--by", choices=["alpha", "ttl"], default="alpha")
    p.add_argument("--timeseries", nargs="+")
    p.add_argument("--labels", default="")
    p.add_argument("--marks", default="", help="vertical lines: label@ms,label@ms")
    p.add_argument("--name")
    p.add_argument("--out", required=True)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.min_rate:
        plot_min_rate(a.min_rate, a.out)
    if a.ttd:
        plot_ttd(a.ttd, a.by, a.out, a.name)
    if a.timeseries:
        labels = a.labels.split(",") if a.labels else [os.path.basename(x) for x in a.timeseries]
        marks = []
        for m in filter(None, a.marks.split(",")):
            label, _, ms = m.rpartition("@")
            marks.append((label, float(ms)))
        plot_timeseries(a.timeseries, labels, marks, a.out, a.name)
    if not (a.min_rate or a.ttd or a.timeseries):
        p.error("nothing to plot")
    return 0


if __name__ == "__main__":
    sys.exit(main())
