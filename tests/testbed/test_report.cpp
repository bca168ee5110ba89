#include "testbed/report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "testbed/simulator.h"
#include "tests/testbed/test_support.h"

namespace uroce::testbed {
namespace {

nlohmann::json run_json(const Scenario& sc) {
  Topology t;
  EXPECT_EQ(resolve(sc, t), "");
  Simulator sim(sc, t, sc.seed);
  sim.run();
  return nlohmann::json::parse(summary_json(sim));
}

TEST(Report_Summary, FlowsHostsSwitchesLinks) {
  const auto j = run_json(testing::line(10, 5));
  EXPECT_EQ(j["scenario"], "line");
  EXPECT_EQ(j["stop_reason"], "duration");
  EXPECT_EQ(j["end_ns"], 2000000);
  ASSERT_EQ(j["flows"].size(), 1u);
  EXPECT_EQ(j["flows"][0]["rx_packets"], 625);
  EXPECT_EQ(j["flows"][0]["rx_gbps"], 5.0);  // 625 kB in the 1 ms the flow ran
  EXPECT_EQ(j["flows"][0]["latency_max_ns"], 3600);
  EXPECT_EQ(j["flows"][0]["rx_ttl_min"], 63);
  EXPECT_EQ(j["hosts"][1]["ip"], "10.0.0.2");
  EXPECT_EQ(j["switches"][0]["forwarded_packets"], 625);
  EXPECT_EQ(j["switches"][0]["drops_packets"]["ttl_expired"], 0);
  EXPECT_EQ(j["switches"][0]["ports"][1]["peer"], "h2");
  EXPECT_EQ(j["switches"][0]["ports"][1]["egress"]["3"]["sent_packets"], 625);
  EXPECT_EQ(j["links"][0]["from"], "h1");
  EXPECT_EQ(j["links"][0]["data_frames"], 625);
  EXPECT_EQ(j["links"][0]["utilization"], 0.25);  // 500 us busy of 2 ms
  EXPECT_TRUE(j["deadlocks"]["list"].empty());
  EXPECT_FALSE(j["watchdog"]["enabled"]);
}

TEST(Report_Summary, DeadlockWatchdogAndInjections) {
  LoopParams p = testing::small_loop(10, 30 * kNsPerMs);
  p.fix_at_ns = 3 * kNsPerMs;
  p.watchdog = true;
  p.watchdog_detection_ns = 5 * kNsPerMs;
  p.watchdog_restoration_ns = 5 * kNsPerMs;
  Scenario sc = make_loop_scenario(p);
  PfcInjectSpec in;
  in.at_ns = 100;
  in.from = "hd";
  in.to = "s2";
  in.opcode = 0x0001;
  sc.pfc_injections = {in};
  const auto j = run_json(sc);
  const auto& d = j["deadlocks"]["list"][0];
  EXPECT_EQ(d["cycle"][0]["queue"], "s1>s2/3");
  EXPECT_EQ(d["cycle"][1]["toward"], "s1");
  EXPECT_FALSE(d["resolved_ns"].is_null());
  EXPECT_EQ(d["time_to_deadlock_ns"], d["formed_ns"]);  // the flow starts at 0
  ASSERT_FALSE(j["watchdog"]["storms"].empty());
  EXPECT_GT(j["watchdog"]["dropped_packets_total"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(j["watchdog"]["action"], "drop");
  EXPECT_EQ(j["route_changes"][0]["applied_ns"], 3000000);
  EXPECT_EQ(j["route_changes"][0]["via"], "hd");
  EXPECT_EQ(j["pfc_injections"][0]["verdict"], "NotPfcOpcode");
  EXPECT_EQ(j["switches"][1]["ports"][0]["pfc_rx"]["parse"]["NotPfcOpcode"], 1);
}

}  // namespace
}  // namespace uroce::testbed
