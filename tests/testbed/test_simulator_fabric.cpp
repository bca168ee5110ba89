// The fabric's moving parts (simulator_fabric.cpp) on the shipped four-path
// scenario: ECMP spreads a sprayed connection over every spine, a link
// change loses what crosses the link while it is down, reconvergence moves
// the routes off it, a connection resumes after a flap, and a run is the
// same for the same seed.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "testbed/run.h"
#include "testbed/scenario_toml.h"
#include "tests/testbed/test_support.h"

namespace uroce::testbed {
namespace {

using Json = nlohmann::json;

Json run(const std::vector<std::string>& sets, const std::string& file = "spray_four_paths.toml") {
  return Json::parse(testing::run_shipped_twice(file, sets).summary);
}

// Data frames l1 sent toward each spine (links 2..5: l1-sp1..l1-sp4).
std::vector<std::uint64_t> l1_uplinks(const Json& j) {
  std::vector<std::uint64_t> v;
  for (const Json& l : j["links"]) {
    if (l["from"] == "l1" && l["to"].get<std::string>().starts_with("sp")) {
      v.push_back(l["data_frames"].get<std::uint64_t>());
    }
  }
  return v;
}

const Json& link_dir(const Json& j, const char* from, const char* to) {
  for (const Json& l : j["links"]) {
    if (l["from"] == from && l["to"] == to) return l;
  }
  static const Json none;
  ADD_FAILURE() << from << " -> " << to << ": no such link";
  return none;
}

TEST(SimulatorFabric_Ecmp, ASprayedConnectionUsesEverySpine) {
  const Json j = run({"scenario.duration_ms=2"});
  const std::vector<std::uint64_t> up = l1_uplinks(j);
  ASSERT_EQ(up.size(), 4u);
  for (const std::uint64_t n : up) EXPECT_GT(n, 100u);
  const Json& f = j["rc_flows"][0];
  EXPECT_GT(f["completed"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(f["payload_mismatch"], 0);
  // One port: the leaf hashes the connection to one spine.
  const Json one = run({"scenario.duration_ms=2", "defaults.host.spray_paths=1"});
  std::uint32_t used = 0;
  for (const std::uint64_t n : l1_uplinks(one)) used += n > 0 ? 1 : 0;
  EXPECT_EQ(used, 1u);
}

// l1-sp2 down at 1 ms: what crosses it from then on is lost (both ways),
// and the sprayed connection goes on completing messages around it.
TEST(SimulatorFabric_LinkChange, DownLinkLosesAndTheSprayRoutesAround) {
  const Json j =
      run({"scenario.duration_ms=4", "link_change.0.enabled=true", "link_change.0.at_us=1000"});
  ASSERT_EQ(j["link_changes"].size(), 1u);
  EXPECT_EQ(j["link_changes"][0]["applied_ns"], 1'000'000);
  EXPECT_TRUE(j["link_changes"][0]["reconverged_ns"].is_null());
  EXPECT_GT(link_dir(j, "l1", "sp2")["lost_down"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(link_dir(j, "l1", "sp1")["lost_down"], 0);
  const Json before = run({"scenario.duration_ms=1"});
  EXPECT_GT(j["rc_flows"][0]["completed"].get<std::uint64_t>(),
            before["rc_flows"][0]["completed"].get<std::uint64_t>() + 10);
  EXPECT_EQ(j["rc_flows"][0]["payload_mismatch"], 0);
}

// With reconverge_us the leaves drop the dead uplink from their groups:
// after that nothing more is lost on it.
TEST(SimulatorFabric_Reconverge, RoutesLeaveTheDownLink) {
  const Json at = run({"scenario.duration_ms=2", "link_change.0.enabled=true",
                       "link_change.0.at_us=1000", "routing.reconverge_us=100"});
  const Json later = run({"scenario.duration_ms=4", "link_change.0.enabled=true",
                          "link_change.0.at_us=1000", "routing.reconverge_us=100"});
  EXPECT_EQ(later["link_changes"][0]["reconverged_ns"], 1'100'000);
  const std::uint64_t lost = link_dir(at, "l1", "sp2")["lost_down"].get<std::uint64_t>();
  EXPECT_GT(lost, 0u);
  EXPECT_EQ(link_dir(later, "l1", "sp2")["lost_down"].get<std::uint64_t>(), lost);
}

// l1-sp2 flapping (down at 3 ms, then up and down every 500 us, up for good
// from 6.5 ms) under the answers of a connection hashed onto it (one port;
// seed 9 sends h2's ACKs through sp2): its tail-loss probes go on,
// doubling, past the flaps, so once the link is back an answer gets
// through and the connection resumes instead of waiting for its
// retransmission timeout (67 ms, past the run; with 4 probes it completed
// nothing from 3 ms to the end).
TEST(SimulatorFabric_Flap, AHashedConnectionResumesOnceTheLinkIsBack) {
  std::vector<std::string> sets = {"scenario.seed=9", "defaults.host.spray_paths=1",
                                   "defaults.host.lossy_cap=32"};
  for (int i = 0; i < 8; ++i) sets.push_back("link_change." + std::to_string(i) + ".enabled=true");
  const Json whole = run(sets);
  sets.push_back("scenario.duration_ms=7.5");
  const Json settled = run(sets);
  ASSERT_EQ(whole["link_changes"].size(), 8u);
  EXPECT_GT(link_dir(whole, "sp2", "l1")["lost_down"].get<std::uint64_t>(), 0u);
  // From 7.5 ms to the end one 10 Gb/s path carries about 86 of its 64 KiB
  // messages: more than 50 means it resumed (with 4 probes: 0).
  const Json& f = whole["rc_flows"][0];
  EXPECT_GT(f["completed"].get<std::uint64_t>(),
            settled["rc_flows"][0]["completed"].get<std::uint64_t>() + 50);
  EXPECT_EQ(f["payload_mismatch"], 0);
}

// The leaf-spine of must-show 2 with selective repeat sprayed and PFC off:
// every measured message arrives whole, no switch sends a PFC frame, and
// every leaf-spine link carries data (ECMP spreads the connections).
TEST(SimulatorFabric_LeafSpine, SprayedSelectiveRepeatWithoutPfc) {
  const Json j = run({"defaults.host.lossy=true", "pfc.priorities=[]",
                      "defaults.host.spray_paths=16", "workload.load=0.5", "workload.measure_ms=2"},
                     "lossy_leaf_spine.toml");
  const Json& c = j["workload"]["counts"];
  EXPECT_GT(c["measured"].get<std::uint64_t>(), 100u);
  EXPECT_EQ(c["measured_done"], c["measured"]);
  EXPECT_EQ(c["payload_mismatch"], 0);
  EXPECT_EQ(c["length_mismatch"], 0);
  EXPECT_EQ(c["send_errors"], 0);
  std::uint32_t uplinks = 0;
  for (const Json& sw : j["switches"]) EXPECT_EQ(sw["pfc_frames_sent"], 0) << sw["name"];
  for (const Json& l : j["links"]) {
    const std::string from = l["from"];
    const std::string to = l["to"];
    if (from.starts_with("l") && to.starts_with("sp")) {
      ++uplinks;
      EXPECT_GT(l["data_frames"].get<std::uint64_t>(), 0u) << from << "-" << to;
    }
  }
  EXPECT_EQ(uplinks, 16u);
}

}  // namespace
}  // namespace uroce::testbed
