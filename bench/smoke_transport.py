#!/usr/bin/python3
"""Smoke test of uroce-transport-bench: short runs over the net_ring pair
(send64, write64k) and the simulated link (a fixed count of write4k) whose
JSON lines must parse, say ok, count messages and frames, and have verified
the destination memory. Not a performance check.

    smoke_transport.py PATH/TO/uroce-transport-bench
"""
import json
import subprocess
import sys

EAL = ["--mbufs", "4095", "--memory", "256", "--mem-mb", "1"]
RUNS = [
    (["--link", "ring", "--workload", "send64", "--workload", "write64k",
      "--warmup", "0.1", "--duration", "0.3"], ["send64", "write64k"]),
    (["--link", "sim", "--workload", "write4k", "--count", "2000"], ["write4k"]),
]


def check(r, workload, link):
    f = []
    if r.get("bench") != "uroce-transport" or r.get("workload") != workload:
        f.append(f"wrong bench/workload: {r.get('bench')} {r.get('workload')}")
    if r.get("transport") != link:
        f.append(f"transport is {r.get('transport')!r}, not {link!r}")
    if r.get("ok") is not True:
        f.append(f"{workload}: ok is {r.get('ok')!r}: {r.get('error')}")
    m = r.get("messages", {})
    if m.get("count", 0) <= 0 or m.get("verified") is not True:
        f.append(f"{workload}: no verified messages: {m}")
    if r.get("frames", {}).get("requests", 0) < m.get("count", 0):
        f.append(f"{workload}: fewer request frames than messages")
    if workload == "write4k" and m.get("count") != 2000:
        f.append(f"write4k: {m.get('count')} messages, not the 2000 asked")
    if workload != "write4k" and m.get("mmsgs_per_s", 0) <= 0:
        f.append(f"{workload}: zero message rate")
    if r.get("stream", {}).get("packets", -1) != r.get("frames", {}).get("requests"):
        f.append(f"{workload}: stream.packets != frames.requests")
    return f


def main() -> int:
    exe = sys.argv[1]
    failures = []
    for args, workloads in RUNS:
        cmd = [exe] + args + EAL
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=25)
        lines = [l for l in proc.stdout.splitlines() if l.startswith('{"bench"')]
        print("\n".join(lines))
        if proc.returncode != 0:
            failures.append(f"{' '.join(args)}: exit status {proc.returncode}")
        if len(lines) != len(workloads):
            failures.append(f"expected {len(workloads)} JSON lines, got:\n"
                            + proc.stdout + proc.stderr)
            continue
        link = args[1]
        for line, w in zip(lines, workloads):
            failures += check(json.loads(line), w, link)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
