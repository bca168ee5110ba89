#include "datapath/transport/dci_qp.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "tests/datapath/transport/dc_sim.h"

namespace uroce::transport::dctest {
namespace {

void fill(std::vector<std::uint8_t>& m, std::uint64_t off, std::size_t n, std::uint8_t seed) {
  for (std::size_t i = 0; i < n; ++i) m[off + i] = static_cast<std::uint8_t>(seed + i * 31);
}

TEST(DciQp_Send, FirstMessageOpensTheContextWithoutARoundTrip) {
  DcSim s(clean_link());
  DciQp& dci = s.add_dci(0x10);
  s.add_dct(0x20);
  s.post_recv(1, 0x1000, 256);
  fill(s.mem_a, 0, 64, 5);
  ASSERT_EQ(dci.post_send(s.wr(7, WrOpcode::kSend, 0x20, 0, 64)), 0);
  ASSERT_TRUE(s.run([&] { return !s.scq_a.wc.empty(); }, 1 * kNsPerMs));
  // One request and one ACK: the data went with the connection's opening.
  EXPECT_EQ(s.rx[1], 1u);
  EXPECT_EQ(s.rx[0], 1u);
  ASSERT_EQ(s.rcq_b.wc.size(), 1u);
  EXPECT_EQ(s.rcq_b.wc[0].status, 0u);
  EXPECT_EQ(s.rcq_b.wc[0].byte_len, 64u);
  EXPECT_EQ(s.rcq_b.wc[0].qp_num, 0x20u);
  EXPECT_EQ(std::memcmp(s.mem_a.data(), s.mem_b.data() + 0x1000, 64), 0);
  ASSERT_EQ(s.scq_a.wc.size(), 1u);
  EXPECT_EQ(s.scq_a.wc[0].wr_id, 7u);
  EXPECT_EQ(s.scq_a.wc[0].status, 0u);
  EXPECT_EQ(s.scq_a.wc[0].qp_num, 0x10u);
  EXPECT_EQ(s.pool->table().size(), 1u);
  EXPECT_FALSE(dci.dc_lane(0).stream.syn());
}

TEST(DciQp_Ops, WriteReadAndAtomicsBytesChecked) {
  DcSim s(clean_link());
  DciQp& dci = s.add_dci(0x10);
  s.add_dct(0x20);
  fill(s.mem_a, 0, 4096, 9);
  ASSERT_EQ(dci.post_send(s.wr(1, WrOpcode::kRdmaWrite, 0x20, 0, 4096, 0x8000)), 0);
  fill(s.mem_b, 0x20000, 3000, 77);
  ASSERT_EQ(dci.post_send(s.wr(2, WrOpcode::kRdmaRead, 0x20, 0x30000, 3000, 0x20000)), 0);
  std::uint64_t v = 40;
  std::memcpy(s.mem_b.data() + 0x100, &v, 8);
  SendWr fa = s.wr(3, WrOpcode::kFetchAdd, 0x20, 0x40000, 8, 0x100);
  fa.compare_add = 2;
  ASSERT_EQ(dci.post_send(fa), 0);
  SendWr cs = s.wr(4, WrOpcode::kCmpSwap, 0x20, 0x40008, 8, 0x100);
  cs.compare_add = 42;
  cs.swap = 99;
  ASSERT_EQ(dci.post_send(cs), 0);
  ASSERT_TRUE(s.run([&] { return s.scq_a.wc.size() == 4; }, 10 * kNsPerMs));
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(s.scq_a.wc[i].wr_id, i + 1);
    EXPECT_EQ(s.scq_a.wc[i].status, 0u) << i;
  }
  EXPECT_EQ(std::memcmp(s.mem_a.data(), s.mem_b.data() + 0x8000, 4096), 0);
  EXPECT_EQ(std::memcmp(s.mem_a.data() + 0x30000, s.mem_b.data() + 0x20000, 3000), 0);
  std::uint64_t got = 0;
  std::memcpy(&got, s.mem_a.data() + 0x40000, 8);
  EXPECT_EQ(got, 40u);
  std::memcpy(&got, s.mem_a.data() + 0x40008, 8);
  EXPECT_EQ(got, 42u);
  std::memcpy(&got, s.mem_b.data() + 0x100, 8);
  EXPECT_EQ(got, 99u);
}

// One stream, three targets in turn: each switch waits for the stream to
// drain, disconnects from the old target (whose context goes) and opens
// the next; completions stay in post order.
TEST(DciQp_Switch, OneStreamRoundRobinOverTargets) {
  DcSim s(clean_link());
  DciQp& dci = s.add_dci(0x10);
  for (std::uint32_t d : {0x20u, 0x21u, 0x22u}) s.add_dct(d);
  for (std::uint32_t i = 0; i < 30; ++i) {
    fill(s.mem_a, i * 64, 64, static_cast<std::uint8_t>(i));
    ASSERT_EQ(dci.post_send(
                  s.wr(i + 1, WrOpcode::kRdmaWrite, 0x20 + i % 3, i * 64, 64, 0x10000 + i * 64)),
              0);
  }
  ASSERT_TRUE(s.run([&] { return s.scq_a.wc.size() == 30; }, 50 * kNsPerMs));
  for (std::uint32_t i = 0; i < 30; ++i) {
    EXPECT_EQ(s.scq_a.wc[i].wr_id, i + 1);
    EXPECT_EQ(s.scq_a.wc[i].status, 0u);
  }
  EXPECT_EQ(std::memcmp(s.mem_a.data(), s.mem_b.data() + 0x10000, 30 * 64), 0);
  const DcStreamCounters& c = dci.dc_lane(0).stream.counters();
  EXPECT_EQ(c.connects, 30u);
  EXPECT_GE(c.wait_switch, 1u);
  // Every earlier connection was disconnected and retired: one context left.
  EXPECT_EQ(s.pool->table().counters().retired_disconnect, 29u);
  EXPECT_EQ(s.pool->table().size(), 1u);
}

// Four streams to four targets at once: per-stream order, all complete.
TEST(DciQp_Streams, IndependentStreamsInParallel) {
  DcSim s(clean_link());
  DciQp& dci = s.add_dci(0x10, 2);
  ASSERT_EQ(dci.streams(), 4u);
  for (std::uint32_t d = 0; d < 4; ++d) s.add_dct(0x20 + d);
  std::uint64_t id = 1;
  for (std::uint32_t k = 0; k < 10; ++k) {
    for (std::uint16_t st = 0; st < 4; ++st) {
      SendWr w = s.wr(id++, WrOpcode::kRdmaWrite, 0x20 + st, 0, 2048, 0x4000 * st, st);
      ASSERT_EQ(dci.post_send(w), 0);
    }
  }
  SendWr bad = s.wr(999, WrOpcode::kRdmaWrite, 0x20, 0, 8, 0, 4);
  EXPECT_EQ(dci.post_send(bad), EINVAL);
  ASSERT_TRUE(s.run([&] { return s.scq_a.wc.size() == 40; }, 50 * kNsPerMs));
  std::uint64_t last[4] = {0, 0, 0, 0};
  for (const Cqe& c : s.scq_a.wc) {
    ASSERT_EQ(c.status, 0u);
    const std::uint64_t st = (c.wr_id - 1) % 4;
    EXPECT_GT(c.wr_id, last[st]);
    last[st] = c.wr_id;
  }
  // One connection per stream: no switch.
  for (std::uint32_t st = 0; st < 4; ++st) {
    EXPECT_EQ(dci.dc_lane(st).stream.counters().connects, 1u);
  }
  EXPECT_EQ(s.pool->table().size(), 4u);
}

TEST(DciQp_Errors, KeyViolationFailsTheWrAndTellsTheTarget) {
  DcSim s(clean_link());
  DciQp& dci = s.add_dci(0x10);
  DctQp& dct = s.add_dct(0x20);
  ASSERT_EQ(dci.post_send(s.wr(1, WrOpcode::kRdmaWrite, 0x20, 0, 64, 0, 0, DcSim::kKey ^ 1)), 0);
  ASSERT_EQ(dci.post_send(s.wr(2, WrOpcode::kRdmaWrite, 0x20, 0, 64)), 0);
  ASSERT_TRUE(s.run([&] { return s.scq_a.wc.size() == 2; }, 10 * kNsPerMs));
  EXPECT_EQ(status(s.scq_a.wc[0]), WcStatus::kRemAccessErr);
  // No errored streams: the DCI is in ERR and the rest is flushed.
  EXPECT_EQ(status(s.scq_a.wc[1]), WcStatus::kWrFlushErr);
  EXPECT_EQ(dci.state(), QpState::kErr);
  EXPECT_EQ(dct.counters().key_violations, 1u);
  EXPECT_EQ(dci.dc_lane(0).stream.counters().key_violations, 1u);
  ASSERT_EQ(s.events_b.types.size(), 1u);
  EXPECT_EQ(s.events_b.types[0], AsyncEventType::kQpAccessErr);
  EXPECT_EQ(s.pool->table().size(), 0u);
}

// With errored streams, a failing WR takes only its stream's later WRs;
// the stream starts again and the other streams never stop.
TEST(DciQp_Errors, ErroredStreamRecoversOthersGoOn) {
  DcSim s(clean_link());
  DciQp& dci = s.add_dci(0x10, 1, 1);
  s.add_dct(0x20);
  s.add_dct(0x21);
  ASSERT_EQ(dci.post_send(s.wr(1, WrOpcode::kRdmaWrite, 0x20, 0, 64, 0, 0, 7)), 0);
  ASSERT_EQ(dci.post_send(s.wr(2, WrOpcode::kRdmaWrite, 0x20, 0, 64, 0, 0)), 0);
  ASSERT_EQ(dci.post_send(s.wr(3, WrOpcode::kRdmaWrite, 0x21, 0, 64, 64, 1)), 0);
  ASSERT_TRUE(s.run([&] { return s.scq_a.wc.size() == 3; }, 10 * kNsPerMs));
  std::map<std::uint64_t, WcStatus> st;
  for (const Cqe& c : s.scq_a.wc) st[c.wr_id] = status(c);
  EXPECT_EQ(st[1], WcStatus::kRemAccessErr);
  EXPECT_EQ(st[2], WcStatus::kWrFlushErr);
  EXPECT_EQ(st[3], WcStatus::kSuccess);
  EXPECT_EQ(dci.state(), QpState::kRts);
  EXPECT_EQ(dci.counters().stream_recoveries, 1u);
  // The recovered stream goes on from its next PSN (WR 1 took PSN 0; WR 2,
  // for another key, waited to switch): RESET would have taken it back to
  // 0, where the failed connection's PSNs were.
  EXPECT_EQ(dci.lane(0).next_psn().value(), 1u);
  // Stream 0 works again.
  ASSERT_EQ(dci.post_send(s.wr(4, WrOpcode::kRdmaWrite, 0x20, 0, 64, 128, 0)), 0);
  ASSERT_TRUE(s.run([&] { return s.scq_a.wc.size() == 4; }, 10 * kNsPerMs));
  EXPECT_EQ(s.scq_a.wc[3].wr_id, 4u);
  EXPECT_EQ(status(s.scq_a.wc[3]), WcStatus::kSuccess);
}

// A response names its connection (DCAETH): one about another connection
// acknowledges nothing of the stream's current one, even at its PSNs
// (docs/dc.md, "Wire").
TEST(DciQp_Errors, AnswerOfAnotherConnectionIgnored) {
  DcSim s(clean_link());
  DciQp& dci = s.add_dci(0x10);
  s.add_dct(0x20);
  ASSERT_EQ(dci.post_send(s.wr(1, WrOpcode::kRdmaWrite, 0x20, 0, 64)), 0);
  auto io = rc_io(s.tx_a, s.scq_a, s.rcq_a, s.timer_a);
  dci.pump_tx(s.clock.now(), io, 64);
  const std::uint32_t conn = dci.dc_lane(0).stream.conn();
  wire::PacketSpec sp;
  sp.eth_src = kMacB;
  sp.eth_dst = kMacA;
  sp.ip_src = kIpB;
  sp.ip_dst = kIpA;
  sp.opcode = wire::op::kDcAck;
  sp.dest_qp = 0x10;
  sp.psn = 0;
  sp.dc_aeth = wire::DcAethHdr::make(0, wire::DcStatus::kOk, conn + 1);
  sp.aeth = wire::AethHdr::make(wire::aeth_ack_syndrome(), 1);
  const auto other = rctest::build(sp);
  dci.on_packet(other->p, s.clock.now(), io);
  EXPECT_TRUE(s.scq_a.wc.empty());
  EXPECT_EQ(dci.counters().other_conn, 1u);
  EXPECT_TRUE(dci.dc_lane(0).stream.syn());
  // The target's own answer completes the WR.
  ASSERT_TRUE(s.run([&] { return s.scq_a.wc.size() == 1; }, kNsPerMs));
  EXPECT_EQ(status(s.scq_a.wc[0]), WcStatus::kSuccess);
}

// A stream with nothing to do disconnects after idle_disconnect_ns: its
// target retires the context (confirmed by that DISCONNECT).
TEST(DciQp_Idle, IdleStreamDisconnects) {
  DcSim s(clean_link());
  DciQp& dci = s.add_dci(0x10);
  s.add_dct(0x20);
  ASSERT_EQ(dci.post_send(s.wr(1, WrOpcode::kRdmaWrite, 0x20, 0, 64)), 0);
  ASSERT_TRUE(s.run([&] { return s.scq_a.wc.size() == 1; }, 1 * kNsPerMs));
  EXPECT_EQ(s.pool->table().size(), 1u);
  s.run([] { return false; }, s.clock.now() + 200 * kNsPerUs);
  EXPECT_EQ(s.pool->table().size(), 0u);
  EXPECT_EQ(s.pool->table().counters().retired_disconnect, 1u);
  EXPECT_FALSE(dci.dc_lane(0).stream.bound());
  // The next WR opens a new connection at once.
  ASSERT_EQ(dci.post_send(s.wr(2, WrOpcode::kRdmaWrite, 0x20, 0, 64)), 0);
  ASSERT_TRUE(s.run([&] { return s.scq_a.wc.size() == 2; }, s.clock.now() + kNsPerMs));
  EXPECT_EQ(status(s.scq_a.wc[1]), WcStatus::kSuccess);
}

}  // namespace
}  // namespace uroce::transport::dctest
