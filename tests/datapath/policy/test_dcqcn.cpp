// DCQCN as a QP extension (datapath/policy/dcqcn.h): ECT(0) on the data of an
// enabled device, CNPs for CE-marked packets (at most one per QP per
// interval), the sender's rate cut through the pacer and its recovery. The
// simulated link marks ECN-capable frames CE where a congested switch would
// (SimDirectionConfig::ce_mark).
#include <gtest/gtest.h>

#include "tests/datapath/engine/vnic_test_support.h"

namespace uroce::engine::test {
namespace {

constexpr std::uint64_t kLine = 10'000'000'000;  // DCQCN's line rate here

VnicConfig cc_config(const wire::MacAddr& mac, wire::Ipv4Addr ip, bool dcqcn) {
  VnicConfig c = Host::config(mac, ip, 1500);
  c.dcqcn.enabled = dcqcn;
  c.dcqcn.rp.line_rate_bps = kLine;
  return c;
}

// A and B on one link (1 us each way, infinitely fast), one RC QP pair; A
// streams 1 KiB WRITEs to B.
struct Cc : ::testing::Test, RcQpPair {
  port::SimLinkConfig link_cfg = [] {
    port::SimDirectionConfig d;
    d.propagation_ns = 1000;
    return port::SimLinkConfig::symmetric(d, 5);
  }();
  port::SimLink link{link_cfg};
  bool dcqcn = true;
  std::unique_ptr<Host> a, b;
  VirtualClock clock;
  std::uint32_t queued = 0;
  std::uint64_t id = 0;

