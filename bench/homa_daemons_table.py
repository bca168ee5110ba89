#!/usr/bin/python3
"""Must-show 2 of issue 15 (scripts/homa-daemons.sh, docs/homa.md).

    homa_daemons_table.py point --round R --mode off|on --point alone|loaded
                                --role lat|eleph1|eleph2 --status RC [--cmd TEXT]
                                [--meta K=V ...] OUTPUT
        one JSON line from one perftest client output (bench/perftest_json.py
        reads its result row). Meta qps_HOST=FILE (a daemon's `uroce-ctl --json
        qps` taken while the elephants ran) adds that host's RC QPs: the
        scheduler's per-QP counters and the transport's retransmissions.
    homa_daemons_table.py counters --round R --mode M --status HOST=FILE ...
        one JSON line of each daemon's device counters at the mode's end
        (`uroce-ctl --json status`): the homa_* counters and, on a device
        that runs the scheduler, its receiver's.
    homa_daemons_table.py table --out FILE [--meta K=V ...] POINTS.jsonl
        prints the tables, writes everything as JSON.
Figures are what perftest and the daemons reported; nothing is estimated.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from isolation_table import fmt  # noqa: E402
from perftest_json import parse  # noqa: E402

HOSTS = ("r", "s1", "s2")
QP_HOMA = ("gated", "mlen", "wait_grant", "grants", "grant_stale", "timeouts", "fallbacks")
QP_RC = ("tx_retransmits", "go_back_n", "timeouts", "rx_seq_naks", "drop_out_of_sequence",
         "rx_duplicates")


def qp_summary(path):
    """The RC QPs of one daemon's snapshot, their counters summed."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        return {"error": str(e)}
    qps = [q for q in doc.get("qps", []) if q.get("type") == "RC"]
    out = {"qps": len(qps), "homa_peer": [bool(q.get("homa_peer")) for q in qps]}
    for k in QP_HOMA:
        out["homa_" + k] = sum(int(q.get("homa", {}).get(k, 0)) for q in qps)
    for k in QP_RC:
        out["rc_" + k] = sum(int(q.get("transport", {}).get(k, 0)) for q in qps)
    return out


def cmd_point(a):
    meta = dict(kv.split("=", 1) for kv in a.meta)
    line = {"type": "point", "round": a.round, "mode": a.mode, "point": a.point,
            "role": a.role, "cmd": a.cmd, "ok": False}
    fig = None
    try:
        with open(a.output) as f:
            fig = parse(f.read())
    except OSError as e:
        line["error"] = str(e)
    if a.status == 0 and fig is not None:
        line["ok"] = True
        line.update(fig)
    elif "error" not in line:
        line["error"] = ("exit status %s" % a.status if a.status != 0
                         else "no result row under a '#bytes' header")
    cpu = {}
    for k, v in meta.items():
        if k.startswith(("cpu_", "wait_")):
            cpu[k] = float(v)
        elif k in ("wall_s", "duration_s"):
            line[k] = float(v)
        elif k == "overlap":
            line[k] = int(v)
        elif k.startswith("qps_"):
            line.setdefault("qps", {})[k[4:]] = qp_summary(v)
    if cpu:
        line["daemon_pct"] = cpu
    print(json.dumps(line))
    return 0


def cmd_counters(a):
    line = {"type": "counters", "round": a.round, "mode": a.mode, "hosts": {}}
    for spec in a.status:
        host, path = spec.split("=", 1)
        try:
            with open(path) as f:
                dev = json.load(f)["devices"][0]
        except (OSError, ValueError, KeyError, IndexError) as e:
            line["hosts"][host] = {"error": str(e)}
            continue
        c = dev.get("counters", {})
        h = {k: v for k, v in c.items() if k.startswith("homa_")}
        for k in ("rx_frames", "tx_frames", "rx_bytes", "tx_bytes"):
            h[k] = c.get(k)
        rcv = (dev.get("homa") or {}).get("receiver")
        if rcv:
            h["receiver"] = rcv
        line["hosts"][host] = h
    print(json.dumps(line))
    return 0


