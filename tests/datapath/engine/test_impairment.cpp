#include "datapath/engine/impairment.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "datapath/wire/builder.h"
#include "tests/datapath/engine/vnic_test_support.h"

namespace uroce::engine::test {
namespace {

std::vector<std::uint8_t> roce_frame() {
  wire::PacketSpec sp;
  sp.eth_src = kMacB;
  sp.eth_dst = kMacA;
  sp.ip_src = kIpB;
  sp.ip_dst = kIpA;
  sp.opcode = wire::op::kRcAck;
  sp.aeth = wire::AethHdr::make(wire::aeth_ack_syndrome(), 0);
  sp.dest_qp = 0x11;
  std::vector<std::uint8_t> f(wire::roce_frame_size(sp));
  EXPECT_GT(wire::build_roce(sp, f), 0);
  return f;
}

TEST(IsRoceV2Frame, OnlyIpv4UdpToPort4791) {
  std::vector<std::uint8_t> f = roce_frame();
  EXPECT_TRUE(is_roce_v2_frame(f));
  std::vector<std::uint8_t> other_port = f;
  other_port[14 + 20 + 3] ^= 1;
  EXPECT_FALSE(is_roce_v2_frame(other_port));
  std::vector<std::uint8_t> tcp = f;
  tcp[14 + 9] = 6;
  EXPECT_FALSE(is_roce_v2_frame(tcp));
  std::vector<std::uint8_t> arp = f;
  arp[12] = 0x08;
  arp[13] = 0x06;
  EXPECT_FALSE(is_roce_v2_frame(arp));
  std::vector<std::uint8_t> pfc = f;
  pfc[12] = 0x88;
  pfc[13] = 0x08;
  EXPECT_FALSE(is_roce_v2_frame(pfc));
  EXPECT_FALSE(is_roce_v2_frame(std::span<const std::uint8_t>(f).first(14 + 20 + 7)));
  std::vector<std::uint8_t> bad_ihl = f;
  bad_ihl[14] = 0x44;
  EXPECT_FALSE(is_roce_v2_frame(bad_ihl));
}

TEST(ImpairConfig, FirstBadFieldNamesTheRate) {
  ImpairConfig c;
  EXPECT_EQ(c.first_bad_field(), nullptr);
  EXPECT_FALSE(c.active());
  c.drop_tx_rate = 1.5;
  EXPECT_STREQ(c.first_bad_field(), "drop_tx_rate");
  c.drop_tx_rate = 1;
  c.drop_rx_rate = -0.1;
  EXPECT_STREQ(c.first_bad_field(), "drop_rx_rate");
  c.drop_rx_rate = std::nan("");
  EXPECT_STREQ(c.first_bad_field(), "drop_rx_rate");
  c.drop_rx_rate = 0;
  EXPECT_EQ(c.first_bad_field(), nullptr);
  EXPECT_TRUE(c.active());
}

TEST(DropRule, EveryNthExactly) {
  DropRule r(7, 0, 1);
  std::vector<int> dropped;
  for (int i = 1; i <= 30; ++i) {
    if (r.drop()) dropped.push_back(i);
  }
  EXPECT_EQ(dropped, (std::vector<int>{7, 14, 21, 28}));
}

TEST(DropRule, OffNeverDropsAndRateOneAlwaysDrops) {
  DropRule off;
  DropRule all(0, 1.0, 5);
  EXPECT_FALSE(off.active());
  for (int i = 0; i < 1000; ++i) {
    EXPECT_FALSE(off.drop());
    EXPECT_TRUE(all.drop());
  }
}

// A cap ends the drops after the Nth, whichever rule made them; the random
// stream still advances per frame, so the drops before the cap are the
// uncapped rule's.
TEST(DropRule, MaxEndsTheDropsAfterTheNth) {
  DropRule every(7, 0, 1, 3);
  std::vector<int> dropped;
  for (int i = 1; i <= 60; ++i) {
    if (every.drop()) dropped.push_back(i);
  }
  EXPECT_EQ(dropped, (std::vector<int>{7, 14, 21}));
  DropRule all(0, 1.0, 5, 2);
  EXPECT_TRUE(all.drop());
  EXPECT_TRUE(all.drop());
  EXPECT_FALSE(all.drop());
  DropRule capped(0, 0.1, 42, 5);
  DropRule free(0, 0.1, 42);
  std::vector<int> a, b;
  for (int i = 0; i < 2000; ++i) {
    if (capped.drop()) a.push_back(i);
    if (free.drop()) b.push_back(i);
  }
  ASSERT_GT(b.size(), 5u);
  EXPECT_EQ(a, std::vector<int>(b.begin(), b.begin() + 5));
}

TEST(Impairment, MaxCapsEachDirectionOnItsOwn) {
  ImpairConfig c;
  c.drop_tx_every = 1;
  c.drop_rx_every = 1;
  c.drop_tx_max = 1;
  c.drop_rx_max = 2;
  Impairment imp(c);
  const std::vector<std::uint8_t> f = roce_frame();
  EXPECT_TRUE(imp.drop_tx(f));
  EXPECT_FALSE(imp.drop_tx(f));
  EXPECT_TRUE(imp.drop_rx(f));
  EXPECT_TRUE(imp.drop_rx(f));
  EXPECT_FALSE(imp.drop_rx(f));
  EXPECT_FALSE(imp.drop_tx(f));
}

TEST(DropRule, RateIsDeterministicPerSeedAndNearTheFraction) {
  auto pattern = [](std::uint64_t seed) {
    DropRule r(0, 0.1, seed);
    std::vector<bool> v;
    for (int i = 0; i < 20000; ++i) v.push_back(r.drop());
    return v;
  };
  const std::vector<bool> a = pattern(42);
  EXPECT_EQ(a, pattern(42));
  EXPECT_NE(a, pattern(43));
  const auto n = std::count(a.begin(), a.end(), true);
  EXPECT_GT(n, 1800);  // 10% of 20000, +-10%
  EXPECT_LT(n, 2200);
}

TEST(Impairment, OnlyRoceFramesAreCountedAndDropped) {
  ImpairConfig c;
  c.drop_tx_every = 2;
  c.drop_rx_rate = 1.0;
  Impairment imp(c);
  std::vector<std::uint8_t> f = roce_frame();
  std::vector<std::uint8_t> arp = f;
  arp[12] = 0x08;
  arp[13] = 0x06;
  EXPECT_FALSE(imp.drop_tx(f));
  EXPECT_FALSE(imp.drop_tx(arp));  // not counted: the next RoCE frame is the 2nd
  EXPECT_TRUE(imp.drop_tx(f));
  EXPECT_TRUE(imp.drop_rx(f));
  EXPECT_FALSE(imp.drop_rx(arp));
}

// ---- In the engine ------------------------------------------------------------

shm::SendWqeFields send_wqe(std::uint64_t wr_id) {
  shm::SendWqeFields f;
  f.wr_id = wr_id;
  f.opcode = IBV_WR_SEND;
  f.send_flags = IBV_SEND_SIGNALED;
  return f;
}

struct ImpairedRcPair : TwoHosts, RcQpPair {
  void SetUp() override { open(a, b); }

