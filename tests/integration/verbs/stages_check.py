#!/usr/bin/python3
"""Checks a daemon's stage stamps (engine/stage_stamps.h) in its status JSON.

  stages_check.py STATUS_JSON DEVICE MIN_TRACKED MIN_RX_CQE [OFF_DEVICE]

DEVICE must report one shard of stages with at least MIN_TRACKED tracked
messages (total_ns) and MIN_RX_CQE completions after an RX burst; the
slowest messages' mean stages must add up to their mean total (each
record's stages partition its total, so the means differ by the rounding
of four integer divisions at most); OFF_DEVICE, when named, must report
none. Prints the counts; exits 1 naming the first property that fails.
"""
import json
import sys


def fail(why):
    print(why)
    sys.exit(1)


def main():
    path, device, min_tracked, min_rx = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    off = sys.argv[5] if len(sys.argv) > 5 else None
    with open(path) as f:
        status = json.load(f)
    devs = {d["name"]: d for d in status["devices"]}
    if off is not None and "stages" in devs[off]:
        fail(f"{off} keeps no stage stamps, yet its status has stages")
    stages = devs[device].get("stages")
    if not stages or len(stages) != 1:
        fail(f"{device}: expected one shard of stages, found {stages!r:.200}")
    s = stages[0]
    tracked, rx = sum(s["total_ns"]), sum(s["rx_cqe_ns"])
    print(f"{device}: {tracked} tracked messages, {rx} completions after an RX burst, "
          f"{s['recent']} kept, {s['untracked']} given up")
    if tracked < min_tracked:
        fail(f"{device}: {tracked} tracked messages, fewer than {min_tracked}")
    if rx < min_rx:
        fail(f"{device}: {rx} completions after an RX burst, fewer than {min_rx}")
    if sum(s["seen_tx_ns"]) < tracked or sum(s["tx_rx_ns"]) < tracked:
        fail(f"{device}: a tracked message without its TX or RX stage")
    mean = s["slowest"]["mean"]
    parts = mean["seen_tx_ns"] + mean["tx_rx_ns"] + mean["rx_cqe_ns"]
    if not 0 <= mean["total_ns"] - parts <= 3:
        fail(f"{device}: the slowest messages' stages add up to {parts} ns, "
             f"their total is {mean['total_ns']} ns")
    print(f"{device}: the slowest {s['slowest']['count']}: seen->tx {mean['seen_tx_ns']} ns, "
          f"tx->rx {mean['tx_rx_ns']} ns, rx->cqe {mean['rx_cqe_ns']} ns of {mean['total_ns']} ns")


main()
