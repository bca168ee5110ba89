#!/usr/bin/python3
"""Merges the JSON lines of benchmark runs into one table and one JSON file.

    bench_table.py --out FILE [--meta KEY=VALUE ...] RESULT.json...

Every input file holds JSON lines written by a benchmark program. A line's
"bench" names the stack it measured ("uroce-raw" -> "raw"; later stacks add
their own names), "transport" and "payload_bytes" name the row, and the role
says what it carries: "stream" sections (receiver, ring-selftest) give the
rates, "rtt" sections (ping, ring-selftest) the latencies. The raw stack is
the baseline; every other stack gets its figures and their ratio to raw.
"""
import argparse
import json
import sys

STACK_OF_BENCH = {"uroce-raw": "raw"}
TRANSPORT_ORDER = ["ring", "memif", "af_packet"]


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
        if "stream" in r:
            st = r["stream"]
            s.update(mpps=st["mpps"], gbps=st["gbps"], payload_gbps=st["payload_gbps"],
                     packets=st["packets"], lost=st["lost"], seconds=st["seconds"])
        if "tx" in r:
            s.update(tx_mpps=r["tx"]["mpps"])
        if "rtt" in r:
            rt = r["rtt"]
            s.update(rtt_median_us=rt["median_us"], rtt_p99_us=rt["p99_us"],
                     rtt_samples=rt["samples"], rtt_timeouts=rt["timeouts"])
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
            for m in ("mpps", "gbps", "rtt_median_us", "rtt_p99_us"):
                if raw.get(m) and s.get(m) is not None:
                    ratio[m] = s[m] / raw[m]
            s["ratio_to_raw"] = ratio
    return out


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
    rows = merge(load(a.inputs))
    meta = dict(kv.split("=", 1) for kv in a.meta)
    doc = {"schema": 1, "meta": meta,
           "units": {"mpps": "million frames/s received",
                     "gbps": "L2 frame bits/s (Ethernet header..UDP payload, no FCS/preamble/IFG)",
                     "payload_gbps": "UDP payload bits/s",
                     "rtt_median_us": "round trip, microseconds"},
           "rows": rows}
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(table(rows))
    failed = [f'{r["transport"]}/{r["payload_bytes"]}/{n}: {"; ".join(s["errors"])}'
              for r in rows for n, s in r["stacks"].items() if not s.get("ok", True)]
    for f in failed:
        print("FAILED:", f, file=sys.stderr)
    return 1 if failed or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
