#!/usr/bin/python3
"""The isolation experiments' results (scripts/isolation.sh, docs/isolation.md).

    isolation_table.py line --link L --mode M --point P --role small|elephants
                            --status RC [--cmd TEXT] [--meta K=V ...] OUTPUT
        one JSON line from one perftest client output (bench/perftest_json.py
        reads the result row). With meta sched_a=FILE / sched_b=FILE (the
        daemons' `uroce-ctl --json sched` while the small flow ran beside the
        elephants) it adds, per side, the QPs of each client: their classes
        and bytes sent.
    isolation_table.py table --out FILE [--meta K=V ...] POINTS.jsonl
        prints the table and the goals, writes them as JSON.

Points: lat, thr, eleph1, eleph16 alone; lat+eleph1, lat+eleph16,
thr+eleph1, thr+eleph16 together (the small flow's line and the
elephants' line share the point name, told apart by role).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perftest_json import parse  # noqa: E402

# The goals, with isolation on (docs/isolation.md).
LAT_P99_MAX = 1.5
ELEPH_MIN = 0.90
THR_MIN = 0.50


def sched_groups(path):
    """QPs of one daemon's sched snapshot, grouped by client id in order of
    connection: [{"client", "qpns", "classes", "sent_bytes"}]."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        return {"error": str(e)}
    by_client = {}
    for q in doc.get("qps", []):
        if q.get("type") != "RC":
            continue
        s = q.get("sched", {})
        g = by_client.setdefault(q.get("client"), {"client": q.get("client"), "qpns": [],
                                                   "classes": [], "sent_bytes": 0})
        g["qpns"].append(q.get("qpn"))
        # Isolation auto: a QP that posted nothing (the server of a WRITE
        # stream) is of kind "none" and has no class of its own to check.
        if s.get("kind") != "none":
            g["classes"].append(s.get("class"))
        g["sent_bytes"] += int(s.get("sent_bytes", 0))
    dev = (doc.get("devices") or [{}])[0].get("sched", {})
    return {"isolation": dev.get("isolation"),
            "strict": [c["class"] for c in dev.get("classes", []) if c.get("mode") == "strict"],
            "clients": sorted(by_client.values(), key=lambda g: g["client"])}


def cmd_line(a):
    meta = dict(kv.split("=", 1) for kv in a.meta)
    line = {"link": a.link, "mode": a.mode, "point": a.point, "role": a.role,
            "cmd": a.cmd, "ok": False}
    fig = None
    why = ""
    if a.output:
        try:
            with open(a.output) as f:
                fig = parse(f.read())
        except OSError as e:
            why = str(e)
    else:
        why = "not run"
    if a.status == 0 and fig is not None:
        line["ok"] = True
        line.update(fig)
    else:
        line["error"] = why or ("exit status %s" % a.status if a.status != 0
                                else "no result row under a '#bytes' header")
    for k in ("overlap", "elephants"):
        if k in meta:
            line[k] = int(meta[k])
    cpu = {k: float(meta[k]) for k in ("cpu_a", "wait_a", "cpu_b", "wait_b") if k in meta}
    if cpu:
        line["daemon_pct"] = cpu
    for k in ("duration_s", "wall_s", "setup_s"):
        if k in meta:
            line[k] = float(meta[k])
    sched = {}
    for side in ("a", "b"):
        p = meta.get("sched_" + side)
        if p:
            sched[side] = sched_groups(p)
    if sched:
        line["sched"] = sched
    print(json.dumps(line))
    return 0


def fmt(v, digits=2):
    if v is None:
        return "-"
    if isinstance(v, float):
        return "%.*f" % (digits, v)
    return str(v)


