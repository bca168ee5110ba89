#!/usr/bin/python3
"""Checks `uroce-ctl sched --json` (on stdin) against what a test set up.

    uroce-ctl --run-dir RUN sched --json | ctl_sched.py IBDEV QPS STRICT WEIGHTS

IBDEV's device entry must say isolation "classes", the classes listed in
STRICT ("6,7") must be strict and the others weighted with WEIGHTS
("1,2,...", classes 0.. in order, the rest 1); exactly QPS QPs of IBDEV
must be listed, each with its class (a number 0..7, from the DSCP when not
pinned) and its pacing fields; with RATE_BPS, exactly one of them paced
at that rate and the others not paced (RATE_BPS 0: none paced). Prints what it found; exit 0 when all
holds, 1 with the first mismatch, 2 when the input is not the status JSON.
"""
import json
import sys

PACE_KEYS = ("rate_bps", "burst_bytes", "parks", "paced_ns", "sent_bytes")


def check(doc, ibdev, nqps, strict, weights, rate_bps):
    devs = [d for d in doc.get("devices", []) if d.get("name") == ibdev]
    if len(devs) != 1:
        return "device %s not listed once" % ibdev
    s = devs[0].get("sched")
    if not isinstance(s, dict):
        return "device %s has no sched object" % ibdev
    if s.get("isolation") != "classes":
        return "isolation is %r, not 'classes'" % s.get("isolation")
    classes = s.get("classes", [])
    if len(classes) != 8:
        return "%d classes, not 8" % len(classes)
    for c in classes:
        k = c.get("class")
        mode = "strict" if k in strict else "weighted"
        weight = weights[k] if k < len(weights) else 1
        if c.get("mode") != mode or c.get("weight") != weight:
            return "class %s is %s/%s, not %s/%s" % (k, c.get("mode"), c.get("weight"),
                                                    mode, weight)
    qps = [q for q in doc.get("qps", []) if q.get("device") == ibdev]
    print("%s: isolation %s, %d QPs: %s" % (
        ibdev, s["isolation"], len(qps),
        " ".join("%s/class %s%s" % (q.get("qpn"), q.get("sched", {}).get("class"),
                                     " pinned" if q.get("sched", {}).get("pinned") else "")
                 for q in qps)))
    if len(qps) != nqps:
        return "%d QPs of %s listed, not %d" % (len(qps), ibdev, nqps)
    for q in qps:
        qs = q.get("sched")
        if not isinstance(qs, dict) or qs.get("class") not in range(8):
            return "QP %s has no class" % q.get("qpn")
        if not isinstance(qs.get("pinned"), bool) or not isinstance(qs.get("paced"), bool):
            return "QP %s lacks pinned/paced" % q.get("qpn")
        if any(not isinstance(qs.get(k), int) for k in PACE_KEYS):
            return "QP %s lacks a pacing field" % q.get("qpn")
        if not isinstance(q.get("send_queue"), int):
            return "QP %s lacks send_queue" % q.get("qpn")
    if rate_bps is not None:
        paced = [q["sched"] for q in qps if q["sched"]["paced"]]
        if rate_bps == 0 and paced:
            return "paced QPs %s, expected none" % [p["rate_bps"] for p in paced]
        if rate_bps != 0 and (len(paced) != 1 or paced[0]["rate_bps"] != rate_bps):
            return "paced QPs %s, not one at %d b/s" % (
                [(p["rate_bps"], p["burst_bytes"]) for p in paced], rate_bps)
        if any(q["sched"]["rate_bps"] != 0 for q in qps if not q["sched"]["paced"]):
            return "an unpaced QP shows a rate"
    return None


def main(argv):
    try:
        doc = json.load(sys.stdin)
    except ValueError:
        print("not JSON")
        return 2
    strict = {int(x) for x in argv[3].split(",") if x}
    weights = [int(x) for x in argv[4].split(",") if x]
    rate = int(argv[5]) if len(argv) > 5 else None
    why = check(doc, argv[1], int(argv[2]), strict, weights, rate)
    if why:
        print(why)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
