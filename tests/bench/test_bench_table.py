#!/usr/bin/python3
"""Tests of bench/bench_table.py: the merge of raw and perftest JSON lines
into the comparison rows, their ratios and the targets. Sample lines only;
nothing is timed."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import bench_table  # noqa: E402


def raw(transport, size, mpps, payload_gbps, rtt_med, rtt_p99, ok=True, tail=None):
    return [
        {"bench": "uroce-raw", "role": "receiver", "transport": transport,
         "payload_bytes": size, "frame_bytes": size + 42, "ok": ok,
         "stream": {"mpps": mpps, "gbps": payload_gbps * 1.01,
                    "payload_gbps": payload_gbps, "packets": 1, "lost": 0, "seconds": 3}},
        {"bench": "uroce-raw", "role": "ping", "transport": transport,
         "payload_bytes": size, "frame_bytes": size + 42, "ok": ok,
         "rtt": {"median_us": rtt_med, "p99_us": rtt_p99, "samples": 1, "timeouts": 0,
                 **(tail or {})}},
    ]


def perf(transport, point, ok=True, mode=None, **fig):
    line = {"bench": "uroce-perftest", "transport": transport, "point": point,
            "ok": ok, "cmd": "ib_x", "daemon_cpu_pct": {"a": 99.0, "b": 50.0}}
    if mode is not None:
        line["mode"] = mode
        if mode == "embedded":
            line["daemon_cpu_pct"] = {}
            line["perftest_cpu_pct"] = {"a": 100.0, "b": 100.0}
    line.update(fig)
    if not ok:
        line["error"] = "client hung"
    return line


def sample():
    lines = raw("memif", 64, 10.0, 5.0, 1.0, 2.0) + raw("memif", 4096, 1.0, 40.0, 3.0, 5.0)
    lines += [perf("memif", "write_bw", gbps=36.0),
              perf("memif", "send_bw", mmsgps=2.0),
              perf("memif", "send_lat", lat_median_us=1.4, lat_p99_us=3.0),
              perf("memif", "read_lat", lat_median_us=2.0, lat_p99_us=4.0),
              perf("memif", "write_bw_q16", ok=False)]
    return lines


def embedded():
    """Embedded-mode points beside sample()'s daemon ones (which carry no mode)."""
    return [perf("memif", "write_bw", mode="embedded", gbps=18.0),
            perf("memif", "send_bw", mode="embedded", mmsgps=5.0),
            perf("memif", "send_lat", mode="embedded", lat_median_us=1.2, lat_p99_us=1.6),
            perf("memif", "read_lat", mode="embedded", lat_median_us=3.6, lat_p99_us=5.0)]


def run(lines):
    rows = bench_table.merge([l for l in lines if l["bench"] != "uroce-perftest"])
    comp = bench_table.compare(lines, rows)
    return ({(c["transport"], c["metric"]): c for c in comp if c["mode"] == "daemon"},
            bench_table.targets(comp))


def run_modes(lines):
    rows = bench_table.merge([l for l in lines if l["bench"] != "uroce-perftest"])
    comp = bench_table.compare(lines, rows)
    goals = {(g["mode"], g["metric"]): g["met"] for g in bench_table.targets(comp)}
    return ({(c["mode"], c["metric"]): c for c in comp}, goals,
            {r["metric"]: r for r in bench_table.mode_ratios(comp)})


