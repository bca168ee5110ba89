#!/usr/bin/python3
"""Merges the JSON lines of benchmark runs into one table and one JSON file.

    bench_table.py --out FILE [--meta KEY=VALUE ...] RESULT.json...

Every input file holds JSON lines written by a benchmark program. A line's
"bench" names the stack it measured ("uroce-raw" -> "raw"; later stacks add
their own names), "transport" and "payload_bytes" name the row, and the role
says what it carries: "stream" sections (receiver, ring-selftest) give the
rates, "rtt" sections (ping, ring-selftest) the latencies. The raw stack is
the baseline; every other stack gets its figures and their ratio to raw.

Lines with "bench": "uroce-perftest" (bench/perftest_json.py) are perftest
points over the stack, in daemon or embedded mode ("mode", daemon when
absent); they go into a second table, "comparison": per transport, mode and
metric, the raw figure, the uroce figure, their ratio and the CPU use (the
daemons' in daemon mode; the perftest processes', which run the engine, in
embedded mode), plus issue 17's targets for each mode (TARGETS) and where
each stands, and per transport and metric the embedded/daemon ratio
("modes"). Raw counterparts: Gb/s of UDP payload with 4 KiB frames for
ib_write_bw, 64 B frames/s for ib_send_bw's messages/s, half the 64 B RTT
(median, p99) for ib_send_lat's one-way latency, and the whole 64 B RTT for
ib_read_lat (perftest reports a READ's latency as its round trip).
The point "ucx_tag_lat" (UCX's ucx_perftest -t tag_lat, 8 B) sits in the
same table: its median and p99 against half the raw 64 B RTT, as
ib_send_lat's, and its overall average without a raw figure.
"""
import argparse
import json
import sys

from perftest_json import STAGES  # the stages a line's "stages" holds, in order

STACK_OF_BENCH = {"uroce-raw": "raw"}
TRANSPORT_ORDER = ["ring", "memif", "af_packet", "af_xdp"]
MODE_ORDER = ["daemon", "embedded"]


def load(paths):
    lines = []
    for p in paths:
        try:
            with open(p) as f:
                for l in f:
                    l = l.strip()
                    if l.startswith("{"):
                        lines.append(json.loads(l))
        except (OSError, json.JSONDecodeError) as e:
            print(f"bench_table: skipping {p}: {e}", file=sys.stderr)
    return lines


def merge(lines):
    rows = {}
    for r in lines:
        stack = STACK_OF_BENCH.get(r.get("bench"), r.get("bench"))
        key = (r.get("transport"), r.get("payload_bytes"))
        row = rows.setdefault(key, {"transport": key[0], "payload_bytes": key[1],
                                    "frame_bytes": r.get("frame_bytes"),
                                    "stacks": {}})
        s = row["stacks"].setdefault(stack, {"ok": True, "errors": []})
        if not r.get("ok", False):
            s["ok"] = False
            s["errors"].append(f'{r.get("role")}: {r.get("error")}')
        # A row measured more than once (bench.sh runs raw memif in both of
        # the PMD's modes) keeps the better stream and, figure by figure,
        # the lower latencies: the baseline at its best.
        if "stream" in r and r["stream"]["payload_gbps"] >= s.get("payload_gbps", -1):
            st = r["stream"]
            s.update(mpps=st["mpps"], gbps=st["gbps"], payload_gbps=st["payload_gbps"],
                     packets=st["packets"], lost=st["lost"], seconds=st["seconds"])
            if "tx" in r:
                s.update(tx_mpps=r["tx"]["mpps"])
        if "rtt" in r:
            rt = r["rtt"]
            s.update(rtt_samples=rt["samples"] + s.get("rtt_samples", 0),
                     rtt_timeouts=rt["timeouts"] + s.get("rtt_timeouts", 0))
            # Lines of older runs lack the tail beyond p99.
            for k in ("median_us", "p99_us", "p999_us", "max_us"):
                if k in rt:
                    s[f"rtt_{k}"] = min(rt[k], s.get(f"rtt_{k}", rt[k]))
    def order(k):
        t = k[0] if k[0] in TRANSPORT_ORDER else "~" + str(k[0])
        return (TRANSPORT_ORDER.index(t) if t in TRANSPORT_ORDER else 99, t, k[1] or 0)
    out = [rows[k] for k in sorted(rows, key=order)]
    for row in out:
        raw = row["stacks"].get("raw", {})
        for name, s in row["stacks"].items():
            if name == "raw":
                continue
            ratio = {}
            for m in ("mpps", "gbps", "rtt_median_us", "rtt_p99_us", "rtt_p999_us", "rtt_max_us"):
                if raw.get(m) and s.get(m) is not None:
                    ratio[m] = s[m] / raw[m]
            s["ratio_to_raw"] = ratio
    return out


