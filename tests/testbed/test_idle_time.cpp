#include "testbed/idle_time.h"

#include <gtest/gtest.h>

#include "testbed/message_workload.h"
#include "testbed/simulator.h"
#include "workload_test_support.h"

namespace uroce::testbed {
namespace {

using testing::lengths_file;
using testing::line_workload;
using testing::star_workload;

TEST(MessageFrames, SendWithImmediateSegmentsAtTheMtu) {
  // Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 = 58, ImmDt 4 on the
  // last (or only) packet, the payload padded to 4 bytes.
  EXPECT_EQ(message_frames(MsgOp::kSendImm, 1, 4096), (std::vector<std::uint32_t>{66}));
  EXPECT_EQ(message_frames(MsgOp::kSendImm, 0, 4096), (std::vector<std::uint32_t>{62}));
  EXPECT_EQ(message_frames(MsgOp::kSendImm, 4096, 4096), (std::vector<std::uint32_t>{4158}));
  EXPECT_EQ(message_frames(MsgOp::kSendImm, 4097, 4096), (std::vector<std::uint32_t>{4154, 66}));
  EXPECT_EQ(message_frames(MsgOp::kSendImm, 3 * 1024 + 6, 1024),
            (std::vector<std::uint32_t>{1082, 1082, 1082, 70}));
}

TEST(MessageFrames, WriteWithImmediateCarriesTheRethFirst) {
  EXPECT_EQ(message_frames(MsgOp::kWriteImm, 1, 4096), (std::vector<std::uint32_t>{82}));
  EXPECT_EQ(message_frames(MsgOp::kWriteImm, 8192, 4096), (std::vector<std::uint32_t>{4170, 4158}));
}

TEST(IdleCompletion, OneFrameIsItsSerialisationPerHopPlusTheDelays) {
  // 66 bytes at 10 Gb/s: 52.8 ns, rounded up to 53 on each of two hops.
  const std::vector<PathLink> path{{10'000'000'000, 1000, 0}, {10'000'000'000, 1000, 0}};
  EXPECT_EQ(idle_completion_ns({66}, path), 2 * 53 + 2000);
}

TEST(IdleCompletion, FramesPipelineAndTheSlowestLinkSetsThePace) {
  // Two 1000-byte frames over 10 then 1 Gb/s: the second leaves the first
  // link at 1600 ns but waits for the slow link, free at 800 + 8000.
  const std::vector<PathLink> path{{10'000'000'000, 0, 0}, {1'000'000'000, 0, 0}};
  EXPECT_EQ(idle_completion_ns({1000, 1000}, path), 800 + 8000 + 8000);
  // Equal links back to back: the whole train on the first, the last
  // frame once more on the second.
  const std::vector<PathLink> equal{{10'000'000'000, 100, 0}, {10'000'000'000, 100, 0}};
  EXPECT_EQ(idle_completion_ns({1000, 1000, 1000}, equal), 3 * 800 + 100 + 800 + 100);
}

TEST(IdleCompletion, OverheadBytesCountOnTheWire) {
  const std::vector<PathLink> path{{10'000'000'000, 0, 20}};
  EXPECT_EQ(idle_completion_ns({980}, path), 800);
}

TEST(IdleTime, RemembersEachLength) {
  IdleTime t(MsgOp::kSendImm, 4096, {{10'000'000'000, 1000, 0}, {10'000'000'000, 1000, 0}});
  EXPECT_EQ(t.best_ns(1), 2106);
  EXPECT_EQ(t.best_ns(1), 2106);
  EXPECT_EQ(t.best_ns(4096), 2 * 3327 + 2000);  // 4158 bytes: 3326.4 ns
}

// Runs `sc` and checks every measured message that had the network to
// itself (no other message in flight from its arrival to its end, nor an
// ACK still on the way) completed exactly at its best time; returns how
// many did.
std::size_t check_idle_messages(Scenario sc) {
  Topology topo;
  EXPECT_EQ(resolve(sc, topo), "");
  Simulator sim(sc, topo, 3);
  sim.run();
  EXPECT_EQ(sim.workload_setup(), 0);
  const std::vector<MessageRecord>& r = sim.workload()->records();
  std::size_t alone = 0;
  // Generous quiet time around a message for its ACK (a few us here).
  constexpr TimeNs kQuiet = 100 * kNsPerUs;
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (!r[i].measured || r[i].done_ns == MessageRecord::kNotDone) continue;
    const bool after_prev = i == 0 || (r[i - 1].done_ns != MessageRecord::kNotDone &&
                                       r[i - 1].done_ns + kQuiet < r[i].arrival_ns);
    const bool before_next = i + 1 == r.size() || r[i].done_ns + kQuiet < r[i + 1].arrival_ns;
    if (!after_prev || !before_next) continue;
    ++alone;
    EXPECT_TRUE(r[i].ok);
    EXPECT_EQ(r[i].done_ns - r[i].arrival_ns, r[i].best_ns)
        << "message " << i << " of " << r[i].length << " bytes";
  }
  return alone;
}

// The best times against the real engines on an idle network: messages far
// apart (a mean gap of 20 ms), one length per run, SEND and WRITE with
// immediate, 1 byte, one full 4 KiB packet, several packets and a
// mebibyte; exact to the ns.
TEST(IdleCompletion, MatchesIdleSimulationOfTheEnginesToTheNs) {
  for (const bool write : {false, true}) {
    for (const std::uint64_t len : {1ull, 4096ull, 3 * 4096ull + 5, 1ull << 20}) {
      // Total arrival rate 50/s: load = 50 x len x 8 / (2 hosts x 10 Gb/s).
      const double load = 50.0 * static_cast<double>(len) * 8 / 2e10;
      Scenario sc =
          star_workload(2, lengths_file("idle" + std::to_string(len), {len}), load, 400, 500);
      sc.workload.write = write;
      SCOPED_TRACE(std::to_string(len) + (write ? " write_imm" : " send"));
      EXPECT_GE(check_idle_messages(sc), 10u);
    }
  }
}

// The same over two switches with a faster core and per-frame overhead
// (preamble and gap), at path MTU 1024.
TEST(IdleCompletion, MatchesIdleSimulationOverTwoSwitches) {
  for (const std::uint64_t len : {1ull, 1024ull, 5 * 1024ull + 3, 1ull << 20}) {
    const double load = 50.0 * static_cast<double>(len) * 8 / 2e10;
    Scenario sc = line_workload(lengths_file("line" + std::to_string(len), {len}), load, 400, 500,
                                10, 40, 20);
    sc.workload.mtu = 1024;
    SCOPED_TRACE(std::to_string(len));
    EXPECT_GE(check_idle_messages(sc), 10u);
  }
}

}  // namespace
}  // namespace uroce::testbed
