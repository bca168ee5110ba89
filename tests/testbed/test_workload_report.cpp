#include "testbed/workload_report.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "testbed/message_workload.h"
#include "testbed/report.h"
#include "testbed/simulator.h"
#include "workload_test_support.h"

namespace uroce::testbed {
namespace {

using testing::scratch_path;
using testing::star_workload;
using testing::workload_file;

struct Ran {
  Topology topo;
  std::unique_ptr<Simulator> sim;
};

Ran small_run() {
  Scenario sc = star_workload(3, workload_file("w3.csv"), 0.5, 0.2, 20);
  sc.workload.max_length_bytes = 30000;
  sc.workload.buckets = 4;
  Ran r;
  EXPECT_EQ(resolve(sc, r.topo), "");
  r.sim = std::make_unique<Simulator>(sc, r.topo, 1);
  r.sim->run();
  return r;
}

TEST(WorkloadJson, SettingsCountsLoadAndSlowdown) {
  const Ran r = small_run();
  const nlohmann::ordered_json j = workload_json(*r.sim);
  EXPECT_EQ(j["op"], "send");
  EXPECT_EQ(j["hosts"], 3);
  EXPECT_EQ(j["setup"], "ok");
  EXPECT_EQ(j["counts"]["measured"], j["counts"]["measured_done"]);
  EXPECT_EQ(j["counts"]["payload_mismatch"], 0);
  EXPECT_GT(j["measured_load"].get<double>(), 0.0);
  ASSERT_EQ(j["slowdown"]["buckets"].size(), 4u);
  EXPECT_EQ(j["slowdown"]["overall"]["count"], j["counts"]["measured"]);
  EXPECT_GE(j["slowdown"]["overall"]["min"].get<double>(), 1.0);
  // A lossless fabric: RC never had to time out or resend.
  EXPECT_EQ(j["transport"]["timeouts"], 0);
  EXPECT_EQ(j["transport"]["tx_retransmits"], 0);
}

TEST(WorkloadJson, SummaryHasTheSectionAndTheStopReason) {
  const Ran r = small_run();
  const nlohmann::json j = nlohmann::json::parse(summary_json(*r.sim));
  EXPECT_EQ(j["stop_reason"], "workload_done");
  EXPECT_TRUE(j.contains("workload"));
  EXPECT_LT(j["end_ns"].get<std::uint64_t>(), 20 * kNsPerMs);
}

TEST(WorkloadJson, HomaRunsSumTheGatesCounters) {
  Scenario sc = star_workload(3, workload_file("w4.csv"), 0.5, 0.3, 30);
  sc.workload.max_length_bytes = 100000;
  for (HostSpec& h : sc.hosts) {
    h.engine_homa.enabled = true;
    h.engine_homa.unsched_bytes = 16384;
  }
  Topology topo;
  ASSERT_EQ(resolve(sc, topo), "");
  Simulator sim(sc, topo, 1);
  sim.run();
  const nlohmann::ordered_json j = workload_json(sim);
  ASSERT_TRUE(j["transport"].contains("homa"));
  EXPECT_GT(j["transport"]["homa"]["gated"].get<std::uint64_t>(), 0u);
  EXPECT_GT(j["transport"]["homa"]["grants"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(j["transport"]["homa"]["fallbacks"], 0);
  // Every QP counted once: the section is the sum over the hosts' QPs.
  std::uint64_t gated = 0;
  for (const std::uint32_t h : sim.topology().workload_hosts) {
    std::vector<engine::QpStatus> qs;
    sim.engines()[h]->vnic().qp_status(&qs);
    for (const engine::QpStatus& q : qs) gated += q.homa_peer ? q.homa.gated : 0;
  }
  EXPECT_EQ(j["transport"]["homa"]["gated"].get<std::uint64_t>(), gated);
  // Plain RC runs have no such section.
  EXPECT_FALSE(workload_json(*small_run().sim)["transport"].contains("homa"));
}

TEST(WorkloadText, CountsThenTheTable) {
  const Ran r = small_run();
  const std::string t = workload_text(*r.sim);
  EXPECT_EQ(t.rfind("workload: ", 0), 0u);
  EXPECT_NE(t.find("\nlength (bytes)"), std::string::npos);
  EXPECT_NE(t.find(" all "), std::string::npos);
}

TEST(MessagesCsv, OneRowPerMeasuredMessage) {
  const Ran r = small_run();
  const std::string path = scratch_path("messages.csv");
  ASSERT_TRUE(write_messages_csv(*r.sim, path));
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "message,src,dst,length,arrival_ns,post_ns,done_ns,best_ns,slowdown,ok,burst");
  std::uint64_t rows = 0;
  while (std::getline(in, line)) {
    ++rows;
    EXPECT_EQ(line.substr(line.size() - 3), ",1,");  // ok, in no burst
  }
  EXPECT_EQ(rows, r.sim->workload()->stats().measured);
}

// 2 of the 4 hosts send 20,000 bytes each to a third every 100 us beside
// the Poisson messages: every measured burst is done, no sooner than the
// receiver's link alone allows, and its messages stay out of the Poisson
// slowdowns; the CSV names their burst.
TEST(WorkloadJson, IncastBurstsAreReportedApart) {
  Scenario sc = star_workload(4, workload_file("w3.csv"), 0.3, 1, 20);
  sc.workload.max_length_bytes = 30000;
  sc.workload.incast_senders = 2;
  sc.workload.incast_bytes = 20000;
  sc.workload.incast_every_ns = 100 * kNsPerUs;
  sc.workload.samples = true;
  Ran r;
  ASSERT_EQ(resolve(sc, r.topo), "");
  r.sim = std::make_unique<Simulator>(sc, r.topo, 1);
  r.sim->run();
  const nlohmann::ordered_json j = workload_json(*r.sim);
  ASSERT_TRUE(j.contains("incast"));
  const nlohmann::ordered_json& in = j["incast"];
  EXPECT_EQ(in["senders"], 2);
  EXPECT_EQ(in["bytes"], 20000);
  EXPECT_EQ(in["measured"], 10);  // bursts at 0, 100, ... 900 us of the 1 ms window
  EXPECT_EQ(in["done"], 10);
  EXPECT_GE(in["slowdown"]["min"].get<double>(), 1.0);
  EXPECT_GE(in["completion_us"]["max"].get<double>(), in["completion_us"]["p50"].get<double>());
  std::uint64_t burst_msgs = 0;
  for (const MessageRecord& m : r.sim->workload()->records()) {
    burst_msgs += m.measured && m.burst != MessageRecord::kNoBurst ? 1 : 0;
  }
  EXPECT_EQ(burst_msgs, 20u);
  EXPECT_EQ(j["slowdown"]["overall"]["count"].get<std::uint64_t>() + burst_msgs,
            j["counts"]["measured"].get<std::uint64_t>());
  EXPECT_NE(workload_text(*r.sim).find("incast: 10 bursts of 2 x 20000 bytes measured, 10 done"),
            std::string::npos);
  const std::string path = scratch_path("incast-messages.csv");
  ASSERT_TRUE(write_messages_csv(*r.sim, path));
  std::ifstream csv(path);
  std::string line;
  std::uint64_t named = 0;
  while (std::getline(csv, line)) named += line.back() != ',' && line.back() != 't' ? 1 : 0;
  EXPECT_EQ(named, burst_msgs);
}

}  // namespace
}  // namespace uroce::testbed
