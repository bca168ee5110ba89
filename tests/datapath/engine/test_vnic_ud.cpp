// The engine's UD path (split from test_vnic.cpp, which keeps the RC,
// UC, SRQ, CQ and object tests): sends with address handles, AH checks
// and the queried attributes.
#include "datapath/engine/vnic.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "datapath/wire/builder.h"
#include "tests/datapath/engine/vnic_test_support.h"

namespace uroce::engine::test {
namespace {

namespace qa = transport::qp_attr;

struct UdPair : TwoHosts {
  static constexpr std::uint32_t kQkey = 0x11111111;
  std::unique_ptr<ProvCq> acq, bcq;
  std::unique_ptr<ProvQp> aqp, bqp;
  void SetUp() override {
    acq = a.make_cq(1);
    bcq = b.make_cq(1);
    aqp = a.make_qp(20, QpType::kUd, 1, 1);
    bqp = b.make_qp(20, QpType::kUd, 1, 1);
    a.ud_up(20, kQkey);
    b.ud_up(20, kQkey);
  }
  AhCreate ah(ObjId id, std::uint32_t client, transport::PdHandle pd) const {
    AhCreate h;
    h.id = id;
    h.client = client;
    h.pd = pd;
    h.dmac = kMacB;
    h.dip = kIpB;
    return h;
  }
  shm::SendWqeFields ud_wqe(std::uint64_t id, std::uint32_t ah_num) const {
    shm::SendWqeFields f = wqe(id, IBV_WR_SEND);
    f.remote_qpn = bqp->qpn;
    f.remote_qkey = kQkey;
    f.ah_num = ah_num;
    return f;
  }
};

TEST_F(UdPair, Send_WithAhDelivers) {
  ASSERT_EQ(a.vnic.create_ah(ah(5, Host::kClient, Host::kPd)), 0);
  EXPECT_EQ(a.vnic.ah_count(), 1u);
  bqp->post_recv(3, {b.sge(0, 40 + 512)});
  aqp->post_send(ud_wqe(4, 5), {a.sge(0, 512)});
  run(10);
  const auto s = acq->poll();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(st(s[0]), WcStatus::kSuccess);
  EXPECT_EQ(s[0].wr_id, 4u);
  const auto r = bcq->poll();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(st(r[0]), WcStatus::kSuccess);
  EXPECT_EQ(r[0].wr_id, 3u);
  EXPECT_EQ(r[0].byte_len, 40u + 512u);
  EXPECT_EQ(r[0].src_qp, aqp->qpn);
  EXPECT_EQ(std::memcmp(b.mem.data() + 40, a.mem.data(), 512), 0);
}

TEST_F(UdPair, Send_ForeignAhCompletesInError) {
  ASSERT_EQ(a.vnic.create_ah(ah(5, Host::kClient + 1, Host::kPd)), 0);  // other client
  ASSERT_EQ(a.vnic.create_ah(ah(6, Host::kClient, Host::kPd + 1)), 0);  // other PD
  aqp->post_send(ud_wqe(1, 5), {a.sge(0, 8)});
  run(5);
  auto s = acq->poll();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].wr_id, 1u);
  EXPECT_EQ(st(s[0]), WcStatus::kLocQpOpErr);
  EXPECT_EQ(a.vnic.counters().ah_foreign, 1u);
  EXPECT_EQ(b.vnic.counters().rx_roce, 0u);
}

TEST_F(UdPair, Send_OtherPdAhAndMissingAh) {
  ASSERT_EQ(a.vnic.create_ah(ah(6, Host::kClient, Host::kPd + 1)), 0);
  aqp->post_send(ud_wqe(1, 6), {a.sge(0, 8)});
  run(5);
  auto s = acq->poll();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(st(s[0]), WcStatus::kLocQpOpErr);
  EXPECT_EQ(a.vnic.counters().ah_foreign, 1u);

  // A second UD QP (the first is in ERR now) and an AH number never issued.
  auto q = a.make_qp(21, QpType::kUd, 1, 1);
  a.ud_up(21, kQkey);
  shm::SendWqeFields f = ud_wqe(2, 999);
  q->post_send(f, {a.sge(0, 8)});
  run(5);
  s = acq->poll();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].wr_id, 2u);
  EXPECT_EQ(st(s[0]), WcStatus::kLocQpOpErr);
  EXPECT_EQ(a.vnic.counters().ah_missing, 1u);
}

TEST_F(UdPair, DestroyAh_LaterSendsFail) {
  ASSERT_EQ(a.vnic.create_ah(ah(5, Host::kClient, Host::kPd)), 0);
  EXPECT_EQ(a.vnic.create_ah(ah(5, Host::kClient, Host::kPd)), EEXIST);
  EXPECT_EQ(a.vnic.create_ah(ah(0, Host::kClient, Host::kPd)), EINVAL);
  ASSERT_EQ(a.vnic.destroy_ah(5), 0);
  EXPECT_EQ(a.vnic.destroy_ah(5), ENOENT);
  aqp->post_send(ud_wqe(1, 5), {a.sge(0, 8)});
  run(5);
  const auto s = acq->poll();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(st(s[0]), WcStatus::kLocQpOpErr);
}

