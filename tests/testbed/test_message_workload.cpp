#include "testbed/message_workload.h"

#include <gtest/gtest.h>

#include <map>

#include "testbed/engine_host.h"
#include "testbed/simulator.h"
#include "workload_test_support.h"

namespace uroce::testbed {
namespace {

using testing::lengths_file;
using testing::star_workload;
using testing::workload_file;

struct Ran {
  Topology topo;
  std::unique_ptr<Simulator> sim;
  const MessageWorkload& w() const { return *sim->workload(); }
};

Ran run(const Scenario& sc, std::uint64_t seed = 1) {
  Ran r;
  EXPECT_EQ(resolve(sc, r.topo), "");
  r.sim = std::make_unique<Simulator>(sc, r.topo, seed);
  r.sim->run();
  EXPECT_EQ(r.sim->workload_setup(), 0);
  return r;
}

// W3 (capped at 64 KiB to stay quick) among 4 hosts at half load: a few
// hundred measured messages, every one received whole and right, none
// faster than alone on the idle network, and the run ends when the last
// measured message is in.
TEST(MessageWorkload_Run, EveryMessageArrivesWholeAndNoFasterThanIdle) {
  Scenario sc = star_workload(4, workload_file("w3.csv"), 0.5, 0.3, 20);
  sc.workload.max_length_bytes = 65536;
  const Ran r = run(sc);
  const MessageWorkloadStats& s = r.w().stats();
  EXPECT_GE(s.measured, 200u);
  EXPECT_EQ(s.measured_done, s.measured);
  EXPECT_EQ(s.length_mismatch, 0u);
  EXPECT_EQ(s.imm_mismatch, 0u);
  EXPECT_EQ(s.payload_mismatch, 0u);
  EXPECT_EQ(s.send_errors + s.recv_errors + s.repost_failed, 0u);
  EXPECT_EQ(r.sim->stop_reason(), StopReason::kWorkloadDone);
  std::uint64_t done = 0;
  for (const MessageRecord& m : r.w().records()) {
    if (m.done_ns == MessageRecord::kNotDone) continue;
    ++done;
    EXPECT_TRUE(m.ok);
    EXPECT_GE(m.post_ns, m.arrival_ns);
    EXPECT_GE(m.done_ns - m.arrival_ns, m.best_ns) << m.length << " bytes";
    EXPECT_LE(m.length, 65536u);
  }
  EXPECT_EQ(done, s.received);
  EXPECT_GT(s.posted, s.measured);
}

TEST(MessageWorkload_Run, WriteWithImmediateCompletesAtTheReceiverToo) {
  Scenario sc = star_workload(3, workload_file("w3.csv"), 0.5, 0.2, 20);
  sc.workload.max_length_bytes = 20000;
  sc.workload.write = true;
  const Ran r = run(sc);
  const MessageWorkloadStats& s = r.w().stats();
  EXPECT_GE(s.measured, 50u);
  EXPECT_EQ(s.measured_done, s.measured);
  EXPECT_EQ(s.length_mismatch + s.imm_mismatch + s.payload_mismatch, 0u);
}

// One QP per pair and long messages: arrivals find their pair's QP busy,
// wait in its FIFO and go in arrival order.
TEST(MessageWorkload_Pool, ABusyPairQueuesItsMessagesInArrivalOrder) {
  Scenario sc = star_workload(2, lengths_file("pool", {100, 200000}), 0.7, 2, 50);
  sc.workload.qps_per_pair = 1;
  const Ran r = run(sc);
  const MessageWorkloadStats& s = r.w().stats();
  EXPECT_GT(s.waited_for_qp, 0u);
  EXPECT_GE(s.max_pair_queue, 2u);
  EXPECT_EQ(s.measured_done, s.measured);
  std::map<std::uint32_t, TimeNs> last_done;  // per pair
  for (const MessageRecord& m : r.w().records()) {
    if (m.done_ns == MessageRecord::kNotDone) continue;
    TimeNs& prev = last_done[m.src * 2u + m.dst];
    EXPECT_GE(m.done_ns, prev);
    prev = m.done_ns;
  }
}

// With QPs to spare a short message never waits behind its pair's long
// one: it is posted on arrival.
TEST(MessageWorkload_Pool, AFreeQpTakesTheMessageAtOnce) {
  Scenario sc = star_workload(2, lengths_file("free", {100, 200000}), 0.3, 2, 50);
  sc.workload.qps_per_pair = 32;
  const Ran r = run(sc);
  EXPECT_EQ(r.w().stats().waited_for_qp, 0u);
  for (const MessageRecord& m : r.w().records()) EXPECT_EQ(m.post_ns, m.arrival_ns);
}

TEST(MessageWorkload_Run, SameSeedSameMessagesOtherSeedOthers) {
  Scenario sc = star_workload(3, workload_file("w4.csv"), 0.5, 0.5, 30);
  sc.workload.max_length_bytes = 100000;
  const Ran a = run(sc, 5);
  const Ran b = run(sc, 5);
  const Ran c = run(sc, 6);
  ASSERT_EQ(a.w().records().size(), b.w().records().size());
  for (std::size_t i = 0; i < a.w().records().size(); ++i) {
    const MessageRecord& x = a.w().records()[i];
    const MessageRecord& y = b.w().records()[i];
    EXPECT_EQ(x.arrival_ns, y.arrival_ns);
    EXPECT_EQ(x.done_ns, y.done_ns);
    EXPECT_EQ(x.length, y.length);
  }
  EXPECT_NE(a.w().records().front().arrival_ns, c.w().records().front().arrival_ns);
}

// Only arrivals inside [warmup, warmup + measure) are measured.
TEST(MessageWorkload_Run, WarmupArrivalsAreNotMeasured) {
  Scenario sc = star_workload(3, workload_file("w3.csv"), 0.4, 0.1, 20);
  sc.workload.max_length_bytes = 10000;
  sc.workload.warmup_ns = 100 * kNsPerUs;
  const Ran r = run(sc);
  std::uint64_t measured = 0;
  for (const MessageRecord& m : r.w().records()) {
    const bool in = m.arrival_ns >= 100 * kNsPerUs && m.arrival_ns < 200 * kNsPerUs;
    EXPECT_EQ(m.measured, in);
    measured += m.measured ? 1 : 0;
  }
  EXPECT_EQ(measured, r.w().stats().measured);
  EXPECT_GT(measured, 0u);
}

// The Homa-like scheduler in every engine (host key homa): messages longer
// than the unscheduled bytes wait for grants, and still every message
// arrives whole, none faster than plain RC alone on the idle network.
TEST(MessageWorkload_Homa, GrantedMessagesArriveWholeAndNoFasterThanIdle) {
  Scenario sc = star_workload(4, workload_file("w4.csv"), 0.6, 0.5, 40);
  sc.workload.max_length_bytes = 300000;
  sc.pfc.enable = 0xff;
  for (HostSpec& h : sc.hosts) {
    h.engine_homa.enabled = true;
    h.engine_homa.priorities = 4;
    h.engine_homa.unsched_bytes = 20000;
    h.engine_homa.rtt_bytes = 20000;
  }
  sc.switches[0].buffer.headroom_bytes = 20'000;
  const Ran r = run(sc);
  const MessageWorkloadStats& s = r.w().stats();
  EXPECT_GE(s.measured, 50u);
  EXPECT_EQ(s.measured_done, s.measured);
  EXPECT_EQ(s.length_mismatch + s.imm_mismatch + s.payload_mismatch, 0u);
  EXPECT_EQ(s.send_errors + s.recv_errors, 0u);
  std::uint64_t long_done = 0;
  for (const MessageRecord& m : r.w().records()) {
    if (m.done_ns == MessageRecord::kNotDone) continue;
    EXPECT_TRUE(m.ok);
    EXPECT_GE(m.done_ns - m.arrival_ns, m.best_ns);
    long_done += m.length > 20000 ? 1 : 0;
  }
  EXPECT_GT(long_done, 10u);
  std::uint64_t grants = 0;
  std::uint64_t peers = 0;
  for (const auto& e : r.sim->engines()) {
    grants += e->vnic().policy<policy::Homa>().counters().homa_tx_grants;
    peers += e->vnic().policy<policy::Homa>().counters().homa_peers;
  }
  EXPECT_GT(grants, 0u);
  // Every QP of the workload found its peer's scheduler.
  EXPECT_EQ(peers, 4u * MessageWorkload::qps_per_host(4, sc.workload.qps_per_pair));
}

TEST(MessageWorkload, QpsPerHostCountsBothDirections) {
  EXPECT_EQ(MessageWorkload::qps_per_host(16, 4), 120u);
  EXPECT_EQ(MessageWorkload::qps_per_host(2, 1), 2u);
}

}  // namespace
}  // namespace uroce::testbed
