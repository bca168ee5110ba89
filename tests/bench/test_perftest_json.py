#!/usr/bin/python3
"""Tests of bench/perftest_json.py on perftest 4.5 output as it prints it."""
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout
from io import StringIO

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import perftest_json  # noqa: E402

BW = """ #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
 65536      24120            0.00               6.32   		   0.012060
---------------------------------------------------------------------------------------
"""
BW_MB = """ #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]
 65536      1000             100.00             125.00   		   0.002000
"""
LAT = """ #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] 
 2       20000          9.28           6524.12      14.21     	66.07       	294.34 		975.42  		6218.90
"""


class Parse(unittest.TestCase):
    def test_Parse_BandwidthRowInGbits(self):
        f = perftest_json.parse(BW)
        self.assertEqual(f["bytes"], 65536)
        self.assertEqual(f["iterations"], 24120)
        self.assertEqual(f["gbps"], 6.32)
        self.assertEqual(f["mmsgps"], 0.01206)

    def test_Parse_BandwidthRowInMiBConverted(self):
        f = perftest_json.parse(BW_MB)
        self.assertAlmostEqual(f["gbps"], 125 * 1048576 * 8 / 1e9)

    def test_Parse_LatencyRowMedianIsTypical(self):
        f = perftest_json.parse(LAT)
        self.assertEqual(f["lat_median_us"], 14.21)
        self.assertEqual(f["lat_p99_us"], 975.42)
        self.assertEqual(f["lat_p999_us"], 6218.9)
        self.assertEqual(f["iterations"], 20000)

    def test_Parse_NoHeaderOrShortRowIsNone(self):
        self.assertIsNone(perftest_json.parse("Couldn't connect\n"))
        self.assertIsNone(perftest_json.parse(LAT.splitlines()[0] + "\n 2 20000 9.28\n"))

# ucx_perftest 1.13 -b with two tag_lat tests (-R 50, then -R 99), as it
# printed them over uroce (trimmed to one report row per test).
UCX = """+--------------+--------------+------------------------------+---------------------+-----------------------+
|    Stage     | # iterations | 50.0%ile | average | overall |  average |  overall |  average  |  overall  |
+p50-----------+--------------+----------+---------+---------+----------+----------+-----------+-----------+
[thread 0]              2984     97.794   606.935   677.681        0.01       0.01        1648        1476
Final:                  3000     99.283    63.874   674.408        0.12       0.01       15656        1483
+p99-----------+--------------+----------+---------+---------+----------+----------+-----------+-----------+
[thread 0]              2419  12096.591   780.818   833.508        0.01       0.01        1281        1200
Final:                  3000  14106.214   747.922   816.933        0.01       0.01        1337        1224
"""


class ParseUcx(unittest.TestCase):
    def test_ParseUcx_RanksInOrderAndOverallAverage(self):
        f = perftest_json.parse_ucx(UCX, [50.0, 99.0])
        self.assertEqual(f, {"iterations": 3000, "lat_median_us": 99.283,
                             "lat_p99_us": 14106.214, "lat_avg_us": 674.408})

    def test_ParseUcx_Rank999IsP999(self):
        third = UCX.replace("+p99-", "+p99.9-").split("+p99.9")[1]
        f = perftest_json.parse_ucx(UCX + "+p99.9" + third.replace("14106.214", "20000.5"),
                                    [50.0, 99.0, 99.9])
        self.assertEqual(f["lat_p99_us"], 14106.214)
        self.assertEqual(f["lat_p999_us"], 20000.5)

    def test_ParseUcx_MissingOrShortFinalRowIsNone(self):
        first = UCX[:UCX.index("+p99")]
        self.assertIsNone(perftest_json.parse_ucx(first, [50.0, 99.0]))
        self.assertIsNone(perftest_json.parse_ucx("Final: 3000 9.1\n", [50.0]))
        self.assertIsNone(perftest_json.parse_ucx(UCX.replace("Final:                  3000  1",
                                                              "Final:                  2999  1"),
                                                  [50.0, 99.0]))

    def test_ParseUcx_RepeatedRankIsTheMedianOfItsWindows(self):
        p99 = UCX[UCX.index("+p99"):]
        text = UCX + p99.replace("14106.214", "30.5") + p99.replace("14106.214", "12.25")
        f = perftest_json.parse_ucx(text, [50.0, 99.0, 99.0, 99.0])
        self.assertIsNone(f)  # rank 50 has one window, rank 99 three
        p50 = UCX[:UCX.index("+p99")]
        text = (p50 + p50.replace("99.283", "98.5") + p99 + p99.replace("14106.214", "30.5"))
        f = perftest_json.parse_ucx(text, [50.0, 50.0, 99.0, 99.0])
        self.assertEqual(f["lat_median_us"], (99.283 + 98.5) / 2)
        self.assertEqual(f["lat_p99_us"], (30.5 + 14106.214) / 2)
        self.assertEqual(f["ucx_windows"], 2)
        text = (p50 + p50 + p50.replace("99.283", "1.5") + p99 + p99.replace("14106.214", "30.5") +
                p99.replace("14106.214", "12.25"))
        f = perftest_json.parse_ucx(text, [50.0] * 3 + [99.0] * 3)
        self.assertEqual(f["lat_median_us"], 99.283)
        self.assertEqual(f["lat_p99_us"], 30.5)
        self.assertEqual(f["ucx_windows"], 3)

    def test_Main_UcxLine(self):
        with tempfile.NamedTemporaryFile("w", suffix=".out") as f:
            f.write(UCX)
            f.flush()
            buf = StringIO()
            with redirect_stdout(buf):
                perftest_json.main(["--transport", "memif", "--point", "ucx_tag_lat",
                                    "--status", "0", "--ucx-ranks", "50,99", f.name])
            l = json.loads(buf.getvalue())
        self.assertTrue(l["ok"])
        self.assertEqual(l["lat_p99_us"], 14106.214)


