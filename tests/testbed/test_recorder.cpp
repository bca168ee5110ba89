#include "testbed/recorder.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "testbed/simulator.h"
#include "tests/testbed/test_support.h"

namespace uroce::testbed {
namespace {

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

TEST(Recorder_Sample, HeaderThenOneRowPerSampleInstant) {
  Scenario sc = testing::line(10, 5);
  sc.output.sample_ns = 500 * kNsPerUs;
  Topology t;
  ASSERT_EQ(resolve(sc, t), "");
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("uroce-recorder-" + std::to_string(::getpid()) + ".csv"))
                               .string();
  Recorder rec;
  ASSERT_EQ(rec.open(path), 0);
  {
    Simulator sim(sc, t, 1);
    sim.attach_recorder(&rec);
    sim.run();
  }
  ASSERT_EQ(rec.close(), 0);
  EXPECT_EQ(rec.rows(), 5u);  // 0, 0.5, 1, 1.5, 2 ms
  const auto lines = lines_of(path);
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[0],
            "time_us,s1.buffer_bytes,s1>h1.in_bytes,s1>h1.out_bytes,s1>h1.paused,"
            "s1>h2.in_bytes,s1>h2.out_bytes,s1>h2.paused,h1->s1.gbps,s1->h1.gbps,"
            "s1->h2.gbps,h2->s1.gbps,h1.tx_gbps,h1.rx_gbps,h2.tx_gbps,h2.rx_gbps,deadlocks");
  EXPECT_EQ(lines[1], "0.000,0,0,0,0,0,0,0,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0");
  // Frames leave h1 every 1.6 us from 0; the one at 0 precedes the first
  // sample, so (0, 500 us] holds 312 of them: 312000 x 8 / 500000 ns.
  std::istringstream row(lines[2]);
  std::vector<std::string> cells;
  for (std::string c; std::getline(row, c, ',');) cells.push_back(c);
  ASSERT_EQ(cells.size(), 17u);
  EXPECT_EQ(cells[0], "500.000");
  EXPECT_EQ(cells[8], "4.992");   // h1->s1
  EXPECT_EQ(cells[12], "4.992");  // h1.tx_gbps
  EXPECT_EQ(lines[5].substr(0, 9), "2000.000,");
  std::filesystem::remove(path);
  Recorder bad;
  EXPECT_EQ(bad.open("/nonexistent-dir-uroce/x.csv"), ENOENT);
}

}  // namespace
}  // namespace uroce::testbed
