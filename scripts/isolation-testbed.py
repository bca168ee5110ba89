#!/usr/bin/python3
"""The isolation experiments of issue 14 on real-engine hosts in the testbed
(docs/isolation.md, "Isolation in the testbed").

Runs testbed/scenarios/isolation.toml once per point, each with the same
seed and its own --set overrides: the latency flow (16-byte WRITEs, one
outstanding), the throughput flow (64-byte WRITEs, 128 outstanding) and 1 or
16 elephants (1 MiB WRITEs), alone and together, with isolation "off" and
"classes" (and "auto" in the port-limited setups, where the classifier
chooses the classes instead of the flows' SLs), for each queue setup below
b's engine:

  fifo1024        one FIFO of 1024 frames (a memif ring), no port limit
  fifo16          one FIFO of 16 frames, no port limit
  fifo1024+limit  the deep FIFO, with the engine's port limit
                  (tx_limit_bytes, default 4096)
  limit+q8k       the same, and a class quantum of 8 KiB (class_quantum_bytes;
                  default 64 KiB): classes only

and, for the throughput flow, the port-limited setup with its class strict
as well (`thr-strict`). Prints one table and the goal rows (met / missed),
writes the JSON (--json) and plots the latency flow's completion-time CDFs
(alone, beside 1 and 16 elephants; off and classes; one panel per setup)
to --png.

    scripts/isolation-testbed.py [--build-dir build] [--seed 1] [--out DIR]
        [--json FILE] [--png FILE] [--limit BYTES] [--duration-ms 20]
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIO = os.path.join(ROOT, "testbed", "scenarios", "isolation.toml")
LAT, THR = 0, 1
ELEPHANTS = {1: [2], 16: list(range(2, 18))}

# point name -> (latency flow, throughput flow, elephants)
POINTS = {
    "lat": (True, False, 0),
    "thr": (False, True, 0),
    "eleph1": (False, False, 1),
    "eleph16": (False, False, 16),
    "lat+eleph1": (True, False, 1),
    "lat+eleph16": (True, False, 16),
    "thr+eleph1": (False, True, 1),
    "thr+eleph16": (False, True, 16),
}
THR_POINTS = ["thr", "eleph1", "eleph16", "thr+eleph1", "thr+eleph16"]


def setups(limit):
    return [
        ("fifo1024", ["defaults.host.tx_queue_packets=1024"], list(POINTS), ["off", "classes"]),
        ("fifo16", ["defaults.host.tx_queue_packets=16"], list(POINTS), ["off", "classes"]),
        ("fifo1024+limit",
         ["defaults.host.tx_queue_packets=1024", f"defaults.host.tx_limit_bytes={limit}"],
         list(POINTS), ["off", "classes", "auto"]),
        ("limit+q8k",
         ["defaults.host.tx_queue_packets=1024", f"defaults.host.tx_limit_bytes={limit}",
          "defaults.host.class_quantum_bytes=8192"], list(POINTS), ["classes", "auto"]),
        ("thr-strict",
         ["defaults.host.tx_queue_packets=1024", f"defaults.host.tx_limit_bytes={limit}",
          "defaults.host.strict_classes=[3,6]"], THR_POINTS, ["classes"]),
    ]


def run_point(testbed, out, seed, duration_ms, base, mode, point):
    lat, thr, n_el = POINTS[point]
    sets = list(base) + [f'defaults.host.isolation="{mode}"', f"scenario.duration_ms={duration_ms}"]
    if lat:
        sets.append(f"rc_flow.{LAT}.enabled=true")
    if thr:
        sets.append(f"rc_flow.{THR}.enabled=true")
    for e in ELEPHANTS.get(n_el, []):
        sets.append(f"rc_flow.{e}.enabled=true")
    cmd = [testbed, SCENARIO, "--seed", str(seed), "--out", out]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    flows = {f["name"]: f for f in summary["rc_flows"] if f["setup"] == "ok"}
    row = {"point": point, "mode": mode, "args": sets}
    if lat:
        f = flows["lat"]
        row["lat_completed"] = f["completed"]
        row["lat_p50_us"] = f["mct_ns"]["p50"] / 1e3
        row["lat_p99_us"] = f["mct_ns"]["p99"] / 1e3
        with open(os.path.join(out, "rc_mct.csv")) as c:
            row["lat_samples_ns"] = [int(r["mct_ns"]) for r in csv.DictReader(c) if r["flow"] == "lat"]
    if thr:
        f = flows["thr"]
        span = f["last_completion_ns"] - f["first_post_ns"]
        row["thr_mmsgs"] = f["completed"] / span * 1e3
    if n_el:
        # The elephants' payload a received over the run (they start at 0
        # and run to the end): full 4096-byte packets, none retransmitted
        # (checked). Completed bytes would miss each elephant's message in
        # flight at the end (up to 1 MiB each), and packets sent would count
        # those still in b's FIFO (up to 1024).
        el = [f for n, f in flows.items() if n.startswith("e")]
        row["retransmits"] = sum(f["src_qp"]["tx_retransmits"] for f in el)
        packets = sum(f["dst_qp"]["rx_packets"] for f in el)
        row["eleph_gbps"] = packets * 4096 * 8 / (duration_ms * 1e6)
    b = next(h for h in summary["engine"]["hosts"] if h["name"] == "b")
    row["tx_limit_stops"] = b["tx_limit_stops"]
    return row


def ratio(a, b):
    return a / b if a is not None and b else None


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--duration-ms", type=int, default=20)
    ap.add_argument("--limit", type=int, default=4096, help="tx_limit_bytes of the limited setups")
    ap.add_argument("--out")
    ap.add_argument("--json")
    ap.add_argument("--png")
    a = ap.parse_args()
    testbed = os.path.join(a.build_dir, "testbed", "uroce-testbed")
    out = a.out or tempfile.mkdtemp(prefix="isolation-testbed-")
    rows = []
    for name, base, points, modes in setups(a.limit):
        for mode in modes:
            got = {}
            for p in points:
                r = run_point(testbed, os.path.join(out, name, mode, p), a.seed, a.duration_ms,
                              base, mode, p)
                r["setup"] = name
                got[p] = r
            # Ratios against the same setup and mode, alone.
            for p, r in got.items():
                lat, thr, n_el = POINTS[p]
                if lat and p != "lat" and "lat" in got:
                    r["lat_p99_ratio"] = ratio(r["lat_p99_us"], got["lat"]["lat_p99_us"])
                if thr and p != "thr" and "thr" in got:
                    r["thr_ratio"] = ratio(r["thr_mmsgs"], got["thr"]["thr_mmsgs"])
                if n_el and (lat or thr):
                    r["eleph_ratio"] = ratio(r["eleph_gbps"], got[f"eleph{n_el}"]["eleph_gbps"])
            rows += got.values()

    print(f"isolation.toml, seed {a.seed}, {a.duration_ms} ms per point, "
          f"port limit {a.limit} bytes (outputs in {out})\n")
    retx = sum(r.get("retransmits", 0) for r in rows)
    print(f"elephants' retransmitted packets over all points: {retx}\n")
    print("| setup | isolation | point | lat median us | lat p99 us | p99 / alone | "
          "thr M msg/s | thr / alone | elephants Gb/s | elephants / alone |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['setup']} | {r['mode']} | {r['point']} | {fmt(r.get('lat_p50_us'), '.2f')} | "
              f"{fmt(r.get('lat_p99_us'), '.2f')} | {fmt(r.get('lat_p99_ratio'), '.2f')} | "
              f"{fmt(r.get('thr_mmsgs'), '.2f')} | {fmt(r.get('thr_ratio'), '.2f')} | "
              f"{fmt(r.get('eleph_gbps'), '.2f')} | {fmt(r.get('eleph_ratio'), '.3f')} |")

    by = {(r["setup"], r["mode"], r["point"]): r for r in rows}
    # The same in one row per setup and mode (docs/isolation.md's table).
    print("\n| setup | isolation | lat p50 / p99 us: alone | +1 elephant | +16 elephants | "
          "elephants kept (1; 16) | thr M msg/s: alone | +1 | +16 | thr kept (16) | "
          "elephants kept beside thr (16) |")
    print("|---|---|---|---|---|---|---:|---:|---:|---:|---:|")
    for name, _, _, modes in setups(a.limit):
        for mode in modes:
            def g(point, key, spec):
                r = by.get((name, mode, point))
                return fmt(None if r is None else r.get(key), spec)
            def lat(point):
                return f"{g(point, 'lat_p50_us', '.2f')} / {g(point, 'lat_p99_us', '.2f')}"
            print(f"| {name} | {mode} | {lat('lat')} | {lat('lat+eleph1')} | {lat('lat+eleph16')} "
                  f"| {g('lat+eleph1', 'eleph_ratio', '.3f')}; {g('lat+eleph16', 'eleph_ratio', '.3f')} "
                  f"| {g('thr', 'thr_mmsgs', '.2f')} | {g('thr+eleph1', 'thr_mmsgs', '.2f')} "
                  f"| {g('thr+eleph16', 'thr_mmsgs', '.2f')} | {g('thr+eleph16', 'thr_ratio', '.2f')} "
                  f"| {g('thr+eleph16', 'eleph_ratio', '.3f')} |")

    goals = []
    for name, _, _, modes in setups(a.limit):
        for mode in modes:
            def add(label, point, key, ok):
                r = by.get((name, mode, point))
                if r is None:  # a setup without that point
                    return
                v = r.get(key)
                goals.append({"setup": name, "mode": mode, "goal": label, "value": v,
                              "met": v is not None and ok(v)})
            for n in (1, 16):
                add(f"latency p99 together/alone <= 1.5 ({n} elephant{'s' if n > 1 else ''})",
                    f"lat+eleph{n}", "lat_p99_ratio", lambda v: v <= 1.5)
                add(f"elephants beside the latency flow >= 90% of alone ({n})",
                    f"lat+eleph{n}", "eleph_ratio", lambda v: v >= 0.9)
            add("throughput flow against 16 elephants >= 50% of alone", "thr+eleph16",
                "thr_ratio", lambda v: v >= 0.5)
    print("\n| setup | isolation | goal | value | |")
    print("|---|---|---|---:|---|")
    for g in goals:
        print(f"| {g['setup']} | {g['mode']} | {g['goal']} | {fmt(g['value'], '.2f')} | "
              f"{'met' if g['met'] else 'missed'} |")

    if a.json:
        with open(a.json, "w") as f:
            json.dump({"seed": a.seed, "duration_ms": a.duration_ms, "limit": a.limit,
                       "rows": [{k: v for k, v in r.items() if k != "lat_samples_ns"}
                                for r in rows], "goals": goals}, f, indent=2)
    if a.png:
        plot(rows, a.png)
    return 0


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = ["fifo1024", "fifo16", "fifo1024+limit"]
    fig, axes = plt.subplots(1, len(names), figsize=(12, 3.6), sharey=True)
    colors = {"lat": "black", "lat+eleph1": "tab:blue", "lat+eleph16": "tab:red"}
    for ax, name in zip(axes, names):
        for r in rows:
            if r["setup"] != name or "lat_samples_ns" not in r:
                continue
            s = sorted(v / 1e3 for v in r["lat_samples_ns"])
            if not s:
                continue
            y = [(i + 1) / len(s) for i in range(len(s))]
            label = f"{r['point'].replace('lat+', '+')} {r['mode']}"
            ax.step(s, y, where="post", color=colors[r["point"]],
                    linestyle="-" if r["mode"] == "classes" else "--", label=label)
        ax.set_xscale("log")
        ax.set_title(name)
        ax.set_xlabel("latency flow completion time (us)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("CDF")
    axes[-1].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=80)


if __name__ == "__main__":
    sys.exit(main())
