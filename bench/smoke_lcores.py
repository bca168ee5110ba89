#!/usr/bin/python3
"""Smoke test of uroce-lcore-bench: short runs with two engine lcores, each
lcore's QPs talking to peers of their own lcore (nothing handed off) and
across lcores (--cross: every frame handed to its owner through the
hand-off rings), 64 B SENDs and 64 KiB WRITEs. The JSON lines must parse,
count completions on every lcore, report no error and no refused hand-off,
and have verified the destination memory. Not a performance check.

    smoke_lcores.py PATH/TO/uroce-lcore-bench
"""
import sys

from smoke_runs import run_all

COMMON = ["--lcores", "2", "--warmup", "0.05", "--duration", "0.2", "--memory", "512"]
RUNS = [
    ["--op", "send", "--size", "64"],
    ["--op", "send", "--size", "64", "--cross"],
    ["--op", "write", "--size", "65536", "--cross"],
]


def check(args, r):
    f = []
    cross = "--cross" in args
    if r.get("bench") != "uroce-lcore" or r.get("lcores") != 2 or r.get("cross") != cross:
        f.append(f"bench/lcores/cross are {r.get('bench')!r}/{r.get('lcores')}/{r.get('cross')}")
    if r.get("errors") != 0 or r.get("verified") is not True:
        f.append(f"errors {r.get('errors')}, verified {r.get('verified')}")
    per = r.get("msgs_per_s_per_lcore", [])
    if len(per) != 2 or min(per) <= 0:
        f.append(f"an lcore completed nothing: {per}")
    if r.get("rx_handoff_drop") != 0:
        f.append(f"{r.get('rx_handoff_drop')} hand-offs refused")
    h = r.get("handoffs_per_msg", -1)
    # Crossed, each message's request and its ACK (or the responses) land
    # on the lcore that does not own their QP: at least one hand-off each.
    if cross and h < 1:
        f.append(f"crossed, yet {h} hand-offs per message")
    if not cross and h != 0:
        f.append(f"straight, yet {h} hand-offs per message")
    return f


def main() -> int:
    return 1 if run_all(sys.argv[1], RUNS, COMMON, check, 40) else 0


if __name__ == "__main__":
    sys.exit(main())