class Compare(unittest.TestCase):
    def test_Compare_RatiosAgainstRawCounterparts(self):
        comp, _ = run(sample())
        w = comp[("memif", "write_bw_64k_gbps")]
        self.assertEqual(w["raw"], 40.0)  # payload Gb/s of 4 KiB frames
        self.assertAlmostEqual(w["ratio"], 0.9)
        s = comp[("memif", "send_bw_64_mmsgps")]
        self.assertEqual(s["raw"], 10.0)  # 64 B frames/s
        self.assertAlmostEqual(s["ratio"], 0.2)
        lat = comp[("memif", "send_lat_2_median_us")]
        self.assertEqual(lat["raw"], 0.5)  # half the 64 B RTT
        self.assertAlmostEqual(lat["ratio"], 2.8)
        # READ latency is a whole round trip in perftest: the whole RTT.
        self.assertEqual(comp[("memif", "read_lat_2_p99_us")]["raw"], 2.0)
        self.assertAlmostEqual(comp[("memif", "read_lat_2_median_us")]["ratio"], 2.0)
        self.assertEqual(w["daemon_cpu_pct"], {"a": 99.0, "b": 50.0})

    def test_Compare_TailBeyondP99AgainstRaw(self):
        lines = raw("memif", 64, 10.0, 5.0, 1.0, 2.0, tail={"p999_us": 4.0, "max_us": 40.0})
        lines += [perf("memif", "send_lat", lat_median_us=1.4, lat_p99_us=3.0, lat_p999_us=6.0,
                       lat_max_us=100.0),
                  perf("memif", "read_lat", lat_median_us=2.0, lat_p99_us=4.0, lat_p999_us=8.0,
                       lat_max_us=30.0),
                  perf("memif", "ucx_tag_lat", lat_median_us=2.0, lat_p99_us=4.0,
                       lat_p999_us=5.0, lat_avg_us=2.2)]
        comp, _ = run(lines)
        s = comp[("memif", "send_lat_2_p999_us")]
        self.assertEqual(s["raw"], 2.0)  # half the RTT's p99.9
        self.assertAlmostEqual(s["ratio"], 3.0)
        self.assertAlmostEqual(comp[("memif", "send_lat_2_max_us")]["ratio"], 5.0)
        self.assertEqual(comp[("memif", "read_lat_2_p999_us")]["raw"], 4.0)
        self.assertAlmostEqual(comp[("memif", "read_lat_2_max_us")]["ratio"], 0.75)
        self.assertAlmostEqual(comp[("memif", "ucx_tag_lat_8_p999_us")]["ratio"], 2.5)
        # A raw line without the tail (an older run): no baseline, the figure kept.
        comp, _ = run(raw("memif", 64, 10.0, 5.0, 1.0, 2.0) + lines[2:])
        self.assertIsNone(comp[("memif", "send_lat_2_p999_us")]["ratio"])
        self.assertEqual(comp[("memif", "send_lat_2_p999_us")]["uroce"], 6.0)

    def test_Compare_CarriesThePointsLineRoundTrip(self):
        lines = sample()
        lines[-4]["meta"] = {"line_rtt_ns": "52/330"}  # send_bw
        comp, _ = run(lines)
        self.assertEqual(comp[("memif", "send_bw_64_mmsgps")]["line_rtt_ns"], "52/330")
        self.assertEqual(comp[("memif", "write_bw_64k_gbps")]["line_rtt_ns"], "")
        table = bench_table.comparison_table(list(comp.values()), [])
        self.assertIn("line RTT ns", table.splitlines()[0])
        self.assertIn("52/330", table)

    def test_Compare_FailedPointHasNoFigureAndKeepsError(self):
        comp, _ = run(sample())
        q = comp[("memif", "write_bw_64k_q16_gbps")]
        self.assertFalse(q["ok"])
        self.assertIsNone(q["uroce"])
        self.assertIsNone(q["ratio"])
        self.assertEqual(q["error"], "client hung")

    def test_Compare_NoRawGivesNoRatio(self):
        comp, _ = run([perf("af_packet", "send_bw", mmsgps=0.5)])
        s = comp[("af_packet", "send_bw_64_mmsgps")]
        self.assertIsNone(s["raw"])
        self.assertIsNone(s["ratio"])
        self.assertEqual(s["uroce"], 0.5)

    def test_Compare_FailedRawIsNotABaseline(self):
        lines = raw("memif", 4096, 1.0, 40.0, 3.0, 5.0, ok=False)
        lines.append(perf("memif", "write_bw", gbps=36.0))
        comp, _ = run(lines)
        self.assertIsNone(comp[("memif", "write_bw_64k_gbps")]["raw"])

    def test_Compare_LineWithoutModeIsDaemon(self):
        comp, _ = run(sample())
        self.assertEqual(comp[("memif", "send_lat_2_median_us")]["mode"], "daemon")


class Merge(unittest.TestCase):
    def test_Merge_RowMeasuredTwiceKeepsTheBetterFigures(self):
        # Raw memif in copy mode, then with client zero-copy: a faster
        # stream in the first, a lower median and tail in the second.
        lines = (raw("memif", 64, 10.0, 5.0, 1.2, 2.0, tail={"p999_us": 9.0, "max_us": 50.0}) +
                 raw("memif", 64, 8.0, 4.0, 1.0, 2.5, tail={"p999_us": 7.0, "max_us": 60.0}))
        (row,) = bench_table.merge(lines)
        r = row["stacks"]["raw"]
        self.assertEqual((r["mpps"], r["payload_gbps"]), (10.0, 5.0))
        self.assertEqual((r["rtt_median_us"], r["rtt_p99_us"]), (1.0, 2.0))
        self.assertEqual((r["rtt_p999_us"], r["rtt_max_us"]), (7.0, 50.0))
        self.assertEqual(r["rtt_samples"], 2)


