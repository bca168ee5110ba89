#include "testbed/dc_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "testbed/run.h"
#include "testbed/scenario_toml.h"

namespace uroce::testbed {
namespace {

// h1 fans out to h2 and h3 behind s1; a second flow is disabled.
const char* kFanout = R"(
[scenario]
duration_ms = 5
[defaults.host]
kind = "engine"
[[host]]
name = "h1"
[[host]]
name = "h2"
[[host]]
name = "h3"
[[switch]]
name = "s1"
[[link]]
a = "h1"
b = "s1"
[[link]]
a = "h2"
b = "s1"
[[link]]
a = "h3"
b = "s1"
[[dc_flow]]
name = "fan"
src = "h1"
targets = ["h2", "h3"]
count = 20
window = 4
streams = 2
[[dc_flow]]
src = "h2"
targets = ["h1"]
enabled = false
)";

RunResult run() {
  Scenario sc;
  EXPECT_EQ(scenario_from_toml(kFanout, "t.toml", sc), "");
  return run_scenario(sc, RunOptions{});
}

TEST(DcReport_Json, PerFlowCountsTimesConnectionsAndPools) {
  const RunResult r = run();
  ASSERT_EQ(r.status, RunStatus::kOk) << r.error;
  const nlohmann::json j = nlohmann::json::parse(r.summary);
  ASSERT_EQ(j["dc_flows"].size(), 2u);
  const nlohmann::json& f = j["dc_flows"][0];
  EXPECT_EQ(f["name"], "fan");
  EXPECT_EQ(f["targets"], nlohmann::json::array({"h2", "h3"}));
  EXPECT_EQ(f["completed"], 20);
  EXPECT_EQ(f["delivered"], 20);
  EXPECT_GT(f["msg_rate_kps"].get<double>(), 0.0);
  EXPECT_LE(f["mct_ns"]["p50"].get<std::uint64_t>(), f["mct_ns"]["p99"].get<std::uint64_t>());
  // Delivery is seen at the target before the ACK reaches the source.
  EXPECT_LT(f["delivery_ns"]["p50"].get<std::uint64_t>(), f["mct_ns"]["p50"].get<std::uint64_t>());
  EXPECT_EQ(f["dci"]["streams"], 2);
  EXPECT_GE(f["dci"]["connects"].get<std::uint64_t>(), 2u);
  ASSERT_EQ(f["per_target"].size(), 2u);
  EXPECT_EQ(f["per_target"][1]["host"], "h3");
  EXPECT_EQ(f["per_target"][1]["recv_completed"], 10);
  EXPECT_EQ(f["per_target"][1]["pool"]["capacity"], 4096);
  EXPECT_EQ(f["target_pools"]["opened"].get<std::uint64_t>(),
            f["per_target"][0]["pool"]["opened"].get<std::uint64_t>() +
                f["per_target"][1]["pool"]["opened"].get<std::uint64_t>());
  // A disabled flow has its settings and nothing else.
  EXPECT_EQ(j["dc_flows"][1]["name"], "dc1");
  EXPECT_EQ(j["dc_flows"][1]["setup"], "disabled");
  EXPECT_FALSE(j["dc_flows"][1].contains("completed"));
}

TEST(DcReport_Text, FiveLinesPerFlowOneForADisabledOne) {
  const RunResult r = run();
  ASSERT_EQ(r.status, RunStatus::kOk) << r.error;
  EXPECT_EQ(r.dc_flows.find(
                "dc_flow fan: h1 -> 2 targets, send 4096 B x 20, window 4, 2 stream(s): ok\n"
                "  completed 20, errors 0, delivered 20 (mismatch 0, misdirected 0, "
                "duplicates 0, duplicate completions 0)\n"),
            0u)
      << r.dc_flows;
  EXPECT_NE(r.dc_flows.find("  DCI: connects "), std::string::npos);
  EXPECT_NE(r.dc_flows.find("  targets: contexts opened "), std::string::npos);
  EXPECT_NE(r.dc_flows.find("dc_flow dc1: h2 -> 1 targets, send 4096 B x 1000, window 16, 1 "
                            "stream(s): disabled\n"),
            std::string::npos);
  std::size_t lines = 0;
  for (const char c : r.dc_flows) lines += c == '\n';
  EXPECT_EQ(lines, 6u);
}

}  // namespace
}  // namespace uroce::testbed
