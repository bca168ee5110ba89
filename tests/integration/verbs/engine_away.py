#!/usr/bin/python3
"""How long a daemon's engine was away for longer than a credit.

  engine_away.py BEFORE.json AFTER.json CREDIT_NS

BEFORE and AFTER are `uroce-ctl status --json` taken around a run. From
the difference of daemon.engine_loops (datapath/engine/loop_histogram.h:
bucket b holds intervals in [2^(b-1), 2^b) ns between two iterations'
starts) it prints, in ns, an upper bound on the time the loop spent in
intervals beyond CREDIT_NS: every interval in a bucket whose ceiling is
over the credit counts as its ceiling less the credit. A rate limiter that
keeps CREDIT_NS of credit catches up on any shorter absence, so this is
the most rate it may have lost to the engine being off the CPU.
"""
import json
import sys

LAST_BUCKET = 31


def ceiling_ns(b):
    if b == 0:
        return 0
    if b >= LAST_BUCKET:
        # The open bucket (a second or more): unbounded, so a run with
        # such an absence has no lower bound left to check.
        return float("inf")
    return (1 << b) - 1


def loops(path):
    with open(path, encoding="utf-8") as f:
        status = json.load(f)
    return status["daemon"]["engine_loops"]


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: engine_away.py BEFORE.json AFTER.json CREDIT_NS")
    before, after, credit = loops(sys.argv[1]), loops(sys.argv[2]), int(sys.argv[3])
    if len(before) != len(after):
        sys.exit(f"lcore lists differ: {len(before)} before, {len(after)} after")
    away = 0.0
    for b_lc, a_lc in zip(before, after):
        for kind in ("work_ns", "idle_ns"):
            for b, (n0, n1) in enumerate(zip(b_lc[kind], a_lc[kind])):
                if n1 < n0:
                    sys.exit(f"lcore {a_lc['lcore']} {kind}[{b}] went down: {n0} -> {n1}")
                if n1 > n0 and ceiling_ns(b) > credit:
                    away += (n1 - n0) * (ceiling_ns(b) - credit)
    print(int(away) if away != float("inf") else "inf")


if __name__ == "__main__":
    main()