def sched_check(small_line, elephants, small_class, eleph_class):
    """Whether, on both daemons, the small flow's QP sat in small_class and
    every elephant QP in eleph_class. The elephants' client connected first
    (lower id) and holds `elephants` QPs."""
    sched = small_line.get("sched")
    if not sched:
        return None, "no snapshot"
    notes = []
    ok = True
    checked = 0  # QPs with a class to check, both sides
    for side in ("a", "b"):
        s = sched.get(side)
        if not s or "error" in s:
            return None, "side %s: %s" % (side, (s or {}).get("error", "missing"))
        groups = s["clients"]
        if len(groups) < 2:
            return False, "side %s: %d client(s) with QPs" % (side, len(groups))
        eg, sg = groups[0], groups[-1]
        if len(eg["qpns"]) != elephants or len(sg["qpns"]) != 1:
            ok = False
        for g, want in ((sg, small_class), (eg, eleph_class)):
            if g["classes"] and set(g["classes"]) != {want}:
                ok = False
        checked += len(sg["classes"]) + len(eg["classes"])

        def shown(g):
            return "/".join(map(str, sorted(set(g["classes"])))) or "none (posted nothing)"
        notes.append("%s: small class %s, elephants %s" % (side, shown(sg), shown(eg)))
    return ok and checked > 0, "; ".join(notes)


AUTO_CLASSES = {"lat": 6, "thr": 3, "eleph": 0}


