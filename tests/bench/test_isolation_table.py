#!/usr/bin/python3
"""Tests of bench/isolation_table.py on sample perftest output and sched
snapshots (nothing is run or timed)."""
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout
from io import StringIO

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import isolation_table  # noqa: E402

HDR_LAT = (" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]"
           "    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n")
HDR_BW = " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"


def lat(median, p99):
    return HDR_LAT + " 16      2000          9.0   900.0   %s   20.0   5.0   %s   800.0\n" % (median, p99)


def bw(size, gbps, mpps):
    return HDR_BW + " %d    1000   0.00   %s   %s\n" % (size, gbps, mpps)


def snapshot(eleph_class, eleph_qps, small_class):
    qps = [{"qpn": 17 + i, "type": "RC", "client": 1, "sched": {"class": eleph_class,
                                                               "sent_bytes": 0}}
           for i in range(eleph_qps)]
    qps.append({"qpn": 40, "type": "RC", "client": 2, "sched": {"class": small_class,
                                                              "sent_bytes": 0}})
    return {"devices": [{"sched": {"isolation": "classes", "classes": [
        {"class": c, "mode": "strict" if c == 6 else "weighted", "weight": 1}
        for c in range(8)]}}], "qps": qps}


class Tables(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.points = os.path.join(self.dir.name, "points.jsonl")
        open(self.points, "w").close()

    def tearDown(self):
        self.dir.cleanup()

    def write(self, name, text):
        p = os.path.join(self.dir.name, name)
        with open(p, "w") as f:
            f.write(text if isinstance(text, str) else json.dumps(text))
        return p

    def line(self, point, role, text, *meta, status=0):
        out = self.write("%s-%s.out" % (point, role), text)
        args = ["line", "--link", "memif", "--mode", "classes", "--point", point,
                "--role", role, "--status", str(status)]
        for m in meta:
            args += ["--meta", m]
        buf = StringIO()
        with redirect_stdout(buf):
            isolation_table.main(args + [out])
        with open(self.points, "a") as f:
            f.write(buf.getvalue())
        return json.loads(buf.getvalue())

    def table(self):
        out = os.path.join(self.dir.name, "t.json")
        buf = StringIO()
        with redirect_stdout(buf):
            isolation_table.main(["table", "--out", out, "--meta", "loadavg_before=1.0",
                                  "--meta", "lat_class=6", "--meta", "thr_class=3",
                                  "--meta", "elephant_class=0", self.points])
        with open(out) as f:
            return json.load(f), buf.getvalue()

    def full_set(self, small_class=6):
        a = self.write("a.json", snapshot(0, 16, small_class))
        self.line("lat", "small", lat(10.0, 20.0))
        self.line("thr", "small", bw(64, 0.05, 0.100))
        self.line("eleph1", "elephants", bw(1048576, 10.0, 0.001))
        self.line("eleph16", "elephants", bw(1048576, 20.0, 0.002))
        self.line("lat+eleph16", "small", lat(12.0, 25.0), "overlap=1", "elephants=16",
                  "sched_a=" + a, "sched_b=" + a)
        self.line("lat+eleph16", "elephants", bw(1048576, 19.0, 0.002), "overlap=1",
                  "elephants=16")
        b = self.write("b.json", snapshot(0, 16, 3))
        self.line("thr+eleph16", "small", bw(64, 0.03, 0.060), "overlap=0", "elephants=16",
                  "sched_a=" + b, "sched_b=" + b)
        self.line("thr+eleph16", "elephants", bw(1048576, 18.0, 0.002), "overlap=0",
                  "elephants=16")

    def row(self, doc, point):
        return next(r for r in doc["rows"] if r["point"] == point)

    def goal(self, doc, text):
        return next(g for g in doc["goals"] if text in g["goal"])

    def test_Table_RatiosAreTogetherOverAloneOfTheSameMode(self):
        self.full_set()
        doc, _ = self.table()
        r = self.row(doc, "lat+eleph16")
        self.assertAlmostEqual(r["lat_p99_ratio"], 25.0 / 20.0)
        self.assertAlmostEqual(r["lat_median_ratio"], 12.0 / 10.0)
        self.assertAlmostEqual(r["eleph_ratio"], 19.0 / 20.0)
        self.assertAlmostEqual(self.row(doc, "thr+eleph16")["thr_ratio"], 0.060 / 0.100)

    def test_Table_GoalsUseTheIssueThresholds(self):
        self.full_set()
        doc, _ = self.table()
        self.assertTrue(self.goal(doc, "latency p99 together/alone <= 1.5 (16")["met"])
        self.assertTrue(self.goal(doc, "elephants beside the latency flow >= 90% of alone (16")
                        ["met"])
        self.assertTrue(self.goal(doc, "throughput flow against 16")["met"])
        self.assertIsNone(self.goal(doc, "latency p99 together/alone <= 1.5 (1 ")["met"])

    def test_Table_ChecksEachFlowsClassOnBothDaemons(self):
        self.full_set()
        doc, _ = self.table()
        self.assertTrue(self.row(doc, "lat+eleph16")["sched_ok"])
        self.assertTrue(self.row(doc, "thr+eleph16")["sched_ok"])

    def test_Table_LatencyQpOutsideItsClassIsWrong(self):
        self.full_set(small_class=0)
        doc, text = self.table()
        self.assertFalse(self.row(doc, "lat+eleph16")["sched_ok"])
        self.assertIn("WRONG", text)

    def test_Table_PartialOverlapIsMarked(self):
        self.full_set()
        _, text = self.table()
        thr = next(l for l in text.splitlines() if "| thr+eleph16 |" in l)
        self.assertIn("partial overlap", thr)

    def test_Line_FailedRunHasNoFigures(self):
        l = self.line("lat", "small", lat(10.0, 20.0), status=1)
        self.assertFalse(l["ok"])
        self.assertNotIn("lat_p99_us", l)
        self.assertIn("exit status 1", l["error"])

    def test_Line_DaemonSchedstatPercentages(self):
        l = self.line("lat", "small", lat(10.0, 20.0), "cpu_a=12.5", "wait_a=30",
                      "cpu_b=11", "wait_b=28.5")
        self.assertEqual(l["daemon_pct"], {"cpu_a": 12.5, "wait_a": 30.0, "cpu_b": 11.0,
                                           "wait_b": 28.5})


if __name__ == "__main__":
    unittest.main()