// Sends posted against an AH are sent although the AH is destroyed before
// the engine took them from the ring: destroy_ah takes them first.
TEST_F(UdPair, DestroyAh_SendsPostedBeforeAreSent) {
  ASSERT_EQ(a.vnic.create_ah(ah(5, Host::kClient, Host::kPd)), 0);
  for (std::uint64_t i = 0; i < 3; ++i) {
    bqp->post_recv(10 + i, {b.sge(static_cast<std::uint32_t>(i) * 64, 40 + 8)});
    aqp->post_send(ud_wqe(i, 5), {a.sge(0, 8)});
  }
  EXPECT_EQ(a.vnic.ud_sends_queued(20), 3u);  // in the ring
  ASSERT_EQ(a.vnic.destroy_ah(5), 0);
  EXPECT_EQ(a.vnic.ah_count(), 0u);
  EXPECT_EQ(a.vnic.ud_sends_queued(20), 3u);  // taken, not yet on the wire
  run(10);
  EXPECT_EQ(a.vnic.ud_sends_queued(20), 0u);
  const auto s = acq->poll();
  ASSERT_EQ(s.size(), 3u);
  for (const auto& c : s) EXPECT_EQ(st(c), WcStatus::kSuccess);
  EXPECT_EQ(bcq->poll().size(), 3u);
  EXPECT_EQ(a.vnic.counters().ah_missing, 0u);
}

// A QP whose transport queue is full (its pacer holds it) cannot take the
// rest of its ring: EBUSY, with the WQEs left; forced, the AH goes.
TEST_F(UdPair, DestroyAh_BusyWhileAQpCannotTakeItsSends) {
  ASSERT_EQ(a.vnic.create_ah(ah(5, Host::kClient, Host::kPd)), 0);
  QpSched slow;
  slow.set_rate = true;
  slow.pace.rate_bps = 1'000'000;
  ASSERT_EQ(a.vnic.set_qp_sched(20, slow), 0);
  for (std::uint64_t i = 0; i < 31; ++i) aqp->post_send(ud_wqe(i, 5), {a.sge(0, 8)});
  run(2);
  for (std::uint64_t i = 31; i < 62; ++i) aqp->post_send(ud_wqe(i, 5), {a.sge(0, 8)});
  std::uint32_t pending = 0;
  EXPECT_EQ(a.vnic.destroy_ah(5, false, &pending), EBUSY);
  EXPECT_GT(pending, 0u);
  EXPECT_LE(pending, 31u);
  EXPECT_EQ(a.vnic.ah_count(), 1u);
  EXPECT_EQ(a.vnic.destroy_ah(5, true), 0);
  EXPECT_EQ(a.vnic.ah_count(), 0u);
}

// A QP not yet in RTS is not waited for (its client's own modify would
// move it, and that client is in the destroy): the AH goes, and its WQE
// completes in error once the QP takes it.
TEST_F(UdPair, DestroyAh_QpBeforeRtsIsNotWaitedFor) {
  ASSERT_EQ(a.vnic.create_ah(ah(5, Host::kClient, Host::kPd)), 0);
  auto q = a.make_qp(21, QpType::kUd, 1, 1);  // RESET: its WQEs wait
  q->post_send(ud_wqe(7, 5), {a.sge(0, 8)});
  run(2);
  EXPECT_EQ(a.vnic.ud_sends_queued(21), 0u);  // not in RTS: nothing will go
  EXPECT_EQ(a.vnic.destroy_ah(5), 0);
  EXPECT_EQ(a.vnic.ah_count(), 0u);
  a.ud_up(21, kQkey);
  run(5);
  const auto s = acq->poll();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].wr_id, 7u);
  EXPECT_EQ(st(s[0]), WcStatus::kLocQpOpErr);
  EXPECT_EQ(a.vnic.counters().ah_missing, 1u);
}

// Only UD QPs in RTS have sends to wait for.
TEST_F(UdPair, UdSendsQueued_OnlyUdQpsThatSend) {
  EXPECT_EQ(a.vnic.ud_sends_queued(20), 0u);  // nothing posted
  EXPECT_EQ(a.vnic.ud_sends_queued(99), 0u);  // no such QP
  auto rc = a.make_qp(22, QpType::kRc, 1, 1);
  rc->post_send(wqe(1, IBV_WR_SEND), {a.sge(0, 8)});
  EXPECT_EQ(a.vnic.ud_sends_queued(22), 0u);
}

TEST_F(UdPair, QueryQp_ReportsModifiedValues) {
  QpQuery q;
  ASSERT_EQ(a.vnic.query_qp(20, &q), 0);
  EXPECT_EQ(q.state, QpState::kRts);
  EXPECT_EQ(q.values.qp_state, QpState::kRts);
  EXPECT_EQ(q.values.qkey, kQkey);
  EXPECT_EQ(a.vnic.query_qp(99, &q), ENOENT);
}

// ---- UC --------------------------------------------------------------------------------------

}  // namespace
}  // namespace uroce::engine::test
