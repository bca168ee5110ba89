#!/usr/bin/python3
"""Smoke test of uroce-engine-bench: short runs over the net_ring pair
(64 B SEND, 64 KiB WRITE, a fixed count of 4 KiB WRITEs) and the simulated
link (a 64 B WRITE latency run, 100 idle QPs beside the active one), whose
JSON lines must parse, count completions and frames, report no error and
have verified the destination memory. Not a performance check.

    smoke_engine.py PATH/TO/uroce-engine-bench
"""
import sys

from smoke_runs import run_all

EAL = ["--memory", "256"]
RUNS = [
    ["--link", "ring", "--op", "send", "--size", "64", "--warmup", "0.05", "--duration", "0.2"],
    ["--link", "ring", "--op", "write", "--size", "65536", "--warmup", "0.05",
     "--duration", "0.2"],
    ["--link", "ring", "--op", "write", "--size", "4096", "--count", "2000"],
    ["--link", "sim", "--mode", "latency", "--qps", "100", "--warmup", "0.05",
     "--duration", "0.2"],
]


def check(args, r):
    f = []
    want = dict(zip(args[::2], args[1::2]))
    if r.get("bench") != "uroce-engine":
        f.append(f"bench is {r.get('bench')!r}")
    if r.get("link") != want["--link"] or r.get("op") != want.get("--op", "write"):
        f.append(f"link/op are {r.get('link')!r}/{r.get('op')!r}")
    if r.get("errors") != 0 or r.get("completions", 0) <= 0:
        f.append(f"completions {r.get('completions')}, errors {r.get('errors')}")
    if r.get("verified") is not True:
        f.append("destination memory not verified")
    if r.get("frames", 0) < r.get("completions", 0):
        f.append("fewer frames than completions")
    if "--count" in want and r.get("completions") < int(want["--count"]):
        f.append(f"{r.get('completions')} completions, fewer than the {want['--count']} asked")
    if want.get("--mode") == "latency":
        lat = r.get("latency_ns", {})
        if lat.get("samples", 0) != r.get("completions") or lat.get("median", 0) <= 0:
            f.append(f"latency samples/median wrong: {lat}")
    if "--qps" in want and r.get("idle_qps") != int(want["--qps"]):
        f.append(f"idle_qps is {r.get('idle_qps')}")
    return f


def main() -> int:
    return 1 if run_all(sys.argv[1], RUNS, EAL, check, 25) else 0


if __name__ == "__main__":
    sys.exit(main())