# metric: (perftest point, its figure, raw payload size, raw figure, scale
# of the raw figure, unit). Latencies: lower is better.
METRICS = [
    ("write_bw_64k_gbps", "write_bw", "gbps", 4096, "payload_gbps", 1.0, "Gb/s"),
    ("send_bw_64_mmsgps", "send_bw", "mmsgps", 64, "mpps", 1.0, "M msg/s"),
    ("send_lat_2_median_us", "send_lat", "lat_median_us", 64, "rtt_median_us", 0.5, "us"),
    ("send_lat_2_p99_us", "send_lat", "lat_p99_us", 64, "rtt_p99_us", 0.5, "us"),
    ("send_lat_2_p999_us", "send_lat", "lat_p999_us", 64, "rtt_p999_us", 0.5, "us"),
    ("send_lat_2_max_us", "send_lat", "lat_max_us", 64, "rtt_max_us", 0.5, "us"),
    # perftest reports a READ's latency as the whole round trip (SEND and
    # WRITE ping-pongs as half of it), so READ compares with the whole RTT.
    ("read_lat_2_median_us", "read_lat", "lat_median_us", 64, "rtt_median_us", 1.0, "us"),
    ("read_lat_2_p99_us", "read_lat", "lat_p99_us", 64, "rtt_p99_us", 1.0, "us"),
    ("read_lat_2_p999_us", "read_lat", "lat_p999_us", 64, "rtt_p999_us", 1.0, "us"),
    ("read_lat_2_max_us", "read_lat", "lat_max_us", 64, "rtt_max_us", 1.0, "us"),
    ("write_bw_64k_q16_gbps", "write_bw_q16", "gbps", 4096, "payload_gbps", 1.0, "Gb/s"),
    # UCX's tag-matching ping-pong of 8 B (ucx_perftest -t tag_lat), reported
    # as half the round trip like ib_send_lat; its overall average has no raw
    # counterpart.
    ("ucx_tag_lat_8_median_us", "ucx_tag_lat", "lat_median_us", 64, "rtt_median_us", 0.5, "us"),
    ("ucx_tag_lat_8_p99_us", "ucx_tag_lat", "lat_p99_us", 64, "rtt_p99_us", 0.5, "us"),
    ("ucx_tag_lat_8_p999_us", "ucx_tag_lat", "lat_p999_us", 64, "rtt_p999_us", 0.5, "us"),
    ("ucx_tag_lat_8_avg_us", "ucx_tag_lat", "lat_avg_us", 64, None, 1.0, "us"),
]

# Issue 17's bar, on memif, for each mode: (transport, metric, kind, value,
# text). "ratio_min" / "ratio_max": uroce/raw at least / at most value;
# "raw_plus_max": uroce at most raw + value; "min": uroce at least value.
# The raw figure is the metric's counterpart (METRICS): one way for
# ib_send_lat, the round trip for ib_read_lat.
GOALS = [
    ("memif", "send_lat_2_median_us", "raw_plus_max", 1.0, "<= raw memif one-way + 1.0 us"),
    ("memif", "send_lat_2_p99_us", "ratio_max", 3.0, "<= 3 x raw memif one-way p99"),
    ("memif", "read_lat_2_median_us", "raw_plus_max", 1.5, "<= raw memif RTT + 1.5 us"),
    ("memif", "send_bw_64_mmsgps", "min", 4.0, ">= 4 M msg/s"),
    ("memif", "write_bw_64k_gbps", "ratio_min", 0.85, ">= 0.85 x raw memif 4 KiB Gb/s"),
]
TARGETS = [(t, mode, metric, kind, value, text)
           for mode in MODE_ORDER for t, metric, kind, value, text in GOALS]


def mode_of(line):
    return line.get("mode") or "daemon"


def transport_key(t):
    return (TRANSPORT_ORDER.index(t) if t in TRANSPORT_ORDER else 99, str(t))


def mode_key(m):
    return (MODE_ORDER.index(m) if m in MODE_ORDER else 99, str(m))