class Modes(unittest.TestCase):
    def test_Modes_SameMetricKeptApartPerMode(self):
        comp, _, _ = run_modes(sample() + embedded())
        self.assertEqual(comp[("daemon", "send_bw_64_mmsgps")]["uroce"], 2.0)
        self.assertEqual(comp[("embedded", "send_bw_64_mmsgps")]["uroce"], 5.0)
        self.assertAlmostEqual(comp[("embedded", "send_bw_64_mmsgps")]["ratio"], 0.5)
        self.assertEqual(comp[("embedded", "send_bw_64_mmsgps")]["perftest_cpu_pct"],
                         {"a": 100.0, "b": 100.0})
        self.assertEqual(comp[("embedded", "send_bw_64_mmsgps")]["daemon_cpu_pct"], {})

    def test_Modes_EmbeddedOverDaemonRatio(self):
        _, _, ratios = run_modes(sample() + embedded())
        self.assertAlmostEqual(ratios["send_bw_64_mmsgps"]["embedded_over_daemon"], 2.5)
        self.assertAlmostEqual(ratios["write_bw_64k_gbps"]["embedded_over_daemon"], 0.5)
        # write_bw_q16 ran in daemon mode only: no ratio.
        self.assertNotIn("write_bw_64k_q16_gbps", ratios)

    def test_Modes_DaemonOnlyRunHasNoRatios(self):
        _, _, ratios = run_modes(sample())
        self.assertEqual(ratios, {})

    def test_Modes_CpuCellNamesWhoseCpu(self):
        comp, _, _ = run_modes(sample() + embedded())
        self.assertEqual(bench_table.cpu_cell(comp[("daemon", "send_bw_64_mmsgps")]), "99/50")
        self.assertEqual(bench_table.cpu_cell(comp[("embedded", "send_bw_64_mmsgps")]),
                         "pt 100/100")


class Targets(unittest.TestCase):
    def test_Targets_MetMissedAndNotMeasured(self):
        _, goals = run(sample())
        by = {g["metric"]: g["met"] for g in goals if g["mode"] == "daemon"}
        self.assertIs(by["write_bw_64k_gbps"], True)      # 0.90 >= 0.85
        self.assertIs(by["send_lat_2_median_us"], True)   # 1.4 <= 0.5 + 1.0
        self.assertIs(by["send_lat_2_p99_us"], True)      # 3.0 <= 3 x 1.0
        self.assertIs(by["read_lat_2_median_us"], True)   # 2.0 <= 1.0 + 1.5
        self.assertIs(by["send_bw_64_mmsgps"], False)     # 2.0 < 4
        lines = [l for l in sample() if l.get("point") != "send_lat"]
        _, goals = run(lines)
        by = {g["metric"]: g["met"] for g in goals if g["mode"] == "daemon"}
        self.assertIsNone(by["send_lat_2_median_us"])

    def test_Targets_EveryGoalOnceForEachModeThatRan(self):
        _, goals = run(sample() + embedded())
        self.assertEqual(len(goals), 10)
        self.assertEqual({g["mode"] for g in goals}, {"daemon", "embedded"})
        _, goals = run(sample())
        self.assertEqual(len(goals), 5)
        self.assertEqual({g["mode"] for g in goals}, {"daemon"})
        # A mode whose points all failed still ran: its goals stay, unmeasured.
        failed = [perf("memif", "send_bw", ok=False, mode="embedded")]
        _, goals = run(sample() + failed)
        emb = [g["met"] for g in goals if g["mode"] == "embedded"]
        self.assertEqual(emb, [None] * 5)

    def test_Compare_UcxTagLatBesideThePerftestPoints(self):
        lines = sample() + embedded()
        lines += [perf("memif", "ucx_tag_lat", lat_median_us=3.0, lat_p99_us=8.0,
                       lat_avg_us=4.0),
                  perf("memif", "ucx_tag_lat", mode="embedded", lat_median_us=1.5,
                       lat_p99_us=2.0, lat_avg_us=1.6)]
        comp, goals, ratios = run_modes(lines)
        med = comp[("daemon", "ucx_tag_lat_8_median_us")]
        self.assertEqual(med["raw"], 0.5)  # half the raw 64 B RTT median
        self.assertAlmostEqual(med["ratio"], 6.0)
        self.assertAlmostEqual(comp[("embedded", "ucx_tag_lat_8_p99_us")]["ratio"], 2.0)
        avg = comp[("daemon", "ucx_tag_lat_8_avg_us")]
        self.assertEqual((avg["uroce"], avg["raw"], avg["ratio"]), (4.0, None, None))
        self.assertAlmostEqual(ratios["ucx_tag_lat_8_median_us"]["embedded_over_daemon"], 0.5)
        # No target of issue 17 names UCX.
        self.assertFalse([g for g in goals if "ucx" in g[1]])

    def test_Targets_NoneForATransportWithoutTargetsAlone(self):
        _, goals = run([perf("af_packet", "send_bw", mmsgps=0.5)])
        self.assertEqual(goals, [])

    def test_Targets_NoStackPointsListsEveryGoal(self):
        self.assertEqual(len(bench_table.targets([])), 10)

    def test_Targets_EmbeddedJudgedOnItsOwnFigures(self):
        _, goals, _ = run_modes(sample() + embedded())
        self.assertIs(goals[("embedded", "send_lat_2_median_us")], True)  # 1.2 <= 1.5
        self.assertIs(goals[("embedded", "send_lat_2_p99_us")], True)     # 1.6 <= 3 x 1.0
        self.assertIs(goals[("embedded", "read_lat_2_median_us")], False)  # 3.6 > 2.5
        self.assertIs(goals[("embedded", "send_bw_64_mmsgps")], True)     # 5.0 >= 4
        self.assertIs(goals[("embedded", "write_bw_64k_gbps")], False)    # 0.45 < 0.85
        self.assertIs(goals[("daemon", "send_bw_64_mmsgps")], False)

    def test_Targets_LatencyJustOverTheBarIsMissed(self):
        lines = raw("memif", 64, 10.0, 5.0, 1.0, 2.0)
        lines.append(perf("memif", "send_lat", lat_median_us=1.51, lat_p99_us=3.01))
        _, goals = run(lines)
        by = {g["metric"]: g["met"] for g in goals if g["mode"] == "daemon"}
        self.assertIs(by["send_lat_2_median_us"], False)
        self.assertIs(by["send_lat_2_p99_us"], False)