  void start() {
    a = std::make_unique<Host>(link, 0, cc_config(kMacA, kIpA, dcqcn));
    b = std::make_unique<Host>(link, 1, cc_config(kMacB, kIpB, dcqcn));
    open(*a, *b);
  }
  void run(int n) {
    for (int i = 0; i < n; ++i) {
      a->vnic.poll(clock.now());
      b->vnic.poll(clock.now());
      clock.advance_by(500);
    }
  }
  // Keeps 16 WRITEs queued for `ns`; returns the wire bytes A's QP sent.
  std::uint64_t stream(TimeNs ns) {
    const std::uint64_t before = status_of(a->vnic, 10).engine.tx_bytes;
    const TimeNs end = clock.now() + ns;
    while (clock.now() < end) {
      while (queued < 16) {
        aqp->post_send(write_wqe(++id, b->va(0), b->key), {a->sge(0, 1024)});
        ++queued;
      }
      run(1);
      queued -= static_cast<std::uint32_t>(ascq->poll().size());
    }
    return status_of(a->vnic, 10).engine.tx_bytes - before;
  }
};

TEST_F(Cc, ModifyQp_DataIsEcnCapableAndAcksAreNot) {
  start();
  link.set_ce_mark(0, 1.0);  // everything ECN-capable A sends
  link.set_ce_mark(1, 1.0);  // and B sends
  stream(200'000);
  EXPECT_GT(link.counters(0).ce_marked, 0u);
  EXPECT_EQ(link.counters(1).ce_marked, 0u);  // B sent only ACKs and CNPs
  EXPECT_GT(b->vnic.policy<policy::Dcqcn>().counters().rx_ce, 0u);
  EXPECT_EQ(a->vnic.policy<policy::Dcqcn>().counters().rx_ce, 0u);
}

TEST_F(Cc, CeMarks_OneCnpPerQpPerInterval) {
  start();
  link.set_ce_mark(0, 1.0);
  const TimeNs ns = 1'000'000;
  stream(ns);
  const policy::DcqcnCounters& bc = b->vnic.policy<policy::Dcqcn>().counters();
  const std::uint64_t interval = b->vnic.config().dcqcn.cnp_interval_ns;
  // Every data packet is CE: at most one CNP per interval (the first at
  // once), the rest suppressed. Fewer once the cut rate spaces A's packets
  // by more than an interval.
  EXPECT_GE(bc.tx_cnp, 5u);
  EXPECT_LE(bc.tx_cnp, ns / interval + 1);
  EXPECT_GT(bc.cnp_suppressed, 0u);
  EXPECT_EQ(bc.tx_cnp + bc.cnp_suppressed, bc.rx_ce);
  EXPECT_EQ(a->vnic.policy<policy::Dcqcn>().counters().rx_cnp, bc.tx_cnp);
  const QpStatus bs = status_of(b->vnic, 10);
  ASSERT_TRUE(bs.dcqcn);
  EXPECT_EQ(bs.cc.cnps_sent, bc.tx_cnp);
}

TEST_F(Cc, Cnp_CutsTheSendersRateThroughThePacer) {
  start();
  const std::uint64_t free = stream(500'000);
  link.set_ce_mark(0, 1.0);
  const std::uint64_t marked = stream(2'000'000) / 4;  // per 500 us
  const QpStatus s = status_of(a->vnic, 10);
  ASSERT_TRUE(s.dcqcn);
  EXPECT_TRUE(s.cc.limited);
  EXPECT_TRUE(s.paced);
  EXPECT_LT(s.cc.rate_bps, kLine / 4);
  EXPECT_EQ(s.pace.cc_bps, s.cc.rate_bps);
  EXPECT_GT(s.cc.rp.decreases, 1u);
  EXPECT_LT(marked * 4, free);
}

TEST_F(Cc, Recovery_BackAtLineRateTheQpLeavesThePacer) {
  start();
  link.set_ce_mark(0, 1.0);
  stream(300'000);
  ASSERT_TRUE(status_of(a->vnic, 10).cc.limited);
  link.set_ce_mark(0, 0.0);
  // Without marks the rate recovers to line rate: fast recovery, then
  // additive increase (5 Mb/s every 55 us: the byte counter's 10 MB stages
  // come too slowly here for hyper increase), within about 110 ms.
  for (int i = 0; i < 300 && status_of(a->vnic, 10).cc.limited; ++i) stream(500'000);
  const QpStatus s = status_of(a->vnic, 10);
  EXPECT_FALSE(s.cc.limited);
  EXPECT_EQ(s.cc.rate_bps, kLine);
  EXPECT_FALSE(s.paced);
  EXPECT_EQ(a->vnic.pacer().count(), 0u);
}

TEST_F(Cc, Off_DataIsNotEcnCapableAndNothingIsMarked) {
  dcqcn = false;
  start();
  link.set_ce_mark(0, 1.0);
  stream(200'000);
  EXPECT_EQ(link.counters(0).ce_marked, 0u);
  EXPECT_EQ(b->vnic.policy<policy::Dcqcn>().counters().rx_ce, 0u);
  EXPECT_EQ(b->vnic.policy<policy::Dcqcn>().counters().tx_cnp, 0u);
  EXPECT_FALSE(status_of(a->vnic, 10).dcqcn);
}

TEST_F(Cc, DestroyQp_ANewQpInTheSlotStartsAtLineRate) {
  start();
  link.set_ce_mark(0, 1.0);
  stream(200'000);
  ASSERT_TRUE(status_of(a->vnic, 10).cc.limited);
  // Drain, then replace A's QP.
  for (int i = 0; i < 2000 && queued != 0; ++i) {
    run(1);
    queued -= static_cast<std::uint32_t>(ascq->poll().size());
  }
  ASSERT_EQ(queued, 0u);
  aqp.reset();
  ASSERT_EQ(a->vnic.destroy_qp(10), 0);
  EXPECT_EQ(a->vnic.pacer().count(), 0u);
  auto q = a->make_qp(11, QpType::kRc, 1, 2);
  const QpStatus s = status_of(a->vnic, 11);
  ASSERT_TRUE(s.dcqcn);
  EXPECT_FALSE(s.cc.limited);
  EXPECT_EQ(s.cc.rp.cnps, 0u);
  EXPECT_EQ(s.cc.rate_bps, kLine);
}

}  // namespace
}  // namespace uroce::engine::test