def compare(lines, rows):
    """Comparison rows from the perftest lines and the merged raw rows."""
    raw = {(r["transport"], r["payload_bytes"]): r["stacks"].get("raw", {}) for r in rows}
    points = {}
    for l in lines:
        if l.get("bench") == "uroce-perftest":
            points[(l.get("transport"), mode_of(l), l.get("point"))] = l
    out = []
    keys = sorted({(t, m) for t, m, _ in points},
                  key=lambda k: (transport_key(k[0]), mode_key(k[1])))
    for t, mode in keys:
        for name, point, fig, size, rawfig, scale, unit in METRICS:
            p = points.get((t, mode, point))
            if p is None:
                continue
            r = raw.get((t, size), {})
            rv = r.get(rawfig)
            rv = None if rv is None or not r.get("ok", True) else rv * scale
            uv = p.get(fig) if p.get("ok") else None
            row = {"transport": t, "mode": mode, "metric": name, "unit": unit, "raw": rv,
                   "uroce": uv, "ratio": (uv / rv) if uv is not None and rv else None,
                   "daemon_cpu_pct": p.get("daemon_cpu_pct", {}),
                   "perftest_cpu_pct": p.get("perftest_cpu_pct", {}), "ok": bool(p.get("ok")),
                   "cmd": p.get("cmd", ""),
                   # The cache-line round trip before/after the point (the
                   # machine's speed state; stack_bench.sh), "" when absent.
                   "line_rtt_ns": p.get("meta", {}).get("line_rtt_ns", "")}
            if not p.get("ok"):
                row["error"] = p.get("error", "")
            out.append(row)
    return out


def targets(comparison):
    """Where each target stands: met true/false, or None without figures.
    Only for the transports and modes that ran (all when none did): a run
    of one mode or transport (bench.sh --modes, --transports) says nothing
    about the others."""
    by = {(c["transport"], c["mode"], c["metric"]): c for c in comparison}
    ran = {(c["transport"], c["mode"]) for c in comparison}
    out = []
    for t, mode, metric, kind, value, text in TARGETS:
        if ran and (t, mode) not in ran:
            continue
        c = by.get((t, mode, metric))
        met = None
        if c is not None and c["uroce"] is not None:
            if kind == "ratio_min" and c["ratio"] is not None:
                met = c["ratio"] >= value
            elif kind == "ratio_max" and c["ratio"] is not None:
                met = c["ratio"] <= value
            elif kind == "raw_plus_max" and c["raw"] is not None:
                met = c["uroce"] <= c["raw"] + value
            elif kind == "min":
                met = c["uroce"] >= value
        out.append({"transport": t, "mode": mode, "metric": metric, "target": text, "met": met,
                    "uroce": None if c is None else c["uroce"],
                    "raw": None if c is None else c["raw"],
                    "ratio": None if c is None else c["ratio"]})
    return out


def mode_ratios(comparison):
    """Per transport and metric measured in both modes: embedded / daemon."""
    by = {(c["transport"], c["mode"], c["metric"]): c for c in comparison}
    out = []
    for c in comparison:
        if c["mode"] != "daemon":
            continue
        e = by.get((c["transport"], "embedded", c["metric"]))
        if e is None:
            continue
        d, u = c["uroce"], e["uroce"]
        out.append({"transport": c["transport"], "metric": c["metric"], "unit": c["unit"],
                    "daemon": d, "embedded": u,
                    "embedded_over_daemon": u / d if u is not None and d else None})
    return out


def cpu_cell(c):
    """The CPU column: the daemons' (a/b), else the perftest processes' ("pt a/b")."""
    for key, label in (("daemon_cpu_pct", ""), ("perftest_cpu_pct", "pt ")):
        cpu = c.get(key) or {}
        if cpu:
            return label + "/".join(fmt(cpu.get(k), 0) for k in ("a", "b"))
    return ""


def stages_table(lines):
    """Per stack point run with --stages, per side (a: perftest's server,
    b: its client): each stage's p99 over the point and, in brackets, its
    mean over the slowest 1 % of the last tracked messages (docs/tails.md)."""
    def us(ns):
        return "-" if ns is None else f"{ns / 1000:.1f}"
    body = []
    for l in lines:
        for side, st in sorted((l.get("stages") or {}).items()):
            if "error" in st:
                body.append([l.get("transport", ""), l.get("mode", ""), l.get("point", ""), side,
                             st["error"]] + [""] * (len(STAGES) - 1))
                continue
            body.append([l.get("transport", ""), l.get("mode", ""), l.get("point", ""), side] +
                        [f'<{us(st[k]["p99_ns"] + 1)} ({us(st[k]["slowest_mean_ns"])})'
                         if st.get(k, {}).get("count") else "-" for k in STAGES])
    if not body:
        return ""
    head = ["transport", "mode", "point", "side"] + [k[:-3] + " p99 (slowest)" for k in STAGES]
    return "\n".join(["stage stamps, us: p99 as a bucket bound, and the slowest 1 %'s mean"] +
                     grid(head, body))


