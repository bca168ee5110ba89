// The stage stamps in the Vnic (vnic/stages.h, stage_stamps.h): two Vnics on
// the simulated link (1 us each way) with stamps on, their stage clock a
// virtual clock that moves 10 ns at every reading, so the stamps of one
// iteration keep their order. An RC SEND from A to B: A's record holds the
// wire's round trip to B's ACK, B's the receive's completion.
#include <gtest/gtest.h>

#include "tests/datapath/engine/vnic_test_support.h"

namespace uroce::engine::test {
namespace {

VnicConfig stamped(const wire::MacAddr& mac, wire::Ipv4Addr ip) {
  VnicConfig c = Host::config(mac, ip, 1500);
  c.stage_stamps = true;
  return c;
}

struct StampedHosts : ::testing::Test {
  port::SimLinkConfig link_cfg = link_1us(0, 5);
  port::SimLink link{link_cfg};
  Host a{link, 0, stamped(kMacA, kIpA)};
  Host b{link, 1, stamped(kMacB, kIpB)};
  VirtualClock clock;

  static TimeNs read(const void* c) {
    auto* v = static_cast<VirtualClock*>(const_cast<void*>(c));
    v->advance_by(10);
    return v->now();
  }

  StampedHosts() {
    a.vnic.set_stage_clock(&read, &clock);
    b.vnic.set_stage_clock(&read, &clock);
  }

  void run(int n) { poll_both(a, b, clock, n); }
};

TEST_F(StampedHosts, StageReport_RcSendRoundTrip) {
  RcQpPair p;
  p.open(a, b);
  p.bqp->post_recv(1, {b.sge(0, 64)});
  run(2);
  const TimeNs posted = clock.now();
  p.aqp->post_send(send_wqe(7), {a.sge(0, 64)});
  run(20);
  ASSERT_EQ(p.ascq->poll().size(), 1u);
  ASSERT_EQ(p.brcq->poll().size(), 1u);
  const TimeNs done = clock.now();

  const StageReport ra = a.vnic.stage_report();
  ASSERT_TRUE(ra.on);
  ASSERT_EQ(ra.recent.size(), 1u);
  const StageRecord& r = ra.recent[0];
  // Seen and sent in one iteration: a few clock readings apart.
  EXPECT_GT(r.seen_tx_ns, 0u);
  EXPECT_LT(r.seen_tx_ns, 100u);
  // The SEND's 1 us to B, B's ACK's 1 us back, and the iterations between.
  EXPECT_GE(r.tx_rx_ns, 2000u);
  EXPECT_LT(r.tx_rx_ns, 4000u);
  EXPECT_GT(r.rx_cqe_ns, 0u);
  EXPECT_LT(r.rx_cqe_ns, 100u);
  EXPECT_EQ(r.total_ns, r.seen_tx_ns + r.tx_rx_ns + r.rx_cqe_ns);
  EXPECT_LT(r.total_ns, done - posted);
  EXPECT_EQ(r.app_ns, 0u);  // no completion before it on this QP
  EXPECT_EQ(total(ra.hist.total_ns), 1u);
  EXPECT_EQ(total(ra.hist.rx_cqe_ns), 1u);

  // B completed a receive (RX to completion), and sent nothing of its own.
  const StageReport rb = b.vnic.stage_report();
  EXPECT_TRUE(rb.recent.empty());
  EXPECT_EQ(total(rb.hist.rx_cqe_ns), 1u);
  EXPECT_EQ(total(rb.hist.seen_tx_ns), 0u);

  // B answers: its SEND's application turn runs from its receive's
  // completion to the post.
  p.aqp->post_recv(2, {a.sge(64, 64)});
  run(5);
  p.bqp->post_send(send_wqe(8), {b.sge(0, 64)});
  run(20);
  ASSERT_EQ(p.arcq->poll().size(), 1u);
  const StageReport rb2 = b.vnic.stage_report();
  ASSERT_EQ(rb2.recent.size(), 1u);
  EXPECT_GE(rb2.recent[0].app_ns, 5 * 500u);
  EXPECT_EQ(total(rb2.hist.app_ns), 1u);
}

TEST(Vnic_StageReport, OffByDefault) {
  port::SimLink link{port::SimLinkConfig{}};
  Host a{link, 0, kMacA, kIpA};
  const StageReport r = a.vnic.stage_report();
  EXPECT_FALSE(r.on);
  EXPECT_TRUE(r.recent.empty());
  EXPECT_EQ(total(r.hist.total_ns), 0u);
}

}  // namespace
}  // namespace uroce::engine::test
