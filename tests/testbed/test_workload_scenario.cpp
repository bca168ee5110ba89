#include "testbed/workload_scenario.h"

#include <gtest/gtest.h>

#include "workload_test_support.h"

namespace uroce::testbed {
namespace {

using testing::line_workload;
using testing::star_workload;
using testing::workload_file;

std::string resolve_error(const Scenario& sc) {
  Topology t;
  return resolve(sc, t);
}

TEST(ResolveWorkload, StarPathsAreTwoHopsThroughTheSwitch) {
  const Scenario sc = star_workload(3, workload_file("w3.csv"), 0.5, 1, 10);
  Topology t;
  ASSERT_EQ(resolve(sc, t), "");
  EXPECT_EQ(t.workload_hosts, (std::vector<std::uint32_t>{0, 1, 2}));
  // h1 -> s1 is link 0's a -> b; s1 -> h3 is link 2's b -> a.
  EXPECT_EQ(t.workload_paths[0][2], (std::vector<std::uint32_t>{0, 5}));
  EXPECT_TRUE(t.workload_paths[1][1].empty());
  EXPECT_EQ(t.workload_dist.max_length(), 15'158'197u);
}

TEST(ResolveWorkload, LinePathCrossesTheCore) {
  const Scenario sc = line_workload(workload_file("w3.csv"), 0.5, 1, 10, 10, 40, 0);
  Topology t;
  ASSERT_EQ(resolve(sc, t), "");
  // h1 -> s1 (link 0), s1 -> s2 (link 2), s2 -> h2 (link 1, b -> a).
  EXPECT_EQ(t.workload_paths[0][1], (std::vector<std::uint32_t>{0, 4, 3}));
  EXPECT_EQ(t.workload_paths[1][0], (std::vector<std::uint32_t>{2, 5, 1}));
}

TEST(ResolveWorkload, OnlyEngineHostsTakePart) {
  Scenario sc = star_workload(3, workload_file("w3.csv"), 0.5, 1, 10);
  sc.hosts[1].engine = false;
  Topology t;
  ASSERT_EQ(resolve(sc, t), "");
  EXPECT_EQ(t.workload_hosts, (std::vector<std::uint32_t>{0, 2}));
  sc.hosts[0].engine = false;
  EXPECT_EQ(resolve_error(sc), "workload: needs at least two hosts with kind = \"engine\"");
}

TEST(ResolveWorkload, CapTruncatesTheDistribution) {
  Scenario sc = star_workload(2, workload_file("w5.csv"), 0.5, 1, 10);
  sc.workload.max_length_bytes = 1'000'000;
  Topology t;
  ASSERT_EQ(resolve(sc, t), "");
  EXPECT_EQ(t.workload_dist.max_length(), 1'000'000u);
}

TEST(ResolveWorkload, ErrorsNameTheProblem) {
  const Scenario base = star_workload(2, workload_file("w3.csv"), 0.5, 1, 10);
  Scenario sc = base;
  sc.links[1].rate_bps = 40'000'000'000;
  EXPECT_EQ(resolve_error(sc),
            "workload: the engine hosts' links differ in rate ('h2' vs 'h1'); the load needs one");
  sc = base;
  sc.hosts[1].eth_mtu = 1500;
  EXPECT_EQ(resolve_error(sc), "workload.mtu: 4096 does not fit the eth_mtu 1500 of 'h2'");
  sc = base;
  sc.workload.mtu = 1000;
  EXPECT_EQ(resolve_error(sc), "workload.mtu: 1000 is not 256, 512, 1024, 2048 or 4096");
  sc = base;
  sc.workload.warmup_ns = 5 * kNsPerMs;
  sc.workload.measure_ns = 6 * kNsPerMs;
  EXPECT_EQ(resolve_error(sc),
            "workload: warmup_ms + measure_ms exceed the run (scenario.duration_ms)");
  sc = base;
  sc.workload.distribution = "/nonexistent/w9.csv";
  EXPECT_EQ(resolve_error(sc).rfind("workload.distribution: /nonexistent/w9.csv", 0), 0u);
  sc = base;
  sc.workload.distribution.clear();
  EXPECT_EQ(resolve_error(sc), "workload.distribution: required (a CSV file)");
  sc = base;
  sc.workload.load = 0;
  EXPECT_EQ(resolve_error(sc).rfind("workload: load must be", 0), 0u);
  sc = base;
  sc.workload.qps_per_pair = 0;
  EXPECT_EQ(resolve_error(sc), "workload.qps_per_pair: must be >= 1");
  sc = base;
  sc.workload.incast_senders = 2;
  EXPECT_EQ(resolve_error(sc), "workload.incast_senders: 2 is not below the workload's 2 hosts");
}

TEST(ResolveWorkload, ARouteLoopIsNamed) {
  Scenario sc = line_workload(workload_file("w3.csv"), 0.5, 1, 10, 10, 10, 0);
  sc.routes.push_back({"s2", "h2", "s1"});
  EXPECT_EQ(resolve_error(sc), "workload: no loop-free route from 'h1' to 'h2'");
}

}  // namespace
}  // namespace uroce::testbed
