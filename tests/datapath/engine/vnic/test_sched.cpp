// The Vnic's TX scheduling (datapath/engine/vnic/sched.h, tx.h): rate
// limits through the pacer and a QP's class from its DSCP or pinned.
#include <gtest/gtest.h>

#include "tests/datapath/engine/vnic_test_support.h"

namespace uroce::engine::test {
namespace {

namespace qa = transport::qp_attr;

struct Sched : TwoHosts, RcQpPair {
  void SetUp() override { open(a, b); }

  // WRITEs posted and not yet completed, and the last wr_id.
  std::uint32_t queued = 0;
  std::uint64_t id = 0;

  // Keeps 16 1 KiB WRITEs in A's send queue for `ns` of virtual time and
  // returns the wire bytes A's QP sent in that time.
  std::uint64_t stream(TimeNs ns) {
    const std::uint64_t before = status_of(a.vnic, 10).engine.tx_bytes;
    const TimeNs end = clock.now() + ns;
    while (clock.now() < end) {
      while (queued < 16) {
        aqp->post_send(write_wqe(++id, b.va(0), b.key), {a.sge(0, 1024)});
        ++queued;
      }
      run(1);
      queued -= static_cast<std::uint32_t>(ascq->poll().size());
    }
    return status_of(a.vnic, 10).engine.tx_bytes - before;
  }
};

TEST_F(Sched, SetQpSched_PacesAnRcStreamAtItsRate) {
  QpSched s;
  s.set_rate = true;
  s.pace.rate_bps = 100'000'000;  // 100 Mb/s of wire bytes
  ASSERT_EQ(a.vnic.set_qp_sched(10, s), 0);
  const TimeNs ns = 5'000'000;  // 5 ms
  const std::uint64_t bytes = stream(ns);
  const double bps = static_cast<double>(bytes) * 8e9 / static_cast<double>(ns);
  EXPECT_NEAR(bps / 100e6, 1.0, 0.03);
  const QpStatus st = status_of(a.vnic, 10);
  EXPECT_TRUE(st.paced);
  EXPECT_GT(st.pace.parks, 0u);
  EXPECT_EQ(st.pace.spec.rate_bps, 100'000'000u);
}

TEST_F(Sched, SetQpSched_UnpacedStreamIsFasterAndClearingTheRateFreesIt) {
  QpSched s;
  s.set_rate = true;
  s.pace.rate_bps = 50'000'000;
  ASSERT_EQ(a.vnic.set_qp_sched(10, s), 0);
  const std::uint64_t paced = stream(2'000'000);
  s.pace.rate_bps = 0;
  ASSERT_EQ(a.vnic.set_qp_sched(10, s), 0);
  EXPECT_FALSE(status_of(a.vnic, 10).paced);
  const std::uint64_t free = stream(2'000'000);
  EXPECT_GT(free, 4 * paced);
}

TEST_F(Sched, SetQpSched_UnknownQpIsEnoentAndBadClassEinval) {
  QpSched s;
  s.set_class = true;
  s.tx_class = 3;
  EXPECT_EQ(a.vnic.set_qp_sched(99, s), ENOENT);
  s.tx_class = sched::kNumClasses;
  EXPECT_EQ(a.vnic.set_qp_sched(10, s), EINVAL);
}

TEST_F(Sched, DestroyQp_ForgetsItsRateLimit) {
  QpSched s;
  s.set_rate = true;
  s.pace.rate_bps = 1'000'000;
  ASSERT_EQ(a.vnic.set_qp_sched(10, s), 0);
  EXPECT_EQ(a.vnic.pacer().count(), 1u);
  ASSERT_EQ(a.vnic.destroy_qp(10), 0);
  EXPECT_EQ(a.vnic.pacer().count(), 0u);
}

// With isolation "classes" a QP's class is its DSCP's PFC priority until
// uroce_dv pins it; a pinned class survives a new address vector.
TEST(SchedClasses, ModifyQp_ClassFollowsDscpUnlessPinned) {
  port::SimLink link{port::SimLinkConfig::symmetric(port::SimDirectionConfig{}, 1)};
  VnicConfig cfg = Host::config(kMacA, kIpA, 1500);
  cfg.sched.isolation = sched::Isolation::kClasses;
  Host h{link, 0, cfg};
  auto cq = h.make_cq(1);
  auto qp = h.make_qp(10, QpType::kRc, 1, 1);
  // RESET -> INIT -> RTR with an address vector sending `dscp`.
  auto to_rtr = [&](std::uint8_t dscp) {
    transport::QpAttrValues v;
    v.qp_state = QpState::kReset;
    ASSERT_EQ(h.modify(10, qa::kState, v), 0);
    v.qp_state = QpState::kInit;
    ASSERT_EQ(h.modify(10, qa::kState | qa::kPkeyIndex | qa::kPort | qa::kAccessFlags, v), 0);
    v.qp_state = QpState::kRtr;
    v.av.dmac = kMacB;
    v.av.dip = kIpB;
    v.av.dscp = dscp;
    v.path_mtu = wire::PathMtu::k1024;
    v.dest_qp_num = 0x22;
    ASSERT_EQ(h.modify(10,
                       qa::kState | qa::kAv | qa::kPathMtu | qa::kDestQpn | qa::kRqPsn |
                           qa::kMaxDestRdAtomic | qa::kMinRnrTimer,
                       v),
              0);
  };
  const std::uint8_t dscp = 46;
  const std::uint8_t want = cfg.pfc.map.priority_of_dscp(dscp);
  ASSERT_NE(want, cfg.pfc.map.priority_of_dscp(0));  // the test needs two classes
  to_rtr(dscp);
  EXPECT_EQ(status_of(h.vnic, 10).tx_class, want);
  QpSched s;
  s.set_class = true;
  s.tx_class = 6;
  ASSERT_EQ(h.vnic.set_qp_sched(10, s), 0);
  to_rtr(0);
  QpStatus st = status_of(h.vnic, 10);
  EXPECT_EQ(st.tx_class, 6);
  EXPECT_TRUE(st.class_pinned);
  s.tx_class = QpSched::kClassFromDscp;
  ASSERT_EQ(h.vnic.set_qp_sched(10, s), 0);
  st = status_of(h.vnic, 10);
  EXPECT_EQ(st.tx_class, cfg.pfc.map.priority_of_dscp(0));
  EXPECT_FALSE(st.class_pinned);
}

// A class rate limit (class_rates_mbps) paces the QPs of its class together
// in the engine's pump: one RC stream in class 0 limited to 200 Mb/s, its
// wire bytes measured after the class's saved credit is spent.
TEST(SchedClassRate, PumpPacesTheClassAtItsRate) {
  port::SimLinkConfig lc = port::SimLinkConfig::symmetric(port::SimDirectionConfig{}, 1);
  port::SimLink link{lc};
  VnicConfig ca = Host::config(kMacA, kIpA, 1500);
  ca.sched.isolation = sched::Isolation::kClasses;
  ca.sched.classes.classes[0].rate_mbps = 200;
  Host a{link, 0, ca};
  Host b{link, 1, kMacB, kIpB};
  VirtualClock clock;
  RcQpPair p;
  p.open(a, b);
  std::uint32_t queued = 0;
  std::uint64_t id = 0;
  auto stream = [&](TimeNs ns) {
    const std::uint64_t before = status_of(a.vnic, 10).engine.tx_bytes;
    const TimeNs end = clock.now() + ns;
    while (clock.now() < end) {
      while (queued < 16) {
        p.aqp->post_send(write_wqe(++id, b.va(0), b.key), {a.sge(0, 1024)});
        ++queued;
      }
      a.vnic.poll(clock.now());
      b.vnic.poll(clock.now());
      clock.advance_by(500);
      queued -= static_cast<std::uint32_t>(p.ascq->poll().size());
    }
    return status_of(a.vnic, 10).engine.tx_bytes - before;
  };
  stream(10'000'000);  // spends the credit (2 ms at 200 Mb/s)
  const TimeNs ns = 20'000'000;
  const double bps = static_cast<double>(stream(ns)) * 8e9 / static_cast<double>(ns);
  EXPECT_NEAR(bps / 200e6, 1.0, 0.03);
  EXPECT_GT(a.vnic.scheduler().classes().rate_skips(0), 0u);
  EXPECT_FALSE(status_of(a.vnic, 10).paced);  // the class is paced, not the QP
}

}  // namespace
}  // namespace uroce::engine::test
