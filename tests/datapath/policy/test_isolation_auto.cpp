// Isolation "auto" as a QP extension (datapath/policy/isolation_auto.h):
// the classifier sees every send WR through on_post, owns the class of the
// QPs it classifies, reports their kind, and stands aside when another
// extension takes the TX classes.
#include <gtest/gtest.h>

#include "tests/datapath/engine/vnic_test_support.h"

namespace uroce::engine::test {
namespace {

// Isolation "auto": the classifier (sched/flow_classifier.h) sees every
// send WR the doorbell phase takes; an elephant's QP goes to the bandwidth
// class, a one-at-a-time WRITE's to the strict latency class, a QP pinned
// through set_qp_sched stays where it was put, and a new address vector no
// longer decides the class.
TEST(IsolationAuto, OnPost_ClassesQpsByWhatTheyPost) {
  port::SimLinkConfig lc = port::SimLinkConfig::symmetric(port::SimDirectionConfig{}, 1);
  port::SimLink link{lc};
  VnicConfig ca = Host::config(kMacA, kIpA, 9000);
  VnicConfig cb = Host::config(kMacB, kIpB, 9000);
  ca.sched.isolation = sched::Isolation::kAuto;
  Host a{link, 0, ca};
  Host b{link, 1, cb};
  VirtualClock clock;
  auto run = [&](int n) {
    for (int i = 0; i < n; ++i) {
      a.vnic.poll(clock.now());
      b.vnic.poll(clock.now());
      clock.advance_by(500);
    }
  };
  auto acq = a.make_cq(1);
  auto bcq = b.make_cq(1);
  std::vector<std::unique_ptr<ProvQp>> aq, bq;
  for (ObjId id : {10, 11, 12}) {
    aq.push_back(a.make_qp(id, QpType::kRc, 1, 1));
    bq.push_back(b.make_qp(id, QpType::kRc, 1, 1));
    a.connect(id, QpType::kRc, bq.back()->qpn, kMacB, kIpB, 100, 500);
    b.connect(id, QpType::kRc, aq.back()->qpn, kMacA, kIpA, 500, 100);
  }
  QpSched pin;
  pin.set_class = true;
  pin.tx_class = 2;
  ASSERT_EQ(a.vnic.set_qp_sched(12, pin), 0);
  std::uint64_t id = 0;
  std::size_t done = 0;
  for (int i = 0; i < 8; ++i) {
    aq[0]->post_send(write_wqe(++id, b.va(0), b.key), {a.sge(0, 65536)});
    aq[1]->post_send(write_wqe(++id, b.va(0), b.key), {a.sge(0, 16)});
    aq[2]->post_send(write_wqe(++id, b.va(0), b.key), {a.sge(0, 65536)});
    for (int k = 0; k < 400 && done < id; ++k) {
      run(1);
      done += acq->poll().size();
    }
  }
  ASSERT_EQ(done, id);
  const QpStatus elephant = status_of(a.vnic, 10);
  const QpStatus pingpong = status_of(a.vnic, 11);
  const QpStatus pinned = status_of(a.vnic, 12);
  EXPECT_EQ(elephant.tx_class, sched::kAutoClassBandwidth);
  EXPECT_EQ(elephant.auto_kind, static_cast<std::int8_t>(sched::FlowKind::kBandwidth));
  EXPECT_EQ(pingpong.tx_class, sched::kAutoClassLatency);
  EXPECT_EQ(pingpong.auto_kind, static_cast<std::int8_t>(sched::FlowKind::kLatency));
  EXPECT_EQ(pinned.tx_class, 2);
  EXPECT_TRUE(pinned.class_pinned);
  // The device without auto reports no kind.
  EXPECT_EQ(status_of(b.vnic, 10).auto_kind, -1);
  // Unpinned, QP 12 is classified at its next WR.
  pin.tx_class = QpSched::kClassFromDscp;
  ASSERT_EQ(a.vnic.set_qp_sched(12, pin), 0);
  aq[2]->post_send(write_wqe(++id, b.va(0), b.key), {a.sge(0, 65536)});
  for (int k = 0; k < 400 && done < id; ++k) {
    run(1);
    done += acq->poll().size();
  }
  EXPECT_EQ(status_of(a.vnic, 12).tx_class, sched::kAutoClassBandwidth);
  // A QP that has posted nothing (one that only answers) is of no kind, in
  // the bandwidth class.
  auto fresh = a.make_qp(14, QpType::kRc, 1, 1);
  EXPECT_EQ(status_of(a.vnic, 14).auto_kind, static_cast<std::int8_t>(sched::FlowKind::kNone));
  EXPECT_EQ(status_of(a.vnic, 14).tx_class, sched::kAutoClassBandwidth);
  // Destroyed, the slot's history goes with it: QP 13 takes QP 10's slot
  // (free slots are a stack) and starts of no kind, not as an elephant.
  ASSERT_EQ(a.vnic.destroy_qp(10), 0);
  auto again = a.make_qp(13, QpType::kRc, 1, 1);
  EXPECT_EQ(status_of(a.vnic, 13).auto_kind, static_cast<std::int8_t>(sched::FlowKind::kNone));
}

// The Homa-like scheduler takes the TX classes (its priorities): a device
// configured for isolation auto with it runs no classifier, so its QPs
// report no kind and keep the class the scheduler gives them.
TEST(IsolationAuto, Enabled_OffWhenAnotherExtensionTakesTheClasses) {
  port::SimLink link{port::SimLinkConfig::symmetric(port::SimDirectionConfig{}, 1)};
  VnicConfig c = Host::config(kMacA, kIpA, 9000);
  c.sched.isolation = sched::Isolation::kAuto;
  Host plain{link, 0, c};
  c.homa.enabled = true;
  Host homa{link, 1, c};
  EXPECT_TRUE(plain.vnic.policy<policy::IsolationAuto>().enabled());
  EXPECT_FALSE(homa.vnic.policy<policy::IsolationAuto>().enabled());
  EXPECT_EQ(homa.vnic.scheduler().isolation(), sched::Isolation::kClasses);
  auto cq = homa.make_cq(1);
  auto qp = homa.make_qp(10, QpType::kRc, 1, 1);
  EXPECT_EQ(status_of(homa.vnic, 10).auto_kind, -1);
  auto pcq = plain.make_cq(1);
  auto pqp = plain.make_qp(10, QpType::kRc, 1, 1);
  EXPECT_EQ(status_of(plain.vnic, 10).auto_kind, static_cast<std::int8_t>(sched::FlowKind::kNone));
}

}  // namespace
}  // namespace uroce::engine::test