class Main(unittest.TestCase):
    def test_Main_WritesComparisonAndFailsOnFailedPoint(self):
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "in.json")
            with open(src, "w") as f:
                for l in sample() + embedded():
                    f.write(json.dumps(l) + "\n")
            out = os.path.join(d, "out.json")
            p = subprocess.run([sys.executable, bench_table.__file__, "--out", out,
                                "--meta", "k=v", src], capture_output=True, text=True)
            self.assertEqual(p.returncode, 1)  # write_bw_q16 failed
            self.assertIn("FAILED: memif/daemon/write_bw_64k_q16_gbps/uroce: client hung",
                          p.stderr)
            self.assertIn("target memif daemon send_bw_64_mmsgps >= 4 M msg/s: MISSED",
                          p.stdout)
            self.assertIn("target memif embedded send_bw_64_mmsgps >= 4 M msg/s: MET",
                          p.stdout)
            self.assertIn("embedded/daemon", p.stdout)
            with open(out) as f:
                doc = json.load(f)
            self.assertEqual(doc["meta"], {"k": "v"})
            # Daemon: write_bw, send_bw, write_bw_q16 and send_lat's and
            # read_lat's median, p99, p99.9 and max (11); embedded the same
            # but write_bw_q16 (10).
            self.assertEqual(len(doc["comparison"]), 21)
            self.assertEqual(len(doc["targets"]), 10)
            self.assertEqual(len(doc["modes"]), 10)  # the metrics both modes ran


class StagesTable(unittest.TestCase):
    def test_StagesTable_P99BoundAndSlowestMeanPerSide(self):
        fig = {"count": 100, "p50_ns": 2047, "p99_ns": 16383, "p999_ns": 16383,
               "slowest_mean_ns": 12500}
        none = {"count": 0, "p50_ns": 0, "p99_ns": 0, "p999_ns": 0, "slowest_mean_ns": None}
        line = {"bench": "uroce-perftest", "transport": "memif", "mode": "embedded",
                "point": "send_lat",
                "stages": {"b": {"error": "no such file"},
                           "a": {"app_ns": none, "seen_tx_ns": fig, "tx_rx_ns": fig,
                                 "rx_cqe_ns": fig, "total_ns": fig}}}
        t = bench_table.stages_table([line, {"bench": "uroce-perftest", "point": "write_bw"}])
        rows = t.splitlines()
        self.assertEqual(rows[0], "stage stamps, us: p99 as a bucket bound, and the slowest 1 %'s mean")
        body = [r.split() for r in rows[3:]]
        a = [r for r in body if r[3] == "a"][0]
        self.assertEqual(a[:5], ["memif", "embedded", "send_lat", "a", "-"])
        self.assertEqual(a[5:7], ["<16.4", "(12.5)"])
        self.assertIn("no such file", rows[3 + [r[3] for r in body].index("b")])
        self.assertEqual(len(rows), 5)  # title, head, rule, a, b

    def test_StagesTable_EmptyWithoutStages(self):
        self.assertEqual(bench_table.stages_table([{"bench": "uroce-perftest"}]), "")


if __name__ == "__main__":
    unittest.main()