  // Sends kN messages A -> B; returns the completions at A and B.
  void transfer(int n, std::vector<ib_uverbs_wc>* sc, std::vector<ib_uverbs_wc>* rc) {
    int posted = 0;
    int recvd = 0;
    for (int round = 0;
         round < 20000 && (static_cast<int>(sc->size()) < n || static_cast<int>(rc->size()) < n);
         ++round) {
      while (recvd < n && bqp->rqp.free_slots() > 0) {
        bqp->post_recv(1000 + recvd, {b.sge(static_cast<std::size_t>(recvd % 8) * 1024, 1024)});
        ++recvd;
      }
      while (posted < n && aqp->sqp.free_slots() > 0) {
        aqp->post_send(send_wqe(posted), {a.sge(0, 700)});
        ++posted;
      }
      run(5);
      for (auto& w : ascq->poll()) sc->push_back(w);
      for (auto& w : brcq->poll()) rc->push_back(w);
    }
  }
};

// Every 7th RoCEv2 frame A sends is lost: RC retransmits and every message
// still completes, in order, successfully.
TEST_F(ImpairedRcPair, DropTxEvery7_AllCompleteAndDropsCounted) {
  ImpairConfig c;
  c.drop_tx_every = 7;
  a.vnic.set_impairment(c);
  constexpr int kN = 60;
  std::vector<ib_uverbs_wc> sc, rc;
  transfer(kN, &sc, &rc);
  ASSERT_EQ(sc.size(), static_cast<std::size_t>(kN));
  ASSERT_EQ(rc.size(), static_cast<std::size_t>(kN));
  for (int i = 0; i < kN; ++i) {
    EXPECT_EQ(sc[i].wr_id, static_cast<std::uint64_t>(i));
    EXPECT_EQ(sc[i].status, 0u);
  }
  const VnicCounters& ca = a.vnic.counters();
  // Every 7th of the RoCE frames that reached the port (the rest went out).
  EXPECT_GT(ca.tx_impair_drop, 0u);
  EXPECT_EQ(ca.tx_impair_drop, (ca.tx_frames - ca.tx_arp + ca.tx_impair_drop) / 7);
  EXPECT_EQ(ca.rx_impair_drop, 0u);
  EXPECT_EQ(b.vnic.counters().tx_impair_drop, 0u);
  std::vector<QpStatus> st;
  a.vnic.qp_status(&st);
  ASSERT_EQ(st.size(), 1u);
  EXPECT_GT(st[0].rc.tx_retransmits, 0u);
}

// Seeded random loss on B's receive side: same outcome, and the ARP
// exchange is never impaired (resolution is not part of the test, but the
// count of dropped frames only ever covers RoCEv2).
TEST_F(ImpairedRcPair, DropRxRate_AllCompleteAndDropsCounted) {
  ImpairConfig c;
  c.drop_rx_rate = 0.05;
  c.drop_seed = 9;
  b.vnic.set_impairment(c);
  constexpr int kN = 60;
  std::vector<ib_uverbs_wc> sc, rc;
  transfer(kN, &sc, &rc);
  ASSERT_EQ(sc.size(), static_cast<std::size_t>(kN));
  ASSERT_EQ(rc.size(), static_cast<std::size_t>(kN));
  const VnicCounters& cb = b.vnic.counters();
  EXPECT_GT(cb.rx_impair_drop, 0u);
  EXPECT_EQ(cb.tx_impair_drop, 0u);
  // Dropped frames never reach the parser, and are counted received.
  EXPECT_EQ(cb.rx_frames, cb.rx_roce + cb.rx_arp + cb.rx_impair_drop);
  EXPECT_EQ(rx_frames_accounted(cb), cb.rx_frames);
}

// A frame B sends to A's raw port with rate 1 on A's RX: dropped before
// the parser; an ARP frame is not.
TEST(Vnic_Impairment, RxRateOneDropsRoceNotArp) {
  port::SimLink link(port::SimLinkConfig{});
  Host a(link, 0, kMacA, kIpA);
  port::SimPort peer(link, 1);
  ImpairConfig c;
  c.drop_rx_rate = 1.0;
  a.vnic.set_impairment(c);
  EXPECT_EQ(a.vnic.config().impair.drop_rx_rate, 1.0);
  const std::vector<std::uint8_t> f = roce_frame();
  ASSERT_TRUE(peer.tx(f, 0));
  ASSERT_TRUE(peer.tx(f, 0));
  a.vnic.poll(0);
  EXPECT_EQ(a.vnic.counters().rx_impair_drop, 2u);
  EXPECT_EQ(a.vnic.counters().rx_frames, 2u);  // received, then dropped
  EXPECT_EQ(a.vnic.counters().rx_roce, 0u);
  wire::MacAddr mac{};
  EXPECT_FALSE(a.vnic.resolve(kIpB, 0, &mac));  // an ARP request goes out
  a.vnic.poll(0);
  EXPECT_EQ(a.vnic.counters().tx_arp, 1u);
  EXPECT_EQ(a.vnic.counters().tx_impair_drop, 0u);
}

}  // namespace
}  // namespace uroce::engine::test