class Main(unittest.TestCase):
    def line(self, text, status, extra=("--cpu", "a=99.5")):
        with tempfile.NamedTemporaryFile("w", suffix=".out") as f:
            f.write(text)
            f.flush()
            buf = StringIO()
            with redirect_stdout(buf):
                perftest_json.main(["--transport", "memif", "--point", "send_lat",
                                    "--status", str(status), "--why", "exit 1",
                                    *extra, "--meta", "poll=busy", f.name])
            return json.loads(buf.getvalue())

    def test_Main_OkLineCarriesFiguresCpuAndMeta(self):
        l = self.line(LAT, 0)
        self.assertTrue(l["ok"])
        self.assertEqual(l["bench"], "uroce-perftest")
        self.assertEqual(l["lat_median_us"], 14.21)
        self.assertEqual(l["daemon_cpu_pct"], {"a": 99.5})
        self.assertEqual(l["meta"], {"poll": "busy"})
        self.assertEqual(l["mode"], "daemon")
        self.assertEqual(l["perftest_cpu_pct"], {})

    def test_Main_EmbeddedLineHasModeAndPerftestCpu(self):
        l = self.line(LAT, 0, ("--mode", "embedded", "--perftest-cpu", "a=97.0",
                               "--perftest-cpu", "b="))
        self.assertEqual(l["mode"], "embedded")
        self.assertEqual(l["daemon_cpu_pct"], {})
        # An empty figure (not measured) is left out, not made 0.
        self.assertEqual(l["perftest_cpu_pct"], {"a": 97.0})

    def test_Main_FailedRunIsNotOkEvenWithARow(self):
        l = self.line(LAT, 1)
        self.assertFalse(l["ok"])
        self.assertEqual(l["error"], "exit 1")
        self.assertNotIn("lat_median_us", l)


def shard(total_bucket_counts, slowest_total=None):
    """A status "stages" entry whose total_ns holds {bucket: count}."""
    h = {k: [0] * 32 for k in perftest_json.STAGES}
    for b, c in total_bucket_counts.items():
        h["total_ns"][b] = c
    mean = {k: 0 for k in perftest_json.STAGES}
    if slowest_total is not None:
        mean["total_ns"] = slowest_total
    return dict(h, shard=0, slowest={"count": 0 if slowest_total is None else 1, "mean": mean})


class Stages(unittest.TestCase):
    def write(self, text):
        f = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
        self.addCleanup(os.unlink, f.name)
        f.write(text)
        f.close()
        return f.name

    def test_Stages_PointIsAfterLessBefore(self):
        before = {"devices": [{"name": "uroce0", "stages": [shard({12: 500})]}]}
        after = {"devices": [{"name": "uroce0", "stages": [shard({12: 1490, 15: 10}, 20000)]},
                             {"name": "uroce1"}]}
        side, figs = perftest_json.stages(
            f"a={self.write(json.dumps(before))}:{self.write(json.dumps(after))}")
        self.assertEqual(side, "a")
        t = figs["total_ns"]
        self.assertEqual(t["count"], 1000)
        self.assertEqual(t["p50_ns"], 4095)
        self.assertEqual(t["p99_ns"], 4095)
        self.assertEqual(t["p999_ns"], 32767)
        self.assertEqual(t["slowest_mean_ns"], 20000)
        self.assertEqual(figs["app_ns"]["count"], 0)
        self.assertIsNone(figs["app_ns"]["slowest_mean_ns"])

    def test_Stages_NamedDeviceOfOneDaemon(self):
        status = {"devices": [{"name": "uroce0", "stages": [shard({3: 1})]},
                              {"name": "uroce1", "stages": [shard({9: 7})]}]}
        side, figs = perftest_json.stages(f"b/uroce1={self.write(json.dumps(status))}")
        self.assertEqual(side, "b")
        self.assertEqual(figs["total_ns"]["count"], 7)
        self.assertEqual(figs["total_ns"]["p50_ns"], 511)

    def test_Stages_EmbeddedExitLineInALog(self):
        log = ("[info] engine shard 0: 10 iterations\n"
               "[info] stages at exit: " + json.dumps({"uroce0": [shard({10: 4})]}) + "\n")
        _, figs = perftest_json.stages(f"a={self.write(log)}")
        self.assertEqual(figs["total_ns"]["count"], 4)
        self.assertEqual(figs["total_ns"]["p99_ns"], 1023)

    def test_Stages_NoStampsCountNothing(self):
        _, figs = perftest_json.stages(f"a={self.write('perftest output only')}")
        self.assertEqual(figs["total_ns"]["count"], 0)


if __name__ == "__main__":
    unittest.main()
