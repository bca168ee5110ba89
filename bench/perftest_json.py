#!/usr/bin/python3
"""One JSON line from one perftest client run (bench/stack_bench.sh).

    perftest_json.py --transport T --point NAME --status RC [--why TEXT]
                     [--mode daemon|embedded] [--cmd TEXT] [--cpu SIDE=PCT ...]
                     [--perftest-cpu SIDE=PCT ...] [--meta K=V ...] OUTPUT

perftest 4.5 prints, under a header line that contains "#bytes", one row per
message size. Bandwidth tests: bytes, iterations, BW peak, BW average,
MsgRate[Mpps] (BW in Gb/sec with --report_gbits, else MB/sec). Latency
tests: bytes, iterations, t_min, t_max, t_typical (the median), t_avg,
t_stdev, 99% percentile, 99.9% percentile, all in usec. The line carries
what the row says and no more: a run without a row is "ok": false.

"mode" says where the engine ran: "daemon" (uroced, whose CPU use is
--cpu) or "embedded" (inside the perftest processes, docs/embedded.md:
there is no daemon, and --perftest-cpu gives the programs' own CPU use).

With --ucx-ranks R1,R2,... OUTPUT is ucx_perftest's (UCX 1.13) instead,
from a batch of latency tests run with -R R1, -R R2, ... in that order (one
connection, bench/stack_bench.sh's point ucx_tag_lat). Each test ends in a
row "Final: iterations percentile average overall MB/s-average
MB/s-overall msg/s-average msg/s-overall": the percentile at that test's
rank (ucx_perftest takes it over its window of recent iterations), the
average of the last report interval only, the average of the whole test
(overall), latencies in usec as ucx_perftest prints them (half the round
trip of its ping-pong). The line gives rank 50 as lat_median_us, 99 as
lat_p99_us, 99.9 as lat_p999_us and the first test's overall average as lat_avg_us; it is
"ok" only with a Final row for every rank. UCX 1.13.1 takes the percentile
over a ring of at most 2,048 round trips, so a longer test's figure covers
only its end: stack_bench.sh runs each rank as several tests of at most
2,048 round trips (R1 listed once per test), and a rank's figure is then
the median over its tests ("ucx_windows": how many).
"""
import argparse
import json
import math
import re
import statistics
import sys


def parse(text):
    """The figures of the first result row, keyed by what the header names."""
    lines = text.splitlines()
    for i, l in enumerate(lines):
        if "#bytes" not in l:
            continue
        head = l
        for row in lines[i + 1:]:
            cells = row.split()
            if len(cells) >= 4 and cells[0].isdigit() and cells[1].isdigit():
                return figures(head, cells)
    return None


def figures(head, cells):
    nums = []
    for c in cells:
        try:
            nums.append(float(c))
        except ValueError:
            return None
    out = {"bytes": int(nums[0]), "iterations": int(nums[1])}
    if "t_typical" in head:
        if len(nums) < 9:
            return None
        out.update(lat_min_us=nums[2], lat_max_us=nums[3], lat_median_us=nums[4],
                   lat_avg_us=nums[5], lat_stdev_us=nums[6], lat_p99_us=nums[7],
                   lat_p999_us=nums[8])
        return out
    if "BW average" in head:
        if len(nums) < 5:
            return None
        avg = nums[3]
        if "Gb/sec" in head:
            out["gbps"] = avg
        elif re.search(r"MB/sec|MiB/sec", head):
            # perftest's MB is 2^20 bytes.
            out["gbps"] = avg * 1048576 * 8 / 1e9
        else:
            return None
        out["mmsgps"] = nums[4]
        return out
    return None


def parse_ucx(text, ranks):
    """The figures of ucx_perftest's Final rows, one per rank in order. A
    rank listed k times (k tests of the batch, each no longer than the
    2,048 round trips its percentile covers) gives the median of its k
    figures, and "ucx_windows" says k."""
    rows = []
    for l in text.splitlines():
        cells = l.split()
        if not cells or cells[0] != "Final:":
            continue
        try:
            rows.append([float(c) for c in cells[1:]])
        except ValueError:
            return None
    if len(rows) != len(ranks) or any(len(r) < 4 for r in rows):
        return None
    out = {"iterations": int(rows[0][0]), "lat_avg_us": rows[0][3]}
    names = {50.0: "lat_median_us", 99.0: "lat_p99_us", 99.9: "lat_p999_us"}
    per_rank = {}
    for rank, r in zip(ranks, rows):
        if int(r[0]) != out["iterations"]:
            return None
        per_rank.setdefault(rank, []).append(r[1])
    windows = {len(v) for v in per_rank.values()}
    if len(windows) != 1:
        return None
    for rank, v in per_rank.items():
        out[names.get(rank, f"lat_p{rank:g}_us")] = statistics.median(v)
    k = windows.pop()
    if k > 1:
        out["ucx_windows"] = k
    return out