def cmd_table(a):
    meta = dict(kv.split("=", 1) for kv in a.meta)
    lines = []
    with open(a.points) as f:
        for l in f:
            l = l.strip()
            if l:
                lines.append(json.loads(l))
    classes = {"lat": int(meta.get("lat_class", 6)), "thr": int(meta.get("thr_class", 3))}
    eleph_class = int(meta.get("elephant_class", 0))

    def get(link, mode, point, role):
        for l in lines:
            if (l["link"], l["mode"], l["point"], l["role"]) == (link, mode, point, role):
                return l
        return None

    def val(l, key):
        return l.get(key) if l and l.get("ok") else None

    def ratio(x, y):
        return x / y if x is not None and y else None

    links = list(dict.fromkeys(l["link"] for l in lines))
    modes = list(dict.fromkeys(l["mode"] for l in lines))
    rows = []
    for link in links:
        for mode in modes:
            lat0 = get(link, mode, "lat", "small")
            thr0 = get(link, mode, "thr", "small")
            el0 = {q: get(link, mode, "eleph%d" % q, "elephants") for q in (1, 16)}
            for point, small, q in (("lat", "lat", 0), ("lat+eleph1", "lat", 1),
                                    ("lat+eleph16", "lat", 16), ("thr", "thr", 0),
                                    ("thr+eleph1", "thr", 1), ("thr+eleph16", "thr", 16),
                                    ("eleph1", None, 1), ("eleph16", None, 16)):
                r = {"link": link, "mode": mode, "point": point, "elephants": q}
                sl = get(link, mode, point, "small") if small else None
                el = get(link, mode, point if small and q else "eleph%d" % q, "elephants") \
                    if q else None
                if small is None and el is None:
                    continue
                if small and sl is None:
                    continue
                if small == "lat":
                    r["lat_median_us"] = val(sl, "lat_median_us")
                    r["lat_p99_us"] = val(sl, "lat_p99_us")
                    r["lat_median_ratio"] = ratio(r["lat_median_us"], val(lat0, "lat_median_us"))
                    r["lat_p99_ratio"] = ratio(r["lat_p99_us"], val(lat0, "lat_p99_us"))
                if small == "thr":
                    r["thr_mmsgps"] = val(sl, "mmsgps")
                    r["thr_ratio"] = ratio(r["thr_mmsgps"], val(thr0, "mmsgps"))
                if q:
                    r["eleph_gbps"] = val(el, "gbps")
                    r["eleph_ratio"] = ratio(r["eleph_gbps"], val(el0[q], "gbps")) \
                        if small else None
                src = sl if sl is not None else el
                if src is not None and src.get("daemon_pct"):
                    r["daemon_pct"] = src["daemon_pct"]
                ok = [x.get("ok") for x in (sl, el) if x is not None]
                r["ok"] = all(ok) if ok else False
                errs = [x.get("error") for x in (sl, el) if x is not None and not x.get("ok")]
                if errs:
                    r["error"] = "; ".join(errs)
                if small and q:
                    r["overlap"] = sl.get("overlap")
                    # Isolation auto: the classes its classifier gives
                    # (sched/flow_classifier.h), whatever was configured.
                    want = AUTO_CLASSES if mode == "auto" else dict(classes, eleph=eleph_class)
                    r["sched_ok"], r["sched"] = sched_check(sl, q, want[small], want["eleph"])
                rows.append(r)

    # The goals, per link, with isolation on against 16 elephants (and 1).
    goals = []
    for link in links:
        for mode in modes:
            def row(p):
                for r in rows:
                    if (r["link"], r["mode"], r["point"]) == (link, mode, p):
                        return r
                return {}
            for q in (1, 16):
                r = row("lat+eleph%d" % q)
                goals.append({"link": link, "mode": mode,
                              "goal": "latency p99 together/alone <= %.1f (%d elephant%s)"
                                      % (LAT_P99_MAX, q, "s" if q > 1 else ""),
                              "value": r.get("lat_p99_ratio"),
                              "met": None if r.get("lat_p99_ratio") is None
                              else r["lat_p99_ratio"] <= LAT_P99_MAX})
                goals.append({"link": link, "mode": mode,
                              "goal": "elephants beside the latency flow >= %d%% of alone (%d)"
                                      % (ELEPH_MIN * 100, q),
                              "value": r.get("eleph_ratio"),
                              "met": None if r.get("eleph_ratio") is None
                              else r["eleph_ratio"] >= ELEPH_MIN})
            r = row("thr+eleph16")
            goals.append({"link": link, "mode": mode,
                          "goal": "throughput flow against 16 elephants >= %d%% of alone"
                                  % (THR_MIN * 100),
                          "value": r.get("thr_ratio"),
                          "met": None if r.get("thr_ratio") is None
                          else r["thr_ratio"] >= THR_MIN})

    out = sys.stdout
    print("Isolation experiments (scripts/isolation.sh); load average before %s, after %s"
          % (meta.get("loadavg_before", "?"), meta.get("loadavg_after", "?")), file=out)
    print("", file=out)
    print("| link | isolation | point | lat median us | lat p99 us | p99 / alone "
          "| thr M msg/s | thr / alone | elephants Gb/s | elephants / alone "
          "| daemons CPU/wait % A; B | classes |", file=out)
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|", file=out)
    for r in rows:
        note = ""
        if "sched_ok" in r:
            note = {True: "ok", False: "WRONG", None: "?"}[r["sched_ok"]]
        if r.get("overlap") == 0:
            note += " partial overlap"
        if not r["ok"]:
            note += " FAILED"
        d = r.get("daemon_pct")
        dtxt = "%.0f/%.0f; %.0f/%.0f" % (d["cpu_a"], d["wait_a"], d["cpu_b"], d["wait_b"]) \
            if d else "-"
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["link"], r["mode"], r["point"],
            fmt(r.get("lat_median_us")), fmt(r.get("lat_p99_us")),
            fmt(r.get("lat_p99_ratio")), fmt(r.get("thr_mmsgps"), 4),
            fmt(r.get("thr_ratio")), fmt(r.get("eleph_gbps")), fmt(r.get("eleph_ratio")),
            dtxt, note.strip()), file=out)
    print("", file=out)
    print("| link | isolation | goal | value | |", file=out)
    print("|---|---|---|---:|---|", file=out)
    for g in goals:
        print("| %s | %s | %s | %s | %s |" % (
            g["link"], g["mode"], g["goal"], fmt(g["value"]),
            {True: "met", False: "missed", None: "no figure"}[g["met"]]), file=out)
    bad = [r for r in rows if r.get("sched_ok") is False]
    for r in bad:
        print("classes not as configured: %s %s %s: %s"
              % (r["link"], r["mode"], r["point"], r.get("sched")), file=out)

    doc = {"bench": "uroce-isolation", "schema": 1, "meta": meta, "rows": rows,
           "goals": goals, "points": lines}
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="action", required=True)
    l = sub.add_parser("line")
    l.add_argument("--link", required=True)
    l.add_argument("--mode", required=True)
    l.add_argument("--point", required=True)
    l.add_argument("--role", required=True, choices=["small", "elephants"])
    l.add_argument("--status", required=True)
    l.add_argument("--cmd", default="")
    l.add_argument("--meta", action="append", default=[])
    l.add_argument("output", nargs="?", default="")
    t = sub.add_parser("table")
    t.add_argument("--out", required=True)
    t.add_argument("--meta", action="append", default=[])
    t.add_argument("points")
    a = ap.parse_args(argv)
    if a.action == "line":
        try:
            a.status = int(a.status)
        except ValueError:
            a.status = 1
        return cmd_line(a)
    return cmd_table(a)


if __name__ == "__main__":
    sys.exit(main())
