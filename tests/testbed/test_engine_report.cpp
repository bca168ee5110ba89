#include "testbed/engine_report.h"

#include <gtest/gtest.h>

#include "testbed/run.h"
#include "testbed/scenario_toml.h"

namespace uroce::testbed {
namespace {

using Json = nlohmann::json;

Json run_shipped(const char* file) {
  Scenario sc;
  EXPECT_EQ(scenario_from_file(std::string(UROCE_SOURCE_ROOT) + "/testbed/scenarios/" + file, sc),
            "");
  RunOptions o;
  const RunResult r = run_scenario(sc, o);
  EXPECT_EQ(r.status, RunStatus::kOk) << r.error;
  return Json::parse(r.summary);
}

const Json& by_name(const Json& arr, const std::string& name) {
  for (const Json& x : arr) {
    if (x.contains("name") && x["name"] == name) return x;
    if (x.contains("peer") && x["peer"] == name) return x;
  }
  static const Json none;
  ADD_FAILURE() << name << " not found";
  return none;
}

// rc_flows.toml: both flows complete every message with the exact bytes,
// through PFC (s1 pauses h1 and h2) with no drop and no retransmission.
TEST(EngineReport_RcFlows, EveryMessageCompletesLosslesslyUnderPfc) {
  const Json j = run_shipped("rc_flows.toml");
  ASSERT_EQ(j["rc_flows"].size(), 2u);
  for (const Json& f : j["rc_flows"]) {
    SCOPED_TRACE(f["name"].get<std::string>());
    EXPECT_EQ(f["setup"], "ok");
    EXPECT_EQ(f["posted"], 100);
    EXPECT_EQ(f["completed"], 100);
    EXPECT_EQ(f["bytes"], 100 * 65536);
    EXPECT_EQ(f["errors"], 0);
    EXPECT_EQ(f["payload_mismatch"], 0);
    EXPECT_TRUE(f["done"].get<bool>());
    EXPECT_EQ(f["src_qp"]["tx_requests"], 1600);  // 16 x 4096 per message
    EXPECT_EQ(f["src_qp"]["tx_retransmits"], 0);
    EXPECT_EQ(f["src_qp"]["timeouts"], 0);
    EXPECT_EQ(f["dst_qp"]["rx_duplicates"], 0);
    EXPECT_EQ(f["dst_qp"]["rx_requests"], 1600);
    // Two flows share the 10 Gb/s link: each gets about half.
    EXPECT_GT(f["goodput_gbps"].get<double>(), 4.5);
    EXPECT_LT(f["goodput_gbps"].get<double>(), 5.5);
  }
  EXPECT_EQ(by_name(j["rc_flows"], "send")["recv_completed"], 100);
  EXPECT_EQ(by_name(j["rc_flows"], "send")["recv_bytes"], 100 * 65536);
  const Json& s1 = by_name(j["switches"], "s1");
  for (const char* peer : {"h1", "h2"}) {
    const Json& port = by_name(s1["ports"], peer);
    EXPECT_GT(port["ingress"]["3"]["xoff_sent"].get<int>(), 10) << peer;
    EXPECT_GT(by_name(j["hosts"], peer)["pfc_rx"]["prio"]["3"]["paused_ns"].get<long>(), 1000000)
        << peer;
  }
  for (const Json& sw : j["switches"]) {
    for (const auto& [reason, n] : sw["drops_packets"].items()) EXPECT_EQ(n, 0) << reason;
  }
  const Json& e = j["engine"];
  EXPECT_EQ(e["frames"]["tx_records"], e["frames"]["rx_frames"]);
  EXPECT_EQ(e["frames"]["tx_refused"], 0);
  EXPECT_EQ(e["frame_store"]["live_end"], 0);
  EXPECT_EQ(by_name(e["hosts"], "h3")["rx_dispatched"], 3200);
  EXPECT_EQ(by_name(e["hosts"], "h3")["rx_parse_errors"], 0);  // ICRC held through the switches
}

// rc_transient_loop.toml: the RC victim freezes in the loop's deadlock;
// the watchdog flushes s2 -> s1 (where its ACKs wait) and refuses more for
// a while; the QP recovers by timeouts and retransmissions and completes
// every message once, with the right bytes.
TEST(EngineReport_RcFlows, VictimOfATransientLoopRecoversAfterTheWatchdog) {
  const Json j = run_shipped("rc_transient_loop.toml");
  ASSERT_EQ(j["deadlocks"]["list"].size(), 1u);
  EXPECT_EQ(j["deadlocks"]["list"][0]["resolved_ns"], 11400000);
  const Json& f = j["rc_flows"][0];
  EXPECT_EQ(f["completed"], 400);
  EXPECT_EQ(f["bytes"], 400 * 65536);
  EXPECT_EQ(f["errors"], 0);
  EXPECT_EQ(f["payload_mismatch"], 0);
  EXPECT_GT(f["src_qp"]["timeouts"].get<int>(), 0);
  EXPECT_GT(f["src_qp"]["tx_retransmits"].get<int>(), 0);
  EXPECT_EQ(f["dst_qp"]["rx_requests"], 400 * 16);     // each PSN executed once
  EXPECT_GT(f["mct_ns"]["max"].get<long>(), 9000000);  // frozen through the deadlock
  // Every engine frame is accounted for: received, dropped by a switch on
  // arrival, or flushed by the watchdog (still in the store at the end).
  const Json& fr = j["engine"]["frames"];
  EXPECT_EQ(fr["tx_records"].get<long>(), fr["rx_frames"].get<long>() +
                                              fr["switch_dropped"].get<long>() +
                                              j["engine"]["frame_store"]["live_end"].get<long>());
  EXPECT_GT(fr["switch_dropped"].get<long>(), 0);
}

}  // namespace
}  // namespace uroce::testbed
