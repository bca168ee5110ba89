#!/usr/bin/python3
"""The slowdown curves of issue 15 on the testbed (docs/homa-testbed.md).

Runs testbed/scenarios/homa_slowdown.toml (16 real-engine hosts on one
10 Gb/s switch) once per (workload, load, scheme), each with the same seed
and its own --set overrides, and reads each run's summary.json: the
slowdown (completion time / best time on the idle network) per decile of
message lengths, p50 and p99, and the run's counts. Prints one table per
(workload, load) with every scheme side by side, writes everything to
--json and, with --png DIR, one Homa-style plot per (workload, load):
DIR/homa-slowdown-<workload>-<load>.png (x: message length, spaced by
the share of messages; y: slowdown, log; p99 solid, p50 dashed).

Schemes (the --set overrides of each):
  pfc     RC over lossless priority 3 (the scenario as written)
  dcqcn   the same with DCQCN in the engines (ECN marking at the switch)
  homaN   the engine's Homa-like scheduler with N priorities (host keys
          homa and homa_priorities; skipped with a note while the testbed
          has no such keys)

Run lengths per workload (arrival windows; --scale multiplies the
measured one) are in WINDOWS below: they give about 1,000 (W5 at 50 %)
to 20,000 (W3 at 80 %) measured messages per decile; docs/homa-testbed.md
has the sweep's wall time. Sweeps run by hand, not in CI.

    scripts/homa-slowdown.py [--build-dir build] [--out DIR] [--seed 1]
        [--workloads w3,w4,w5] [--loads 0.5,0.8] [--schemes pfc,dcqcn,...]
        [--jobs 1] [--scale 1] [--json FILE] [--png DIR] [--markdown FILE]
        [--set KEY=VALUE ...]
    scripts/homa-slowdown.py --plot-from FILE.json [--plot-from MORE.json ...]
        [--png DIR] [--markdown FILE]
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIO = os.path.join(ROOT, "testbed", "scenarios", "homa_slowdown.toml")

# workload -> (warmup_ms, measure_ms): the warmup lets queues and DCQCN
# rates settle; the measured window gives the counts in the docstring.
WINDOWS = {
    "w1": (2, 10),
    "w2": (2, 20),
    "w3": (10, 40),
    "w4": (20, 400),
    "w5": (50, 3000),
}

# The least time a run may go on after its window for the measured
# messages to come in (the largest W3, W4 and W5 messages take 12-24 ms
# alone at 10 Gb/s).
DRAIN_CAP_MS = 500

SCHEMES = {
    "pfc": [],
    "dcqcn": ["defaults.host.dcqcn=true"],
}
# The Homa-like scheduler with n priorities (0 .. n-1): unscheduled bytes
# and the bytes kept granted ahead about one bandwidth-delay product (a
# grant out and a 4 KiB frame back over two 10 Gb/s hops with 1 us wires
# take 10.8 us: 13.4 KB; four frames), and lossless, as RC needs, every
# priority it sends on (data, grants and a scheduled QP's ACKs: 0 .. n-1).
# The other settings are the engine's defaults (docs/homa-testbed.md, "The
# gate's fallback", has what its 4 ms grant timeout did before the
# receiver answered repeated MLENs).
for _n in (1, 2, 4, 8):
    SCHEMES[f"homa{_n}"] = [
        "defaults.host.homa=true", f"defaults.host.homa_priorities={_n}",
        "defaults.host.homa_unsched_bytes=16384", "defaults.host.homa_rtt_bytes=16384",
        "pfc.priorities=[" + ",".join(str(p) for p in range(_n)) + "]"]

COLORS = {"pfc": "tab:red", "dcqcn": "tab:orange", "homa1": "tab:olive",
          "homa2": "tab:green", "homa4": "tab:cyan", "homa8": "tab:blue"}


def scheme_supported(testbed, scenario, scheme):
    """True if uroce-testbed accepts the scheme's keys (probed on a run of
    one microsecond)."""
    if not SCHEMES[scheme]:
        return True
    with tempfile.TemporaryDirectory() as out:
        cmd = [testbed, scenario, "--out", out,
               "--set", "scenario.duration_ms=0.001", "--set", "workload.warmup_ms=0",
               "--set", "workload.measure_ms=0.001"]
        for s in SCHEMES[scheme]:
            cmd += ["--set", s]
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        return r.returncode == 0


def run_point(testbed, scenario, out_root, seed, workload, load, scheme, scale, extra):
    warmup, measure = WINDOWS[workload]
    measure = measure * scale
    # The run stops once every measured message is in; the duration is only
    # a cap (messages still out then are reported as not received).
    cap = warmup + measure + max(DRAIN_CAP_MS, measure)
    sets = [f'workload.distribution="../workloads/{workload}.csv"', f"workload.load={load}",
            f"workload.warmup_ms={warmup}", f"workload.measure_ms={measure}",
            f"scenario.duration_ms={cap}"]
    sets += SCHEMES[scheme] + list(extra)
    out = os.path.join(out_root, f"{workload}-{load}-{scheme}")
    cmd = [testbed, scenario, "--seed", str(seed), "--out", out]
    for s in sets:
        cmd += ["--set", s]
    t0 = time.monotonic()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t0
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()}")
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    w = summary["workload"]
    return {
        "workload": workload, "load": load, "scheme": scheme, "seed": seed,
        "args": sets, "command": cmd, "wall_s": round(wall, 2),
        "end_ns": summary["end_ns"], "stop_reason": summary["stop_reason"],
        "events": summary["events"], "measured_load": w["measured_load"],
        "counts": w["counts"], "slowdown": w["slowdown"],
        "pfc_frames": sum(s["pfc_frames_sent"] for s in summary["switches"]),
        "transport": w["transport"],
        "tx_refused": summary["engine"]["frames"]["tx_refused"],
    }


def write_json(path, doc):
    """`doc` as JSON with one run per line, so a sweep stays a short file."""
    with open(path, "w") as f:
        f.write("{\n")
        items = [(k, v) for k, v in doc.items() if k != "runs"] + [("runs", doc["runs"])]
        for i, (k, v) in enumerate(items):
            end = ",\n" if i + 1 < len(items) else "\n"
            if k == "runs":
                f.write(' "runs": [\n')
                f.write(",\n".join("  " + json.dumps(r, separators=(",", ":")) for r in v))
                f.write("\n ]" + end)
            else:
                f.write(f" {json.dumps(k)}: {json.dumps(v)}{end}")
        f.write("}\n")


def fmt(v):
    return "n/r" if v is None else f"{v:.1f}"


def human(n):
    for unit, div in (("M", 1e6), ("K", 1e3)):
        if n >= div:
            return f"{n / div:.3g}{unit}"
    return str(n)


def tables(runs):
    lines = []
    keys = sorted({(r["workload"], r["load"]) for r in runs})
    for wl, load in keys:
        rs = [r for r in runs if r["workload"] == wl and r["load"] == load]
        lines.append(f"\n{wl.upper()} at load {load}: slowdown p50 / p99 per decile of lengths")
        head = f"{'lengths (bytes)':<22}" + "".join(f"{r['scheme']:>16}" for r in rs)
        lines.append(head)
        nb = len(rs[0]["slowdown"]["buckets"])
        for k in range(nb):
            b = rs[0]["slowdown"]["buckets"][k]
            row = f"{str(b['min_length']) + '..' + str(b['max_length']):<22}"
            for r in rs:
                x = r["slowdown"]["buckets"][k]
                row += f"{fmt(x['p50']) + ' / ' + fmt(x['p99']):>16}"
            lines.append(row)
        row = f"{'all':<22}"
        for r in rs:
            x = r["slowdown"]["overall"]
            row += f"{fmt(x['p50']) + ' / ' + fmt(x['p99']):>16}"
        lines.append(row)
        for label, get in (
            ("measured messages", lambda r: str(r["counts"]["measured"])),
            ("per decile", lambda r: str(r["slowdown"]["buckets"][0]["count"])),
            ("offered load", lambda r: f"{r['measured_load']:.3f}"),
            ("waited for a QP %", lambda r: f"{100 * r['counts']['waited_for_qp'] / max(r['counts']['arrived'], 1):.2f}"),
            ("not received", lambda r: str(r["slowdown"]["overall"]["incomplete"])),
            ("bad length/imm/bytes", lambda r: "{}/{}/{}".format(
                r["counts"]["length_mismatch"], r["counts"]["imm_mismatch"],
                r["counts"]["payload_mismatch"])),
            ("switch PFC frames", lambda r: str(r["pfc_frames"])),
            ("RC retransmits", lambda r: str(r["transport"]["tx_retransmits"])),
            ("RC timeouts", lambda r: str(r["transport"]["timeouts"])),
            ("simulated ms", lambda r: f"{r['end_ns'] / 1e6:.1f}"),
            ("wall s", lambda r: f"{r['wall_s']:.1f}"),
        ):
            lines.append(f"{label:<22}" + "".join(f"{get(r):>16}" for r in rs))
    return "\n".join(lines) + "\n"


def markdown(runs):
    """The tables of tables() as Markdown, for docs/homa-testbed.md."""
    out = []
    for wl, load in sorted({(r["workload"], r["load"]) for r in runs}):
        rs = [r for r in runs if r["workload"] == wl and r["load"] == load]
        out.append(f"\n{wl.upper()} at load {load}, slowdown p50 / p99:\n")
        out.append("| lengths (bytes) | " + " | ".join(r["scheme"] for r in rs) + " |")
        out.append("|---|" + "---:|" * len(rs))
        for k, b in enumerate(rs[0]["slowdown"]["buckets"]):
            cells = [fmt(r["slowdown"]["buckets"][k]["p50"]) + " / " +
                     fmt(r["slowdown"]["buckets"][k]["p99"]) for r in rs]
            out.append(f"| {b['min_length']:,}..{b['max_length']:,} | " + " | ".join(cells) + " |")
        out.append("| all | " + " | ".join(
            fmt(r["slowdown"]["overall"]["p50"]) + " / " + fmt(r["slowdown"]["overall"]["p99"])
            for r in rs) + " |")
        out.append("| RC retransmits | " + " | ".join(
            f"{r['transport']['tx_retransmits']:,}" for r in rs) + " |")
        out.append("| switch PFC frames | " + " | ".join(f"{r['pfc_frames']:,}" for r in rs) + " |")
        out.append("| simulated ms, wall s | " + " | ".join(
            f"{r['end_ns'] / 1e6:.0f}, {r['wall_s']:.0f}" for r in rs) + " |")
    return "\n".join(out) + "\n"


def plot(runs, png_dir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(png_dir, exist_ok=True)
    written = []
    for wl, load in sorted({(r["workload"], r["load"]) for r in runs}):
        rs = [r for r in runs if r["workload"] == wl and r["load"] == load]
        fig, ax = plt.subplots(figsize=(9, 4.4))
        for r in rs:
            bs = r["slowdown"]["buckets"]
            x = [100 * (b["cdf_lo"] + b["cdf_hi"]) / 2 for b in bs]
            c = COLORS.get(r["scheme"], None)
            p99 = [b["p99"] if b["p99"] is not None else float("nan") for b in bs]
            p50 = [b["p50"] if b["p50"] is not None else float("nan") for b in bs]
            ax.plot(x, p99, "-o", color=c, ms=3, label=f"{r['scheme']} p99")
            ax.plot(x, p50, "--", color=c, lw=1, label=f"{r['scheme']} p50")
        bs = rs[0]["slowdown"]["buckets"]
        ax.set_xticks([100 * b["cdf_hi"] for b in bs])
        ax.set_xticklabels([human(b["max_length"]) for b in bs], fontsize=8)
        ax.set_xlim(0, 100)
        ax.set_yscale("log")
        ax.set_xlabel("message length (bytes): upper end of each decile of messages")
        ax.set_ylabel("slowdown")
        ax.set_title(f"{wl.upper()}, load {load}, 16 hosts, 10 Gb/s (testbed, real engines)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        fig.tight_layout()
        path = os.path.join(png_dir, f"homa-slowdown-{wl}-{load}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--scenario", default=SCENARIO)
    ap.add_argument("--out", help="run directories (default: a temporary one)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workloads", default="w3,w4,w5")
    ap.add_argument("--loads", default="0.5,0.8")
    ap.add_argument("--schemes", default="pfc,dcqcn,homa1,homa2,homa4,homa8")
    ap.add_argument("--jobs", type=int, default=1, help="runs at once (the machine is shared)")
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies the measured windows")
    ap.add_argument("--set", action="append", default=[], dest="extra",
                    help="KEY=VALUE for every run (uroce-testbed --set)")
    ap.add_argument("--json")
    ap.add_argument("--png", help="directory for homa-slowdown-<workload>-<load>.png")
    ap.add_argument("--markdown", help="the tables as Markdown to this file")
    ap.add_argument("--plot-from", action="append", default=[],
                    help="a --json file to tabulate and plot instead of running; repeat to "
                         "merge sweeps (a later file's point replaces an earlier one's)")
    a = ap.parse_args()

    if a.plot_from:
        points = {}
        sources = []
        for path in a.plot_from:
            with open(path) as f:
                doc = json.load(f)
            for r in doc["runs"]:
                points[(r["workload"], r["load"], r["scheme"])] = r
            head = {k: v for k, v in doc.items() if k not in ("runs", "failed")}
            head["file"] = os.path.basename(path)
            sources.append(head)
        order = list(SCHEMES)
        runs = sorted(points.values(), key=lambda r: (r["workload"], r["load"],
                                                      order.index(r["scheme"])))
        sys.stdout.write(tables(runs))
        if a.json:
            # The merged points, with where each came from.
            write_json(a.json, {"merged_from": sources, "runs": runs})
        if a.markdown:
            with open(a.markdown, "w") as f:
                f.write(markdown(runs))
        if a.png:
            for p in plot(runs, a.png):
                print("wrote", p)
        return 0

    testbed = os.path.join(a.build_dir, "testbed", "uroce-testbed")
    workloads = a.workloads.split(",")
    loads = [float(x) for x in a.loads.split(",")]
    schemes = []
    for s in a.schemes.split(","):
        if s not in SCHEMES:
            ap.error(f"unknown scheme {s} (know {', '.join(SCHEMES)})")
        if scheme_supported(testbed, a.scenario, s):
            schemes.append(s)
        else:
            print(f"note: {s} skipped: uroce-testbed refuses {' '.join(SCHEMES[s])}",
                  file=sys.stderr)
    for w in workloads:
        if w not in WINDOWS:
            ap.error(f"unknown workload {w}")
    out_root = a.out or tempfile.mkdtemp(prefix="homa-slowdown-")
    points = [(w, l, s) for w in workloads for l in loads for s in schemes]
    started = time.strftime("%Y-%m-%d %H:%M:%S")
    load_start = os.getloadavg()
    t0 = time.monotonic()
    runs = []
    failed = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(a.jobs, 1)) as ex:
        futs = [ex.submit(run_point, testbed, a.scenario, out_root, a.seed, w, l, s, a.scale,
                          a.extra) for (w, l, s) in points]
        for f, p in zip(futs, points):
            try:
                r = f.result()
            except RuntimeError as e:
                # One bad point (a scheme the scenario cannot take) leaves
                # the others' results standing.
                print(f"{p[0]} {p[1]} {p[2]}: failed: {e}", file=sys.stderr)
                failed.append({"workload": p[0], "load": p[1], "scheme": p[2], "error": str(e)})
                continue
            print(f"{p[0]} {p[1]} {p[2]}: {r['counts']['measured']} measured, "
                  f"{r['wall_s']:.1f} s", file=sys.stderr)
            runs.append(r)
    total = time.monotonic() - t0
    load_end = os.getloadavg()
    sys.stdout.write(tables(runs))
    print(f"\n{len(runs)} runs in {total:.0f} s ({a.jobs} at a time), load average "
          f"{load_start[0]:.2f} at the start, {load_end[0]:.2f} at the end; runs in {out_root}")
    if a.json:
        write_json(a.json, {"scenario": os.path.relpath(a.scenario, ROOT), "seed": a.seed,
                            "started": started, "wall_s": round(total, 1), "jobs": a.jobs,
                            "loadavg_start": load_start, "loadavg_end": load_end,
                            "windows_ms": {w: WINDOWS[w] for w in workloads},
                            "scale": a.scale, "extra": a.extra, "failed": failed,
                            "runs": runs})
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(markdown(runs))
    if a.png:
        for p in plot(runs, a.png):
            print("wrote", p)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
