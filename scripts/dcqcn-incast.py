#!/usr/bin/python3
"""The DCQCN incast of docs/sched.md ("DCQCN"), run and summed up.

Runs testbed/scenarios/dcqcn_incast.toml twice with the same seed, DCQCN on
and off (`--set defaults.host.dcqcn=...`), and prints one table: per run the
switch's PFC frames and the time it held each sender paused, the egress
queue toward the receiver (peak over the run; mean and peak after
--steady-ms from the 1 ms samples), the receiver link's rate, each flow's
mean rate after --steady-ms against the fair share, and the CNPs.

    scripts/dcqcn-incast.py [--build-dir build] [--seed 1] [--steady-ms 100]
                            [--out DIR] [--json FILE] [--set KEY=VALUE ...]
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIO = os.path.join(ROOT, "testbed", "scenarios", "dcqcn_incast.toml")


def run(testbed, out, seed, dcqcn, extra):
    cmd = [testbed, SCENARIO, "--seed", str(seed), "--out", out,
           "--set", "defaults.host.dcqcn=" + ("true" if dcqcn else "false")]
    for s in extra:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    with open(os.path.join(out, "timeseries.csv")) as f:
        rows = list(csv.DictReader(f))
    return summary, rows


def digest(summary, rows, steady_us):
    s1 = summary["switches"][0]
    to_r = next(p for p in s1["ports"] if p["peer"] == "r")
    eg = to_r["egress"]["3"]  # priority 3, the lossless one
    senders = [h["name"] for h in summary["engine"]["hosts"] if h["name"] != "r"]
    ports = {p["peer"]: p for p in s1["ports"]}
    paused_ns = [ports[h]["ingress"]["3"]["asserted_ns"] for h in senders]
    late = [r for r in rows if float(r["time_us"]) > steady_us]
    q = [int(r["s1>r.out_bytes"]) for r in late]
    rates = [sum(float(r[h + "->s1.gbps"]) for r in late) / len(late) for h in senders]
    fair = sum(rates) / len(rates)
    host = {h["name"]: h for h in summary["engine"]["hosts"]}
    return {
        "pfc_frames": s1["pfc_frames_sent"],
        "paused_ms_max": max(paused_ns) / 1e6,
        "queue_peak_bytes": eg["peak_bytes"],
        "queue_steady_mean_bytes": sum(q) // len(q),
        "queue_steady_peak_bytes": max(q),
        "ecn_marked": eg["ecn_marked"],
        "receiver_gbps_steady": sum(float(r["s1->r.gbps"]) for r in late) / len(late),
        "flow_gbps_steady": rates,
        "flow_min_over_fair": min(rates) / fair,
        "flow_max_over_fair": max(rates) / fair,
        "goodput_gbps_run": [f["goodput_gbps"] for f in summary["rc_flows"]],
        "retransmits": sum(f["src_qp"]["tx_retransmits"] for f in summary["rc_flows"]),
        "cnps_sent": host["r"].get("dcqcn", {}).get("tx_cnp", 0),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--steady-ms", type=float, default=100)
    ap.add_argument("--out")
    ap.add_argument("--json")
    ap.add_argument("--set", action="append", default=[])
    a = ap.parse_args()
    testbed = os.path.join(a.build_dir, "testbed", "uroce-testbed")
    out = a.out or tempfile.mkdtemp(prefix="dcqcn-incast-")
    res = {}
    for on in (True, False):
        name = "dcqcn" if on else "no-dcqcn"
        summary, rows = run(testbed, os.path.join(out, name), a.seed, on, a.set)
        res[name] = digest(summary, rows, a.steady_ms * 1000)
    print(f"dcqcn_incast.toml, seed {a.seed}, steady state after {a.steady_ms:g} ms "
          f"(outputs in {out})")
    print("| | DCQCN on | DCQCN off |")
    print("|---|---:|---:|")
    on, off = res["dcqcn"], res["no-dcqcn"]
    lines = [
        ("PFC frames sent by the switch", "pfc_frames", "{:,}"),
        ("longest a sender was held paused (ms)", "paused_ms_max", "{:.1f}"),
        ("queue toward r, peak over the run (bytes)", "queue_peak_bytes", "{:,}"),
        ("queue toward r, steady mean (bytes)", "queue_steady_mean_bytes", "{:,}"),
        ("queue toward r, steady peak (bytes)", "queue_steady_peak_bytes", "{:,}"),
        ("ECN-marked packets", "ecn_marked", "{:,}"),
        ("receiver link, steady (Gb/s)", "receiver_gbps_steady", "{:.2f}"),
        ("slowest flow / fair share, steady", "flow_min_over_fair", "{:.3f}"),
        ("fastest flow / fair share, steady", "flow_max_over_fair", "{:.3f}"),
        ("CNPs sent by r", "cnps_sent", "{:,}"),
        ("retransmitted packets", "retransmits", "{:,}"),
    ]
    for label, key, fmt in lines:
        print(f"| {label} | {fmt.format(on[key])} | {fmt.format(off[key])} |")
    print("| flows' goodput over the whole run (Gb/s) | "
          + " ".join(f"{g:.2f}" for g in on["goodput_gbps_run"]) + " | "
          + " ".join(f"{g:.2f}" for g in off["goodput_gbps_run"]) + " |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