def grid(head, body):
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    lines = ["  ".join(x.rjust(w) for x, w in zip(l, widths)) for l in [head] + body]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return lines


def comparison_table(comparison, goals, ratios=()):
    head = ["transport", "mode", "metric", "unit", "raw", "uroce", "uroce/raw",
            "CPU % a/b (daemons; pt: perftest)", "line RTT ns"]
    body = []
    for c in comparison:
        body.append([c["transport"], c["mode"], c["metric"], c["unit"], fmt(c["raw"], 3),
                     fmt(c["uroce"], 3) + ("" if c["ok"] else "!"), fmt(c["ratio"], 3),
                     cpu_cell(c), c.get("line_rtt_ns") or "-"])
    if not body:
        return ""
    lines = grid(head, body)
    for g in goals:
        state = {True: "MET", False: "MISSED", None: "NOT MEASURED"}[g["met"]]
        lines.append(f'target {g["transport"]} {g["mode"]} {g["metric"]} {g["target"]}: '
                     f'{state} (uroce {fmt(g["uroce"], 3)}, raw {fmt(g["raw"], 3)}, '
                     f'ratio {fmt(g["ratio"], 3)})')
    if ratios:
        lines.append("")
        lines += grid(["transport", "metric", "unit", "daemon", "embedded", "embedded/daemon"],
                      [[r["transport"], r["metric"], r["unit"], fmt(r["daemon"], 3),
                        fmt(r["embedded"], 3), fmt(r["embedded_over_daemon"], 3)]
                       for r in ratios])
    return "\n".join(lines)


def fmt(v, digits=2):
    return "-" if v is None else f"{v:.{digits}f}"


def table(rows):
    stacks = ["raw"] + sorted({n for r in rows for n in r["stacks"]} - {"raw"})
    head = ["transport", "size"]
    for n in stacks:
        head += [f"{n} Mpps", f"{n} Gb/s", f"{n} RTT med us", f"{n} RTT p99 us"]
        if n != "raw":
            head += [f"{n}/raw Gb/s", f"{n}/raw RTT"]
    body = []
    for r in rows:
        line = [str(r["transport"]), str(r["payload_bytes"])]
        for n in stacks:
            s = r["stacks"].get(n, {})
            bad = "" if s.get("ok", True) else "!"
            line += [fmt(s.get("mpps"), 3) + bad, fmt(s.get("gbps")) + bad,
                     fmt(s.get("rtt_median_us"), 3) + bad, fmt(s.get("rtt_p99_us"), 3) + bad]
            if n != "raw":
                ratio = s.get("ratio_to_raw", {})
                line += [fmt(ratio.get("gbps"), 3), fmt(ratio.get("rtt_median_us"), 3)]
        body.append(line)
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    lines = ["  ".join(x.rjust(w) for x, w in zip(l, widths)) for l in [head] + body]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--meta", action="append", default=[])
    ap.add_argument("inputs", nargs="*")
    a = ap.parse_args()
    lines = load(a.inputs)
    rows = merge([l for l in lines if l.get("bench") != "uroce-perftest"])
    comp = compare(lines, rows)
    goals = targets(comp)
    ratios = mode_ratios(comp)
    meta = dict(kv.split("=", 1) for kv in a.meta)
    doc = {"schema": 1, "meta": meta,
           "units": {"mpps": "million frames/s received",
                     "gbps": "L2 frame bits/s (Ethernet header..UDP payload, no FCS/preamble/IFG)",
                     "payload_gbps": "UDP payload bits/s",
                     "rtt_median_us": "round trip, microseconds"},
           "rows": rows, "comparison": comp, "targets": goals, "modes": ratios}
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    if rows:
        print(table(rows))
    if comp:
        print()
        print(comparison_table(comp, goals, ratios))
    st = stages_table([l for l in lines if l.get("bench") == "uroce-perftest"])
    if st:
        print()
        print(st)
    failed = [f'{r["transport"]}/{r["payload_bytes"]}/{n}: {"; ".join(s["errors"])}'
              for r in rows for n, s in r["stacks"].items() if not s.get("ok", True)]
    failed += [f'{c["transport"]}/{c["mode"]}/{c["metric"]}/uroce: {c.get("error", "")}'
               for c in comp if not c["ok"]]
    for f in failed:
        print("FAILED:", f, file=sys.stderr)
    return 1 if failed or not (rows or comp) else 0


if __name__ == "__main__":
    sys.exit(main())
