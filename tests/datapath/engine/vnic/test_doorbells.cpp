// The Vnic's doorbell phase (datapath/engine/vnic/doorbells.h) and timer
// phase: rings are taken only when their doorbell rang or the engine left
// work in them, and idle QPs cost no visit and no timer scan.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "tests/datapath/engine/vnic_test_support.h"

namespace uroce::engine::test {
namespace {

struct Doorbells : TwoHosts, RcQpPair {
  // The connect's modifies queue one visit of each QP's rings; the first
  // iteration makes it.
  void SetUp() override {
    open(a, b);
    run(1);
  }
  // Writes one SEND WQE into A's SQ and publishes it without its doorbell.
  void publish_silently(std::uint64_t wr_id) {
    ASSERT_EQ(shm::write_send_fixed(aqp->sq_slot(), send_wqe(wr_id)), shm::WqeWriteError::kOk);
    const shm::WqeSge s = a.sge(0, 64);
    ASSERT_EQ(shm::set_send_sges(aqp->sq_slot(), std::span<const shm::WqeSge>(&s, 1),
                                 ProvQp::kMaxSge),
              shm::WqeWriteError::kOk);
    aqp->sqp.publish();
  }
};

TEST_F(Doorbells, Phase_WqeIsTakenOnlyOnceItsDoorbellRang) {
  bqp->post_recv(1, {b.sge(0, 64)});
  publish_silently(7);
  run(20);
  EXPECT_EQ(a.vnic.counters().sq_wqes, 0u);
  EXPECT_TRUE(ascq->poll().empty());
  aqp->bells->ring(aqp->sq_db);
  run(20);
  EXPECT_EQ(a.vnic.counters().sq_wqes, 1u);
  const auto s = ascq->poll();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].wr_id, 7u);
}

TEST_F(Doorbells, Phase_AnotherClientsDoorbellIsCountedAndIgnored) {
  // A second client (id 8) with its own page rings the doorbell of a QP of
  // client 7: the engine counts it and does not visit the ring.
  shm::SharedRegion page;
  const shm::DoorbellGeometry& g = a.vnic.doorbell_geometry();
  ASSERT_TRUE(shm::SharedRegion::create("other-client", g.bytes(), &page).ok());
  ASSERT_EQ(a.vnic.open_client(8, page.data(), page.size()), 0);
  EXPECT_EQ(a.vnic.open_client(8, page.data(), page.size()), EEXIST);
  shm::DoorbellRinger other;
  ASSERT_EQ(other.attach(page.data(), page.size(), g), shm::DoorbellError::kOk);
  bqp->post_recv(1, {b.sge(0, 64)});
  publish_silently(9);
  other.ring(aqp->sq_db);
  run(10);
  EXPECT_EQ(a.vnic.counters().doorbell_foreign, 1u);
  EXPECT_EQ(a.vnic.counters().sq_wqes, 0u);
  EXPECT_EQ(a.vnic.close_client(8), 0);
  EXPECT_EQ(a.vnic.close_client(8), ENOENT);
}

TEST_F(Doorbells, Phase_WqePostedBeforeRtsIsTakenAfterTheModify) {
  // A fresh pair in INIT: the SQ WQE waits in its ring (rung) until RTS.
  auto aq = a.make_qp(20, QpType::kRc, 1, 2);
  auto bq = b.make_qp(20, QpType::kRc, 1, 2);
  namespace qa = transport::qp_attr;
  transport::QpAttrValues v;
  v.qp_state = QpState::kInit;
  v.qp_access_flags = transport::access::kRemoteAny;
  ASSERT_EQ(a.modify(20, qa::kState | qa::kPkeyIndex | qa::kPort | qa::kAccessFlags, v), 0);
  aq->post_send(send_wqe(3), {a.sge(0, 64)});
  run(10);
  EXPECT_EQ(a.vnic.counters().sq_wqes, 0u);
  ASSERT_EQ(a.modify(20, qa::kState,
                     [] {
                       transport::QpAttrValues r;
                       r.qp_state = QpState::kReset;
                       return r;
                     }()),
            0);
  // Back from RESET (whose WQEs stay in the ring, as rxe leaves them), then
  // all the way up: the modify to RTS makes the engine look again.
  b.connect(20, QpType::kRc, aq->qpn, kMacA, kIpA, 1, 1);
  a.connect(20, QpType::kRc, bq->qpn, kMacB, kIpB, 1, 1);
  bq->post_recv(4, {b.sge(0, 64)});
  run(30);
  EXPECT_EQ(a.vnic.counters().sq_wqes, 1u);
  const auto s = ascq->poll();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].wr_id, 3u);
}

TEST_F(Doorbells, Phase_IdleQpsCostNoVisitAndNoTimerScan) {
  // Twelve more connected RC QPs on A that never post.
  std::vector<std::unique_ptr<ProvQp>> idle;
  for (ObjId id = 30; id < 42; ++id) {
    idle.push_back(a.make_qp(id, QpType::kRc, 1, 2));
    a.connect(id, QpType::kRc, bqp->qpn, kMacB, kIpB, 1, 1);
  }
  run(5);
  const VnicCounters before = a.vnic.counters();
  run(200);
  EXPECT_EQ(a.vnic.counters().ring_visits, before.ring_visits);
  EXPECT_EQ(a.vnic.counters().timer_scans, before.timer_scans);
  // One message on the active pair visits its rings, not the idle ones':
  // one visit for the doorbell, none for the twelve.
  bqp->post_recv(1, {b.sge(0, 64)});
  aqp->post_send(send_wqe(5), {a.sge(0, 64)});
  run(40);
  EXPECT_EQ(a.vnic.counters().ring_visits, before.ring_visits + 1);
  ASSERT_EQ(ascq->poll().size(), 1u);
}

}  // namespace
}  // namespace uroce::engine::test
