#include "datapath/transport/dct_qp.h"

#include <gtest/gtest.h>

#include "tests/datapath/transport/dc_sim.h"

namespace uroce::transport::dctest {
namespace {

DcTargetLimits small_pool(std::uint32_t contexts) {
  DcTargetLimits l;
  l.contexts = contexts;
  l.records_log2 = 10;
  l.stale_ns = 10 * kNsPerSec;
  return l;
}

TEST(DctQp_Modify, RtrOnlyAndContextsGoWhenItLeavesRtr) {
  DcSim s(clean_link());
  DciQp& dci = s.add_dci(0x10);
  DctQp& dct = s.add_dct(0x20);
  EXPECT_EQ(dct.post_send(SendWr{}), EINVAL);
  EXPECT_EQ(dct.post_recv(RecvWr{}), EINVAL);
  ASSERT_EQ(dci.post_send(s.wr(1, WrOpcode::kRdmaWrite, 0x20, 0, 64)), 0);
  ASSERT_TRUE(s.run([&] { return s.scq_a.wc.size() == 1; }, kNsPerMs));
  EXPECT_EQ(dct.contexts(), 1u);
  QpAttrValues a;
  a.qp_state = QpState::kErr;
  ASSERT_EQ(dct.modify(qp_attr::kState, a), 0);
  EXPECT_EQ(dct.contexts(), 0u);
  EXPECT_EQ(s.pool->table().size(), 0u);
  // In ERR a request is dropped and counted.
  ASSERT_EQ(dci.post_send(s.wr(2, WrOpcode::kRdmaWrite, 0x20, 0, 64)), 0);
  s.run([] { return false; }, s.clock.now() + 100 * kNsPerUs);
  EXPECT_GE(dct.counters().drop_state, 1u);
}

// More initiator streams than contexts: the ones that find the pool full
// are told BUSY (an RNR wait), the others finish and disconnect when idle,
// and every WR completes.
TEST(DctQp_Pressure, BusyUntilContextsFreeThenEveryWrCompletes) {
  DcSim s(clean_link(), 1 << 20, small_pool(2));
  DciQp& dci = s.add_dci(0x10, 3);
  s.add_dct(0x20);
  std::uint64_t id = 1;
  for (std::uint16_t st = 0; st < 8; ++st) {
    for (int k = 0; k < 3; ++k) {
      ASSERT_EQ(dci.post_send(s.wr(id++, WrOpcode::kRdmaWrite, 0x20, 0, 512, st * 512, st)), 0);
    }
  }
  ASSERT_TRUE(s.run([&] { return s.scq_a.wc.size() == 24; }, 2 * kNsPerSec));
  for (const Cqe& c : s.scq_a.wc) EXPECT_EQ(status(c), WcStatus::kSuccess) << c.wr_id;
  EXPECT_GT(s.pool->table().counters().busy, 0u);
  EXPECT_LE(s.pool->table().size(), 2u);
  EXPECT_EQ(dci.rc_counters().rnr_retry_exceeded, 0u);
}

// A full pool answers BUSY once per burst: a 4-packet WRITE that finds no
// context gets one answer (to its opening packet) and its later packets
// are dropped and counted, so the initiator waits one RNR timer per burst.
TEST(DctQp_Pressure, BusyAnswersOnlyTheOpeningPacket) {
  DcSim s(clean_link(), 1 << 20, small_pool(1));
  DciQp& dci = s.add_dci(0x10, 1);
  DctQp& dct = s.add_dct(0x20);
  // Stream 0 holds the one context (its WRITE ran; the context is not
  // clean until a later request shows the ACK arrived).
  ASSERT_EQ(dci.post_send(s.wr(1, WrOpcode::kRdmaWrite, 0x20, 0, 64, 0, 0)), 0);
  ASSERT_TRUE(s.run([&] { return s.scq_a.wc.size() == 1; }, kNsPerMs));
  ASSERT_EQ(dct.contexts(), 1u);
  // Stream 1: four packets of 1 KiB, all SYN, none can open a context.
  ASSERT_EQ(dci.post_send(s.wr(2, WrOpcode::kRdmaWrite, 0x20, 0x1000, 4096, 0x1000, 1)), 0);
  // 50 us: a few RNR waits, each ended by a resend of the whole burst.
  s.run([] { return false; }, s.clock.now() + 50 * kNsPerUs);
  const std::uint64_t bursts = dct.counters().tx_busy;
  EXPECT_GE(bursts, 1u);
  EXPECT_EQ(dct.counters().drop_busy_later, 3 * bursts);
  EXPECT_EQ(dci.rc_counters().rx_rnr_naks, bursts);
  EXPECT_EQ(dci.dc_lane(1).stream.counters().busy, bursts);
  EXPECT_EQ(s.scq_a.wc.size(), 1u);
}

// A request that fails (class C NAK: a WRITE outside the target's MR)
// ends its connection and frees its context at once: with one context,
// another initiator is served right away, not told BUSY until the failed
// context goes stale.
TEST(DctQp_Errors, FailedContextFreesItsSlotAtOnce) {
  DcSim s(clean_link(), 1 << 20, small_pool(1));
  DciQp& bad = s.add_dci(0x10);
  DciQp& good = s.add_dci(0x11);
  DctQp& dct = s.add_dct(0x20);
  ASSERT_EQ(bad.post_send(s.wr(1, WrOpcode::kRdmaWrite, 0x20, 0, 64, 2 << 20)), 0);
  ASSERT_TRUE(s.run([&] { return s.scq_a.wc.size() == 1; }, kNsPerMs));
  EXPECT_EQ(status(s.scq_a.wc[0]), WcStatus::kRemAccessErr);
  EXPECT_EQ(bad.state(), QpState::kErr);
  EXPECT_EQ(dct.state(), QpState::kRtr);
  EXPECT_EQ(dct.contexts(), 0u);
  EXPECT_EQ(s.pool->table().size(), 0u);
  EXPECT_EQ(s.pool->table().counters().retired_error, 1u);
  EXPECT_EQ(dct.rc_counters().tx_nak_remote_access, 1u);
  ASSERT_EQ(good.post_send(s.wr(2, WrOpcode::kRdmaWrite, 0x20, 0, 64, 0x100)), 0);
  ASSERT_TRUE(s.run([&] { return s.scq_a.wc.size() == 2; }, s.clock.now() + kNsPerMs));
  EXPECT_EQ(s.scq_a.wc[1].wr_id, 2u);
  EXPECT_EQ(status(s.scq_a.wc[1]), WcStatus::kSuccess);
  EXPECT_EQ(dct.counters().tx_busy, 0u);
}

// A SEND longer than its receive WR: that WR completes on the DCT's CQ
// with LOC_LEN_ERR (as an RC QP's would), the initiator gets
// REM_INV_REQ_ERR, and the next SEND takes the next WR.
TEST(DctQp_Errors, FailedSendCompletesItsReceiveWithTheError) {
  DcSim s(clean_link(), 1 << 20, small_pool(1));
  DciQp& bad = s.add_dci(0x10);
  DciQp& good = s.add_dci(0x11);
  s.add_dct(0x20);
  s.post_recv(1, 0x1000, 32);
  s.post_recv(2, 0x2000, 256);
  ASSERT_EQ(bad.post_send(s.wr(10, WrOpcode::kSend, 0x20, 0, 64)), 0);
  ASSERT_TRUE(s.run([&] { return s.scq_a.wc.size() == 1; }, kNsPerMs));
  EXPECT_EQ(status(s.scq_a.wc[0]), WcStatus::kRemInvReqErr);
  ASSERT_EQ(s.rcq_b.wc.size(), 1u);
  EXPECT_EQ(s.rcq_b.wc[0].wr_id, 1u);
  EXPECT_EQ(status(s.rcq_b.wc[0]), WcStatus::kLocLenErr);
  EXPECT_EQ(s.rcq_b.wc[0].qp_num, 0x20u);
  ASSERT_EQ(good.post_send(s.wr(11, WrOpcode::kSend, 0x20, 0, 64)), 0);
  ASSERT_TRUE(s.run([&] { return s.scq_a.wc.size() == 2; }, s.clock.now() + kNsPerMs));
  EXPECT_EQ(status(s.scq_a.wc[1]), WcStatus::kSuccess);
  ASSERT_EQ(s.rcq_b.wc.size(), 2u);
  EXPECT_EQ(s.rcq_b.wc[1].wr_id, 2u);
  EXPECT_EQ(status(s.rcq_b.wc[1]), WcStatus::kSuccess);
  EXPECT_EQ(s.rcq_b.wc[1].byte_len, 64u);
}

// The NAK lost: the initiator's retry finds the connection retired
// (GONE at the NAK'd PSN: nothing of the WR ran), runs the WR again in a
// new connection, and that one fails the same way.
TEST(DctQp_Errors, LostNakRetriedWrFailsAgainInANewConnection) {
  DcSim s(clean_link(), 1 << 20, small_pool(1));
  DciQp& dci = s.add_dci(0x10);
  DctQp& dct = s.add_dct(0x20);
  int dropped = 0;
  s.drop_rx = [&](unsigned ep, const wire::ParsedPacket&) { return ep == 0 && dropped++ == 0; };
  ASSERT_EQ(dci.post_send(s.wr(1, WrOpcode::kRdmaWrite, 0x20, 0, 64, 2 << 20)), 0);
  ASSERT_TRUE(s.run([&] { return s.scq_a.wc.size() == 1; }, 100 * kNsPerMs));
  EXPECT_EQ(status(s.scq_a.wc[0]), WcStatus::kRemAccessErr);
  EXPECT_EQ(s.pool->table().counters().gone, 1u);
  EXPECT_EQ(dct.counters().tx_gone, 1u);
  EXPECT_EQ(s.pool->table().counters().retired_error, 2u);
  EXPECT_EQ(dci.dc_lane(0).stream.counters().gone, 1u);
  EXPECT_EQ(dci.dc_lane(0).stream.counters().connects, 2u);
  EXPECT_EQ(s.pool->table().size(), 0u);
}

}  // namespace
}  // namespace uroce::transport::dctest
