// The Simulator's [[dc_flow]]s (simulator_dc.cpp) on the shipped fan-out
// scenario: the same seed gives the same report, byte for byte, as is,
// under a pool small enough to evict, and with loss; and every message is
// delivered once with its bytes in each case. On the four-path fabric of
// dc_spray.toml: spraying a DCI's connections over many ports.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "testbed/run.h"
#include "testbed/scenario_toml.h"
#include "tests/testbed/test_support.h"

namespace uroce::testbed {
namespace {

using Json = nlohmann::json;

struct Runs {
  Json flow;         // summary.json's dc_flows[0]
  Json engine;       // summary.json's engine
  std::string text;  // the command's dc_flow lines
};

// The shipped scenario with `sets` applied, run twice with the same seed:
// both runs' summary and text must be identical.
Runs run_twice(const std::vector<std::string>& sets) {
  const RunResult a = testing::run_shipped_twice("dc_fanout.toml", sets);
  const Json j = Json::parse(a.summary);
  return {j["dc_flows"][0], j["engine"], a.dc_flows};
}

// Every message completed once at the source and arrived once, whole and
// at its own target.
void expect_all_delivered(const Json& f, std::uint64_t count) {
  EXPECT_EQ(f["setup"], "ok");
  EXPECT_EQ(f["posted"], count);
  EXPECT_EQ(f["completed"], count);
  EXPECT_EQ(f["delivered"], count);
  EXPECT_EQ(f["errors"], 0);
  EXPECT_EQ(f["duplicate_completions"], 0);
  EXPECT_EQ(f["recv_errors"], 0);
  EXPECT_EQ(f["payload_mismatch"], 0);
  EXPECT_EQ(f["misdirected"], 0);
  EXPECT_EQ(f["duplicates"], 0);
  EXPECT_TRUE(f["done"].get<bool>());
  std::uint64_t per_target = 0;
  for (const Json& t : f["per_target"]) per_target += t["recv_completed"].get<std::uint64_t>();
  EXPECT_EQ(per_target, count);
}

TEST(SimulatorDc_Fanout, SameSeedGivesIdenticalReports) {
  const Runs r = run_twice({});
  expect_all_delivered(r.flow, 4000);
  // Sixteen targets, four streams: every message switches its stream to
  // another target, so each opens a connection and one context at a time
  // per target host, none evicted and none refused.
  EXPECT_EQ(r.flow["per_target"].size(), 16u);
  EXPECT_EQ(r.flow["dci"]["connects"], 4000);
  EXPECT_EQ(r.flow["dci"]["tx_retransmits"], 0);
  EXPECT_EQ(r.flow["target_pools"]["opened"], 4000);
  EXPECT_EQ(r.flow["target_pools"]["open_peak_max"], 1);
  EXPECT_EQ(r.flow["target_pools"]["evicted"], 0);
  EXPECT_EQ(r.flow["target_pools"]["busy"], 0);
  EXPECT_NE(r.text.find("completed 4000, errors 0, delivered 4000"), std::string::npos) << r.text;
}

TEST(SimulatorDc_Fanout, SmallPoolEvictsAndStillDeliversEveryMessage) {
  const Runs r =
      run_twice({"defaults.host.dc_contexts=2", "dc_flow.0.streams=16", "dc_flow.0.window=64",
                 R"(dc_flow.0.targets=["t1","t2","t3","t4"])", "dc_flow.0.count=2000"});
  expect_all_delivered(r.flow, 2000);
  // Four streams per target over two contexts: the target answers BUSY
  // and retires clean contexts for newcomers, never holding more than two.
  EXPECT_GT(r.flow["target_pools"]["busy"].get<std::uint64_t>(), 0u);
  EXPECT_GT(r.flow["target_pools"]["evicted"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(r.flow["target_pools"]["open_peak_max"], 2);
  EXPECT_GT(r.flow["dci"]["reconnects"].get<std::uint64_t>(), 0u);
  EXPECT_GT(r.flow["dci"]["rx_rnr_naks"].get<std::uint64_t>(), 0u);
}

TEST(SimulatorDc_Fanout, LossIsRecoveredAndEveryMessageDelivered) {
  const Runs r = run_twice({"defaults.host.drop_rx_rate=0.01", "dc_flow.0.count=1000"});
  expect_all_delivered(r.flow, 1000);
  std::uint64_t dropped = 0;
  for (const Json& h : r.engine["hosts"]) dropped += h["rx_impair_drop"].get<std::uint64_t>();
  EXPECT_GT(dropped, 0u);
  EXPECT_GT(r.flow["dci"]["tx_retransmits"].get<std::uint64_t>(), 0u);
}

// With selective repeat on every host (docs/lossy.md "DC") each loss is
// found by a SACK or a tail-loss probe instead of the retransmission
// timeout: no timeout at all, every message delivered once, and more than
// twice go-back-N's message rate under the same 1 % loss.
TEST(SimulatorDc_Fanout, SelectiveRepeatRecoversLossWithoutTimeouts) {
  const Runs sr = run_twice(
      {"defaults.host.drop_rx_rate=0.01", "dc_flow.0.count=1000", "defaults.host.lossy=true"});
  expect_all_delivered(sr.flow, 1000);
  EXPECT_GT(sr.flow["dci"]["tx_retransmits"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(sr.flow["dci"]["timeouts"], 0);
  const Runs gbn = run_twice({"defaults.host.drop_rx_rate=0.01", "dc_flow.0.count=1000"});
  EXPECT_GT(gbn.flow["dci"]["timeouts"].get<std::uint64_t>(), 0u);
  EXPECT_GT(sr.flow["msg_rate_kps"].get<double>(), 2 * gbn.flow["msg_rate_kps"].get<double>());
}

TEST(SimulatorDc_Fanout, AnotherSeedGivesAnotherRunUnderLoss) {
  // The loss streams come from the seed: a report that did not change with
  // it would mean the seed never reached them.
  Scenario sc;
  const std::string path = std::string(UROCE_SOURCE_ROOT) + "/testbed/scenarios/dc_fanout.toml";
  ASSERT_EQ(scenario_from_file(path, {"defaults.host.drop_rx_rate=0.01", "dc_flow.0.count=300"},
                               sc),
            "");
  RunOptions opts;
  opts.seed = 1;
  const RunResult a = run_scenario(sc, opts);
  opts.seed = 2;
  const RunResult b = run_scenario(sc, opts);
  EXPECT_NE(a.summary, b.summary);
}

// dc_spray.toml (docs/lossy-dc.md "Spraying"): one DCI WRITEs over four
// 10 Gb/s spine paths, cut at 6 ms, selective repeat with 16 packets in
// flight per connection. With l1-sp2 failed at 3 ms when `failed`.
Json spray_run(std::uint32_t paths, bool failed) {
  const RunResult r =
      testing::run_shipped_twice("dc_spray.toml",
                                 {"scenario.duration_ms=6", "defaults.host.lossy_cap=16",
                                  "defaults.host.spray_paths=" + std::to_string(paths),
                                  std::string("link_change.0.enabled=") +
                                      (failed ? "true" : "false")});
  return Json::parse(r.summary)["dc_flows"][0];
}

void expect_intact(const Json& f) {
  EXPECT_EQ(f["setup"], "ok");
  EXPECT_EQ(f["errors"], 0);
  EXPECT_EQ(f["payload_mismatch"], 0);
  EXPECT_EQ(f["misdirected"], 0);
  EXPECT_EQ(f["duplicates"], 0);
  EXPECT_EQ(f["duplicate_completions"], 0);
}

// Every stream of a DCI sends from its one UDP source port, so unsprayed
// the flow hashes to one spine path; sprayed over 16 ports it uses them
// all, at more than twice that rate.
TEST(SimulatorDc_Spray, SprayedFlowOutrunsOnePath) {
  const Json one = spray_run(1, false);
  const Json many = spray_run(16, false);
  expect_intact(one);
  expect_intact(many);
  EXPECT_LT(one["goodput_gbps"].get<double>(), 10.0);
  EXPECT_GT(many["goodput_gbps"].get<double>(), 2 * one["goodput_gbps"].get<double>());
}

// A spine link fails and the routes never reconverge: the sprayed flow
// avoids the dead path and keeps more than half its rate, no WR in error.
// Unsprayed, this seed hashes the DCI's port over the failed link: the
// flow stops at the failure (its WRs wait for retries that cannot reach
// the target), delivering no more than it had by 3 ms.
TEST(SimulatorDc_Spray, SprayedFlowRoutesAroundAFailedSpineLink) {
  const Json many = spray_run(16, false);
  const Json many_failed = spray_run(16, true);
  expect_intact(many_failed);
  EXPECT_GT(many_failed["bytes"].get<double>(), 0.5 * many["bytes"].get<double>());
  const Json one = spray_run(1, false);
  const Json one_failed = spray_run(1, true);
  EXPECT_LT(one_failed["bytes"].get<double>(), 0.55 * one["bytes"].get<double>());
  EXPECT_EQ(one_failed["payload_mismatch"], 0);
}

}  // namespace
}  // namespace uroce::testbed
