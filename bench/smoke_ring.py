#!/usr/bin/python3
"""Smoke test of uroce-raw-bench: a short ring self-test whose JSON line must
parse, say ok, and count streamed packets and RTT samples.

    smoke_ring.py PATH/TO/uroce-raw-bench
"""
import json
import subprocess
import sys


def main() -> int:
    exe = sys.argv[1]
    cmd = [exe, "--role", "ring-selftest", "--size", "64", "--warmup", "0.1",
           "--duration", "0.3", "--wait", "2", "--mtu", "1500",
           "--mbufs", "4095", "--memory", "256"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=25)
    lines = [l for l in proc.stdout.splitlines() if l.startswith('{"bench"')]
    if len(lines) != 1:
        print("expected one JSON line, got:\n" + proc.stdout + proc.stderr)
        return 1
    r = json.loads(lines[0])
    print(lines[0])
    failures = []
    if proc.returncode != 0:
        failures.append(f"exit status {proc.returncode}")
    if r.get("ok") is not True:
        failures.append(f"ok is {r.get('ok')!r}: {r.get('error')}")
    if r.get("transport") != "ring" or r.get("frame_bytes") != 64 + 42:
        failures.append("wrong transport or frame_bytes")
    if r.get("stream", {}).get("packets", 0) <= 0:
        failures.append("no packets counted")
    if r.get("stream", {}).get("mpps", 0) <= 0:
        failures.append("zero packet rate")
    if r.get("rtt", {}).get("samples", 0) <= 0:
        failures.append("no RTT samples")
    if r.get("rtt", {}).get("median_us", 0) <= 0:
        failures.append("zero RTT median")
    rt = r.get("rtt", {})
    tail = [rt.get(k) for k in ("median_us", "p99_us", "p999_us", "max_us")]
    if None in tail or tail != sorted(tail):
        failures.append(f"RTT median, p99, p99.9, max missing or out of order: {tail}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