def ratio(a, b):
    return a / b if a is not None and b else None


def print_table(headers, rows):
    w = [max(len(str(r[i])) for r in [headers] + rows) for i in range(len(headers))]
    for r in [headers] + rows:
        print("  ".join(str(c).rjust(w[i]) if i else str(c).ljust(w[i])
                        for i, c in enumerate(r)).rstrip())


def cmd_table(a):
    meta = dict(kv.split("=", 1) for kv in a.meta)
    points, counters = [], []
    with open(a.points) as f:
        for l in f:
            if l.strip():
                d = json.loads(l)
                (points if d.get("type") == "point" else counters).append(d)

    def find(r, m, p, role):
        for d in points:
            if (d["round"], d["mode"], d["point"], d["role"]) == (r, m, p, role):
                return d
        return None

    keys = []
    for d in points:
        if (d["round"], d["mode"]) not in keys:
            keys.append((d["round"], d["mode"]))
    rows, out_rows = [], []
    for r, m in keys:
        al, lo = find(r, m, "alone", "lat") or {}, find(r, m, "loaded", "lat") or {}
        e1, e2 = find(r, m, "loaded", "eleph1") or {}, find(r, m, "loaded", "eleph2") or {}
        cpu = lo.get("daemon_pct", {})
        row = {"round": r, "homa": m,
               "alone": {k: al.get(k) for k in ("lat_median_us", "lat_p99_us", "lat_p999_us")},
               "loaded": {k: lo.get(k) for k in ("lat_median_us", "lat_p99_us", "lat_p999_us")},
               "ok": bool(al.get("ok") and lo.get("ok") and e1.get("ok") and e2.get("ok")),
               "overlap": lo.get("overlap"), "eleph1_gbps": e1.get("gbps"),
               "eleph2_gbps": e2.get("gbps"), "daemon_pct": cpu, "qps": lo.get("qps", {})}
        row["p99_loaded_over_alone"] = ratio(lo.get("lat_p99_us"), al.get("lat_p99_us"))
        out_rows.append(row)
        rows.append([r, m, fmt(al.get("lat_median_us"), 1), fmt(al.get("lat_p99_us"), 1),
                     fmt(al.get("lat_p999_us"), 1), fmt(lo.get("lat_median_us"), 1),
                     fmt(lo.get("lat_p99_us"), 1), fmt(lo.get("lat_p999_us"), 1),
                     fmt(row["p99_loaded_over_alone"], 2), fmt(e1.get("gbps"), 2),
                     fmt(e2.get("gbps"), 2),
                     "/".join(fmt(cpu.get("cpu_" + h), 0) for h in HOSTS),
                     "/".join(fmt(cpu.get("wait_" + h), 0) for h in HOSTS),
                     "yes" if lo.get("overlap") == 1 else "PARTIAL",
                     "ok" if row["ok"] else "FAILED"])
    print("64 B SEND ping-pong (ib_send_lat, S1 -> R), alone and beside two %s streams "
          "of %s B messages (S1, S2 -> R); us" % (meta.get("elephants", "?"),
                                                 meta.get("elephant_size", "?")))
    print_table(["round", "homa", "alone p50", "p99", "p99.9", "loaded p50", "p99", "p99.9",
                 "p99 x alone", "e1 Gb/s", "e2 Gb/s", "CPU% R/S1/S2", "wait% R/S1/S2",
                 "overlap", "runs"], rows)

    # The scheduler's and the transport's counters while the elephants ran.
    crows = []
    for row in out_rows:
        q = row["qps"]
        cnt = next((c for c in counters if (c["round"], c["mode"]) == (row["round"],
                                                                       row["homa"])), {})
        rh = cnt.get("hosts", {}).get("r", {})
        rg = (rh.get("receiver") or {}).get("counters", {})
        crows.append([row["round"], row["homa"],
                      ",".join("yes" if p else "no" for h in ("s1", "s2")
                               for p in q.get(h, {}).get("homa_peer", [])) or "-",
                      fmt(rh.get("homa_tx_grants"), 1), fmt(rg.get("resends"), 1),
                      fmt(rg.get("fifo_grants"), 1), fmt(rg.get("incoming_capped"), 1),
                      "/".join(fmt(q.get(h, {}).get("homa_gated")) for h in ("s1", "s2")),
                      "/".join(fmt(q.get(h, {}).get("homa_wait_grant")) for h in ("s1", "s2")),
                      "/".join(fmt(q.get(h, {}).get("homa_timeouts")) for h in ("s1", "s2")),
                      "/".join(fmt(q.get(h, {}).get("homa_fallbacks")) for h in ("s1", "s2")),
                      "/".join(fmt(q.get(h, {}).get("rc_tx_retransmits")) for h in ("s1", "s2")),
                      "/".join(fmt(q.get(h, {}).get("rc_timeouts")) for h in ("s1", "s2")),
                      fmt(q.get("r", {}).get("rc_drop_out_of_sequence"))])
    print()
    print("Counters: the elephants' QPs right after the ping-pong (S1/S2), R's device at the end")
    print_table(["round", "homa", "peer S1,S2", "R GRANTs", "resends", "FIFO", "capped",
                 "gated S1/S2", "wait_grant", "grant t/o", "fallbacks", "retransmits",
                 "RC t/o", "R out-of-seq"], crows)

    summary = []
    for r in sorted({row["round"] for row in out_rows}):
        off = next((x for x in out_rows if x["round"] == r and x["homa"] == "off"), None)
        on = next((x for x in out_rows if x["round"] == r and x["homa"] == "on"), None)
        if not off or not on:
            continue
        s = {"round": r}
        for k in ("lat_median_us", "lat_p99_us", "lat_p999_us"):
            s["loaded_on_over_off_" + k] = ratio(on["loaded"][k], off["loaded"][k])
        s["eleph_gbps_off"] = sum(x or 0 for x in (off["eleph1_gbps"], off["eleph2_gbps"]))
        s["eleph_gbps_on"] = sum(x or 0 for x in (on["eleph1_gbps"], on["eleph2_gbps"]))
        summary.append(s)
    if summary:
        print()
        for s in summary:
            print("round %s, loaded, homa on / off: p50 %s  p99 %s  p99.9 %s; elephants "
                  "together %.2f Gb/s off, %.2f on" % (
                      s["round"], fmt(s["loaded_on_over_off_lat_median_us"], 2),
                      fmt(s["loaded_on_over_off_lat_p99_us"], 2),
                      fmt(s["loaded_on_over_off_lat_p999_us"], 2), s["eleph_gbps_off"],
                      s["eleph_gbps_on"]))
    print("load average before %s, after %s" % (meta.get("loadavg_before", "-"),
                                                  meta.get("loadavg_after", "-")))
    with open(a.out, "w") as f:
        json.dump({"meta": meta, "rows": out_rows, "summary": summary, "points": points,
                   "counters": counters}, f, indent=1)
    return 0 if all(x["ok"] for x in out_rows) else 1


def main(argv=None):
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="sub", required=True)
    p = sub.add_parser("point")
    p.add_argument("--round", type=int, required=True)
    p.add_argument("--mode", required=True)
    p.add_argument("--point", required=True)
    p.add_argument("--role", required=True)
    p.add_argument("--status", type=int, required=True)
    p.add_argument("--cmd", default="")
    p.add_argument("--meta", action="append", default=[])
    p.add_argument("output", nargs="?", default="")
    c = sub.add_parser("counters")
    c.add_argument("--round", type=int, required=True)
    c.add_argument("--mode", required=True)
    c.add_argument("--status", action="append", default=[])
    t = sub.add_parser("table")
    t.add_argument("--out", required=True)
    t.add_argument("--meta", action="append", default=[])
    t.add_argument("points")
    a = ap.parse_args(argv)
    return {"point": cmd_point, "counters": cmd_counters, "table": cmd_table}[a.sub](a)


if __name__ == "__main__":
    sys.exit(main())