def cpu(pairs):
    """{"a": 99.5, ...} from ["a=99.5", ...]; an empty figure (not measured) is left out."""
    return {k: float(v) for k, v in (c.split("=", 1) for c in pairs) if v != ""}


STAGES = ("app_ns", "seen_tx_ns", "tx_rx_ns", "rx_cqe_ns", "total_ns")


def stage_shards(path, device):
    """A device's stage stamps (one entry per shard) from a status JSON
    (uroce-ctl status --json) or from an embedded engine's log, whose
    "stages at exit: " line holds {device: stages}; [] when there are none."""
    with open(path) as f:
        text = f.read()
    marker = "stages at exit: "
    for l in text.splitlines():
        if marker in l:
            return json.loads(l.split(marker, 1)[1]).get(device, [])
    try:
        status = json.loads(text)
    except json.JSONDecodeError:
        return []
    for d in status.get("devices", []):
        if d.get("name") == device:
            return d.get("stages", [])
    return []


def bucket_ceiling(b):
    """The largest value log2 bucket b holds (engine/loop_histogram.h)."""
    return 0 if b == 0 else (1 << 30 if b >= 31 else (1 << b) - 1)


def quantile(h, q):
    n = sum(h)
    if n == 0:
        return 0
    rank, seen = max(1, math.ceil(q * n)), 0
    for b, c in enumerate(h):
        seen += c
        if seen >= rank:
            return bucket_ceiling(b)
    return bucket_ceiling(len(h) - 1)


def stages(spec):
    """SIDE[/DEVICE]=FILE or SIDE[/DEVICE]=BEFORE:AFTER (DEVICE: uroce0 by
    default) -> (side, {stage: figures}): each stage's count and
    p50/p99/p99.9 (bucket ceilings, ns) over the point (AFTER less BEFORE),
    and the mean over the slowest recent messages."""
    who, files = spec.split("=", 1)
    side, _, device = who.partition("/")
    before, _, after = files.rpartition(":")
    now = stage_shards(after, device or "uroce0")
    then = stage_shards(before, device or "uroce0") if before else []
    out = {}
    for k in STAGES:
        h = [0] * 32
        for s in now:
            h = [x + y for x, y in zip(h, s.get(k, [0] * 32))]
        for s in then:
            h = [x - y for x, y in zip(h, s.get(k, [0] * 32))]
        means = [s["slowest"]["mean"].get(k, 0) for s in now if s.get("slowest", {}).get("count")]
        out[k] = {"count": sum(h), "p50_ns": quantile(h, 0.5), "p99_ns": quantile(h, 0.99),
                  "p999_ns": quantile(h, 0.999),
                  "slowest_mean_ns": max(means) if means and sum(h) else None}
    return side, out


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--transport", required=True)
    ap.add_argument("--point", required=True)
    ap.add_argument("--status", type=int, required=True)
    ap.add_argument("--why", default="")
    ap.add_argument("--cmd", default="")
    ap.add_argument("--mode", choices=["daemon", "embedded"], default="daemon")
    ap.add_argument("--cpu", action="append", default=[])
    ap.add_argument("--perftest-cpu", action="append", default=[])
    ap.add_argument("--meta", action="append", default=[])
    ap.add_argument("--ucx-ranks", default="",
                    help="OUTPUT is ucx_perftest's, its tests run with these -R ranks")
    ap.add_argument("--stages", action="append", default=[],
                    help="SIDE[/DEVICE]=FILE or SIDE[/DEVICE]=BEFORE:AFTER: the device's stage "
                         "stamps (status JSON or an embedded engine's log) for the point")
    ap.add_argument("output")
    a = ap.parse_args(argv)
    line = {"bench": "uroce-perftest", "schema": 1, "transport": a.transport,
            "mode": a.mode, "point": a.point, "cmd": a.cmd, "ok": False}
    try:
        with open(a.output) as f:
            text = f.read()
        if a.ucx_ranks:
            fig = parse_ucx(text, [float(r) for r in a.ucx_ranks.split(",")])
        else:
            fig = parse(text)
    except OSError as e:
        fig = None
        a.why = a.why or str(e)
    if a.status == 0 and fig is not None:
        line["ok"] = True
        line.update(fig)
    else:
        line["error"] = a.why or ("no Final: row per rank" if a.ucx_ranks else
                                  "no result row under a '#bytes' header")
    line["daemon_cpu_pct"] = cpu(a.cpu)
    line["perftest_cpu_pct"] = cpu(a.perftest_cpu)
    line["meta"] = dict(kv.split("=", 1) for kv in a.meta)
    if a.stages:
        line["stages"] = {}
        for spec in a.stages:
            try:
                side, figs = stages(spec)
                line["stages"][side] = figs
            except (OSError, ValueError, KeyError) as e:
                line["stages"][spec.split("=", 1)[0].split("/")[0]] = {"error": str(e)}
    print(json.dumps(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
