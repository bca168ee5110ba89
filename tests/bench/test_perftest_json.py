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


if __name__ == "__main__":
    unittest.main()
